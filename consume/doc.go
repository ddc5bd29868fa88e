// Package consume is topic consumption: reads as a named consumer,
// streaming or shared, and what they hold and settle. The executor's
// session owns one Reader and calls in: to open a plan's consumer read
// (plantree.ConsumerReadNode, handed back by rowexec through the
// session's rowexec.Host.Open), to settle a statement's Delivery once its
// rows reached the client, to act on shared messages, to set positions,
// at each commit (CheckHeld) and transaction end (EndTx), and when it
// closes (Leave). The engine owns the registry of consumer groups
// (Groups), which its sessions' Readers share. A Reader reaches its
// session only through what Config gives it (the process id, the
// txn.Conn, the store, the groups, the read counter); the package never
// imports the executor.
//
// Files:
//   - reader.go: Reader, the session's side: Open, the statement's
//     delivery (WithDelivery), CheckHeld, WaitDurable, Leave.
//   - read.go: a streaming consumer's read. It joins the consumer's read
//     session, and reads from the partitions it holds, each from the
//     consumer's position, with the node's filter, projection and LIMIT
//     (rule fuseConsumerRead made them the node's own): LIMIT counts
//     matching rows with a fair quota per partition, the position moves
//     past every message looked at, WAIT long-polls until some message
//     matches (woken by a publish, a reassignment, a change of the
//     cluster's members). The position moves at once in autocommit
//     (through the Delivery), at COMMIT in a transaction. EXPLAIN's view
//     of a read (ExplainProps, peekHeld) and EXPLAIN ANALYZE's read
//     (analyze) move nothing. direct.go: bare-column reads encode
//     DataRows straight from the store (wire.RowEncoder; Encoded).
//   - groups.go, balance.go: a streaming consumer's partitions balanced
//     over its read sessions; order.go: only partitions whose split
//     ancestors the consumer has committed to their end are readable
//     (children follow their parent's session); handoff.go: a partition
//     pinned by its holder's open transaction or unsettled read moves
//     only when that ends or after the handoff grace, and a read that
//     finds nothing while its share waits only for another session's
//     read waits for that read (at most pinHandoffWait); cluster.go: on a
//     store several gateways share, each group's partitions divided
//     among the gateways first.
//   - delivery.go: an autocommit read commits its positions only once its
//     rows were flushed to a client still there (its partitions pinned
//     against a rebalance until then); a statement that failed, was
//     cancelled, lost its client or whose portal closed unfinished
//     commits nothing and hands back what it acquired
//     (txn.Conn.Release, the one release of shared messages), its
//     delivery uncounted.
//   - shared.go: shared-consumer reads and actions; an acquisition's
//     delivery counts and an action's outcome are made durable (their
//     store waits queued) by WaitDurable before any output reaches the
//     client; a WAIT read that found nothing waits for the store's events
//     (publish, a freed message) or its next lock deadline or delay end,
//     never on a poll. positions.go: UPDATE sys.consumers SET
//     committed_offset.
//
// Invariants: no consumer position moves past rows that did not reach the
// client; a partition is read by one read session at a time in steady
// operation, and a position only moves from where its read found it
// (a conflict is 40001, never a skipped or repeated move).
package consume
