package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A shared consumer's queue on a topic's page: its figures from
// sys.consumers, and one message at a time taken and then acknowledged,
// released or rejected with the statements a psql worker runs.
//
// What "held" means: only the session that acquired a message may act on
// it, and a session's locks go back to the queue when it closes. A page's
// SQL session ends with its request, so the console keeps one more
// session per login for the queue (its "desk"): Take acquires the next
// message into it (SELECT ... WITH (CONSUMER = c, PROCESSING_TIMEOUT)
// LIMIT 1), and an action names the message by partition and offset and
// runs in it. The desk closes when its locks expire (deskTTL), when its
// last message is acted on, or at logout; closing hands back what it
// still holds, as a worker's lost connection does. An action on any
// other message (held by a worker, already acknowledged, never taken)
// runs the same statement, which acts on nothing: the page shows the
// statement's NOTICE with status 409, and nothing changed.

// deskTTL is the lock a take asks for (PROCESSING_TIMEOUT), and how long
// the desk stays open after its last take.
const deskTTL = 5 * time.Minute

// desk is one login's queue session and the messages it holds.
type desk struct {
	mu    sync.Mutex
	sc    *sqlConn
	held  []heldMsg
	timer *time.Timer
}

// heldMsg is a message a desk acquired.
type heldMsg struct {
	Topic, Consumer          string
	Partition, Offset, Count int64
	LockedUntil, Body        string
}

// queueActions maps an action to the statement a psql worker runs
// (docs/dialect/shared-consumers.md), %s the topic and the consumer.
var queueActions = map[string]string{
	"ack":     `DELETE FROM %s WITH (CONSUMER = %s) WHERE partition = $1 AND "offset" = $2`,
	"release": `UPDATE %s WITH (CONSUMER = %s) SET locked_until = NULL WHERE partition = $1 AND "offset" = $2`,
	"reject":  `UPDATE %s WITH (CONSUMER = %s) SET state = 'rejected' WHERE partition = $1 AND "offset" = $2`,
}

// deskOf is the login's desk, opening one when open is set (nil when
// there is none and open is not).
func (c *Console) deskOf(r *http.Request, open bool) (*desk, error) {
	ss := sessionOf(r)
	c.desksMu.Lock()
	defer c.desksMu.Unlock()
	if d := c.desks[ss.nonce]; d != nil || !open {
		return d, nil
	}
	sc, err := c.open(context.WithoutCancel(r.Context()), ss.user, r.RemoteAddr)
	if err != nil {
		return nil, err
	}
	d := &desk{sc: sc}
	d.timer = time.AfterFunc(deskTTL, func() { c.closeDesk(ss.nonce, d) })
	c.desks[ss.nonce] = d
	return d, nil
}

// dropDesk closes d, whose mu the caller holds.
func (c *Console) dropDesk(nonce string, d *desk) {
	c.desksMu.Lock()
	if c.desks[nonce] == d {
		delete(c.desks, nonce)
	}
	c.desksMu.Unlock()
	d.timer.Stop()
	if d.sc != nil {
		d.sc.close()
		d.sc = nil
		d.held = nil
	}
}

// closeDesk closes d (if it is still nonce's): what it holds goes back to
// the queue.
func (c *Console) closeDesk(nonce string, d *desk) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c.dropDesk(nonce, d)
}

// queueForm is a take or action request, checked.
type queueForm struct {
	Topic, Consumer, Action string
	Partition, Offset       int64
}

func parseQueueForm(r *http.Request, action bool) (queueForm, error) {
	f := queueForm{Topic: r.PostFormValue("topic"), Consumer: r.PostFormValue("consumer"), Action: r.PostFormValue("action")}
	if f.Topic == "" || f.Consumer == "" {
		return f, inputError("no topic or consumer given")
	}
	if !action {
		return f, nil
	}
	if _, ok := queueActions[f.Action]; !ok {
		return f, inputError(fmt.Sprintf("action %q is not one of ack, release, reject", f.Action))
	}
	var err error
	for _, v := range []struct {
		name string
		dst  *int64
	}{{"partition", &f.Partition}, {"offset", &f.Offset}} {
		s := strings.TrimSpace(r.PostFormValue(v.name))
		if *v.dst, err = strconv.ParseInt(s, 10, 64); err != nil || *v.dst < 0 {
			return f, inputError(fmt.Sprintf("%s %q is not a whole number, 0 or more", v.name, s))
		}
	}
	return f, nil
}

