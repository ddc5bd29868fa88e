package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"topicgate/executor"
)

// These tests kill real client processes (psql, and a pgx client in a
// child process) while one of their statements runs, and check that the
// server notices at once: the statement is cancelled, the session ends
// and releases its partitions and locks, and a read whose rows did not
// reach the client commits nothing.

// clientDSNEnv and clientSQLEnv make the test binary a pgx client that
// runs one statement (see TestMain).
const (
	clientDSNEnv = "TOPICGATE_TEST_CLIENT_DSN"
	clientSQLEnv = "TOPICGATE_TEST_CLIENT_SQL"
)

// runClientProcess is the child: connect, run sql to completion, exit.
func runClientProcess(dsn, sql string) int {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rows, err := c.Query(ctx, sql)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// sessionTracer follows the server's sessions through executor.Options.Trace.
type sessionTracer struct {
	mu      sync.Mutex
	ignore  map[uint32]bool          // the test's own connections
	started chan uint32              // statement starts of other sessions
	ended   map[uint32]chan struct{} // closed when the session ended
}

func startTracedServer(t *testing.T) (*app, *sessionTracer) {
	t.Helper()
	tr := &sessionTracer{ignore: map[uint32]bool{}, started: make(chan uint32, 64), ended: map[uint32]chan struct{}{}}
	a, err := start(config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError, Trace: tr.event})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a, tr
}

func (tr *sessionTracer) event(ev executor.Event) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch ev.Kind {
	case executor.EventStatementStart:
		if !tr.ignore[ev.PID] {
			select {
			case tr.started <- ev.PID:
			default:
			}
		}
	case executor.EventSessionEnd:
		close(tr.endedLocked(ev.PID))
	}
}

func (tr *sessionTracer) endedLocked(pid uint32) chan struct{} {
	ch := tr.ended[pid]
	if ch == nil {
		ch = make(chan struct{})
		tr.ended[pid] = ch
	}
	return ch
}

// own connects a test connection whose statements the tracer ignores.
func (tr *sessionTracer) own(t *testing.T, a *app) *pgx.Conn {
	c := connect(t, a)
	tr.mu.Lock()
	tr.ignore[c.PgConn().PID()] = true
	tr.mu.Unlock()
	return c
}

// running waits for a statement of another session to start.
func (tr *sessionTracer) running(t *testing.T) uint32 {
	t.Helper()
	select {
	case pid := <-tr.started:
		return pid
	case <-time.After(20 * time.Second):
		t.Fatal("the client's statement did not start")
		return 0
	}
}

// requireEndsWithin fails unless session pid ends within d of now.
func (tr *sessionTracer) requireEndsWithin(t *testing.T, pid uint32, d time.Duration) time.Duration {
	t.Helper()
	tr.mu.Lock()
	ch := tr.endedLocked(pid)
	tr.mu.Unlock()
	t0 := time.Now()
	select {
	case <-ch:
		return time.Since(t0)
	case <-time.After(d):
		t.Fatalf("session %d still open %v after its client died", pid, d)
		return 0
	}
}

func psqlCmd(t *testing.T, a *app, sql string) *osexec.Cmd {
	host, port, err := net.SplitHostPort(a.Addr())
	require.NoError(t, err)
	cmd := osexec.Command(psqlPath, "-X", "-h", host, "-p", port, "-U", "postgres", "-d", "postgres", "-c", sql)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PGCONNECT_TIMEOUT=5"}
	return cmd
}

func clientCmd(t *testing.T, a *app, sql string) *osexec.Cmd {
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), clientDSNEnv+"="+a.dsn(), clientSQLEnv+"="+sql)
	return cmd
}

// killDuring starts cmd, waits until its statement runs, sends sig and
// requires the server session to end within a second. It returns how long
// that took.
func killDuring(t *testing.T, tr *sessionTracer, cmd *osexec.Cmd, sig syscall.Signal) time.Duration {
	t.Helper()
	require.NoError(t, cmd.Start())
	pid := tr.running(t)
	require.NoError(t, cmd.Process.Signal(sig))
	took := tr.requireEndsWithin(t, pid, time.Second)
	_ = cmd.Wait()
	return took
}

func committed(t *testing.T, c *pgx.Conn, topic, consumer string) map[int32]int64 {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT partition, committed_offset FROM sys.consumers WHERE topic = $1 AND consumer = $2", topic, consumer)
	require.NoError(t, err)
	out := map[int32]int64{}
	for rows.Next() {
		var p int32
		var off int64
		require.NoError(t, rows.Scan(&p, &off))
		out[p] = off
	}
	require.NoError(t, rows.Err())
	return out
}

