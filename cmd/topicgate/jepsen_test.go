package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestJepsenTransactions is a Jepsen-style checker for read-process-write
// transactions under SIGKILL. A `topicgate serve` child process (crashServer)
// holds three topics:
//
//	in     4 partitions, CONSUMER c; each message's data is a unique input id "i<n>"
//	out    4 partitions; one message per input a transaction consumed:
//	       data "out:<input id>", attrs {"txn": <txn id>}; in a big
//	       transaction "out:<input id>|<length>|xxx..." padded to <length> bytes
//	txlog  2 partitions; one audit message per transaction:
//	       data "txn:<txn id>:<count>", attrs {"txn": <txn id>, "count": <count>}
//
// K=4 workers run BEGIN; SELECT ... FROM in WITH (CONSUMER = c) LIMIT 20
// (sometimes as two reads of 10); INSERT INTO out ...; INSERT INTO txlog ...;
// COMMIT, starting a new transaction after a 40001. 10% of the transactions
// end in ROLLBACK instead and 5% drop the TCP connection before COMMIT (after
// the read, after the first or after the second INSERT). About one in
// jepsenBigOneIn is big: its outputs are padded to jepsenBigBytes in all, more
// than a transaction keeps in memory (txn.DefaultSpillBytes, 8 MiB), so its
// writes spill to the store's staging area before COMMIT. A
// producer keeps appending inputs to `in` with small autocommit INSERTs. The
// client records every outcome: committed (COMMIT answered COMMIT), rolled
// back, dropped, conflict (40001), aborted by the kill (the server died before
// COMMIT was sent) and in doubt (COMMIT sent, no answer).
//
// Each cycle runs 100-400 ms of load, kills the server with SIGKILL, restarts
// it on the same data dir and checks, with stateless SELECTs only:
//   - no lost write: every acknowledged input is in `in`, every committed
//     transaction's txlog record and outputs are there;
//   - exactly once: every input below its partition's committed position of c
//     has exactly one output, every input at or above it none;
//   - no aborted read: no txlog record or output of a rolled-back, dropped,
//     conflicting or killed-before-COMMIT transaction is visible, and nothing
//     appears that no client wrote;
//   - no torn transaction: a txlog record with count n has exactly n outputs,
//     they are exactly the inputs the transaction read, at consecutive offsets
//     of one partition; no output exists without its txlog record;
//   - what the transactions read is what `in` holds at those offsets, and the
//     reads of one transaction are contiguous per partition;
//   - offsets are contiguous from the start offset in every partition of every
//     topic, and a dedup producer's seqnos increase with the offset;
//   - consumer positions never move backwards across restarts.
//
// In-doubt transactions are resolved by that verification (all or nothing)
// and checked as committed or aborted from then on.
//
// Cycles: 20 by default, 3 with -short. Long mode: TOPICGATE_JEPSEN_CYCLES=N
// runs N cycles, e.g.
//
//	TOPICGATE_JEPSEN_CYCLES=500 go test ./cmd/topicgate -run TestJepsenTransactions -count=1 -v -timeout 2h
//
// Verification reads every topic in full after every restart, so its cost
// grows with the data: about 0.5 s per cycle at 30k messages per topic (20
// cycles, about 15 s of cycles), 2.5 s at 150k (100 cycles, about 2.5
// minutes in all).
//
// The topic is named in, as in the read-process-write example; in is a
// reserved word in PostgreSQL's grammar, so statements write it "in".
//
// TOPICGATE_JEPSEN_SEED=n replays a seed (the schedule still depends on timing).
func TestJepsenTransactions(t *testing.T) {
	cycles := 20
	if testing.Short() {
		cycles = 3
	}
	if v := os.Getenv("TOPICGATE_JEPSEN_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TOPICGATE_JEPSEN_CYCLES=%q: want a positive integer", v)
		}
		cycles = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TOPICGATE_JEPSEN_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TOPICGATE_JEPSEN_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d, %d kill/restart cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 0x1e95e4))

	s := newCrashServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(cycles)*10*time.Second)
	defer cancel()

	s.start()
	c := s.connect(ctx)
	for _, ddl := range []string{
		// A long run must not meet the default 18h retention.
		"CREATE TOPIC in (CONSUMER c) WITH (min_active_partitions = 4, retention_period = Interval('P30D'))",
		"CREATE TOPIC out WITH (min_active_partitions = 4, retention_period = Interval('P30D'))",
		"CREATE TOPIC txlog WITH (min_active_partitions = 2, retention_period = Interval('P30D'))",
	} {
		if _, err := c.Exec(ctx, ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	st := newJepsenState(jepsenWorkers)
	const prefill = 10000
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"in"}, []string{"partition", "data"},
		pgx.CopyFromSlice(prefill, func(i int) ([]any, error) {
			return []any{int64(i % 4), []byte(jepsenInputID(int64(i)))}, nil
		})); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < prefill; i++ {
		st.ackedInputs[jepsenInputID(i)] = true
	}
	st.nextInput = prefill
	c.Close(ctx)

	start := time.Now()
	for cycle := 1; cycle <= cycles; cycle++ {
		st.cycle = cycle
		loadMs := 100 + rng.IntN(301)
		jepsenLoadAndKill(ctx, t, s, st, rng.Uint64(), time.Duration(loadMs)*time.Millisecond)
		s.start()
		vc := s.connect(ctx)
		vstart := time.Now()
		sum := jepsenVerify(ctx, t, vc, st)
		vc.Close(ctx)
		t.Logf("cycle %d: %dms load; txns: %d committed, %d rolled back, %d dropped, %d conflicts (40001), %d killed before COMMIT, %d in doubt (%d resolved committed, %d aborted), %d empty, %d big (%d committed); input INSERTs in flight at the kill: %d messages (%d found durable); positions %v; totals: in %d, out %d, txlog %d; verify %v",
			cycle, loadMs, sum.n[jCommitted], sum.n[jRolledBack], sum.n[jDropped], sum.n[jConflict], sum.n[jKilled], sum.n[jInDoubt],
			sum.doubtCommitted, sum.doubtAborted, sum.n[jEmpty], sum.big, sum.bigCommitted, sum.inputsInFlight, sum.inputsDurable, sum.positions,
			sum.in, sum.out, sum.txlog, time.Since(vstart).Round(time.Millisecond))
		if t.Failed() {
			return
		}
	}

	// A clean shutdown after all this exits 0 and changes nothing.
	if err := s.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	s.start()
	vc := s.connect(ctx)
	st.cycle++
	jepsenVerify(ctx, t, vc, st)
	vc.Close(ctx)

	var total [jOutcomes]int
	bigCommitted := 0
	for _, tx := range st.txns {
		total[tx.outcome]++
		if tx.big && tx.outcome == jCommitted {
			bigCommitted++
		}
	}
	t.Logf("%d cycles in %v; transactions: %d committed (%d of them in doubt at the kill), %d rolled back, %d dropped, %d conflicts, %d killed before COMMIT, %d aborted in doubt, %d empty; %d big transactions committed; %d inputs consumed exactly once",
		cycles, time.Since(start).Round(time.Millisecond), total[jCommitted], st.doubtCommitted, total[jRolledBack], total[jDropped],
		total[jConflict], total[jKilled], st.doubtAborted, total[jEmpty], bigCommitted, st.consumed)
	if total[jCommitted] == 0 {
		t.Fatal("no transaction committed: the test proved nothing")
	}
}

