// Package wire implements the server side of the PostgreSQL v3 frontend/
// backend protocol on top of github.com/jackc/pgx/v5/pgproto3, and runs
// what clients send against the engine interfaces of handler.go (Handler,
// Session, Statement, Portal, Output). It knows nothing of topics, SQL or
// storage.
//
// # Layers
//
//   - server.go: Server accepts connections, keeps the process-id → conn
//     registry used by CancelRequest, and Close tears everything down.
//     CheckListenSafety refuses "trust" on a non-loopback address.
//   - conn.go: one goroutine per connection. The loop receives a message,
//     dispatches it, and repeats. Output goes through a 64 KiB bufio.Writer
//     flushed at ReadyForQuery, Flush, CopyInResponse and before every
//     blocking socket read (connReader), so nothing a client waits for is
//     left in the buffer.
//   - startup.go, auth.go, scram.go: startup packets are read straight from
//     the socket (no read-ahead, so nothing can be smuggled in before a TLS
//     handshake): SSLRequest ('S' + crypto/tls when configured, else 'N'),
//     GSSENCRequest ('N'), CancelRequest (process id + random secret; one
//     that names no connection here goes to Config.ForwardCancel, for
//     servers behind one address, and Server.Cancel answers one
//     forwarded from elsewhere),
//     StartupMessage (3.x; a newer minor version or _pq_ options get
//     NegotiateProtocolVersion for 3.0). Authentication is trust, cleartext
//     password, md5 or SCRAM-SHA-256 (RFC 5802/7677, no channel binding);
//     failures are FATAL 28P01. Then Handler.NewSession, AuthenticationOk,
//     ParameterStatus, BackendKeyData, ReadyForQuery. Config.OnAuth is
//     told of every login refused with a FATAL error and every one that
//     succeeded (the audit log's AUTH lines).
//   - simple.go: a Query message parses into statements; each is bound
//     without parameters and executed to completion (RowDescription,
//     DataRows, CommandComplete); the first error stops the rest; then
//     Session.Sync and ReadyForQuery. The RowDescription goes out with the
//     first row or the CommandComplete, so an error before any row comes
//     without one (PostgreSQL finds those while planning, before it).
//   - extended.go: Parse/Bind/Describe/Execute/Close keep named and unnamed
//     prepared statements and portals per connection. Execute with a row
//     limit answers PortalSuspended and resumes on the next Execute. Portals
//     are closed at Sync when the session is idle (their implicit
//     transaction ended). pipeline.go: an Execute whose tag is TagDeferred
//     gets its CommandComplete when the next message arrives, after the
//     Session decided (Pipeliner.DeferredTag) whether the statement commits
//     alone (Sync) or joins the pipeline's implicit transaction.
//   - output.go: the Output given to Portal.Execute: DataRows, notices and
//     COPY FROM STDIN (CopyInResponse, then CopyData until CopyDone or
//     CopyFail; Flush and Sync are ignored meanwhile). A COPY the portal
//     abandons is drained before the error is reported. copyout.go: COPY
//     TO STDOUT (CopyOutResponse, CopyData per row, CopyDone); the rows'
//     COPY format is the executor's, the values' representation pgvalue's
//     (AppendValue).
//   - rowenc.go: a RowEncoder builds DataRows ahead of sending, so an
//     executor can encode straight from storage memory and send or drop.
//   - pgvalue (a package of its own): values in text and binary formats by
//     type OID (see the table in handler.go): Bind parameters decode
//     through pgvalue.DecodeParam, DataRow and COPY values encode through
//     pgvalue.Append. The hot types (int8, bytea, text, timestamptz) are
//     appended into one reused buffer without allocation.
//   - errors.go: any error with SQLState() becomes an ErrorResponse with that
//     code (and ErrorDetail/ErrorHint/ErrorPosition/ErrorWhere when
//     present); others are XX000.
//   - hangup.go: a statement that runs past 20 ms gets a hangup watch
//     (started by the connection's one timer, not a timer per statement)
//     that waits on the socket's readiness without reading and cancels
//     the statement when the peer has closed (POLLRDHUP); the loop stops
//     it before it reads the socket again, and COPY FROM STDIN pauses it.
//     Output.Flush reports a client that is gone, so a consumer read
//     commits only positions whose rows reached the socket.
//   - Optional Session interfaces (handler.go): ParameterReporter
//     (ParameterStatus before each ReadyForQuery for changed settings),
//     IdleTimeouter (idle_session_timeout and
//     idle_in_transaction_session_timeout as read deadlines), TxFailer (an
//     error the connection finds itself fails the open block),
//     CursorPortals and PortalUser (SQL cursors and protocol portals share
//     one namespace).
//   - malformed.go: messages that do not decode, as PostgreSQL answers
//     them (see Invariants), and the UTF-8 check of query text (22021).
//   - pgtest (a package of its own): protocol scripts recorded from
//     PostgreSQL 15 (testdata/pgtest) that cmd/topicgate's TestPGTest
//     replays against topicgate.
//
// # Invariants
//
//   - Exactly one ReadyForQuery per Query and per Sync.
//   - After an error in an extended-protocol message every message up to
//     Sync is discarded; then one ReadyForQuery.
//   - A received message is only valid until the next Receive: Bind
//     parameters are decoded into values that never alias it.
//   - A panic in the engine is recovered, logged with its stack, reported as
//     XX000 "internal error: ..." and the connection is closed; the server
//     lives on.
//   - Malformed input, as PostgreSQL 15 answers it: an unknown message type
//     is FATAL 08P01 and closes; a length below 4 (or a startup packet of
//     a bad length) closes without a word; a body that does not decode is
//     an ERROR 08P01 and the connection goes on (ReadyForQuery after a bad
//     Sync or Query, discarding until Sync after an extended message);
//     another message during COPY FROM STDIN is an ERROR, then FATAL
//     (synchronization lost). Oversized messages get FATAL 54000.
//   - Closing a connection closes its portals and calls Session.Close.
//   - A client that disconnects is noticed within milliseconds also while a
//     statement runs: its context is cancelled and the session closed.
//   - CancelRequest cancels only an engine call that is running: calls
//     share one context until a call is cancelled (conn.runCtx), and it is
//     registered for cancelling only while a call runs.
//   - Only the connection's goroutine reads the socket; a hangup watch
//     never reads, and is stopped (its read deadline reset) before the
//     loop or a COPY reads.
package wire
