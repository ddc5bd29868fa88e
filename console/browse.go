package console

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The message browser reads with stateless SELECTs on the topic, bounded
// by partition and offset (both pushed into the store's scan): it never
// names a consumer, so it never creates one and never moves a position.
//
// Filters (producer_id, message_group_id, an attribute, the Kafka key, a
// header, text in the body) are bind parameters of the same SELECT; a
// filtered page scans at most Scan offsets (defaultScan) and says where
// to continue, so paging through finds every match, not just the newest.
// "Since" finds the partition's first offset written at or after a time
// (written_at's lower bound is pushed into the scan) and reads up from
// there. The free-form WHERE expression is the one value that is not a
// parameter: it filters a subquery already bounded by partition and
// offset, as one statement (extended protocol) inside BEGIN READ ONLY as
// the role, so SQL refuses whatever it may not do.

const (
	defaultBrowseLimit = 20
	maxBrowseLimit     = 500
	// defaultScan and maxScan bound the offsets one filtered page scans.
	defaultScan = 10_000
	maxScan     = 100_000
)

// filters are the message browser's filters; "" is no filter.
type filters struct {
	Since, Producer, Group, AttrKey, AttrValue, Key, HdrKey, HdrValue, Text, Where string
}

// filterParams are the filters' query parameters, in filters' order.
var filterParams = []string{"since", "producer", "group", "attr", "attrval", "key", "hdr", "hdrval", "text", "where"}

func (f *filters) fields() []*string {
	return []*string{&f.Since, &f.Producer, &f.Group, &f.AttrKey, &f.AttrValue, &f.Key, &f.HdrKey, &f.HdrValue, &f.Text, &f.Where}
}

// rows reports whether a filter selects rows (Since only moves the start).
func (f filters) rows() bool {
	return f.Producer != "" || f.Group != "" || f.AttrKey != "" || f.Key != "" || f.HdrKey != "" || f.Text != "" || f.Where != ""
}

// values are the set filters as query parameters.
func (f filters) values(v url.Values) {
	for i, p := range f.fields() {
		if *p != "" {
			v.Set(filterParams[i], *p)
		}
	}
}

func parseFilters(q url.Values) (filters, error) {
	var f filters
	for i, p := range f.fields() {
		*p = q.Get(filterParams[i])
		if filterParams[i] != "where" && filterParams[i] != "text" {
			*p = strings.TrimSpace(*p)
		}
	}
	if strings.TrimSpace(f.Where) == "" {
		f.Where = ""
	}
	if f.AttrValue != "" && f.AttrKey == "" {
		return f, inputError("an attribute value needs the attribute's key")
	}
	if f.HdrValue != "" && f.HdrKey == "" {
		return f, inputError("a header value needs the header's key")
	}
	return f, nil
}

// conds are the filters but Where as SQL conditions on the message
// columns, their values appended to args as bind parameters.
func (f filters) conds(args *[]any) []string {
	param := func(v any) string {
		*args = append(*args, v)
		return "$" + strconv.Itoa(len(*args))
	}
	var cs []string
	if f.Since != "" {
		cs = append(cs, "written_at >= "+param(f.Since)+"::timestamptz")
	}
	if f.Producer != "" {
		cs = append(cs, "producer_id = "+param(f.Producer))
	}
	if f.Group != "" {
		cs = append(cs, "message_group_id = "+param(f.Group))
	}
	if f.AttrKey != "" {
		if f.AttrValue != "" {
			js, _ := json.Marshal(map[string]string{f.AttrKey: f.AttrValue})
			cs = append(cs, "attrs @> "+param(string(js))+"::jsonb")
		} else {
			cs = append(cs, "attrs ? "+param(f.AttrKey))
		}
	}
	if f.Key != "" {
		cs = append(cs, "key = convert_to("+param(f.Key)+", 'UTF8')")
	}
	if f.HdrKey != "" {
		h := map[string]string{"key": f.HdrKey}
		if f.HdrValue != "" {
			h["value"] = f.HdrValue
		}
		js, _ := json.Marshal([]map[string]string{h})
		cs = append(cs, "headers @> "+param(string(js))+"::jsonb")
	}
	if f.Text != "" {
		// Bytes in bytes: bodies that are not UTF-8 are searched too
		// (convert_from would fail on them).
		cs = append(cs, "position(convert_to("+param(f.Text)+", 'UTF8') IN data) > 0")
	}
	return cs
}

// allCols are every column of a stateless read, for the subquery the
// free-form expression filters.
const allCols = `partition, "offset", seqno, producer_id, message_group_id, created_at, written_at, codec, attrs, data, delay, key, headers`

