package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
)

// Gathering (topicstore.Gatherer): a question of some kind is one core
// NATS request on _tg.<stream>.ask.<kind>, outside the stream's subjects
// (nothing of it is stored), which every gateway of the stream answers
// with its id (Tg-Gw) and its answer. The asker knows whom to wait for:
// the gateways whose heartbeat (jetstream/groups) has not expired by its clock.
// Every gateway renews its heartbeat for as long as it runs, and a
// gateway that stops gracefully publishes one that has expired already,
// so a gateway that left is not waited for; one that died is waited for
// until gatherTimeout and named in Missing. A Gather passes a read
// barrier first, so a gateway whose Open returned before it is known; an
// answer from a gateway not yet known (it started a moment ago) is taken
// if it comes first.

// gatherTimeout bounds each of a Gather's two waits, its read barrier
// and the answers (a live gateway answers in milliseconds).
const gatherTimeout = time.Second

// gatherReask is how long a Gather waits for the next answer before it
// asks again. A question is core NATS, delivered only to subscriptions the
// node it went through knows of, and a gateway publishes its heartbeat (so
// others wait for it) before its answers subscribe, and their interest
// reaches the other nodes a moment later still: a question asked in that
// moment is lost, and without asking again the gateway would be taken for
// silent until it renewed its heartbeat (seen: sys.sessions just after a
// gateway started did not show it). Answers to either question count once.
const gatherReask = 200 * time.Millisecond

type answerers struct {
	mu   sync.Mutex
	fns  map[string]func() []byte
	subs []*nats.Subscription
	// silent holds the gateways that did not answer a Gather, with the
	// sequence of the heartbeat they had then: they are not waited for
	// again until they renew it (a gateway killed a moment ago shows
	// alive for a TTL, and every view would otherwise wait a second).
	silent map[string]uint64
	// onAsk, set by tests only, runs after each question is published.
	onAsk func(n int)
}

func (s *Store) askSubject(kind string) string { return "_tg." + s.opts.Stream + ".ask." + kind }

// Serve implements topicstore.Gatherer.
func (s *Store) Serve(kind string, fn func() []byte) error {
	a := &s.answer
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fns == nil {
		a.fns = map[string]func() []byte{}
	}
	if _, ok := a.fns[kind]; ok {
		return fmt.Errorf("jetstream: questions of kind %q are already answered", kind)
	}
	sub, err := s.nc.Subscribe(s.askSubject(kind), func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		r := nats.NewMsg(m.Reply)
		r.Header.Set(fold.HGw, s.stage.gw)
		r.Data = fn()
		_ = m.RespondMsg(r)
	})
	if err != nil {
		return s.unavailable(err)
	}
	a.fns[kind], a.subs = fn, append(a.subs, sub)
	return nil
}

// Gather implements topicstore.Gatherer.
func (s *Store) Gather(ctx context.Context, kind string) (topicstore.Gathered, error) {
	self := s.stage.gw
	var out topicstore.Gathered
	s.answer.mu.Lock()
	fn := s.answer.fns[kind]
	s.answer.mu.Unlock()
	if fn != nil {
		out.Answers = append(out.Answers, topicstore.GatewayAnswer{Gateway: self, Data: fn()})
	}
	// Whom to wait for is read from the fold, which trails the stream: a
	// gateway that started a moment ago is known to the stream (its Open
	// stored its first heartbeat) before this gateway's fold has applied
	// it. A barrier first, bounded as the gathering is (on a miss the fold
	// is read as it is, as a read would), so that a gateway whose Open
	// returned is waited for (seen: pg_terminate_backend through A of a
	// session B had just accepted answered false, no such process, while
	// A's fold had not yet applied B's heartbeat and asked no one).
	bctx, bcancel := context.WithTimeout(ctx, min(s.opts.Timeout, gatherTimeout))
	_ = s.Barrier(bctx)
	bcancel()
	pending, silent := s.liveGateways()
	if len(pending) == 0 {
		out.Missing = silent
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, min(s.opts.Timeout, gatherTimeout))
	defer cancel()
	inbox := s.nc.NewInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		return out, s.unavailable(err)
	}
	defer sub.Unsubscribe()
	asked := 0
	ask := func() error {
		if err := s.nc.PublishRequest(s.askSubject(kind), inbox, nil); err != nil {
			return s.unavailable(err)
		}
		asked++
		if s.answer.onAsk != nil {
			s.answer.onAsk(asked)
		}
		return nil
	}
	if err := ask(); err != nil {
		return out, err
	}
	got := map[string]bool{self: true}
	for len(pending) > 0 {
		wctx, wcancel := context.WithTimeout(ctx, gatherReask)
		m, err := sub.NextMsgWithContext(wctx)
		wcancel()
		if err != nil {
			if ctx.Err() != nil || ask() != nil {
				break // the timeout: whoever has not answered is missing
			}
			continue // asked again (gatherReask says why)
		}
		gw := m.Header.Get(fold.HGw)
		if gw == "" || got[gw] {
			continue
		}
		got[gw] = true
		delete(pending, gw)
		out.Answers = append(out.Answers, topicstore.GatewayAnswer{Gateway: gw, Data: m.Data})
	}
	for gw := range pending {
		out.Missing = append(out.Missing, gw)
	}
	out.Missing = append(out.Missing, silent...)
	sort.Strings(out.Missing)
	s.noteSilent(got, out.Missing)
	return out, nil
}

