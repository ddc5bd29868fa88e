package executor

import (
	"strings"

	"topicgate/audit"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/wire"
)

// Auditor is where statements are reported as they end (Options.Auditor;
// package audit's Log is one): nil, no auditing, and a statement pays one
// nil check.
type Auditor interface {
	// Wants reports whether a statement of class c that ended with
	// outcome is logged (its text is formatted only then).
	Wants(c audit.Class, outcome string) bool
	// Write logs r; it returns once the line is written.
	Write(r *audit.Record)
}

// auditing is a statement's audit record while it runs: who ran it, its
// class and objects are taken when it starts (a SET ROLE is logged as the
// role that ran it), the outcome, command and text when it ends.
type auditing struct {
	rec audit.Record
	st  *statement
}

// auditStart begins the portal's audit record at its first Execute.
func (p *portal) auditStart() {
	if p.aud != nil {
		return
	}
	s := p.st.s
	p.aud = &auditing{st: p.st, rec: audit.Record{Time: p.started, Role: s.id.Current, SessionUser: s.id.Session,
		Remote: s.info.RemoteAddr, Session: s.info.ProcessID, Class: auditClass(p.st), Objects: auditObjects(p.st)}}
}

// auditEnd logs the portal's statement when an Execute ended it (done, or
// an error); a deferred INSERT is logged when DeferredTag completes it.
func (p *portal) auditEnd(tag string, done bool, err error) {
	a := p.aud
	switch {
	case a == nil || (!done && err == nil):
		return
	case tag == wire.TagDeferred && err == nil:
		p.st.s.auditDeferred = a
	default:
		p.st.s.auditWrite(a, tag, outcomeOf(err))
	}
	p.aud = nil
}

// auditWrite completes a and writes it: the command (the tag without its
// row counts, else the statement's kind), the outcome and, when the line
// is written, the text.
func (s *Session) auditWrite(a *auditing, tag, outcome string) {
	au := s.eng.opts.Auditor
	if au == nil || !au.Wants(a.rec.Class, outcome) {
		return
	}
	a.rec.Outcome = outcome
	a.rec.Command = commandOf(tag)
	if a.rec.Command == "" {
		a.rec.Command = stmtCommand(a.st)
	}
	a.rec.Statement = a.st.auditText()
	au.Write(&a.rec)
}

// outcomeOf is a statement's outcome as the audit log says it.
func outcomeOf(err error) string {
	if err == nil {
		return audit.OK
	}
	return pgerror.Code(err)
}

// auditText is the statement's text in the log: its syntax tree formatted
// (one statement of a multi-statement query, never the bytes the client
// sent), passwords redacted, parameters as $n. Formatted once.
func (st *statement) auditText() string {
	if st.audText == "" {
		st.audText = sql.Format(sql.RedactPasswords(st.ast))
	}
	return st.audText
}

