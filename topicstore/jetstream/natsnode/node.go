package natsnode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sync values: how often a node fsyncs its JetStream files.
const (
	// SyncDefault leaves nats-server's own default (a sync every two minutes;
	// a write is acknowledged once a quorum of replicas holds it in memory and
	// in the OS page cache).
	SyncDefault = "default"
	// SyncAlways sets sync_interval: always, an fsync for every write before
	// it is acknowledged.
	SyncAlways = "always"
)

// Port offsets from Config.BasePort, chosen so that the default base 4222 gives
// nats-server's conventional ports: clients 4222.., routes 6222.., HTTP 8222...
const (
	ClusterPortOffset = 2000
	MonitorPortOffset = 4000
)

// MaxPayload is the max_payload the nodes run with: topicgate stores a
// message in one NATS message, and allows messages of 12 MiB.
const MaxPayload = 16 << 20

// Config describes a cluster of local nodes.
type Config struct {
	// Dir holds one directory per node (n0, n1, ...) with its config file,
	// its log and its JetStream store. Required; created if missing. A node
	// restarted in the same Dir keeps its data.
	Dir string
	// Nodes is the number of nodes (default 3). With one node no cluster
	// block is written: JetStream runs standalone.
	Nodes int
	// BasePort 0 picks free loopback ports. Otherwise node i listens for
	// clients on BasePort+i, for routes on BasePort+ClusterPortOffset+i and
	// for HTTP monitoring on BasePort+MonitorPortOffset+i.
	BasePort int
	// ClusterName names the cluster and prefixes the server names
	// (<name>-0, <name>-1, ...). Default "tg".
	ClusterName string
	// Sync is SyncDefault ("" too) or SyncAlways.
	Sync string
	// NoJetStream starts the nodes without JetStream (to test refusals).
	NoJetStream bool
	// JetStreamExtra is copied inside each node's jetstream { } block, e.g.
	// "limits { batch { max_inflight_per_stream: 200 } }".
	JetStreamExtra string
	// Binary is the nats-server to run; default Binary().
	Binary string
	// ReadyTimeout bounds the wait for a started node to report healthy
	// (default 60s).
	ReadyTimeout time.Duration

	// Users, when set, makes the nodes refuse a client that does not give
	// one of these user names with its password (authorization { users }):
	// nats://user:password@host:port.
	Users map[string]string
	// TLSCert and TLSKey, when set, are the PEM files of the certificate
	// and key the nodes' client port requires TLS with (tls { }); URL is
	// then tls://. Routes and the monitoring port stay plain.
	TLSCert, TLSKey string
	// TLSVerifyCA, with TLSCert, makes the client port require a client
	// certificate that this CA (a PEM file) signed (verify: true).
	TLSVerifyCA string
	// Operator, when set, runs the nodes in operator (decentralized JWT)
	// mode: a client authenticates with a user JWT its account signed and
	// the NKey seed of that user (a .creds file).
	Operator *Operator
}

// Operator is what a node in operator mode trusts: the operator's JWT and
// the accounts it signed, preloaded into a MEMORY resolver (no account
// server is needed; the accounts cannot change while the node runs).
type Operator struct {
	JWT           string            // the operator's JWT
	SystemAccount string            // the system account's public key; it must be in Accounts
	Accounts      map[string]string // account public key -> account JWT
}

// Node is one nats-server process of a Cluster. Its ports and directory stay
// the same across restarts.
type Node struct {
	Index       int
	Name        string // server_name, as JetStream reports leaders
	Dir         string
	ClientPort  int
	ClusterPort int
	MonitorPort int

	scheme string // of URL: nats, or tls when the client port requires TLS

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil before the first start
	exited chan struct{} // closed when cmd has exited
}

// URL is the node's client URL.
func (n *Node) URL() string { return fmt.Sprintf("%s://%s", n.scheme, hostPort(n.ClientPort)) }

// MonitorURL is the node's HTTP monitoring endpoint (/varz, /jsz, ...).
func (n *Node) MonitorURL() string { return "http://" + hostPort(n.MonitorPort) }

func (n *Node) confPath() string { return filepath.Join(n.Dir, "nats-server.conf") }

// LogPath is the file that collects the node's output over all its runs.
func (n *Node) LogPath() string { return filepath.Join(n.Dir, "nats-server.log") }

// Exited is closed when the node's current process exits (nil before
// its first start).
func (n *Node) Exited() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.exited
}

// Running reports whether the node's process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runningLocked()
}

