// Package storetest is the contract suite of topicstore.Store: what every
// backend (Pebble, JetStream) must do, stated as tests that use nothing but
// the interface. A backend runs it from one of its tests:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg storetest.Config) topicstore.Store {
//			return openMyStore(t, cfg.Clock.Now) // fresh and empty
//		})
//	}
//
// Every subtest opens a fresh store with a fresh manual clock (Config.Clock,
// starting at Start) and closes it at its end. The subtests are grouped by
// area: Topics, Commits (dedup, binding, atomicity, FIFO), Positions,
// Scans, Consumers (read_from, OffsetForTime, Changed), Shared (locks,
// delivery counts, dead-letter policies, ordering, Watch), Retention,
// AutoPartitioning, Staging, Kafka (a message's Kafka key, headers and
// null body, issue 28, read back exactly however they were written),
// Conflicts and Roles (the role catalog's compare-and-set, and topics'
// owners and access lists). What must
// survive a restart is checked by reopening the store (Config.Reopen: the
// opener opens the data of the store it opened last for the same t
// again).
//
// Optional parts of the contract are the Features of storetest.go:
// Staging (topicstore.Stager, found by type assertion), Shared (shared
// consumers), Splits (SplitPartition), AutoSplit (the write meter and the
// splits it decides), WriteSpeed (write-speed limits) and Roles
// (topicstore.RoleStore, found by type assertion). A backend
// without one fails the suite unless it passes RunWith a Config whose
// Unclaimed map names the part with the reason; the subtests of that part
// are then skipped with the reason, never silently. Both backends claim
// every part (Run).
//
// The suite asserts what the contract (topicstore's api.go and doc.go)
// promises, not how a backend meets it: it never looks at keys, batch
// sizes or goroutines. Where the contract leaves room (when an automatic
// split happens after the write that caused it) the suite waits for the
// outcome instead of assuming the Pebble backend's timing.
package storetest
