// Command kafkaload drives a Kafka broker, topicgate's Kafka door in
// particular, with franz-go clients, as ../shared/bench drives the SQL
// door: 16 clients, 100-byte values, a fixed number of messages. It prints
// one row per workload in the bench's format (and --json writes the
// bench's JSON shape), so the two doors' figures compare directly:
//
//	kafkaload --brokers 127.0.0.1:9092 --workload produce,fetch --messages 200000
//	kafkaload --brokers 127.0.0.1:9092 --workload rpw --batch 100
//
// Workloads (see docs/performance/kafka.md and package internal/kafkaload):
// produce (idempotent, acks=all; --batch records per Produce request and
// wait, as the bench's ingest-batch, or asynchronous with --linger), fetch
// (everything in the topic, its partitions over the clients) and rpw
// (transactional read-process-write with a GroupTransactSession).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"topicgate/internal/kafkaload"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg kafkaload.Config
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated seed brokers")
	workload := flag.String("workload", "produce,fetch", "comma-separated list of: "+strings.Join(kafkaload.Workloads, ", ")+" (or all)")
	flag.StringVar(&cfg.Topic, "topic", "kafkaload", "topic produce creates (dropped first if it exists) and fetch reads; rpw uses <topic>_rpw_in and <topic>_rpw_out")
	flag.IntVar(&cfg.Partitions, "partitions", 4, "partitions of the topics created (the bench's topics have 4)")
	flag.IntVar(&cfg.Clients, "clients", 16, "concurrent clients, one franz-go client each")
	flag.IntVar(&cfg.Messages, "messages", 200000, "messages produce writes and rpw prefills")
	flag.DurationVar(&cfg.Duration, "duration", 0, "produce: above 0, produce for this long instead of --messages (as the bench's ingest-batch, whose --duration is 10s)")
	flag.IntVar(&cfg.Size, "size", 100, "value bytes per message")
	flag.IntVar(&cfg.Batch, "batch", 100, "produce: records per Produce request, each acknowledged before the next (the bench's ingest-batch: 100 rows per INSERT); rpw: records per transaction (the bench's rpw: 100)")
	flag.DurationVar(&cfg.Linger, "linger", 0, "produce: 0 for batch-and-wait; above 0, produce asynchronously with this linger (franz-go batches and pipelines)")
	flag.StringVar(&cfg.Compression, "compression", "none", "none, gzip, snappy, lz4 or zstd")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "give up on a workload after this long")
	jsonFile := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()
	if flag.NArg() > 0 {
		return usage("unexpected arguments: %s", strings.Join(flag.Args(), " "))
	}
	cfg.Brokers = strings.Split(*brokers, ",")
	if _, err := kafkaload.ParseCompression(cfg.Compression); err != nil {
		return usage("%v", err)
	}
	if cfg.Clients < 1 || cfg.Messages < 1 || cfg.Size < 1 || cfg.Batch < 1 || cfg.Partitions < 1 || cfg.Linger < 0 || cfg.Duration < 0 {
		return usage("--clients, --messages, --size, --batch and --partitions must be positive, --linger and --duration not negative")
	}
	workloads := kafkaload.Workloads
	if *workload != "all" {
		workloads = nil
		for _, w := range strings.Split(*workload, ",") {
			w = strings.TrimSpace(w)
			if !slices.Contains(kafkaload.Workloads, w) {
				return usage("unknown workload %q (have: all, %s)", w, strings.Join(kafkaload.Workloads, ", "))
			}
			workloads = append(workloads, w)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := kafkaload.NewReport(&cfg, workloads)
	fmt.Printf("kafkaload: brokers=%s clients=%d size=%dB messages=%d duration=%s batch=%d linger=%s compression=%s partitions=%d\n\n",
		*brokers, cfg.Clients, cfg.Size, cfg.Messages, cfg.Duration, cfg.Batch, cfg.Linger, cfg.Compression, cfg.Partitions)
	kafkaload.PrintHeader(os.Stdout)
	failed := 0
	for _, w := range workloads {
		if ctx.Err() != nil {
			break
		}
		res := kafkaload.Run(ctx, &cfg, w)
		kafkaload.PrintResult(os.Stdout, res)
		rep.Results = append(rep.Results, res)
		if !res.OK {
			failed++
		}
	}
	if *jsonFile != "" {
		if err := rep.WriteJSON(*jsonFile); err != nil {
			fmt.Fprintf(os.Stderr, "write %s: %v\n", *jsonFile, err)
			failed++
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "interrupted")
		return 130
	}
	if failed > 0 {
		fmt.Printf("%d workload(s) FAILED\n", failed)
		return 1
	}
	return 0
}

func usage(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "kafkaload: "+format+"\n", args...)
	flag.Usage()
	return 2
}