func (n *Node) runningLocked() bool {
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// Cluster is a set of running nats-server child processes.
type Cluster struct {
	cfg   Config
	nodes []*Node
	http  *http.Client
}

const host = "127.0.0.1"

func hostPort(port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// Start writes the nodes' configs, starts them and returns once every node
// reports healthy on its /healthz endpoint (for JetStream nodes: it follows a
// meta leader and is current with it) and the meta group spans all nodes
// (see metaFormed). On error the nodes already started are killed.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Dir == "" {
		return nil, errors.New("natsnode: Config.Dir is required")
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Nodes < 0 {
		return nil, fmt.Errorf("natsnode: %d nodes", cfg.Nodes)
	}
	if cfg.ClusterName == "" {
		cfg.ClusterName = "tg"
	}
	switch cfg.Sync {
	case "", SyncDefault, SyncAlways:
	default:
		return nil, fmt.Errorf("natsnode: sync %q: want %q or %q", cfg.Sync, SyncDefault, SyncAlways)
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("natsnode: TLSCert and TLSKey go together")
	}
	if cfg.Operator != nil && len(cfg.Users) > 0 {
		return nil, errors.New("natsnode: Users and Operator exclude each other")
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 60 * time.Second
	}
	if cfg.Binary == "" {
		bin, err := Binary()
		if err != nil {
			return nil, err
		}
		cfg.Binary = bin
	}
	ports, err := allocatePorts(cfg.BasePort, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, http: &http.Client{Timeout: 2 * time.Second}}
	for i := range cfg.Nodes {
		n := &Node{
			Index:       i,
			Name:        fmt.Sprintf("%s-%d", cfg.ClusterName, i),
			Dir:         filepath.Join(cfg.Dir, fmt.Sprintf("n%d", i)),
			ClientPort:  ports[3*i],
			ClusterPort: ports[3*i+1],
			MonitorPort: ports[3*i+2],
			scheme:      "nats",
		}
		if cfg.TLSCert != "" {
			n.scheme = "tls"
		}
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("natsnode: %w", err)
		}
		if err := os.WriteFile(n.confPath(), []byte(c.config(n)), 0o644); err != nil {
			return nil, fmt.Errorf("natsnode: %w", err)
		}
	}
	for _, n := range c.nodes {
		if err := c.spawn(n); err != nil {
			c.killAll()
			return nil, err
		}
	}
	errs := make(chan error, len(c.nodes))
	for _, n := range c.nodes {
		go func() { errs <- c.waitHealthy(ctx, n) }()
	}
	var all []error
	for range c.nodes {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		c.killAll()
		return nil, err
	}
	if c.clustered() {
		if err := c.waitMetaFormed(ctx); err != nil {
			c.killAll()
			return nil, err
		}
	}
	return c, nil
}

// clustered reports whether the nodes run clustered JetStream, with a meta
// group (a single node runs JetStream standalone).
func (c *Cluster) clustered() bool { return !c.cfg.NoJetStream && len(c.nodes) > 1 }

// waitMetaFormed polls metaFormed until it holds or ReadyTimeout passes.
func (c *Cluster) waitMetaFormed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ReadyTimeout)
	defer cancel()
	return poll(ctx, func() error { return c.metaFormed(ctx) })
}

// poll calls f every 10ms until it returns nil; on ctx's end it returns f's
// last error.
func poll(ctx context.Context, f func() error) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("natsnode: %w (%v)", err, ctx.Err())
		case <-tick.C:
		}
	}
}

