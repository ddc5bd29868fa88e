package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/wire"
)

// Write-speed limits, the executor's half: the store commits a write to a
// throttled partition at once and says how long its acknowledgement must be
// held back (CommitResult.Throttle, topicstore/throttle.go); the session
// waits that long here, on its own goroutine, after the commit and outside
// every store lock, before it answers the client. Every commit that
// writes waits (afterCommit): an autocommit INSERT's or COPY's
// (inWriteTxn) and a block's, at COMMIT or Sync (endBlock).
//
// The wait honours the statement's context: a cancel, statement_timeout or
// client hangup ends it at once. The messages are already written, so the
// statement still succeeds; as PostgreSQL does when a cancel cuts its wait
// for synchronous replication, the client gets a WARNING saying so. The
// bytes stay charged to the partition: the next write to it waits longer.

// waitThrottle waits d, or until ctx ends; it reports whether ctx cut the
// wait short.
func waitThrottle(ctx context.Context, d time.Duration) (cut bool) {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-ctx.Done():
		return true
	}
}

// throttleCommit waits res's throttle delay; afterwards res.Throttle is the
// delay only when the wait was cut short, else 0 (see warnThrottleCut).
// The implicit block of a multi-statement query or a pipeline commits at
// Sync, outside every statement (block.go): its wait gets the session's
// statement_timeout of its own.
func (s *Session) throttleCommit(ctx context.Context, res *topicstore.CommitResult) {
	if res.Throttle <= 0 {
		return
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = s.withStatementTimeout(ctx)
		defer cancel()
	}
	if !waitThrottle(ctx, res.Throttle) {
		res.Throttle = 0
	}
}

// warnThrottleCut tells the client that its statement's wait for the
// write-speed limit was cut short although the messages were written.
func warnThrottleCut(out wire.Output, res topicstore.CommitResult, topics []string) {
	if res.Throttle <= 0 {
		return
	}
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = fmt.Sprintf("%q", t)
	}
	out.Warning(pgerror.CodeWarning, fmt.Sprintf("canceling wait for the write-speed limit of topic %s: the messages were already written",
		strings.Join(names, ", ")))
}

// noticeBurstOnly tells the user that a topic with partition_write_burst_bytes
// but no explicit partition_write_speed_bytes_per_second is not throttled:
// only an explicit speed turns the limit on
// (docs/dialect/write-speed-limits.md); the burst is kept and applies once
// a speed is set.
func noticeBurstOnly(out wire.Output, cfg topicstore.TopicConfig) {
	if cfg.PartitionWriteBurstBytes > 0 && cfg.PartitionWriteSpeedBytes == 0 {
		out.Notice(pgerror.CodeWarning, fmt.Sprintf("partition_write_burst_bytes has no effect without partition_write_speed_bytes_per_second: topic %q is not throttled", cfg.Name))
	}
}

// speedChanged reports whether an ALTER changed the write-speed options.
func speedChanged(a, b topicstore.TopicConfig) bool {
	return a.PartitionWriteSpeedBytes != b.PartitionWriteSpeedBytes || a.PartitionWriteBurstBytes != b.PartitionWriteBurstBytes
}
