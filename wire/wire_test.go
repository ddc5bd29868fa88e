package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startServer(t testing.TB, cfg Config, h Handler) (*Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	s, err := NewServer(cfg, h)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		require.ErrorIs(t, <-served, ErrServerClosed)
	})
	return s, l.Addr().String()
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func connect(t testing.TB, addr, user, password, extra string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(testCtx(t), connString(addr, user, password, extra))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func connString(addr, user, password, extra string) string {
	if extra == "" {
		extra = "sslmode=disable"
	}
	return fmt.Sprintf("postgres://%s:%s@%s/db?%s", user, password, addr, extra)
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func pgWhere(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Where
	}
	return ""
}

func TestSimpleQuery(t *testing.T) {
	h := &fakeHandler{}
	_, addr := startServer(t, Config{}, h)
	c := connect(t, addr, "alice", "", "sslmode=disable&application_name=app1&timezone=Europe/Paris")
	ctx := testCtx(t)

	rows, err := c.Query(ctx, "SELECT 3", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var n int64
		var s string
		require.NoError(t, rows.Scan(&n, &s))
		got = append(got, fmt.Sprintf("%d %s", n, s))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"1 row 1", "2 row 2", "3 row 3"}, got)
	require.Equal(t, "SELECT 3", rows.CommandTag().String())

	// Several statements, then an error that stops the rest.
	results, err := c.PgConn().Exec(ctx, "SELECT 1; SELECT 2; ERR 22012; SELECT 4").ReadAll()
	require.Equal(t, "22012", pgCode(err))
	require.Len(t, results, 2)
	require.Len(t, results[1].Rows, 2)

	// Empty query.
	_, err = c.PgConn().Exec(ctx, " ; ").ReadAll()
	require.NoError(t, err)

	// ParameterStatus and session info.
	pc := c.PgConn()
	require.Equal(t, "15.4 (topicgate fake)", pc.ParameterStatus("server_version"))
	require.Equal(t, "UTF8", pc.ParameterStatus("client_encoding"))
	require.Equal(t, "ISO, MDY", pc.ParameterStatus("DateStyle"))
	require.Equal(t, "on", pc.ParameterStatus("standard_conforming_strings"))
	require.Equal(t, "Europe/Paris", pc.ParameterStatus("TimeZone"))
	require.Equal(t, "app1", pc.ParameterStatus("application_name"))
	info := h.lastInfo.Load()
	require.Equal(t, "alice", info.User)
	require.Equal(t, "db", info.Database)
	require.Equal(t, pc.PID(), info.ProcessID)
	require.NotZero(t, pc.SecretKey())

	// Transaction status, errors with detail and hint.
	_, err = c.Exec(ctx, "BEGIN", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	require.Equal(t, byte('T'), pc.TxStatus())
	_, err = c.Exec(ctx, "COMMIT", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	require.Equal(t, byte('I'), pc.TxStatus())
	_, err = c.Exec(ctx, "bogus", pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "42601", pe.Code)
	require.Equal(t, "fake detail", pe.Detail)
	require.Equal(t, "fake engine", pe.Hint)
	require.Equal(t, "ERROR", pe.Severity)

	// Notice.
	var notices []string
	cfg, err := pgx.ParseConfig(connString(addr, "bob", "", ""))
	require.NoError(t, err)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Code+" "+n.Message) }
	c2, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	_, err = c2.Exec(ctx, "NOTICE", pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	require.Equal(t, []string{"01000 hello notice"}, notices)
	require.NoError(t, c2.Close(ctx))
}

func TestSessionCloseAndServerClose(t *testing.T) {
	h := &fakeHandler{}
	s, addr := startServer(t, Config{}, h)
	c, err := pgx.Connect(testCtx(t), connString(addr, "u", "", ""))
	require.NoError(t, err)
	require.NoError(t, c.Close(testCtx(t)))
	c2 := connect(t, addr, "u", "", "")
	require.NotNil(t, s.Addr())
	idle, err := net.Dial("tcp", addr) // connected, startup never sent
	require.NoError(t, err)
	defer idle.Close()
	s.Close() // closes every connection and waits for their goroutines
	require.Equal(t, int32(2), h.closed.Load())
	require.Error(t, c2.Ping(testCtx(t)))
}

func TestNewSessionError(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	_, err := pgx.Connect(testCtx(t), fmt.Sprintf("postgres://u@%s/nodb?sslmode=disable", addr))
	require.Equal(t, "3D000", pgCode(err))
}

func TestCheckListenSafety(t *testing.T) {
	require.NoError(t, CheckListenSafety("127.0.0.1:5432", "trust"))
	require.NoError(t, CheckListenSafety("[::1]:5432", "trust"))
	require.NoError(t, CheckListenSafety("localhost:5432", ""))
	require.NoError(t, CheckListenSafety("0.0.0.0:5432", "scram-sha-256"))
	err := CheckListenSafety("0.0.0.0:5432", "trust")
	require.ErrorContains(t, err, "trust")
	require.Error(t, CheckListenSafety(":5432", "trust"))
	require.Error(t, CheckListenSafety("10.1.2.3:5432", ""))
	_, err = NewServer(Config{Auth: "kerberos"}, &fakeHandler{})
	require.Error(t, err)
}

func TestPanicIsRecovered(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	c := connect(t, addr, "u", "", "")
	_, err := c.Exec(testCtx(t), "PANIC", pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "XX000", pe.Code)
	require.True(t, strings.HasPrefix(pe.Message, "internal error: boom"), pe.Message)
	require.Error(t, c.Ping(testCtx(t)), "connection is closed after a panic")
	// The server lives on.
	c2 := connect(t, addr, "u", "", "")
	require.NoError(t, c2.Ping(testCtx(t)))
}

func TestCancel(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{}, 1)}
	s, addr := startServer(t, Config{}, h)
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SLEEP", pgx.QueryExecModeSimpleProtocol)
		errc <- err
	}()
	<-h.sleeping
	// A wrong secret is ignored: build a connection with a forged key.
	require.NoError(t, c.PgConn().CancelRequest(ctx))
	err := <-errc
	require.Equal(t, "57014", pgCode(err))
	require.NoError(t, c.Ping(ctx))
	// The next statement runs in a context of its own (calls share one
	// until it is cancelled), and a CancelRequest while no statement runs
	// cancels nothing, in either protocol.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		_, err = c.Exec(ctx, "LIVE", mode)
		require.NoError(t, err)
		s.cancelRequest(c.PgConn().PID(), c.PgConn().SecretKey())
		_, err = c.Exec(ctx, "LIVE", mode)
		require.NoError(t, err)
	}
}

func TestCancelWrongSecretIgnored(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{}, 1)}
	s, addr := startServer(t, Config{}, h)
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SLEEP", pgx.QueryExecModeSimpleProtocol)
		errc <- err
	}()
	<-h.sleeping
	s.cancelRequest(c.PgConn().PID(), []byte{1, 2, 3, 4})
	s.cancelRequest(c.PgConn().PID()+1, c.PgConn().SecretKey())
	select {
	case err := <-errc:
		t.Fatalf("query ended by a forged cancel: %v", err)
	default:
	}
	require.NoError(t, c.PgConn().CancelRequest(ctx))
	require.Equal(t, "57014", pgCode(<-errc))
}
