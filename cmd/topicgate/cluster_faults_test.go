package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jsext"
)

// loadLog is what dedup writers under faults were told, in time.
type loadLog struct {
	mu       sync.Mutex
	acks     []time.Time // each acknowledged INSERT, in order
	byWriter map[string][]time.Time
	failed   []time.Time       // when each failed attempt was sent
	errs     map[string]int    // SQLSTATE ("" for a connection error) -> count
	example  map[string]string // one message per SQLSTATE
	problems []string
}

func newLoadLog() *loadLog {
	return &loadLog{errs: map[string]int{}, example: map[string]string{}, byWriter: map[string][]time.Time{}}
}

func (l *loadLog) ack(writer string) {
	l.mu.Lock()
	now := time.Now()
	l.acks = append(l.acks, now)
	l.byWriter[writer] = append(l.byWriter[writer], now)
	l.mu.Unlock()
}

func (l *loadLog) fail(err error, sent time.Time) {
	l.mu.Lock()
	l.failed = append(l.failed, sent)
	code := pgCode(err)
	l.errs[code]++
	if _, ok := l.example[code]; !ok {
		l.example[code] = err.Error()
	}
	l.mu.Unlock()
}

func (l *loadLog) problem(format string, args ...any) {
	l.mu.Lock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// acked counts the acknowledged INSERTs.
func (l *loadLog) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acks)
}

// failedUnexcused counts the failed attempts sent after from that no
// kill excuses: one sent up to timeout before a kill may have been in
// flight on a connection to the killed node, one sent up to killGrace
// after it may have gone out on it.
func (l *loadLog) failedUnexcused(from time.Time, kills []time.Time, timeout time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.failed {
		if at.Before(from) {
			continue
		}
		excused := false
		for _, k := range kills {
			excused = excused || !at.Before(k.Add(-timeout)) && !at.After(k.Add(killGrace))
		}
		if !excused {
			n++
		}
	}
	return n
}

// maxGap is the longest stretch of [from, to] without an acknowledgement,
// and the longest without one of the same writer.
func (l *loadLog) maxGap(from, to time.Time) (any, writer time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, acks := range l.byWriter {
		writer = max(writer, gapIn(acks, from, to))
	}
	return gapIn(l.acks, from, to), writer
}

// gapIn is the longest stretch of [from, to] without a time of acks.
func gapIn(acks []time.Time, from, to time.Time) time.Duration {
	prev, gap := from, time.Duration(0)
	for _, at := range acks {
		if at.Before(from) || at.After(to) {
			continue
		}
		gap = max(gap, at.Sub(prev))
		prev = at
	}
	return max(gap, to.Sub(prev))
}

// firstAckAfter is how long after t0 the first acknowledgement came.
func (l *loadLog) firstAckAfter(t0 time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.acks {
		if at.After(t0) {
			return at.Sub(t0), true
		}
	}
	return 0, false
}

// errorSummary lists the errors by SQLSTATE with an example each.
func (l *loadLog) errorSummary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for code, n := range l.errs {
		fmt.Fprintf(&b, "\n  %d x %q, e.g. %s", n, code, l.example[code])
	}
	return b.String()
}

// dedupWriter writes p's seqnos into topic t through the gateway dsn()
// names, in batches of 1 or 3, until stop is set and its last batch is
// acknowledged (or ctx ends). A batch that fails is retried with the same
// seqnos (through a new connection if the old one broke): then INSERT 0 0
// says an earlier attempt was stored. Errors other than a broken
// connection and 57P03 are problems.
func dedupWriter(ctx context.Context, stop *atomic.Bool, p *crashProducer, dsn func() string, l *loadLog, rng *rand.Rand) {
	var c *pgx.Conn
	defer func() {
		if c != nil {
			c.Close(context.Background())
		}
	}()
	for ctx.Err() == nil && (p.inflight != nil || !stop.Load()) {
		if c == nil {
			if c = dialGateway(ctx, dsn()); c == nil {
				continue
			}
		}
		seqs := p.inflight
		if seqs == nil {
			n := 1 + 2*rng.IntN(2)
			for i := range n {
				seqs = append(seqs, p.acked+1+int64(i))
			}
		}
		retry := p.inflight != nil
		sent := time.Now()
		tag, err := crashInsertBatch(ctx, c, p.id, seqs)
		if err != nil {
			p.inflight = seqs
			if ctx.Err() != nil {
				return
			}
			l.fail(err, sent)
			switch pgCode(err) {
			case "":
				c.Close(context.Background())
				c = nil
			case "57P03", "08007":
				time.Sleep(20 * time.Millisecond) // as a client would, before it retries (the same seqnos: safe)
			default:
				l.problem("%s seqnos %v: %v", p.id, seqs, err)
			}
			continue
		}
		switch tag.String() {
		case fmt.Sprintf("INSERT 0 %d", len(seqs)):
		case "INSERT 0 0":
			if !retry {
				l.problem("%s seqnos %v: INSERT 0 0 on the first attempt", p.id, seqs)
			}
			p.durableUnacked++
		default:
			l.problem("%s seqnos %v: tag %q (retry %v): a batch is all or nothing", p.id, seqs, tag, retry)
		}
		p.acked, p.inflight = seqs[len(seqs)-1], nil
		l.ack(p.id)
	}
}

