package sysview

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

// sys.sessions and sys.transactions show every session of the server: on
// the embedded store, this process's; on a store several gateways share
// (a topicstore.Gatherer), every live gateway's, each gateway answering
// for its own (CockroachDB's cluster_sessions fans out to every node the
// same way). One gateway's sessions are a []SessionView, listed by the
// executor (Local.Sessions) the same way for both stores, sent as JSON to
// the gateway that asks, and turned into rows there; the gateway column
// names each row's gateway (NULL on the embedded store). A gateway that
// is alive by the store's reckoning but does not answer within a second
// is left out, and logged. sys.consumers.read_session and read_gateway
// name the session that reads a partition, wherever it runs. A gateway's
// sessions include its Kafka door's connections (SetKafkaSessions), so
// they are shown cluster-wide too, and a gateway that knows nothing of
// them answers without them.

// gatherSessions is the kind of question Gather asks for sessions.
const gatherSessions = "sessions"

// askSession is the kind of Ask that asks one gateway for one of its
// sessions by pid (FindSession), and askSessionWait how long FindSession
// waits for the gateways that a Gather missed: much longer than the
// Gather's second, since its answer decides a signal's outcome.
const (
	askSession     = "session"
	askSessionWait = 5 * time.Second
)

// SessionView is one session as sys.sessions and sys.transactions show
// it: a PostgreSQL session, or a Kafka connection (Protocol "kafka",
// whose PID is minus its connection number, App its client id, API the
// API of the request it answers or answered last, Database "", and no
// Txn or Held).
type SessionView struct {
	PID      int64      `json:"pid"`
	User     string     `json:"user"`
	Database string     `json:"db"`
	App      string     `json:"app"`
	Addr     string     `json:"addr"`
	State    string     `json:"state"`
	Txn      *TxnView   `json:"txn,omitempty"`
	Held     []HeldView `json:"held,omitempty"` // the partitions its read sessions hold
	// Protocol is "kafka" for a Kafka connection, "" for a PostgreSQL
	// session (and in an answer of a gateway that knows only those).
	Protocol string    `json:"proto,omitempty"`
	Since    time.Time `json:"since"` // when it connected (zero: not known)
	API      string    `json:"api,omitempty"`
}

// ProtocolKafka is SessionView.Protocol of a Kafka connection.
const ProtocolKafka = "kafka"

// KafkaPID is sys.sessions' pid of the Kafka connection numbered n: its
// negative, so that it is never a PostgreSQL session's process id (which
// is positive); pg_terminate_backend takes it.
func KafkaPID(n int64) int64 { return -n }

// TxnView is a session's open transaction block.
type TxnView struct {
	ID        int64    `json:"id"`
	Failed    bool     `json:"failed"`
	AgeMicros int64    `json:"age"`
	Messages  int64    `json:"msgs"`
	Bytes     int64    `json:"bytes"`
	Topics    []string `json:"topics,omitempty"`
	Reads     []string `json:"reads,omitempty"`
}

// HeldView is what one session holds of one consumer.
type HeldView struct {
	Topic      string  `json:"t"`
	Consumer   string  `json:"c"`
	Partitions []int32 `json:"p"`
}

// gatewaySessions is one gateway's sessions; Gateway is "" on the
// embedded store.
type gatewaySessions struct {
	Gateway  string
	Sessions []SessionView
}

