package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"topicgate/authz"
	"topicgate/topicstore"
	"topicgate/txn"
)

// DefaultMaxFrameBytes is the largest request frame accepted when
// Config.MaxFrameBytes is 0 (Kafka's socket.request.max.bytes).
const DefaultMaxFrameBytes = 100 << 20

// Config configures a Server.
type Config struct {
	// Store is where the topics are; it outlives the Server.
	Store topicstore.Store
	// Auth decides what the connections may do (INSERT for Produce,
	// SELECT for Fetch and ListOffsets); nil allows everything.
	Auth *authz.Authority
	// User is the login a connection acts as until it authenticates
	// with SASL, when SASL is not required: "" is the bootstrap
	// superuser of a PostgreSQL "trust" login that names no role.
	User string
	// RequireSASL makes every connection authenticate (SASL PLAIN or
	// SCRAM-SHA-256, against Auth's roles) before it may send anything
	// but ApiVersions, SaslHandshake and SaslAuthenticate; anything else
	// closes it. Without it a connection acts as User, or as the role it
	// authenticates as if it offers SASL.
	RequireSASL bool
	// OnAuth, when set, is told of each SASL authentication's outcome,
	// on the connection's goroutine before the client is answered (the
	// audit log). It must not block.
	OnAuth func(AuthEvent)
	// TLS, when set, makes every connection TLS (Kafka's SSL listener:
	// there is no upgrade in the protocol).
	TLS *tls.Config
	// MaxFrameBytes bounds a request frame; a larger one closes its
	// connection. 0 means DefaultMaxFrameBytes.
	MaxFrameBytes int
	// Logger receives connection errors and recovered panics; nil means
	// slog.Default().
	Logger *slog.Logger
	// Txns is the transaction manager Kafka transactions run in (the
	// SQL door's, so their commits take the one commit path); nil
	// refuses transactional producers (COORDINATOR_NOT_AVAILABLE).
	Txns *txn.Manager
	// Advertise, when set, is the host:port Metadata, FindCoordinator
	// and DescribeCluster name as broker 0's (Kafka's
	// advertised.listeners): the address clients reach this gateway at
	// through a proxy, NAT or load balancer. Unset, it is the address
	// each connection reached on this side (the listening address).
	Advertise string
	// OffsetsRetention is how long a group's consumers the door created
	// stay unused (no offset commit) and without members before the door
	// drops them (Kafka's offsets.retention.minutes): 0 means
	// DefaultOffsetsRetention, < 0 never.
	OffsetsRetention time.Duration
	// OnTxnTimeout, when set, is told each time a transaction's timeout
	// rolled it back (tests).
	OnTxnTimeout func(transactionalID string)
	// OnWait, when set, is called each time a Fetch starts waiting for new
	// messages (tests: a long poll is waiting, so a write now wakes it).
	OnWait func()
}

// Server accepts Kafka protocol connections. It is safe for concurrent use.
type Server struct {
	cfg Config
	log *slog.Logger

	// ctx ends when the server closes: long-polling fetches wake on it.
	ctx    context.Context
	cancel context.CancelFunc

	// groups are the consumer groups this gateway coordinates; route
	// runs a group's operations on its coordinator, here or, on a
	// cluster, on another gateway (grouproute.go).
	groups *coordinator
	route  *router
	// txns are the transactional ids this gateway serves.
	txns txnTable

	// stats are the request counters /metrics shows (WriteMetrics).
	stats stats

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	// infos are the open connections by number, what Conns shows;
	// nextConn is the last number given (connview.go).
	infos    map[int64]*connInfo
	nextConn int64
	closed   bool
	wg       sync.WaitGroup
	// stopWrites ends the groups' writer (groupstore.go) once the
	// connections have ended, so a rebalance they completed while
	// shutting down is written too; writesDone closes when it has.
	stopWrites     chan struct{}
	stopWritesOnce sync.Once
	writesDone     chan struct{}
}

// ErrServerClosed is returned by Serve after Close or Shutdown.
var ErrServerClosed = errors.New("kafka: server closed")

// NewServer returns a Server for cfg.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("kafka: no store")
	}
	if cfg.Advertise != "" {
		if _, port, err := net.SplitHostPort(cfg.Advertise); err != nil || port == "" {
			return nil, fmt.Errorf("kafka: the advertised address %q is not host:port", cfg.Advertise)
		}
	}
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = DefaultMaxFrameBytes
	}
	s := &Server{cfg: cfg, log: cfg.Logger, listeners: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{},
		infos: map[int64]*connInfo{}, nextConn: firstConnID()}
	if s.log == nil {
		s.log = slog.Default()
	}
	docs, _ := cfg.Store.(topicstore.Documents)
	s.groups = newCoordinator(docs, s.log)
	s.route = &router{s: s}
	if g, ok := cfg.Store.(topicstore.Gatherer); ok {
		s.route.g = g
		s.groups.owns = s.route.ownsNow
	}
	if err := s.route.start(); err != nil {
		return nil, fmt.Errorf("kafka: answering the other gateways: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.expireLoop()
	}()
	s.stopWrites, s.writesDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.writesDone)
		s.groups.writeLoop(s.stopWrites)
	}()
	go func() {
		defer s.wg.Done()
		s.sweepLoop()
	}()
	return s, nil
}

// CheckListen refuses an address the door may not listen on: when SASL is
// not required a connection that does not offer it acts as the bootstrap
// superuser, so only loopback (as the PostgreSQL door with "trust"); with
// saslRequired any address.
func CheckListen(addr string, saslRequired bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--kafka-listen: invalid address %q: %w", addr, err)
	}
	if saslRequired || strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--kafka-listen: refusing to listen on %q: with --auth trust the Kafka door requires no SASL authentication, so anyone who can reach it would act as the superuser; listen on 127.0.0.1 or ::1, or require passwords (--auth scram-sha-256 or md5), which makes the Kafka door require SASL", addr)
}

// Serve accepts connections on l until Close or Shutdown (it returns
// ErrServerClosed) or an accept error. With Config.TLS every connection
// is TLS.
func (s *Server) Serve(l net.Listener) error {
	if s.cfg.TLS != nil {
		l = tls.NewListener(l, s.cfg.TLS)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			delete(s.listeners, l)
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			continue
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
			s.mu.Lock()
			delete(s.conns, nc)
			s.mu.Unlock()
		}()
	}
}

// stop closes the listeners, marks the server closed and wakes every
// long poll.
func (s *Server) stop() {
	s.mu.Lock()
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	s.mu.Unlock()
	s.cancel()
}

// Shutdown stops accepting and ends each connection once it has answered
// the request it is working on (a long-polling fetch answers at once with
// what it has); it waits for that until ctx ends, then closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	s.mu.Lock()
	for nc := range s.conns {
		// Wakes a connection waiting for its client's next request; one
		// answering a request finishes it first (writes have no deadline).
		_ = nc.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.endWrites()
		return nil
	case <-ctx.Done():
		return s.Close()
	}
}

// endWrites writes the groups' queued documents and ends the writer
// (after the connections ended: nothing queues more).
func (s *Server) endWrites() {
	s.stopWritesOnce.Do(func() { close(s.stopWrites) })
	<-s.writesDone
}

// Close closes every listener and connection and waits for the
// connections' goroutines to end.
func (s *Server) Close() error {
	s.stop()
	s.mu.Lock()
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.endWrites()
	s.txns.closeAll()
	return nil
}