const (
	jepsenWorkers  = 4
	jepsenLimit    = 20
	jepsenBigOneIn = 150     // about one transaction in this many is big
	jepsenBigBytes = 9 << 20 // a big transaction's output bytes (spills past 8 MiB)
)

func jepsenInputID(n int64) string { return fmt.Sprintf("i%d", n) }

// jepsenOutData is the output for input id: "out:<id>", or padded to at
// least pad bytes as "out:<id>|<length>|xxx...".
func jepsenOutData(id string, pad int) []byte {
	if pad == 0 {
		return []byte("out:" + id)
	}
	head := "out:" + id + "|"
	n := max(pad, len(head)+20)
	head += strconv.Itoa(n) + "|"
	return append([]byte(head), strings.Repeat("x", n-len(head))...)
}

// jepsenOutInput parses an output read as its first jepsenOutPrefix bytes
// plus its full length, returning the input id and whether it is well formed.
func jepsenOutInput(prefix string, length int64) (string, bool) {
	rest, ok := strings.CutPrefix(prefix, "out:")
	if !ok {
		return "", false
	}
	id, tail, padded := strings.Cut(rest, "|")
	if !padded {
		return id, int64(len(prefix)) == length
	}
	ls, _, ok := strings.Cut(tail, "|")
	n, err := strconv.ParseInt(ls, 10, 64)
	return id, ok && err == nil && n == length
}

