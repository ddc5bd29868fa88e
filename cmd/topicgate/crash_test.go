package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// crashServer is a `topicgate serve` child process on a fixed data dir.
type crashServer struct {
	t       *testing.T
	bin     string
	dataDir string
	// args, when set, replace --data-dir: a gateway on a cluster is given
	// --store and its flags instead.
	args    []string
	env     []string // extra NAME=value for the child's environment
	logPath string
	log     *os.File

	cmd  *osexec.Cmd
	done chan struct{} // closed when cmd has been waited for
	err  error         // cmd.Wait's result, valid after done
	addr string
}

// newCrashServer returns a child-process server on a fresh data directory,
// killed when the test ends; its output is printed if the test failed.
func newCrashServer(t *testing.T) *crashServer {
	t.Helper()
	tmp := t.TempDir()
	s := &crashServer{t: t, bin: crashBinary(t), dataDir: filepath.Join(tmp, "data"), logPath: filepath.Join(tmp, "server.log")}
	var err error
	if s.log, err = os.Create(s.logPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.kill()
		s.log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(s.logPath)
			t.Logf("server output (%s):\n%s", s.logPath, out)
		}
	})
	return s
}

// The server binary is built once per test run and shared by the crash
// tests; TestMain removes it.
var (
	crashBinOnce sync.Once
	crashBinDir  string
	crashBinPath string
	crashBinErr  error
)

func crashBinary(t *testing.T) string {
	t.Helper()
	crashBinOnce.Do(func() {
		if crashBinDir, crashBinErr = os.MkdirTemp("", "topicgate-crash-"); crashBinErr == nil {
			crashBinPath, crashBinErr = crashBuildServer(crashBinDir)
		}
	})
	if crashBinErr != nil {
		t.Fatal(crashBinErr)
	}
	return crashBinPath
}

func TestMain(m *testing.M) {
	if dsn := os.Getenv(clientDSNEnv); dsn != "" {
		os.Exit(runClientProcess(dsn, os.Getenv(clientSQLEnv)))
	}
	code := m.Run()
	stopTestCluster()
	if crashBinDir != "" {
		os.RemoveAll(crashBinDir)
	}
	os.Exit(code)
}

// crashBuildServer compiles this package's binary into dir and returns its path.
func crashBuildServer(dir string) (string, error) {
	goBin, err := osexec.LookPath("go")
	if err != nil {
		root := os.Getenv("GOROOT")
		if root == "" {
			return "", fmt.Errorf("the go command is needed to build the server: %v", err)
		}
		goBin = filepath.Join(root, "bin", "go")
	}
	bin := filepath.Join(dir, "topicgate")
	cmd := osexec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

func crashFreePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func (s *crashServer) dsn() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&connect_timeout=5", s.addr)
}

func (s *crashServer) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// start launches the server and waits until it accepts connections. A port
// lost to another process between crashFreePort and the child's bind is retried
// on a new port.
func (s *crashServer) start() {
	t := s.t
	t.Helper()
	if s.running() {
		t.Fatal("server already running")
	}
	for attempt := 1; ; attempt++ {
		s.addr = crashFreePort(t)
		fmt.Fprintf(s.log, "=== %s start on %s (attempt %d)\n", time.Now().Format(time.RFC3339Nano), s.addr, attempt)
		args := s.args
		if args == nil {
			args = []string{"--data-dir", s.dataDir}
		}
		cmd := osexec.Command(s.bin, append([]string{"serve", "--listen", s.addr}, args...)...)
		cmd.Stdout, cmd.Stderr = s.log, s.log
		cmd.Env = append(append(os.Environ(), "TOPICGATE_AUTH=trust"), s.env...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start server: %v", err)
		}
		s.cmd, s.done, s.err = cmd, make(chan struct{}), nil
		go func(done chan struct{}) {
			s.err = cmd.Wait()
			close(done)
		}(s.done)
		err := s.waitReady(20 * time.Second)
		if err == nil {
			return
		}
		if !s.running() && attempt < 3 {
			t.Logf("server exited during startup (%v), retrying on another port", s.err)
			continue
		}
		s.kill()
		t.Fatalf("server on %s not ready: %v", s.addr, err)
	}
}

// waitReady polls pgx.Connect until it succeeds, the process exits or the
// deadline passes.
func (s *crashServer) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if !s.running() {
			return fmt.Errorf("process exited: %v (last connect error: %v)", s.err, last)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.dsn())
		if err == nil {
			err = c.Ping(ctx)
			c.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-s.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("timeout after %v: %v", timeout, last)
}