// dialGateway connects to dsn, or returns nil after a short pause if the
// gateway does not answer (it is down: the caller tries again).
func dialGateway(ctx context.Context, dsn string) *pgx.Conn {
	c, err := connectNoting(ctx, dsn)
	if err != nil {
		time.Sleep(20 * time.Millisecond)
		return nil
	}
	return c
}

// clusterLoad is a set of dedup writers on topic t, spread over gateways.
type clusterLoad struct {
	producers []*crashProducer
	log       *loadLog
	kills     []time.Time // when a node was killed (only the test's goroutine appends)
	stopped   atomic.Bool
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// newProducers returns n dedup producers w0, w1, ... that wrote nothing.
func newProducers(n int) []*crashProducer {
	out := make([]*crashProducer, n)
	for k := range out {
		out[k] = &crashProducer{id: fmt.Sprintf("w%d", k), partition: -1}
	}
	return out
}

// startDedupLoad starts a writer per producer on topic t, each going on
// from the producer's last acknowledged seqno; writer k writes through
// dsns[k % len(dsns)]().
func startDedupLoad(producers []*crashProducer, dsns []func() string, seed uint64) *clusterLoad {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	l := &clusterLoad{producers: producers, log: newLoadLog(), cancel: cancel}
	for k, p := range producers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			dedupWriter(ctx, &l.stopped, p, dsns[k%len(dsns)], l.log, rand.New(rand.NewPCG(seed, uint64(k))))
		}()
	}
	return l
}

// stop ends the writers once each has its last batch acknowledged, and
// reports what they found wrong.
func (l *clusterLoad) stop(t *testing.T) {
	t.Helper()
	l.stopped.Store(true)
	l.wg.Wait()
	l.cancel()
	for _, p := range l.log.problems {
		t.Error(p)
	}
}

// verify checks topic t through a gateway started now (its fold replays
// the stream, so it sees every acknowledged write): every acknowledged
// seqno exactly once, in order, in one partition per producer, offsets
// contiguous, sys.producers in agreement.
func (l *clusterLoad) verify(t *testing.T, g *gwCluster) {
	t.Helper()
	crashVerify(t, connect(t, g.startGateway()), l.producers, true)
	durable := 0
	for _, p := range l.producers {
		durable += p.durableUnacked
	}
	t.Logf("%d INSERTs acknowledged; %d batches that failed were found stored when retried; errors:%s", l.log.acked(), durable, l.log.errorSummary())
}

// gatewayDSNs gives each gateway's connection string.
func (g *gwCluster) gatewayDSNs() []func() string {
	var out []func() string
	for _, a := range g.gws {
		dsn := a.dsn() + "&connect_timeout=2"
		out = append(out, func() string { return dsn })
	}
	return out
}

// faultGateways starts a cluster, two gateways with a 2s --nats-timeout
// and topic t with 4 partitions.
func faultGateways(t *testing.T) *gwCluster {
	g := startGateways(t, 2, 2*time.Second)
	exec(t, connect(t, g.gws[0]), "CREATE TOPIC t WITH (min_active_partitions = 4)")
	return g
}

// killGrace: an INSERT sent this soon after a node's SIGKILL may still go
// out on the gateway's connection to that node (before the gateway sees it
// close) and be lost with it.
const killGrace = 200 * time.Millisecond

// downStats is what the writers saw while a node was down.
type downStats struct {
	gap, writerGap time.Duration // the longest stretch without an ack: of any writer, of one
	late           int           // failed attempts no kill excuses (failedUnexcused)
}

func (d downStats) String() string {
	return fmt.Sprintf("longest write gap %v (of one writer: %v), %d failed INSERTs not in flight at a kill",
		d.gap.Round(time.Millisecond), d.writerGap.Round(time.Millisecond), d.late)
}

