package jetstream

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/jetstream/natsnode"
)

// TestDurabilityChecked: a gateway given the nodes' monitoring endpoints
// reports whether each syncs every write, warns once for each that does
// not (and for one it cannot ask), and not again while nothing changes.
func TestDurabilityChecked(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		sync   string
		always bool
	}{{natsnode.SyncDefault, false}, {natsnode.SyncAlways, true}} {
		c := jstest.Start(t, 1, jstest.WithSync(tc.sync))
		var logs bytes.Buffer
		o := Options{URLs: c.URLs(), Replicas: 1, Stream: "TGDUR", RetentionInterval: -1, Timeout: 2 * time.Second,
			Monitor: append(c.Nodes().MonitorURLs(), "http://127.0.0.1:1"), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		s, err := Open(ctx, o)
		require.NoError(t, err)
		s.durable.Check(ctx) // as the loop does at start (it may not have run yet)
		nodes := s.ClusterStats(ctx).Durability
		require.Len(t, nodes, 2)
		n := nodes[0]
		require.True(t, n.Checked, "node: %+v", n)
		require.Equal(t, tc.always, n.SyncAlways, "sync %q: %+v", tc.sync, n)
		require.Equal(t, c.Nodes().Node(0).Name, n.Server)
		if !tc.always {
			require.Equal(t, 2*time.Minute, n.SyncInterval)
		}
		require.False(t, nodes[1].Checked)
		require.NotEmpty(t, nodes[1].Err)
		warned := strings.Count(logs.String(), "does not sync every write")
		require.Equal(t, map[bool]int{false: 1, true: 0}[tc.always], warned, "logs:\n%s", logs.String())
		require.Equal(t, 1, strings.Count(logs.String(), "cannot read a NATS node's configuration"), "logs:\n%s", logs.String())
		before := logs.Len()
		s.durable.Check(ctx)
		require.Equal(t, before, logs.Len(), "a second reading that found the same warned again:\n%s", logs.String()[before:])
		require.NoError(t, s.Close())
	}
}
