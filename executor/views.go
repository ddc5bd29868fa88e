package executor

import (
	"io"
	"strings"

	"topicgate/metrics"
	"topicgate/pgcatalog"
	"topicgate/sysview"
)

// The session's side of the system views and /metrics: package sysview
// makes the sys views' rows, package pgcatalog the pg_catalog tables',
// package metrics the Prometheus exposition; the executor hands them what
// only it knows (its sessions, its read groups, its counters).

// sysRows materializes a system view (sys.*) or a pg_catalog table from
// the store's current state and this process's.
func (s *Session) sysRows(view string) ([][]any, error) {
	if t, ok := strings.CutPrefix(view, "pg_catalog."); ok {
		return pgcatalog.Rows(t, s.catalogSource()), nil
	}
	return s.eng.views.Rows(view)
}

// catalogSource is the session as the pg_catalog tables show it.
func (s *Session) catalogSource() pgcatalog.Source {
	return pgcatalog.Source{Database: s.info.Database, User: s.info.User,
		Topics:   s.eng.store.Topics,
		Settings: s.settings.catalogRows,
		Cursors: func() []pgcatalog.Cursor {
			var out []pgcatalog.Cursor
			for _, c := range s.cursors {
				out = append(out, pgcatalog.Cursor{Name: c.name, Statement: c.statement, Holdable: c.hold, Created: c.created})
			}
			return out
		}}
}

// WriteMetrics writes the engine's metrics in Prometheus text exposition
// format (metrics.Metrics.Write), read now.
func (e *Engine) WriteMetrics(w io.Writer) {
	sessions := 0
	e.sessions.Range(func(_, _ any) bool { sessions++; return true })
	e.metrics.Write(w, metrics.Scrape{Txn: e.txm.Stats(), Sessions: sessions, Store: e.store,
		Consumers: e.views.ConsumerStates})
}

// viewsLocal is the engine as sysview.Local: this process's sessions and
// its consumers' read groups.
type viewsLocal Engine

// Holder implements sysview.Local.
func (l *viewsLocal) Holder(topic, consumer string, partition int32) uint32 {
	return l.groups.Get(topic, consumer).Holder(partition)
}

// Sessions implements sysview.Local: each session's state from what it
// published (status, active, appName: they never touch its txn.Conn) and
// the partitions its read sessions hold.
func (l *viewsLocal) Sessions() []sysview.SessionView {
	e := (*Engine)(l)
	now := e.opts.Clock()
	held := map[uint32][]sysview.HeldView{}
	for _, h := range e.groups.Held() {
		held[h.PID] = append(held[h.PID], sysview.HeldView{Topic: h.Topic, Consumer: h.Consumer, Partitions: h.Partitions})
	}
	var out []sysview.SessionView
	e.sessions.Range(func(_, v any) bool {
		o := v.(*Session)
		sv := sysview.SessionView{PID: int64(o.info.ProcessID), User: o.info.User, Database: o.info.Database,
			Addr: o.info.RemoteAddr, State: "idle"}
		if st := o.status.Load(); st != nil {
			sv.State = "idle in transaction"
			if st.failed {
				sv.State = "idle in failed transaction"
			}
			sv.Txn = &sysview.TxnView{ID: int64(st.id), Failed: st.failed, AgeMicros: max(now.Sub(st.started), 0).Microseconds(),
				Messages: int64(st.messages), Bytes: st.bytes, Topics: st.topics, Reads: st.reads}
		}
		if o.active.Load() {
			sv.State = "active"
		}
		if p := o.appName.Load(); p != nil {
			sv.App = *p
		}
		sv.Held = held[o.info.ProcessID]
		out = append(out, sv)
		return true
	})
	return out
}
