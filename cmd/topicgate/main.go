// Command topicgate is the topicgate server: PostgreSQL's wire protocol in
// front of a topic store: the embedded Pebble store in --data-dir, or, with
// --store, a NATS JetStream cluster that any number of gateways share.
//
//	topicgate serve [--listen 127.0.0.1:5433] [--data-dir ./data | --store nats://host:port,...] [--auth trust|password|md5|scram-sha-256]
//	                [--user name:password]... [--users-file FILE] [--tls-cert FILE --tls-key FILE]
//	                [--audit-log FILE|- [--audit-classes READ,WRITE,...]] [--kafka-listen 127.0.0.1:9092]
//
// Every flag may also be given as an environment variable: TOPICGATE_LISTEN,
// TOPICGATE_DATA_DIR, TOPICGATE_AUTH, TOPICGATE_USERS_FILE,
// TOPICGATE_TLS_CERT, TOPICGATE_TLS_KEY, TOPICGATE_AUDIT_LOG,
// TOPICGATE_AUDIT_CLASSES, TOPICGATE_KAFKA_LISTEN. SIGHUP reopens the audit log.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"topicgate/kafka"

	"topicgate/executor"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jsext"
)

type userFlags map[string]string

func (u userFlags) String() string { return fmt.Sprint(len(u), " users") }
func (u userFlags) Set(v string) error {
	return addUser(v, u)
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: topicgate serve [flags]   (topicgate serve -h lists the flags)")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	cfg := config{Users: map[string]string{}}
	fs.StringVar(&cfg.Listen, "listen", env("TOPICGATE_LISTEN", "127.0.0.1:5433"), "address to listen on")
	fs.StringVar(&cfg.KafkaAdvertise, "kafka-advertise", env("TOPICGATE_KAFKA_ADVERTISE", ""), "host:port the Kafka door names as its broker's address in Metadata and FindCoordinator (Kafka's advertised.listeners), for clients that reach it through a proxy, NAT or load balancer; default: the address each connection reached")
	fs.DurationVar(&cfg.KafkaOffsetsRetention, "kafka-offsets-retention", kafka.DefaultOffsetsRetention, "how long a consumer group's consumers the Kafka door created stay with no offset commit and no members before the door drops them (Kafka's offsets.retention.minutes); 0 or less: never")
	fs.StringVar(&cfg.KafkaListen, "kafka-listen", env("TOPICGATE_KAFKA_LISTEN", ""), "address of the Kafka protocol door on the same topics (docs/kafka.md); SASL PLAIN or SCRAM-SHA-256 required unless --auth trust, which keeps it to loopback; off when empty")
	fs.StringVar(&cfg.DataDir, "data-dir", env("TOPICGATE_DATA_DIR", "./data"), "directory of the embedded store")
	fs.StringVar(&cfg.Store, "store", env("TOPICGATE_STORE", ""), "a NATS JetStream cluster to be a stateless gateway on, as nats://[user:password@]host:port,... (docs/cluster/running.md); --data-dir is then unused")
	fs.IntVar(&cfg.NATS.Replicas, "replicas", 3, "with --store: the stream's replicas (acknowledged means stored on a majority of them)")
	fs.StringVar(&cfg.NATS.Stream, "nats-stream", env("TOPICGATE_NATS_STREAM", "TOPICGATE"), "with --store: the JetStream stream that holds topicgate's data")
	fs.StringVar(&cfg.NATS.Creds, "nats-creds", env("TOPICGATE_NATS_CREDS", ""), "with --store: a NATS .creds file (user JWT and NKey seed)")
	fs.StringVar(&cfg.NATS.CA, "nats-ca", env("TOPICGATE_NATS_CA", ""), "with --store: the CA certificate (PEM) that signed the cluster's TLS certificates")
	fs.StringVar(&cfg.NATS.Cert, "nats-cert", env("TOPICGATE_NATS_CERT", ""), "with --store: this gateway's client certificate (PEM), for nodes that verify clients (tls { verify: true })")
	fs.StringVar(&cfg.NATS.Key, "nats-key", env("TOPICGATE_NATS_KEY", ""), "with --store: the key (PEM) of --nats-cert")
	fs.DurationVar(&cfg.NATS.Timeout, "nats-timeout", 5*time.Second, "with --store: how long one request to the cluster may take before it is asked again, or, for a read, before the statement fails with 57P03")
	fs.DurationVar(&cfg.NATS.CommitTimeout, "nats-commit-timeout", jetstream.DefaultCommitTimeout, "with --store: how long a commit keeps trying while the cluster cannot take it (a leader election, a node stopped) before it fails with 57P03 (nothing stored) or 08007 (outcome unknown); statement_timeout cuts it shorter")
	fs.DurationVar(&cfg.NATS.StartTimeout, "nats-start-timeout", jetstream.DefaultStartTimeout, "with --store: how long a gateway waits at start for a cluster that does not answer yet, logging what it waits for (0: no waiting)")
	fs.Int64Var(&cfg.NATS.CacheMiB, "nats-cache-mib", jetstream.DefaultCacheBytes>>20, "with --store: the gateway's cache of the record batches it wrote or read, in MiB (0: none); a read of a cached batch needs no round trip to the cluster")
	fs.DurationVar(&cfg.NATS.CommitDelay, "nats-commit-delay", jetstream.DefaultCommitDelay, "with --store: how long a commit group may wait for the sessions that committed in the last 20 ms and have not joined it yet (group commit pacing; 0: never wait); a lone session never waits")
	fs.DurationVar(&cfg.NATS.SessionTTL, "nats-session-ttl", jetstream.DefaultGroupTTL, "with --store: how long a gateway that stops renewing its read sessions (it died, or lost the cluster) keeps its share of each consumer's partitions before the other gateways take it; renewed every fifth of it")
	fs.IntVar(&cfg.NATS.SnapshotEvery, "nats-snapshot-every", jetstream.DefaultSnapshotEvery, "with --store: how many stream messages pass between the snapshots of the fold the maintenance lease holder writes, from which a gateway starts (also at least a quarter of the retained record batches; 0: no snapshots)")
	fs.DurationVar(&cfg.NATS.DecisionHold, "nats-decision-hold", jetstream.DefaultDecisionHold, "with --store: how long a wide transaction's decision stays in the stream at least once its intents are gone; a gateway whose fold falls further behind than that may need a restart")
	fs.StringVar(&cfg.NATS.Monitor, "nats-monitor", env("TOPICGATE_NATS_MONITOR", ""), "with --store: the nodes' HTTP monitoring endpoints (http://host:8222,...), read at start and every minute to check that each node syncs every write to disk (a warning, sys.cluster and /metrics say which does not)")
	fs.StringVar(&cfg.Auth, "auth", env("TOPICGATE_AUTH", ""), "trust, password, md5 or scram-sha-256 (default: trust without users, scram-sha-256 with)")
	usersFile := fs.String("users-file", env("TOPICGATE_USERS_FILE", ""), "file of name:password lines")
	fs.Var(userFlags(cfg.Users), "user", "a user as name:password (repeatable)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", env("TOPICGATE_TLS_CERT", ""), "TLS certificate (PEM)")
	fs.StringVar(&cfg.TLSKey, "tls-key", env("TOPICGATE_TLS_KEY", ""), "TLS private key (PEM)")
	fs.StringVar(&cfg.AuditLog, "audit-log", env("TOPICGATE_AUDIT_LOG", ""), "append the audit log (JSON lines, one per statement and login; docs/audit-log.md) to this file, - for stderr; reopened on SIGHUP; off when empty")
	fs.StringVar(&cfg.AuditClasses, "audit-classes", env("TOPICGATE_AUDIT_CLASSES", ""), "with --audit-log: the classes logged, of READ, WRITE, CONSUME, DDL, ROLE, MISC, AUTH, ALL, -CLASS (default READ,WRITE,CONSUME,DDL,ROLE,AUTH); denials and failed logins are logged whatever it says")
	verbose := fs.Bool("v", false, "log connection-level events")
	httpAddr := fs.String("http", env("TOPICGATE_HTTP", ""), "address for the HTTP endpoint (/metrics in Prometheus format, /healthz, /readyz, /debug/pprof, and the web console at / on loopback, docs/console.md); off when empty")
	contention := fs.Bool("contention-profiles", false, "sample blocking and mutex contention for /debug/pprof/block and /debug/pprof/mutex (one sample per 10 µs blocked, one in 10 contended locks; off: those profiles stay empty)")
	memLimit := fs.Int64("memory-limit-mib", 112, "soft limit of the Go heap in MiB (GOMEMLIMIT overrides it; Pebble's block cache and memtables, 64 MiB by default, come on top)")
	gcPercent := fs.Int("gc-percent", 400, "Go GC target percentage (GOGC overrides it); the live heap is small, so the default GOGC of 100 collected every few MiB of message buffers; the memory limit caps the heap")
	fs.Int64Var(&cfg.CacheMiB, "cache-mib", 32, "Pebble block cache in MiB, on top of the memtables (reads of recent messages come from the memtables; older blocks also sit in the OS page cache)")
	fs.Int64Var(&cfg.MemTableMiB, "memtable-mib", 16, "size of each of Pebble's two memtables in MiB")
	fs.IntVar(&cfg.SharedWindow, "shared-window", 1000, "per partition, how many messages past the first unfinished one a shared consumer tracks (its acquisition window and the cap on acquired messages)")
	fs.Int64Var(&cfg.MaxTxnMiB, "max-txn-mib", 16384, "the most one transaction (or autocommit COPY) may stage, in MiB")
	fs.Int64Var(&cfg.MaxQueryMiB, "max-query-mib", executor.DefaultMaxQueryBytes>>20, "the most one statement may hold in memory to sort or group rows, in MiB (past it: SQLSTATE 54000; -1: no limit)")
	fs.DurationVar(&cfg.HandoffGrace, "handoff-grace", executor.DefaultHandoffGrace, "how long a partition a joining read session takes stays with the session that holds it inside an open transaction (or an unfinished read) before it moves anyway and that transaction's COMMIT fails with 40001; 0 moves it at once")
	_ = fs.Parse(os.Args[2:])
	if cfg.HandoffGrace == 0 {
		cfg.HandoffGrace = -1 // --handoff-grace 0: no grace
	}
	if cfg.CacheMiB < 0 || cfg.MemTableMiB < 0 || *memLimit < 0 {
		fatal(fmt.Errorf("--cache-mib, --memtable-mib and --memory-limit-mib must not be negative"))
	}
	if *contention {
		runtime.SetBlockProfileRate(10_000)
		runtime.SetMutexProfileFraction(10)
	}
	if os.Getenv("GOMEMLIMIT") == "" && *memLimit > 0 {
		debug.SetMemoryLimit(*memLimit << 20)
	}
	if os.Getenv("GOGC") == "" && *gcPercent > 0 {
		debug.SetGCPercent(*gcPercent)
	}
	if *usersFile != "" {
		if err := readUsers(*usersFile, cfg.Users); err != nil {
			fatal(err)
		}
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		fatal(fmt.Errorf("--tls-cert and --tls-key go together"))
	}
	cfg.LogLevel = slog.LevelWarn
	if *verbose {
		cfg.LogLevel = slog.LevelDebug
	}
	// The HTTP endpoint answers from the start: /healthz at once, /readyz
	// (503) and /metrics (503) until the store is open, which on a
	// cluster may wait for it (--nats-start-timeout).
	var started atomic.Pointer[app]
	if *httpAddr != "" {
		http.Handle("/", httpHandler(&started))
		go func() {
			if err := http.ListenAndServe(*httpAddr, nil); err != nil {
				fmt.Fprintln(os.Stderr, "topicgate: http:", err)
			}
		}()
	}
	a, err := start(cfg)
	if err != nil {
		fatal(err)
	}
	started.Store(a)
	where := "data in " + cfg.DataDir
	if cfg.Store != "" {
		where = "gateway on " + jsext.RedactURLs(strings.Split(cfg.Store, ","))
	}
	fmt.Fprintf(os.Stderr, "topicgate listening on %s (%s, auth %s)\n", a.Addr(), where, strings.ToLower(authName(cfg)))
	if a.KafkaAddr() != "" {
		fmt.Fprintf(os.Stderr, "topicgate: Kafka door on %s\n", a.KafkaAddr())
	}
	a.handleSIGHUP()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "topicgate: %v, shutting down\n", s)
	case <-a.done:
		if a.serveErr != nil {
			fmt.Fprintln(os.Stderr, "topicgate:", a.serveErr)
		}
	}
	if err := a.Shutdown(10 * time.Second); err != nil {
		fatal(err)
	}
}

func authName(cfg config) string {
	if cfg.Auth != "" {
		return cfg.Auth
	}
	if len(cfg.Users) > 0 {
		return "scram-sha-256"
	}
	return "trust"
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "topicgate:", err)
	os.Exit(1)
}
