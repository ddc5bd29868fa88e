package jsext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// The headers of an atomic batch publish (nats-server 2.12+, ADR-50). nats.go
// v1.55 names the expected-sequence headers (natsjs.ExpectedLastSeqHeader,
// natsjs.ExpectedLastSubjSeqHeader, natsjs.ExpectedLastSubjSeqSubjHeader) but
// has no batch API of its own.
const (
	BatchIDHeader     = "Nats-Batch-Id"
	BatchSeqHeader    = "Nats-Batch-Sequence"
	BatchCommitHeader = "Nats-Batch-Commit"
)

// Server limits on atomic batches, nats-server 2.15 defaults (settable per
// node in jetstream { limits { batch { max_msgs, max_inflight_per_stream,
// max_inflight_total, timeout } } }).
const (
	MaxBatchMsgs            = 1000             // messages in one batch
	MaxBatchInflightStream  = 50               // open batches per stream
	MaxBatchInflightServer  = 1000             // open batches per server
	BatchAbandonAfter       = 10 * time.Second // a batch with no traffic for this long is dropped
	defaultPublishTimeout   = 5 * time.Second  // as nats.go's jetstream default
	maxBatchIDLen           = 64
	errCodeWrongLastSeq     = 10071
	errCodeWrongLastSeqSame = 10164
)

// Error codes of JetStream API errors that the store tells apart.
const (
	// ErrCodeWrongLastSequence: a Nats-Expected-Last-Sequence or
	// Nats-Expected-Last-Subject-Sequence did not hold ("wrong last
	// sequence: N", N being the sequence the server found).
	ErrCodeWrongLastSequence natsjs.ErrorCode = errCodeWrongLastSeq
	// ErrCodeWrongLastSequenceConstant: an expectation the server refuses
	// without looking (10164 "wrong last sequence"): the expected subject is
	// already written earlier in the same batch, another publish to it is
	// still being proposed, or Nats-Expected-Last-Sequence is on a message
	// other than the batch's first.
	ErrCodeWrongLastSequenceConstant natsjs.ErrorCode = errCodeWrongLastSeqSame
	// ErrCodeBatchIncomplete (10176): the server lost part of the batch (a
	// gap, an abandoned batch, a leader change while it was open).
	ErrCodeBatchIncomplete natsjs.ErrorCode = 10176
	// ErrCodeAtomicDisabled (10174): the stream lacks AllowAtomicPublish.
	ErrCodeAtomicDisabled natsjs.ErrorCode = 10174
	// ErrCodeBatchTooLarge (10199): more than MaxBatchMsgs messages.
	ErrCodeBatchTooLarge natsjs.ErrorCode = 10199
	// ErrCodeBatchDuplicateMsgID (10201): a message's Nats-Msg-Id is already
	// stored (within the stream's duplicate window): a retried batch.
	ErrCodeBatchDuplicateMsgID natsjs.ErrorCode = 10201
	// ErrCodeBatchUnsupportedHeader (10177): e.g. Nats-Expected-Last-Msg-Id.
	ErrCodeBatchUnsupportedHeader natsjs.ErrorCode = 10177
	// ErrCodeNoSuitablePeers (10005): JetStream could not place a
	// stream's replicas (it has not heard from enough nodes lately, as on
	// a busy machine): creating it a moment later may work.
	ErrCodeNoSuitablePeers natsjs.ErrorCode = 10005
	// ErrCodeBatchTooManyInflight (10210): MaxBatchInflightStream or
	// MaxBatchInflightServer reached; retry.
	ErrCodeBatchTooManyInflight natsjs.ErrorCode = 10210
)

// ErrorCode returns the JetStream err_code carried by err, or 0.
func ErrorCode(err error) natsjs.ErrorCode {
	var apiErr *natsjs.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode
	}
	return 0
}

// WrongLast returns the sequence a 10071 refusal names ("wrong last
// sequence: N"): what does follow the sequence the refused message
// expected.
func WrongLast(err error) (uint64, bool) {
	var apiErr *natsjs.APIError
	if !errors.As(err, &apiErr) {
		return 0, false
	}
	i := strings.LastIndex(apiErr.Description, ": ")
	if i < 0 {
		return 0, false
	}
	n, perr := strconv.ParseUint(apiErr.Description[i+2:], 10, 64)
	return n, perr == nil
}