// jepsenOutPrefix is how much of an output's body the checker reads back
// (a big transaction's padding is checked by its length only).
const jepsenOutPrefix = 48

// jOutcome is what the client knows about how a transaction ended.
type jOutcome int

const (
	jPending     jOutcome = iota // still running (never left so after a cycle)
	jCommitted                   // COMMIT answered COMMIT (or in doubt, found committed)
	jRolledBack                  // ROLLBACK answered ROLLBACK
	jDropped                     // the client closed the TCP connection before COMMIT
	jConflict                    // COMMIT failed with 40001
	jKilled                      // the server died before COMMIT was sent
	jInDoubt                     // COMMIT sent, no answer: the server died (until verified)
	jAborted                     // in doubt, found not committed
	jEmpty                       // read nothing, rolled back, wrote nothing
	jUnavailable                 // COMMIT failed with 57P03: the cluster stored nothing of it
	jOutcomes
)

var jOutcomeNames = [...]string{"pending", "committed", "rolled back", "dropped", "conflict", "killed before COMMIT", "in doubt", "aborted (was in doubt)", "empty", "unavailable (57P03)"}

func (o jOutcome) String() string { return jOutcomeNames[o] }

// jRead is one row a transaction's consumer read returned.
type jRead struct {
	part, off int64
	id        string
}

type jTxn struct {
	id      string
	cycle   int
	reads   []jRead
	big     bool // outputs padded past the spill threshold
	outcome jOutcome
}

// jWorker is one worker's state across cycles: its dedup producer's seqnos
// are never reused.
type jWorker struct {
	k              int
	n              int   // transactions started
	outSeq, logSeq int64 // last seqno used on out / txlog
}

type jepsenState struct {
	mu            sync.Mutex
	cycle         int
	workers       []*jWorker
	txns          map[string]*jTxn
	ackedInputs   map[string]bool
	pendingInputs map[string]bool // in flight at the kill; resolved by the next verify
	nextInput     int64
	prevPos       map[int64]int64
	problems      []string // violations seen by the clients during the load
	// stop, once set, ends the producer after its current INSERT (the
	// cluster crash test stops its load so, with the gateways alive).
	stop atomic.Bool
	// committed receives (without blocking its sender) when a COMMIT is
	// answered COMMIT: the cluster crash test waits for one before each
	// fault.
	committed chan struct{}

	doubtCommitted, doubtAborted int
	consumed                     int
	// doubtErrs counts the errors COMMITs in doubt got, by message, so a
	// phase's log says why its commits failed.
	doubtErrs map[string]int
}

func newJepsenState(workers int) *jepsenState {
	st := &jepsenState{txns: map[string]*jTxn{}, ackedInputs: map[string]bool{}, pendingInputs: map[string]bool{}, prevPos: map[int64]int64{},
		committed: make(chan struct{}, 1)}
	for k := 0; k < workers; k++ {
		st.workers = append(st.workers, &jWorker{k: k})
	}
	return st
}

func (st *jepsenState) problem(format string, args ...any) {
	st.mu.Lock()
	st.problems = append(st.problems, fmt.Sprintf(format, args...))
	st.mu.Unlock()
}

// jepsenLoadAndKill runs the workers and the input producer for load, then
// SIGKILLs the server and waits for every client to notice.
func jepsenLoadAndKill(ctx context.Context, t *testing.T, s *crashServer, st *jepsenState, seed uint64, load time.Duration) {
	t.Helper()
	var killed atomic.Bool
	var wg sync.WaitGroup
	dsn := s.dsn()
	for _, w := range st.workers {
		c := s.connect(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			jepsenWorker(ctx, dsn, c, w, st, &killed, rand.New(rand.NewPCG(seed, uint64(w.k))))
		}()
	}
	pc := s.connect(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		jepsenProducer(ctx, pc, st, &killed, rand.New(rand.NewPCG(seed, 99)))
	}()
	time.Sleep(load)
	killed.Store(true)
	s.kill()
	wg.Wait()
	for _, p := range st.problems {
		t.Errorf("client: %s", p)
	}
	st.problems = nil
}

