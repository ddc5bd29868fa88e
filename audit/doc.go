// Package audit is the audit log (`serve --audit-log`): one JSON line per
// statement and per login, in pgaudit's classes, written to a file that
// logrotate may move (Reopen, on SIGHUP) or to stderr.
//
// It owns the line's format (Record, its JSON encoding), which records
// are written (Classes: those of the enabled classes, and whatever the
// settings every denial and every failed login), and the file: opening,
// appending, reopening. It knows no SQL, no plans and no sessions: the
// executor and the wire layer's login hook build Records; what a
// statement's class, objects and text are is decided there.
//
// Invariants:
//   - One Write is one line, written whole with one write call under the
//     Log's mutex: lines from many sessions never interleave, and a line
//     is in the file (the OS's page cache; no fsync, as PostgreSQL's
//     server log) or on stderr before Write returns, so before the
//     client is told the statement's outcome.
//   - A Record with Outcome 42501 (a denial) or of class AUTH that is not
//     "ok" (a failed login) is written whatever the enabled classes.
//   - The Log writes what it is given: never a password, because the
//     callers give it statement text formatted from redacted syntax trees
//     (sql.RedactPasswords) and never bind parameters.
//   - Reopen swaps the file under the mutex: every line goes whole to the
//     old file or to the new one. A failed reopen keeps the old file.
//   - A write that fails is reported (Options.OnError) and dropped; the
//     statement is not failed for it.
package audit
