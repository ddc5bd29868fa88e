package fold

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// The stream's subjects: <prefix>.<kind>[.<token>...]. The kind, the first
// token after the prefix, says what a message is; this file is the one
// place that spells kinds and subjects (jetstream/doc.go lists what each
// holds). Names and producer or consumer ids are hex-encoded into one
// token, so any string is a valid subject token.

// Subject kinds.
const (
	KindCatalog  = "c"  // c.<nameHex>: a topic's catalog record
	KindNumbers  = "cn" // cn: the topic numbers given out
	KindData     = "d"  // d.<topic>.<part>: record batches
	KindProducer = "p"  // p.<topic>.<producerHex>: a producer's dedup state
	KindExpiry   = "e"  // e.<topic>: producers' expiry notices
	KindPosition = "o"  // o.<topic>.<consumerHex>.<part>: a consumer's position
	KindStart    = "r"  // r.<topic>.<part>: a partition's retention start
	KindGuard    = "g"  // g.<topic>.<gateway>: a commit's guard of a topic's catalog record
	KindProbe    = "k"  // k.<gateway>: readiness probes
	KindStaged   = "t"  // t.<gateway>.<txn>: staged chunks
	KindShared   = "s"  // s.<topic>.<consumerHex>.<part>: a shared consumer's window state
	KindMember   = "m"  // m.<topic>.<consumerHex>.<gateway>: read-session group members
	KindBeat     = "h"  // h.<gateway>: gateways' heartbeats
	KindChain    = "f"  // f.<gateway>: a gateway's chain of commit markers, resolutions and fences
	KindDecision = "x"  // x.<gateway>.<txn>: a wide transaction's decision
	KindLease    = "l"  // l: the maintenance lease
	KindSnap     = "n"  // n: snapshot points and notices
	KindRoles    = "a"  // a: the role catalog (jetstream/catalog)
	KindDocument = "y"  // y.<keyHex>: a document (topicstore.Documents), not folded
)

// Subjects spells the subjects of a stream; its value is the stream's
// subject prefix.
type Subjects string

// All matches every subject of the stream.
func (p Subjects) All() string { return string(p) + ".>" }

// Of is the subject of a kind that has no further token (cn, l, n, a).
func (p Subjects) Of(kind string) string { return string(p) + "." + kind }

// Filter matches every subject of a kind.
func (p Subjects) Filter(kind string) string { return string(p) + "." + kind + ".>" }

// TopicFilter matches every subject of a kind of topic id.
func (p Subjects) TopicFilter(kind string, id uint64) string {
	return string(p) + "." + kind + "." + strconv.FormatUint(id, 10) + ".>"
}

// Kind is a subject's kind (its first token after the prefix), or "" if
// the subject is not under p; it does not allocate.
func (p Subjects) Kind(subject string) string {
	rest, ok := strings.CutPrefix(subject, string(p))
	if !ok || !strings.HasPrefix(rest, ".") {
		return ""
	}
	kind, _, _ := strings.Cut(rest[1:], ".")
	return kind
}

// Tokens splits a subject into its kind and the tokens after it.
func (p Subjects) Tokens(subject string) []string {
	return strings.Split(strings.TrimPrefix(subject, string(p)+"."), ".")
}

// Catalog is topic name's catalog subject.
func (p Subjects) Catalog(name string) string {
	return string(p) + "." + KindCatalog + "." + hex.EncodeToString([]byte(name))
}

// Data is partition part of topic id's record batches.
func (p Subjects) Data(id uint64, part int32) string {
	return string(p) + "." + KindData + "." + strconv.FormatUint(id, 10) + "." + strconv.Itoa(int(part))
}

// Producer is a producer's dedup state in topic id.
func (p Subjects) Producer(id uint64, producer string) string {
	return string(p) + "." + KindProducer + "." + strconv.FormatUint(id, 10) + "." + hex.EncodeToString([]byte(producer))
}

// Expiry is topic id's producer expiry notices.
func (p Subjects) Expiry(id uint64) string {
	return string(p) + "." + KindExpiry + "." + strconv.FormatUint(id, 10)
}

// Position is a consumer's position in partition part of topic id.
func (p Subjects) Position(id uint64, consumer string, part int32) string {
	return string(p) + "." + KindPosition + "." + strconv.FormatUint(id, 10) + "." + hex.EncodeToString([]byte(consumer)) + "." + strconv.Itoa(int(part))
}

// Start is partition part of topic id's retention start.
func (p Subjects) Start(id uint64, part int32) string {
	return string(p) + "." + KindStart + "." + strconv.FormatUint(id, 10) + "." + strconv.Itoa(int(part))
}

// Guard is gateway gw's guard subject for topic id: its own, so that no
// two gateways' batches name the same subject (the server refuses an
// expectation on a subject another publish is still being proposed on,
// 10164, which made two gateways refuse each other's batches).
func (p Subjects) Guard(id uint64, gw string) string {
	return string(p) + "." + KindGuard + "." + strconv.FormatUint(id, 10) + "." + gw
}

// Probe is gateway gw's readiness probes.
func (p Subjects) Probe(gw string) string { return string(p) + "." + KindProbe + "." + gw }

// Staged is staging txn of gateway gw; key is "<gw>.<txn>".
func (p Subjects) Staged(key string) string { return string(p) + "." + KindStaged + "." + key }

// StagedKey is the key of staging txn of gateway gw.
func StagedKey(gw string, txn uint64) string { return gw + "." + strconv.FormatUint(txn, 10) }

// Shared is a shared consumer's window state of partition part of topic id.
func (p Subjects) Shared(id uint64, consumer string, part int32) string {
	return string(p) + "." + KindShared + "." + strconv.FormatUint(id, 10) + "." + hex.EncodeToString([]byte(consumer)) + "." + strconv.Itoa(int(part))
}

// Member is gateway gw's member record of read-session group k.
func (p Subjects) Member(k GroupKey, gw string) string {
	return string(p) + "." + KindMember + "." + strconv.FormatUint(k.Topic, 10) + "." + hex.EncodeToString([]byte(k.Consumer)) + "." + gw
}

// Members matches every member record of gateway gw.
func (p Subjects) Members(gw string) string { return string(p) + "." + KindMember + ".*.*." + gw }

// Document is document key's subject (topicstore.Documents).
func (p Subjects) Document(key string) string {
	return string(p) + "." + KindDocument + "." + hex.EncodeToString([]byte(key))
}

// DocumentKey is the key of a document's subject ("" with false when
// subject is none).
func (p Subjects) DocumentKey(subject string) (string, bool) {
	tok := p.Tokens(subject)
	if len(tok) != 2 || tok[0] != KindDocument {
		return "", false
	}
	b, err := hex.DecodeString(tok[1])
	return string(b), err == nil
}

// Beat is gateway gw's heartbeats.
func (p Subjects) Beat(gw string) string { return string(p) + "." + KindBeat + "." + gw }

// Chain is gateway gw's chain.
func (p Subjects) Chain(gw string) string { return string(p) + "." + KindChain + "." + gw }

// Decision is wide transaction n of gateway gw's decision.
func (p Subjects) Decision(gw string, n uint64) string {
	return string(p) + "." + KindDecision + "." + gw + "." + strconv.FormatUint(n, 10)
}

// IsKind reports whether subject is one of kind's.
func (p Subjects) IsKind(subject, kind string) bool {
	return strings.HasPrefix(subject, string(p)+"."+kind+".")
}
