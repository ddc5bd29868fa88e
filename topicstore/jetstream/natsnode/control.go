package natsnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Controlling a started cluster: its nodes and URLs, killing, pausing,
// resuming, restarting and stopping nodes, and their logs.

// N is the number of nodes.
func (c *Cluster) N() int { return len(c.nodes) }

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// URLs are the client URLs of all nodes, running or not.
func (c *Cluster) URLs() []string {
	urls := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		urls[i] = n.URL()
	}
	return urls
}

// MonitorURLs are the nodes' monitoring endpoints: what --nats-monitor
// takes.
func (c *Cluster) MonitorURLs() []string {
	urls := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		urls[i] = n.MonitorURL()
	}
	return urls
}

// Kill sends node i SIGKILL and waits until the process is gone.
func (c *Cluster) Kill(i int) error {
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.runningLocked() {
		return fmt.Errorf("natsnode: node %d is not running", i)
	}
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("natsnode: killing node %d: %w", i, err)
	}
	<-n.exited
	return nil
}

// Pause sends node i SIGSTOP: it keeps its connections open and answers
// nothing, as a node that hangs (a long GC pause, a VM frozen) does, until
// Resume.
func (c *Cluster) Pause(i int) error { return c.signal(i, syscall.SIGSTOP) }

// Resume sends node i SIGCONT.
func (c *Cluster) Resume(i int) error { return c.signal(i, syscall.SIGCONT) }

func (c *Cluster) signal(i int, sig syscall.Signal) error {
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.runningLocked() {
		return fmt.Errorf("natsnode: node %d is not running", i)
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("natsnode: %v to node %d: %w", sig, i, err)
	}
	return nil
}

// Restart starts node i again with the same ports and store (stopping it
// first if it runs) and waits until it reports healthy and the meta leader
// sees it current, which needs a JetStream quorum among the running nodes.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	n := c.nodes[i]
	if n.Running() {
		if err := c.stop([]*Node{n}); err != nil {
			return err
		}
	}
	if err := c.spawn(n); err != nil {
		return err
	}
	if err := c.waitHealthy(ctx, n); err != nil {
		return err
	}
	if !c.clustered() {
		return nil
	}
	return c.waitMetaFormed(ctx)
}

// stopTimeout bounds a graceful shutdown before SIGKILL.
const stopTimeout = 10 * time.Second

// Stop shuts every running node down (SIGTERM, then SIGKILL after 10s) and
// waits for all of them. The directories stay.
func (c *Cluster) Stop() error { return c.stop(c.nodes) }

func (c *Cluster) stop(nodes []*Node) error {
	var running []*Node
	for _, n := range nodes {
		n.mu.Lock()
		if n.runningLocked() {
			n.cmd.Process.Signal(syscall.SIGCONT) // a paused node must run to take SIGTERM
			n.cmd.Process.Signal(syscall.SIGTERM)
			running = append(running, n)
		}
		n.mu.Unlock()
	}
	deadline := time.NewTimer(stopTimeout)
	defer deadline.Stop()
	var errs []error
	for _, n := range running {
		select {
		case <-n.exited:
		case <-deadline.C:
			deadline.Reset(0) // the rest get no more grace either
			n.mu.Lock()
			n.cmd.Process.Signal(syscall.SIGKILL)
			n.mu.Unlock()
			<-n.exited
			errs = append(errs, fmt.Errorf("natsnode: node %d ignored SIGTERM for %v and was killed", n.Index, stopTimeout))
		}
	}
	return errors.Join(errs...)
}

func (c *Cluster) killAll() {
	for i, n := range c.nodes {
		if n.Running() {
			c.Resume(i) // a paused node must run to take SIGTERM
			c.Kill(i)
		}
	}
}

// LogTail returns the last lines of node i's log, for failure messages.
func (c *Cluster) LogTail(i, lines int) string {
	b, err := os.ReadFile(c.nodes[i].LogPath())
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
