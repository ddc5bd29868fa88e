package fold

// The headers topicgate's messages carry: the store sets them, the fold
// reads them, and nothing else spells them.

// Headers of topicgate's messages.
const (
	HTopic   = "Tg-Topic"   // catalog: the topic record (JSON); absent: dropped
	HDropped = "Tg-Dropped" // catalog: the ID of the topic a drop dropped
	// HRec is a record batch's fields in one header, space-separated:
	// base, count, at, bytes, cum, gw, ref (each as the header of that
	// name below says). Batches written before it carry those headers.
	HRec    = "Tg-Rec"
	HBase   = "Tg-Base"   // data: first offset of the record batch
	HCount  = "Tg-Count"  // data: messages in it
	HAt     = "Tg-At"     // data, producer: written at (unix micros)
	HBytes  = "Tg-Bytes"  // data: payload bytes
	HCum    = "Tg-Cum"    // data: the partition's payload bytes ever written, this batch included
	HPart   = "Tg-Part"   // producer: bound partition
	HSeqNo  = "Tg-SeqNo"  // producer: highest seqno stored
	HOff    = "Tg-Off"    // position: committed offset
	HStart  = "Tg-Start"  // retention: the partition's new start offset
	HRef    = "Tg-Ref"    // data: a reference record's staged message (stream sequence)
	HGw     = "Tg-Gw"     // data: the gateway that wrote it
	HHolder = "Tg-Holder" // maintenance lease: the gateway holding it
	HUntil  = "Tg-Until"  // maintenance lease: until when (unix micros)
)

// Headers of state messages.
const (
	HShared = "Tg-Shared" // the encoded SharedState
	HGen    = "Tg-Gen"    // the consumer's generation
	HFreed  = "Tg-Freed"  // "1": waiters may find a message now
)

// Headers of wide transactions.
const (
	HTxn    = "Tg-Txn"    // an intent: "<gateway> <number>"
	HDecide = "Tg-Decide" // a decision ("commit", "abort"); on a chain marker, the number decided
	HAbort  = "Tg-Abort"  // another gateway's abort, as a link on the owner's chain: the number aborted
)

// Headers of the chain's links.
const (
	HCommit  = "Tg-Commit"  // a batch's marker: its number in the gateway's process
	HPrev    = "Tg-Prev"    // every link: its predecessor's sequence (its expectation)
	HResolve = "Tg-Resolve" // a resolution: the number of the batch it resolves
)

// Headers of member records and heartbeats (the heartbeat's expiry is in
// HUntil, as the maintenance lease's).
const (
	HSessions = "Tg-Sessions" // member: the gateway's read sessions of the group
	HHeld     = "Tg-Held"     // member: the partitions they hold, comma-separated
	HSaw      = "Tg-Saw"      // member: the group epoch that assignment was computed from
	HSince    = "Tg-Since"    // member: the record that set the session count (absent: this one)
	HName     = "Tg-Name"     // heartbeat: what the gateway calls itself (Options.Name)
)

// Headers of snapshot points and notices (KindSnap).
const (
	HSnap     = "Tg-Snap"      // "point" or "done"
	HSnapSeq  = "Tg-Snap-Seq"  // done: the point's sequence
	HSnapHash = "Tg-Snap-Hash" // done: the writer's digest at the point (hex)
)

// Header of a sweep fence: the sweeping gateway.
const HFence = "Tg-Fence"

// HGone is a staging's "gone" marker: every fold forgets the staging's
// chunks stored before that sequence (0: before the marker).
const HGone = "Tg-Gone"

// HCreated is a topic-number message's number: the highest given out.
const HCreated = "Tg-Created"

// HBefore is an expiry notice's cutoff (unix micros): producers last
// written before it are forgotten.
const HBefore = "Tg-Before"

// Headers of a document's messages (KindDocument; jetstream/documents.go).
const (
	HDocID      = "Tg-Doc-Id"      // the change's random id: its gateway learns from it whether a change whose answer it lost was stored
	HDocDeleted = "Tg-Doc-Deleted" // set: the key was deleted (a tombstone, purged once stored)
)

// Headers of the role catalog's messages (KindRoles: a document's parts,
// the last one's stream sequence its version; roles.go).
const (
	HRoles     = "Tg-Roles"      // a part of the document, base64 (standard encoding)
	HRolesPart = "Tg-Roles-Part" // "i/n": part i of n (absent: 0/1)
	HRolesID   = "Tg-Roles-Id"   // the change's random id: its gateway learns from it whether a change whose answer it lost was stored
)
