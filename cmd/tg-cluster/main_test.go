package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"topicgate/topicstore/jetstream/jsext"
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
// --store list, the cluster behind it passes jsext.Check, its nodes
// fsync every write unless told otherwise, a node SIGKILLed is started
// again, and SIGTERM stops the command and its nodes.
func TestServeUntilSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-dir", dir, "-base-port", "0")
	cmd.Env = append(os.Environ(), "TG_CLUSTER_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
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
	nc, err := jsext.Connect(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	conf, err := os.ReadFile(filepath.Join(dir, "n0", "nats-server.conf"))
	if err != nil || !strings.Contains(string(conf), "sync_interval: always") {
		t.Errorf("by default the nodes sync every write: node config %q (%v)", conf, err)
	}

	// A node that dies is started again.
	out, err := exec.Command("pgrep", "-f", filepath.Join(dir, "n1", "nats-server.conf")).Output()
	pid, perr := strconv.Atoi(strings.Fields(string(out) + " x")[0])
	if err != nil || perr != nil {
		t.Fatalf("node 1's pid: %q %v %v", out, err, perr)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "tg-1 is back") {
		if time.Now().After(deadline) {
			t.Fatalf("node 1 not started again within 60s\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, u := range urls {
		nc, err := jsext.Connect(ctx, []string{u})
		if err != nil {
			t.Fatalf("%s after the restart: %v", u, err)
		}
		nc.Close()
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
	if _, err := jsext.Connect(ctx, urls); !errors.Is(err, jsext.ErrUnreachable) {
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

// lockedBuffer is a buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