// noteSilent records who did not answer, and forgets who did.
func (s *Store) noteSilent(answered map[string]bool, missing []string) {
	s.mu.Lock()
	seqs := map[string]uint64{}
	for _, gw := range missing {
		if b := s.fold.Groups.Beats[gw]; b != nil {
			seqs[gw] = b.Seq
		}
	}
	s.mu.Unlock()
	a := &s.answer
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.silent == nil {
		a.silent = map[string]uint64{}
	}
	for gw := range answered {
		delete(a.silent, gw)
	}
	for gw, seq := range seqs {
		a.silent[gw] = seq
	}
}

// liveGateways returns the other gateways whose heartbeat has not
// expired: those to wait for, and those that did not answer last time
// and have not renewed their heartbeat since (not waited for).
func (s *Store) liveGateways() (wait map[string]bool, silent []string) {
	s.answer.mu.Lock()
	was := maps.Clone(s.answer.silent)
	s.answer.mu.Unlock()
	now := s.opts.Clock()
	wait = map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for gw, b := range s.fold.Groups.Beats {
		if gw == s.stage.gw || !now.Before(b.Until) {
			continue
		}
		if seq, ok := was[gw]; ok && seq == b.Seq {
			silent = append(silent, gw)
			continue
		}
		wait[gw] = true
	}
	return wait, silent
}

func (s *Store) tellSubject(kind string) string { return "_tg." + s.opts.Stream + ".tell." + kind }

// Tell implements topicstore.Gatherer: one core NATS publish, which every
// gateway's Hear of kind receives (none if the cluster is away).
func (s *Store) Tell(kind string, data []byte) error {
	if err := s.nc.Publish(s.tellSubject(kind), data); err != nil {
		return s.unavailable(err)
	}
	return nil
}

// Hear implements topicstore.Gatherer.
func (s *Store) Hear(kind string, fn func(data []byte)) error {
	sub, err := s.nc.Subscribe(s.tellSubject(kind), func(m *nats.Msg) { fn(m.Data) })
	return s.keep(sub, err)
}

// keep keeps sub (to end with the store) unless subscribing failed. It
// returns once the server has the subscription (a flush), so an Ask or
// Tell from another gateway right after reaches it: a subscription is
// registered asynchronously, and until then a request has no responder.
func (s *Store) keep(sub *nats.Subscription, err error) error {
	if err == nil {
		err = s.nc.Flush()
	}
	if err != nil {
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		return s.unavailable(err)
	}
	a := &s.answer
	a.mu.Lock()
	a.subs = append(a.subs, sub)
	a.mu.Unlock()
	return nil
}

func (s *Store) toSubject(gw, kind string) string {
	return "_tg." + s.opts.Stream + ".to." + gw + "." + kind
}

// askDeadline carries an Ask's deadline to the answering gateway (Unix
// microseconds), so its answer gives up when the asker does.
const askDeadline = "Tg-Deadline"

// Ask implements topicstore.Gatherer: one core NATS request to the
// gateway's own subject; no responder, or none in time, is ErrUnavailable.
func (s *Store) Ask(ctx context.Context, gw, kind string, data []byte) ([]byte, error) {
	m := nats.NewMsg(s.toSubject(gw, kind))
	m.Data = data
	if d, ok := ctx.Deadline(); ok {
		m.Header.Set(askDeadline, strconv.FormatInt(d.UnixMicro(), 10))
	}
	r, err := s.nc.RequestMsgWithContext(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("%w: gateway %s did not answer %s: %v", topicstore.ErrUnavailable, gw, kind, err)
	}
	return r.Data, nil
}

// Answer implements topicstore.Gatherer.
func (s *Store) Answer(kind string, fn func(ctx context.Context, data []byte) []byte) error {
	sub, err := s.nc.Subscribe(s.toSubject(s.stage.gw, kind), func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if us, err := strconv.ParseInt(m.Header.Get(askDeadline), 10, 64); err == nil {
				cancel()
				ctx, cancel = context.WithDeadline(context.Background(), time.UnixMicro(us))
			}
			defer cancel()
			_ = m.Respond(fn(ctx, m.Data))
		}()
	})
	return s.keep(sub, err)
}

var _ topicstore.Gatherer = (*Store)(nil)