// deskPage is the desk fragment's data: what the login holds, and the
// outcome of the last take or action.
type deskPage struct {
	Held          []heldMsg
	Done, Refused string
	// Sections are the topic's queues as they are after the take or
	// action, swapped into the page out of band (htmx hx-swap-oob).
	Sections []queueSection
	CSRF     string // for the row forms' plain posts
}

// queueSection is one shared consumer's section of a topic's page.
type queueSection struct {
	Q          *queueView
	Name, CSRF string // the topic; the session's CSRF token
	OOB        bool
}

// sections are topic's queues after a take or action, read in sc: a
// page whose figures cannot be read keeps the ones it shows.
func (c *Console) sections(ctx context.Context, r *http.Request, sc *sqlConn, topic string) []queueSection {
	qs, err := queues(ctx, sc, topic)
	if err != nil {
		return nil
	}
	out := make([]queueSection, len(qs))
	for i, q := range qs {
		out[i] = queueSection{Q: q, Name: topic, CSRF: c.sign.csrf(sessionOf(r).nonce), OOB: true}
	}
	return out
}

// queueTake acquires the next message of a shared consumer into the
// login's desk, as a worker's SELECT does.
func (c *Console) queueTake(w http.ResponseWriter, r *http.Request) {
	f, err := parseQueueForm(r, false)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	d, err := c.deskOf(r, true)
	if err != nil {
		c.fail(w, r, http.StatusForbidden, errText(err))
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sc == nil { // closed meanwhile
		c.fail(w, r, http.StatusConflict, "the queue session closed meanwhile: take again")
		return
	}
	res, err := d.sc.query(r.Context(), fmt.Sprintf(`SELECT partition, "offset", delivery_count, locked_until::text, data FROM %s
		WITH (CONSUMER = %s, PROCESSING_TIMEOUT = '%ds') LIMIT 1`, quoteIdent(f.Topic), quoteIdent(f.Consumer), int(deskTTL/time.Second)))
	if err != nil {
		c.failSQL(w, r, err)
		return
	}
	d.timer.Reset(deskTTL)
	pg := &deskPage{CSRF: c.sign.csrf(sessionOf(r).nonce)}
	status := http.StatusOK
	if len(res.Rows) == 0 {
		status, pg.Refused = http.StatusConflict, fmt.Sprintf("no message of consumer %q is available now", f.Consumer)
	}
	for _, row := range res.Rows {
		body, _ := row[4].([]byte)
		text, _ := showBody(body, "auto")
		m := heldMsg{Topic: f.Topic, Consumer: f.Consumer, Partition: row[0].(int64), Offset: row[1].(int64),
			Count: row[2].(int64), LockedUntil: cell(row[3]), Body: text}
		d.held = append(d.held, m)
		pg.Done = fmt.Sprintf("took message %d:%d (delivery %d)", m.Partition, m.Offset, m.Count)
	}
	pg.Held = d.held
	pg.Sections = c.sections(r.Context(), r, d.sc, f.Topic)
	c.deskShow(w, r, status, pg, f.Topic)
}

// queueAct acknowledges, releases or rejects one message: in the login's
// desk, where the messages it took are held; a message it does not hold
// is refused by SQL (nothing acted on) and answered with 409.
func (c *Console) queueAct(w http.ResponseWriter, r *http.Request) {
	f, err := parseQueueForm(r, true)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	q := fmt.Sprintf(queueActions[f.Action], quoteIdent(f.Topic), quoteIdent(f.Consumer))
	d, err := c.deskOf(r, false)
	if err != nil {
		c.fail(w, r, http.StatusForbidden, errText(err))
		return
	}
	pg := &deskPage{CSRF: c.sign.csrf(sessionOf(r).nonce)}
	var res *result
	var sc *sqlConn
	if d != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
	}
	if d != nil && d.sc != nil {
		sc = d.sc
		res, err = d.sc.query(r.Context(), q, f.Partition, f.Offset)
	} else {
		// Nothing taken: the statement runs in a session of its own, and
		// SQL says why it acted on nothing.
		own, oerr := c.open(r.Context(), sessionOf(r).user, r.RemoteAddr)
		if oerr != nil {
			c.fail(w, r, http.StatusForbidden, errText(oerr))
			return
		}
		defer own.close()
		sc = own
		res, err = sc.query(r.Context(), q, f.Partition, f.Offset)
	}
	if err != nil {
		c.failSQL(w, r, err)
		return
	}
	pg.Sections = c.sections(r.Context(), r, sc, f.Topic)
	status := http.StatusOK
	if strings.HasSuffix(res.Tag, " 0") {
		status = http.StatusConflict
		pg.Refused = fmt.Sprintf("%s of message %d:%d acted on nothing: %s", f.Action, f.Partition, f.Offset, strings.Join(res.Notices, "; "))
	} else {
		pg.Done = fmt.Sprintf("%s of message %d:%d: %s", f.Action, f.Partition, f.Offset, res.Tag)
	}
	if d != nil {
		kept := d.held[:0]
		for _, m := range d.held {
			if status == http.StatusConflict || m.Topic != f.Topic || m.Consumer != f.Consumer || m.Partition != f.Partition || m.Offset != f.Offset {
				kept = append(kept, m)
			}
		}
		d.held = kept
		pg.Held = kept
		if len(kept) == 0 && d.sc != nil {
			c.dropDesk(sessionOf(r).nonce, d)
		}
	}
	c.deskShow(w, r, status, pg, f.Topic)
}