// selectSQL is the SELECT of cols from topic's partition within offsets
// [lo, hi), filtered by f, in offset order (desc: newest first), at most
// limit rows (0: no LIMIT), with its parameters.
func selectSQL(topic, cols string, part, lo, hi int64, f filters, desc bool, limit int64) (string, []any) {
	args := []any{part, lo, hi}
	where := `partition = $1 AND "offset" >= $2 AND "offset" < $3`
	for _, c := range f.conds(&args) {
		where += " AND " + c
	}
	q := `SELECT ` + cols + ` FROM ` + quoteIdent(topic) + ` WHERE ` + where
	if f.Where != "" {
		// The expression filters a subquery the bounds already hold,
		// whatever it says.
		q = `SELECT ` + cols + ` FROM (SELECT ` + allCols + ` FROM ` + quoteIdent(topic) + ` WHERE ` + where +
			`) AS m WHERE (` + f.Where + "\n)"
	}
	q += ` ORDER BY "offset"`
	if desc {
		q += " DESC"
	}
	if limit > 0 {
		q += " LIMIT " + strconv.FormatInt(limit, 10)
	}
	return q, args
}

// readOnly runs fn inside BEGIN READ ONLY when f has a free-form
// expression (rolled back after), else as it is.
func readOnly(ctx context.Context, sc *sqlConn, f filters, fn func() error) error {
	if f.Where == "" {
		return fn()
	}
	if _, err := sc.query(ctx, "BEGIN READ ONLY"); err != nil {
		return err
	}
	defer func() { _, _ = sc.query(context.WithoutCancel(ctx), "ROLLBACK") }()
	return fn()
}

// sinceOffset is the first offset of partition part written at or after
// since (end when none is), found by a scan written_at's bound seeks.
func sinceOffset(ctx context.Context, sc *sqlConn, topic string, part int64, since string, end int64) (int64, error) {
	res, err := sc.query(ctx, `SELECT "offset" FROM `+quoteIdent(topic)+
		` WHERE partition = $1 AND written_at >= $2::timestamptz ORDER BY "offset" LIMIT 1`, part, since)
	if err != nil {
		return 0, err
	}
	if len(res.Rows) == 0 {
		return end, nil
	}
	return res.Rows[0][0].(int64), nil
}

// browseQuery is a message browser request, checked.
type browseQuery struct {
	Topic     string
	Partition int64
	// From, when set, reads upwards from that offset; else Before (or the
	// partition's end when unset) reads the newest messages below it,
	// newest first.
	From, Before *int64
	Limit        int64
	View         string // auto, text, json or hex
	F            filters
	Scan         int64 // the most offsets a filtered page scans
}

// Key is the request as one string ("partition=1 from=3 limit=4
// view=auto", "... before=9 ..."): the table's data-q, which tells a
// reader (a test) which request the table shows.
func (b browseQuery) Key() string {
	k := "partition=" + strconv.FormatInt(b.Partition, 10)
	if b.From != nil {
		k += " from=" + strconv.FormatInt(*b.From, 10)
	} else if b.Before != nil {
		k += " before=" + strconv.FormatInt(*b.Before, 10)
	}
	k += " limit=" + strconv.FormatInt(b.Limit, 10) + " view=" + b.View
	f := b.F
	for i, p := range f.fields() {
		if *p != "" {
			k += " " + filterParams[i] + "=" + strconv.Quote(*p)
		}
	}
	if b.F.rows() {
		k += " scan=" + strconv.FormatInt(b.Scan, 10)
	}
	return k
}

// values is the request as query parameters, without from and before.
func (b browseQuery) values() url.Values {
	v := url.Values{"topic": {b.Topic}, "partition": {strconv.FormatInt(b.Partition, 10)},
		"limit": {strconv.FormatInt(b.Limit, 10)}, "view": {b.View}}
	b.F.values(v)
	if b.F.rows() && b.Scan != defaultScan {
		v.Set("scan", strconv.FormatInt(b.Scan, 10))
	}
	return v
}

// inputError is a request value that is not valid.
type inputError string

func (e inputError) Error() string { return string(e) }

func parseOffset(q url.Values, name string) (*int64, error) {
	s := strings.TrimSpace(q.Get(name))
	if s == "" {
		return nil, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return nil, inputError(fmt.Sprintf("%s %q is not an offset (a whole number, 0 or more)", name, s))
	}
	return &v, nil
}

