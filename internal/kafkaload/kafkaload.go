// Package kafkaload drives a Kafka broker (topicgate's Kafka door, or any
// Kafka) with franz-go the way ../shared/bench drives topicgate's SQL door:
// a fixed number of 100-byte messages from 16 clients, so that the two
// doors' figures can be compared on the same server. cmd/kafkaload is its
// command line; docs/performance/kafka.md describes the workloads.
//
// Workloads:
//
//   - produce: each client an idempotent producer (acks=all), sending
//     Batch records and waiting for their acknowledgement before the next
//     batch (one Produce request each, as one INSERT of ingest-batch), or
//     with Linger > 0 producing asynchronously with that linger; Messages
//     in all, or as many as Duration allows;
//   - fetch: reads the topic from its start to the end it had when the
//     fetch began, its partitions spread over the clients;
//   - rpw: read-process-write in Kafka transactions (kgo's
//     GroupTransactSession): consume from <topic>_rpw_in, produce each
//     value reversed to <topic>_rpw_out and commit the group's offsets in
//     the transaction; checks exactly once at the end.
package kafkaload

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Workloads lists the workload names in the order they are usually run
// (fetch reads what produce wrote).
var Workloads = []string{"produce", "fetch", "rpw"}

// Config is one run's settings.
type Config struct {
	Brokers     []string
	Topic       string        // produce and fetch; rpw uses Topic+"_rpw_in" and Topic+"_rpw_out"
	Partitions  int           // of the topics produce and rpw create
	Clients     int           // concurrent clients, one kgo.Client each
	Messages    int           // produced by produce, prefilled by rpw
	Duration    time.Duration // produce: above 0, produce for this long instead of Messages (as ingest-batch)
	Size        int           // value bytes per message
	Batch       int           // produce: records per Produce request (Linger 0); rpw: records per transaction
	Linger      time.Duration // produce: 0 for batch-and-wait, else asynchronous with this linger
	Compression string        // none, gzip, snappy, lz4, zstd
	Timeout     time.Duration // per workload
	Opts        []kgo.Opt     // extra client options (SASL, TLS, logging)
}

// Result is one workload's outcome, with the fields and JSON names of
// ../shared/bench's results.
type Result struct {
	Workload   string  `json:"workload"`
	Target     string  `json:"target"`
	OK         bool    `json:"ok"`
	Error      string  `json:"error,omitempty"`
	Clients    int     `json:"clients"`
	Size       int     `json:"size_bytes"`
	Messages   int64   `json:"messages"`
	Ops        int64   `json:"ops"`
	Seconds    float64 `json:"seconds"`
	MsgsPerSec float64 `json:"msgs_per_s"`
	MBPerSec   float64 `json:"mb_per_s"` // values only, 1 MB = 10^6 bytes
	Latency    string  `json:"latency"`  // what p50/p99/max measure; empty when not measured
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	Duplicates int64   `json:"duplicates"`
	Retries    int64   `json:"retries"` // rpw: transactions that ended in an abort
	Notes      string  `json:"notes,omitempty"`

	err error
}

// Err is the workload's error, nil when it succeeded.
func (r *Result) Err() error { return r.err }

// ErrNoTransactions is wrapped by rpw's error when the broker does not
// coordinate transactions.
var ErrNoTransactions = errors.New("the broker does not support Kafka transactions")

func (r *Result) fail(err error) {
	r.err = err
	r.OK = false
	r.Error = err.Error()
}

func (r *Result) record(msgs, ops int64, elapsed time.Duration, size int, kind string, lats ...[]time.Duration) {
	r.Messages, r.Ops, r.Seconds = msgs, ops, elapsed.Seconds()
	if r.Seconds > 0 {
		r.MsgsPerSec = float64(msgs) / r.Seconds
		r.MBPerSec = float64(msgs) * float64(size) / 1e6 / r.Seconds
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		i := int(p*float64(len(all))+0.999999) - 1 // nearest rank
		return all[min(max(i, 0), len(all)-1)]
	}
	r.Latency = kind
	r.P50ms, r.P99ms, r.MaxMs = ms(pct(0.50)), ms(pct(0.99)), ms(all[len(all)-1])
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

const rowFormat = "%-13s %-6s %12s %9s %9s %9s %9s %10s %8s  %s\n"

// PrintHeader writes the column titles of ../shared/bench's table.
func PrintHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "WORKLOAD", "TARGET", "MSGS/S", "MB/S", "P50 MS", "P99 MS", "MAX MS", "MSGS", "SECS", "NOTES")
}

