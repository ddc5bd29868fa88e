package console

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"topicgate/sql/pgerror"
)

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"cell": cell, "actions": func() []string { return []string{"ack", "release", "reject"} },
	"section": func(tp *topicPage, q *queueView) queueSection {
		return queueSection{Q: q, Name: tp.Name, CSRF: tp.CSRF}
	}}).ParseFS(templateFS, "templates/*.html"))

// page is what every full page's layout needs.
type page struct {
	Title string
	User  string
	CSRF  string
	Error string
	Body  any
}

// render writes template name with data and status.
func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := templates.ExecuteTemplate(w, name, data); err != nil {
		slog.Warn("console: rendering a page", "template", name, "err", err)
	}
}

// show renders a full page of the logged-in role.
func (c *Console) show(w http.ResponseWriter, r *http.Request, status int, name, title string, body any) {
	ss := sessionOf(r)
	c.render(w, status, name, &page{Title: title, User: ss.user, CSRF: c.sign.csrf(ss.nonce), Body: body})
}

// fail answers with msg and status: the error fragment to an htmx
// request, else an error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if r.Header.Get("HX-Request") != "" {
		c.render(w, status, "error", msg)
		return
	}
	ss := sessionOf(r)
	p := &page{Title: http.StatusText(status), User: ss.user, Error: msg}
	if ss.nonce != "" {
		p.CSRF = c.sign.csrf(ss.nonce)
	}
	c.render(w, status, "errorpage", p)
}

// failSQL answers a statement's error: 403 for a privilege the role
// lacks, 400 for anything the request asked wrong, else 500.
func (c *Console) failSQL(w http.ResponseWriter, r *http.Request, err error) {
	status := sqlStatus(err)
	if status == 0 {
		status = http.StatusInternalServerError
	}
	c.fail(w, r, status, errText(err))
}

// sqlStatus is the 4xx status of a statement's error: 403 for a privilege
// the role lacks, 400 for anything the request asked wrong (classes 22,
// 42, 0A, 25); 0 for other errors.
func sqlStatus(err error) int {
	switch code := pgerror.Code(err); {
	case code == pgerror.CodeInsufficientPrivilege:
		return http.StatusForbidden
	case strings.HasPrefix(code, "22"), strings.HasPrefix(code, "42"), strings.HasPrefix(code, "0A"), strings.HasPrefix(code, "25"):
		return http.StatusBadRequest
	}
	return 0
}

// withSQL runs fn in a SQL session of the logged-in role, answering the
// session's errors itself.
func (c *Console) withSQL(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context, sc *sqlConn) error) {
	sc, err := c.open(r.Context(), sessionOf(r).user, r.RemoteAddr)
	if err != nil {
		c.fail(w, r, http.StatusForbidden, errText(err))
		return
	}
	defer sc.close()
	if err := fn(r.Context(), sc); err != nil {
		c.failSQL(w, r, err)
	}
}

// topicsSQL lists the topics the role may see: sys.topics shows only
// those.
const topicsSQL = `SELECT topic, partitions, active_partitions, messages, bytes, retention_period::text AS retention,
	supported_codecs, consumers FROM sys.topics ORDER BY topic`

// topics is the Topics page.
func (c *Console) topics(w http.ResponseWriter, r *http.Request) {
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		res, err := sc.query(ctx, topicsSQL)
		if err != nil {
			return err
		}
		c.show(w, r, http.StatusOK, "topics", "Topics", res)
		return nil
	})
}

const (
	topicSQL = `SELECT topic, partitions, active_partitions, messages, bytes, retention_period::text AS retention,
	retention_storage_mb, supported_codecs, auto_partitioning_strategy, created_at::text AS created_at
	FROM sys.topics WHERE topic = $1`
	partitionsSQL = `SELECT partition, state, start_offset, end_offset, messages, bytes, last_write_at::text AS last_write_at
	FROM sys.partitions WHERE topic = $1 ORDER BY partition`
	consumersSQL = `SELECT consumer, type, partition, committed_offset, end_offset, lag_messages, lag_time::text AS lag_time,
	read_session FROM sys.consumers WHERE topic = $1 ORDER BY consumer, partition`
)

// topicPage is the topic template's data.
type topicPage struct {
	Name                         string
	Topic, Partitions, Consumers *result
	Queues                       []*queueView // the shared consumers'
	Desk                         *deskPage    // what this login holds
	CSRF                         string
	Producer                     string // the produce form's default producer_id
	MessagesURL                  string
}

// topic is a topic's page: its options, partitions and consumers.
func (c *Console) topic(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		t, err := sc.query(ctx, topicSQL, name)
		if err != nil {
			return err
		}
		if len(t.Rows) == 0 {
			c.fail(w, r, http.StatusNotFound, fmt.Sprintf("no topic %q that you may see", name))
			return nil
		}
		p, err := sc.query(ctx, partitionsSQL, name)
		if err != nil {
			return err
		}
		cs, err := sc.query(ctx, consumersSQL, name)
		if err != nil {
			return err
		}
		qs, err := queues(ctx, sc, name)
		if err != nil {
			return err
		}
		c.show(w, r, http.StatusOK, "topic", name, &topicPage{Name: name, Topic: t, Partitions: p, Consumers: cs, Queues: qs,
			Desk: c.heldBy(r), CSRF: c.sign.csrf(sessionOf(r).nonce),
			Producer: "console:" + sessionOf(r).user, MessagesURL: "/messages?" + url.Values{"topic": {name}}.Encode()})
		return nil
	})
}

// cell is a value as a table cell shows it.
func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []int64:
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatInt(x, 10)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprint(v)
}
