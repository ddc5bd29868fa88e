package jetstream

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/jetstream/snapshot"

	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// BenchmarkGatewayStart measures a gateway's start (Open, which folds the
// whole stream) and the heap it holds then, against a history of n
// messages (TOPICGATE_START_HISTORY, default 1,000,000) of two kinds:
//
//   - rolled: n moves of one consumer's position, each rolling its subject
//     up, as every producer, position, start and shared-consumer state
//     does: the stream keeps the last, and a start costs what is live;
//   - retained: n record batches of one message each, all within the
//     topic's retention: the fold indexes every one of them, so a start
//     that replays the stream costs what is retained;
//   - snapshot: the same, started from a snapshot of the fold written
//     after the history (jetstream/snapshot): a start reads the snapshot and
//     replays what is not a record batch.
//
// Besides the time, it reports the heap a started gateway holds and the
// process's peak RSS during the start (VmHWM, reset before each).
//
// go test ./topicstore/jetstream -run '^$' -bench GatewayStart -benchtime 3x
// (TOPICGATE_START_KINDS=rolled or retained writes only that history)
func BenchmarkGatewayStart(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("TOPICGATE_START_HISTORY")); err == nil && v > 0 {
		n = v
	}
	kinds := []string{"rolled", "retained"}
	if v := os.Getenv("TOPICGATE_START_KINDS"); v != "" {
		kinds = strings.Split(v, ",") // the histories to write: writing 5M takes minutes
	}
	for _, kind := range kinds {
		// The history is written once; b.Run may call its function more
		// than once.
		c := jstest.Start(b, 1)
		ctx := context.Background()
		o := Options{URLs: c.URLs(), Replicas: 1, Stream: "TGSTART", RetentionInterval: -1, Timeout: 10 * time.Second,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		msgs := func() uint64 {
			s, err := Open(ctx, o)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1,
				Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}); err != nil {
				b.Fatal(err)
			}
			s.mu.Lock()
			id := s.fold.ByName["t"].Rec.ID
			s.mu.Unlock()
			at := time.Now().UnixMicro()
			t0 := time.Now()
			for i := range n {
				var m *nats.Msg
				if kind == "rolled" {
					m = nats.NewMsg(s.subj.Position(id, "c", 0))
					m.Header.Set(fold.HOff, strconv.Itoa(i))
					m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
				} else {
					m = nats.NewMsg(s.subj.Data(id, 0))
					m.Data = []byte("x")
					plan.RecordHeaders(m, s.stage.gw, int64(i), 1, at, 1, int64(i+1), 0)
				}
				if _, err := s.js.PublishMsgAsync(m); err != nil {
					b.Fatal(err)
				}
				// Below nats.go's 4,000 pending async publishes: past them
				// a publish fails once the node is slow to acknowledge.
				if i%2_000 == 1_999 {
					select {
					case <-s.js.PublishAsyncComplete():
					case <-time.After(time.Minute):
						b.Fatal("publishes not acknowledged within a minute")
					}
				}
			}
			<-s.js.PublishAsyncComplete()
			msgs := streamMessages(b, s)
			b.Logf("%d %s history messages published in %v; the stream holds %d", n, kind, time.Since(t0).Round(time.Millisecond), msgs)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			return msgs
		}()
		run := func(name string, o Options) {
			b.Run(fmt.Sprintf("%s=%d", name, n), func(b *testing.B) { startBench(b, o, msgs) })
		}
		if kind == "rolled" {
			run(kind, o)
			continue
		}
		ign := o
		ign.IgnoreSnapshots = true
		run(kind, ign)
		s, err := Open(ctx, ign)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := s.snap.Write(ctx); err != nil {
			b.Fatal(err)
		}
		obs, err := s.js.ObjectStore(ctx, s.snap.Bucket())
		if err != nil {
			b.Fatal(err)
		}
		info, err := obs.GetInfo(ctx, snapshot.Object)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("a snapshot of %d retained batches: %d bytes, written in %v", n, info.Size, time.Since(t0).Round(time.Millisecond))
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		run("snapshot", o)
	}
}

// startBench opens a gateway b.N times and reports the heap it holds and
// the peak RSS of the start.
func startBench(b *testing.B, o Options, msgs uint64) {
	ctx := context.Background()
	var heap, rss uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
		b.StartTimer()
		s2, err := Open(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapInuse)
		rss = max(rss, peakRSS())
		if err := s2.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(msgs), "stream-msgs")
}

// peakRSS is the process's VmHWM in bytes (0 when unknown).
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
