package jetstream

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/reads"

	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
)

// foldedStore is a store with no cluster whose fold holds a topic "t" of
// one partition with n record batches of one message each (the fold only:
// what a statement's plan and a scan's index lookup cost, not the reads).
func foldedStore(b *testing.B, n int) *Store {
	b.Helper()
	s := newStore(Options{Stream: DefaultStream}.withDefaults(), 1)
	cfg := topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}
	if err := topicstore.NormalizeConfig(&cfg); err != nil {
		b.Fatal(err)
	}
	js, _ := json.Marshal(fold.CatalogRec{Config: cfg, Layout: topicstore.FlatLayout(1)})
	h := nats.Header{}
	h.Set(fold.HTopic, string(js))
	s.foldAt(1, "tg.c."+hex.EncodeToString([]byte("t")), h, time.Time{}, false)
	at := time.Now().UnixMicro()
	for i := range n {
		h := nats.Header{}
		h.Set(fold.HRec, fmt.Sprintf("%d 1 %d 100 %d gw 0", i, at, 100*(i+1)))
		s.foldAt(uint64(i+2), "tg.d.1.0", h, time.Time{}, false)
	}
	if s.foldErr != nil {
		b.Fatal(s.foldErr)
	}
	return s
}

// BenchmarkTopicInfo: Topic, which every statement's plan calls, costs the
// same at 10k, 100k and 1M retained batches (it once summed them all).
func BenchmarkTopicInfo(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		s := foldedStore(b, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				ti, err := s.Topic("t")
				if err != nil || ti.Partitions[0].Bytes != int64(100*n) {
					b.Fatal(ti.Partitions[0].Bytes, err)
				}
			}
		})
	}
}

// BenchmarkScanIndex: the index a scan of the first batches of a backlog
// copies is what it reads, not the backlog (Scan stops at the first
// batch it cannot fetch: here, at once, since there is no cluster).
func BenchmarkScanIndex(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		s := foldedStore(b, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				s.mu.Lock()
				recs := reads.RecsFrom(s.fold.ByName["t"].Parts[0], 0, nil)
				s.mu.Unlock()
				if len(recs) != reads.ScanSlice {
					b.Fatal(len(recs))
				}
			}
		})
	}
}
