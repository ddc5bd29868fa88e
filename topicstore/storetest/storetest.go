package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

// Config is what the suite asks of the store it opens for one subtest.
type Config struct {
	// Clock is the only clock the store may read: written_at, lock
	// deadlines and delays, producer expiry and the write meters all run
	// on it. The suite moves it forward; it never goes back.
	Clock *Clock
	// Unclaimed lists the optional parts of the contract the backend does
	// not implement, each with the reason (a non-empty sentence). A part
	// that is missing and not listed fails the suite; a listed one is
	// skipped with its reason; a listed one that is implemented fails too.
	Unclaimed map[Feature]string
	// Reopen, when the suite sets it, asks the opener to open again the
	// data of the store it opened last for the same t (same directory,
	// same stream), which the suite has closed: what a restarted process
	// finds. The suite never sets it on a first open; the opener keeps, by
	// t, what it needs to find the data again.
	Reopen bool
}

// Feature names an optional part of the contract.
type Feature string

// Optional parts of the contract.
const (
	// Staging: the store implements topicstore.Stager.
	Staging Feature = "staging"
	// Shared: shared consumers (topicstore.SharedStore, and acks in a
	// commit).
	Shared Feature = "shared consumers"
	// Splits: partition splits by hand (SplitPartition) and keyed
	// routing across them.
	Splits Feature = "partition splits"
	// AutoSplit: the write meter (WriteRates) and the splits it decides.
	AutoSplit Feature = "automatic splits"
	// WriteSpeed: per-partition write-speed limits (CommitResult.Throttle).
	WriteSpeed Feature = "write-speed limits"
	// Roles: the role catalog (topicstore.RoleStore).
	Roles Feature = "role catalog"
	// Docs: named documents (topicstore.Documents).
	Docs Feature = "documents"
)

// needs wraps a subtest of an optional part: it is skipped, with the
// reason, when the backend says it does not claim f.
func needs(f Feature, fn func(e *env)) func(e *env) {
	return func(e *env) {
		if why, unclaimed := e.suite.base.Unclaimed[f]; unclaimed {
			e.t.Skipf("%s not claimed: %s", f, why)
		}
		fn(e)
	}
}

// Clock is a manual clock. The zero value is not ready; use NewClock.
type Clock struct{ ns atomic.Int64 }

// Start is where every subtest's clock begins (whole seconds, UTC).
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// NewClock returns a clock at Start.
func NewClock() *Clock {
	c := &Clock{}
	c.ns.Store(Start.UnixNano())
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("storetest: the clock never goes back")
	}
	c.ns.Add(int64(d))
}

// Opener opens a fresh, empty store for one subtest, or with cfg.Reopen
// the same data again (see Config.Reopen). The store must not apply
// retention on its own (the suite calls RunRetention) and must read time
// only from cfg.Clock. The suite closes the store when the subtest ends;
// Close must tolerate being called twice.
type Opener func(t *testing.T, cfg Config) topicstore.Store

// Run runs the contract suite: every backend of topicstore.Store must
// pass it. It claims every optional part of the contract.
func Run(t *testing.T, open func(t *testing.T, cfg Config) topicstore.Store) {
	RunWith(t, Config{}, open)
}

// RunWith is Run for a backend that does not claim every optional part:
// base.Unclaimed says which, and why (base.Clock is ignored: each subtest
// gets a fresh clock).
func RunWith(t *testing.T, base Config, open func(t *testing.T, cfg Config) topicstore.Store) {
	if base.Reopen {
		t.Fatal("storetest: Config.Reopen is the suite's to set")
	}
	for f, why := range base.Unclaimed {
		if why == "" {
			t.Fatalf("storetest: Config.Unclaimed[%q] gives no reason", f)
		}
	}
	s := &suite{open: open, base: base}
	for _, area := range []struct {
		name  string
		tests []subtest
	}{
		{"Topics", topicTests},
		{"Commits", commitTests},
		{"Positions", positionTests},
		{"Scans", scanTests},
		{"Consumers", consumerTests},
		{"Shared", sharedTests},
		{"Retention", retentionTests},
		{"AutoPartitioning", partitioningTests},
		{"Staging", stagingTests},
		{"Kafka", kafkaTests},
		{"Conflicts", conflictTests},
		{"Roles", roleTests},
		{"Documents", documentTests},
	} {
		t.Run(area.name, func(t *testing.T) {
			for _, st := range area.tests {
				t.Run(st.name, func(t *testing.T) { st.fn(s.env(t)) })
			}
		})
	}
}