// since is what the writers saw from t0 until now.
func (l *clusterLoad) since(t0 time.Time, timeout time.Duration) downStats {
	var d downStats
	d.gap, d.writerGap = l.log.maxGap(t0, time.Now())
	d.late = l.log.failedUnexcused(t0, l.kills, timeout)
	return d
}

// kill SIGKILLs node i of g, noting when.
func (l *clusterLoad) kill(g *gwCluster, i int) time.Time {
	at := time.Now()
	l.kills = append(l.kills, at)
	g.nodes.Kill(i)
	return at
}

// requireServing fails the test unless the writers went on while one node
// was down: the only INSERTs that failed were in flight at a kill (on a
// gateway's connection to the killed node: they wait out --nats-timeout
// and fail with 57P03, and their retries are deduplicated), and no writer
// waited much longer than that.
func (g *gwCluster) requireServing(t *testing.T, l *clusterLoad, d downStats) {
	t.Helper()
	require.Zero(t, d.late, "%v; errors:%s", d, l.log.errorSummary())
	for code := range l.log.errs {
		require.Contains(t, []string{"57P03", "08007"}, code, "errors:%s", l.log.errorSummary())
	}
	require.Less(t, d.gap, g.timeout+time.Second, "%v", d)
	require.Less(t, d.writerGap, g.timeout+time.Second, "%v", d)
}

// TestClusterFollowerDown: killing either follower of the stream, under
// load through two gateways, costs no write: every INSERT sent after it
// succeeds at once.
func TestClusterFollowerDown(t *testing.T) {
	g := faultGateways(t)
	leader := g.streamLeader()
	load := startDedupLoad(newProducers(4), g.gatewayDSNs(), uint64(time.Now().UnixNano()))
	time.Sleep(500 * time.Millisecond)
	first := time.Now()
	for _, f := range []int{(leader + 1) % 3, (leader + 2) % 3} {
		t0 := load.kill(g, f)
		time.Sleep(1500 * time.Millisecond)
		t1 := time.Now()
		g.nodes.Restart(f)
		t.Logf("follower %d down 1.5s, restarted in %v: %v", f, time.Since(t1).Round(time.Millisecond), load.since(t0, g.timeout))
		time.Sleep(300 * time.Millisecond)
	}
	load.stop(t)
	g.requireServing(t, load, load.since(first, g.timeout))
	load.verify(t, g)
}

// TestClusterStreamLeaderDown: killing the stream's leader under load
// stops writes until the survivors elect a new one (57P03 meanwhile, after
// --nats-timeout); then they succeed again, and the retried batches are
// deduplicated, not doubled.
func TestClusterStreamLeaderDown(t *testing.T) {
	g := faultGateways(t)
	leader := g.streamLeader()
	load := startDedupLoad(newProducers(4), g.gatewayDSNs(), uint64(time.Now().UnixNano()))
	time.Sleep(500 * time.Millisecond)
	t0 := load.kill(g, leader)
	next := g.streamLeader()
	elected := time.Since(t0)
	resumed := within(t, 30*time.Second, func() error {
		if _, ok := load.log.firstAckAfter(t0.Add(elected)); !ok {
			return fmt.Errorf("no write acknowledged since node %d was elected", next)
		}
		return nil
	})
	time.Sleep(time.Second)
	d := load.since(t0, g.timeout)
	g.nodes.Restart(leader)
	time.Sleep(300 * time.Millisecond)
	load.stop(t)
	t.Logf("stream leader %d killed: node %d leads %v later, writes acknowledged again within %v of that; %v",
		leader, next, elected.Round(time.Millisecond), resumed.Round(time.Millisecond), d)
	require.Less(t, d.gap, elected+g.timeout+time.Second, "writes resume within --nats-timeout of the election")
	for code := range load.log.errs {
		require.Contains(t, []string{"57P03", "08007"}, code, "errors:%s", load.log.errorSummary())
	}
	load.verify(t, g)
}