// TestHangupDuringWaitRead: a WAIT read whose client was killed ends with
// it; it neither keeps the partition nor reads what is published next.
func TestHangupDuringWaitRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client func(*testing.T, *app, string) *osexec.Cmd
		sig    syscall.Signal
	}{
		{"psql SIGKILL", psqlCmd, syscall.SIGKILL},
		{"psql SIGTERM", psqlCmd, syscall.SIGTERM},
		{"pgx SIGKILL", clientCmd, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, tr := startTracedServer(t)
			c := tr.own(t, a)
			exec(t, c, "CREATE TOPIC g (CONSUMER c)")
			took := killDuring(t, tr, tc.client(t, a, "SELECT offset FROM g WITH (CONSUMER = c, WAIT = '60s') LIMIT 10"), tc.sig)
			t.Logf("session ended %v after the signal", took)

			exec(t, c, "INSERT INTO g (data) VALUES ('after')")
			ps, err := readBatch(context.Background(), c, "SELECT partition, offset FROM g WITH (CONSUMER = c, WAIT = '5s') LIMIT 10")
			require.NoError(t, err)
			require.Equal(t, []pos{{0, 0}}, ps, "the live reader gets the message")
			require.Equal(t, map[int32]int64{0: 1}, committed(t, c, "g", "c"))

			var n int
			require.NoError(t, c.QueryRow(context.Background(), "SELECT count(*) FROM sys.sessions").Scan(&n))
			require.Equal(t, 1, n, "only the live session is left")
		})
	}
}

// TestHangupLimitZero: LIMIT 0 returns at once even with a long WAIT.
func TestHangupLimitZero(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC z (CONSUMER c)")
	t0 := time.Now()
	ps, err := readBatch(context.Background(), c, "SELECT partition, offset FROM z WITH (CONSUMER = c, WAIT = '10h') LIMIT 0")
	require.NoError(t, err)
	require.Empty(t, ps)
	require.Less(t, time.Since(t0), 5*time.Second)
}

// TestHangupDuringSharedWait: a shared-consumer WAIT read whose client was
// killed takes nothing; the next message goes to a live worker on its first
// delivery.
func TestHangupDuringSharedWait(t *testing.T) {
	a, tr := startTracedServer(t)
	c := tr.own(t, a)
	exec(t, c, "CREATE TOPIC q (CONSUMER w WITH (type = 'shared'))")
	killDuring(t, tr, clientCmd(t, a, "SELECT offset FROM q WITH (CONSUMER = w, WAIT = '60s') LIMIT 1"), syscall.SIGKILL)
	exec(t, c, "INSERT INTO q (data) VALUES ('job')")
	var off int64
	var deliveries int32
	require.NoError(t, c.QueryRow(context.Background(),
		"SELECT offset, delivery_count FROM q WITH (CONSUMER = w, WAIT = '5s') LIMIT 1").Scan(&off, &deliveries))
	require.Equal(t, int64(0), off)
	require.Equal(t, int32(1), deliveries, "the dead client spent no delivery")
}

// TestHangupDuringCopy: a COPY FROM STDIN whose client was killed mid-stream
// writes nothing.
func TestHangupDuringCopy(t *testing.T) {
	a, tr := startTracedServer(t)
	c := tr.own(t, a)
	exec(t, c, "CREATE TOPIC cp")
	cmd := psqlCmd(t, a, "COPY cp (data) FROM STDIN")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := tr.running(t)
	w := bufio.NewWriter(stdin)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(w, "row %d\n", i)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	tr.requireEndsWithin(t, pid, time.Second)
	_ = cmd.Wait()
	var n int
	require.NoError(t, c.QueryRow(context.Background(), "SELECT count(*) FROM cp").Scan(&n))
	require.Equal(t, 0, n)
}

// TestHangupDuringScan: a long statement over topics is cancelled when its
// client dies.
func TestHangupDuringScan(t *testing.T) {
	a, tr := startTracedServer(t)
	c := tr.own(t, a)
	fillTopic(t, c, "l", 1, 3000)
	fillTopic(t, c, "r", 1, 3000)
	took := killDuring(t, tr, clientCmd(t, a, "SELECT count(*) FROM l, r WHERE l.data || r.data = 'never'"), syscall.SIGKILL)
	t.Logf("session ended %v after the signal", took)
}

