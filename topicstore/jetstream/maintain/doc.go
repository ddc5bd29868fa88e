// Package maintain is the cluster store's maintenance (topicstore/
// jetstream): what a gateway does on a timer beside the commits, and
// what one gateway at a time does for all of them.
//
// It owns:
//
//   - the schedule (maintain.go: Maintenance.Run): every interval (or
//     half the shortest retention period, when shorter:
//     topicstore.RetentionEvery) the store's own upkeep (Jobs.Settle: its
//     outcomes in doubt, its chain, dropped topics), then the maintenance
//     lease taken or renewed and, holding it, retention, the aborts of dead
//     gateways' wide transactions, the sweep, a snapshot when one is due
//     and the retirement of wide transactions' decisions (the Jobs the
//     store gives it); every failure is logged and counted (Stats), none
//     stops the loop;
//   - the maintenance lease (lease.go): a message on subject <prefix>.l
//     naming the holder and the time it holds it until, taken when free or
//     expired and renewed by its holder, each a publish conditional on the
//     subject's last sequence, so two gateways never both believe they
//     hold it; one that dies stops renewing, and the next takes over once
//     the lease expires;
//   - the sweep of dead gateways' staged chunks behind a fence (sweep.go),
//     and the "gone" markers by which every fold forgets deleted chunks
//     (MarkGone, also the store's when a staging is discarded);
//   - the check that the nodes sync every write (durability.go: their
//     monitoring endpoints read at start and every minute).
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state is read, and its cluster I/O (publish, conditionally
// as a message's headers say, and wait until the fold applied it; delete
// a message), the same path the commit protocol takes, so that the
// store's deterministic simulation drives the sweep through its
// scheduler; and its Jobs, which are the store's.
//
// Invariants: the package changes the fold's state only through the
// stream (a fence, a "gone" marker, a lease); it never deletes a chunk
// that a committed record (or an undecided wide transaction's intent)
// references or one stored after the fence it published and folded; it
// sweeps a gateway only once its heartbeat expired a TTL ago and its
// newest chunk is a TTL old, and no staging of it whose wide transaction
// is undecided; only the holder of the lease sweeps, retains, aborts and
// snapshots. Run is one goroutine; the sweep runs on it (tests and the
// simulation call Sweep themselves).
package maintain
