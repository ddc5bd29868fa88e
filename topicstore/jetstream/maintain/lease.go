package maintain

import (
	"context"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// The maintenance lease: retention, the aborts of dead gateways' wide
// transactions, the sweep of dead gateways' staged chunks (sweep.go),
// snapshots and the retirement of decisions run on one gateway at a time,
// the holder of a lease kept in the stream (subject <prefix>.l): a
// message naming the holder and the time it holds it until. A gateway
// takes the lease when it is free or expired and its holder renews it,
// each a publish conditional on the subject's last sequence, so two
// gateways never both believe they hold it; one that dies stops renewing,
// and the next takes over once the lease expires. (Splits need no lease:
// see jetstream/catalog's AutoSplit.)

// TakeLease takes or renews the maintenance lease for d and reports
// whether this gateway holds it; an error is a failure to ask (the
// cluster did not answer), not another gateway holding it.
func (m *Maintenance) TakeLease(d time.Duration) (bool, error) {
	now := m.cfg.Clock()
	m.host.Lock()
	l := m.cfg.Fold.Lease
	m.host.Unlock()
	if l.Holder != "" && l.Holder != m.cfg.Gateway && now.Before(l.Until) {
		return false, nil // another gateway holds it
	}
	msg := nats.NewMsg(m.cfg.Subjects.Of(fold.KindLease))
	msg.Header.Set(fold.HHolder, m.cfg.Gateway)
	msg.Header.Set(fold.HUntil, strconv.FormatInt(now.Add(d).UnixMicro(), 10))
	jsext.Expect(msg, l.Seq)
	msg.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // the lease is its last message
	ctx, cancel := m.request(context.Background())
	defer cancel()
	seq, err := m.host.Publish(ctx, msg)
	if err != nil {
		if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
			return false, nil // taken or renewed by another meanwhile
		}
		return false, m.host.Unavailable(err)
	}
	if err := m.host.WaitApplied(context.Background(), seq); err != nil {
		return false, err
	}
	return true, nil
}
