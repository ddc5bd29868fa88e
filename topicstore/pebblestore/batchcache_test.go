package pebblestore

import (
	"fmt"
	"testing"
	"time"

	"topicgate/topicstore"
)

// TestScanBatchCache: a reader taking a few messages at a time from one
// large batch reads it once from Pebble and then from the cache, with the
// same messages as without it; a batch retention deleted is not served
// from the cache (the scan is clamped to the partition's start).
func TestScanBatchCache(t *testing.T) {
	clk := newTestClock()
	s := openTest(t, t.TempDir(), clk)
	defer s.Close()
	retTopic(t, s, clk, topicstore.TopicConfig{RetentionPeriod: time.Hour}, 100, time.Minute, 2)
	var all []string
	for from := int64(0); from < 200; from += 7 {
		got, _ := scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: from, End: min(from+7, 200)})
		all = append(all, got...)
		if from == 0 {
			eq(t, s.batches.lru.Len(), 1, "the batch the scan stopped in is kept")
		}
	}
	eq(t, len(all), 200)
	for i, m := range all {
		eq(t, m, fmt.Sprintf("%d:m%03d", i, i))
	}
	eq(t, s.batches.lru.Len(), 2)
	// A scan past the cached batch goes on into the next one.
	got, _ := scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: 95, End: 105})
	eq(t, got, []string{"95:m095", "96:m096", "97:m097", "98:m098", "99:m099", "100:m100", "101:m101", "102:m102", "103:m103", "104:m104"})
	// A scan that ends at a batch's end leaves a hint for the next
	// batch's start; a scan from there reads that batch from its first
	// message (seeking forward to it).
	got, _ = scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: 190, End: 200})
	eq(t, len(got), 10)
	got, _ = scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: 90, End: 100})
	eq(t, got[9], "99:m099")
	if base, ok := s.topics["t"].parts[0].hints.find(100); !ok || base != 100 {
		t.Fatalf("hint for offset 100: %d, %v", base, ok)
	}
	got, _ = scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: 100, End: 103})
	eq(t, got, []string{"100:m100", "101:m101", "102:m102"})
	// Retention deletes the first batch: a scan from 0 starts at 100.
	retain(t, s, clk.Now().Add(time.Hour-90*time.Second))
	got, _ = scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: 0, End: 102})
	eq(t, got, []string{"100:m100", "101:m101"})
}