// TestClusterQuorumLost: with two of three nodes down an INSERT waits out
// --nats-commit-timeout (3s here) and then fails through either gateway,
// naming the cluster: with 08007 when its batch reached the node left,
// which may store it once a quorum is back (the outcome is unknown), or
// with 57P03 when it reached no leader (nothing stored). Once one node is
// back the same INSERT (same producer and seqno) succeeds, and the topic
// holds that message once.
func TestClusterQuorumLost(t *testing.T) {
	g := startGateways(t, 0, 2*time.Second)
	g.commitTimeout = 3 * time.Second
	g.gws = []*app{g.startGateway(), g.startGateway()}
	exec(t, connect(t, g.gws[0]), "CREATE TOPIC t WITH (min_active_partitions = 4)")
	a, b := connect(t, g.gws[0]), connect(t, g.gws[1])
	ctx := context.Background()
	ins := "INSERT INTO t (producer_id, seqno, data) VALUES ('p', $1, 'x')"
	exec(t, a, ins, 1)
	// B must know the topic before the quorum goes: a gateway that has
	// not folded a topic's creation yet looks for it in the stream, and
	// without a quorum that fails at once with 57P03 (jetstream/catalog: Known).
	exec(t, b, "SELECT count(*) FROM t")
	g.nodes.Kill(0)
	g.nodes.Kill(1)
	for i, c := range []*pgx.Conn{a, b, a} {
		t0 := time.Now()
		_, err := c.Exec(ctx, ins, 2)
		took := time.Since(t0)
		t.Logf("INSERT %d with two nodes down: %v after %v", i, err, took.Round(time.Millisecond))
		require.Contains(t, []string{"08007", "57P03"}, pgCode(err), "%v", err)
		require.Contains(t, err.Error(), "the NATS cluster ("+jsext.RedactURLs(g.nodes.URLs())+")")
		require.GreaterOrEqual(t, took, g.commitTimeout-100*time.Millisecond, "an INSERT waits for the cluster for --nats-commit-timeout")
		require.Less(t, took, g.commitTimeout+2*g.timeout+time.Second, "and then fails")
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := g.gws[0].ready(rctx)
	cancel()
	require.Error(t, err, "/readyz: not ready without a quorum")
	t.Logf("/readyz with two nodes down: %v", err)
	// A read's point finds no leader within the timeout and the read goes
	// on with the gateway's view (barrier.go); the messages' data must
	// still come from a node, and the one left may not serve it without a
	// quorum. So the read answers what A acknowledged, or fails with
	// 57P03, after about the timeout: it neither hangs nor lies.
	t0 := time.Now()
	var n0 int64
	err = a.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n0)
	took := time.Since(t0)
	if err != nil {
		require.Equal(t, "57P03", pgCode(err), "%v", err)
	} else {
		require.EqualValues(t, 1, n0, "the one INSERT acknowledged before the nodes died")
	}
	require.Less(t, took, 3*g.timeout+time.Second)
	t.Logf("a read with two nodes down: %v after %v", err, took.Round(time.Millisecond))
	t0 = time.Now()
	g.nodes.Restart(0)
	healthy := time.Since(t0)
	var n int
	took = within(t, 30*time.Second, func() error {
		n++
		_, err := b.Exec(ctx, ins, 2)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
		}
		return err
	})
	t.Logf("node 0 restarted: healthy after %v, an INSERT succeeded %v after that (attempt %d)", healthy.Round(time.Millisecond), took.Round(time.Millisecond), n)
	exec(t, a, ins, 3)
	require.NoError(t, g.gws[0].ready(ctx), "/readyz: ready again")
	g.nodes.Restart(1)
	v := connect(t, g.startGateway())
	require.Equal(t, []string{"p 1", "p 2", "p 3"}, queryText(t, v, "SELECT producer_id, seqno FROM t ORDER BY seqno"),
		"each seqno once: an INSERT answered 08007 may have been stored, and its retry is deduplicated")
}

// TestClusterMetaLeaderDown: the JetStream meta leader (which places
// streams and consumers) killed under load, while another node leads the
// stream: writes go on.
func TestClusterMetaLeaderDown(t *testing.T) {
	g := faultGateways(t)
	meta := g.nodes.MetaLeader()
	nc := g.nodes.Connect()
	for i := 0; g.streamLeader() == meta; i++ {
		// Move the stream's leadership off the meta leader, so that this
		// kill is the meta leader's alone.
		require.Less(t, i, 5, "node %d keeps leading the stream", meta)
		_, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+jetstream.DefaultStream, nil, 5*time.Second)
		require.NoError(t, err)
		within(t, 30*time.Second, func() error {
			l, err := g.nodes.Nodes().StreamLeader(context.Background(), jetstream.DefaultStream)
			if err == nil && l == meta {
				err = fmt.Errorf("node %d still leads the stream", l)
			}
			return err
		})
	}
	load := startDedupLoad(newProducers(4), g.gatewayDSNs(), uint64(time.Now().UnixNano()))
	time.Sleep(500 * time.Millisecond)
	t0 := load.kill(g, meta)
	next := g.nodes.MetaLeader()
	elected := time.Since(t0)
	time.Sleep(max(0, 2*time.Second-elected))
	g.nodes.Restart(meta)
	time.Sleep(300 * time.Millisecond)
	load.stop(t)
	d := load.since(t0, g.timeout)
	t.Logf("meta leader %d killed: node %d leads the meta group after %v; %v", meta, next, elected.Round(time.Millisecond), d)
	g.requireServing(t, load, d)
	load.verify(t, g)
}

