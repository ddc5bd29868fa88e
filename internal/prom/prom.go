package prom

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Writer writes the Prometheus text exposition format: each family once,
// its HELP and TYPE lines first, label values escaped. Call Flush at the
// end.
type Writer struct {
	w *bufio.Writer
}

// NewWriter returns a Writer buffering into w.
func NewWriter(w io.Writer) *Writer { return &Writer{bufio.NewWriter(w)} }

// Flush writes what is buffered.
func (p *Writer) Flush() error { return p.w.Flush() }

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// Family starts a metric family of kind (counter, gauge, histogram).
func (p *Writer) Family(name, kind, help string) {
	p.w.WriteString("# HELP " + name + " " + helpEscaper.Replace(help) + "\n# TYPE " + name + " " + kind + "\n")
}

// Sample writes one sample; labels alternate names and values.
func (p *Writer) Sample(name string, v float64, labels ...string) {
	p.w.WriteString(name)
	if len(labels) > 0 {
		p.w.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				p.w.WriteByte(',')
			}
			p.w.WriteString(labels[i] + `="` + labelEscaper.Replace(labels[i+1]) + `"`)
		}
		p.w.WriteByte('}')
	}
	p.w.WriteByte(' ')
	p.w.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	p.w.WriteByte('\n')
}

// Single writes a family of one unlabelled sample.
func (p *Writer) Single(name, kind, help string, v float64) {
	p.Family(name, kind, help)
	p.Sample(name, v)
}

// LatencyBuckets are the histograms' upper bounds (Prometheus "le",
// inclusive).
var LatencyBuckets = [...]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 30 * time.Second,
}

// Histogram is a lock-free latency histogram: per bucket (the last one is
// +Inf) the observations that fell in it, not cumulated; the count is
// their sum, computed when written. The zero value is ready.
type Histogram struct {
	buckets [len(LatencyBuckets) + 1]atomic.Int64
	sumNs   atomic.Int64
}

// Observe records one observation of d.
func (h *Histogram) Observe(d time.Duration) {
	i := 0
	for i < len(LatencyBuckets) && d > LatencyBuckets[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sumNs.Add(int64(d))
}

// Count is the number of observations so far.
func (h *Histogram) Count() int64 {
	var n int64
	for i := range h.buckets {
		n += h.buckets[i].Load()
	}
	return n
}

// Write writes h's series of family name (started by the caller with
// Family(name, "histogram", ...)): cumulated buckets, sum in seconds and
// count, each with labels.
func (h *Histogram) Write(p *Writer, name string, labels ...string) {
	var cum int64
	lb := append(append([]string(nil), labels...), "le", "")
	for i := range h.buckets {
		cum += h.buckets[i].Load()
		le := "+Inf"
		if i < len(LatencyBuckets) {
			le = strconv.FormatFloat(LatencyBuckets[i].Seconds(), 'g', -1, 64)
		}
		lb[len(lb)-1] = le
		p.Sample(name+"_bucket", float64(cum), lb...)
	}
	p.Sample(name+"_sum", time.Duration(h.sumNs.Load()).Seconds(), labels...)
	p.Sample(name+"_count", float64(cum), labels...)
}
