package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore/jetstream/jstest"
)

// serveRefused runs `topicgate serve --listen 127.0.0.1:0 args...` and
// returns what it printed; it must exit with status 1 within 20s, having
// listened on nothing.
func serveRefused(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, crashBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "TOPICGATE_AUTH=trust")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "serve %v must be refused; it printed:\n%s", args, out)
	require.NoError(t, ctx.Err(), "serve %v did not exit within 20s; it printed:\n%s", args, out)
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "%s", out)
	require.NotContains(t, string(out), "topicgate listening on")
	t.Logf("refused after %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(out)))
	return string(out)
}

// TestClusterServeRefusesMisconfiguration: `topicgate serve --store` on a
// cluster it cannot use exits with a message that says what is wrong and
// what to fix: at once when waiting cannot help, after
// --nats-start-timeout when no node answers.
func TestClusterServeRefusesMisconfiguration(t *testing.T) {
	t.Run("Unreachable", func(t *testing.T) {
		dead := "nats://alice:s3cret@" + crashFreePort(t)
		t0 := time.Now()
		out := serveRefused(t, "--store", dead+",nats://"+crashFreePort(t), "--nats-start-timeout", "2s")
		require.GreaterOrEqual(t, time.Since(t0), time.Second, "it waited for the cluster first")
		require.Contains(t, out, "waiting for the NATS cluster")
		require.Contains(t, out, "cannot reach the NATS cluster at nats://alice:xxxxx@")
		require.Contains(t, out, "start the nodes, or fix the --store URL list")
		require.NotContains(t, out, "s3cret", "a password in --store is never printed")
	})

	t.Run("NoJetStream", func(t *testing.T) {
		c := jstest.Start(t, 1, jstest.WithoutJetStream())
		out := serveRefused(t, "--store", c.URL(), "--replicas", "1")
		require.Contains(t, out, "JetStream is not enabled")
		require.Contains(t, out, c.URLs()[0])
		require.Contains(t, out, "start every node with -js, or give its config a jetstream { store_dir: ... } block")
	})

	t.Run("StreamOfAnotherApplication", func(t *testing.T) {
		c := jstest.Start(t, 3)
		js := jstest.JetStream(t, c.Connect())
		ctx := context.Background()
		_, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "TOPICGATE", Subjects: []string{"orders.>"}, Replicas: 3})
		require.NoError(t, err)
		out := serveRefused(t, "--store", c.URL())
		require.Contains(t, out, `the cluster already has a stream "TOPICGATE" that is not topicgate's (it has no "topicgate.store" metadata): give topicgate another stream (--nats-stream), or remove that one`)
		st, err := js.Stream(ctx, "TOPICGATE")
		require.NoError(t, err, "the other application's stream is left alone")
		require.Equal(t, []string{"orders.>"}, st.CachedInfo().Config.Subjects)

		// The fix the message names: another stream.
		s := newCrashServer(t)
		s.args = []string{"--store", c.URL(), "--nats-stream", "TOPICGATE2"}
		s.start()
		conn := s.connect(ctx)
		defer conn.Close(ctx)
		exec(t, conn, "CREATE TOPIC t")
		require.Equal(t, "INSERT 0 1", exec(t, conn, "INSERT INTO t (data) VALUES ('x')").String())
		st, err = js.Stream(ctx, "TOPICGATE")
		require.NoError(t, err)
		require.Zero(t, st.CachedInfo().State.Msgs, fmt.Sprintf("nothing of topicgate's in the other stream: %+v", st.CachedInfo().State))
	})
}

// TestClusterGatewayWaitsForCluster: a gateway started while every node of
// its cluster is down waits for them, saying so in its log (its /healthz
// answers 200 meanwhile, its /readyz 503), and serves once they are back
// and have formed again (3 s later here), with what was stored before,
// /readyz then 200.
func TestClusterGatewayWaitsForCluster(t *testing.T) {
	g := startGateways(t, 1, 2*time.Second)
	ctx := context.Background()
	c := connect(t, g.gws[0])
	exec(t, c, "CREATE TOPIC t")
	exec(t, c, "INSERT INTO t (data) VALUES ('before')")
	c.Close(ctx)
	require.NoError(t, g.gws[0].Close())
	for i := range 3 {
		g.nodes.Kill(i)
	}
	p := g.gatewayProcess()
	httpAddr := crashFreePort(t)
	p.args = append(p.args, "--http", httpAddr)
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + httpAddr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	back := make(chan time.Duration, 1)
	waiting := make(chan string, 1)
	go func() {
		time.Sleep(3 * time.Second)
		t0 := time.Now()
		// Together: a node is healthy only once a quorum runs.
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), jstest.WaitTimeout)
				defer cancel()
				if err := g.nodes.Nodes().Restart(ctx, i); err != nil {
					t.Errorf("restart node %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		back <- time.Since(t0)
	}()
	t0 := time.Now()
	go func() {
		// While it waits: alive, not ready.
		for time.Since(t0) < 2*time.Second {
			if code, _ := get("/healthz"); code == http.StatusOK {
				code, body := get("/readyz")
				waiting <- fmt.Sprintf("%d %s", code, body)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		waiting <- "no answer from /healthz"
	}()
	p.start()
	t.Logf("the gateway serves %v after it started; the nodes took %v to restart", time.Since(t0).Round(time.Millisecond), (<-back).Round(time.Millisecond))
	out, err := os.ReadFile(p.logPath)
	require.NoError(t, err)
	require.Contains(t, string(out), "waiting for the NATS cluster")
	require.Equal(t, "503 starting: the store is not open yet", <-waiting, "while it waits for the cluster: /healthz 200, /readyz 503")
	code, body := get("/readyz")
	require.Equal(t, http.StatusOK, code, body)
	v := p.connect(ctx)
	require.Equal(t, []string{"before"}, queryText(t, v, "SELECT convert_from(data, 'UTF8') FROM t"))
	exec(t, v, "INSERT INTO t (data) VALUES ('after')")
	require.Equal(t, []string{"2"}, queryText(t, v, "SELECT count(*) FROM t"))
}