// TestClusterReadAfterNodeKilled: a read session on gateway B closes
// cleanly; then the node gateway A is connected to (where its fold's
// consumer may live too) is SIGKILLed, and at once a consumer read through
// A must return all 20 messages available. A's fold stalls until its
// consumer is made again on another node (seconds), so a read that waited
// for B's release to reach A's fold found its share still taken and
// returned nothing; waiting for its share, a read now brings A's view up
// to the stream itself (a read barrier, which fills the fold from any
// replica). Three rounds, each killing the node A is on.
func TestClusterReadAfterNodeKilled(t *testing.T) {
	g := startGateways(t, 2, 2*time.Second)
	a, b := g.gws[0], g.gws[1]
	ctx := context.Background()
	exec(t, connect(t, a), "CREATE TOPIC t (CONSUMER c) WITH (min_active_partitions = 4)")
	names := map[string]int{}
	for i := range 3 {
		names[g.nodes.Nodes().Node(i).Name] = i
	}
	for round := range 3 {
		w := connect(t, a)
		rows := make([][]any, 20)
		for i := range rows {
			rows[i] = []any{int32(i % 4), []byte(fmt.Sprintf("%d/%d", round, i))}
		}
		_, err := w.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"partition", "data"}, pgx.CopyFromRows(rows))
		require.NoError(t, err)
		w.Close(ctx)
		cb := connect(t, b)
		exec(t, cb, "SELECT * FROM t WITH (CONSUMER = c) LIMIT 0") // B's session holds every partition
		require.NoError(t, cb.Close(ctx))
		time.Sleep(300 * time.Millisecond) // B announces its release
		server := a.store.(topicstore.ClusterStatter).ClusterStats(ctx).Server
		node, ok := names[server]
		require.True(t, ok, "gateway A is connected to %q", server)
		g.nodes.Kill(node)
		ca := connect(t, a)
		t0 := time.Now()
		got := queryText(t, ca, "SELECT convert_from(data, 'UTF8') FROM t WITH (CONSUMER = c) LIMIT 100")
		t.Logf("round %d: node %d (A's) killed; a consumer read through A returned %d messages in %v", round, node, len(got), time.Since(t0).Round(time.Millisecond))
		require.Len(t, got, 20)
		ca.Close(ctx)
		g.nodes.Restart(node)
	}
}

// TestClusterRetentionRuns: on the cluster, messages older than a topic's
// retention period (4 s here) are gone within two periods of their
// writing, seen through a gateway started after the first maintenance
// run; and retention keeps running (its lease is renewed, not refused
// after the first run): a second round written later is gone as well.
func TestClusterRetentionRuns(t *testing.T) {
	g := startGateways(t, 1, 2*time.Second)
	ctx := context.Background()
	c := connect(t, g.gws[0])
	exec(t, c, "CREATE TOPIC r WITH (retention_period = Interval('PT4S'), min_active_partitions = 2)")
	var cb *pgx.Conn
	for round := range 2 {
		exec(t, c, "INSERT INTO r (data) VALUES ('a'), ('b'), ('c'), ('d')")
		t0 := time.Now()
		if cb == nil {
			time.Sleep(2500 * time.Millisecond) // past A's first maintenance run
			cb = connect(t, g.startGateway())
		}
		within(t, 8*time.Second, func() error {
			var n, retained int64
			if err := cb.QueryRow(ctx, "SELECT count(*) FROM r").Scan(&n); err != nil {
				return err
			}
			if err := cb.QueryRow(ctx, "SELECT sum(end_offset - start_offset) FROM sys.partitions WHERE topic = 'r'").Scan(&retained); err != nil {
				return err
			}
			if n > 0 || retained > 0 {
				time.Sleep(100 * time.Millisecond)
				return fmt.Errorf("%d messages readable, %d retained", n, retained)
			}
			return nil
		})
		t.Logf("round %d: the messages were gone %v after their writing (retention 4 s)", round, time.Since(t0).Round(time.Millisecond))
	}
}