// kill sends SIGKILL and waits for the process to be reaped.
// pause sends the server SIGSTOP: it holds its connections and does
// nothing until cont.
func (s *crashServer) pause() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatal(err)
	}
	fmt.Fprintf(s.log, "=== %s SIGSTOP\n", time.Now().Format(time.RFC3339Nano))
}

// cont sends the server SIGCONT.
func (s *crashServer) cont() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.t.Fatal(err)
	}
	fmt.Fprintf(s.log, "=== %s SIGCONT\n", time.Now().Format(time.RFC3339Nano))
}

func (s *crashServer) kill() {
	if !s.running() {
		return
	}
	fmt.Fprintf(s.log, "=== %s SIGKILL\n", time.Now().Format(time.RFC3339Nano))
	_ = s.cmd.Process.Kill()
	<-s.done
}

// stop sends SIGTERM and expects a clean exit within the timeout.
func (s *crashServer) stop(timeout time.Duration) error {
	fmt.Fprintf(s.log, "=== %s SIGTERM\n", time.Now().Format(time.RFC3339Nano))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-s.done:
		return s.err
	case <-time.After(timeout):
		s.kill()
		return fmt.Errorf("no exit %v after SIGTERM", timeout)
	}
}

func (s *crashServer) connect(ctx context.Context) *pgx.Conn {
	s.t.Helper()
	c, err := connectNoting(ctx, s.dsn())
	if err != nil {
		s.t.Fatalf("connect: %v", err)
	}
	return c
}

// crashProducer is one dedup producer's view of what the server promised.
type crashProducer struct {
	id       string
	acked    int64   // highest seqno of an acknowledged INSERT (all below acked too)
	inflight []int64 // seqnos of the INSERT that failed when the server died
	// durableUnacked counts in-flight batches that turned out to be stored.
	durableUnacked int
	partition      int64 // the partition the producer is bound to, -1 before its first write
}

func crashPayload(id string, seq int64) []byte {
	// Lengths vary so that batches differ in size.
	return []byte(fmt.Sprintf("%s/%d/%s", id, seq, strings.Repeat("x", int(seq%37))))
}

// crashInsertBatch publishes seqnos as one INSERT ... VALUES (...), (...) statement.
func crashInsertBatch(ctx context.Context, c *pgx.Conn, id string, seqs []int64) (pgconn.CommandTag, error) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO t (producer_id, seqno, data) VALUES ")
	args := make([]any, 0, 3*len(seqs))
	for i, s := range seqs {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
		args = append(args, id, s, crashPayload(id, s))
	}
	return c.Exec(ctx, sb.String(), args...)
}

// TestCrashRecovery kills a real `topicgate serve` process with SIGKILL in
// the middle of a concurrent dedup load, restarts it on the same data dir
// and checks that (1) every acknowledged message survived exactly once,
// (2) nothing was duplicated, (3) each producer's messages sit in one
// partition in seqno order, (4) offsets are contiguous from 0, and (5)
// re-sending the batch that was in flight at kill time is deduplicated when
// it had become durable and written when it had not.
func TestCrashRecovery(t *testing.T) {
	cycles := 3
	if testing.Short() {
		cycles = 1
	}
	const writers = 8
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kill/restart cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 0x70c1c6a7e))

	s := newCrashServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	s.start()
	c := s.connect(ctx)
	if _, err := c.Exec(ctx, "CREATE TOPIC t WITH (min_active_partitions = 4)"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	producers := make([]*crashProducer, writers)
	for k := range producers {
		producers[k] = &crashProducer{id: fmt.Sprintf("w%d", k), partition: -1}
	}

	for cycle := 1; cycle <= cycles; cycle++ {
		loadMs := 300 + rng.IntN(501)
		stmts := crashLoadAndKill(t, s, producers, rng.Uint64(), time.Duration(loadMs)*time.Millisecond)
		var acked int64
		inflight := 0
		for _, p := range producers {
			acked += p.acked
			inflight += len(p.inflight)
		}
		t.Logf("cycle %d: %d ms of load, %d acknowledged INSERTs, %d acknowledged messages in total, %d messages in flight at SIGKILL",
			cycle, loadMs, stmts, acked, inflight)
		if t.Failed() {
			return
		}

		s.start()
		c := s.connect(ctx)
		crashVerify(t, c, producers, false)
		crashResendInflight(t, c, producers)
		crashVerify(t, c, producers, true)
		c.Close(ctx)
		if t.Failed() {
			return
		}
		// The next cycle's writers resume on this process from acked+1.
	}

	durable := 0
	for _, p := range producers {
		durable += p.durableUnacked
	}
	t.Logf("in-flight batches found durable after SIGKILL (and deduplicated on resend): %d", durable)

	// A clean shutdown after all this exits 0, and the data is still there.
	if err := s.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	s.start()
	c = s.connect(ctx)
	defer c.Close(ctx)
	crashVerify(t, c, producers, true)
}

