package jstest_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/jstest"
)

// TestAtomicBatchAllOrNothing: a committed batch lands whole at consecutive
// sequences; one never committed leaves nothing (and a gap, nothing either:
// TestAtomicBatchGapReported).
func TestAtomicBatchAllOrNothing(t *testing.T) {
	c := jstest.Start(t, 3)
	nc := c.Connect()
	s := atomicStream(t, jstest.JetStream(t, nc), "P0", "p0.>")

	ack, err := publishAtomic(t, nc, batch("p0.a", "one", 10))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "P0" || ack.Count != 10 || ack.First() != 1 || ack.Sequence != 10 {
		t.Fatalf("ack %+v, want P0 1..10", ack)
	}
	for i, m := range readAll(t, s) {
		if seq, want := seqOf(t, m), uint64(i+1); seq != want || string(m.Data()) != fmt.Sprintf("one-%d", i) {
			t.Fatalf("message %d: seq %d %q", i, seq, m.Data())
		}
	}

	// Never committed: staged on the leader, invisible, dropped after 10s.
	for i, m := range batch("p0.a", "open", 5) {
		m.Header = nats.Header{jsext.BatchIDHeader: {"open-batch"}, jsext.BatchSeqHeader: {fmt.Sprint(i + 1)}}
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ack, err = publishAtomic(t, nc, batch("p0.a", "two", 3))
	if err != nil {
		t.Fatal(err)
	}
	if ack.First() != 11 || ack.Sequence != 13 {
		t.Fatalf("second batch at %d..%d, want 11..13", ack.First(), ack.Sequence)
	}
	if last, n := lastSeq(t, s); last != 13 || n != 13 {
		t.Fatalf("last %d, %d msgs; want 13, 13 (the open batch stays invisible)", last, n)
	}
}

// TestAtomicBatchGapReported: the commit of a batch that lost a message is
// answered with err_code 10176 (what PublishAtomic returns when a message
// it sent without a reply was dropped).
func TestAtomicBatchGapReported(t *testing.T) {
	c := jstest.Start(t, 3)
	nc := c.Connect()
	s := atomicStream(t, jstest.JetStream(t, nc), "G", "g.>")
	// The raw publishes below do not retry: wait until every node routes
	// the stream's subjects (a fresh stream answered "no responders" once).
	servedEverywhere(t, c, "g.probe")
	m1 := &nats.Msg{Subject: "g.a", Data: []byte("1"), Header: nats.Header{
		jsext.BatchIDHeader: {"b"}, jsext.BatchSeqHeader: {"1"}}}
	m3 := &nats.Msg{Subject: "g.a", Data: []byte("3"), Header: nats.Header{
		jsext.BatchIDHeader: {"b"}, jsext.BatchSeqHeader: {"3"}, jsext.BatchCommitHeader: {"1"}}}
	if err := nc.PublishMsg(m1); err != nil {
		t.Fatal(err)
	}
	resp, err := nc.RequestMsg(m3, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Data), `"err_code":10176`) {
		t.Fatalf("commit after a gap answered %s, want err_code 10176", resp.Data)
	}
	t.Logf("gap: %s", resp.Data)
	if _, n := lastSeq(t, s); n != 0 {
		t.Fatalf("%d messages stored", n)
	}
}