// faultErr reports whether err is what a fault may cause once killed is
// set: a broken connection, or a cluster that did not store the commit
// (57P03) or did not say whether it did (08007).
func faultErr(err error, killed *atomic.Bool) bool {
	code := pgCode(err)
	return killed.Load() && (code == "" || code == "57P03" || code == "08007")
}

// jepsenProducer appends 1-8 fresh inputs per autocommit INSERT until the
// server dies (or st.stop is set).
func jepsenProducer(ctx context.Context, c *pgx.Conn, st *jepsenState, killed *atomic.Bool, rng *rand.Rand) {
	defer c.Close(context.Background())
	for !st.stop.Load() {
		n := 1 + rng.IntN(8)
		var sb strings.Builder
		sb.WriteString("INSERT INTO \"in\" (data) VALUES ")
		ids := make([]string, n)
		args := make([]any, n)
		for i := range ids {
			ids[i] = jepsenInputID(st.nextInput)
			st.nextInput++
			args[i] = []byte(ids[i])
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "($%d)", i+1)
		}
		tag, err := c.Exec(ctx, sb.String(), args...)
		st.mu.Lock()
		for _, id := range ids {
			if err == nil {
				st.ackedInputs[id] = true
			} else {
				st.pendingInputs[id] = true
			}
		}
		st.mu.Unlock()
		if err != nil {
			if !faultErr(err, killed) {
				st.problem("producer: INSERT of %v: unexpected error (killed=%v): %v", ids, killed.Load(), err)
			}
			return
		}
		if want := fmt.Sprintf("INSERT 0 %d", n); tag.String() != want {
			st.problem("producer: INSERT of %v: tag %q, want %q", ids, tag, want)
		}
	}
}

// jepsenWorker runs transactions until the server dies.
func jepsenWorker(ctx context.Context, dsn string, c *pgx.Conn, w *jWorker, st *jepsenState, killed *atomic.Bool, rng *rand.Rand) {
	defer func() {
		if c != nil {
			c.Close(context.Background())
		}
	}()
	for {
		var alive bool
		c, alive = jepsenTxn(ctx, dsn, c, w, st, killed, rng)
		if !alive {
			return
		}
	}
}