// crashLoadAndKill runs one dedup producer per writer until the server is
// SIGKILLed after load; it returns the number of acknowledged statements.
// Each producer's acked and inflight are updated.
func crashLoadAndKill(t *testing.T, s *crashServer, producers []*crashProducer, seed uint64, load time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conns := make([]*pgx.Conn, len(producers))
	for k := range conns {
		conns[k] = s.connect(ctx)
	}
	var (
		killed   atomic.Bool
		stmts    atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
	)
	for k, p := range producers {
		wg.Add(1)
		go func(c *pgx.Conn, p *crashProducer, rng *rand.Rand) {
			defer wg.Done()
			defer c.Close(context.Background())
			for {
				n := 1
				if rng.IntN(2) == 0 {
					n = 5
				}
				seqs := make([]int64, n)
				for i := range seqs {
					seqs[i] = p.acked + 1 + int64(i)
				}
				tag, err := crashInsertBatch(ctx, c, p.id, seqs)
				if err == nil {
					if tag.String() != fmt.Sprintf("INSERT 0 %d", n) {
						mu.Lock()
						problems = append(problems, fmt.Sprintf("%s seqnos %v: tag %q, want INSERT 0 %d", p.id, seqs, tag, n))
						mu.Unlock()
						return
					}
					p.acked = seqs[n-1]
					stmts.Add(1)
					continue
				}
				p.inflight = seqs
				var pe *pgconn.PgError
				if !killed.Load() || errors.As(err, &pe) {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%s seqnos %v: unexpected error (killed=%v): %v", p.id, seqs, killed.Load(), err))
					mu.Unlock()
				}
				return
			}
		}(conns[k], p, rand.New(rand.NewPCG(seed, uint64(k))))
	}
	time.Sleep(load) // the load phase itself: the writers run meanwhile
	killed.Store(true)
	s.kill()
	wg.Wait()
	for _, pr := range problems {
		t.Error(pr)
	}
	return stmts.Load()
}