const (
	queueStatsSQL = `SELECT consumer, partition, committed_offset, available, acquired, delayed, archived,
	oldest_unacked_age::text AS oldest_unacked_age, archived_total, dead_lettered, dead_letter_failures, dead_letter_error
	FROM sys.consumers WHERE topic = $1 AND type = 'shared' ORDER BY consumer, partition`
	queueOptionsSQL = `SELECT consumer, default_processing_timeout::text, max_processing_attempts, dead_letter_policy,
	dead_letter_queue FROM sys.consumer_options WHERE topic = $1 AND type = 'shared' ORDER BY consumer`
	dlqDepthSQL   = `SELECT messages FROM sys.topics WHERE topic = $1`
	deliveriesSQL = `SELECT consumer, deliveries, sum(messages) FROM sys.consumer_deliveries WHERE topic = $1
	GROUP BY consumer, deliveries ORDER BY consumer, deliveries`
)

// deliveryBar is one bar of a queue's delivery-count histogram.
type deliveryBar struct {
	Deliveries, Messages int64
	// Width is the bar's length, a percentage of the tallest bar's.
	Width int64
}

// queueView is one shared consumer's queue as a topic's page shows it.
type queueView struct {
	Consumer, Timeout, Policy, DLQ string
	Attempts                       string
	// DLQDepth is the dead-letter topic's messages ("" when there is
	// none, or the role may not see it).
	DLQDepth string
	// Totals over the partitions: available, acquired, delayed, archived.
	Available, Acquired, Delayed, Archived int64
	Rows                                   [][]any // queueStatsSQL's, of this consumer
	// Deliveries is the delivery-count histogram of the unfinished
	// messages (sys.consumer_deliveries summed over the partitions).
	Deliveries []deliveryBar
}

