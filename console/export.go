package console

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Export: a partition's messages in an offset range [from, to), with the
// browser's filters, as JSON lines or CSV. The same stateless SELECTs as
// the browser, exportChunk offsets at a time, each chunk written (and
// flushed) before the next is read: the response is streamed, never held
// whole. A range is at most maxExport offsets.

const (
	// maxExport is the most offsets one export covers (to - from).
	maxExport = 1_000_000
	// exportChunk is how many offsets one SELECT of an export reads.
	exportChunk = 1000
)

// exportCols are an export's columns, in its order (the CSV header, the
// JSON keys).
var exportCols = []string{"partition", "offset", "written_at", "created_at", "producer_id", "seqno", "message_group_id",
	"codec", "attrs", "key", "headers", "data"}

const exportSQLCols = `partition, "offset", written_at::text AS written_at, created_at::text AS created_at, producer_id, seqno,
	message_group_id, codec, attrs::text AS attrs, key, headers::text AS headers, data`

// exportBytes is a key or body as an export writes it: the text when it
// is UTF-8 without a NUL byte and does not start with \x, else \x and its
// hex, as topicgate writes a header value that is not text.
func exportBytes(b []byte) string {
	if utf8.Valid(b) && !strings.ContainsRune(string(b), 0) && !strings.HasPrefix(string(b), `\x`) {
		return string(b)
	}
	return `\x` + hex.EncodeToString(b)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// messagesExport streams a range of a partition's messages.
func (c *Console) messagesExport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	b, err := parseBrowse(q)
	format := q.Get("format")
	if err == nil && format != "jsonl" && format != "csv" {
		err = inputError(fmt.Sprintf("format %q is not jsonl or csv", format))
	}
	var to *int64
	if err == nil {
		to, err = parseOffset(q, "to")
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		parts, err := sc.query(ctx, `SELECT start_offset, end_offset FROM sys.partitions WHERE topic = $1 AND partition = $2`,
			b.Topic, b.Partition)
		if err != nil {
			return err
		}
		if len(parts.Rows) == 0 {
			c.fail(w, r, http.StatusNotFound, fmt.Sprintf("no partition %d of a topic %q that you may see", b.Partition, b.Topic))
			return nil
		}
		start, end := parts.Rows[0][0].(int64), parts.Rows[0][1].(int64)
		lo, hi := start, end
		if b.From != nil {
			lo = max(*b.From, start)
		}
		if b.F.Since != "" {
			at, err := sinceOffset(ctx, sc, b.Topic, b.Partition, b.F.Since, end)
			if err != nil {
				return err
			}
			lo = max(lo, at)
		}
		if to != nil {
			hi = min(*to, end)
		} else if b.From == nil && b.F.Since == "" {
			lo = max(hi-maxExport, start) // the newest maxExport
		}
		hi = max(hi, lo)
		if hi-lo > maxExport {
			c.fail(w, r, http.StatusBadRequest, fmt.Sprintf("offsets %d to %d are %d offsets: an export covers at most %d (give from and to)",
				lo, hi, hi-lo, maxExport))
			return nil
		}
		return readOnly(ctx, sc, b.F, func() error { return c.streamExport(ctx, w, r, sc, b, format, lo, hi) })
	})
}

// streamExport writes the messages of [lo, hi) chunk by chunk. A
// statement refused before anything was sent (a filter that is not valid
// SQL) is answered with its status; a failure later ends the response
// early (the status is gone by then), and is logged.
func (c *Console) streamExport(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *sqlConn, b browseQuery,
	format string, lo, hi int64) error {
	started := false
	var cw *csv.Writer
	begin := func() {
		started = true
		ext, ctype := "jsonl", "application/jsonl; charset=utf-8"
		if format == "csv" {
			ext, ctype = "csv", "text/csv; charset=utf-8"
		}
		name := fmt.Sprintf("%s-p%d-%d-%d.%s", strings.Trim(unsafeName.ReplaceAllString(b.Topic, "_"), "_"), b.Partition, lo, hi, ext)
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if format == "csv" {
			cw = csv.NewWriter(w)
			_ = cw.Write(exportCols)
		}
	}
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for at := lo; at < hi || !started; at += exportChunk {
		q, args := selectSQL(b.Topic, exportSQLCols, b.Partition, at, min(at+exportChunk, hi), b.F, false, 0)
		res, err := sc.query(ctx, q, args...)
		if err != nil {
			if !started {
				if status := sqlStatus(err); status != 0 {
					c.fail(w, r, status, errText(err))
					return nil
				}
				return err
			}
			slog.Warn("console: an export ended early", "topic", b.Topic, "partition", b.Partition, "offset", at, "err", err)
			return nil
		}
		if !started {
			begin()
		}
		for _, row := range res.Rows {
			vals := exportRow(row)
			if cw != nil {
				_ = cw.Write(vals)
				continue
			}
			obj := make(map[string]any, len(exportCols))
			for i, name := range exportCols {
				switch {
				case row[i] == nil:
					obj[name] = nil
				case name == "partition" || name == "offset" || name == "seqno":
					obj[name] = row[i]
				case name == "attrs" || name == "headers":
					obj[name] = json.RawMessage(vals[i])
				default:
					obj[name] = vals[i]
				}
			}
			if err := enc.Encode(orderedJSON{exportCols, obj}); err != nil {
				return nil // the client went away
			}
		}
		if cw != nil {
			cw.Flush()
			if cw.Error() != nil {
				return nil
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if at >= hi {
			break
		}
	}
	return nil
}

// exportRow is a row of exportSQLCols as text (NULL as "").
func exportRow(row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		if bs, ok := v.([]byte); ok && (exportCols[i] == "key" || exportCols[i] == "data") {
			out[i] = exportBytes(bs)
			continue
		}
		out[i] = cell(v)
	}
	return out
}

// orderedJSON is a JSON object with its keys in the order given.
type orderedJSON struct {
	keys []string
	vals map[string]any
}

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Quote(k))
		sb.WriteByte(':')
		v, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		sb.Write(v)
	}
	sb.WriteByte('}')
	return []byte(sb.String()), nil
}
