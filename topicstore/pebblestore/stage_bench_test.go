package pebblestore

import (
	"fmt"
	"testing"
	"time"

	"topicgate/topicstore"
)

// BenchmarkStagedCommit measures the commit of a transaction staged in
// 100-byte messages (StageBatch in 80k-message calls, like a Txn spilling
// every 8 MiB), against the same messages committed inline: the commit by
// reference writes ~60 bytes per 32 KiB staged batch and copies nothing.
func BenchmarkStagedCommit(b *testing.B) {
	for _, n := range []int{20_000, 200_000, 2_000_000} {
		b.Run(fmt.Sprintf("msgs=%d", n), func(b *testing.B) {
			s := newStore(b, nil)
			createTopic(b, s, "t", 1)
			msgs := benchMessages(80_000, "")
			var stage, commitT, inline time.Duration
			for i := 0; i < b.N; i++ {
				id := uint64(i + 1)
				t0 := time.Now()
				var sbs []topicstore.StagedBatch
				for left := n; left > 0; left -= len(msgs) {
					sb, err := s.StageBatch(ctx, id, "t", msgs[:min(left, len(msgs))])
					must(b, err)
					sbs = append(sbs, sb)
				}
				t1 := time.Now()
				commitStaged(b, s, "t", sbs...)
				t2 := time.Now()
				if n <= 200_000 {
					for left := n; left > 0; left -= len(msgs) {
						commit(b, s, "t", msgs[:min(left, len(msgs))]...)
					}
				}
				stage, commitT, inline = stage+t1.Sub(t0), commitT+t2.Sub(t1), inline+time.Since(t2)
			}
			b.ReportMetric(float64(stage.Milliseconds())/float64(b.N), "stage-ms")
			b.ReportMetric(float64(commitT.Microseconds())/1000/float64(b.N), "commit-ms")
			if n <= 200_000 {
				b.ReportMetric(float64(inline.Milliseconds())/float64(b.N), "inline-commits-ms")
			}
		})
	}
}
