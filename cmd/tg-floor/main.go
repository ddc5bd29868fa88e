// Command tg-floor measures the floor under the bench's workloads on a
// machine: the fastest a Go server can answer them over the
// PostgreSQL protocol when everything it acknowledges must be on disk. It
// does only what any such server must: read the statement, append the
// messages to a log file, fdatasync it (one sync at a time, with
// everything that arrived meanwhile grouped into the next one, as Pebble's
// WAL does), and reply. It skips what topicgate adds on top: SQL, topics,
// keys, the memtable, flushes, recovery. It answers the bench's DDL with a
// command tag, its INSERTs by their parameters, its COPYs by their rows
// (counted in the binary COPY data), and its checking queries with the
// rows they expect (a (partition, offset) row per stored message, the
// stored (producer_id, seqno) pairs, duplicates skipped as topicgate does,
// and what committed transactions wrote).
//
// For the queue workload it keeps a shared consumer's promises and no
// more (queue.go): an acquisition's delivery counts are synced before its
// rows go out, a pipeline's acknowledgements are synced once, at its Sync.
// For the consume workload it keeps a streaming consumer's (consume.go):
// a partition is one session's, and a read's new position is synced
// before the read completes. For rpw it keeps a transaction's (txn.go):
// what a transaction wrote and the position it read to are synced
// together at COMMIT. For latency it keeps a waiting reader's
// (latency.go): an INSERTed message is readable once synced, a read with
// WAIT wakes for it, and its new position is synced before it completes.
//
// The bench runs it in place of the server (docs/performance/limits.md):
//
//	go build -o /tmp/tg-floor ./cmd/tg-floor
//	TG_CMD="/tmp/tg-floor --listen \$TG_LISTEN --data-dir \$TG_DATA_DIR" \
//	  ../shared/bench/run.sh --target tg --workload ingest-1,ingest-batch,ingest-copy,ingest-dedup,queue,consume,rpw,latency
//
// The log is one file pre-written with zeros and written over from its
// start when full, so a sync costs what overwriting a recycled WAL costs.
// With -pebble the messages go into a Pebble database instead, one key
// each and one synced batch per statement (pebblelog.go): the floor of a
// server that keeps its messages in Pebble. With -hops the file log's
// appends and answers pass through two more goroutines, as the embedded
// store's committer and syncer. The process keeps what the checking
// queries need in memory; it is a measuring tool, not a store.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof" // -http: profiles comparable with topicgate's
	"os"
	"path/filepath"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5433", "address to listen on")
	dir := flag.String("data-dir", "", "directory of the log file")
	logSize := flag.Int64("log-size", 256<<20, "log file size; writes wrap to its start")
	usePebble := flag.Bool("pebble", false, "store each message under its own key in a Pebble database instead of appending to one file")
	hops := flag.Bool("hops", false, "pass each append through a committer goroutine and each sync's answers through a syncer goroutine, as topicgate's embedded store does")
	httpAddr := flag.String("http", "", "address for /debug/pprof (off when empty), to profile the floor as docs/performance/profile.sh profiles topicgate")
	flag.Parse()
	if *httpAddr != "" {
		go func() { log.Print(http.ListenAndServe(*httpAddr, nil)) }()
	}
	if *dir == "" {
		log.Fatal("tg-floor: --data-dir is required")
	}
	st := &state{last: map[string]int64{}}
	var err error
	if *usePebble {
		st.log, err = openPebble(filepath.Join(*dir, "pebble"))
	} else {
		st.log, err = openLog(filepath.Join(*dir, "floor.log"), *logSize, *hops)
	}
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "tg-floor: listening on %s\n", ln.Addr())
	log.Fatal(st.accept(ln))
}

// accept serves each connection of ln until ln is closed.
func (st *state) accept(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go serve(c, st)
	}
}
