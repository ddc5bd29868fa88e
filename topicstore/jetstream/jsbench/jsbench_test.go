package jsbench

import (
	"context"
	"testing"

	"topicgate/topicstore/jetstream/jstest"
)

// The engine's ceiling on a 3-node R3 cluster: the bench's messages (100
// random bytes, 4 partitions, 16 clients) published straight to JetStream.
// b.N is the number of messages; msgs/s is reported as a metric.

func BenchmarkSinglePublish16(b *testing.B) { benchMode(b, Single) }

func BenchmarkAtomicBatch100(b *testing.B) { benchMode(b, Batch) }

func benchMode(b *testing.B, mode string) {
	c := jstest.Start(b, 3)
	b.ResetTimer()
	r, err := Run(context.Background(), Config{URL: c.URL(), Mode: mode, Messages: b.N})
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(r.MsgsPerSec(), "msgs/s")
	b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms/op")
	b.Log(r)
}

// TestRunSmoke runs both modes briefly, so the bench code is exercised by
// go test.
func TestRunSmoke(t *testing.T) {
	c := jstest.Start(t, 3)
	for _, mode := range []string{Single, Batch} {
		r, err := Run(context.Background(), Config{URL: c.URL(), Mode: mode, Clients: 4, Messages: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if r.Msgs != 2000 {
			t.Errorf("%s: %d msgs, want 2000", mode, r.Msgs)
		}
		t.Log(r)
	}
}
