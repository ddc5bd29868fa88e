package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTxnTableBounded: a gateway keeps a transactional id while it is used
// and drops it once idle past txnIdle (with no transaction open), so the
// table holds the ids in use, not every id ever seen.
func TestTxnTableBounded(t *testing.T) {
	var tt txnTable
	t0 := time.Unix(1_000_000, 0)
	for i := range 100 {
		ts := tt.get(string(rune('a'+i%26))+string(rune('0'+i/26)), t0)
		ts.used = t0
	}
	require.Len(t, tt.ids, 100)
	later := t0.Add(txnIdle + time.Minute)
	kept := tt.get("new", later)
	kept.used = later
	require.Len(t, tt.ids, 1, "every idle id dropped; only the one asked for stays")
	require.Contains(t, tt.ids, "new")
	require.Same(t, kept, tt.get("new", later.Add(time.Second)), "an id in use is kept")
}
