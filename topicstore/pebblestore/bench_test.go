package pebblestore

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
)

// Benchmarks run on the default (disk-backed) temp dir with real fsyncs.

const benchBody = 100 // bytes per message

func benchMessages(n int, producer string) []topicstore.Message {
	msgs := make([]topicstore.Message, n)
	body := make([]byte, benchBody)
	rand.New(rand.NewSource(1)).Read(body)
	for i := range msgs {
		msgs[i] = topicstore.Message{Partition: -1, ProducerID: producer, Body: body, CreatedAt: time.Now()}
	}
	return msgs
}

func reportSys(b *testing.B) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "MB-sys")
}

// BenchmarkAppend: 16 concurrent writers, each op is one commit of `msgs`
// messages of 100 bytes, with and without the fsync overlap.
func BenchmarkAppend(b *testing.B) {
	for _, plain := range []bool{false, true} {
		for _, per := range []int{1, 100} {
			for _, prod := range []bool{false, true} {
				name := fmt.Sprintf("msgs=%d/producer=%v/plainSync=%v", per, prod, plain)
				b.Run(name, func(b *testing.B) {
					s, err := Open(b.TempDir(), Options{PlainSync: plain, MemTableSize: benchMemTable()})
					must(b, err)
					defer s.Close()
					createTopic(b, s, "t", 4)
					b.SetBytes(int64(per * benchBody))
					b.SetParallelism(16 / runtime.GOMAXPROCS(0))
					var mu sync.Mutex
					w := 0
					b.ResetTimer()
					start := time.Now()
					b.RunParallel(func(pb *testing.PB) {
						mu.Lock()
						w++
						producer := ""
						if prod {
							producer = fmt.Sprint("w", w)
						}
						mu.Unlock()
						msgs := benchMessages(per, producer)
						req := &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: msgs}}}
						for pb.Next() {
							if _, err := s.Commit(ctx, req); err != nil {
								b.Error(err)
								return
							}
						}
					})
					b.ReportMetric(float64(b.N*per)/time.Since(start).Seconds(), "msgs/s")
					reportSys(b)
				})
			}
		}
	}
}

var (
	scanStores = map[int]*PebbleStore{}
	scanMu     sync.Mutex
)

// scanStore builds (once per size) a topic of n messages in commits of 1000,
// 8 writers in parallel so groups merge into larger batches.
func scanStore(b *testing.B, n int) *PebbleStore {
	scanMu.Lock()
	defer scanMu.Unlock()
	if s := scanStores[n]; s != nil {
		return s
	}
	dir, err := tempDirNoCleanup()
	must(b, err)
	s, err := Open(dir, Options{})
	must(b, err)
	createTopic(b, s, "t", 1)
	msgs := benchMessages(1000, "")
	for i := range msgs {
		msgs[i].Partition = 0
	}
	var wg sync.WaitGroup
	commits := n / 1000
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < commits; i += 8 {
				if _, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: msgs}}}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	scanStores[n] = s
	return s
}

// BenchmarkScan reads 1000 messages at a random offset; the cost must not
// grow with the topic's size.
func BenchmarkScan(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("topic=%d", n), func(b *testing.B) {
			s := scanStore(b, n)
			info, _ := s.Topic("t")
			end := info.Partitions[0].EndOffset
			if end != int64(n) {
				b.Fatalf("topic has %d messages, want %d", end, n)
			}
			rng := rand.New(rand.NewSource(2))
			b.SetBytes(1000 * benchBody)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				from := rng.Int63n(end - 1000)
				cnt, bytes := 0, 0
				err := s.Scan(ctx, "t", topicstore.ScanRange{Partition: 0, Start: from, End: from + 1000}, func(m *topicstore.Message) bool {
					cnt++
					bytes += len(m.Body)
					return true
				})
				if err != nil || cnt != 1000 {
					b.Fatal(err, cnt)
				}
			}
			b.ReportMetric(float64(b.N*1000)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// benchMemTable lets a run compare memtable sizes (TOPICSTORE_MEMTABLE_MB).
func benchMemTable() uint64 {
	mb, _ := strconv.Atoi(os.Getenv("TOPICSTORE_MEMTABLE_MB"))
	return uint64(mb) << 20
}

var (
	scanDirs   []string
	closeExtra []func() // more cleanups for TestMain
)

func tempDirNoCleanup() (string, error) {
	dir, err := os.MkdirTemp("", "topicstore-bench-")
	if err == nil {
		scanDirs = append(scanDirs, dir)
	}
	return dir, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range scanStores {
		s.Close()
	}
	for _, f := range closeExtra {
		f()
	}
	for _, d := range scanDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// BenchmarkSyncedCommit measures one synced 200-byte Pebble commit at a
// time, with no store around it: the cost of the write-ahead log's
// fdatasync on this machine, the floor under every acknowledged commit
// (docs/performance/profiling.md).
func BenchmarkSyncedCommit(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), &pebble.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	val := make([]byte, 200)
	key := make([]byte, 8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint64(key, uint64(i))
		if err := db.Set(key, val, pebble.Sync); err != nil {
			b.Fatal(err)
		}
	}
}