type subtest struct {
	name string
	fn   func(e *env)
}

type suite struct {
	open Opener
	base Config
}

// env is one subtest's store and clock, with helpers that fail the test
// on any unexpected error.
type env struct {
	t     *testing.T
	s     topicstore.Store
	clk   *Clock
	suite *suite
}

var ctx = context.Background()

func (s *suite) env(t *testing.T) *env {
	cfg := s.base
	cfg.Clock = NewClock()
	st := s.open(t, cfg)
	require.NotNil(t, st, "open returned no store")
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return &env{t: t, s: st, clk: cfg.Clock, suite: s}
}

// stager returns the store's Stager, or skips the test if the backend
// states that it does not claim staging.
func (e *env) stager() topicstore.Stager {
	e.t.Helper()
	return claimed[topicstore.Stager](e, Staging, "topicstore.Stager")
}

// claimed returns the store as the optional interface T of feature f
// (named iface), or skips the test if the backend states that it does
// not claim f; a claim that does not match the store fails the test.
func claimed[T any](e *env, f Feature, iface string) T {
	e.t.Helper()
	why, unclaimed := e.suite.base.Unclaimed[f]
	st, ok := e.s.(T)
	switch {
	case ok && unclaimed:
		e.t.Fatalf("the store implements %s, but Config.Unclaimed says it does not: %s", iface, why)
	case !ok && !unclaimed:
		e.t.Fatalf("the store (%T) does not implement %s and Config.Unclaimed does not say so", e.s, iface)
	case !ok:
		e.t.Skipf("%s not claimed: %s", f, why)
	}
	return st
}

// reopen closes the store and opens its data again (Config.Reopen), on
// the same clock: what a restarted process finds.
func (e *env) reopen() {
	e.t.Helper()
	require.NoError(e.t, e.s.Close())
	cfg := e.suite.base
	cfg.Clock, cfg.Reopen = e.clk, true
	st := e.suite.open(e.t, cfg)
	require.NotNil(e.t, st, "reopen returned no store")
	e.t.Cleanup(func() { require.NoError(e.t, st.Close()) })
	e.s = st
}

// roleStore returns the store's RoleStore, or skips the test if the
// backend states that it does not claim the role catalog.
func (e *env) roleStore() topicstore.RoleStore {
	e.t.Helper()
	return claimed[topicstore.RoleStore](e, Roles, "topicstore.RoleStore")
}

// create creates topic name with parts partitions and consumers.
func (e *env) create(name string, parts int, consumers ...topicstore.ConsumerConfig) {
	e.t.Helper()
	require.NoError(e.t, e.s.CreateTopic(ctx, topicstore.TopicConfig{Name: name, MinActivePartitions: parts, Consumers: consumers}))
}

func (e *env) createCfg(cfg topicstore.TopicConfig) {
	e.t.Helper()
	require.NoError(e.t, e.s.CreateTopic(ctx, cfg))
}

func (e *env) alter(name string, fn func(*topicstore.TopicConfig)) {
	e.t.Helper()
	require.NoError(e.t, e.s.AlterTopic(ctx, name, func(c *topicstore.TopicConfig) error { fn(c); return nil }))
}

