package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The Sessions page: who is connected (the PostgreSQL port's sessions,
// the Kafka door's connections and the console's own), what runs and
// what is open, as sys.sessions and sys.transactions show them to the
// role (every session to superusers and pg_monitor members, else its
// own), and, for superusers, cancel and terminate buttons that run
// pg_cancel_backend and pg_terminate_backend.

const (
	sessionsSQL = `SELECT pid, "user", application_name, client_addr, protocol, state, backend_start::text AS backend_start,
	txn_id, txn_age::text AS txn_age, staged_messages, reading, kafka_api, gateway FROM sys.sessions ORDER BY protocol DESC, pid`
	transactionsSQL = `SELECT id, pid, state, age::text AS age, staged_messages, staged_bytes, topics, reads, gateway
	FROM sys.transactions ORDER BY id`
	superuserSQL = `SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user`
)

// sessionsPage is the sessions template's data.
type sessionsPage struct {
	Sessions, Transactions *result
	Superuser              bool
	// Own is the pid of the page's own SQL session.
	Own     int64
	Done    string
	Refused string
}

// sessions is the Sessions page.
func (c *Console) sessions(w http.ResponseWriter, r *http.Request) {
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		pg, err := readSessions(ctx, sc)
		if err != nil {
			return err
		}
		c.show(w, r, http.StatusOK, "sessions", "Sessions", pg)
		return nil
	})
}

func readSessions(ctx context.Context, sc *sqlConn) (*sessionsPage, error) {
	pg := &sessionsPage{}
	var err error
	if pg.Sessions, err = sc.query(ctx, sessionsSQL); err != nil {
		return nil, err
	}
	if pg.Transactions, err = sc.query(ctx, transactionsSQL); err != nil {
		return nil, err
	}
	su, err := sc.query(ctx, superuserSQL)
	if err != nil {
		return nil, err
	}
	pg.Superuser = len(su.Rows) == 1 && su.Rows[0][0] == true
	own, err := sc.query(ctx, `SELECT pg_backend_pid()::int8`)
	if err != nil {
		return nil, err
	}
	pg.Own, _ = own.Rows[0][0].(int64)
	return pg, nil
}

// signal cancels the running statement of a session or terminates it:
// SELECT pg_cancel_backend($1) or pg_terminate_backend($1), with SQL's
// permission rules (a role without them gets SQL's refusal, 403). A
// session that was not signaled (none with that pid, or a Kafka
// connection's cancel) is answered 409 with the page.
func (c *Console) signal(w http.ResponseWriter, r *http.Request) {
	op := r.PostFormValue("op")
	fn := map[string]string{"cancel": "pg_cancel_backend", "terminate": "pg_terminate_backend"}[op]
	if fn == "" {
		c.fail(w, r, http.StatusBadRequest, fmt.Sprintf("op %q is not cancel or terminate", op))
		return
	}
	s := strings.TrimSpace(r.PostFormValue("pid"))
	pid, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Sprintf("pid %q is not a process id", s))
		return
	}
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		res, err := sc.query(ctx, `SELECT `+fn+`($1)`, pid)
		if err != nil {
			return err
		}
		pg, err := readSessions(ctx, sc)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if len(res.Rows) == 1 && res.Rows[0][0] == true {
			pg.Done = fmt.Sprintf("%s(%d): done", fn, pid)
		} else {
			status = http.StatusConflict
			pg.Refused = fmt.Sprintf("%s(%d) signaled nothing (no such session, or a Kafka connection's cancel) %s", fn, pid,
				strings.Join(res.Notices, "; "))
		}
		c.show(w, r, status, "sessions", "Sessions", pg)
		return nil
	})
}
