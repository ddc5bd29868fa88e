package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// DefaultLiveRecheck is how often a live stream checks again that its
// login is valid and what its role may see (one SELECT;
// Config.LiveRecheck).
const DefaultLiveRecheck = time.Minute

// SampleNow takes one sample now and tells the live streams (tests:
// instead of waiting for the next tick), and returns its number and time.
// It starts the sampler if no request did.
func (c *Console) SampleNow() (seq uint64, at time.Time) {
	if c.samples == nil {
		return 0, time.Time{}
	}
	c.samples.start()
	return c.samples.sample()
}

// SamplerStats returns what the sampler holds (its rings' size).
func (c *Console) SamplerStats() SamplerStats {
	if c.samples == nil {
		return SamplerStats{}
	}
	return c.samples.stats()
}

// Close stops the sampler.
func (c *Console) Close() {
	if c.samples != nil {
		c.samples.close()
	}
}

// chartSpec is what one live stream charts: its lines' series, which it
// found visible to the role by SQL (visible), checked again every
// Config.LiveRecheck.
type chartSpec struct {
	visible func(ctx context.Context, sc *sqlConn) ([]line, error)
}

// lagChart is a consumer's lag: found in sys.consumers as the role, or
// no chart (errNotVisible).
func lagChart(topic, consumer string) chartSpec {
	return chartSpec{visible: func(ctx context.Context, sc *sqlConn) ([]line, error) {
		res, err := sc.query(ctx, `SELECT count(*) FROM sys.consumers WHERE topic = $1 AND consumer = $2`, topic, consumer)
		if err != nil {
			return nil, err
		}
		if len(res.Rows) == 0 || res.Rows[0][0] == int64(0) {
			return nil, errNotVisible
		}
		return []line{{{kind: kindLag, topic: topic, consumer: consumer}}}, nil
	}}
}

// topicsChart is one line per kind, each the sum of that kind's series
// over the topics sys.topics shows the role: messages per second
// written and consumed (throughput), bytes per second written (bytes).
func topicsChart(kinds ...seriesKind) chartSpec {
	return chartSpec{visible: func(ctx context.Context, sc *sqlConn) ([]line, error) {
		res, err := sc.query(ctx, `SELECT topic FROM sys.topics ORDER BY topic`)
		if err != nil {
			return nil, err
		}
		lines := make([]line, len(kinds))
		for i, k := range kinds {
			lines[i] = line{}
			for _, r := range res.Rows {
				lines[i] = append(lines[i], seriesKey{kind: k, topic: cell(r[0])})
			}
		}
		return lines, nil
	}}
}

type notVisible struct{}

func (notVisible) Error() string { return "not visible" }

var errNotVisible error = notVisible{}

// live is GET /live: a stream of server-sent events for one chart
// (chart=lag&topic=T&consumer=C, chart=throughput or chart=bytes): first "history"
// (the hour held), then "point" after each sample with what it added.
// Only series of topics the role sees in sys.topics / sys.consumers are
// sent; a consumer it may not see is 404 before the stream starts.
func (c *Console) live(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var spec chartSpec
	switch q.Get("chart") {
	case "lag":
		spec = lagChart(q.Get("topic"), q.Get("consumer"))
	case "throughput":
		spec = topicsChart(kindIn, kindOut)
	case "bytes":
		spec = topicsChart(kindInBytes)
	default:
		c.fail(w, r, http.StatusBadRequest, fmt.Sprintf("no chart %q: chart=lag&topic=...&consumer=..., chart=throughput or chart=bytes", q.Get("chart")))
		return
	}
	if c.samples == nil {
		c.fail(w, r, http.StatusNotFound, "this console keeps no samples")
		return
	}
	ss := sessionOf(r)
	lines, err := c.visibleLines(r, spec)
	if errors.Is(err, errNotVisible) {
		c.fail(w, r, http.StatusNotFound, fmt.Sprintf("no consumer %q of topic %q that you may see", q.Get("consumer"), q.Get("topic")))
		return
	}
	if err != nil {
		c.failSQL(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	notify, cancel := c.samples.subscribe()
	defer cancel()
	send := func(event string, d chartData) bool {
		b, err := json.Marshal(d)
		if err != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	d := c.samples.read(0, lines...)
	if !send("history", d) {
		return
	}
	seq := d.Seq
	recheck := time.NewTicker(c.cfg.LiveRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-recheck.C:
			// The login still valid (not expired, not logged out) and the
			// role's privileges as they are now.
			ck, err := r.Cookie(sessionCookie)
			if err == nil {
				_, err = c.sign.decode(ck.Value, c.cfg.Clock())
			}
			if err != nil || !ss.expires.After(c.cfg.Clock()) {
				return
			}
			now, err := c.visibleLines(r, spec)
			if err != nil {
				return
			}
			if !slices.EqualFunc(now, lines, slices.Equal) {
				lines = now
				d = c.samples.read(0, lines...)
				if !send("history", d) {
					return
				}
				seq = d.Seq
			}
		case <-notify:
			d = c.samples.read(seq, lines...)
			seq = d.Seq
			if len(d.Times) > 0 && !send("point", d) {
				return
			}
		}
	}
}

// visibleLines runs spec's check as the logged-in role.
func (c *Console) visibleLines(r *http.Request, spec chartSpec) ([]line, error) {
	sc, err := c.open(r.Context(), sessionOf(r).user, r.RemoteAddr)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	return spec.visible(r.Context(), sc)
}
