package jetstream_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/storetest"
)

// TestContract runs the whole store contract suite, every optional part
// claimed, against the JetStream store on a real single-node cluster (R1: the suite is about semantics; the
// replicated behaviour is tested on three nodes), each subtest on a
// stream of its own; a reopen is a new gateway on that stream, which
// folds it from the start.
func TestContract(t *testing.T) {
	c := jstest.Start(t, 1)
	var n atomic.Int64
	streams := map[*testing.T]string{} // each subtest's stream, for Reopen
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) topicstore.Store {
		stream, ok := streams[t]
		if !cfg.Reopen || !ok {
			require.False(t, cfg.Reopen, "reopen before open")
			stream = fmt.Sprintf("TGC%d", n.Add(1))
			streams[t] = stream
			t.Cleanup(func() { delete(streams, t) })
		}
		s, err := jetstream.Open(context.Background(), jetstream.Options{
			URLs: c.URLs(), Replicas: 1, Stream: stream, Clock: cfg.Clock.Now,
			RetentionInterval: -1})
		require.NoError(t, err)
		return s
	})
}
