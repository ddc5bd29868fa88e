package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// Documents (topicstore.Documents): each key is a subject of its own,
// <prefix>.y.<keyHex>, whose last message is the document (its payload)
// and whose stream sequence is its version. A change is one message
// rolling the subject up, conditional on the subject's last sequence
// being the version it was based on, so of two changes based on the same
// version one is stored; stream sequences are never given twice. A
// deletion is a tombstone (HDocDeleted) stored the same way, then purged
// with what it replaced, so a deleted key leaves nothing behind. The fold
// skips these subjects: a document is read from the stream (the last
// message of its subject), never from a gateway's view.

var _ topicstore.Documents = (*Store)(nil)

// Document implements topicstore.Documents: the subject's last message,
// as the stream's leader has it. A direct get, which any replica answers,
// could return a version a change or a deletion already replaced (what
// the version a caller then writes against would refuse, or bring a
// deleted document back).
func (s *Store) Document(ctx context.Context, key string) ([]byte, uint64, error) {
	if err := topicstore.CheckDocument(key, nil); err != nil {
		return nil, 0, err
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	seq, h, doc, err := s.io.lastOnLeader(rctx, s.subj.Document(key))
	if err != nil {
		return nil, 0, fmt.Errorf("reading document %q: %w", key, s.unavailable(err))
	}
	if seq == 0 || h.Get(fold.HDocDeleted) != "" {
		return nil, seq, nil
	}
	if doc == nil {
		doc = []byte{}
	}
	return doc, seq, nil
}

// SetDocument implements topicstore.Documents: one message conditional
// on the subject's last sequence. No leader is waited for until the
// store's timeout (nothing stored); a publish whose answer never came is
// ErrOutcomeUnknown unless the subject's last message is this change.
func (s *Store) SetDocument(ctx context.Context, key string, expect uint64, doc []byte) (uint64, error) {
	if err := topicstore.CheckDocument(key, doc); err != nil {
		return 0, err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return 0, topicstore.ErrClosed
	}
	subj := s.subj.Document(key)
	id := docChangeID()
	deadline := time.Now().Add(s.opts.Timeout)
	for attempt := 0; ; attempt++ {
		m := nats.NewMsg(subj)
		m.Data = doc
		m.Header.Set(fold.HDocID, id)
		if doc == nil {
			m.Header.Set(fold.HDocDeleted, "1")
		}
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // the subject keeps its last message only
		jsext.Expect(m, expect)
		rctx, cancel := s.request(ctx)
		seq, err := s.io.publish(rctx, m)
		cancel()
		switch code := jsext.ErrorCode(err); {
		case err == nil:
			return s.documentStored(ctx, subj, seq, doc == nil)
		case noLeader(err):
			if time.Now().Before(deadline) && ctx.Err() == nil {
				s.awaitLeader(attempt) // nothing stored: an election
				continue
			}
			return 0, s.unavailable(err)
		case code == jsext.ErrCodeWrongLastSequence || code == jsext.ErrCodeWrongLastSequenceConstant:
			return 0, fmt.Errorf("%w: %q changed since version %d: %v", topicstore.ErrDocumentConflict, key, expect, err)
		case code != 0 || errors.Is(err, nats.ErrMaxPayload):
			return 0, s.unavailable(err) // refused, or never sent: nothing stored
		default:
			// No answer: stored if the subject's last message is this change.
			lctx, cancel := s.request(context.WithoutCancel(ctx))
			last, h, _, lerr := s.io.lastOnLeader(lctx, subj)
			cancel()
			if lerr == nil && last != 0 && h.Get(fold.HDocID) == id {
				return s.documentStored(ctx, subj, last, doc == nil)
			}
			return 0, fmt.Errorf("%w: the cluster did not answer whether it stored document %q: %v", topicstore.ErrOutcomeUnknown, key, s.unavailable(err))
		}
	}
}

// documentStored is a stored change's version: seq, or, for a tombstone
// purged with everything before it, 0 (a tombstone the purge missed
// stays the subject's last message and its version).
func (s *Store) documentStored(ctx context.Context, subj string, seq uint64, deleted bool) (uint64, error) {
	if !deleted {
		return seq, nil
	}
	pctx, cancel := s.request(context.WithoutCancel(ctx))
	defer cancel()
	if err := s.io.purge(pctx, subj, seq+1); err != nil {
		return seq, nil
	}
	return 0, nil
}

// DocumentKeys implements topicstore.Documents: the stream's subjects of
// documents, by the stream's own count (a tombstone not yet purged is
// listed).
func (s *Store) DocumentKeys(ctx context.Context, prefix string) ([]string, error) {
	rctx, cancel := s.request(ctx)
	defer cancel()
	info, err := s.stream.Info(rctx, natsjs.WithSubjectFilter(s.subj.Filter(fold.KindDocument)))
	if err != nil {
		return nil, fmt.Errorf("listing documents: %w", s.unavailable(err))
	}
	var out []string
	for subj := range info.State.Subjects {
		if k, ok := s.subj.DocumentKey(subj); ok && len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// docChangeID is a random id for one change of a document.
func docChangeID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