// setConsumer returns an alteration of consumer name.
func setConsumer(name string, fn func(*topicstore.ConsumerConfig)) func(*topicstore.TopicConfig) {
	return func(c *topicstore.TopicConfig) {
		for i := range c.Consumers {
			if c.Consumers[i].Name == name {
				fn(&c.Consumers[i])
			}
		}
	}
}

// A store that counts partitions (topicstore.PartitionCounter) agrees
// with it each time.
func (e *env) info(name string) topicstore.TopicInfo {
	e.t.Helper()
	info, err := e.s.Topic(name)
	require.NoError(e.t, err)
	if pc, ok := e.s.(topicstore.PartitionCounter); ok {
		n, err := pc.PartitionCount(name)
		require.NoError(e.t, err)
		require.Equal(e.t, len(info.Partitions), n, "PartitionCount of %q", name)
	}
	return info
}

// ends returns each partition's end offset.
func (e *env) ends(name string) []int64 {
	e.t.Helper()
	var out []int64
	for _, p := range e.info(name).Partitions {
		out = append(out, p.EndOffset)
	}
	return out
}

func (e *env) commitReq(req *topicstore.CommitRequest) topicstore.CommitResult {
	e.t.Helper()
	res, err := e.s.Commit(ctx, req)
	require.NoError(e.t, err)
	require.Len(e.t, res.Writes, len(req.Writes))
	return res
}

func (e *env) commit(topic string, msgs ...topicstore.Message) topicstore.WriteResult {
	e.t.Helper()
	return e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic, Messages: msgs}}}).Writes[0]
}

func (e *env) commitErr(writes ...topicstore.TopicWrite) error {
	_, err := e.s.Commit(ctx, &topicstore.CommitRequest{Writes: writes})
	return err
}

// body is a message without producer for a partition the store picks.
func body(s string) topicstore.Message { return topicstore.Message{Partition: -1, Body: []byte(s)} }

// pmsg is a message of producer with seqno seq (0: no seqno).
func pmsg(producer string, seq int64, s string) topicstore.Message {
	return topicstore.Message{Partition: -1, ProducerID: producer, SeqNo: seq, HasSeqNo: seq != 0, Body: []byte(s)}
}

// grouped is a message of message group g.
func grouped(g, s string) topicstore.Message {
	m := body(s)
	m.MessageGroupID = g
	return m
}

// at puts msgs in partition p.
func at(p int32, msgs ...topicstore.Message) []topicstore.Message {
	for i := range msgs {
		msgs[i].Partition = p
	}
	return msgs
}

func part(p int32) topicstore.ScanRange { return topicstore.ScanRange{Partition: p, End: -1} }

// scan returns "offset:data" for each message of r.
func (e *env) scan(topic string, r topicstore.ScanRange) []string {
	e.t.Helper()
	out := []string{}
	for _, m := range e.scanMsgs(topic, r) {
		out = append(out, fmt.Sprintf("%d:%s", m.Offset, m.Body))
	}
	return out
}

// scanMsgs returns copies of the messages of r (Message.Clone), Body
// decoded.
func (e *env) scanMsgs(topic string, r topicstore.ScanRange) []topicstore.Message {
	e.t.Helper()
	var out []topicstore.Message
	require.NoError(e.t, e.s.Scan(ctx, topic, r, func(m *topicstore.Message) bool {
		data, err := m.Decode()
		require.NoError(e.t, err)
		c := m.Clone()
		c.Body = bytes.Clone(data)
		out = append(out, c)
		return true
	}))
	return out
}

func (e *env) positions(topic, consumer string) map[int32]int64 {
	e.t.Helper()
	pos, err := e.s.Positions(topic, consumer)
	require.NoError(e.t, err)
	return pos
}

func (e *env) retain(now time.Time) int64 {
	e.t.Helper()
	n, err := e.s.RunRetention(ctx, now)
	require.NoError(e.t, err)
	return n
}

// Closed reports whether ch is closed, without waiting.
func Closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
