package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/acl"
	"topicgate/audit"
	"topicgate/authz"
	"topicgate/console"
	"topicgate/executor"
	"topicgate/kafka"
	"topicgate/sysview"
	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/pebblestore"
	"topicgate/wire"
)

// config is everything `topicgate serve` can be told.
type config struct {
	Listen  string
	DataDir string
	// Store, when set, is a NATS JetStream cluster's URL list
	// (nats://host:port,...): the server is then a stateless gateway on it
	// and DataDir is not used.
	Store string
	// NATS configures the cluster store: replicas, stream, credentials.
	NATS      natsConfig
	TLSCert   string
	TLSKey    string
	Auth      string
	Users     map[string]string
	Clock     func() time.Time
	LogLevel  slog.Level
	MaxTxnMiB int64
	// MaxQueryMiB bounds what one statement holds to sort or group; 0 =
	// the engine's default, negative = no limit.
	MaxQueryMiB int64
	// SharedWindow caps the messages a shared consumer tracks (and can have
	// acquired) per partition; 0 = the store's default (1000).
	SharedWindow int
	// CacheMiB and MemTableMiB size Pebble's block cache (beyond the
	// memtables it also holds) and each of its two memtables; 0 = the
	// store's defaults.
	CacheMiB, MemTableMiB int64
	// HandoffGrace is how long a partition a joining read session takes
	// stays with a holder whose transaction on it is still open; 0 = the
	// engine's default (10s), negative = it moves at once.
	HandoffGrace time.Duration
	// AuditLog (--audit-log) is the audit log's file, "-" for stderr, ""
	// for none; AuditClasses (--audit-classes) the classes it logs
	// besides denials and failed logins ("": audit.DefaultClasses).
	AuditLog, AuditClasses string
	// KafkaListen (--kafka-listen) is the Kafka door's address, "" for
	// none; loopback only with --auth trust, where the door does not
	// require SASL (kafka.CheckListen).
	KafkaListen string
	// KafkaOnWait is kafka.Config.OnWait (tests only).
	KafkaOnWait func()
	// KafkaAdvertise (--kafka-advertise) is kafka.Config.Advertise.
	KafkaAdvertise string
	// KafkaOffsetsRetention (--kafka-offsets-retention) is
	// kafka.Config.OffsetsRetention; 0 or less: never (the flag's
	// default is kafka.DefaultOffsetsRetention).
	KafkaOffsetsRetention time.Duration
	// KafkaOnTxnTimeout is kafka.Config.OnTxnTimeout (tests only).
	KafkaOnTxnTimeout func(string)
	// KafkaUser is kafka.Config.User, the role a Kafka connection that
	// does not authenticate acts as with --auth trust ("" the bootstrap
	// superuser; tests only).
	KafkaUser string
	// ConsoleClock is the web console's time source, which its cookies
	// expire by (tests only; nil: time.Now).
	ConsoleClock func() time.Time
	// ConsoleRecheck is how often a console's live chart stream checks
	// its login and what its role may see again (tests only; 0: a minute).
	ConsoleRecheck time.Duration
	// Trace observes sessions and statements (tests only).
	Trace func(executor.Event)
	// Logger replaces the text logger on stderr at LogLevel (tests
	// capture what the server logs).
	Logger *slog.Logger
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// natsConfig is what a gateway is told about its cluster.
type natsConfig struct {
	Replicas int
	Stream   string
	Creds    string // --nats-creds: a .creds file (JWT and NKey seed)
	CA       string // --nats-ca: the CA of the cluster's TLS certificates
	// Cert and Key (--nats-cert, --nats-key) are this gateway's client
	// certificate and key, for nodes that verify clients.
	Cert, Key string
	Timeout   time.Duration
	// CommitTimeout (--nats-commit-timeout) and StartTimeout
	// (--nats-start-timeout): see jetstream.Options.
	CommitTimeout, StartTimeout time.Duration
	// SessionTTL (--nats-session-ttl) is how long this gateway's read
	// sessions outlive its last renewal in the cluster (0: the store's
	// default).
	SessionTTL time.Duration
	// CacheMiB (--nats-cache-mib) bounds the gateway's cache of record
	// batches (0: none).
	CacheMiB int64
	// CommitDelay (--nats-commit-delay) is how long the committer may
	// hold a group for sessions that commit steadily (0: never).
	CommitDelay time.Duration
	// Monitor (--nats-monitor) are the nodes' monitoring endpoints, read
	// to check that they sync every write.
	Monitor string
	// SnapshotEvery (--nats-snapshot-every) is how many stream messages
	// pass between snapshots of the fold (0: never).
	SnapshotEvery int
	// DecisionHold (--nats-decision-hold) is how long a wide
	// transaction's decision stays in the stream at least.
	DecisionHold time.Duration
}

// app is a running server: the store, the engine and the listener.
type app struct {
	store    topicstore.Store
	pebble   *pebblestore.PebbleStore // the embedded store, nil on a cluster
	engine   *executor.Engine
	server   *wire.Server
	ln       net.Listener
	done     chan struct{} // closed when Serve has returned, with its error in serveErr
	serveErr error
	closed   sync.Once // Close and Shutdown run once; a second call returns the first's result
	err      error
	audit    *audit.Log // --audit-log, nil when off
	// kafka is the Kafka door (--kafka-listen), nil when off; kafkaLn is
	// its listener and kafkaDone is closed when its Serve returned.
	kafka     *kafka.Server
	kafkaLn   net.Listener
	kafkaDone chan struct{}
	// kafkaServer is kafka for the other gateways' pg_terminate_backend
	// of its connections, which may be heard before it is set.
	kafkaServer atomic.Pointer[kafka.Server]
	// console is the web console `serve --http` serves at /.
	console *console.Console
}

// start opens the store and starts serving; the listener is bound before
// it returns, so Addr is valid.
func start(cfg config) (*app, error) {
	if cfg.Auth == "" {
		cfg.Auth = "trust"
		if len(cfg.Users) > 0 {
			cfg.Auth = "scram-sha-256"
		}
	}
	if err := wire.CheckListenSafety(cfg.Listen, cfg.Auth); err != nil {
		return nil, err
	}
	if cfg.KafkaListen != "" {
		if err := kafka.CheckListen(cfg.KafkaListen, cfg.Auth != "trust"); err != nil {
			return nil, err
		}
	}
	if cfg.Auth != "trust" && len(cfg.Users) == 0 {
		return nil, fmt.Errorf("--auth %s needs at least one user (--user name:password or --users-file)", cfg.Auth)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	if cfg.Logger != nil {
		logger = cfg.Logger
	}
	alog, err := openAudit(cfg, logger)
	if err != nil {
		return nil, err
	}
	st, pst, err := openStore(cfg, logger)
	if err != nil {
		closeAudit(alog)
		return nil, err
	}
	eopts := executor.Options{Clock: cfg.Clock, MaxTxnBytes: cfg.MaxTxnMiB << 20, MaxQueryBytes: cfg.MaxQueryMiB << 20,
		HandoffGrace: cfg.HandoffGrace, Trace: cfg.Trace, Auth: cfg.Auth}
	if alog != nil {
		eopts.Auditor = alog
	}
	eng := executor.New(st, eopts)
	ccfg := console.Config{Sessions: eng, Verifier: eng.Authority().Verifier, Trust: cfg.Auth == "trust",
		Clock: cfg.ConsoleClock, Figures: st, LiveRecheck: cfg.ConsoleRecheck}
	if alog != nil {
		ccfg.OnLogin = auditConsoleLogin(alog)
	}
	con, err := console.New(ccfg)
	if err != nil {
		st.Close()
		closeAudit(alog)
		return nil, err
	}
	a := &app{store: st, pebble: pst, engine: eng, done: make(chan struct{}), audit: alog, console: con}
	if err := a.serve(cfg, logger); err != nil {
		st.Close()
		closeAudit(alog)
		return nil, err
	}
	return a, nil
}

// serve seeds the bootstrap roles and starts serving a's engine.
func (a *app) serve(cfg config, logger *slog.Logger) error {
	st, eng := a.store, a.engine
	// The bootstrap users become superuser roles the first time; from then
	// on every password is checked against the role catalog's verifiers.
	auth := eng.Authority()
	seedCtx, cancelSeed := context.WithTimeout(context.Background(), time.Minute)
	err := auth.Seed(seedCtx, cfg.Users)
	cancelSeed()
	if err != nil {
		return fmt.Errorf("creating the bootstrap roles: %w", err)
	}
	wcfg := wire.Config{
		Listen: cfg.Listen, TLSCert: cfg.TLSCert, TLSKey: cfg.TLSKey,
		Auth: cfg.Auth, Logger: logger, Credentials: credentials(auth),
	}
	if a.audit != nil {
		wcfg.OnAuth = auditLogin(a.audit)
	}
	g, gathers := st.(topicstore.Gatherer)
	if gathers {
		// A CancelRequest for a session of another gateway (clients behind
		// one address for all the gateways) is told to every gateway.
		wcfg.ForwardCancel = func(pid uint32, secret []byte) {
			_ = g.Tell(tellCancel, binary.BigEndian.AppendUint32(secret, pid))
		}
	}
	srv, err := wire.NewServer(wcfg, eng)
	if err != nil {
		return err
	}
	eng.SetSignal(srv.Signal, nil)
	if gathers {
		err := g.Hear(tellCancel, func(b []byte) {
			if len(b) >= 4 {
				n := len(b) - 4
				srv.Cancel(binary.BigEndian.Uint32(b[n:]), b[:n])
			}
		})
		if err != nil {
			return err
		}
		// pg_cancel_backend and pg_terminate_backend of a session of
		// another gateway, once the caller's gateway allowed them.
		err = g.Hear(tellSignal, func(b []byte) {
			if len(b) != 5 {
				return
			}
			pid := binary.BigEndian.Uint32(b)
			if int32(pid) < 0 {
				// A Kafka connection's pid (negative); only terminated.
				if ks := a.kafkaServer.Load(); b[4] == 1 && ks != nil {
					ks.CloseConn(-int64(int32(pid)))
				}
				return
			}
			srv.Signal(pid, b[4] == 1)
		})
		if err != nil {
			return err
		}
		eng.SetSignal(srv.Signal, func(pid uint32, terminate bool) {
			b := binary.BigEndian.AppendUint32(nil, pid)
			if terminate {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
			_ = g.Tell(tellSignal, b)
		})
	}
	if err := a.listenKafka(cfg, logger); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		a.closeKafka()
		return err
	}
	a.server, a.ln = srv, ln
	go func() {
		a.serveErr = srv.Serve(ln)
		close(a.done)
	}()
	return nil
}

// listenKafka starts the Kafka door on cfg.KafkaListen, if set: on the
// same store, with the same authority and, given --tls-cert and
// --tls-key, the same certificate (every Kafka connection is then TLS:
// the protocol has no upgrade).
func (a *app) listenKafka(cfg config, logger *slog.Logger) error {
	if cfg.KafkaListen == "" {
		return nil
	}
	kcfg := kafka.Config{Store: a.store, Auth: a.engine.Authority(), Txns: a.engine.Transactions(), Logger: logger, OnWait: cfg.KafkaOnWait, User: cfg.KafkaUser,
		OnTxnTimeout: cfg.KafkaOnTxnTimeout, OffsetsRetention: cfg.KafkaOffsetsRetention, Advertise: cfg.KafkaAdvertise,
		RequireSASL: cfg.Auth != "trust"}
	if kcfg.OffsetsRetention <= 0 {
		kcfg.OffsetsRetention = -1 // never
	}
	if a.audit != nil {
		kcfg.OnAuth = auditKafkaLogin(a.audit)
	}
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("--tls-cert and --tls-key for the Kafka door: %w", err)
		}
		kcfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ks, err := kafka.NewServer(kcfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.KafkaListen)
	if err != nil {
		return fmt.Errorf("--kafka-listen: %w", err)
	}
	a.kafka, a.kafkaLn, a.kafkaDone = ks, ln, make(chan struct{})
	a.kafkaServer.Store(ks)
	a.engine.SetKafkaGroups(func() []sysview.KafkaGroup { return kafkaGroupViews(ks.Groups()) })
	auth := a.engine.Authority()
	a.engine.SetKafkaSessions(func() []sysview.SessionView { return kafkaSessionViews(ks.Conns(), auth, kcfg.RequireSASL) },
		func(pid int64) bool { return ks.CloseConn(-pid) })
	go func() {
		_ = ks.Serve(ln)
		close(a.kafkaDone)
	}()
	return nil
}

// kafkaGroupViews copies the Kafka door's groups into sys.kafka_groups'
// shape.
func kafkaGroupViews(gs []kafka.GroupView) []sysview.KafkaGroup {
	out := make([]sysview.KafkaGroup, len(gs))
	for i, g := range gs {
		out[i] = sysview.KafkaGroup{Group: g.Group, State: g.State, ProtocolType: g.ProtocolType, Protocol: g.Protocol,
			Leader: g.Leader, Generation: int64(g.Generation)}
		for _, m := range g.Members {
			out[i].Members = append(out[i].Members, sysview.KafkaMember(m))
		}
	}
	return out
}

// kafkaSessionViews copies the Kafka door's connections into
// sys.sessions' shape: pid the negative of the connection's number, the
// bootstrap superuser's name for a connection that acts as it (no SASL,
// no --kafka user), NULL (user "") for one that has not authenticated
// yet where SASL is required.
func kafkaSessionViews(cs []kafka.ConnView, auth *authz.Authority, requireSASL bool) []sysview.SessionView {
	bootstrap := ""
	if !requireSASL {
		if d, err := auth.Doc(); err == nil {
			bootstrap = d.Bootstrap()
		}
	}
	out := make([]sysview.SessionView, len(cs))
	for i, c := range cs {
		user := c.User
		if user == "" {
			user = bootstrap
		}
		state := "idle"
		if c.Active {
			state = "active"
		}
		out[i] = sysview.SessionView{PID: sysview.KafkaPID(c.ID), User: user, App: c.ClientID, Addr: c.Remote, State: state,
			Protocol: sysview.ProtocolKafka, Since: c.Since, API: c.API}
	}
	return out
}

// stopKafka ends the Kafka door, if it runs: gracefully until ctx ends
// (each connection finishes the request it answers), then at once.
func (a *app) stopKafka(ctx context.Context) {
	if a.kafka == nil {
		return
	}
	_ = a.kafka.Shutdown(ctx)
	<-a.kafkaDone
}

// closeKafka ends the Kafka door at once, if it runs.
func (a *app) closeKafka() {
	if a.kafka == nil {
		return
	}
	_ = a.kafka.Close()
	<-a.kafkaDone
}

// KafkaAddr is the Kafka door's address ("" when it is off).
func (a *app) KafkaAddr() string {
	if a.kafkaLn == nil {
		return ""
	}
	return a.kafkaLn.Addr().String()
}

// openStore opens the embedded store in cfg.DataDir, or connects to the
// cluster cfg.Store names.
func openStore(cfg config, logger *slog.Logger) (topicstore.Store, *pebblestore.PebbleStore, error) {
	if cfg.Store != "" {
		urls := strings.Split(cfg.Store, ",")
		opts, err := natsOptions(cfg.NATS)
		if err != nil {
			return nil, nil, err
		}
		start := cfg.NATS.StartTimeout
		if start == 0 {
			start = -1 // no waiting
		}
		host, _ := os.Hostname()
		st, err := jetstream.Open(context.Background(), jetstream.Options{URLs: urls, NATS: opts, Replicas: cfg.NATS.Replicas,
			Name:   strings.TrimSpace(host + " " + cfg.Listen),
			Stream: cfg.NATS.Stream, Clock: cfg.Clock, Timeout: cfg.NATS.Timeout, GroupTTL: cfg.NATS.SessionTTL,
			CommitTimeout: cfg.NATS.CommitTimeout, StartTimeout: start, Logger: logger,
			CacheBytes: natsCacheBytes(cfg.NATS.CacheMiB), CommitDelay: natsCommitDelay(cfg.NATS.CommitDelay),
			Monitor: splitList(cfg.NATS.Monitor), SnapshotEvery: natsSnapshotEvery(cfg.NATS.SnapshotEvery),
			DecisionHold: cfg.NATS.DecisionHold})
		if err != nil {
			return nil, nil, fmt.Errorf("open the cluster store: %w", err)
		}
		return st, nil, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	st, err := pebblestore.Open(cfg.DataDir, pebblestore.Options{Clock: cfg.Clock, SharedWindow: cfg.SharedWindow,
		MemTableSize: uint64(cfg.MemTableMiB) << 20, BlockCacheSize: cfg.CacheMiB << 20, Logger: logger,
		OnRelease: releaseCMemory})
	if err != nil {
		return nil, nil, fmt.Errorf("open store in %s: %w", cfg.DataDir, err)
	}
	return st, st, nil
}

// natsOptions turns --nats-creds and --nats-ca into nats.go options,
// refusing files that cannot be what they are said to be (nats.go would
// only fail at connect, in words that blame the URLs).
func natsOptions(nc natsConfig) ([]nats.Option, error) {
	var opts []nats.Option
	if nc.Creds != "" {
		b, err := os.ReadFile(nc.Creds)
		if err != nil {
			return nil, fmt.Errorf("--nats-creds: %w", err)
		}
		if !bytes.Contains(b, []byte("BEGIN NATS USER JWT")) || !bytes.Contains(b, []byte("BEGIN USER NKEY SEED")) {
			return nil, fmt.Errorf("--nats-creds %s is not a NATS .creds file (a user JWT and an NKey seed, as nsc or the account's operator generates)", nc.Creds)
		}
		opts = append(opts, nats.UserCredentials(nc.Creds))
	}
	if nc.CA != "" {
		b, err := os.ReadFile(nc.CA)
		if err != nil {
			return nil, fmt.Errorf("--nats-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("--nats-ca %s holds no PEM certificate (give it the CA that signed the nodes' certificates)", nc.CA)
		}
		opts = append(opts, nats.RootCAs(nc.CA))
	}
	if (nc.Cert == "") != (nc.Key == "") {
		return nil, errors.New("--nats-cert and --nats-key go together: give both, a client certificate (PEM) and its key")
	}
	if nc.Cert != "" {
		if _, err := tls.LoadX509KeyPair(nc.Cert, nc.Key); err != nil {
			return nil, fmt.Errorf("--nats-cert %s and --nats-key %s are not a PEM certificate and its key: %w", nc.Cert, nc.Key, err)
		}
		opts = append(opts, nats.ClientCert(nc.Cert, nc.Key))
	}
	return opts, nil
}

// Addr is the address the server listens on.
func (a *app) Addr() string { return a.ln.Addr().String() }

// httpHandler is `serve --http`: /metrics (Prometheus text), /healthz
// (200 while the process serves HTTP: liveness), /readyz (200 once the
// store is open and, on a cluster, reachable with this gateway's view
// caught up with the stream; 503 with the reason otherwise), and what
// net/http/pprof registered under /debug/pprof, and the web console
// (package console) at / (503 until the store is open). a is nil until
// the server started.
func httpHandler(a *atomic.Pointer[app]) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		cur := a.Load()
		if cur == nil {
			http.Error(w, "starting: the store is not open yet", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := cur.ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		cur := a.Load()
		if cur == nil {
			http.Error(w, "starting: the store is not open yet", http.StatusServiceUnavailable)
			return
		}
		cur.metricsHandler().ServeHTTP(w, r)
	})
	mux.Handle("/debug/pprof/", http.DefaultServeMux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		cur := a.Load()
		if cur == nil {
			http.Error(w, "starting: the store is not open yet", http.StatusServiceUnavailable)
			return
		}
		cur.console.ServeHTTP(w, r)
	})
	return mux
}

// readyTimeout bounds the check /readyz makes.
const readyTimeout = 2 * time.Second

// ready reports whether the store can serve: on a cluster, that a leader
// answers and this gateway's view is caught up with the stream.
func (a *app) ready(ctx context.Context) error {
	if r, ok := a.store.(topicstore.Readier); ok {
		return r.Ready(ctx)
	}
	return nil
}

// metricsHandler serves the engine's metrics in Prometheus text format
// (`serve --http` mounts it at /metrics), then the Kafka door's when it
// listens.
func (a *app) metricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		a.engine.WriteMetrics(w)
		if a.kafka != nil {
			a.kafka.WriteMetrics(w)
		}
	})
}

