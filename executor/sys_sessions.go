package executor

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"time"

	"topicgate/sql/values"
	"topicgate/topicstore"
)

// sys.sessions and sys.transactions show every session of the server: on
// the embedded store, this process's; on a store several gateways share
// (a topicstore.Gatherer), every live gateway's, each gateway answering
// for its own (CockroachDB's cluster_sessions fans out to every node the
// same way). One gateway's sessions are a []sessionView, built by the same
// code for both stores, sent as JSON to the gateway that asks, and turned
// into rows there; the gateway column names each row's gateway (NULL on
// the embedded store). A gateway that is alive by the store's reckoning
// but does not answer within a second is left out, and logged. sys.consumers.read_session and read_gateway name the session that
// reads a partition, wherever it runs.

// gatherSessions is the kind of question Gather asks for sessions.
const gatherSessions = "sessions"

// sessionView is one session as sys.sessions and sys.transactions show it.
type sessionView struct {
	PID      int64      `json:"pid"`
	User     string     `json:"user"`
	Database string     `json:"db"`
	App      string     `json:"app"`
	Addr     string     `json:"addr"`
	State    string     `json:"state"`
	Txn      *txnView   `json:"txn,omitempty"`
	Held     []heldView `json:"held,omitempty"` // the partitions its read sessions hold
}

// txnView is a session's open transaction block.
type txnView struct {
	ID        int64    `json:"id"`
	Failed    bool     `json:"failed"`
	AgeMicros int64    `json:"age"`
	Messages  int64    `json:"msgs"`
	Bytes     int64    `json:"bytes"`
	Topics    []string `json:"topics,omitempty"`
	Reads     []string `json:"reads,omitempty"`
}

// heldView is what one session holds of one consumer.
type heldView struct {
	Topic      string  `json:"t"`
	Consumer   string  `json:"c"`
	Partitions []int32 `json:"p"`
}

// gatewaySessions is one gateway's sessions; Gateway is "" on the
// embedded store.
type gatewaySessions struct {
	Gateway  string
	Sessions []sessionView
}

// localSessions lists this process's sessions, by pid.
func (e *Engine) localSessions() []sessionView {
	now := e.opts.Clock()
	held := map[uint32][]heldView{}
	for _, h := range e.groups.Held() {
		held[h.PID] = append(held[h.PID], heldView{Topic: h.Topic, Consumer: h.Consumer, Partitions: h.Partitions})
	}
	var out []sessionView
	e.sessions.Range(func(_, v any) bool {
		o := v.(*Session)
		sv := sessionView{PID: int64(o.info.ProcessID), User: o.info.User, Database: o.info.Database,
			Addr: o.info.RemoteAddr, State: "idle"}
		if st := o.status.Load(); st != nil {
			sv.State = "idle in transaction"
			if st.failed {
				sv.State = "idle in failed transaction"
			}
			sv.Txn = &txnView{ID: int64(st.id), Failed: st.failed, AgeMicros: max(now.Sub(st.started), 0).Microseconds(),
				Messages: int64(st.messages), Bytes: st.bytes, Topics: st.topics, Reads: st.reads}
		}
		if o.active.Load() {
			sv.State = "active"
		}
		if p := o.appName.Load(); p != nil {
			sv.App = *p
		}
		sv.Held = held[o.info.ProcessID]
		sort.Slice(sv.Held, func(i, j int) bool {
			a, b := sv.Held[i], sv.Held[j]
			return a.Topic < b.Topic || a.Topic == b.Topic && a.Consumer < b.Consumer
		})
		out = append(out, sv)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// serveSessions makes this gateway answer other gateways' questions about
// its sessions, on a store that gathers.
func (e *Engine) serveSessions() {
	g, ok := e.store.(topicstore.Gatherer)
	if !ok {
		return
	}
	e.gather = g
	if co, ok := e.store.(topicstore.GroupCoordinator); ok {
		e.gatewayID = co.GatewayID()
	}
	if err := g.Serve(gatherSessions, func() []byte {
		b, _ := json.Marshal(e.localSessions())
		return b
	}); err != nil {
		slog.Warn("sys.sessions will show only this gateway's sessions", "err", err)
	}
}

// allSessions returns every gateway's sessions, this one's first. On a
// cluster, gateways that did not answer are logged.
func (s *Session) allSessions() []gatewaySessions {
	if s.eng.gather == nil {
		return []gatewaySessions{{Sessions: s.eng.localSessions()}}
	}
	got, err := s.eng.gather.Gather(context.Background(), gatherSessions)
	var res []gatewaySessions
	for _, a := range got.Answers {
		var ss []sessionView
		if json.Unmarshal(a.Data, &ss) != nil {
			got.Missing = append(got.Missing, a.Gateway)
			continue
		}
		res = append(res, gatewaySessions{Gateway: a.Gateway, Sessions: ss})
	}
	if len(got.Missing) > 0 {
		slog.Warn("sys.sessions: gateways did not answer within a second; their sessions are not shown", "gateways", strings.Join(got.Missing, ","))
	}
	if err != nil {
		slog.Warn("sys.sessions: only this gateway's sessions are shown", "err", err)
	}
	return res
}

// sessionRows builds sys.sessions.
func (s *Session) sessionRows() [][]any {
	var rows [][]any
	for _, g := range s.allSessions() {
		for _, sv := range g.Sessions {
			var txnID, age, msgs, bytes any
			if t := sv.Txn; t != nil {
				txnID, age, msgs, bytes = t.ID, time.Duration(t.AgeMicros)*time.Microsecond, t.Messages, t.Bytes
			}
			reading := make([]string, len(sv.Held))
			for i, h := range sv.Held {
				parts := make([]string, len(h.Partitions))
				for j, p := range h.Partitions {
					parts[j] = values.FormatText(int64(p))
				}
				reading[i] = h.Topic + "/" + h.Consumer + ":" + strings.Join(parts, ",")
			}
			rows = append(rows, []any{sv.PID, sv.User, sv.Database, sv.App, sv.Addr, sv.State, txnID, age, msgs, bytes,
				strings.Join(reading, " "), nullText(g.Gateway)})
		}
	}
	return rows
}

// transactionRows builds sys.transactions: the open transaction blocks of
// every session, from their published snapshots (the calling session's own
// transaction included, as of its previous statement).
func (s *Session) transactionRows() [][]any {
	var rows [][]any
	for _, g := range s.allSessions() {
		for _, sv := range g.Sessions {
			t := sv.Txn
			if t == nil {
				continue
			}
			state := "open"
			if t.Failed {
				state = "failed"
			}
			rows = append(rows, []any{t.ID, sv.PID, state, time.Duration(t.AgeMicros) * time.Microsecond,
				t.Messages, t.Bytes, strings.Join(t.Topics, ","), strings.Join(t.Reads, ","), nullText(g.Gateway)})
		}
	}
	return rows
}

// remoteHolders maps the partitions that other gateways' read sessions
// hold to those sessions, for sys.consumers; nil on the embedded store.
func (s *Session) remoteHolders() map[heldKey]remoteHolder {
	if s.eng.gather == nil {
		return nil
	}
	m := map[heldKey]remoteHolder{}
	for _, g := range s.allSessions() {
		for _, sv := range g.Sessions {
			for _, h := range sv.Held {
				for _, p := range h.Partitions {
					m[heldKey{h.Topic, h.Consumer, p}] = remoteHolder{g.Gateway, sv.PID}
				}
			}
		}
	}
	return m
}

type heldKey struct {
	topic, consumer string
	partition       int32
}

type remoteHolder struct {
	gateway string
	pid     int64
}

// nullText is s, or NULL when it is empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}
