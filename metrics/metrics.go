package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"topicgate/internal/prom"
	"topicgate/planner/plantree"
)

// Metrics are the engine's counters, exported in Prometheus text format
// by Write (write.go). A statement's cost here is a few atomic adds: a
// latency observation (one bucket, the sum) and, for reads and for
// writes that skipped duplicates, a per-topic counter found in a
// sync.Map. Everything derived from the store (messages and bytes written,
// per-partition positions and lag, shared-consumer windows) is computed
// when /metrics is scraped, not maintained on the statement path.
type Metrics struct {
	latency [numKinds]prom.Histogram
	topics  sync.Map // topic name → *topicCounters; pruned of dropped topics at scrape
}

// topicCounters are a topic's statement-side counters (since the process
// started, or since the topic was created).
type topicCounters struct {
	readMsgs, readBytes atomic.Int64 // messages read from the store by SELECT, consumer reads, acquires
	dups                atomic.Int64 // messages skipped by producer seqno dedup
}

// topic returns name's counters, creating them on first use.
func (m *Metrics) topic(name string) *topicCounters {
	if v, ok := m.topics.Load(name); ok {
		return v.(*topicCounters)
	}
	v, _ := m.topics.LoadOrStore(name, &topicCounters{})
	return v.(*topicCounters)
}

// NoteRead counts n messages of nbytes body bytes read from topic.
func (m *Metrics) NoteRead(topic string, n, nbytes int64) {
	if n == 0 {
		return
	}
	c := m.topic(topic)
	c.readMsgs.Add(n)
	c.readBytes.Add(nbytes)
}

// NoteDuplicates counts messages of topic that dedup skipped.
func (m *Metrics) NoteDuplicates(topic string, n int) {
	if n > 0 {
		m.topic(topic).dups.Add(int64(n))
	}
}

// Kind is the kind of statement a latency histogram is kept for.
type Kind uint8

const (
	KindNone         Kind = iota // not observed
	KindInsert                   // INSERT (deferred pipeline INSERTs until their commit)
	KindCopy                     // COPY ... FROM STDIN
	KindRead                     // SELECT (or COPY TO) over a topic, without a consumer
	KindConsumerRead             // SELECT ... WITH (CONSUMER = streaming consumer)
	KindAcquire                  // SELECT ... WITH (CONSUMER = shared consumer)
	KindAck                      // DELETE / UPDATE ... WITH (CONSUMER = shared consumer)
	KindCommit                   // a transaction block's commit (COMMIT, implicit blocks)
	numKinds
)

var kindNames = [numKinds]string{"", "insert", "copy", "read", "consumer_read", "acquire", "ack", "commit"}

// KindOf classifies a plan.
func KindOf(plan plantree.Plan) Kind {
	switch p := plan.(type) {
	case *plantree.SelectPlan:
		switch {
		case p.Consumer != nil && p.Consumer.Shared:
			return KindAcquire
		case p.Consumer != nil:
			return KindConsumerRead
		case p.Scan != nil:
			return KindRead
		}
	case *plantree.CopyOutPlan:
		return KindRead
	case *plantree.InsertPlan:
		return KindInsert
	case *plantree.CopyPlan:
		return KindCopy
	case *plantree.SharedActionPlan:
		return KindAck
	}
	return KindNone
}

// Observe records a statement of kind k that took d.
func (m *Metrics) Observe(k Kind, d time.Duration) {
	if k != KindNone {
		m.latency[k].Observe(d)
	}
}
