package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"topicgate/topicstore/jetstream/jsbench"
	"topicgate/topicstore/jetstream/natsnode"
)

func main() {
	args := os.Args[1:]
	var err error
	if len(args) > 0 && args[0] == "bench" {
		err = bench(args[1:])
	} else {
		err = serve(args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tg-cluster:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("bad usage")

// clusterFlags are the flags shared by both forms.
type clusterFlags struct {
	dir      string
	nodes    int
	basePort int
	sync     string
}

func (c *clusterFlags) register(fs *flag.FlagSet, basePort int) {
	fs.StringVar(&c.dir, "dir", "", "directory for the nodes' configs, logs and stores (default: a temporary one, removed on exit)")
	fs.IntVar(&c.nodes, "nodes", 3, "number of nodes")
	fs.IntVar(&c.basePort, "base-port", basePort, fmt.Sprintf("client port of node 0 (routes +%d, HTTP monitoring +%d); 0 picks free ports", natsnode.ClusterPortOffset, natsnode.MonitorPortOffset))
	fs.StringVar(&c.sync, "sync", natsnode.SyncAlways, "JetStream sync_interval: always (fsync every write before its ack: what survives losing power on every node at once), or default (nats-server's: a sync every 2 minutes, faster)")
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return nil
}

// start starts the cluster described by cf; stop stops it and removes a
// temporary directory.
func (cf *clusterFlags) start(ctx context.Context) (c *natsnode.Cluster, stop func(), err error) {
	dir, temp := cf.dir, false
	if dir == "" {
		if dir, err = os.MkdirTemp("", "tg-cluster-"); err != nil {
			return nil, nil, err
		}
		temp = true
	}
	t0 := time.Now()
	c, err = natsnode.Start(ctx, natsnode.Config{Dir: dir, Nodes: cf.nodes, BasePort: cf.basePort, Sync: cf.sync})
	if err != nil {
		if temp {
			os.RemoveAll(dir)
		}
		return nil, nil, err
	}
	bin, _ := natsnode.Binary()
	leader := "none"
	if i, err := c.MetaLeader(ctx); err == nil {
		leader = c.Node(i).Name
	}
	fmt.Fprintf(os.Stderr, "tg-cluster: %d nodes (%s, sync %s) healthy in %.1fs; JetStream meta leader %s\n",
		c.N(), bin, cf.sync, time.Since(t0).Seconds(), leader)
	for i := range c.N() {
		n := c.Node(i)
		fmt.Fprintf(os.Stderr, "  %s: %s  routes :%d  http://127.0.0.1:%d  %s  (log %s)\n",
			n.Name, n.URL(), n.ClusterPort, n.MonitorPort, n.Dir, n.LogPath())
	}
	return c, func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "tg-cluster:", err)
		}
		if temp {
			os.RemoveAll(dir)
		}
	}, nil
}

func serve(args []string) error {
	fs := flag.NewFlagSet("tg-cluster", flag.ContinueOnError)
	var cf clusterFlags
	cf.register(fs, DefaultBasePort)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: tg-cluster [flags]        run a local NATS JetStream cluster for topicgate until SIGINT or SIGTERM\n       tg-cluster bench [flags]  measure the engine's ceiling (tg-cluster bench -h)\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	c, stop, err := cf.start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Println(c.URL())
	fmt.Fprintf(os.Stderr, "tg-cluster: topicgate serve --store %s --nats-monitor %s\ntg-cluster: running until SIGINT or SIGTERM; a node that dies is started again\n", c.URL(), strings.Join(c.MonitorURLs(), ","))
	var wg sync.WaitGroup
	for i := range c.N() {
		wg.Go(func() { keepRunning(ctx, c, i) })
	}
	<-ctx.Done()
	wg.Wait()
	fmt.Fprintln(os.Stderr, "tg-cluster: stopping the nodes")
	return nil
}

// DefaultBasePort is node 0's client port: not NATS's own 4222, so that a
// NATS server already running on the machine keeps its ports (routes and
// monitoring follow at +2000 and +4000).
const DefaultBasePort = 14222

// keepRunning starts node i again whenever its process exits, until ctx
// ends (the nodes are then stopped on purpose).
func keepRunning(ctx context.Context, c *natsnode.Cluster, i int) {
	n := c.Node(i)
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.Exited():
		}
		if ctx.Err() != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "tg-cluster: %s exited (log %s); starting it again\n", n.Name, n.LogPath())
		rctx, cancel := context.WithTimeout(ctx, restartWait)
		err := c.Restart(rctx, i)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "tg-cluster: %s: %v\n", n.Name, err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		fmt.Fprintf(os.Stderr, "tg-cluster: %s is back\n", n.Name)
	}
}

// restartWait bounds one restart of a node (it is healthy once a quorum
// runs).
const restartWait = time.Minute

func bench(args []string) error {
	fs := flag.NewFlagSet("tg-cluster bench", flag.ContinueOnError)
	var cf clusterFlags
	cf.register(fs, 0)
	store := fs.String("store", "", "nats:// URL list of a running cluster (default: start one as the other flags say)")
	modes := fs.String("mode", "all", "single, batch or all")
	var cfg jsbench.Config
	fs.IntVar(&cfg.Clients, "clients", 16, "concurrent clients, one connection each")
	fs.IntVar(&cfg.Size, "size", 100, "payload bytes per message")
	fs.IntVar(&cfg.Batch, "batch", 100, "messages per atomic batch")
	fs.IntVar(&cfg.Partitions, "partitions", 4, "streams (partitions); client k writes to k%partitions")
	fs.IntVar(&cfg.Replicas, "replicas", 3, "stream replicas")
	fs.BoolVar(&cfg.Direct, "direct", false, "connect each client to the node leading its stream")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "run time of each mode")
	if err := parse(fs, args); err != nil {
		return err
	}
	ms, err := jsbench.ParseModes(*modes)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	cfg.URL = *store
	if cfg.URL == "" {
		c, stop, err := cf.start(ctx)
		if err != nil {
			return err
		}
		defer stop()
		cfg.URL = c.URL()
	}
	for _, m := range ms {
		cfg.Mode = m
		r, err := jsbench.Run(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Println(r)
	}
	return nil
}