// Shutdown drains the server (wire.Server.Shutdown: every session ends
// with FATAL 57P01 and closes as on a client's exit, its transaction
// rolled back, its shared locks released, its read sessions left) for at
// most grace, then closes the store.
func (a *app) Shutdown(grace time.Duration) error {
	a.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		_ = a.server.Shutdown(ctx)
		<-a.done
		a.console.Close()
		a.stopKafka(ctx)
		a.err = a.store.Close()
		closeAudit(a.audit)
	})
	return a.err
}

// Close stops accepting, closes connections and closes the store.
func (a *app) Close() error {
	a.closed.Do(func() {
		a.server.Close()
		<-a.done
		a.console.Close()
		a.closeKafka()
		a.err = a.store.Close()
		closeAudit(a.audit)
	})
	return a.err
}

// readUsers parses a users file: one `name:password` per line, # comments.
func readUsers(path string, into map[string]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := addUser(line, into); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

func addUser(spec string, into map[string]string) error {
	name, pass, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return fmt.Errorf("user %q must be name:password", spec)
	}
	into[name] = pass
	return nil
}

// tellCancel is the kind of message a gateway tells the others when a
// CancelRequest names none of its sessions: the secret key, then the
// process id (4 bytes, big-endian).
const tellCancel = "cancel"