// PrintResult writes one row as ../shared/bench does, and a FAIL line.
func PrintResult(w io.Writer, r *Result) {
	var notes []string
	if r.Latency != "" {
		notes = append(notes, r.Latency)
	}
	if r.Duplicates != 0 {
		notes = append(notes, fmt.Sprintf("duplicates %d", r.Duplicates))
	}
	if r.Notes != "" {
		notes = append(notes, r.Notes)
	}
	lat := func(v float64) string {
		if r.Latency == "" {
			return "-"
		}
		return fmt.Sprintf("%.3f", v)
	}
	if r.Seconds > 0 {
		fmt.Fprintf(w, rowFormat, r.Workload, r.Target,
			fmt.Sprintf("%.1f", r.MsgsPerSec), fmt.Sprintf("%.2f", r.MBPerSec),
			lat(r.P50ms), lat(r.P99ms), lat(r.MaxMs),
			fmt.Sprint(r.Messages), fmt.Sprintf("%.2f", r.Seconds), strings.Join(notes, "; "))
	}
	if !r.OK {
		fmt.Fprintf(w, "FAIL %s %s: %s\n", r.Workload, r.Target, r.Error)
	}
}

// Report is the JSON form of a run (--json), shaped as ../shared/bench's.
type Report struct {
	Started time.Time `json:"started"`
	Config  struct {
		Workloads   []string `json:"workloads"`
		Brokers     []string `json:"brokers"`
		Topic       string   `json:"topic"`
		Partitions  int      `json:"partitions"`
		Clients     int      `json:"clients"`
		Size        int      `json:"size_bytes"`
		Messages    int      `json:"messages"`
		Duration    string   `json:"duration,omitempty"`
		Batch       int      `json:"batch"`
		Linger      string   `json:"linger"`
		Compression string   `json:"compression"`
	} `json:"config"`
	Results []*Result `json:"results"`
}

// NewReport starts the report of a run of cfg.
func NewReport(cfg *Config, workloads []string) *Report {
	rep := &Report{Started: time.Now().UTC()}
	c := &rep.Config
	c.Workloads, c.Brokers, c.Topic, c.Partitions = workloads, cfg.Brokers, cfg.Topic, cfg.Partitions
	c.Clients, c.Size, c.Messages, c.Batch = cfg.Clients, cfg.Size, cfg.Messages, cfg.Batch
	c.Linger, c.Compression = cfg.Linger.String(), cfg.Compression
	if cfg.Duration > 0 {
		c.Duration = cfg.Duration.String()
	}
	return rep
}

// WriteJSON writes rep to path.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// payloads is a pool of random values for one client: values are never
// modified once produced, so records share them.
type payloads struct {
	vals [][]byte
	next int
}

const poolSize = 4096

func newPayloads(workload string, client, size int) *payloads {
	h := fnv.New64a()
	h.Write([]byte(workload))
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[0:], h.Sum64())
	binary.LittleEndian.PutUint64(seed[8:], uint64(client))
	buf := make([]byte, size*poolSize)
	rand.NewChaCha8(seed).Read(buf)
	p := &payloads{}
	for i := range poolSize {
		p.vals = append(p.vals, buf[i*size:(i+1)*size:(i+1)*size])
	}
	return p
}

func (p *payloads) take() []byte {
	v := p.vals[p.next]
	p.next = (p.next + 1) % len(p.vals)
	return v
}

// firstErr keeps the first of several goroutines' errors.
type firstErr struct {
	mu  sync.Mutex
	err error
}

func (f *firstErr) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstErr) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// reversed returns b's bytes in reverse order (rpw's processing, as the
// bench's).
func reversed(b []byte) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		out[len(b)-1-i] = v
	}
	return out
}