func parseBrowse(q url.Values) (browseQuery, error) {
	b := browseQuery{Topic: q.Get("topic"), Limit: defaultBrowseLimit, View: q.Get("view"), Scan: defaultScan}
	if b.Topic == "" {
		return b, inputError("no topic given")
	}
	if s := strings.TrimSpace(q.Get("partition")); s != "" {
		p, err := strconv.ParseInt(s, 10, 64)
		if err != nil || p < 0 {
			return b, inputError(fmt.Sprintf("partition %q is not a partition number", s))
		}
		b.Partition = p
	}
	var err error
	if b.From, err = parseOffset(q, "from"); err != nil {
		return b, err
	}
	if b.Before, err = parseOffset(q, "before"); err != nil {
		return b, err
	}
	if s := strings.TrimSpace(q.Get("limit")); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > maxBrowseLimit {
			return b, inputError(fmt.Sprintf("limit %q is not a number from 1 to %d", s, maxBrowseLimit))
		}
		b.Limit = n
	}
	if s := strings.TrimSpace(q.Get("scan")); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > maxScan {
			return b, inputError(fmt.Sprintf("scan %q is not a number from 1 to %d", s, maxScan))
		}
		b.Scan = n
	}
	if b.F, err = parseFilters(q); err != nil {
		return b, err
	}
	switch b.View {
	case "":
		b.View = "auto"
	case "auto", "text", "json", "hex":
	default:
		return b, inputError(fmt.Sprintf("view %q is not one of auto, text, json, hex", b.View))
	}
	return b, nil
}

// quoteIdent is name as a quoted SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

const msgCols = `"offset", written_at::text AS written_at, producer_id, seqno, message_group_id, codec, attrs::text AS attrs, key, headers::text AS headers, data`

// message is one row of the browser.
type message struct {
	Offset                                          int64
	WrittenAt, Producer, Seqno, Group, Codec, Attrs string
	Key, Headers, Body, BodyKind                    string
	HasKey                                          bool
}

// browsePage is the messages template's data.
type browsePage struct {
	Q          browseQuery
	Partitions []int64
	Start, End int64 // the partition's offsets
	Messages   []message
	// The optional columns, shown when a message of the page has them.
	ShowProducer, ShowGroup, ShowKey bool
	ShowHdrs                         bool
	Error                            string
	Older, Newer                     string // URLs of the next pages, "" when none
	FromValue                        string
	// ScanLo and ScanHi are the offsets the page covered, [ScanLo,
	// ScanHi): every message there that the filters select is shown.
	ScanLo, ScanHi int64
	Filtered       bool
	// SinceOffset is the first offset written at or after the Since
	// filter's time (HasSince: there is one).
	SinceOffset            int64
	HasSince               bool
	ExportJSONL, ExportCSV string // this page's offsets, exported
	MaxExport              int64
}

// F is the page's filters.
func (pg *browsePage) F() filters { return pg.Q.F }