// TestAtomicBatchesDoNotInterleave: batches from concurrent writers on one
// stream each occupy a run of consecutive sequences.
func TestAtomicBatchesDoNotInterleave(t *testing.T) {
	c := jstest.Start(t, 3)
	s := atomicStream(t, jstest.JetStream(t, c.Connect()), "I", "i.>")
	servedEverywhere(t, c, "i.probe")
	const writers, batches, size = 4, 10, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for w := range writers {
		nc := c.ConnectTo(w % 3) // through different nodes, so through routes too
		wg.Go(func() {
			for b := range batches {
				if _, err := jsext.PublishAtomic(ctxFor(t, 10*time.Second), nc, batch("i.x", fmt.Sprintf("w%db%d", w, b), size)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := readAll(t, s)
	if len(all) != writers*batches*size {
		t.Fatalf("%d messages, want %d", len(all), writers*batches*size)
	}
	for i := 0; i < len(all); i += size {
		tag, _, _ := strings.Cut(string(all[i].Data()), "-")
		for j := range size {
			if got := string(all[i+j].Data()); got != fmt.Sprintf("%s-%d", tag, j) {
				t.Fatalf("seq %d holds %q inside batch %s", i+j+1, got, tag)
			}
		}
	}
}

// TestBatchExpectedSubjectSeqRejectsWhole: per-subject compare-and-set in a
// batch (producer seqno dedup, position CAS). One failing expectation refuses
// the whole batch with err_code 10071 "wrong last sequence: N", N being the
// subject's real last sequence; nothing of the batch is stored.
func TestBatchExpectedSubjectSeqRejectsWhole(t *testing.T) {
	c := jstest.Start(t, 3)
	nc := c.Connect()
	s := atomicStream(t, jstest.JetStream(t, nc), "D", "d.*.*")
	if _, err := publishAtomic(t, nc, []*nats.Msg{
		expectSubjSeq(&nats.Msg{Subject: "d.0.prodA", Data: []byte("a1")}, 0),
		expectSubjSeq(&nats.Msg{Subject: "d.0.prodB", Data: []byte("b1")}, 0),
	}); err != nil {
		t.Fatal(err)
	}
	// prodA's expectation holds (its last is 1), prodB's does not (its last is 2).
	stale := func() []*nats.Msg {
		return []*nats.Msg{
			expectSubjSeq(&nats.Msg{Subject: "d.0.prodA", Data: []byte("a2")}, 1),
			{Subject: "d.0.prodA", Data: []byte("a3")},
			expectSubjSeq(&nats.Msg{Subject: "d.0.prodB", Data: []byte("b2")}, 1),
		}
	}
	_, err := publishAtomic(t, nc, stale())
	wantCode(t, err, jsext.ErrCodeWrongLastSequence)
	if !strings.Contains(err.Error(), "wrong last sequence: 2") {
		t.Errorf("error %q should name prodB's real last sequence 2", err)
	}
	t.Logf("stale expectation: %v", err)
	if last, n := lastSeq(t, s); last != 2 || n != 2 {
		t.Fatalf("last %d, %d msgs after the refused batch; want 2, 2", last, n)
	}

	// An expectation on a subject the batch already wrote is refused without
	// looking: 10164.
	_, err = publishAtomic(t, nc, []*nats.Msg{
		{Subject: "d.0.prodA", Data: []byte("a2")},
		expectSubjSeq(&nats.Msg{Subject: "d.0.prodA", Data: []byte("a3")}, 1),
	})
	wantCode(t, err, jsext.ErrCodeWrongLastSequenceConstant)
	t.Logf("expectation after a write in the same batch: %v", err)

	// The expectation may name another subject than the message's
	// (Nats-Expected-Last-Subject-Sequence-Subject): a decision record can
	// carry the check of a position it does not write.
	guarded := expectSubjSeq(&nats.Msg{Subject: "d.dec.tx1", Data: []byte("decision")}, 2)
	guarded.Header.Set("Nats-Expected-Last-Subject-Sequence-Subject", "d.0.prodB")
	ack, err := publishAtomic(t, nc, []*nats.Msg{
		expectSubjSeq(&nats.Msg{Subject: "d.0.prodA", Data: []byte("a2")}, 1),
		{Subject: "d.0.prodA", Data: []byte("a3")},
		guarded,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ack.First() != 3 || ack.Sequence != 5 {
		t.Fatalf("batch at %d..%d, want 3..5", ack.First(), ack.Sequence)
	}
}

// TestBatchExpectedLastSequenceContiguous: Nats-Expected-Last-Sequence on a
// batch's first message makes appends contiguous: of two writers that read
// the same head, the second is refused (10071) and retries at the new head.
func TestBatchExpectedLastSequenceContiguous(t *testing.T) {
	c := jstest.Start(t, 3)
	ncA, ncB := c.ConnectTo(0), c.ConnectTo(1)
	s := atomicStream(t, jstest.JetStream(t, ncA), "C", "c.>")
	servedEverywhere(t, c, "c.probe")
	head, _ := lastSeq(t, s) // both writers read head 0

	msgs := batch("c.x", "A", 5)
	expectLastSeq(msgs[0], head)
	ack, err := publishAtomic(t, ncA, msgs)
	if err != nil {
		t.Fatal(err)
	}
	msgs = batch("c.x", "B", 5)
	expectLastSeq(msgs[0], head)
	_, err = publishAtomic(t, ncB, msgs)
	wantCode(t, err, jsext.ErrCodeWrongLastSequence)
	if !strings.Contains(err.Error(), "wrong last sequence: 5") {
		t.Errorf("error %q should name the head 5", err)
	}
	t.Logf("stale head: %v", err)
	msgs = batch("c.x", "B", 5)
	expectLastSeq(msgs[0], ack.Sequence)
	ack, err = publishAtomic(t, ncB, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if ack.First() != 6 {
		t.Fatalf("retried batch starts at %d, want 6", ack.First())
	}

	// Only the first message may carry it: 10164 elsewhere.
	msgs = batch("c.x", "late", 2)
	expectLastSeq(msgs[1], ack.Sequence+1)
	_, err = publishAtomic(t, ncA, msgs)
	wantCode(t, err, jsext.ErrCodeWrongLastSequenceConstant)
	if last, n := lastSeq(t, s); last != 10 || n != 10 {
		t.Fatalf("last %d, %d msgs; want 10, 10", last, n)
	}
}

// TestBatchSpanningTwoStreams: an atomic batch cannot span two streams. Each
// stream runs its own batches, so the other stream's part is a stray message
// with an unknown batch and sequence > 1, and the committing stream sees a
// gap: the commit is refused (10176) and neither stream stores anything.
// This is why a multi-partition commit is decided by one batch on one
// metadata stream.
func TestBatchSpanningTwoStreams(t *testing.T) {
	c := jstest.Start(t, 3)
	nc := c.Connect()
	js := jstest.JetStream(t, nc)
	a := atomicStream(t, js, "A", "a.>")
	b := atomicStream(t, js, "B", "b.>")
	for _, subjects := range [][]string{{"a.x", "b.x", "a.x"}, {"a.x", "a.x", "b.x"}, {"b.x", "a.x"}} {
		var msgs []*nats.Msg
		for _, subj := range subjects {
			msgs = append(msgs, &nats.Msg{Subject: subj, Data: []byte(subj)})
		}
		_, err := publishAtomic(t, nc, msgs)
		wantCode(t, err, jsext.ErrCodeBatchIncomplete)
		t.Logf("%v: %v", subjects, err)
	}
	for _, s := range []struct {
		name string
		last uint64
	}{{"A", must(lastSeq(t, a))}, {"B", must(lastSeq(t, b))}} {
		if s.last != 0 {
			t.Errorf("stream %s holds %d messages", s.name, s.last)
		}
	}
}

func must(last, _ uint64) uint64 { return last }

// TestBatchMsgIDs: Nats-Msg-Id inside a batch. A retried batch whose
// messages' ids are already stored is not deduplicated silently, as a
// single publish is: it is refused whole with 10201 ("atomic publish batch
// contains duplicate message id"). Nats-Expected-Last-Msg-Id is refused in a
// batch (10177).
func TestBatchMsgIDs(t *testing.T) {
	c := jstest.Start(t, 3)
	nc := c.Connect()
	s := atomicStream(t, jstest.JetStream(t, nc), "M", "m.>")
	withIDs := func() []*nats.Msg {
		msgs := batch("m.x", "id", 2)
		for i, m := range msgs {
			m.Header = nats.Header{"Nats-Msg-Id": {fmt.Sprintf("tx1-%d", i)}}
		}
		return msgs
	}
	if _, err := publishAtomic(t, nc, withIDs()); err != nil {
		t.Fatal(err)
	}
	_, err := publishAtomic(t, nc, withIDs())
	wantCode(t, err, jsext.ErrCodeBatchDuplicateMsgID)
	t.Logf("retried batch: %v", err)

	msgs := batch("m.x", "lastid", 2)
	msgs[0].Header = nats.Header{"Nats-Expected-Last-Msg-Id": {"tx1-1"}}
	_, err = publishAtomic(t, nc, msgs)
	wantCode(t, err, jsext.ErrCodeBatchUnsupportedHeader)
	t.Logf("expected last msg id: %v", err)
	if last, n := lastSeq(t, s); last != 2 || n != 2 {
		t.Fatalf("last %d, %d msgs; want 2, 2", last, n)
	}
}