// localSessions lists this process's sessions, by pid, each one's held
// partitions by topic and consumer.
func (v *Views) localSessions() []SessionView {
	out := v.local.Sessions()
	if f := v.kafkaConns.Load(); f != nil {
		out = append(out, (*f)()...)
	}
	for _, sv := range out {
		sort.Slice(sv.Held, func(i, j int) bool {
			a, b := sv.Held[i], sv.Held[j]
			return a.Topic < b.Topic || a.Topic == b.Topic && a.Consumer < b.Consumer
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Protocol != b.Protocol {
			return a.Protocol < b.Protocol // PostgreSQL's first
		}
		if a.PID < 0 {
			return a.PID > b.PID // Kafka's by connection number
		}
		return a.PID < b.PID
	})
	return out
}

// serveSessions makes this gateway answer other gateways' questions about
// its sessions, on a store that gathers.
func (v *Views) serveSessions() {
	g, ok := v.store.(topicstore.Gatherer)
	if !ok {
		return
	}
	v.gather = g
	if co, ok := v.store.(topicstore.GroupCoordinator); ok {
		v.gatewayID = co.GatewayID()
	}
	if err := g.Serve(gatherSessions, func() []byte {
		b, _ := json.Marshal(v.localSessions())
		return b
	}); err != nil {
		slog.Warn("sys.sessions will show only this gateway's sessions", "err", err)
	}
	if err := g.Answer(askSession, func(_ context.Context, data []byte) []byte {
		pid, err := strconv.ParseInt(string(data), 10, 64)
		if err == nil {
			for _, sv := range v.localSessions() {
				if sv.PID == pid {
					b, _ := json.Marshal(sv)
					return b
				}
			}
		}
		return []byte("null")
	}); err != nil {
		slog.Warn("other gateways cannot signal this gateway's sessions", "err", err)
	}
}

// FindSession returns the session whose sys.sessions pid is pid, on any
// gateway, and the gateway that holds it ("" on the embedded store). When
// no gateway that answered has it but some did not answer the Gather
// within its second, each of those is asked for that pid alone, for up to
// askSessionWait: a signal must not answer "no such process" for a
// session that a slow gateway holds. If one still does not answer, the
// outcome is not known, and the error (57P03) names it.
func (v *Views) FindSession(pid int64) (sv SessionView, gateway string, found bool, err error) {
	all, missing := v.allSessions()
	for _, g := range all {
		for _, sv := range g.Sessions {
			if sv.PID == pid {
				return sv, g.Gateway, true, nil
			}
		}
	}
	if len(missing) == 0 {
		return SessionView{}, "", false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), askSessionWait)
	defer cancel()
	var silent []string
	for _, gw := range missing {
		b, err := v.gather.Ask(ctx, gw, askSession, strconv.AppendInt(nil, pid, 10))
		if err != nil {
			silent = append(silent, gw)
			continue
		}
		var got *SessionView
		if json.Unmarshal(b, &got) == nil && got != nil {
			return *got, gw, true, nil
		}
	}
	if len(silent) > 0 {
		return SessionView{}, "", false, pgerror.Newf(pgerror.CodeCannotConnectNow,
			"gateway %s did not answer within %v: whether process %d is a session of theirs is not known",
			strings.Join(silent, ", "), askSessionWait, pid).
			WithHint("Nothing was signaled. Retry once the gateway answers, or once its heartbeat expires if it is gone.")
	}
	return SessionView{}, "", false, nil
}

// allSessions returns every gateway's sessions, this one's first, and
// the gateways that did not answer (on a cluster; they are logged).
func (v *Views) allSessions() ([]gatewaySessions, []string) {
	if v.gather == nil {
		return []gatewaySessions{{Sessions: v.localSessions()}}, nil
	}
	got, err := v.gather.Gather(context.Background(), gatherSessions)
	var res []gatewaySessions
	for _, a := range got.Answers {
		var ss []SessionView
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
	return res, got.Missing
}

// sessionRows builds sys.sessions.
func (v *Views) sessionRows() [][]any {
	var rows [][]any
	all, _ := v.allSessions()
	for _, g := range all {
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
			proto, user, db, api := "postgres", any(sv.User), any(sv.Database), any(nil)
			if sv.Protocol == ProtocolKafka {
				proto, user, db, api = ProtocolKafka, nullText(sv.User), nil, nullText(sv.API)
			}
			rows = append(rows, []any{sv.PID, user, db, sv.App, sv.Addr, sv.State, txnID, age, msgs, bytes,
				strings.Join(reading, " "), nullText(g.Gateway), proto, nullTime(sv.Since), api})
		}
	}
	return rows
}

// transactionRows builds sys.transactions: the open transaction blocks of
// every session, from their published snapshots (the calling session's own
// transaction included, as of its previous statement).
func (v *Views) transactionRows() [][]any {
	var rows [][]any
	all, _ := v.allSessions()
	for _, g := range all {
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
func (v *Views) remoteHolders() map[heldKey]remoteHolder {
	if v.gather == nil {
		return nil
	}
	m := map[heldKey]remoteHolder{}
	all, _ := v.allSessions()
	for _, g := range all {
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