// messages is the message browser: the full page, or the table alone to
// an htmx request of it.
func (c *Console) messages(w http.ResponseWriter, r *http.Request) {
	b, err := parseBrowse(r.URL.Query())
	if err != nil {
		c.browseFail(w, r, b, http.StatusBadRequest, err.Error())
		return
	}
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		parts, err := sc.query(ctx, `SELECT partition, start_offset, end_offset FROM sys.partitions WHERE topic = $1 ORDER BY partition`, b.Topic)
		if err != nil {
			return err
		}
		if len(parts.Rows) == 0 {
			c.fail(w, r, http.StatusNotFound, fmt.Sprintf("no topic %q that you may see", b.Topic))
			return nil
		}
		pg := &browsePage{Q: b, MaxExport: maxExport}
		found := false
		for _, row := range parts.Rows {
			p := row[0].(int64)
			pg.Partitions = append(pg.Partitions, p)
			if p == b.Partition {
				found = true
				pg.Start, pg.End = row[1].(int64), row[2].(int64)
			}
		}
		if !found {
			c.browseFail(w, r, b, http.StatusBadRequest, fmt.Sprintf("topic %q has no partition %d", b.Topic, b.Partition))
			return nil
		}
		// refused answers a statement's 4xx error in the page.
		refused := func(err error) error {
			if status := sqlStatus(err); status != 0 {
				c.browseFail(w, r, b, status, errText(err))
				return nil
			}
			return err
		}
		if b.From != nil {
			pg.FromValue = strconv.FormatInt(*b.From, 10)
		}
		// floor is the lowest offset the page reads: the partition's
		// start, or the first offset written since the Since filter's
		// time. Since alone reads up from there.
		floor := pg.Start
		if b.F.Since != "" {
			at, err := sinceOffset(ctx, sc, b.Topic, b.Partition, b.F.Since, pg.End)
			if err != nil {
				return refused(err)
			}
			pg.SinceOffset, pg.HasSince = at, true
			floor = max(floor, at)
			if b.From == nil && b.Before == nil {
				b.From = &at
				pg.Q.From = &at
			}
		}
		window := b.Limit // unfiltered, a page scans the offsets it shows
		if b.F.rows() {
			window = b.Scan
		}
		var lo, hi int64
		desc := b.From == nil
		if desc {
			hi = pg.End
			if b.Before != nil && *b.Before < hi {
				hi = *b.Before
			}
			lo = max(hi-window, floor, 0)
		} else {
			lo = max(*b.From, floor)
			hi = min(lo+window, pg.End)
		}
		q, args := selectSQL(b.Topic, msgCols, b.Partition, lo, max(hi, lo), b.F, desc, b.Limit)
		var res *result
		if err := readOnly(ctx, sc, b.F, func() (err error) {
			res, err = sc.query(ctx, q, args...)
			return err
		}); err != nil {
			return refused(err)
		}
		for _, row := range res.Rows {
			pg.Messages = append(pg.Messages, toMessage(row, b.View))
		}
		for _, m := range pg.Messages {
			pg.ShowProducer = pg.ShowProducer || m.Producer != ""
			pg.ShowGroup = pg.ShowGroup || m.Group != ""
			pg.ShowKey = pg.ShowKey || m.HasKey
			pg.ShowHdrs = pg.ShowHdrs || (m.Headers != "" && m.Headers != "[]")
		}
		// What the page covered: the window, or up to its last message
		// when it filled up.
		if n := int64(len(pg.Messages)); n == b.Limit && n > 0 {
			if desc {
				lo = pg.Messages[n-1].Offset
			} else {
				hi = pg.Messages[n-1].Offset + 1
			}
		}
		pg.ScanLo, pg.ScanHi = lo, max(hi, lo)
		base := "/messages?" + b.values().Encode()
		if lo > floor {
			pg.Older = base + "&before=" + strconv.FormatInt(lo, 10)
		}
		if hi < pg.End {
			pg.Newer = base + "&from=" + strconv.FormatInt(hi, 10)
		}
		ev := b.values()
		ev.Set("from", strconv.FormatInt(pg.ScanLo, 10))
		ev.Set("to", strconv.FormatInt(pg.ScanHi, 10))
		ev.Del("limit")
		ev.Del("view")
		ev.Del("scan")
		ev.Del("since") // from already starts there
		pg.ExportJSONL = "/messages/export?" + ev.Encode() + "&format=jsonl"
		pg.ExportCSV = "/messages/export?" + ev.Encode() + "&format=csv"
		if pg.F().rows() {
			pg.Filtered = true
		}
		c.browseShow(w, r, http.StatusOK, pg)
		return nil
	})
}

// browseFail answers a request whose values are not valid: the message
// in the page (or in the table an htmx request replaces), with status.
func (c *Console) browseFail(w http.ResponseWriter, r *http.Request, b browseQuery, status int, msg string) {
	c.browseShow(w, r, status, &browsePage{Q: b, Error: msg, MaxExport: maxExport})
}

func (c *Console) browseShow(w http.ResponseWriter, r *http.Request, status int, pg *browsePage) {
	if r.Header.Get("HX-Request") != "" {
		c.render(w, status, "msgtable", pg)
		return
	}
	c.show(w, r, status, "messages", "Messages of "+pg.Q.Topic, pg)
}

// toMessage formats one row of msgCols.
func toMessage(row []any, view string) message {
	m := message{Offset: row[0].(int64), WrittenAt: cell(row[1]), Producer: cell(row[2]), Seqno: cell(row[3]),
		Group: cell(row[4]), Codec: cell(row[5]), Attrs: cell(row[6]), Headers: cell(row[8])}
	if k, ok := row[7].([]byte); ok {
		m.HasKey = true
		m.Key, _ = showBody(k, "auto")
	}
	data, _ := row[9].([]byte)
	if row[9] == nil {
		m.Body, m.BodyKind = "NULL", "null"
	} else {
		m.Body, m.BodyKind = showBody(data, view)
	}
	return m
}

// showBody is a body as view asks: text (invalid UTF-8 shown as hex), JSON
// pretty-printed (text when it is not JSON), hex, or auto: JSON when it
// parses, else text when it is UTF-8, else hex. kind says what it became.
func showBody(b []byte, view string) (string, string) {
	switch view {
	case "hex":
		return hexDump(b), "hex"
	case "json", "auto":
		var out bytes.Buffer
		if json.Valid(b) && json.Indent(&out, b, "", "  ") == nil {
			return out.String(), "json"
		}
	}
	if utf8.Valid(b) {
		return string(b), "text"
	}
	return hexDump(b), "hex"
}

// hexDump is b as hex, 16 bytes a line.
func hexDump(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(hex.EncodeToString(b[i:min(i+16, len(b))]))
	}
	return sb.String()
}
