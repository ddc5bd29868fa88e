package main

import (
	"encoding/binary"
	"log"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
)

// pebbleLog stores each message under its own key in a Pebble database,
// one synced batch per statement, with the options topicgate's embedded
// store gives Pebble where they bear on writing (memtables, L0
// thresholds, compactions, uncompressed 32 KiB blocks) and Pebble's own
// file system. It is the floor of a server that keeps its messages in
// Pebble: the memtable, flushes and compactions are in it; topicgate's
// layers (SQL, topics, partitions, the commit pipeline) are not.
type pebbleLog struct {
	db   *pebble.DB
	next atomic.Uint64
}

func openPebble(dir string) (*pebbleLog, error) {
	db, err := pebble.Open(dir, &pebble.Options{
		Cache:                       pebble.NewCache(32 << 20),
		MemTableSize:                16 << 20,
		MemTableStopWritesThreshold: 2,
		L0CompactionThreshold:       8,
		L0CompactionFileThreshold:   64,
		L0StopWritesThreshold:       24,
		MaxConcurrentCompactions:    func() int { return 2 },
		Levels:                      []pebble.LevelOptions{{Compression: pebble.NoCompression, BlockSize: 32 << 10}},
	})
	if err != nil {
		return nil, err
	}
	return &pebbleLog{db: db}, nil
}

func (p *pebbleLog) write(msgs [][]byte) {
	b := p.db.NewBatch()
	first := p.next.Add(uint64(len(msgs))) - uint64(len(msgs))
	var key [8]byte
	for i, m := range msgs {
		binary.BigEndian.PutUint64(key[:], first+uint64(i))
		if err := b.Set(key[:], m, nil); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		log.Fatal(err)
	}
	b.Close()
}