// allocatePorts returns 3 ports a node: client, cluster, monitor. Free ports
// are held open together until all are chosen, so they are distinct. They
// are picked below the kernel's ephemeral range when it leaves room: a
// node restarted on its old port must find it free, and a port of that
// range is what any outgoing connection, or a listener on port 0 (a
// test's gateway), may be given while the node is down (seen in
// TestClusterCrash: a restarted node exiting with "address already in
// use"), and each is reserved (reservePort) against the clusters of this
// and other test processes, which would otherwise pick the port of a node
// that is down. A process that reserves nothing may still take it.
func allocatePorts(base, nodes int) ([]int, error) {
	ports := make([]int, 0, 3*nodes)
	if base != 0 {
		for i := range nodes {
			ports = append(ports, base+i, base+ClusterPortOffset+i, base+MonitorPortOffset+i)
		}
		return ports, nil
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	lo, hi := belowEphemeral()
	for tries := 0; len(ports) < 3*nodes; tries++ {
		addr := hostPort(0)
		if hi > lo {
			addr = hostPort(lo + rand.IntN(hi-lo))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if hi > lo && tries < 1000 {
				continue // taken: try another
			}
			return nil, fmt.Errorf("natsnode: free port: %w", err)
		}
		ls = append(ls, l)
		if hi > lo && !reservePort(l.Addr().(*net.TCPAddr).Port) && tries < 1000 {
			continue // a node that is down owns it
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// belowEphemeral is a range of ports [lo, hi) under Linux's ephemeral
// range (ip_local_port_range, 32768-60999 by default) and above the
// well-known ones; lo == hi when there is none (another OS, or a range
// that starts low).
func belowEphemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, 0
	}
	start, err := strconv.Atoi(f[0])
	if err != nil || start < 12000 {
		return 0, 0
	}
	return 10000, start
}

func (c *Cluster) config(n *Node) string {
	q := strconv.Quote
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %s\n", q(n.Name))
	fmt.Fprintf(&b, "listen: %s\n", q(hostPort(n.ClientPort)))
	fmt.Fprintf(&b, "http: %s\n", q(hostPort(n.MonitorPort)))
	// topicgate's largest message (12 MiB) must fit in one NATS message.
	fmt.Fprintf(&b, "max_payload: %d\n", MaxPayload)
	if len(c.cfg.Users) > 0 {
		names := make([]string, 0, len(c.cfg.Users))
		for u := range c.cfg.Users {
			names = append(names, u)
		}
		sort.Strings(names)
		b.WriteString("authorization {\n  users: [\n")
		for _, u := range names {
			fmt.Fprintf(&b, "    {user: %s, password: %s}\n", q(u), q(c.cfg.Users[u]))
		}
		b.WriteString("  ]\n}\n")
	}
	if c.cfg.TLSCert != "" {
		fmt.Fprintf(&b, "tls {\n  cert_file: %s\n  key_file: %s\n", q(c.cfg.TLSCert), q(c.cfg.TLSKey))
		if c.cfg.TLSVerifyCA != "" {
			fmt.Fprintf(&b, "  ca_file: %s\n  verify: true\n", q(c.cfg.TLSVerifyCA))
		}
		b.WriteString("}\n")
	}
	if op := c.cfg.Operator; op != nil {
		fmt.Fprintf(&b, "operator: %s\n", q(op.JWT))
		fmt.Fprintf(&b, "system_account: %s\n", q(op.SystemAccount))
		b.WriteString("resolver: MEMORY\nresolver_preload: {\n")
		keys := make([]string, 0, len(op.Accounts))
		for k := range op.Accounts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", k, q(op.Accounts[k]))
		}
		b.WriteString("}\n")
	}
	if !c.cfg.NoJetStream {
		b.WriteString("jetstream {\n")
		fmt.Fprintf(&b, "  store_dir: %s\n", q(n.Dir))
		if c.cfg.Sync == SyncAlways {
			b.WriteString("  sync_interval: always\n")
		}
		if c.cfg.JetStreamExtra != "" {
			fmt.Fprintf(&b, "  %s\n", c.cfg.JetStreamExtra)
		}
		b.WriteString("}\n")
	}
	if len(c.nodes) > 1 {
		var routes []string
		for _, o := range c.nodes {
			if o != n {
				routes = append(routes, q("nats-route://"+hostPort(o.ClusterPort)))
			}
		}
		b.WriteString("cluster {\n")
		fmt.Fprintf(&b, "  name: %s\n", q(c.cfg.ClusterName))
		fmt.Fprintf(&b, "  listen: %s\n", q(hostPort(n.ClusterPort)))
		fmt.Fprintf(&b, "  routes: [%s]\n", strings.Join(routes, ", "))
		b.WriteString("}\n")
	}
	return b.String()
}

// spawn starts n's process; it does not wait for readiness.
func (c *Cluster) spawn(n *Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runningLocked() {
		return fmt.Errorf("natsnode: node %d is already running", n.Index)
	}
	logf, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("natsnode: %w", err)
	}
	defer logf.Close() // the child holds its own copy
	cmd := exec.Command(c.cfg.Binary, "-c", n.confPath())
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := startProcess(cmd); err != nil {
		return fmt.Errorf("natsnode: starting node %d (%s): %w", n.Index, c.cfg.Binary, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait() // its status is of no use: killed nodes exit by signal
		close(exited)
	}()
	n.cmd, n.exited = cmd, exited
	return nil
}

// waitHealthy polls n's /healthz until it answers 200, n's process exits, or
// ReadyTimeout passes.
func (c *Cluster) waitHealthy(ctx context.Context, n *Node) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ReadyTimeout)
	defer cancel()
	n.mu.Lock()
	exited := n.exited
	n.mu.Unlock()
	url := fmt.Sprintf("http://%s/healthz", hostPort(n.MonitorPort))
	var gone bool
	err := poll(ctx, func() error {
		select {
		case <-exited:
			gone = true
			return nil // stop polling
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		body := readSmall(resp)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("node %d: %s: %s", n.Index, resp.Status, body)
		}
		return nil
	})
	switch {
	case gone:
		return fmt.Errorf("natsnode: node %d exited while starting; its log ends:\n%s", n.Index, c.LogTail(n.Index, 20))
	case err != nil:
		return fmt.Errorf("%w; node %d's log ends:\n%s", err, n.Index, c.LogTail(n.Index, 20))
	}
	return nil
}

// URL is URLs joined by commas: what nats.Connect and --store take.
func (c *Cluster) URL() string { return strings.Join(c.URLs(), ",") }
