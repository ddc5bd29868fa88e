package prom

import (
	"strings"
	"testing"
	"time"
)

// TestHistogram: observations land in the first bucket whose bound is at
// or above them (+Inf past the last), and Write cumulates the buckets,
// sums the observations in seconds and counts them.
func TestHistogram(t *testing.T) {
	var h Histogram
	h.Observe(100 * time.Microsecond) // le 0.0001 (inclusive)
	h.Observe(101 * time.Microsecond) // le 0.00025
	h.Observe(time.Minute)            // +Inf
	if h.Count() != 3 {
		t.Fatalf("count %d", h.Count())
	}
	var b strings.Builder
	p := NewWriter(&b)
	p.Family("x_seconds", "histogram", "A \"test\"\nhistogram.")
	h.Write(p, "x_seconds", "api", `a"b`)
	p.Flush()
	out := b.String()
	for _, want := range []string{
		"# HELP x_seconds A \"test\"\\nhistogram.\n# TYPE x_seconds histogram\n",
		`x_seconds_bucket{api="a\"b",le="0.0001"} 1` + "\n",
		`x_seconds_bucket{api="a\"b",le="0.00025"} 2` + "\n",
		`x_seconds_bucket{api="a\"b",le="30"} 2` + "\n",
		`x_seconds_bucket{api="a\"b",le="+Inf"} 3` + "\n",
		`x_seconds_sum{api="a\"b"} 60.000201` + "\n",
		`x_seconds_count{api="a\"b"} 3` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// Label values and HELP text are escaped as the exposition format
// requires: backslash, double quote (labels only) and newline.
func TestPromEscaping(t *testing.T) {
	var b strings.Builder
	p := NewWriter(&b)
	p.Family("x_total", "counter", "a\\b\nc")
	p.Sample("x_total", 1.5, "topic", "a\"b\\c\nd", "partition", "0")
	p.Flush()
	want := "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\nx_total{topic=\"a\\\"b\\\\c\\nd\",partition=\"0\"} 1.5\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
