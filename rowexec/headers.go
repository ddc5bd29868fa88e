package rowexec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// The headers column: a Kafka record's headers (issue 28) as jsonb, an
// array of {"key": text, "value": text or null} objects in the record's
// order. A value that is not valid UTF-8, holds a NUL (which PostgreSQL's
// jsonb cannot) or starts with \x is written as bytea hex text, \x and
// two hex digits a byte, so that every value round-trips: ParseHeaders
// reads the same form back.

// HeadersJSON renders headers as the headers column's jsonb text ("[]"
// for none), keys ordered as PostgreSQL prints jsonb objects.
func HeadersJSON(hs []topicstore.Header) string {
	if len(hs) == 0 {
		return "[]"
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, h := range hs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"key": `)
		writeJSONString(&b, h.Key)
		b.WriteString(`, "value": `)
		switch {
		case h.Value == nil:
			b.WriteString("null")
		case needsHex(h.Value):
			writeJSONString(&b, `\x`+hex.EncodeToString(h.Value))
		default:
			writeJSONString(&b, string(h.Value))
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// needsHex reports whether a header value is written as bytea hex text.
func needsHex(v []byte) bool {
	return !utf8.Valid(v) || bytes.IndexByte(v, 0) >= 0 || bytes.HasPrefix(v, []byte(`\x`))
}

// ParseHeaders reads the headers column's jsonb text (HeadersJSON's form)
// into headers, nil for an empty array. Any other shape, a value of
// another JSON type or bad hex after \x is 22023, naming headers and the
// element (0-based, as jsonb's -> counts).
func ParseHeaders(s string) ([]topicstore.Header, error) {
	var arr []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &arr); err != nil || arr == nil {
		return nil, headersErr("headers must be a JSON array of {\"key\": text, \"value\": text or null} objects, got %s", truncateText(s, 64))
	}
	if len(arr) == 0 {
		return nil, nil
	}
	out := make([]topicstore.Header, len(arr))
	for i, obj := range arr {
		kraw, kok := obj["key"]
		vraw, vok := obj["value"]
		if !kok || !vok || len(obj) != 2 {
			return nil, headersErr("headers[%d] must be an object with exactly the fields \"key\" and \"value\"", i)
		}
		if err := json.Unmarshal(kraw, &out[i].Key); err != nil || string(kraw) == "null" {
			return nil, headersErr("headers[%d]: key must be a string", i)
		}
		var v *string
		if err := json.Unmarshal(vraw, &v); err != nil {
			return nil, headersErr("headers[%d]: value must be a string or null", i)
		}
		if v == nil {
			continue
		}
		val, err := headerValue(*v)
		if err != nil {
			return nil, headersErr("headers[%d]: value %s is not valid bytea hex", i, truncateText(*v, 32))
		}
		out[i].Value = val
	}
	return out, nil
}

// headerValue is a header value's bytes: \x-prefixed hex decoded, other
// text as it is (never nil).
func headerValue(v string) ([]byte, error) {
	if h, ok := strings.CutPrefix(v, `\x`); ok {
		b, err := hex.DecodeString(h)
		if b == nil && err == nil {
			b = []byte{}
		}
		return b, err
	}
	return []byte(v), nil
}

func headersErr(format string, args ...any) error {
	return pgerror.Newf(pgerror.CodeInvalidParameterValue, format, args...)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
