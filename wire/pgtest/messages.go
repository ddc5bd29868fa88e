package pgtest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Raw is a hand-made message, for what pgproto3 cannot encode: bad
// lengths, unknown types, invalid UTF-8, a parameter of length -2.
//
//	Raw {"Type": "Q", "Body": "SELECT 1\u0000"}
//
// Type is the message type byte (empty for a startup packet, which has
// none); Body is the body with every character below U+0100 taken as one
// byte (so "\u00ff" is the byte 0xff), and Hex more body bytes, appended;
// Length, when not zero, replaces the length word (which otherwise counts
// itself and the body, as it should).
type Raw struct {
	Type   string
	Body   string
	Hex    string
	Length *int32
}

func (r *Raw) encode() ([]byte, error) {
	var body []byte
	for _, c := range r.Body {
		if c > 0xff {
			return nil, fmt.Errorf("Raw Body: character %q is above U+00FF", c)
		}
		body = append(body, byte(c))
	}
	h, err := hex.DecodeString(strings.ReplaceAll(r.Hex, " ", ""))
	if err != nil {
		return nil, fmt.Errorf("Raw Hex: %v", err)
	}
	body = append(body, h...)
	var out []byte
	if len(r.Type) > 1 {
		return nil, fmt.Errorf("Raw Type %q: want one byte", r.Type)
	}
	out = append(out, r.Type...)
	n := int32(len(body) + 4)
	if r.Length != nil {
		n = *r.Length
	}
	out = binary.BigEndian.AppendUint32(out, uint32(n))
	return append(out, body...), nil
}

// frontendMessage decodes one input line of a send block: a message type
// name and its JSON.
func frontendMessage(line string) (any, error) {
	name, js, _ := strings.Cut(line, " ")
	js = strings.TrimSpace(js)
	if js == "" {
		js = "{}"
	}
	var msg any
	switch name {
	case "Query":
		msg = &pgproto3.Query{}
	case "Parse":
		msg = &pgproto3.Parse{}
	case "Bind":
		msg = &pgproto3.Bind{}
	case "Describe":
		msg = &pgproto3.Describe{}
	case "Execute":
		msg = &pgproto3.Execute{}
	case "Close":
		msg = &pgproto3.Close{}
	case "Sync":
		msg = &pgproto3.Sync{}
	case "Flush":
		msg = &pgproto3.Flush{}
	case "Terminate":
		msg = &pgproto3.Terminate{}
	case "CopyData":
		// {"Text": "..."} is CopyData of that text; {"Data": "hex"} as pgproto3.
		var t struct{ Text *string }
		if err := json.Unmarshal([]byte(js), &t); err == nil && t.Text != nil {
			return &pgproto3.CopyData{Data: []byte(*t.Text)}, nil
		}
		msg = &pgproto3.CopyData{}
	case "CopyDone":
		msg = &pgproto3.CopyDone{}
	case "CopyFail":
		msg = &pgproto3.CopyFail{}
	case "StartupMessage":
		msg = &pgproto3.StartupMessage{}
	case "SSLRequest":
		msg = &pgproto3.SSLRequest{}
	case "GSSEncRequest":
		msg = &pgproto3.GSSEncRequest{}
	case "PasswordMessage":
		msg = &pgproto3.PasswordMessage{}
	case "FunctionCall":
		msg = &pgproto3.FunctionCall{}
	case "Raw":
		msg = &Raw{}
	default:
		return nil, fmt.Errorf("unknown frontend message %q", name)
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(msg); err != nil {
		return nil, fmt.Errorf("%s %s: %v", name, js, err)
	}
	return msg, nil
}

// Normalize makes a received message deterministic and comparable:
// BackendKeyData loses its process id and secret, server_version keeps
// only its major version, ErrorResponse and NoticeResponse lose File,
// Line and Routine (source locations of the server), and authentication
// salts and SCRAM nonces are dropped. It returns the message's line of
// expected output: its JSON with fields of zero value left out.
func Normalize(msg pgproto3.BackendMessage) (string, error) {
	switch m := msg.(type) {
	case *pgproto3.BackendKeyData:
		c := *m
		c.ProcessID, c.SecretKey = 0, nil
		msg = &c
	case *pgproto3.ParameterStatus:
		c := *m
		if c.Name == "server_version" {
			major, _, _ := strings.Cut(c.Value, ".")
			c.Value = major + ".x"
		}
		msg = &c
	case *pgproto3.NegotiateProtocolVersion:
		// Startup parameters travel as a map: their order is the script
		// runner's, not the server's.
		c := *m
		c.UnrecognizedOptions = append([]string(nil), c.UnrecognizedOptions...)
		sort.Strings(c.UnrecognizedOptions)
		msg = &c
	case *pgproto3.ErrorResponse:
		c := *m
		c.File, c.Line, c.Routine = "", 0, ""
		msg = &c
	case *pgproto3.NoticeResponse:
		// pgproto3 has no JSON form of its own for NoticeResponse.
		c := pgproto3.ErrorResponse(*m)
		c.File, c.Line, c.Routine = "", 0, ""
		js, err := json.Marshal(c)
		if err != nil {
			return "", err
		}
		return compact(bytes.Replace(js, []byte(`"Type":"ErrorResponse"`), []byte(`"Type":"NoticeResponse"`), 1))
	case *pgproto3.AuthenticationMD5Password:
		c := *m
		c.Salt = [4]byte{}
		msg = &c
	case *pgproto3.AuthenticationSASLContinue:
		c := *m
		c.Data = nil
		msg = &c
	case *pgproto3.AuthenticationSASLFinal:
		c := *m
		c.Data = nil
		msg = &c
	}
	js, err := json.Marshal(msg)
	if err != nil {
		return "", err
	}
	return compact(js)
}

// compact drops the top-level fields of zero value ("", 0, false, null,
// [], {}) of a JSON object, keeping the order of the others.
func compact(js []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return string(js), nil
	}
	var sb strings.Builder
	sb.WriteByte('{')
	first := true
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", err
		}
		key := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", err
		}
		switch string(v) {
		case `""`, `0`, `false`, `null`, `[]`, `{}`:
			continue
		}
		if !first {
			sb.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		sb.Write(k)
		sb.WriteByte(':')
		sb.Write(v)
	}
	sb.WriteByte('}')
	return sb.String(), nil
}

// sortParameterStatus sorts each run of consecutive ParameterStatus lines
// by name: servers send them in their own order, and clients do not care.
func sortParameterStatus(lines []string) {
	isPS := func(l string) bool { return strings.HasPrefix(l, `{"Type":"ParameterStatus"`) }
	for i := 0; i < len(lines); {
		if !isPS(lines[i]) {
			i++
			continue
		}
		j := i
		for j < len(lines) && isPS(lines[j]) {
			j++
		}
		sort.Strings(lines[i:j])
		i = j
	}
}
