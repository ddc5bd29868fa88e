package executor

import (
	"sync"
	"sync/atomic"
	"time"
	"topicgate/planner/plantree"
)

// metrics are the engine's counters, exported in Prometheus text format by
// WriteMetrics (metrics_write.go). A statement's cost here is a few atomic
// adds: a latency observation (one bucket, the sum) and, for reads and
// for writes that skipped duplicates, a per-topic counter found in a
// sync.Map. Everything derived from the store (messages and bytes written,
// per-partition positions and lag, shared-consumer windows) is computed
// when /metrics is scraped, not maintained on the statement path.
type metrics struct {
	latency [numStmtKinds]histogram
	topics  sync.Map // topic name → *topicCounters; pruned of dropped topics at scrape
}

// topicCounters are a topic's statement-side counters (since the process
// started, or since the topic was created).
type topicCounters struct {
	readMsgs, readBytes atomic.Int64 // messages read from the store by SELECT, consumer reads, acquires
	dups                atomic.Int64 // messages skipped by producer seqno dedup
}

// topic returns name's counters, creating them on first use.
func (m *metrics) topic(name string) *topicCounters {
	if v, ok := m.topics.Load(name); ok {
		return v.(*topicCounters)
	}
	v, _ := m.topics.LoadOrStore(name, &topicCounters{})
	return v.(*topicCounters)
}

// noteRead counts n messages of nbytes body bytes read from topic.
func (m *metrics) noteRead(topic string, n, nbytes int64) {
	if n == 0 {
		return
	}
	c := m.topic(topic)
	c.readMsgs.Add(n)
	c.readBytes.Add(nbytes)
}

// noteDuplicates counts messages of topic that dedup skipped.
func (m *metrics) noteDuplicates(topic string, n int) {
	if n > 0 {
		m.topic(topic).dups.Add(int64(n))
	}
}

// stmtKind is the kind of statement a latency histogram is kept for.
type stmtKind uint8

const (
	kindNone         stmtKind = iota // not observed
	kindInsert                       // INSERT (deferred pipeline INSERTs until their commit)
	kindCopy                         // COPY ... FROM STDIN
	kindRead                         // SELECT (or COPY TO) over a topic, without a consumer
	kindConsumerRead                 // SELECT ... WITH (CONSUMER = streaming consumer)
	kindAcquire                      // SELECT ... WITH (CONSUMER = shared consumer)
	kindAck                          // DELETE / UPDATE ... WITH (CONSUMER = shared consumer)
	kindCommit                       // a transaction block's commit (COMMIT, implicit blocks)
	numStmtKinds
)

var stmtKindNames = [numStmtKinds]string{"", "insert", "copy", "read", "consumer_read", "acquire", "ack", "commit"}

// stmtKindOf classifies a plan.
func stmtKindOf(plan plantree.Plan) stmtKind {
	switch p := plan.(type) {
	case *plantree.SelectPlan:
		switch {
		case p.Consumer != nil && p.Consumer.Shared:
			return kindAcquire
		case p.Consumer != nil:
			return kindConsumerRead
		case p.Scan != nil:
			return kindRead
		}
	case *plantree.CopyOutPlan:
		return kindRead
	case *plantree.InsertPlan:
		return kindInsert
	case *plantree.CopyPlan:
		return kindCopy
	case *plantree.SharedActionPlan:
		return kindAck
	}
	return kindNone
}

// latencyBuckets are the histograms' upper bounds (Prometheus "le",
// inclusive).
var latencyBuckets = [...]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 30 * time.Second,
}

// histogram is a lock-free latency histogram: per bucket (the last one is
// +Inf) the observations that fell in it, not cumulated; the count is
// their sum, computed at scrape.
type histogram struct {
	buckets [len(latencyBuckets) + 1]atomic.Int64
	sumNs   atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	i := 0
	for i < len(latencyBuckets) && d > latencyBuckets[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sumNs.Add(int64(d))
}

// observe records a statement of kind k that took d.
func (m *metrics) observe(k stmtKind, d time.Duration) {
	if k != kindNone {
		m.latency[k].observe(d)
	}
}