// queueStats is queueStatsSQL's rows taken from consumersSQL's (the
// shared consumers' rows, their columns in queueStatsSQL's order), so
// that a topic's page reads sys.consumers once: each read of it costs a
// read from the store per lagging partition (the lag in time).
func queueStats(cons *result) *result {
	out := &result{}
	for _, row := range cons.Rows {
		if cell(row[1]) != "shared" {
			continue
		}
		out.Rows = append(out.Rows, append([]any{row[0], row[2], row[3]}, row[consumerCols:]...))
	}
	return out
}

// queues reads the figures of topic's shared consumers.
func queues(ctx context.Context, sc *sqlConn, topic string) ([]*queueView, error) {
	stats, err := sc.query(ctx, queueStatsSQL, topic)
	if err != nil {
		return nil, err
	}
	return queuesOf(ctx, sc, topic, stats)
}

// queuesOf is queues with the consumers' figures already read (stats,
// queueStatsSQL's rows).
func queuesOf(ctx context.Context, sc *sqlConn, topic string, stats *result) ([]*queueView, error) {
	if len(stats.Rows) == 0 {
		return nil, nil // no shared consumer (each has a row per partition)
	}
	opts, err := sc.query(ctx, queueOptionsSQL, topic)
	if err != nil {
		return nil, err
	}
	dels, err := sc.query(ctx, deliveriesSQL, topic)
	if err != nil {
		return nil, err
	}
	var out []*queueView
	for _, o := range opts.Rows {
		q := &queueView{Consumer: cell(o[0]), Timeout: cell(o[1]), Attempts: cell(o[2]), Policy: cell(o[3]), DLQ: cell(o[4])}
		if q.DLQ != "" {
			d, err := sc.query(ctx, dlqDepthSQL, q.DLQ)
			if err != nil {
				return nil, err
			}
			if len(d.Rows) == 1 {
				q.DLQDepth = cell(d.Rows[0][0])
			}
		}
		for _, row := range stats.Rows {
			if cell(row[0]) != q.Consumer {
				continue
			}
			q.Rows = append(q.Rows, row)
			for i, dst := range []*int64{&q.Available, &q.Acquired, &q.Delayed, &q.Archived} {
				n, _ := row[3+i].(int64)
				*dst += n
			}
		}
		q.Deliveries = deliveryBars(dels, q.Consumer)
		out = append(out, q)
	}
	return out, nil
}

// heldBy is what the login's desk holds, for its topic pages.
func (c *Console) heldBy(r *http.Request) *deskPage {
	d, _ := c.deskOf(r, false)
	if d == nil {
		return &deskPage{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return &deskPage{Held: append([]heldMsg(nil), d.held...), CSRF: c.sign.csrf(sessionOf(r).nonce)}
}

// deskShow answers a take or action: the desk fragment (and the queues'
// figures) to htmx; to a plain form post, the topic's page again (303) or
// the refusal's error page.
func (c *Console) deskShow(w http.ResponseWriter, r *http.Request, status int, pg *deskPage, topic string) {
	switch {
	case r.Header.Get("HX-Request") != "":
		c.render(w, status, "desk", pg)
	case pg.Refused != "":
		c.fail(w, r, status, pg.Refused)
	default:
		http.Redirect(w, r, "/topic?"+url.Values{"name": {topic}}.Encode(), http.StatusSeeOther)
	}
}

// deliveryBars is consumer's histogram of deliveriesSQL's rows.
func deliveryBars(dels *result, consumer string) []deliveryBar {
	var out []deliveryBar
	var top int64
	for _, row := range dels.Rows {
		if cell(row[0]) != consumer {
			continue
		}
		d, _ := row[1].(int64)
		n := numeric(row[2])
		out = append(out, deliveryBar{Deliveries: d, Messages: n})
		top = max(top, n)
	}
	for i := range out {
		if top > 0 {
			out[i].Width = max(1, out[i].Messages*100/top)
		}
	}
	return out
}

// numeric is an integer cell that may come as int64 or as a numeric
// (sum over bigint is numeric in PostgreSQL).
func numeric(v any) int64 {
	if n, ok := v.(int64); ok {
		return n
	}
	n, _ := strconv.ParseInt(cell(v), 10, 64)
	return n
}