// crashVerify reads the whole topic and checks it against what the
// producers were promised. Before the resend (settled=false) a producer's
// in-flight batch may be entirely present or entirely absent (an INSERT is
// atomic); after it (settled=true) there is nothing in flight.
func crashVerify(t *testing.T, c *pgx.Conn, producers []*crashProducer, settled bool) {
	t.Helper()
	ctx := context.Background()
	type msg struct {
		partition, offset int64
		producer          string
		seqno             int64
		data              []byte
	}
	rows, err := c.Query(ctx, "SELECT partition, offset, producer_id, seqno, data FROM t")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []msg
	for rows.Next() {
		var m msg
		if err := rows.Scan(&m.partition, &m.offset, &m.producer, &m.seqno, &m.data); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	// Offsets: contiguous from 0 in every partition, and returned in order.
	sorted := sort.SliceIsSorted(msgs, func(i, j int) bool {
		if msgs[i].partition != msgs[j].partition {
			return msgs[i].partition < msgs[j].partition
		}
		return msgs[i].offset < msgs[j].offset
	})
	if !sorted {
		t.Errorf("SELECT did not return partition by partition in offset order")
		sort.Slice(msgs, func(i, j int) bool {
			if msgs[i].partition != msgs[j].partition {
				return msgs[i].partition < msgs[j].partition
			}
			return msgs[i].offset < msgs[j].offset
		})
	}
	next := map[int64]int64{}
	for _, m := range msgs {
		if m.offset != next[m.partition] {
			t.Errorf("partition %d: offset %d where %d was expected (offsets must be contiguous from 0)", m.partition, m.offset, next[m.partition])
		}
		next[m.partition] = m.offset + 1
	}

	// Per producer: one partition, strictly increasing seqnos, no duplicates.
	byProducer := map[string][]msg{}
	seen := map[string]bool{}
	for _, m := range msgs {
		key := fmt.Sprintf("%s/%d", m.producer, m.seqno)
		if seen[key] {
			t.Errorf("duplicate message: producer %s seqno %d (partition %d offset %d)", m.producer, m.seqno, m.partition, m.offset)
		}
		seen[key] = true
		if want := crashPayload(m.producer, m.seqno); !bytes.Equal(m.data, want) {
			t.Errorf("producer %s seqno %d: data %q, want %q", m.producer, m.seqno, m.data, want)
		}
		byProducer[m.producer] = append(byProducer[m.producer], m)
	}
	if len(byProducer) > len(producers) {
		t.Errorf("messages from %d producers, only %d wrote", len(byProducer), len(producers))
	}
	maxSeq := map[string]int64{}
	partOf := map[string]int64{}
	for _, p := range producers {
		ms := byProducer[p.id]
		for i, m := range ms {
			if m.partition != ms[0].partition {
				t.Errorf("producer %s: seqno %d in partition %d, earlier ones in %d", p.id, m.seqno, m.partition, ms[0].partition)
			}
			if i > 0 && m.seqno <= ms[i-1].seqno {
				t.Errorf("producer %s: seqno %d after %d (must increase with the offset)", p.id, m.seqno, ms[i-1].seqno)
			}
		}
		if len(ms) > 0 {
			if p.partition >= 0 && ms[0].partition != p.partition {
				t.Errorf("producer %s moved from partition %d to %d across a restart", p.id, p.partition, ms[0].partition)
			}
			p.partition = ms[0].partition
			partOf[p.id] = p.partition
			maxSeq[p.id] = ms[len(ms)-1].seqno
		}
		// Exactly 1..acked, or 1..acked+len(inflight) when the in-flight
		// batch had become durable before the kill.
		got := int64(len(ms))
		lost := false
		for i, m := range ms {
			if m.seqno != int64(i)+1 {
				lost = true
			}
		}
		switch {
		case lost || got < p.acked:
			var have []int64
			for _, m := range ms {
				have = append(have, m.seqno)
			}
			t.Errorf("producer %s: acknowledged up to seqno %d, stored seqnos %s", p.id, p.acked, crashSeqRanges(have))
		case got == p.acked:
		case !settled && got == p.acked+int64(len(p.inflight)):
		default:
			t.Errorf("producer %s: %d messages stored, acknowledged %d, in flight %v (settled=%v)", p.id, got, p.acked, p.inflight, settled)
		}
	}

	// sys.producers agrees with the messages.
	rows, err = c.Query(ctx, "SELECT producer_id, partition, max_seqno FROM sys.producers WHERE topic = 't'")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for rows.Next() {
		var id string
		var part, maxs int64
		if err := rows.Scan(&id, &part, &maxs); err != nil {
			t.Fatal(err)
		}
		listed[id] = true
		if part != partOf[id] || maxs != maxSeq[id] {
			t.Errorf("sys.producers: %s partition %d max_seqno %d; messages say partition %d max seqno %d", id, part, maxs, partOf[id], maxSeq[id])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id := range maxSeq {
		if !listed[id] {
			t.Errorf("sys.producers lacks producer %s", id)
		}
	}
}

// crashResendInflight re-sends every producer's in-flight batch with the same
// seqnos and data: a batch that became durable before the kill must be
// skipped entirely (INSERT 0 0), one that did not is written now.
func crashResendInflight(t *testing.T, c *pgx.Conn, producers []*crashProducer) {
	t.Helper()
	ctx := context.Background()
	for _, p := range producers {
		if len(p.inflight) == 0 {
			continue
		}
		var stored int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM t WHERE producer_id = $1 AND seqno > $2", p.id, p.acked).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("INSERT 0 %d", len(p.inflight))
		if stored > 0 {
			want = "INSERT 0 0"
			p.durableUnacked++
		}
		tag, err := crashInsertBatch(ctx, c, p.id, p.inflight)
		if err != nil {
			t.Fatalf("producer %s: resend of %v: %v", p.id, p.inflight, err)
		}
		if tag.String() != want {
			t.Errorf("producer %s: resend of %v (%d already stored): tag %q, want %q", p.id, p.inflight, stored, tag, want)
		}
		// Once more: now it is certainly stored and must be skipped.
		tag, err = crashInsertBatch(ctx, c, p.id, p.inflight)
		if err != nil || tag.String() != "INSERT 0 0" {
			t.Errorf("producer %s: second resend of %v: tag %q, err %v; want INSERT 0 0", p.id, p.inflight, tag, err)
		}
		p.acked = p.inflight[len(p.inflight)-1]
		p.inflight = nil
	}
}

// crashSeqRanges prints a sorted seqno list as ranges: 1-40,42,44-50.
func crashSeqRanges(seqs []int64) string {
	var parts []string
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(seqs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", seqs[i], seqs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