// commandOf is a command tag without its row counts ("INSERT 0 5" →
// "INSERT").
func commandOf(tag string) string {
	f := strings.Fields(tag)
	for len(f) > 0 && strings.Trim(f[len(f)-1], "0123456789") == "" {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// auditClass is the statement's class, as pgaudit's: READ, WRITE,
// CONSUME (a read as a consumer, shared-consumer actions, UPDATE
// sys.consumers), DDL, ROLE, MISC.
func auditClass(st *statement) audit.Class {
	switch p := st.plan.(type) {
	case *plantree.InsertPlan, *plantree.CopyPlan:
		return audit.Write
	case *plantree.SharedActionPlan, *plantree.SetPositionPlan:
		return audit.Consume
	case *plantree.SelectPlan, *plantree.CopyOutPlan, *plantree.DeclareCursorPlan:
		for _, a := range st.accesses {
			if a.Consumer != "" {
				return audit.Consume
			}
		}
		return audit.Read
	case *plantree.FetchPlan:
		return audit.Read
	case *plantree.ExplainPlan:
		return auditClass(&statement{plan: p.Inner, accesses: st.accesses, ast: st.ast})
	case *plantree.CreateTopicPlan, *plantree.AlterTopicPlan, *plantree.DropTopicPlan:
		return audit.DDL
	case *plantree.UtilityPlan:
		switch x := p.Stmt.(type) {
		case *sql.AlterOwner:
			return audit.DDL
		case *sql.CreateRole, *sql.AlterRole, *sql.DropRole, *sql.GrantPrivs, *sql.GrantRole,
			*sql.AlterDefaultPrivileges, *sql.ReassignOwned, *sql.DropOwned:
			return audit.Role
		case *sql.SetVar:
			if n := strings.ToLower(x.Name); !x.All && (n == "role" || n == "session_authorization") {
				return audit.Role
			}
		}
	}
	return audit.Misc
}

// auditObjects are the topics and consumers (topic.consumer) the
// statement names: what its plan reads, writes or consumes
// (plantree.Accesses), the topics of DDL and of GRANT and REVOKE. UPDATE
// sys.consumers names none (its consumers are found as it runs), nor
// does FETCH (its cursor's DECLARE named them).
func auditObjects(st *statement) []string {
	var out []string
	for _, a := range st.accesses {
		if a.Consumer != "" {
			out = append(out, a.Topic+"."+a.Consumer)
		} else {
			out = append(out, a.Topic)
		}
	}
	switch p := st.plan.(type) {
	case *plantree.CreateTopicPlan:
		out = append(out, p.Config.Name)
	case *plantree.AlterTopicPlan:
		out = append(out, p.Name)
	case *plantree.DropTopicPlan:
		out = append(out, p.Names...)
	case *plantree.UtilityPlan:
		switch x := p.Stmt.(type) {
		case *sql.AlterOwner:
			out = append(out, x.Topic)
		case *sql.GrantPrivs:
			if x.Kind == sql.ObjTopic {
				out = append(out, x.Objects...)
			}
			for _, c := range x.Consumers {
				out = append(out, c.Topic+"."+c.Consumer)
			}
		}
	}
	return out
}

// stmtCommand is the command of a statement that ended without a tag (it
// failed): its kind.
func stmtCommand(st *statement) string {
	switch x := st.ast.(type) {
	case *sql.Delete:
		return "DELETE"
	case *sql.Update:
		return "UPDATE"
	case *sql.Savepoint:
		return x.Op
	case *sql.SetVar:
		if x.Reset {
			return "RESET"
		}
		return "SET"
	}
	switch p := st.plan.(type) {
	case *plantree.SelectPlan:
		return "SELECT"
	case *plantree.InsertPlan:
		return "INSERT"
	case *plantree.CopyPlan, *plantree.CopyOutPlan:
		return "COPY"
	case *plantree.CreateTopicPlan:
		return "CREATE TOPIC"
	case *plantree.AlterTopicPlan:
		return "ALTER TOPIC"
	case *plantree.DropTopicPlan:
		return "DROP TOPIC"
	case *plantree.ExplainPlan:
		return "EXPLAIN"
	case *plantree.DeclareCursorPlan:
		return "DECLARE CURSOR"
	case *plantree.FetchPlan:
		if p.Fetch.Move {
			return "MOVE"
		}
		return "FETCH"
	case *plantree.UtilityPlan:
		if t := stmtTag(p.Stmt); t != "statement" {
			return t
		}
	}
	// The rest (BEGIN, COMMIT, SHOW, CLOSE, DISCARD, ...): the text's
	// first word.
	w, _, _ := strings.Cut(st.auditText(), " ")
	return strings.ToUpper(w)
}

// auditClosed logs a portal closed before its statement ended (a
// row-limited Execute's rest never asked for): ok, with what was sent.
func (p *portal) auditClosed() {
	if a := p.aud; a != nil {
		p.aud = nil
		p.st.s.auditWrite(a, "", audit.OK)
	}
}

// auditDeferredEnd logs the deferred INSERT DeferredTag completed, or (tag
// "", err nil) one dropped because the connection ended before the
// pipeline's next message: 08006, nothing was written.
func (s *Session) auditDeferredEnd(tag string, err error) {
	a := s.auditDeferred
	s.auditDeferred = nil
	outcome := outcomeOf(err)
	if tag == "" && err == nil {
		outcome = "08006"
	}
	s.auditWrite(a, tag, outcome)
}
