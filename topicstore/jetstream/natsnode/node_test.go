package natsnode

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestClusterLifecycle starts three nodes, finds the meta leader, kills it,
// waits for the other two to elect a new one, restarts the killed node and
// stops everything: the harness's own contract.
func TestClusterLifecycle(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	c, err := Start(ctx, Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	t.Logf("3 nodes healthy in %v", time.Since(t0))
	if got := len(c.URLs()); got != 3 {
		t.Fatalf("URLs: %d", got)
	}
	conf, _ := os.ReadFile(c.Node(0).confPath())
	for _, want := range []string{"jetstream {", "cluster {", "routes: ["} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	leader, err := c.MetaLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(leader); err != nil {
		t.Fatal(err)
	}
	if c.Node(leader).Running() {
		t.Fatal("killed node still running")
	}
	t1 := time.Now()
	next := waitLeader(t, func() (int, error) { return c.MetaLeader(ctx) })
	t.Logf("meta leader %d killed, node %d elected after %v", leader, next, time.Since(t1))
	if next == leader {
		t.Fatalf("meta leader is still the killed node %d", leader)
	}
	t2 := time.Now()
	if err := c.Restart(ctx, leader); err != nil {
		t.Fatal(err)
	}
	t.Logf("node %d restarted and healthy in %v", leader, time.Since(t2))
	t3 := time.Now()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %v", time.Since(t3))
	for i := range c.N() {
		if c.Node(i).Running() {
			t.Errorf("node %d still running after Stop", i)
		}
	}
}

func waitLeader(t *testing.T, f func() (int, error)) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		i, err := f()
		if err == nil {
			return i
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		<-tick.C
	}
}

// TestSingleNode: one node runs JetStream standalone (no cluster block, no
// meta group to wait for) and restarts with its store.
func TestSingleNode(t *testing.T) {
	ctx := context.Background()
	c, err := Start(ctx, Config{Dir: t.TempDir(), Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	conf, _ := os.ReadFile(c.Node(0).confPath())
	if strings.Contains(string(conf), "cluster {") || !strings.Contains(string(conf), "jetstream {") {
		t.Errorf("config:\n%s", conf)
	}
	if err := c.Kill(0); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
}

// TestServerVersionMatchesGoMod: the version a built binary installs is
// the one go.mod pins for the tests and the checkout.
func TestServerVersionMatchesGoMod(t *testing.T) {
	b, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := serverModule + " " + ServerVersion
	if !strings.Contains(string(b), want) {
		t.Fatalf("go.mod does not require %s: update natsnode.ServerVersion", want)
	}
}
