package pebblestore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/storetest"
)

// TestContract runs the backend-neutral contract suite against Pebble,
// which claims every optional part of it, with both commit pipelines:
// the default one (the next group's work overlaps the fsync) and
// PlainSync. A reopen opens the subtest's directory again.
func TestContract(t *testing.T) {
	for _, c := range []struct {
		name  string
		plain bool
	}{{"pipelined", false}, {"plainSync", true}} {
		t.Run(c.name, func(t *testing.T) {
			dirs := map[*testing.T]string{} // each subtest's directory, for Reopen
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) topicstore.Store {
				dir, ok := dirs[t]
				if !cfg.Reopen || !ok {
					require.False(t, cfg.Reopen, "reopen before open")
					dir = t.TempDir()
					dirs[t] = dir
					t.Cleanup(func() { delete(dirs, t) })
				}
				s, err := Open(dir, Options{Clock: cfg.Clock.Now, RetentionInterval: -1, PlainSync: c.plain,
					MemTableSize: 4 << 20, CacheSize: 8 << 20})
				must(t, err)
				return s
			})
		})
	}
}
