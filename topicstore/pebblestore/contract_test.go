package pebblestore

import (
	"testing"

	"topicgate/topicstore"
	"topicgate/topicstore/storetest"
)

// TestContract runs the backend-neutral contract suite against Pebble,
// which claims every optional part of it, with both commit pipelines:
// the default one (the next group's work overlaps the fsync) and
// PlainSync.
func TestContract(t *testing.T) {
	for _, c := range []struct {
		name  string
		plain bool
	}{{"pipelined", false}, {"plainSync", true}} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) topicstore.Store {
				s, err := Open(t.TempDir(), Options{Clock: cfg.Clock.Now, RetentionInterval: -1, PlainSync: c.plain,
					MemTableSize: 4 << 20, CacheSize: 8 << 20})
				must(t, err)
				return s
			})
		})
	}
}
