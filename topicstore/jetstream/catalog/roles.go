package catalog

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// The role catalog (topicstore.RoleStore): one document, opaque to the
// store, on the subject <prefix>.a, in as many messages of one atomic
// batch as its size needs (fold.Roles: a message's headers hold at most
// 64 KiB, and the fold reads headers only), the first rolling up the
// document before it, so the subject keeps the last document only; the
// last message's stream sequence is the document's version. A change is
// conditional on the subject's last sequence being the version it was
// based on, so of two changes based on the same version one is stored
// and the other refused; the fold applies it like any other message, so
// every gateway reads the same document.

// RolesPartBytes is how much of a document one message holds: its base64
// form (4/3 of it) and the message's other headers stay well under the
// 64 KiB of headers the server takes.
const RolesPartBytes = 32 << 10

// Roles implements topicstore.RoleStore's Roles: the document as this
// gateway's fold holds it, and its version. The document is shared: the
// fold replaces it, never changes it.
func (c *Catalog) Roles() ([]byte, uint64) {
	c.h.Lock()
	defer c.h.Unlock()
	r := c.cfg.Fold.Roles
	if r.Seq == 0 {
		return nil, 0
	}
	return r.Doc, r.Seq
}

// SetRoles implements topicstore.RoleStore's SetRoles: it publishes doc
// expecting the subject's last sequence to be expect and returns once the
// fold has applied it. A refusal for a wrong last sequence is
// ErrRolesConflict, after the fold caught up with what refused it (so
// Roles then shows a newer version); no leader until the store's timeout,
// or no connection, is ErrUnavailable (nothing stored); a publish whose
// answer never came is ErrOutcomeUnknown unless the subject's last
// message turns out to be this change.
func (c *Catalog) SetRoles(ctx context.Context, expect uint64, doc []byte) (uint64, error) {
	c.h.Lock()
	closed := c.h.Closed()
	c.h.Unlock()
	if closed {
		return 0, topicstore.ErrClosed
	}
	parts := max(1, (len(doc)+RolesPartBytes-1)/RolesPartBytes)
	if parts > jsext.MaxBatchMsgs {
		return 0, fmt.Errorf("a role catalog of %d bytes: the cluster store keeps at most %d", len(doc), jsext.MaxBatchMsgs*RolesPartBytes)
	}
	id := changeID()
	deadline := time.Now().Add(c.cfg.Timeout)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, err // nothing published in this attempt; none before stored anything
		}
		if !c.h.Connected() {
			return 0, fmt.Errorf("%w: not connected to the NATS cluster: the role catalog was not changed", topicstore.ErrUnavailable)
		}
		seq, err := c.publishRoles(ctx, c.rolesMsgs(expect, id, doc, parts))
		if err == nil {
			return c.rolesApplied(ctx, seq)
		}
		switch code := jsext.ErrorCode(err); {
		case c.h.NoLeader(err):
			if time.Now().Before(deadline) && ctx.Err() == nil {
				c.h.AwaitLeader(attempt) // nothing stored: an election
				continue
			}
			return 0, c.h.Unavailable(err)
		case code == jsext.ErrCodeWrongLastSequence:
			_ = c.h.CatchUp(err) // so that Roles shows the newer version; the refusal stands either way
			return 0, rolesConflict(expect, err)
		case code == jsext.ErrCodeWrongLastSequenceConstant:
			// Another change of the subject was being proposed: nothing
			// of this one is stored. Once the fold caught up, a newer
			// version is a conflict; the same one (the other change
			// failed) is tried again.
			if c.h.CatchUp(err) == nil && c.rolesVersion() == expect && attempt < c.cfg.MaxAttempts && time.Now().Before(deadline) {
				continue
			}
			return 0, rolesConflict(expect, err)
		case code != 0 || errors.Is(err, nats.ErrMaxPayload):
			return 0, c.h.Unavailable(err) // refused, or never sent: nothing stored
		default:
			return c.learnRoles(ctx, id, err)
		}
	}
}

// rolesMsgs are the messages of change id: doc in parts, the first
// rolling the subject up on the condition that its last sequence is
// expect.
func (c *Catalog) rolesMsgs(expect uint64, id string, doc []byte, parts int) []*nats.Msg {
	msgs := make([]*nats.Msg, parts)
	for i := range msgs {
		m := nats.NewMsg(c.cfg.Subjects.Of(fold.KindRoles))
		m.Header.Set(fold.HRoles, base64.StdEncoding.EncodeToString(doc[min(i*RolesPartBytes, len(doc)):min((i+1)*RolesPartBytes, len(doc))]))
		m.Header.Set(fold.HRolesID, id)
		if parts > 1 {
			m.Header.Set(fold.HRolesPart, fold.RolesPart(i, parts))
		}
		msgs[i] = m
	}
	msgs[0].Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // the subject keeps the last document only
	jsext.Expect(msgs[0], expect)
	return msgs
}

// publishRoles publishes a change's messages, one alone or all as an
// atomic batch, and returns the last one's stream sequence.
func (c *Catalog) publishRoles(ctx context.Context, msgs []*nats.Msg) (uint64, error) {
	rctx, cancel := c.request(ctx)
	defer cancel()
	if len(msgs) == 1 {
		return c.h.Publish(rctx, msgs[0])
	}
	ack, err := c.h.PublishBatch(rctx, msgs)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// rolesApplied waits until the fold has applied the change stored at seq
// (read your writes), even if the caller gave up meanwhile. A stored
// change the fold does not apply in time is ErrOutcomeUnknown, with its
// version: the change is not lost, but this gateway's view lacks it.
func (c *Catalog) rolesApplied(ctx context.Context, seq uint64) (uint64, error) {
	if err := c.h.WaitApplied(context.WithoutCancel(ctx), seq); err != nil {
		return seq, fmt.Errorf("%w: the role catalog was stored as version %d, but this gateway's view has not caught up with it: %v",
			topicstore.ErrOutcomeUnknown, seq, err)
	}
	return seq, nil
}

// rolesConflict is the refusal of a change based on version expect.
func rolesConflict(expect uint64, refusal error) error {
	return fmt.Errorf("%w: the change was based on version %d: %v", topicstore.ErrRolesConflict, expect, refusal)
}

// rolesVersion is the version of the role catalog the fold holds.
func (c *Catalog) rolesVersion() uint64 {
	c.h.Lock()
	defer c.h.Unlock()
	return c.cfg.Fold.Roles.Seq
}

// learnRoles learns what became of change id, whose publish got no
// answer (cause): stored if it is the subject's last message, else
// ErrOutcomeUnknown (it may still be stored, or have been stored and
// replaced already).
func (c *Catalog) learnRoles(ctx context.Context, id string, cause error) (uint64, error) {
	rctx, cancel := c.request(context.WithoutCancel(ctx))
	seq, h, err := c.h.LastFor(rctx, c.cfg.Subjects.Of(fold.KindRoles))
	cancel()
	if err == nil && seq != 0 && h.Get(fold.HRolesID) == id {
		return c.rolesApplied(ctx, seq)
	}
	return 0, fmt.Errorf("%w: the cluster did not answer whether it stored the role catalog's change: %v", topicstore.ErrOutcomeUnknown, c.h.Unavailable(cause))
}

// changeID is a random id for one change of the role catalog.
func changeID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
