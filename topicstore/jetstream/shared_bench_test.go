package jetstream_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jstest"
)

// The queue's throughput on a 3-node R3 cluster: b.N messages in 4
// partitions, 8 workers each acquiring up to 10 and acknowledging them,
// through one gateway or split over two. msgs/s is reported.

func BenchmarkSharedQueue1Gateway(b *testing.B) { benchQueue(b, 1) }

func BenchmarkSharedQueue2Gateways(b *testing.B) { benchQueue(b, 2) }

func benchQueue(b *testing.B, gws int) {
	c := jstest.Start(b, 3)
	ctx := context.Background()
	var g []*jetstream.Store
	for range gws {
		s, err := jetstream.Open(ctx, jetstream.Options{URLs: c.URLs(), Stream: "TGSHBENCH"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		g = append(g, s)
	}
	err := g[0].CreateTopic(ctx, topicstore.TopicConfig{Name: "q", MinActivePartitions: 4,
		Consumers: []topicstore.ConsumerConfig{{Name: "w", Shared: true}}})
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 100)
	for done := 0; done < b.N; {
		var msgs []topicstore.Message
		for i := 0; i < 500 && done < b.N; i++ {
			msgs = append(msgs, topicstore.Message{Partition: int32(done % 4), Body: body})
			done++
		}
		if _, err := g[0].Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "q", Messages: msgs}}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range g[1:] { // the other gateways' folds have the messages
		jstest.Eventually(b, 10*time.Second, func() error {
			info, err := s.Topic("q")
			if err != nil {
				return err
			}
			var n int64
			for _, p := range info.Partitions {
				n += p.EndOffset
			}
			if n < int64(b.N) {
				return fmt.Errorf("%d of %d messages", n, b.N)
			}
			return nil
		})
	}
	var acked atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	all := make(chan struct{})
	end := sync.OnceFunc(func() { close(all) })
	for w := range 8 {
		s := g[w%gws]
		wg.Go(func() {
			for acked.Load() < int64(b.N) {
				res, err := s.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: uint32(w + 1), Max: 10, Watch: true})
				if err == nil {
					err = res.Wait()
				}
				if err != nil {
					b.Error(err)
					end()
					return
				}
				as := res.Messages
				if len(as) == 0 { // the last messages are held by other workers
					select {
					case <-res.Published:
					case <-res.Freed:
					case <-all:
					}
					continue
				}
				refs := refsOf(as)
				if _, err := s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: uint32(w + 1),
					Action: topicstore.ActionAck, Refs: refs}); err != nil {
					b.Error(err)
					end()
					return
				}
				if acked.Add(int64(len(refs))) == int64(b.N) {
					end()
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(acked.Load())/time.Since(start).Seconds(), "msgs/s")
}
