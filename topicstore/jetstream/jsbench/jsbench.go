package jsbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"topicgate/topicstore/jetstream/jsext"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Modes.
const (
	Single = "single" // one synchronous publish per message
	Batch  = "batch"  // atomic batches of Config.Batch messages
)

// Config is one run. The zero values take the bench's shapes
// (../shared/bench: 16 clients, 100-byte payloads, 4 partitions, 100 rows
// per batch INSERT).
type Config struct {
	URL        string // nats://... list, comma-separated
	Mode       string // Single or Batch
	Clients    int    // concurrent clients, one connection each (16)
	Size       int    // payload bytes (100)
	Batch      int    // messages per atomic batch (100)
	Partitions int    // streams, one per partition, client k writing to k%Partitions (4)
	Replicas   int    // stream replicas (3)
	// Messages stops after this many messages in all (rounded up to whole
	// operations); 0 runs for Duration (10s).
	Messages int
	Duration time.Duration
	// Direct connects each client to the node leading its stream, saving
	// the hop over a route that a client of another node pays.
	Direct bool
}

func (c *Config) defaults() error {
	if c.Mode != Single && c.Mode != Batch {
		return fmt.Errorf("jsbench: mode %q: want %q or %q", c.Mode, Single, Batch)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Clients, 16)
	def(&c.Size, 100)
	def(&c.Batch, 100)
	def(&c.Partitions, 4)
	def(&c.Replicas, 3)
	if c.Messages == 0 && c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Mode == Single {
		c.Batch = 1
	}
	return nil
}

// Result of a run.
type Result struct {
	Config
	Msgs     int64
	Ops      int64
	Elapsed  time.Duration
	P50, P99 time.Duration // per operation (a publish, or a whole batch)
}

// MsgsPerSec is Msgs over Elapsed.
func (r Result) MsgsPerSec() float64 { return float64(r.Msgs) / r.Elapsed.Seconds() }

func (r Result) String() string {
	what := "single publishes"
	if r.Direct {
		what += " (direct)"
	}
	if r.Mode == Batch {
		what = fmt.Sprintf("atomic batches of %d", r.Batch)
		if r.Direct {
			what += " (direct)"
		}
	}
	return fmt.Sprintf("%-32s %2d clients  %3dB  R%d  %4d streams  %9.0f msgs/s  %8d msgs  %6.2fs  p50 %6.2fms  p99 %6.2fms",
		what, r.Clients, r.Size, r.Replicas, r.Partitions, r.MsgsPerSec(), r.Msgs, r.Elapsed.Seconds(),
		ms(r.P50), ms(r.P99))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

const streamPrefix = "TGBENCH_"

// Run creates the streams (deleting leftovers of an earlier run), runs the
// clients and deletes the streams.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	admin, js, err := connect(cfg.URL)
	if err != nil {
		return Result{}, err
	}
	defer admin.Close()
	var names []string
	for p := range cfg.Partitions {
		name := fmt.Sprintf("%s%d", streamPrefix, p)
		names = append(names, name)
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
			return Result{}, fmt.Errorf("jsbench: %w", err)
		}
		if err := createStream(ctx, js, natsjs.StreamConfig{
			Name:               name,
			Subjects:           []string{subject(p)},
			Replicas:           cfg.Replicas,
			Storage:            natsjs.FileStorage,
			AllowAtomicPublish: true,
		}); err != nil {
			return Result{}, fmt.Errorf("jsbench: creating %s: %w", name, err)
		}
	}
	defer func() {
		for _, name := range names {
			js.DeleteStream(context.WithoutCancel(ctx), name)
		}
	}()
	urls := make([]string, cfg.Partitions)
	for p := range urls {
		urls[p] = cfg.URL
	}
	if cfg.Direct {
		if urls, err = leaderURLs(ctx, js, cfg.URL, names); err != nil {
			return Result{}, err
		}
	}
	return run(ctx, cfg, urls)
}

