package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"topicgate/topicstore/jetstream"
)

// The test binary doubles as the command: with TG_CLUSTER_AS_MAIN=1 it runs
// main with the arguments it was given.
func TestMain(m *testing.M) {
	if os.Getenv("TG_CLUSTER_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServeUntilSIGTERM runs tg-cluster as a user would: it prints the
// --store list, the cluster behind it passes jetstream.Check, and SIGTERM
// stops the command and its nodes.
func TestServeUntilSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-dir", dir, "-base-port", "0", "-sync", "always")
	cmd.Env = append(os.Environ(), "TG_CLUSTER_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var store string
	select {
	case store = <-lines:
	case err := <-exited:
		t.Fatalf("tg-cluster exited: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("no --store line after 60s\n%s", stderr.String())
	}
	urls := strings.Split(store, ",")
	if len(urls) != 3 {
		t.Fatalf("--store %q: want 3 URLs", store)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := jetstream.Connect(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	conf, err := os.ReadFile(filepath.Join(dir, "n0", "nats-server.conf"))
	if err != nil || !strings.Contains(string(conf), "sync_interval: always") {
		t.Errorf("-sync always: node config %q (%v)", conf, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20s after SIGTERM\n%s", stderr.String())
	}
	if _, err := jetstream.Connect(ctx, urls); !errors.Is(err, jetstream.ErrUnreachable) {
		t.Fatalf("after exit the nodes still answer: %v", err)
	}
	if !strings.Contains(stderr.String(), "stopping the nodes") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{{"-sync", "sometimes", "-base-port", "0"}, {"bench", "-mode", "fast"}, {"extra"}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TG_CLUSTER_AS_MAIN=1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("%q: %v, want a failure\n%s", args, err, out)
		}
		t.Logf("%q: %s", args, strings.TrimSpace(string(out)))
	}
}
