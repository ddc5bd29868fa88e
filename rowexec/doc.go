// Package rowexec runs plans' rows. It owns the row of a stored message
// (MsgRow), which a topic scan and the session's consumer reads evaluate
// expressions over.
//
// Invariants: a MsgRow's values outlive the store's Scan callback that
// produced them (bodies are copied, into an Arena when one is given); the
// package imports planner, eval, sql and topicstore's types, never the
// executor.
package rowexec
