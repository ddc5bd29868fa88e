package executor

import (
	"io"
	"slices"
	"strings"

	"topicgate/acl"
	"topicgate/authz"
	"topicgate/metrics"
	"topicgate/pgcatalog"
	"topicgate/planner/catalog"
	"topicgate/sql/pgerror"
	"topicgate/sysview"
	"topicgate/topicstore"
)

// The session's side of the system views and /metrics: package sysview
// makes the sys views' rows, package pgcatalog the pg_catalog tables',
// package metrics the Prometheus exposition; the executor hands them what
// only it knows (its sessions, its read groups, its counters).

// sysRows materializes a system view (sys.*) or a pg_catalog table from
// the store's current state and this process's.
//
// A role sees only what authz.View shows it: the topics it holds some
// privilege on, and other roles' sessions only as a superuser or a member
// of pg_read_all_stats (pg_monitor is one); pg_authid is a superuser's.
func (s *Session) sysRows(view string) ([][]any, error) {
	v, err := s.eng.authz.View(s.id)
	if err != nil {
		return nil, err
	}
	if t, ok := strings.CutPrefix(view, "information_schema."); ok {
		return pgcatalog.InfoSchemaRows(t, s.catalogSource(v)), nil
	}
	if t, ok := strings.CutPrefix(view, "pg_catalog."); ok {
		if t == "pg_authid" && !v.All {
			return nil, pgerror.New(pgerror.CodeInsufficientPrivilege, "permission denied for table pg_authid")
		}
		return pgcatalog.Rows(t, s.catalogSource(v)), nil
	}
	var rows [][]any
	if view == "consumer_privileges" {
		// Its rows need the role document, which the executor has.
		rows = sysview.ConsumerPrivilegeRows(s.eng.store.Topics(), v.D, func(cfg *topicstore.TopicConfig) string {
			if cfg.Owner == "" && v.D.Bootstrap() == "" {
				return s.info.User // no role yet: the session's user owns all, as pg_class shows
			}
			return v.Owner(cfg)
		})
	} else if rows, err = s.eng.views.Rows(view); err != nil {
		return nil, err
	}
	if v.All {
		return rows, err
	}
	return s.visibleRows(view, rows, v)
}

// visibleRows keeps the rows of a sys view v shows: those of visible
// topics (the views whose first column is the topic), and of visible
// sessions (sessions, transactions).
func (s *Session) visibleRows(view string, rows [][]any, v authz.View) ([][]any, error) {
	names := catalog.SysViews[view].Names
	keep := func(ok func(row []any) bool) [][]any {
		var out [][]any
		for _, r := range rows {
			if ok(r) {
				out = append(out, r)
			}
		}
		return out
	}
	switch {
	case len(names) > 0 && names[0] == "topic":
		seen := s.visibleTopics(v)
		rows = keep(func(r []any) bool { t, _ := r[0].(string); return seen[t] })
		if view == "consumers" && !v.Sessions {
			// Who is connected through the Kafka door is for
			// pg_monitor, as sys.kafka_groups.
			member := slices.Index(names, "kafka_member")
			for _, r := range rows {
				r[member] = nil
			}
		}
		return rows, nil
	case view == "sessions" && !v.Sessions:
		user := slices.Index(names, "user")
		return keep(func(r []any) bool { u, _ := r[user].(string); return v.Session(u) }), nil
	case view == "kafka_groups" && !v.Sessions:
		return nil, nil // who is connected is for pg_monitor, as sys.sessions
	case view == "transactions" && !v.Sessions:
		sess, err := s.visibleRows("sessions", mustRows(s.eng.views.Rows("sessions")), v)
		if err != nil {
			return nil, err
		}
		pids := map[any]bool{}
		for _, r := range sess {
			pids[r[0]] = true
		}
		pid := slices.Index(names, "pid")
		return keep(func(r []any) bool { return pids[r[pid]] }), nil
	}
	return rows, nil
}

func mustRows(rows [][]any, err error) [][]any {
	if err != nil {
		return nil
	}
	return rows
}

// usableConsumerRows are the rows of sys.consumers UPDATE sys.consumers
// may move: those of consumers the role has USAGE on (the others are not
// updated, as rows a policy hides).
func (s *Session) usableConsumerRows() ([][]any, error) {
	rows, err := s.sysRows("consumers")
	if err != nil {
		return nil, err
	}
	v, err := s.eng.authz.View(s.id)
	if err != nil || v.All {
		return rows, err
	}
	var out [][]any
	for _, r := range rows {
		t, _ := r[0].(string)
		c, _ := r[1].(string)
		if cfg, err := s.eng.authz.TopicConfig(t); err == nil && v.Usage(cfg, c) {
			out = append(out, r)
		}
	}
	return out, nil
}

// visibleTopics names the topics v shows.
func (s *Session) visibleTopics(v authz.View) map[string]bool {
	seen := map[string]bool{}
	for _, ti := range s.eng.store.Topics() {
		if v.Topic(&ti.Config) {
			seen[ti.Config.Name] = true
		}
	}
	return seen
}

// catalogSource is the session as the pg_catalog tables show it, to a
// role that sees what v shows.
func (s *Session) catalogSource(v authz.View) pgcatalog.Source {
	return pgcatalog.Source{Database: s.info.Database, User: s.info.User,
		Roles: func() *acl.Doc { return v.D }, Role: v.Current(),
		Topics: func() []topicstore.TopicInfo {
			all := s.eng.store.Topics()
			if v.All {
				return all
			}
			out := all[:0:0]
			for _, ti := range all {
				if v.Topic(&ti.Config) {
					out = append(out, ti)
				}
			}
			return out
		},
		Settings: s.settings.CatalogRows,
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

// SetKafkaSessions makes sys.sessions list the Kafka door's connections
// too (conns, each with Protocol "kafka" and a negative pid: see
// sysview.KafkaPID), and pg_terminate_backend of one of them call close
// with its pid; call it before serving.
func (e *Engine) SetKafkaSessions(conns func() []sysview.SessionView, close func(pid int64) bool) {
	e.kafkaConns, e.kafkaClose = conns, close
	e.views.SetKafkaSessions(conns)
}

// SetKafkaGroups makes sys.kafka_groups list the Kafka door's groups
// (the process that runs the door hands them in; see sysview.Views).
func (e *Engine) SetKafkaGroups(groups func() []sysview.KafkaGroup) { e.views.SetKafkaGroups(groups) }

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
			Addr: o.info.RemoteAddr, State: "idle", Since: o.started}
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
