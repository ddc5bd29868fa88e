package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jsext"
)

// fetchRecordBatch fetches the record batch message at seq (natsIO's
// getRecord, behind reads.Reads.Record's cache): by a direct get,
// which any replica that counts itself current answers, and, if that one
// has not stored seq yet (it lags the node this gateway's fold read it
// from by a moment, or is catching up after a restart: "message not
// found"), from the stream's leader, which has every committed message.
// Both can miss it for a moment: a leader elected a moment ago answers
// before it has applied its whole log (seen once in TestClusterCrash,
// under load on two cores, with no node down). So a miss is asked again,
// backing off from a millisecond, until the store's timeout; a message
// still missing then is reported with the stream's state, so a real loss
// is told apart from a lag.
//
// What a stream without a
// leader cannot answer (an election: no replica serves direct gets, and
// there is no leader to ask) is asked again, like a miss, for as long as a
// commit would ride it out (Options.CommitTimeout, cut short by ctx): a
// read during an election is a delay, not an error.
func (s *Store) fetchRecordBatch(ctx context.Context, seq uint64) ([]byte, error) {
	deadline := time.Now().Add(s.opts.CommitTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	missed := time.Now().Add(s.opts.Timeout) // a message missing this long is reported
	var last error
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		rctx, cancel := s.request(ctx)
		raw, err := s.stream.GetMsg(rctx, seq)
		if err == nil {
			cancel()
			return raw.Data, nil
		}
		if !errors.Is(err, natsjs.ErrMsgNotFound) && !transientRead(err) {
			cancel()
			return nil, err
		}
		data, lerr := s.leaderGet(rctx, seq)
		cancel()
		if lerr == nil {
			return data, nil
		}
		if !errors.Is(lerr, natsjs.ErrMsgNotFound) && !transientRead(lerr) {
			return nil, lerr
		}
		last = lerr
		now := time.Now()
		if ctx.Err() != nil || !now.Before(deadline) || errors.Is(lerr, natsjs.ErrMsgNotFound) && !now.Before(missed) {
			return nil, s.missing(ctx, seq, last)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, s.missing(ctx, seq, last)
		case <-t.C:
		}
	}
}

// transientRead reports whether a read failed because the stream could
// not answer this moment (no leader, no replica serving, no answer in
// time, a connection moving to another node), not because of what it
// asked.
func transientRead(err error) bool {
	return noLeader(err) || jsext.ErrorCode(err) == errCodeTemporarilyUnavailable || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrDisconnected)
}

// missing describes a message the fold holds that no node returned: the
// stream's first and last sequences and its count of interior deletes.
func (s *Store) missing(ctx context.Context, seq uint64, err error) error {
	ictx, cancel := s.request(ctx)
	defer cancel()
	if info, ierr := s.stream.Info(ictx); ierr == nil {
		st := info.State
		return fmt.Errorf("%w (stream first %d, last %d, %d deleted; leader %s)", err, st.FirstSeq, st.LastSeq, st.NumDeleted, info.Cluster.Leader)
	}
	return err
}

// leaderGet fetches the data of the message at seq from the stream's
// leader ($JS.API.STREAM.MSG.GET, which only the leader answers).
func (s *Store) leaderGet(ctx context.Context, seq uint64) ([]byte, error) {
	_, _, data, err := s.leaderMsg(ctx, map[string]any{"seq": seq})
	var apiErr *natsjs.APIError
	if errors.Is(err, natsjs.ErrMsgNotFound) || errors.As(err, &apiErr) {
		err = fmt.Errorf("stream %s message %d, which the fold holds, is gone from the leader too: %w", s.opts.Stream, seq, err)
	}
	return data, err
}

// leaderMsg asks the stream's leader for the message req names (by
// "seq", or "last_by_subj"): its sequence, headers and data, or
// ErrMsgNotFound. Unlike a direct get, which any replica answers from
// what it has applied, the leader has every message it acknowledged.
func (s *Store) leaderMsg(ctx context.Context, req map[string]any) (uint64, nats.Header, []byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return 0, nil, nil, err
	}
	resp, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+s.opts.Stream, body)
	if err != nil {
		return 0, nil, nil, err
	}
	var r struct {
		Error   *natsjs.APIError `json:"error"`
		Message *struct {
			Seq    uint64 `json:"seq"`
			Header []byte `json:"hdrs"`
			Data   []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return 0, nil, nil, fmt.Errorf("stream %s: a message's answer: %w", s.opts.Stream, err)
	}
	if r.Error != nil {
		if r.Error.ErrorCode == natsjs.JSErrCodeMessageNotFound {
			return 0, nil, nil, natsjs.ErrMsgNotFound
		}
		return 0, nil, nil, r.Error
	}
	if r.Message == nil {
		return 0, nil, nil, natsjs.ErrInvalidJetStreamResponse
	}
	var h nats.Header
	if len(r.Message.Header) > 0 {
		if h, err = nats.DecodeHeadersMsg(r.Message.Header); err != nil {
			return 0, nil, nil, err
		}
	}
	return r.Message.Seq, h, r.Message.Data, nil
}