// TestHangupBeforeRows: a client that half-closes its connection right after
// sending a consumer read may or may not get the rows; the position moves
// only if it got the whole result (CommandComplete), and a shared message
// it never got is not counted as delivered.
func TestHangupBeforeRows(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC h (CONSUMER c, CONSUMER w WITH (type = 'shared')) WITH (min_active_partitions = 2)")
	exec(t, c, "INSERT INTO h (partition, data) VALUES (0, 'a'), (1, 'b')")
	for _, q := range []string{
		"SELECT offset, data FROM h WITH (CONSUMER = c) LIMIT 10",
		"SELECT offset, data FROM h WITH (CONSUMER = w) LIMIT 10",
	} {
		if strings.Contains(q, "CONSUMER = c") {
			// In a multi-statement query the read commits with the
			// implicit block at the end, after a flush, likewise.
			complete := halfCloseQuery(t, a, "SELECT offset, data FROM h WITH (CONSUMER = c) LIMIT 10; SELECT 1")
			t.Logf("multi-statement read: client saw the end: %v", complete)
			if complete {
				require.Equal(t, map[int32]int64{0: 1, 1: 1}, committed(t, c, "h", "c"))
				return // the single-statement case below would read nothing
			}
			require.Equal(t, map[int32]int64{0: 0, 1: 0}, committed(t, c, "h", "c"))
		}
		complete := halfCloseQuery(t, a, q)
		t.Logf("%s: client saw CommandComplete: %v", q, complete)
		if strings.Contains(q, "CONSUMER = c") {
			want := map[int32]int64{0: 0, 1: 0}
			if complete {
				want = map[int32]int64{0: 1, 1: 1}
			}
			require.Equal(t, want, committed(t, c, "h", "c"))
			continue
		}
		counts := deliveryCounts(t, c, "h")
		want := int32(1)
		if complete {
			want = 2 // delivered once to the client that left
		}
		require.Equal(t, []int32{want, want}, counts)
	}
}

// TestHangupSuspendedPortal: a client that took part of a consumer read's
// rows through a row-limited Execute and left never completed the result:
// the position does not move; of the shared messages, the one whose row
// was sent counts a delivery (it may have reached the client) and the one
// never sent does not.
func TestHangupSuspendedPortal(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC sp (CONSUMER c, CONSUMER w WITH (type = 'shared'))")
	exec(t, c, "INSERT INTO sp (data) VALUES ('a'), ('b')")
	for _, consumer := range []string{"c", "w"} {
		nc, fe := startupRaw(t, a)
		fe.Send(&pgproto3.Parse{Query: "SELECT offset FROM sp WITH (CONSUMER = " + consumer + ") LIMIT 10"})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{MaxRows: 1})
		fe.Send(&pgproto3.Flush{})
		require.NoError(t, fe.Flush())
		var got []string
		for len(got) == 0 || got[len(got)-1] != "PortalSuspended" {
			msg, err := fe.Receive()
			require.NoError(t, err)
			got = append(got, strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3."))
		}
		require.Equal(t, []string{"ParseComplete", "BindComplete", "DataRow", "PortalSuspended"}, got)
		require.NoError(t, nc.(*net.TCPConn).CloseWrite())
		_, err := fe.Receive()
		require.Error(t, err, "the server closes the connection")
		nc.Close()
	}
	require.Equal(t, map[int32]int64{0: 0}, committed(t, c, "sp", "c"))
	require.Equal(t, []int32{2, 1}, deliveryCounts(t, c, "sp"), "offset 0 was sent, offset 1 was not")
}

// deliveryCounts acquires what shared consumer w of topic offers and
// returns the messages' delivery counts.
func deliveryCounts(t *testing.T, c *pgx.Conn, topic string) []int32 {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT delivery_count FROM "+topic+" WITH (CONSUMER = w, WAIT = '5s') LIMIT 10")
	require.NoError(t, err)
	var counts []int32
	for rows.Next() {
		var n int32
		require.NoError(t, rows.Scan(&n))
		counts = append(counts, n)
	}
	require.NoError(t, rows.Err())
	return counts
}

func startupRaw(t *testing.T, a *app) (net.Conn, *pgproto3.Frontend) {
	t.Helper()
	nc, err := net.Dial("tcp", a.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
	require.NoError(t, fe.Flush())
	for {
		msg, err := fe.Receive()
		require.NoError(t, err)
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return nc, fe
		}
	}
}

// halfCloseQuery sends q on a new connection, closes the connection's
// sending side at once, and reports whether the result arrived whole.
func halfCloseQuery(t *testing.T, a *app, q string) bool {
	t.Helper()
	nc, fe := startupRaw(t, a)
	fe.Send(&pgproto3.Query{String: q})
	require.NoError(t, fe.Flush())
	require.NoError(t, nc.(*net.TCPConn).CloseWrite())
	complete := false
	for {
		msg, err := fe.Receive()
		if err != nil {
			return complete
		}
		switch msg.(type) {
		case *pgproto3.CommandComplete:
			complete = true
		case *pgproto3.ErrorResponse:
			complete = false
		}
	}
}
