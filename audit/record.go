package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Class is a statement's kind in pgaudit's terms.
type Class uint8

// The classes. MISC is everything else (SET, BEGIN, COMMIT, SHOW, ...).
const (
	Read    Class = 1 << iota // SELECT, COPY TO, a cursor's DECLARE and FETCH, EXPLAIN of them
	Write                     // INSERT, COPY FROM
	Consume                   // a read WITH (CONSUMER = c), ack/release/reject/extend, UPDATE sys.consumers
	DDL                       // CREATE/ALTER/DROP TOPIC, OWNER TO
	Role                      // roles and privileges: CREATE/ALTER/DROP ROLE, GRANT, REVOKE, SET ROLE, ...
	Misc                      // the rest
	Auth                      // a login
)

var classNames = []struct {
	c    Class
	name string
}{{Read, "READ"}, {Write, "WRITE"}, {Consume, "CONSUME"}, {DDL, "DDL"}, {Role, "ROLE"}, {Misc, "MISC"}, {Auth, "AUTH"}}

// String is the class's name in the log (READ, WRITE, ...).
func (c Class) String() string {
	for _, n := range classNames {
		if n.c == c {
			return n.name
		}
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Classes is a set of classes.
type Classes Class

// DefaultClasses are the classes logged unless --audit-classes says
// otherwise: all but MISC, as pgaudit leaves MISC out unless asked.
const DefaultClasses = Classes(Read | Write | Consume | DDL | Role | Auth)

// AllClasses is every class.
const AllClasses = Classes(Read | Write | Consume | DDL | Role | Misc | Auth)

// Has reports whether c is in cs.
func (cs Classes) Has(c Class) bool { return Classes(c)&cs != 0 }

// String lists cs as ParseClasses reads it.
func (cs Classes) String() string {
	var names []string
	for _, n := range classNames {
		if cs.Has(n.c) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// ParseClasses reads a comma-separated list of class names (any case;
// "all" is every class, "" none, a name after "-" is taken out, as
// pgaudit.log has "all, -misc").
func ParseClasses(s string) (Classes, error) {
	var cs Classes
	for _, item := range strings.Split(s, ",") {
		item = strings.ToUpper(strings.TrimSpace(item))
		if item == "" {
			continue
		}
		name, minus := strings.CutPrefix(item, "-")
		var c Classes
		if name == "ALL" {
			c = AllClasses
		}
		for _, n := range classNames {
			if n.name == name {
				c = Classes(n.c)
			}
		}
		if c == 0 {
			return 0, fmt.Errorf("unknown audit class %q (READ, WRITE, CONSUME, DDL, ROLE, MISC, AUTH or ALL)", item)
		}
		if minus {
			cs &^= c
		} else {
			cs |= c
		}
	}
	return cs, nil
}

// OK is the Outcome of a statement or login that succeeded.
const OK = "ok"

// Denied is the Outcome of a statement refused for a missing privilege
// (SQLSTATE 42501): always logged.
const Denied = "42501"

// Record is one line of the log.
type Record struct {
	// Time is when the statement started (or the login was decided).
	Time time.Time
	// Role is current_user, SessionUser session_user (the login's user
	// for an AUTH line).
	Role, SessionUser string
	// Remote is the client's address, Session its process id (0 for a
	// login refused before it got one).
	Remote  string
	Session uint32
	Class   Class
	// Command is the statement's command (its tag without row counts:
	// SELECT, INSERT, COPY, CREATE TOPIC, GRANT, ...; LOGIN for AUTH).
	Command string
	// Objects are the topics and consumers (topic.consumer) it touches.
	Objects []string
	// Outcome is OK or the SQLSTATE the statement or login failed with.
	Outcome string
	// Statement is the statement's text, passwords redacted.
	Statement string
}

// Logged reports whether r is written when cs are the enabled classes:
// its class is enabled, or it is a denial or a failed login.
func (r *Record) Logged(cs Classes) bool {
	return Logged(cs, r.Class, r.Outcome)
}

// Logged reports whether a record of class c with outcome is written
// when cs are the enabled classes.
func Logged(cs Classes, c Class, outcome string) bool {
	return cs.Has(c) || outcome == Denied || (c == Auth && outcome != OK)
}

// line is a Record as JSON, in this order.
type line struct {
	Time        string   `json:"time"`
	Role        string   `json:"role"`
	SessionUser string   `json:"session_user"`
	Remote      string   `json:"remote"`
	Session     uint32   `json:"session"`
	Class       string   `json:"class"`
	Command     string   `json:"command"`
	Objects     []string `json:"objects"`
	Outcome     string   `json:"outcome"`
	Statement   string   `json:"statement,omitempty"`
}

// TimeFormat is RFC 3339 with microseconds, as the lines' time is
// written (in UTC).
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// AppendJSON appends r as one JSON line (with its newline) to b. The
// text is not HTML-escaped: a statement's "<" stays "<".
func (r *Record) AppendJSON(b []byte) []byte {
	objs := r.Objects
	if objs == nil {
		objs = []string{}
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(line{Time: r.Time.UTC().Format(TimeFormat), Role: r.Role, SessionUser: r.SessionUser,
		Remote: r.Remote, Session: r.Session, Class: r.Class.String(), Command: r.Command, Objects: objs,
		Outcome: r.Outcome, Statement: r.Statement})
	if err != nil { // strings, numbers and a slice of strings always encode
		panic(err)
	}
	return buf.Bytes() // Encode ends the value with a newline
}
