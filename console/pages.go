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
		// Each topic's write rate: the sampler's latest (what the live
		// charts show), "" before it has one.
		for i, row := range res.Rows {
			name := cell(row[0])
			msgs, ok := c.samples.latest(seriesKey{kind: kindIn, topic: name})
			rate := ""
			if ok {
				bytes, _ := c.samples.latest(seriesKey{kind: kindInBytes, topic: name})
				rate = fmt.Sprintf("%.0f msg/s, %s/s", msgs, humanBytes(bytes))
			}
			res.Rows[i] = append(row, rate)
		}
		c.show(w, r, http.StatusOK, "topics", "Topics", res)
		return nil
	})
}

const (
	topicSQL = `SELECT topic, partitions, active_partitions, messages, bytes, retention_period::text AS retention,
	retention_storage_mb, supported_codecs, auto_partitioning_strategy, created_at::text AS created_at
	FROM sys.topics WHERE topic = $1`
	partitionsSQL = `SELECT partition, state, start_offset, end_offset, messages, bytes, last_write_at::text AS last_write_at,
	parent, children, key_from, key_to, write_rate, utilization, throttled_seconds
	FROM sys.partitions WHERE topic = $1 ORDER BY partition`
	// consumersSQL is read once for a topic's page: its first
	// consumerCols columns are the consumers' table, and the shared
	// consumers' rows give the queues' figures (queueStats).
	consumersSQL = `SELECT consumer, type, partition, committed_offset, end_offset, lag_messages, lag_time::text AS lag_time,
	read_session, available, acquired, delayed, archived, oldest_unacked_age::text AS oldest_unacked_age,
	archived_total, dead_lettered, dead_letter_failures, dead_letter_error
	FROM sys.consumers WHERE topic = $1 ORDER BY consumer, partition`
	consumerCols = 8
)

// topicPage is the topic template's data.
type topicPage struct {
	Name                         string
	Topic, Partitions, Consumers *result
	Queues                       []*queueView // the shared consumers'
	Tree                         []*partNode  // the partitions by parent (partitionTree)
	// ShowTree is set when a partition has a parent, children or a key
	// range: else those columns would be empty and are left out.
	ShowTree    bool
	Desk        *deskPage // what this login holds
	CSRF        string
	Producer    string // the produce form's default producer_id
	MessagesURL string
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
		tree := partitionTree(p)
		all, err := sc.query(ctx, consumersSQL, name)
		if err != nil {
			return err
		}
		cs := &result{Cols: all.Cols[:consumerCols]}
		for _, row := range all.Rows {
			cs.Rows = append(cs.Rows, row[:consumerCols])
		}
		qs, err := queuesOf(ctx, sc, name, queueStats(all))
		if err != nil {
			return err
		}
		c.show(w, r, http.StatusOK, "topic", name, &topicPage{Name: name, Topic: t, Partitions: p, Consumers: cs, Queues: qs,
			Tree: tree, ShowTree: showTree(tree),
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

// partNode is one partition of a topic's partition tree: its
// partitionsSQL row, its depth below the partitions without a parent, and
// its key range and parent as the tree shows them.
type partNode struct {
	Depth int
	// The row's cells as the page shows them, formatted here rather than
	// in the template (64 partitions are 800 cells).
	ID, State, Start, End, Messages, Bytes, LastWrite string
	Parent                                            string // "" for a partition the topic started with
	Children                                          string // the partitions it split into
	Keys                                              string // "from – to" in a topic with a key space, else ""
	Rate, Util, Throttled                             string
}

// partitionTree orders the partitions of p (partitionsSQL's rows) as
// their splits made them: each partition the topic started with, then its
// children below it, depth first. A partition whose parent is not listed
// stays at the top.
func partitionTree(p *result) []*partNode {
	byID := map[int64][]any{}
	kids := map[int64][]int64{}
	var roots []int64
	for _, row := range p.Rows {
		id := row[0].(int64)
		byID[id] = row
	}
	for _, row := range p.Rows {
		id := row[0].(int64)
		if parent, ok := row[7].(int64); ok && byID[parent] != nil {
			kids[parent] = append(kids[parent], id)
		} else {
			roots = append(roots, id)
		}
	}
	var out []*partNode
	var walk func(id int64, depth int)
	walk = func(id int64, depth int) {
		row := byID[id]
		n := &partNode{Depth: depth, ID: cell(row[0]), State: cell(row[1]), Start: cell(row[2]), End: cell(row[3]),
			Messages: cell(row[4]), Bytes: cell(row[5]), LastWrite: cell(row[6]), Parent: cell(row[7]), Children: cell(row[8]),
			Rate: rate(row[11]), Util: percent(row[12]), Throttled: percent(row[13])}
		if row[9] != nil {
			n.Keys = cell(row[9]) + " – " + cell(row[10])
		}
		out = append(out, n)
		for _, k := range kids[id] {
			walk(k, depth+1)
		}
	}
	for _, id := range roots {
		walk(id, 0)
	}
	return out
}

// showTree reports whether a partition of tree has a parent, children
// or a key range.
func showTree(tree []*partNode) bool {
	for _, n := range tree {
		if n.Parent != "" || n.Children != "" || n.Keys != "" {
			return true
		}
	}
	return false
}

// rate is a write rate in bytes per second, rounded.
func rate(v any) string {
	f, ok := v.(float64)
	if !ok {
		return cell(v)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// percent is a utilization as a percentage with one decimal.
func percent(v any) string {
	f, ok := v.(float64)
	if !ok {
		return cell(v)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}
