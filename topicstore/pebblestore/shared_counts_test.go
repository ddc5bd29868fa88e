package pebblestore

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"topicgate/topicstore"
)

// lockedBuffer is a log sink safe for the store's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A dead-letter move to a missing topic is counted per attempt and logged
// once per message; once the topic exists the move is counted as
// dead-lettered and archived; the delete policy and rejects count as
// archived only.
func TestSharedDeadLetterCounters(t *testing.T) {
	clk := newTestClock()
	var logs lockedBuffer
	s, err := Open(t.TempDir(), Options{MemTableSize: 4 << 20, CacheSize: 8 << 20, RetentionInterval: -1, Clock: clk.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	consumerTopic(t, s, "q", 1,
		sharedCfg("mv", func(c *topicstore.ConsumerConfig) {
			c.MaxProcessingAttempts = 1
			c.DeadLetterPolicy = "move"
			c.DeadLetterQueue = "dlq"
		}),
		sharedCfg("del", func(c *topicstore.ConsumerConfig) { c.MaxProcessingAttempts = 1; c.DeadLetterPolicy = "delete" }))
	commit(t, s, "q", body("a"), body("b"))

	for i := 0; i < 3; i++ { // three failed deliveries of offset 0, three failed moves
		acquire(t, s, "q", "mv", 1, 1)
		act(t, s, "q", "mv", 1, topicstore.ActionRelease, r0(0))
	}
	st := stats0(t, s, "q", "mv")
	eq(t, st.DeadLetterFailures, int64(3))
	eq(t, st.DeadLettered, int64(0))
	eq(t, st.ArchivedTotal, int64(0))
	if !strings.Contains(st.DeadLetterError, "dlq") {
		t.Errorf("DeadLetterError %q does not name the missing topic", st.DeadLetterError)
	}
	if n := strings.Count(logs.String(), "dead-letter move failed"); n != 1 {
		t.Errorf("logged %d times, want once per message:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "dead_letter_queue=dlq") || !strings.Contains(logs.String(), "offset=0") {
		t.Errorf("log line lacks the queue or the offset: %s", logs.String())
	}

	consumerTopic(t, s, "dlq", 1)
	acquire(t, s, "q", "mv", 1, 1)
	act(t, s, "q", "mv", 1, topicstore.ActionRelease, r0(0))
	acquire(t, s, "q", "mv", 1, 1)
	act(t, s, "q", "mv", 1, topicstore.ActionReject, r0(1)) // reject under 'move': moved too
	st = stats0(t, s, "q", "mv")
	eq(t, st.DeadLettered, int64(2))
	eq(t, st.ArchivedTotal, int64(2))
	eq(t, st.DeadLetterFailures, int64(3))
	eq(t, st.StartOffset, int64(2))

	acquire(t, s, "q", "del", 1, 1)
	act(t, s, "q", "del", 1, topicstore.ActionRelease, r0(0)) // out of attempts: archived
	acquire(t, s, "q", "del", 1, 1)
	act(t, s, "q", "del", 1, topicstore.ActionReject, r0(1))
	clk.Advance(time.Second)
	st = stats0(t, s, "q", "del")
	eq(t, st.ArchivedTotal, int64(2))
	eq(t, st.DeadLettered, int64(0))
	eq(t, st.DeadLetterFailures, int64(0))
}
