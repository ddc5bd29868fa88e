package pebblestore

import (
	"testing"

	"topicgate/topicstore"
	"topicgate/topicstore/storetest"
)

// TestContract runs the backend-neutral contract suite against Pebble,
// which claims every optional part of it.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) topicstore.Store {
		s, err := Open(t.TempDir(), Options{Clock: cfg.Clock.Now, RetentionInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