// leaderURLs returns, for each stream, the client URL of the node leading it.
func leaderURLs(ctx context.Context, js natsjs.JetStream, list string, streams []string) ([]string, error) {
	byName := map[string]string{}
	for _, u := range strings.Split(list, ",") {
		nc, err := nats.Connect(u, nats.DontRandomize(), nats.NoReconnect())
		if err != nil {
			return nil, fmt.Errorf("jsbench: %w", err)
		}
		byName[nc.ConnectedServerName()] = u
		nc.Close()
	}
	out := make([]string, len(streams))
	for i, name := range streams {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("jsbench: %w", err)
		}
		info := s.CachedInfo()
		if info.Cluster == nil || byName[info.Cluster.Leader] == "" {
			return nil, fmt.Errorf("jsbench: stream %s: no leader among %s", name, list)
		}
		out[i] = byName[info.Cluster.Leader]
	}
	return out, nil
}

func connect(url string) (*nats.Conn, natsjs.JetStream, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, nil, fmt.Errorf("jsbench: %w", err)
	}
	js, err := natsjs.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jsbench: %w", err)
	}
	return nc, js, nil
}

// createStream creates the stream, again after a pause while JetStream
// answers that it has no suitable peers (10005: on a busy machine a node
// it has not heard from for a moment counts as offline; seen in a
// clean-clone CI run), up to createTries times.
func createStream(ctx context.Context, js natsjs.JetStream, cfg natsjs.StreamConfig) error {
	pause := 50 * time.Millisecond
	for try := 1; ; try++ {
		_, err := js.CreateStream(ctx, cfg)
		// No peers yet, or no answer in the API's timeout (a cluster
		// still forming its routes): ask again; a create of the same
		// config that did land answers with the stream.
		again := jsext.ErrorCode(err) == jsext.ErrCodeNoSuitablePeers || errors.Is(err, context.DeadlineExceeded)
		if err == nil || !again || try == createTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// createTries bounds createStream's tries (about 1.5 s of pauses, and
// the API timeout of each try that was not answered).
const createTries = 5

func subject(partition int) string { return fmt.Sprintf("tgbench.%d", partition) }

type client struct {
	nc   *nats.Conn
	js   natsjs.JetStream
	msgs []*nats.Msg
	lat  []time.Duration
}

// run runs the clients, client i connecting to urls[i%Partitions].
func run(ctx context.Context, cfg Config, urls []string) (Result, error) {
	rng := rand.New(rand.NewPCG(1, 2)) // the same bytes every run
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		nc, js, err := connect(urls[i%cfg.Partitions])
		if err != nil {
			return Result{}, err
		}
		defer nc.Close()
		cl := &client{nc: nc, js: js}
		for range cfg.Batch {
			data := make([]byte, cfg.Size)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			cl.msgs = append(cl.msgs, &nats.Msg{Subject: subject(i % cfg.Partitions), Data: data})
		}
		clients[i] = cl
	}

	var (
		left     atomic.Int64 // operations not yet claimed, when counting messages
		stop     atomic.Bool
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	ops := int64(cfg.Messages+cfg.Batch-1) / int64(cfg.Batch)
	left.Store(ops)
	claim := func() bool {
		if stop.Load() {
			return false
		}
		if cfg.Messages > 0 {
			return left.Add(-1) >= 0
		}
		return true
	}
	start := time.Now()
	if cfg.Messages == 0 {
		timer := time.AfterFunc(cfg.Duration, func() { stop.Store(true) })
		defer timer.Stop()
	}
	for _, cl := range clients {
		wg.Go(func() {
			for claim() {
				t0 := time.Now()
				err := cl.publish(ctx, cfg.Mode)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				cl.lat = append(cl.lat, time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return Result{}, fmt.Errorf("jsbench: %w", firstErr)
	}
	var all []time.Duration
	for _, cl := range clients {
		all = append(all, cl.lat...)
	}
	slices.Sort(all)
	r := Result{Config: cfg, Ops: int64(len(all)), Msgs: int64(len(all) * cfg.Batch), Elapsed: elapsed}
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r, nil
}

func (cl *client) publish(ctx context.Context, mode string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if mode == Single {
		_, err := cl.js.PublishMsg(ctx, cl.msgs[0])
		return err
	}
	_, err := jsext.PublishAtomic(ctx, cl.nc, cl.msgs)
	return err
}

// ParseModes splits "single,batch" (or "all").
func ParseModes(s string) ([]string, error) {
	if s == "all" || s == "" {
		return []string{Single, Batch}, nil
	}
	modes := strings.Split(s, ",")
	for _, m := range modes {
		if m != Single && m != Batch {
			return nil, fmt.Errorf("mode %q: want %s, %s or all", m, Single, Batch)
		}
	}
	return modes, nil
}
