package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// gatewayProcess is a `topicgate serve --store` child process on g's
// cluster, so that a test can SIGKILL it; dsn follows its restarts (each
// start listens on a new port).
type gatewayProcess struct {
	*crashServer
	addr atomic.Pointer[string]
}

func (g *gwCluster) gatewayProcess() *gatewayProcess {
	s := newCrashServer(g.t)
	s.args = []string{"--store", g.nodes.URL(), "--nats-timeout", g.timeout.String()}
	return &gatewayProcess{crashServer: s}
}

// start (re)starts the process and waits until it accepts connections.
func (p *gatewayProcess) start() {
	p.crashServer.start()
	dsn := p.crashServer.dsn()
	p.addr.Store(&dsn)
}

// currentDSN is safe to call from the load's goroutines.
func (p *gatewayProcess) currentDSN() string { return *p.addr.Load() }

// rpwLoad runs TestJepsenTransactions' read-process-write workers and
// input producer (jepsenTxn, jepsenProducer) through gateways until
// stopped; worker k and the producer go through dsns[k % len(dsns)]() and
// dsns[1]().
type rpwLoad struct {
	st     *jepsenState
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startRPWLoad(st *jepsenState, dsns []func() string, seed uint64) *rpwLoad {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	l := &rpwLoad{st: st, cancel: cancel}
	st.stop.Store(false)
	faults := &atomic.Bool{}
	faults.Store(true) // gateways and nodes die under this load: any statement may meet that
	for _, w := range st.workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w.k)))
			dsn := dsns[w.k%len(dsns)]
			var c *pgx.Conn
			for !st.stop.Load() && ctx.Err() == nil {
				if c == nil {
					if c = dialGateway(ctx, dsn()); c == nil {
						continue
					}
				}
				var alive bool
				if c, alive = jepsenTxn(ctx, dsn(), c, w, st, faults, rng); !alive && c != nil {
					c.Close(context.Background())
					c = nil
				}
			}
			if c != nil {
				c.Close(context.Background())
			}
		}()
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		rng := rand.New(rand.NewPCG(seed, 99))
		for !st.stop.Load() && ctx.Err() == nil {
			if c := dialGateway(ctx, dsns[1%len(dsns)]()); c != nil {
				jepsenProducer(ctx, c, st, faults, rng)
			}
		}
	}()
	return l
}

// stop ends every worker after its transaction, and the producer after
// its INSERT, and reports what the clients found wrong.
func (l *rpwLoad) stop(t *testing.T) {
	t.Helper()
	l.st.stop.Store(true)
	l.wg.Wait()
	l.cancel()
	for _, p := range l.st.problems {
		t.Errorf("client: %s", p)
	}
	l.st.problems = nil
}

// sharedLoad runs TestCrashSharedAcks' shared workers (crashSharedStep)
// through gateways until stopped: worker k goes through dsns[k %
// len(dsns)](), workers 0 and 1 acknowledge with autocommit DELETEs, 2
// and 3 in transactions. A worker whose statement fails (its gateway
// died, or the cluster answered 57P03) records what it held as abandoned
// and reconnects.
type sharedLoad struct {
	l       *crashSharedLedger
	stopped atomic.Bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func startSharedLoad(l *crashSharedLedger, dsns []func() string, cycle int, seed uint64) *sharedLoad {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s := &sharedLoad{l: l, cancel: cancel}
	for w := range 4 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			dsn := dsns[w%len(dsns)]
			var c *pgx.Conn
			for !s.stopped.Load() && ctx.Err() == nil {
				if c == nil {
					if c = dialGateway(ctx, dsn()); c == nil {
						continue
					}
				}
				what, err := crashSharedStep(ctx, c, l, cycle, w, w >= 2, rng)
				if err == nil {
					continue
				}
				if code := pgCode(err); code != "" && code != "57P03" && ctx.Err() == nil {
					l.problem("cycle %d worker %d: %s: %v", cycle, w, what, err)
				}
				// Give up what it holds in the ledger before closing: the
				// close releases its locks, and another worker may take
				// them at once.
				l.abandon(w)
				c.Close(context.Background())
				c = nil
			}
			if c != nil {
				c.Close(context.Background())
			}
		}()
	}
	return s
}

