// Package catalog is the cluster store's topic catalog
// (topicstore/jetstream): the topics, their configurations and layouts,
// and every change to them, kept in the stream and folded like
// everything else (fold.State's ByName, ByID, CatSeqs, Created, CnSeq
// and Leftovers), so that every gateway knows every topic.
//
// It owns:
//
//   - the changes (change.go: Catalog.Change): each change to a topic is
//     one catalog message on its name's subject (<prefix>.c.<name>),
//     conditional on that subject's last sequence as the fold saw it, so
//     two gateways creating the same topic cannot both succeed; a change
//     refused because the subject moved is planned again from a fold
//     caught up with the stream. A creation's stream sequence is the
//     topic's ID, so a topic dropped and created again never sees the old
//     one's messages. A creation also numbers the topic (TopicInfo.ID, 1,
//     2, ... as in the embedded store): its batch holds a message on
//     <prefix>.cn, rolled up and conditional on that subject's last
//     sequence, carrying the number (Tg-Created), and the record carries
//     it too (fold.CatalogRec.Ordinal); so creations are numbered in
//     order, and every gateway knows every live topic's number without
//     counting creation records. CreateTopic and AlterTopic are changes
//     with the embedded store's rules; Topic and Topics read the fold,
//     Topic after catching up with the stream when it does not know the
//     name (Known);
//   - drops and the purge of what a dropped topic leaves (drops.go): a
//     drop is a catalog message without a topic record (Tg-Dropped, the
//     dropped topic's ID) that rolls its name's subject up; the topic's
//     messages (TopicFilters) are purged after it, by the dropping
//     gateway or, when it died between the two, by the maintenance lease
//     holder (PurgeLeftovers), which also purges the tombstone once it is
//     TombstoneAge old and then forgets the drop; every other gateway
//     forgets it once the tombstone is twice that old (ForgetDrops). A
//     gateway folding more than TombstoneAge behind would miss the drop,
//     as a Kafka consumer lagging past delete.retention.ms misses a
//     tombstone. Nothing is then kept of a dropped topic, in the stream or
//     in any fold;
//   - splits and write rates (splits.go): SplitPartition and the splits of
//     partitions a commit wrote that stayed overloaded for their window
//     (AutoSplit, 'scale_up'), each a change with the embedded store's
//     rules, and the partitions' write rates from the fold's meters
//     (WriteRates). Splits need no lease: when two gateways decide the
//     same split, the second finds the partition split already and does
//     nothing;
//   - the role catalog (roles.go: topicstore.RoleStore): one opaque
//     document on <prefix>.a, in parts of RolesPartBytes (one atomic
//     batch; a message's headers hold at most 64 KiB), the first rolling
//     the subject up and conditional on its last sequence being the
//     version the change was based on; the last part's sequence is the new
//     version (fold.Roles). A refusal for a wrong last sequence is
//     ErrRolesConflict once the fold caught up with it; a change refused
//     because another one of the subject was still being proposed (10164)
//     is tried again while the caught-up fold still holds the expected
//     version, else is a conflict too; a publish
//     whose answer never came is stored if the subject's last message
//     carries its id (Tg-Roles-Id), else ErrOutcomeUnknown. Topics'
//     owners and access lists need nothing here: they are part of the
//     catalog record, changed with it.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state (Config.Fold) is read and the drops' bookkeeping is
// changed, whether the store is closed, and its cluster I/O (publish,
// alone or as an atomic batch, conditionally as a message's headers say;
// the last message of a subject; purge a subject; wait until the fold
// applied a sequence or caught up; wait out an election), the same path
// the commit protocol takes, so that the store's simulation could drive
// it through its scheduler.
//
// Invariants: topics and the role catalog change only through the
// stream, and every change is conditional on its subject not having
// changed since the fold saw it (a topic's name's catalog subject; a
// creation also the topic-number subject; the role catalog's), so a change
// decided on a stale fold is refused and decided again; a change returns
// once the fold applied it (read your writes); a topic's ID is never
// reused, so what a dropped topic left is garbage no fold reads and may
// be purged at any time, twice harmlessly; a tombstone goes only once
// TombstoneAge old, and only with what came before it on its subject (a
// creation of the name since stays). Of the fold's state only the drops'
// bookkeeping is changed here (Leftovers and their purged marks, and the
// catalog sequence of a name no live topic holds, forgotten or repaired
// from the stream); the fold's state is read and changed only under the
// host's lock, which is never held across a request to the cluster.
package catalog
