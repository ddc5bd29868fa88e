package jstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/natsnode"
)

// Option adjusts the nodes' configuration.
type Option func(*natsnode.Config)

// WithSync sets the nodes' sync_interval: natsnode.SyncAlways fsyncs every
// write, natsnode.SyncDefault (the default) leaves nats-server's.
func WithSync(s string) Option { return func(c *natsnode.Config) { c.Sync = s } }

// WithoutJetStream starts the nodes without JetStream.
func WithoutJetStream() Option { return func(c *natsnode.Config) { c.NoJetStream = true } }

// WithJetStreamExtra adds lines inside each node's jetstream { } block.
func WithJetStreamExtra(s string) Option {
	return func(c *natsnode.Config) { c.JetStreamExtra = s }
}

// WithBinary runs another nats-server binary than the module's (e.g. an
// old one, to test refusals).
func WithBinary(path string) Option { return func(c *natsnode.Config) { c.Binary = path } }

// WaitTimeout bounds every wait of this package (leaders, restarts).
const WaitTimeout = 30 * time.Second

// Cluster is a running cluster owned by one test: a failure of any of its
// methods fails the test, and the nodes stop when the test ends.
type Cluster struct {
	t     testing.TB
	nodes *natsnode.Cluster
}

// Start starts n nats-server nodes (n > 1: one cluster with routes between
// all of them) with JetStream in directories under t.TempDir(), and returns
// once each is healthy and JetStream has a meta leader. The server binary is
// built once per test binary from the module (natsnode.Binary).
func Start(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	cfg := natsnode.Config{Dir: t.TempDir(), Nodes: n}
	for _, o := range opts {
		o(&cfg)
	}
	nodes, err := natsnode.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, nodes: nodes}
	t.Cleanup(func() {
		if err := nodes.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			for i := range nodes.N() {
				t.Logf("node %d log ends:\n%s", i, nodes.LogTail(i, 30))
			}
		}
	})
	return c
}

// Nodes is the underlying natsnode cluster (ports, directories, error-returning methods).
func (c *Cluster) Nodes() *natsnode.Cluster { return c.nodes }

// URLs are the nodes' client URLs.
func (c *Cluster) URLs() []string { return c.nodes.URLs() }

// URL is URLs joined by commas.
func (c *Cluster) URL() string { return c.nodes.URL() }

// Kill sends node i SIGKILL and waits for it to be gone.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	if err := c.nodes.Kill(i); err != nil {
		c.t.Fatal(err)
	}
}

// Pause sends node i SIGSTOP (see natsnode.Cluster.Pause); Resume SIGCONT.
func (c *Cluster) Pause(i int) {
	c.t.Helper()
	if err := c.nodes.Pause(i); err != nil {
		c.t.Fatal(err)
	}
}

// Resume sends node i SIGCONT.
func (c *Cluster) Resume(i int) {
	c.t.Helper()
	if err := c.nodes.Resume(i); err != nil {
		c.t.Fatal(err)
	}
}

// Restart starts node i again (same ports, same store) and waits until it is
// healthy, which needs a JetStream quorum among the running nodes.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	if err := c.nodes.Restart(ctx, i); err != nil {
		c.t.Fatal(err)
	}
}

// Stop stops every node now (it also happens when the test ends).
func (c *Cluster) Stop() {
	c.t.Helper()
	if err := c.nodes.Stop(); err != nil {
		c.t.Fatal(err)
	}
}

// MetaLeader waits until a running node leads the JetStream meta group and
// returns its index.
func (c *Cluster) MetaLeader() int {
	c.t.Helper()
	return c.waitLeader(c.nodes.MetaLeader)
}

// StreamLeader waits until a running node leads stream and returns its index.
func (c *Cluster) StreamLeader(stream string) int {
	c.t.Helper()
	return c.waitLeader(func(ctx context.Context) (int, error) { return c.nodes.StreamLeader(ctx, stream) })
}

func (c *Cluster) waitLeader(f func(context.Context) (int, error)) int {
	c.t.Helper()
	var i int
	Eventually(c.t, WaitTimeout, func() error {
		var err error
		i, err = f(context.Background())
		return err
	})
	return i
}

// Connect opens a client connection to all nodes (it fails over between
// them), closed when the test ends.
func (c *Cluster) Connect(opts ...nats.Option) *nats.Conn {
	c.t.Helper()
	return c.connect(c.URL(), opts)
}

// ConnectTo opens a client connection to node i only.
func (c *Cluster) ConnectTo(i int, opts ...nats.Option) *nats.Conn {
	c.t.Helper()
	return c.connect(c.nodes.Node(i).URL(), append([]nats.Option{nats.DontRandomize()}, opts...))
}

func (c *Cluster) connect(url string, opts []nats.Option) *nats.Conn {
	c.t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// JetStream is jetstream.New on nc, failing the test on error.
func JetStream(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Eventually polls f every 10ms until it returns nil, failing the test with
// f's last error after timeout.
func Eventually(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", timeout, err)
		}
		<-tick.C
	}
}