// tellSignal is the kind of message a gateway tells the others for a
// pg_cancel_backend (0) or pg_terminate_backend (1) it allowed of a
// session it does not hold: the process id (4 bytes, big-endian), then
// that byte.
const tellSignal = "signal"

// natsCacheBytes is the jetstream store's CacheBytes for --nats-cache-mib:
// 0 turns the cache off, which the store spells as a negative budget.
func natsCacheBytes(mib int64) int64 {
	if mib <= 0 {
		return -1
	}
	return mib << 20
}

// natsCommitDelay is the jetstream store's CommitDelay for
// --nats-commit-delay: 0 turns the wait off (a negative delay there).
func natsCommitDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// natsSnapshotEvery is the jetstream store's SnapshotEvery for
// --nats-snapshot-every: 0 turns snapshots off (a negative count there).
func natsSnapshotEvery(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// credentials is wire.Config.Credentials over the role catalog: a role's
// stored verifier, parsed.
func credentials(auth *authz.Authority) func(user string) (wire.Credential, bool) {
	return func(user string) (wire.Credential, bool) {
		v, ok := auth.Verifier(user)
		if !ok {
			return wire.Credential{}, false
		}
		if sec, ok := acl.ParseSCRAM(v); ok {
			return wire.Credential{SCRAM: &wire.SCRAMSecret{Iterations: sec.Iterations, Salt: sec.Salt,
				StoredKey: sec.StoredKey, ServerKey: sec.ServerKey}}, true
		}
		if strings.HasPrefix(v, "md5") {
			return wire.Credential{MD5: v}, true
		}
		return wire.Credential{}, false
	}
}
