package kafkaload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Run runs one workload and returns its result; a failure is in the
// result (OK false, Err).
func Run(ctx context.Context, cfg *Config, workload string) *Result {
	res := &Result{Workload: workload, Target: "kafka", OK: true, Clients: cfg.Clients, Size: cfg.Size}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	err := cfg.check()
	if err == nil {
		switch workload {
		case "produce":
			err = produce(ctx, cfg, res)
		case "fetch":
			err = fetch(ctx, cfg, res)
		case "rpw":
			err = rpw(ctx, cfg, res)
		default:
			err = fmt.Errorf("unknown workload %q", workload)
		}
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("workload timed out after %s: %w", cfg.Timeout, err)
		}
		res.fail(err)
	}
	return res
}

func (cfg *Config) check() error {
	switch {
	case len(cfg.Brokers) == 0:
		return errors.New("no brokers")
	case cfg.Topic == "":
		return errors.New("no topic")
	case cfg.Clients < 1, cfg.Messages < 1, cfg.Size < 1, cfg.Batch < 1, cfg.Partitions < 1:
		return errors.New("clients, messages, size, batch and partitions must be positive")
	case cfg.Linger < 0, cfg.Duration < 0:
		return errors.New("linger and duration must not be negative")
	}
	_, err := ParseCompression(cfg.Compression)
	return err
}

// ParseCompression maps a codec's name to franz-go's.
func ParseCompression(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("unknown compression %q (none, gzip, snappy, lz4, zstd)", name)
}

// opts are the options every client of cfg starts from.
func (cfg *Config) opts(more ...kgo.Opt) []kgo.Opt {
	codec, _ := ParseCompression(cfg.Compression)
	o := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.ProducerBatchCompression(codec)}
	o = append(o, cfg.Opts...)
	return append(o, more...)
}