// jepsenTxn runs one transaction; it returns the connection to go on with
// and false once the server is gone.
func jepsenTxn(ctx context.Context, dsn string, c *pgx.Conn, w *jWorker, st *jepsenState, killed *atomic.Bool, rng *rand.Rand) (*pgx.Conn, bool) {
	w.n++
	tx := &jTxn{id: fmt.Sprintf("t%d.%d", w.k, w.n), cycle: st.cycle}
	st.mu.Lock()
	st.txns[tx.id] = tx
	st.mu.Unlock()
	setOutcome := func(o jOutcome) {
		st.mu.Lock()
		tx.outcome = o
		st.mu.Unlock()
	}
	// failed handles an error before COMMIT was sent: with the server
	// killed the transaction is certainly aborted.
	failed := func(stage string, err error) (*pgx.Conn, bool) {
		setOutcome(jKilled)
		if !faultErr(err, killed) {
			st.problem("worker %d txn %s: %s: unexpected error (killed=%v): %v", w.k, tx.id, stage, killed.Load(), err)
		}
		return c, false
	}

	if tag, err := c.Exec(ctx, "BEGIN"); err != nil {
		return failed("BEGIN", err)
	} else if tag.String() != "BEGIN" {
		st.problem("worker %d txn %s: BEGIN answered %q", w.k, tx.id, tag)
	}
	limits := []int{jepsenLimit}
	if rng.IntN(5) == 0 {
		limits = []int{jepsenLimit / 2, jepsenLimit / 2} // a second read continues where the first stopped
	}
	for _, limit := range limits {
		rows, err := c.Query(ctx, fmt.Sprintf("SELECT partition, offset, data FROM \"in\" WITH (CONSUMER = c, WAIT = '20ms') LIMIT %d", limit))
		if err != nil {
			return failed("consumer read", err)
		}
		n := 0
		for rows.Next() {
			var r jRead
			var data []byte
			if err := rows.Scan(&r.part, &r.off, &data); err != nil {
				rows.Close()
				return failed("scan", err)
			}
			r.id = string(data)
			tx.reads = append(tx.reads, r)
			n++
		}
		if err := rows.Err(); err != nil {
			return failed("consumer read", err)
		}
		if n > limit {
			st.problem("worker %d txn %s: LIMIT %d read returned %d rows", w.k, tx.id, limit, n)
		}
	}
	// The reads of one transaction are contiguous per partition.
	last := map[int64]int64{}
	for _, r := range tx.reads {
		if prev, ok := last[r.part]; ok && r.off != prev+1 {
			st.problem("worker %d txn %s: read partition %d offset %d right after offset %d", w.k, tx.id, r.part, r.off, prev)
		}
		last[r.part] = r.off
	}
	if len(tx.reads) == 0 {
		tag, err := c.Exec(ctx, "ROLLBACK")
		if err != nil {
			return failed("ROLLBACK", err)
		}
		if tag.String() != "ROLLBACK" {
			st.problem("worker %d txn %s: ROLLBACK answered %q", w.k, tx.id, tag)
		}
		setOutcome(jEmpty)
		return c, true
	}

	// Decide the ending now; a dropped connection goes at a random stage.
	end := rng.IntN(100)
	dropAt := -1
	if end >= 10 && end < 15 {
		dropAt = rng.IntN(3)
	}
	drop := func() (*pgx.Conn, bool) {
		_ = c.PgConn().Conn().Close() // abrupt: no Terminate, no ROLLBACK
		c.Close(context.Background())
		setOutcome(jDropped)
		nc, err := pgx.Connect(ctx, dsn)
		if err != nil {
			if !killed.Load() {
				st.problem("worker %d: reconnect after dropping txn %s: %v", w.k, tx.id, err)
			}
			return nil, false
		}
		return nc, true
	}
	if dropAt == 0 {
		return drop()
	}

	producer := fmt.Sprintf("w%d", w.k)
	tx.big = rng.IntN(jepsenBigOneIn) == 0
	pad := 0
	if tx.big {
		pad = jepsenBigBytes / len(tx.reads)
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO out (producer_id, seqno, data, attrs) VALUES ")
	args := make([]any, 0, 4*len(tx.reads))
	for i, r := range tx.reads {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
		w.outSeq++
		args = append(args, producer, w.outSeq, jepsenOutData(r.id, pad), map[string]string{"txn": tx.id})
	}
	tag, err := c.Exec(ctx, sb.String(), args...)
	if err != nil {
		return failed("INSERT INTO out", err)
	}
	if want := fmt.Sprintf("INSERT 0 %d", len(tx.reads)); tag.String() != want {
		st.problem("worker %d txn %s: INSERT INTO out answered %q, want %q", w.k, tx.id, tag, want)
	}
	if dropAt == 1 {
		return drop()
	}
	w.logSeq++
	count := strconv.Itoa(len(tx.reads))
	tag, err = c.Exec(ctx, "INSERT INTO txlog (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)",
		producer, w.logSeq, []byte("txn:"+tx.id+":"+count), map[string]string{"txn": tx.id, "count": count})
	if err != nil {
		return failed("INSERT INTO txlog", err)
	}
	if tag.String() != "INSERT 0 1" {
		st.problem("worker %d txn %s: INSERT INTO txlog answered %q", w.k, tx.id, tag)
	}
	if dropAt == 2 {
		return drop()
	}

	if end < 10 {
		tag, err := c.Exec(ctx, "ROLLBACK")
		if err != nil {
			return failed("ROLLBACK", err)
		}
		if tag.String() != "ROLLBACK" {
			st.problem("worker %d txn %s: ROLLBACK answered %q", w.k, tx.id, tag)
		}
		setOutcome(jRolledBack)
		return c, true
	}

	tag, err = c.Exec(ctx, "COMMIT")
	switch {
	case err == nil:
		if tag.String() != "COMMIT" {
			st.problem("worker %d txn %s: COMMIT answered %q", w.k, tx.id, tag)
			setOutcome(jAborted)
			return c, true
		}
		setOutcome(jCommitted)
		select {
		case st.committed <- struct{}{}:
		default:
		}
		return c, true
	case pgCode(err) == "40001":
		setOutcome(jConflict)
		if s := c.PgConn().TxStatus(); s != 'I' {
			st.problem("worker %d txn %s: after a failed COMMIT the session is in state %q, want idle", w.k, tx.id, s)
		}
		return c, true // retry: the next transaction reads again from the committed position
	case pgCode(err) != "" && !faultErr(err, killed):
		setOutcome(jAborted)
		st.problem("worker %d txn %s: COMMIT: unexpected error: %v", w.k, tx.id, err)
		return c, true
	case pgCode(err) == "57P03":
		// The cluster promises that it stored nothing of it: verified so.
		setOutcome(jUnavailable)
		return c, true
	default: // the connection broke, or (on a cluster) 08007: the outcome is unknown
		setOutcome(jInDoubt)
		st.mu.Lock()
		if st.doubtErrs == nil {
			st.doubtErrs = map[string]int{}
		}
		st.doubtErrs[err.Error()]++
		st.mu.Unlock()
		if !killed.Load() {
			st.problem("worker %d txn %s: COMMIT: connection error with the server alive: %v", w.k, tx.id, err)
		}
		return c, false
	}
}

// jMsg is one stored message as a stateless SELECT returns it.
type jMsg struct {
	part, off int64
	producer  *string
	seqno     *int64
	data      string // the first jepsenOutPrefix bytes
	length    int64  // the whole body's
	attrs     map[string]string
}

// jepsenReadTopic reads a whole topic and checks that every partition holds
// exactly the offsets sys.partitions reports, contiguous, in order, and that
// a dedup producer's seqnos increase with the offset.
func jepsenReadTopic(ctx context.Context, t *testing.T, c *pgx.Conn, topic string) []jMsg {
	t.Helper()
	bounds := map[int64][2]int64{}
	rows, err := c.Query(ctx, "SELECT partition, start_offset, end_offset FROM sys.partitions WHERE topic = $1", topic)
	if err != nil {
		t.Fatalf("sys.partitions of %s: %v", topic, err)
	}
	for rows.Next() {
		var p, s, e int64
		if err := rows.Scan(&p, &s, &e); err != nil {
			t.Fatal(err)
		}
		bounds[p] = [2]int64{s, e}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = c.Query(ctx, fmt.Sprintf("SELECT partition, offset, producer_id, seqno, substr(data, 1, %d), octet_length(data), attrs FROM %s",
		jepsenOutPrefix, pgx.Identifier{topic}.Sanitize()))
	if err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	var msgs []jMsg
	for rows.Next() {
		var m jMsg
		var data []byte
		if err := rows.Scan(&m.part, &m.off, &m.producer, &m.seqno, &data, &m.length, &m.attrs); err != nil {
			t.Fatal(err)
		}
		m.data = string(data)
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	next := map[int64]int64{}
	for p, b := range bounds {
		next[p] = b[0]
	}
	lastSeq := map[string]int64{}
	for _, m := range msgs {
		b, ok := bounds[m.part]
		if !ok {
			t.Errorf("%s: message in partition %d, which sys.partitions does not list", topic, m.part)
			continue
		}
		if m.off != next[m.part] {
			t.Errorf("%s partition %d: offset %d where %d was expected (contiguous from start offset %d)", topic, m.part, m.off, next[m.part], b[0])
		}
		next[m.part] = m.off + 1
		if m.producer != nil && m.seqno != nil {
			k := fmt.Sprintf("%d/%s", m.part, *m.producer)
			if prev, ok := lastSeq[k]; ok && *m.seqno <= prev {
				t.Errorf("%s partition %d producer %s: seqno %d at offset %d after seqno %d", topic, m.part, *m.producer, *m.seqno, m.off, prev)
			}
			lastSeq[k] = *m.seqno
		}
	}
	for p, b := range bounds {
		if next[p] != b[1] {
			t.Errorf("%s partition %d: read up to offset %d, sys.partitions says end_offset %d (start %d)", topic, p, next[p], b[1], b[0])
		}
	}
	return msgs
}

type jSummary struct {
	n                             [jOutcomes]int
	big, bigCommitted             int
	doubtCommitted, doubtAborted  int
	inputsInFlight, inputsDurable int
	positions                     []int64
	in, out, txlog                int
}

// jepsenVerify checks the stored state against what the clients were told;
// it resolves in-doubt transactions and in-flight inputs.
func jepsenVerify(ctx context.Context, t *testing.T, c *pgx.Conn, st *jepsenState) jSummary {
	t.Helper()
	var sum jSummary
	reported := map[string]int{}
	violation := func(kind, format string, args ...any) {
		reported[kind]++
		if reported[kind] <= 10 {
			t.Errorf("%s: %s", kind, fmt.Sprintf(format, args...))
		} else if reported[kind] == 11 {
			t.Errorf("%s: more violations of this kind not shown", kind)
		}
	}

	// Inputs.
	in := jepsenReadTopic(ctx, t, c, "in")
	sum.in = len(in)
	inAt := map[string]jMsg{}
	for _, m := range in {
		if prev, ok := inAt[m.data]; ok {
			violation("duplicate input", "%q at %d/%d and %d/%d", m.data, prev.part, prev.off, m.part, m.off)
		}
		inAt[m.data] = m
		if !st.ackedInputs[m.data] && !st.pendingInputs[m.data] {
			violation("phantom input", "%q at %d/%d was never written or was found absent earlier", m.data, m.part, m.off)
		}
	}
	for id := range st.ackedInputs {
		if _, ok := inAt[id]; !ok {
			violation("lost input", "acknowledged input %q is not in topic in", id)
		}
	}
	for id := range st.pendingInputs {
		if _, ok := inAt[id]; ok {
			st.ackedInputs[id] = true // it became durable: from now on it must stay
			sum.inputsDurable++
		}
		sum.inputsInFlight++
	}
	st.pendingInputs = map[string]bool{}

	// Consumer positions.
	pos := map[int64]int64{}
	rows, err := c.Query(ctx, "SELECT partition, committed_offset FROM sys.consumers WHERE topic = 'in' AND consumer = 'c'")
	if err != nil {
		t.Fatalf("sys.consumers: %v", err)
	}
	for rows.Next() {
		var p, off int64
		if err := rows.Scan(&p, &off); err != nil {
			t.Fatal(err)
		}
		pos[p] = off
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pos) != 4 {
		violation("positions", "sys.consumers lists %d partitions of in for consumer c, want 4: %v", len(pos), pos)
	}
	inEnd := map[int64]int64{}
	for _, m := range in {
		inEnd[m.part] = max(inEnd[m.part], m.off+1)
	}
	for p := int64(0); p < 4; p++ {
		if pos[p] < st.prevPos[p] {
			violation("position moved backwards", "partition %d: committed offset %d, %d before the restart", p, pos[p], st.prevPos[p])
		}
		if pos[p] > inEnd[p] {
			violation("positions", "partition %d: committed offset %d beyond the partition's end %d", p, pos[p], inEnd[p])
		}
		sum.positions = append(sum.positions, pos[p])
	}
	st.prevPos = pos

	// Outputs and the audit log.
	out := jepsenReadTopic(ctx, t, c, "out")
	txlog := jepsenReadTopic(ctx, t, c, "txlog")
	sum.out, sum.txlog = len(out), len(txlog)
	outCount := map[string]int{}  // input id -> outputs
	outsOf := map[string][]jMsg{} // txn id -> its outputs
	for _, m := range out {
		id, ok := jepsenOutInput(m.data, m.length)
		if !ok {
			violation("garbage", "out %d/%d: data %q..., %d bytes", m.part, m.off, m.data, m.length)
			continue
		}
		if _, ok := inAt[id]; !ok {
			violation("output of no input", "out %d/%d: %q, but input %q is not in topic in", m.part, m.off, m.data, id)
		}
		outCount[id]++
		outsOf[m.attrs["txn"]] = append(outsOf[m.attrs["txn"]], m)
	}
	logged := map[string]jMsg{}
	for _, m := range txlog {
		id, n := m.attrs["txn"], m.attrs["count"]
		if m.data != "txn:"+id+":"+n {
			violation("garbage", "txlog %d/%d: data %q, attrs %v", m.part, m.off, m.data, m.attrs)
		}
		if prev, ok := logged[id]; ok {
			violation("duplicate transaction", "txn %s logged at txlog %d/%d and %d/%d", id, prev.part, prev.off, m.part, m.off)
		}
		logged[id] = m
	}

	// Exactly once: an input below its partition's committed position has
	// exactly one output, one at or above it none.
	consumed := 0
	for _, m := range in {
		want := 0
		if m.off < pos[m.part] {
			want = 1
			consumed++
		}
		if got := outCount[m.data]; got != want {
			kind := "duplicate output"
			if got < want {
				kind = "consumed without output"
			} else if want == 0 {
				kind = "output of an unconsumed input"
			}
			violation(kind, "input %q at %d/%d (committed position %d): %d outputs, want %d", m.data, m.part, m.off, pos[m.part], got, want)
		}
	}
	st.consumed = consumed

	// Transactions: resolve the in-doubt ones, then check each against the
	// stored state.
	for id, m := range logged {
		if _, ok := st.txns[id]; !ok {
			violation("phantom transaction", "txlog %d/%d names txn %q that no worker ran", m.part, m.off, id)
		}
	}
	for id, ms := range outsOf {
		if _, ok := logged[id]; !ok {
			if tx, known := st.txns[id]; known && tx.outcome != jCommitted && tx.outcome != jInDoubt {
				violation("aborted read", "txn %s (%s): %d outputs visible (first at out %d/%d)", id, tx.outcome, len(ms), ms[0].part, ms[0].off)
			} else {
				violation("torn transaction", "txn %q: %d outputs (first at out %d/%d) but no txlog record", id, len(ms), ms[0].part, ms[0].off)
			}
		}
	}
	ids := make([]string, 0, len(st.txns))
	for id := range st.txns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		tx := st.txns[id]
		if tx.cycle == st.cycle {
			if tx.big {
				sum.big++
				if _, ok := logged[id]; ok {
					sum.bigCommitted++
				}
			}
			sum.n[tx.outcome]++
			// What the transaction read is what topic in holds there.
			for _, r := range tx.reads {
				m, ok := inAt[r.id]
				if !ok {
					violation("read of a lost message", "txn %s (%s) read %q at %d/%d, which is not in topic in after the restart", id, tx.outcome, r.id, r.part, r.off)
				} else if m.part != r.part || m.off != r.off {
					violation("read wrong position", "txn %s read %q at %d/%d, stored at %d/%d", id, r.id, r.part, r.off, m.part, m.off)
				}
			}
		}
		rec, isLogged := logged[id]
		switch tx.outcome {
		case jPending:
			violation("checker", "txn %s never finished", id)
		case jInDoubt:
			if isLogged {
				tx.outcome = jCommitted
				st.doubtCommitted++
				sum.doubtCommitted++
			} else {
				tx.outcome = jAborted
				st.doubtAborted++
				sum.doubtAborted++
				if n := len(outsOf[id]); n > 0 {
					violation("torn transaction", "in-doubt txn %s: no txlog record but %d outputs", id, n)
				}
			}
		case jCommitted:
			if !isLogged {
				violation("lost transaction", "acknowledged txn %s (%d inputs) has no txlog record", id, len(tx.reads))
			}
		case jEmpty:
			if isLogged {
				violation("phantom transaction", "empty txn %s wrote nothing but is logged at txlog %d/%d", id, rec.part, rec.off)
			}
		default: // rolled back, dropped, conflict, killed before COMMIT, aborted
			if isLogged {
				violation("aborted read", "txn %s (%s) is visible: txlog %d/%d", id, tx.outcome, rec.part, rec.off)
			}
		}
		if !isLogged {
			continue
		}
		// No torn transaction: exactly count outputs, which are exactly
		// the inputs the transaction read, at consecutive offsets of one
		// partition in the order written.
		outs := outsOf[id]
		if n, _ := strconv.Atoi(rec.attrs["count"]); n != len(outs) || n != len(tx.reads) {
			violation("torn transaction", "txn %s: txlog count %q, %d outputs stored, %d inputs read", id, rec.attrs["count"], len(outs), len(tx.reads))
			continue
		}
		for i, m := range outs {
			if got, _ := jepsenOutInput(m.data, m.length); got != tx.reads[i].id {
				violation("torn transaction", "txn %s output %d at out %d/%d is %q, want the output of %q", id, i, m.part, m.off, m.data, tx.reads[i].id)
				break
			}
			if i > 0 && (m.part != outs[0].part || m.off != outs[i-1].off+1) {
				violation("interleaved transaction", "txn %s: output %d at out %d/%d, the one before at %d/%d (a commit's messages get consecutive offsets)", id, i, m.part, m.off, outs[i-1].part, outs[i-1].off)
				break
			}
		}
	}
	return sum
}