// stop ends every worker after its turn and reports what they found wrong.
func (s *sharedLoad) stop(t *testing.T) {
	t.Helper()
	s.stopped.Store(true)
	s.wg.Wait()
	s.cancel()
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	for _, p := range s.l.problems {
		t.Errorf("shared worker: %s", p)
	}
	s.l.problems = nil
}

// TestClusterCrash: mixed load through two gateway processes on one
// cluster (dedup producers on t; read-process-write transactions from in
// to out and txlog, retried on 40001, with an input producer) while, one
// phase each, a gateway is SIGKILLed in the middle of its commits and
// restarted, and the node leading the stream is SIGKILLed and restarted.
// After each phase, through a gateway started then (its fold replays the
// stream): every acknowledged (producer, seqno) is stored exactly once, in
// seqno order in one partition, offsets contiguous (crashVerify); no input
// consumed by two commits, out holds exactly the consumed inputs, no torn
// or aborted transaction visible, no committed position of c moved
// backwards (jepsenVerify); no message of the shared consumer sh/w whose
// ack was confirmed is handed out again, none handed to two live workers
// at once, and every offset below committed_offset was acknowledged
// (crashSharedCheckStats). At the end, a drain through a fresh gateway
// (waiting out the locks of dead sessions) shows every message of sh
// acknowledged exactly once, and every message a worker held without an
// ack when it failed handed out again (crashSharedExactlyOnce).
func TestClusterCrash(t *testing.T) {
	g := startGateways(t, 0, 2*time.Second)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0xc1a5))
	gws := []*gatewayProcess{g.gatewayProcess(), g.gatewayProcess()}
	for _, p := range gws {
		p.start()
	}
	dsns := []func() string{gws[0].currentDSN, gws[1].currentDSN}
	ctx := context.Background()

	c := gws[0].connect(ctx)
	for _, ddl := range []string{
		"CREATE TOPIC t WITH (min_active_partitions = 4)",
		"CREATE TOPIC in (CONSUMER c) WITH (min_active_partitions = 4)",
		"CREATE TOPIC out WITH (min_active_partitions = 4)",
		"CREATE TOPIC txlog WITH (min_active_partitions = 2)",
		// A lock outlives its gateway until its deadline: long enough for a
		// live worker's turn through a leader election, short enough to
		// expire within the test.
		fmt.Sprintf("CREATE TOPIC sh (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT%dS'))) WITH (min_active_partitions = %d)", shLockSeconds, shParts),
	} {
		exec(t, c, ddl)
	}
	_, err := c.CopyFrom(ctx, pgx.Identifier{"sh"}, []string{"partition", "data"}, pgx.CopyFromSlice(shParts*shPerPart, func(i int) ([]any, error) {
		return []any{int64(i % shParts), []byte(fmt.Sprintf("%d/%d", i%shParts, i/shParts))}, nil
	}))
	require.NoError(t, err)
	shl := newCrashSharedLedger("sh", "w")
	// A stream leader election here takes 4-8 s, longer than the locks:
	// a lock may expire while its holder waits to acknowledge.
	shl.lockTimeout = shLockSeconds * time.Second
	st := newJepsenState(jepsenWorkers)
	const prefill = 2000
	_, err = c.CopyFrom(ctx, pgx.Identifier{"in"}, []string{"partition", "data"}, pgx.CopyFromSlice(prefill, func(i int) ([]any, error) {
		return []any{int64(i % 4), []byte(jepsenInputID(int64(i)))}, nil
	}))
	require.NoError(t, err)
	for i := range int64(prefill) {
		st.ackedInputs[jepsenInputID(i)] = true
	}
	st.nextInput = prefill
	c.Close(ctx)

	producers := newProducers(4)
	phases := []struct {
		name  string
		fault func()
	}{
		{"gateway A SIGKILLed under load", func() {
			time.Sleep(time.Duration(700+rng.IntN(600)) * time.Millisecond)
			gws[0].kill()
			time.Sleep(300 * time.Millisecond)
			gws[0].start()
			time.Sleep(time.Second)
		}},
		{"the stream leader SIGKILLed under load", func() {
			time.Sleep(time.Duration(300+rng.IntN(400)) * time.Millisecond)
			leader := g.streamLeader()
			t0 := time.Now()
			g.nodes.Kill(leader)
			next := g.streamLeader()
			t.Logf("node %d killed, node %d leads the stream %v later", leader, next, time.Since(t0).Round(time.Millisecond))
			time.Sleep(500 * time.Millisecond)
			g.nodes.Restart(leader)
			time.Sleep(500 * time.Millisecond)
		}},
	}
	for _, ph := range phases {
		st.cycle++
		start := time.Now()
		dedup := startDedupLoad(producers, dsns, rng.Uint64())
		rpw := startRPWLoad(st, dsns, rng.Uint64())
		shared := startSharedLoad(shl, dsns, st.cycle, rng.Uint64())
		confirmed := len(shl.confirmed)
		ph.fault()
		dedup.stop(t)
		rpw.stop(t)
		shared.stop(t)
		load := time.Since(start)

		v := connect(t, g.startGateway())
		crashVerify(t, v, producers, true)
		sum := jepsenVerify(ctx, t, v, st)
		crashSharedCheckStats(t, v, shl, shParts, shPerPart, false, true)
		t.Logf("%s: shared: %d acks confirmed (%d in total), %d uncertain; %d messages held by a worker that lost its connection so far, %d of them not handed out again yet",
			ph.name, len(shl.confirmed)-confirmed, len(shl.confirmed), len(shl.uncertain), shl.abandoned, len(shl.unacked))
		t.Logf("%s: %v of load; dedup: %d INSERTs acknowledged, errors:%s", ph.name, load.Round(time.Millisecond), dedup.log.acked(), dedup.log.errorSummary())
		t.Logf("%s: txns: %d committed, %d rolled back, %d dropped, %d conflicts (40001), %d failed before COMMIT, %d in doubt (%d resolved committed, %d aborted), %d empty; positions %v; in %d, out %d, txlog %d",
			ph.name, sum.n[jCommitted], sum.n[jRolledBack], sum.n[jDropped], sum.n[jConflict], sum.n[jKilled], sum.n[jInDoubt],
			sum.doubtCommitted, sum.doubtAborted, sum.n[jEmpty], sum.positions, sum.in, sum.out, sum.txlog)
		for msg, n := range st.doubtErrs {
			t.Logf("%s: %d COMMIT(s) in doubt: %s", ph.name, n, msg)
		}
		st.doubtErrs = nil
		if t.Failed() {
			return
		}
		require.NotZero(t, sum.n[jCommitted], "no transaction committed in this phase: it proved nothing")
		require.Greater(t, len(shl.confirmed), confirmed, "no shared ack confirmed in this phase: it proved nothing")
	}

	v := connect(t, g.startGateway())
	t0 := time.Now()
	drained := crashSharedDrain(ctx, t, v, shl, st.cycle+1, shLockSeconds*time.Second+5*time.Second)
	t.Logf("shared: drained in %v", time.Since(t0).Round(time.Millisecond))
	crashSharedExactlyOnce(t, shl, drained, shParts, shPerPart)
	crashSharedCheckStats(t, v, shl, shParts, shPerPart, true, false)
}

// TestClusterCrash's shared topic: partitions, messages per partition (more
// than the workers acknowledge in the test), lock timeout.
const shParts, shPerPart, shLockSeconds = 4, 2500, 6
