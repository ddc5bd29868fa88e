// Command tg-load drives topicgate with single-message INSERTs (the
// bench's ingest-1 shape: a prepared INSERT of one 100-byte bytea per
// statement, autocommit) from a number of clients split round robin over
// one or more servers, and reports messages/s and latency percentiles.
// It is how "two gateways carry at least as much as one" is measured:
//
//	tg-load -dsn 'postgres://postgres@127.0.0.1:5433/postgres' -clients 16 -duration 10s
//	tg-load -dsn 'postgres://postgres@127.0.0.1:5433/postgres,postgres://postgres@127.0.0.1:5434/postgres' -clients 16
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	dsns := flag.String("dsn", "postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable", "comma-separated servers; clients are spread over them round robin")
	clients := flag.Int("clients", 16, "concurrent clients, one connection each")
	duration := flag.Duration("duration", 10*time.Second, "run time")
	size := flag.Int("size", 100, "payload bytes per message")
	topic := flag.String("topic", "tg_load", "topic to write (created with 4 partitions if missing)")
	flag.Parse()
	servers := strings.Split(*dsns, ",")
	ctx := context.Background()
	setup, err := pgx.Connect(ctx, servers[0])
	if err != nil {
		fail(err)
	}
	if _, err := setup.Exec(ctx, "CREATE TOPIC IF NOT EXISTS "+*topic+" WITH (min_active_partitions = 4)"); err != nil {
		fail(err)
	}
	setup.Close(ctx)
	payload := make([]byte, *size)
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	deadline := time.Now().Add(*duration)
	errs := make(chan error, *clients)
	for i := 0; i < *clients; i++ {
		c, err := pgx.Connect(ctx, servers[i%len(servers)])
		if err != nil {
			fail(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(ctx)
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if _, err := c.Exec(ctx, "INSERT INTO "+*topic+" (data) VALUES ($1)", payload); err != nil {
					errs <- err
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	start := time.Now()
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		fail(err)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("%d servers  %d clients  %d msgs  %.1f msgs/s  p50 %.2fms  p99 %.2fms\n", len(servers), *clients, len(lat),
		float64(len(lat))/elapsed.Seconds(), float64(pct(0.5).Microseconds())/1000, float64(pct(0.99).Microseconds())/1000)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tg-load:", err)
	os.Exit(1)
}
