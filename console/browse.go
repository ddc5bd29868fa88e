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

const (
	defaultBrowseLimit = 20
	maxBrowseLimit     = 500
)

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
	return k + " limit=" + strconv.FormatInt(b.Limit, 10) + " view=" + b.View
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
	b := browseQuery{Topic: q.Get("topic"), Limit: defaultBrowseLimit, View: q.Get("view")}
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
}

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
		pg := &browsePage{Q: b}
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
		from := "/messages?" + url.Values{"topic": {b.Topic}, "partition": {strconv.FormatInt(b.Partition, 10)},
			"limit": {strconv.FormatInt(b.Limit, 10)}, "view": {b.View}}.Encode()
		var res *result
		if b.From != nil {
			pg.FromValue = strconv.FormatInt(*b.From, 10)
			res, err = sc.query(ctx, `SELECT `+msgCols+` FROM `+quoteIdent(b.Topic)+
				` WHERE partition = $1 AND "offset" >= $2 ORDER BY "offset" LIMIT `+strconv.FormatInt(b.Limit, 10),
				b.Partition, *b.From)
		} else {
			hi := pg.End
			if b.Before != nil && *b.Before < hi {
				hi = *b.Before
			}
			res, err = sc.query(ctx, `SELECT `+msgCols+` FROM `+quoteIdent(b.Topic)+
				` WHERE partition = $1 AND "offset" < $2 AND "offset" >= $3 ORDER BY "offset" DESC`,
				b.Partition, hi, max(hi-b.Limit, 0))
		}
		if err != nil {
			return err
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
		if n := len(pg.Messages); n > 0 {
			lo, hi := pg.Messages[0].Offset, pg.Messages[n-1].Offset
			if lo > hi {
				lo, hi = hi, lo
			}
			if lo > pg.Start {
				pg.Older = from + "&before=" + strconv.FormatInt(lo, 10)
			}
			if hi+1 < pg.End {
				pg.Newer = from + "&from=" + strconv.FormatInt(hi+1, 10)
			}
		}
		c.browseShow(w, r, http.StatusOK, pg)
		return nil
	})
}

// browseFail answers a request whose values are not valid: the message
// in the page (or in the table an htmx request replaces), with status.
func (c *Console) browseFail(w http.ResponseWriter, r *http.Request, b browseQuery, status int, msg string) {
	c.browseShow(w, r, status, &browsePage{Q: b, Error: msg})
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