// newClients creates n clients with the options opt(i) adds for client i,
// and connects each (untimed, as the bench connects before it starts the
// clock).
func newClients(ctx context.Context, n int, opt func(i int) []kgo.Opt) ([]*kgo.Client, error) {
	cls := make([]*kgo.Client, 0, n)
	for i := range n {
		cl, err := kgo.NewClient(opt(i)...)
		if err != nil {
			closeClients(cls)
			return nil, err
		}
		cls = append(cls, cl)
		if err := cl.Ping(ctx); err != nil {
			closeClients(cls)
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	return cls, nil
}

func closeClients(cls []*kgo.Client) {
	for _, cl := range cls {
		cl.Close()
	}
}

// withAdmin runs fn with an admin client of cfg's brokers.
func withAdmin(cfg *Config, fn func(adm *kadm.Client) error) error {
	cl, err := kgo.NewClient(cfg.opts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(kadm.NewClient(cl))
}

// recreate drops the topics if they exist and creates them with cfg's
// partition count (replication factor: the broker's default).
func recreate(ctx context.Context, cfg *Config, topics ...string) error {
	return withAdmin(cfg, func(adm *kadm.Client) error {
		dr, err := adm.DeleteTopics(ctx, topics...)
		if err != nil {
			return fmt.Errorf("delete topics: %w", err)
		}
		for _, d := range dr {
			if d.Err != nil && !errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				return fmt.Errorf("delete topic %s: %w", d.Topic, d.Err)
			}
		}
		for _, t := range topics {
			if _, err := adm.CreateTopic(ctx, int32(cfg.Partitions), -1, nil, t); err != nil {
				return fmt.Errorf("create topic %s: %w", t, err)
			}
		}
		return nil
	})
}

// span is a partition's offsets [start, end).
type span struct{ start, end int64 }

// offsets lists the start and end offset of every partition of topic.
func offsets(ctx context.Context, cfg *Config, topic string) (map[int32]span, error) {
	out := map[int32]span{}
	err := withAdmin(cfg, func(adm *kadm.Client) error {
		starts, err := adm.ListStartOffsets(ctx, topic)
		if err == nil {
			err = starts.Error()
		}
		if err != nil {
			return fmt.Errorf("list start offsets of %s: %w", topic, err)
		}
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return fmt.Errorf("list end offsets of %s: %w", topic, err)
		}
		if len(ends[topic]) == 0 {
			return fmt.Errorf("topic %s has no partitions", topic)
		}
		for p, e := range ends[topic] {
			s, _ := starts.Lookup(topic, p)
			out[p] = span{s.Offset, e.Offset}
		}
		return nil
	})
	return out, err
}

func total(spans map[int32]span) (n int64) {
	for _, s := range spans {
		n += s.end - s.start
	}
	return n
}

// split is how many of total messages client i of n sends.
func split(total, i, n int) int {
	k := total / n
	if i < total%n {
		k++
	}
	return k
}

// produce: each client an idempotent producer with acks=all. With Linger
// 0 a client sends Batch records, flushes (one Produce request) and waits
// for their acknowledgement before the next batch, as an ingest-batch
// client sends one INSERT of 100 rows at a time; latency is per batch.
// With Linger > 0 it produces asynchronously, franz-go batching with that
// linger and pipelining requests; latency is per record. The clients
// send Messages in all or, with Duration, as many as they can in it. The
// clock runs from the first record to the last acknowledgement.
func produce(ctx context.Context, cfg *Config, res *Result) error {
	if err := recreate(ctx, cfg, cfg.Topic); err != nil {
		return err
	}
	cls, err := newClients(ctx, cfg.Clients, func(int) []kgo.Opt {
		o := []kgo.Opt{kgo.DefaultProduceTopic(cfg.Topic), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.MaxBufferedRecords(max(cfg.Batch, 10000))}
		if cfg.Linger == 0 {
			o = append(o, kgo.ManualFlushing())
		} else {
			o = append(o, kgo.ProducerLinger(cfg.Linger))
		}
		return cfg.opts(o...)
	})
	if err != nil {
		return err
	}
	defer closeClients(cls)
	for i, cl := range cls { // the producer id, before the clock starts
		if _, _, err := cl.ProducerID(ctx); err != nil {
			return fmt.Errorf("client %d: init producer id: %w", i, err)
		}
	}
	lats := make([][]time.Duration, len(cls))
	var acked, ops atomic.Int64
	var fe firstErr
	var wg sync.WaitGroup
	start := time.Now()
	for i, cl := range cls {
		q := quota{n: split(cfg.Messages, i, len(cls))}
		if cfg.Duration > 0 {
			q.deadline = start.Add(cfg.Duration)
		}
		p := newPayloads("produce", i, cfg.Size)
		wg.Go(func() {
			var err error
			if cfg.Linger == 0 {
				err = produceBatches(ctx, cl, p, q, cfg.Batch, &lats[i], &acked, &ops)
			} else {
				err = produceAsync(ctx, cl, p, q, &lats[i], &acked, &ops)
			}
			if err != nil {
				fe.set(fmt.Errorf("client %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	kind := "batch"
	if cfg.Linger > 0 {
		kind = "record"
	}
	res.record(acked.Load(), ops.Load(), elapsed, cfg.Size, kind, lats...)
	res.Notes = fmt.Sprintf("acks=all, idempotent; %d Produce batches", ops.Load())
	if cfg.Linger > 0 {
		res.Notes = fmt.Sprintf("acks=all, idempotent; linger %s", cfg.Linger)
	}
	if err := fe.get(); err != nil {
		return err
	}
	spans, err := offsets(ctx, cfg, cfg.Topic)
	if err != nil {
		return err
	}
	if got := total(spans); got != acked.Load() {
		return fmt.Errorf("count mismatch: %s holds %d records, %d were acknowledged", cfg.Topic, got, acked.Load())
	}
	return nil
}

// quota is what one producing client sends: n records, or, with a
// deadline, batches until then (an operation in flight at the deadline
// completes and counts, as in the bench's timed workloads).
type quota struct {
	n        int
	deadline time.Time
}

// next is how many records to send after sent, at most batch; 0 to stop.
func (q quota) next(sent, batch int) int {
	if !q.deadline.IsZero() {
		if time.Now().Before(q.deadline) {
			return batch
		}
		return 0
	}
	return min(batch, q.n-sent)
}

func produceBatches(ctx context.Context, cl *kgo.Client, p *payloads, q quota, batch int, lats *[]time.Duration, acked, ops *atomic.Int64) error {
	for sent := 0; ; {
		k := q.next(sent, batch)
		if k <= 0 {
			return nil
		}
		var e kgo.FirstErrPromise
		t0 := time.Now()
		for range k {
			cl.Produce(ctx, &kgo.Record{Value: p.take()}, e.Promise())
		}
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		if err := e.Err(); err != nil {
			return err
		}
		*lats = append(*lats, time.Since(t0))
		sent += k
		acked.Add(int64(k))
		ops.Add(1)
	}
}

func produceAsync(ctx context.Context, cl *kgo.Client, p *payloads, q quota, lats *[]time.Duration, acked, ops *atomic.Int64) error {
	var mu sync.Mutex
	var fe firstErr
	for sent := 0; q.next(sent, 1) > 0; sent++ {
		t0 := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: p.take()}, func(_ *kgo.Record, err error) {
			if err != nil {
				fe.set(err)
				return
			}
			d := time.Since(t0)
			mu.Lock()
			*lats = append(*lats, d)
			mu.Unlock()
			acked.Add(1)
			ops.Add(1)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return fe.get()
}

// fetch: reads every partition of the topic from its start to the end it
// had when the fetch began; partition p is read by client p % clients
// (with more clients than partitions the rest idle, as in the bench's
// consume). No group and no offset commits. The clock runs from the
// clients' start to the last record.
func fetch(ctx context.Context, cfg *Config, res *Result) error {
	spans, err := offsets(ctx, cfg, cfg.Topic)
	if err != nil {
		return err
	}
	want := total(spans)
	if want == 0 {
		return fmt.Errorf("topic %s is empty: run produce first", cfg.Topic)
	}
	n := min(cfg.Clients, len(spans))
	assign := make([]map[int32]kgo.Offset, n)
	for p, s := range spans {
		if s.end > s.start {
			i := int(p) % n
			if assign[i] == nil {
				assign[i] = map[int32]kgo.Offset{}
			}
			assign[i][p] = kgo.NewOffset().At(s.start)
		}
	}
	var work []map[int32]kgo.Offset
	for _, a := range assign {
		if a != nil {
			work = append(work, a)
		}
	}
	// The clients are given their partitions once the clock runs: a
	// client created with them would start fetching at once.
	cls, err := newClients(ctx, len(work), func(int) []kgo.Opt { return cfg.opts() })
	if err != nil {
		return err
	}
	defer closeClients(cls)
	var got, polls, dups atomic.Int64
	var fe firstErr
	var wg sync.WaitGroup
	start := time.Now()
	for i, cl := range cls {
		cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: work[i]})
		wg.Go(func() {
			next := map[int32]int64{}
			left := 0
			for p := range work[i] {
				next[p] = spans[p].start
				left++
			}
			for left > 0 {
				fs := cl.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					fe.set(fmt.Errorf("client %d: %w", i, err))
					return
				}
				for _, e := range fs.Errors() {
					fe.set(fmt.Errorf("client %d: fetch %s/%d: %w", i, e.Topic, e.Partition, e.Err))
					return
				}
				polls.Add(1)
				var k int64
				fs.EachRecord(func(r *kgo.Record) {
					nx, ok := next[r.Partition]
					switch {
					case !ok || r.Offset >= spans[r.Partition].end:
						return // produced after the fetch began
					case r.Offset < nx:
						dups.Add(1)
						return
					}
					k++
					next[r.Partition] = r.Offset + 1
					if r.Offset+1 >= spans[r.Partition].end {
						left--
					}
				})
				got.Add(k)
			}
		})
	}
	wg.Wait()
	res.record(got.Load(), polls.Load(), time.Since(start), cfg.Size, "")
	res.Clients = cfg.Clients
	res.Notes = fmt.Sprintf("%d partitions over %d busy clients; %d polls", len(spans), len(cls), polls.Load())
	res.Duplicates = dups.Load()
	if err := fe.get(); err != nil {
		return err
	}
	if got.Load() != want {
		return fmt.Errorf("count mismatch: fetched %d records, the topic held %d", got.Load(), want)
	}
	return nil
}
