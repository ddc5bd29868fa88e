package metrics

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

// Label values and HELP text are escaped as the exposition format
// requires: backslash, double quote (labels only) and newline.
func TestPromEscaping(t *testing.T) {
	var b strings.Builder
	p := promWriter{bufio.NewWriter(&b)}
	p.family("x_total", "counter", "a\\b\nc")
	p.sample("x_total", 1.5, "topic", "a\"b\\c\nd", "partition", "0")
	p.w.Flush()
	want := "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\nx_total{topic=\"a\\\"b\\\\c\\nd\",partition=\"0\"} 1.5\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// An observation lands in the first bucket whose bound is not below it.
func TestHistogramBuckets(t *testing.T) {
	var h histogram
	h.observe(100 * time.Microsecond) // le 0.0001: inclusive
	h.observe(101 * time.Microsecond)
	h.observe(time.Minute) // +Inf
	if h.buckets[0].Load() != 1 || h.buckets[1].Load() != 1 || h.buckets[len(latencyBuckets)].Load() != 1 {
		t.Errorf("buckets %v", &h.buckets)
	}
	if h.sumNs.Load() != int64(time.Minute+201*time.Microsecond) {
		t.Errorf("sum %d", h.sumNs.Load())
	}
}
