package pebblestore

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

var (
	readStores = map[int]*PebbleStore{}
	readMu     sync.Mutex
)

// readStore builds (once per size) a one-partition topic of n messages of
// 100 bytes with large commits (10k messages), 4 writers so that groups
// merge.
func readStore(b *testing.B, n int) *PebbleStore {
	readMu.Lock()
	defer readMu.Unlock()
	if s := readStores[n]; s != nil {
		return s
	}
	dir, err := tempDirNoCleanup()
	must(b, err)
	cacheMB, _ := strconv.Atoi(os.Getenv("TOPICSTORE_CACHE_MB"))
	s, err := Open(dir, Options{RetentionInterval: -1, CacheSize: int64(cacheMB) << 20})
	must(b, err)
	createTopic(b, s, "t", 1)
	const per = 10_000
	msgs := benchMessages(per, "")
	for i := range msgs {
		msgs[i].Partition = 0
	}
	start := time.Now()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < (n+per-1)/per; i += 4 {
				m := msgs[:min(per, n-i*per)]
				if _, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: m}}}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	built := time.Since(start)
	// Both sizes read from sstables, not the memtable (a 10k topic would
	// fit in it): the comparison is about the topic's size only.
	must(b, s.db.Flush())
	if os.Getenv("TOPICSTORE_COMPACT") != "" {
		// Compact it all, so no background compaction competes for the CPU.
		must(b, s.db.Compact([]byte(keys.PrefixMessages), []byte("n"), true))
	}
	info, _ := s.Topic("t")
	m := s.db.Metrics()
	b.Logf("built %d messages (%d MB) in %v (+flush %v); L0 files %d, sstables %d",
		n, info.Partitions[0].Bytes>>20, built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond),
		m.Levels[0].NumFiles, m.Total().NumFiles)
	readStores[n] = s
	return s
}

// BenchmarkReadNext1000 is a consumer read: Scan from a position, stop
// after 1000 messages, the next op continues where it stopped. "seq" walks
// the whole topic (with 10M messages, ~1.3 GB, the block cache misses);
// "warm" cycles through the first 20k messages (cached). The cost per op
// must not depend on the topic's size.
// TOPICSTORE_BIG sets the large size (default 10M).
func BenchmarkReadNext1000(b *testing.B) {
	big := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("TOPICSTORE_BIG")); err == nil {
		big = v
	}
	for _, n := range []int{10_000, big} {
		for _, mode := range []string{"seq", "warm"} {
			b.Run(fmt.Sprintf("topic=%d/%s", n, mode), func(b *testing.B) {
				s := readStore(b, n)
				window := int64(n)
				if mode == "warm" {
					window = min(window, 20_000)
				}
				b.SetBytes(1000 * benchBody)
				b.ReportAllocs()
				b.ResetTimer()
				var pos int64
				for range b.N {
					if pos+1000 > window {
						pos = 0
					}
					cnt := 0
					err := s.Scan(ctx, "t", topicstore.ScanRange{Partition: 0, Start: pos, End: -1}, func(m *topicstore.Message) bool {
						cnt++
						return cnt < 1000
					})
					if err != nil || cnt != 1000 {
						b.Fatal(err, cnt)
					}
					pos += 1000
				}
				b.StopTimer()
				if m := s.db.Metrics(); testing.Verbose() {
					b.Logf("N=%d block cache: hits %d misses %d, %d MB; memtables %d (%d MB), zombie %d (%d MB)", b.N, m.BlockCache.Hits, m.BlockCache.Misses,
						m.BlockCache.Size>>20, m.MemTable.Count, m.MemTable.Size>>20, m.MemTable.ZombieCount, m.MemTable.ZombieSize>>20)
				}
			})
		}
	}
}

func init() {
	// Close the read stores with the scan stores (see TestMain).
	closeExtra = append(closeExtra, func() {
		for _, s := range readStores {
			s.Close()
		}
	})
}
