package jetstream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"topicgate/topicstore/jetstream/jsext"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// simStream is an in-memory JetStream stream with the semantics the commit
// protocol stands on (doc.go lists where each was verified on real nodes):
// a log of messages with stream sequences; per-subject last sequences;
// atomic batches, stored whole or not at all, whose
// Nats-Expected-Last-Subject-Sequence checks (optionally on another
// subject) are made against the stream before the batch, an expectation on
// a subject written earlier in the batch or by a proposal still in flight
// being refused with 10164; rollups; purges by subject filter below a
// sequence; deletes. A proposal is a batch the leader accepted and has not
// stored yet: the scheduler stores it later, or drops it (a leader change
// lost it).
type simStream struct {
	msgs     []*simMsg // msgs[i] has sequence i+1
	last     map[string]uint64
	inflight []*simProposal
}

type simMsg struct {
	subject string
	h       nats.Header
	data    []byte
	ts      time.Time
	gone    bool // deleted, purged or rolled up
}

type simProposal struct {
	msgs []*nats.Msg
	at   time.Time
}

func newSimStream() *simStream { return &simStream{last: map[string]uint64{}} }

func (st *simStream) lastSeq() uint64 { return uint64(len(st.msgs)) }

func (st *simStream) get(seq uint64) *simMsg {
	if seq == 0 || seq > uint64(len(st.msgs)) {
		return nil
	}
	if m := st.msgs[seq-1]; !m.gone {
		return m
	}
	return nil
}

// apiError is the error JetStream answers a refused publish with.
func simAPIError(code natsjs.ErrorCode, desc string) error {
	return &natsjs.APIError{Code: 400, ErrorCode: code, Description: desc}
}

// check reports whether msgs, as one batch, would be refused.
func (st *simStream) check(msgs []*nats.Msg) error {
	written := map[string]bool{}
	for i, m := range msgs {
		if v := m.Header.Get(natsjs.ExpectedLastSeqHeader); v != "" {
			n, _ := strconv.ParseUint(v, 10, 64)
			if i != 0 {
				return simAPIError(jsext.ErrCodeWrongLastSequenceConstant, "wrong last sequence")
			}
			if n != st.lastSeq() {
				return simAPIError(jsext.ErrCodeWrongLastSequence, fmt.Sprintf("wrong last sequence: %d", st.lastSeq()))
			}
		}
		if v := m.Header.Get(natsjs.ExpectedLastSubjSeqHeader); v != "" {
			subj := m.Subject
			if o := m.Header.Get(natsjs.ExpectedLastSubjSeqSubjHeader); o != "" {
				subj = o
			}
			if written[subj] || st.proposed(subj) {
				return simAPIError(jsext.ErrCodeWrongLastSequenceConstant, "wrong last sequence")
			}
			n, _ := strconv.ParseUint(v, 10, 64)
			if st.last[subj] != n {
				return simAPIError(jsext.ErrCodeWrongLastSequence, fmt.Sprintf("wrong last sequence: %d", st.last[subj]))
			}
		}
		written[m.Subject] = true
	}
	return nil
}

// proposed reports whether a proposal in flight writes subj.
func (st *simStream) proposed(subj string) bool {
	for _, p := range st.inflight {
		for _, m := range p.msgs {
			if m.Subject == subj {
				return true
			}
		}
	}
	return false
}

// store appends msgs and returns the last one's sequence.
func (st *simStream) store(msgs []*nats.Msg, now time.Time) uint64 {
	for _, m := range msgs {
		h := make(nats.Header, len(m.Header))
		for k, v := range m.Header {
			h[k] = append([]string(nil), v...)
		}
		for _, k := range []string{jsext.BatchIDHeader, jsext.BatchSeqHeader, jsext.BatchCommitHeader} {
			delete(h, k)
		}
		st.msgs = append(st.msgs, &simMsg{subject: m.Subject, h: h, data: append([]byte(nil), m.Data...), ts: now})
		seq := st.lastSeq()
		if h.Get(natsjs.MsgRollup) == natsjs.MsgRollupSubject {
			for i := uint64(1); i < seq; i++ {
				if x := st.msgs[i-1]; !x.gone && x.subject == m.Subject {
					x.gone = true
				}
			}
		}
		st.last[m.Subject] = seq
	}
	return st.lastSeq()
}

// purge deletes the messages on subjects matching filter below seq below
// (0: all).
func (st *simStream) purge(filter string, below uint64) {
	touched := map[string]bool{}
	for i, m := range st.msgs {
		seq := uint64(i + 1)
		if m.gone || below > 0 && seq >= below || !subjectMatches(filter, m.subject) {
			continue
		}
		m.gone = true
		touched[m.subject] = true
	}
	for subj := range touched {
		st.relast(subj)
	}
}

func (st *simStream) deleteMsg(seq uint64) {
	if m := st.get(seq); m != nil {
		m.gone = true
		st.relast(m.subject)
	}
}

// relast recomputes a subject's last sequence after deletions.
func (st *simStream) relast(subj string) {
	for i := len(st.msgs) - 1; i >= 0; i-- {
		if m := st.msgs[i]; !m.gone && m.subject == subj {
			st.last[subj] = uint64(i + 1)
			return
		}
	}
	delete(st.last, subj)
}

// subjectMatches is NATS subject matching: '*' one token, '>' the rest.
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(f) == len(s)
}
