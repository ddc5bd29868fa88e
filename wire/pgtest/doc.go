// Package pgtest replays protocol scripts against a PostgreSQL-protocol
// server and compares what it answers with what PostgreSQL 15 answered,
// in the manner of CockroachDB's pkg/testutils/pgtest and pgx's pgmock.
//
// # Scripts
//
// A script (testdata/pgtest/*.pgtest) is a list of blocks; '#' lines and
// blank lines between blocks are comments. A block is a command line,
// input lines, a "----" line and the expected output, up to a blank line:
//
//	send
//	Query {"String": "SELECT 1"}
//	----
//
//	until
//	ReadyForQuery
//	----
//	{"Type":"RowDescription","Fields":[...]}
//	{"Type":"DataRow","Values":[{"text":"1"}]}
//	{"Type":"CommandComplete","CommandTag":"SELECT 1"}
//	{"Type":"ReadyForQuery","TxStatus":"I"}
//
// Commands:
//
//   - send: one frontend message per line, its pgproto3 type name and its
//     JSON (pgproto3's, e.g. Bind {"Parameters":[{"text":"1"}]}), all
//     written in one write. Raw {"Type":"Q","Body":"...","Hex":"..",
//     "Length":n} is a hand-made message (see Raw); CopyData {"Text":".."}
//     is CopyData of that text.
//   - until: reads messages until each listed type (pgproto3's Go type
//     names: ReadyForQuery, AuthenticationOk) has come, in order;
//     EOF waits for the server to close the connection (a connection that
//     closes ends the block with an {"Type":"EOF"} line anyway);
//     SSLResponse reads the one byte that answers SSLRequest.
//     ignore=Type,Type leaves those types out of the output.
//   - connect: a new connection, started up as user postgres on database
//     postgres up to ReadyForQuery (output not checked); "connect raw"
//     only dials, for scripts that send their own StartupMessage;
//     server=auth dials the server where AuthUser needs AuthPassword;
//     user=name starts up as another user. Every script starts with an
//     implicit "connect".
//   - cancel: like until, while it sends CancelRequest (BackendKeyData of
//     the current connection) again and again until the reading is done;
//     "cancel bad_key" sends one with a wrong secret and reads nothing.
//
// Output lines are the received messages' JSON with fields of zero value
// left out, normalised so that they do not change from run to run (see
// Normalize); each run of ParameterStatus is sorted by name, and so are
// NegotiateProtocolVersion's options (StartupMessage sends a map).
//
// Block arguments say where the block runs: pg_only blocks run only
// against PostgreSQL (what topicgate cannot take part in), topicgate_only
// blocks only against topicgate, with an output written by hand or by
// -rewrite-topicgate (topics instead of tables); a comment says why.
// known_diff=item marks an until block where topicgate is known to answer
// differently from the recorded PostgreSQL answer: the replay then
// requires the difference (and logs topicgate's answer), and fails when it
// is gone, so that the directive is dropped with the fix of the item.
//
// # Re-recording
//
// The expected outputs come from a real PostgreSQL 15: with -rewrite the
// test initialises and starts its own (/usr/lib/postgresql/15/bin, as the
// postgres OS user when run as root, trust authentication, a free
// 127.0.0.1 port, stopped at the end), replays every script against it and
// writes what it answered back into the scripts:
//
//	go test ./cmd/topicgate -run TestPGTest -rewrite
//
// Blocks marked topicgate_only keep their output; re-record those from
// topicgate with
//
//	go test ./cmd/topicgate -run TestPGTest -rewrite-topicgate
//
// and read the diff before committing either.
package pgtest
