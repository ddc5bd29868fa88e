package wire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxMessageSize is the largest client message body accepted when
// Config.MaxMessageSize is 0.
const DefaultMaxMessageSize = 64 << 20

// authTimeout bounds startup and authentication, like PostgreSQL's
// authentication_timeout.
const authTimeout = time.Minute

// Config configures a Server.
type Config struct {
	// Listen is the TCP address for ListenAndServe, e.g. "127.0.0.1:5432".
	Listen string
	// TLSCert and TLSKey are PEM files; when both are set, SSLRequest is
	// answered 'S' and the connection is upgraded.
	TLSCert, TLSKey string
	// TLSConfig overrides TLSCert/TLSKey when non-nil (tests, embedding).
	TLSConfig *tls.Config
	// Auth is "trust", "password" (cleartext), "md5" or "scram-sha-256".
	// Empty means "trust".
	Auth string
	// Users maps user name to password (ignored for "trust"): the
	// bootstrap users given on the command line.
	Users map[string]string
	// Credentials, when set, is asked for a user Users does not name:
	// what the user's password is checked against (a role's stored
	// verifier). ok false: no such user, answered exactly as a wrong
	// password is.
	Credentials func(user string) (cred Credential, ok bool)
	// MaxMessageSize is the largest message body accepted from a client;
	// larger messages get ErrorResponse 54000 and the connection is closed.
	// 0 means DefaultMaxMessageSize.
	MaxMessageSize int
	// Logger receives connection errors and recovered panics; nil means
	// slog.Default().
	Logger *slog.Logger
	// ForwardCancel, when set, receives each CancelRequest that names no
	// connection of this server, to pass on to other servers that may
	// hold it (several gateways behind one address: a client's cancel
	// opens a new connection, which may land on another one). They answer
	// it with Cancel.
	ForwardCancel func(pid uint32, secret []byte)
	// OnAuth, when set, is told of each login's outcome on the
	// connection's goroutine, before the client is answered
	// (AuthenticationOk or the FATAL error): the audit log's AUTH lines
	// are written before the client knows. It must not block. A
	// connection that ends during the exchange without being refused
	// (the client hung up, as psql does to prompt for a password) is not
	// a login.
	OnAuth func(AuthEvent)
}

// AuthEvent is one login's outcome (Config.OnAuth).
type AuthEvent struct {
	User, Database, Remote string
	// ProcessID is the session's (BackendKeyData's); 0 when the login
	// was refused.
	ProcessID uint32
	// Code is "" when the login succeeded, else the SQLSTATE of the FATAL
	// error the client was sent (28P01, 28000, 53300, ...).
	Code string
}

// Server accepts PostgreSQL protocol connections and runs them against a
// Handler.
type Server struct {
	cfg     Config
	h       Handler
	tlsConf *tls.Config
	log     *slog.Logger
	scram   scramCache

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[uint32]*conn      // registered connections, by process id
	raw       map[net.Conn]struct{} // every open socket, registered or not
	nextPID   uint32
	closed    bool
	// draining: Shutdown is ending the connections; a connection that
	// finds its read cut short sends FATAL 57P01 and closes.
	draining atomic.Bool
	wg       sync.WaitGroup
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("wire: server closed")

// NewServer validates cfg and returns a Server for h.
func NewServer(cfg Config, h Handler) (*Server, error) {
	if h == nil {
		return nil, errors.New("wire: nil Handler")
	}
	switch cfg.Auth {
	case "":
		cfg.Auth = "trust"
	case "trust", "password", "md5", "scram-sha-256":
	default:
		return nil, fmt.Errorf("wire: unknown auth method %q (want trust, password, md5 or scram-sha-256)", cfg.Auth)
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	s := &Server{cfg: cfg, h: h, log: cfg.Logger, listeners: map[net.Listener]struct{}{}, conns: map[uint32]*conn{}, raw: map[net.Conn]struct{}{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	switch {
	case cfg.TLSConfig != nil:
		s.tlsConf = cfg.TLSConfig
	case cfg.TLSCert != "" || cfg.TLSKey != "":
		if cfg.TLSCert == "" || cfg.TLSKey == "" {
			return nil, errors.New("wire: TLSCert and TLSKey must be set together")
		}
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("wire: loading TLS key pair: %w", err)
		}
		s.tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	s.nextPID = binary.BigEndian.Uint32(b[:])>>9 + 1000
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// CheckListenSafety refuses to listen on a non-loopback address without
// authentication.
func CheckListenSafety(listen string, auth string) error {
	if auth != "" && auth != "trust" {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("wire: invalid listen address %q: %w", listen, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("wire: refusing to listen on %q with auth \"trust\": anyone who can reach it could connect without a password; listen on 127.0.0.1/::1 or configure password, md5 or scram-sha-256 authentication", listen)
}

// ListenAndServe listens on Config.Listen and serves.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Close (returns ErrServerClosed) or
// an accept error.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.raw[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
			s.mu.Lock()
			delete(s.raw, nc)
			s.mu.Unlock()
		}()
	}
}

// Addr returns the address of the first listener, or nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		return l.Addr()
	}
	return nil
}

// Signal cancels what the connection with process id pid runs (a
// CancelRequest without its key: pg_cancel_backend), and with terminate
// also ends it with FATAL 57P01 as Shutdown does (pg_terminate_backend).
// It reports whether this server has such a connection.
func (s *Server) Signal(pid uint32, terminate bool) bool {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c == nil {
		return false
	}
	if terminate {
		c.ending.Store(true)
		_ = c.nc.SetReadDeadline(time.Now()) // wakes it if it waits for its client
	}
	c.cancelRunning()
	return true
}

// Shutdown ends the server as PostgreSQL's fast shutdown does: it stops
// accepting, cancels the running statements, and ends every connection
// with FATAL 57P01 "terminating connection due to administrator command";
// each session closes as on a client's exit (an open transaction rolls
// back, shared-consumer locks are released, read sessions leave their
// consumers, so their partitions go to the other sessions). It waits for
// that until ctx ends, then closes what is left (Close).
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for nc := range s.raw {
		_ = nc.SetReadDeadline(time.Now()) // wakes a connection waiting for its client
	}
	s.mu.Unlock()
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return s.Close()
	}
}

// Close closes every listener and connection and waits for the connection
// goroutines to end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for nc := range s.raw {
		nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// register assigns c a process id and a random secret.
func (s *Server) register(c *conn) error {
	if _, err := rand.Read(c.secret[:]); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	for {
		s.nextPID++
		if s.nextPID == 0 {
			continue
		}
		if _, used := s.conns[s.nextPID]; !used {
			break
		}
	}
	c.pid = s.nextPID
	s.conns[c.pid] = c
	return nil
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	if s.conns[c.pid] == c {
		delete(s.conns, c.pid)
	}
	s.mu.Unlock()
}

// cancelRequest cancels the running statement of the connection with pid
// if the secret matches. Mismatches are silently ignored, as in PostgreSQL.
func (s *Server) cancelRequest(pid uint32, secret []byte) {
	if !s.Cancel(pid, secret) && s.cfg.ForwardCancel != nil {
		s.cfg.ForwardCancel(pid, append([]byte(nil), secret...))
	}
}

// Cancel cancels what the connection with process id pid is running, as
// a CancelRequest does, if secret is its key; it reports whether one
// matched.
func (s *Server) Cancel(pid uint32, secret []byte) bool {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret[:], secret) != 1 {
		return false
	}
	c.cancelRunning()
	return true
}