// BatchAck is the server's acknowledgement of a committed batch.
type BatchAck struct {
	Stream   string `json:"stream"`
	Sequence uint64 `json:"seq"` // stream sequence of the batch's last message
	BatchID  string `json:"batch"`
	Count    int    `json:"count"`
}

// First is the stream sequence of the batch's first message: a batch's
// messages take consecutive sequences.
func (a *BatchAck) First() uint64 { return a.Sequence - uint64(a.Count) + 1 }

type batchResponse struct {
	Error *natsjs.APIError `json:"error,omitempty"`
	BatchAck
}

// PublishAtomic publishes msgs as one atomic batch and returns the commit's
// acknowledgement: the server stores all of them, at consecutive sequences
// with nothing of another publisher in between, or none. All subjects must
// belong to one stream with AllowAtomicPublish; a message on a subject of
// another stream does not join the batch (TestBatchSpanningTwoStreams). The
// stream leader stages an open batch in memory (on disk for R1 file
// streams), so a leader change before the commit loses it
// (ErrCodeBatchIncomplete): retry the whole batch.
//
// The caller's expectations go in the messages' headers and are checked at
// commit against the stream as it was before the batch:
// natsjs.ExpectedLastSeqHeader on msgs[0] only (contiguous appends);
// natsjs.ExpectedLastSubjSeqHeader (optionally with
// natsjs.ExpectedLastSubjSeqSubjHeader naming another subject) on at most one
// message per subject, before any message of the batch on that subject
// (per-key compare-and-set). Nats-Expected-Last-Msg-Id is refused in
// batches; a batch with a Nats-Msg-Id already stored is refused whole
// (ErrCodeBatchDuplicateMsgID), not deduplicated.
//
// PublishAtomic sets the batch headers on msgs (their Header maps are
// modified; nil ones are created). Every message but the last is published
// without a reply subject, so a batch costs one round trip; a message the
// server drops on the way shows up as an error of the commit
// (ErrCodeBatchIncomplete). Without a deadline on ctx, the commit waits 5s.
func PublishAtomic(ctx context.Context, nc *nats.Conn, msgs []*nats.Msg) (*BatchAck, error) {
	if len(msgs) == 0 {
		return nil, errors.New("jetstream: empty atomic batch")
	}
	if len(msgs) > MaxBatchMsgs {
		return nil, fmt.Errorf("jetstream: atomic batch of %d messages: the server takes at most %d", len(msgs), MaxBatchMsgs)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultPublishTimeout)
		defer cancel()
	}
	id := nuid.Next()
	last := len(msgs) - 1
	for i, m := range msgs {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		m.Header.Set(BatchIDHeader, id)
		m.Header.Set(BatchSeqHeader, strconv.Itoa(i+1))
		if i == last {
			break
		}
		m.Header.Del(BatchCommitHeader)
		if err := nc.PublishMsg(m); err != nil {
			return nil, fmt.Errorf("jetstream: atomic batch message %d of %d: %w: %w", i+1, len(msgs), ErrBatchNotSent, err)
		}
	}
	if nc.IsClosed() {
		return nil, fmt.Errorf("jetstream: atomic batch on %s: %w: %w", msgs[last].Subject, ErrBatchNotSent, nats.ErrConnectionClosed)
	}
	commit := msgs[last]
	commit.Header.Set(BatchCommitHeader, "1")
	resp, err := nc.RequestMsgWithContext(ctx, commit)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("jetstream: atomic batch on %s: no stream takes that subject: %w", commit.Subject, err)
		}
		return nil, fmt.Errorf("jetstream: atomic batch commit on %s: %w", commit.Subject, err)
	}
	var r batchResponse
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, fmt.Errorf("jetstream: atomic batch commit on %s: bad ack %q: %w", commit.Subject, resp.Data, err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("jetstream: atomic batch of %d on %s: %w", len(msgs), commit.Subject, r.Error)
	}
	if r.BatchID != id || r.Count != len(msgs) {
		return nil, fmt.Errorf("jetstream: atomic batch commit on %s: ack for batch %q of %d, want %q of %d", commit.Subject, r.BatchID, r.Count, id, len(msgs))
	}
	return &r.BatchAck, nil
}

// ErrBatchNotSent marks a PublishAtomic that failed before its commit
// message went out: the server stored nothing of it (an open batch it
// never sees committed is dropped), so it may be sent again.
var ErrBatchNotSent = errors.New("the batch was not sent")

// Expect makes m conditional on its subject's last sequence.
func Expect(m *nats.Msg, seq uint64) {
	m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(seq, 10))
}
