package settings

import (
	"maps"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/wire"
)

// Settings are a session's run-time parameters: their values, their
// scopes inside a transaction block, and what the client was last told of
// them. A Settings belongs to one session and is not safe for concurrent
// use.
type Settings struct {
	// onIdentity is told when "role" or "session_authorization" takes a
	// value (set, or restored by a rollback): the session moves its
	// identity to it.
	onIdentity func(name, value string)
	vals       map[string]string // current value by lower-cased name
	reset      map[string]string // what RESET restores: the startup packet's, else the default
	// sent is the last value of each reported parameter the client got;
	// dirty says a value may have changed since (Changes has work to do).
	sent  map[string]string
	dirty bool
	// Inside a transaction block: the values before it (for ROLLBACK and
	// SET LOCAL) and the session-level values set in it (kept at COMMIT).
	inTxn      bool
	txnBefore  map[string]string
	txnSession map[string]string

	loc *time.Location // TimeZone, for printing timestamptz
	// dateStyle is DateStyle: its zero value, ISO, MDY, prints and reads
	// dates on the fast paths.
	dateStyle   values.DateStyle
	stmtTimeout time.Duration // statement_timeout; 0 = none
	// idleTimeout and idleInTxnTimeout are idle_session_timeout and
	// idle_in_transaction_session_timeout; 0 = none.
	idleTimeout, idleInTxnTimeout time.Duration
	// quiet drops notices (client_min_messages warning or error) and, with
	// quieter, warnings too (error).
	quiet, quieter bool
}

// New returns the settings of a session that logged in with info: the
// defaults, session_authorization its user, then the startup packet's
// parameters (which CheckStartup accepted) applied in PostgreSQL's order;
// those values are what RESET restores.
func New(info wire.SessionInfo) *Settings {
	s := &Settings{vals: map[string]string{}, reset: map[string]string{}, sent: map[string]string{}, loc: time.UTC}
	for k, p := range params {
		s.vals[k] = p.def
	}
	s.vals["session_authorization"] = info.User
	for _, kv := range startupParams(info) {
		k, v := kv[0], kv[1]
		switch k {
		case "user", "database", "replication":
			continue
		}
		if err := s.apply(k, v); err != nil && k == "timezone" {
			// A zone name a driver took from its platform that we do not
			// know: the session runs in UTC rather than refusing the login.
			continue
		}
	}
	for k, v := range s.vals {
		s.reset[k] = v
	}
	return s
}

// OnIdentity sets the hook told when "role" or "session_authorization"
// takes a value, set or restored by a rollback (the session moves its
// identity to it). The session's own state is its own: the settings only
// tell it.
func (s *Settings) OnIdentity(f func(name, value string)) { s.onIdentity = f }

// Get is a parameter's value by any spelling of its name (current_setting).
func (s *Settings) Get(name string) (string, bool) {
	v, ok := s.vals[strings.ToLower(name)]
	return v, ok
}

// Show is SHOW name: the value of a parameter by any spelling, 42704 for
// one the session does not have (an unset placeholder).
func (s *Settings) Show(name string) (string, error) {
	p, err := lookupParam(name)
	if err != nil {
		return "", err
	}
	v, ok := s.Get(p.name)
	if !ok {
		return "", pgerror.Newf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter \"%s\"", name)
	}
	return v, nil
}

// SetInternal sets a read-only parameter the session derives from its own
// state (is_superuser, from the current user): no check, no transaction
// bookkeeping, since what it follows has its own. It is reported when it
// changes, as any reported parameter.
func (s *Settings) SetInternal(name, value string) {
	s.vals[strings.ToLower(name)] = value
	s.dirty = true
}

// apply validates and sets a value without transaction bookkeeping.
func (s *Settings) apply(name, value string) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if p.check != nil {
		given := *p
		given.given = strings.ToLower(name)
		given.current = s.vals[strings.ToLower(p.name)]
		p = &given
		if value, err = p.check(p, value); err != nil {
			return err
		}
	}
	k := strings.ToLower(p.name)
	s.vals[k] = value
	s.dirty = true
	switch k {
	case "timezone":
		s.loc, _ = parseTimeZone(value)
	case "datestyle":
		s.dateStyle, _ = values.ParseDateStyle(value)
	case "statement_timeout":
		s.stmtTimeout = millis(value)
	case "idle_session_timeout":
		s.idleTimeout = millis(value)
	case "idle_in_transaction_session_timeout":
		s.idleInTxnTimeout = millis(value)
	case "client_min_messages":
		s.quiet, s.quieter = value == "warning" || value == "error", value == "error"
	case "role", "session_authorization":
		if s.onIdentity != nil {
			s.onIdentity(k, value)
		}
	}
	return nil
}

// Set is SET [LOCAL] name = value (and set_config): 42704 for an unknown
// name, 55P02 for a read-only parameter, 22023 or 0A000 for a value
// refused. A SET LOCAL outside a transaction block
// does nothing (the caller warns).
func (s *Settings) Set(name, value string, local bool) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if p.readOnly {
		return pgerror.Newf(pgerror.CodeCantChangeRuntimeParam, "parameter \"%s\" cannot be changed", strings.ToLower(name))
	}
	return s.SetTrusted(name, value, local)
}

// SetTrusted is Set without the read-only check: for the parameters only
// the session itself changes (role and session_authorization, once authz
// allowed the change), which SET and set_config may not.
func (s *Settings) SetTrusted(name, value string, local bool) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if local && !s.inTxn {
		if p.check != nil {
			_, err = p.check(p, value)
		}
		return err
	}
	k := strings.ToLower(p.name)
	before, had := s.vals[k]
	if err := s.apply(name, value); err != nil {
		return err
	}
	if s.inTxn {
		if s.txnBefore == nil {
			s.txnBefore = map[string]string{}
		}
		if s.txnSession == nil {
			s.txnSession = map[string]string{}
		}
		if _, ok := s.txnBefore[k]; !ok {
			if !had {
				before = "\x00" // did not exist before the block
			}
			s.txnBefore[k] = before
		}
		if !local {
			s.txnSession[k] = s.vals[k]
		}
	}
	return nil
}

// Reset is RESET name: back to the session's startup value.
func (s *Settings) Reset(name string, local bool) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if p.readOnly {
		return pgerror.Newf(pgerror.CodeCantChangeRuntimeParam, "parameter \"%s\" cannot be changed", p.name)
	}
	k := strings.ToLower(p.name)
	v, ok := s.reset[k]
	if !ok {
		v = p.def
	}
	return s.Set(k, v, local)
}

// ResetAll is RESET ALL.
func (s *Settings) ResetAll() {
	for k := range s.vals {
		if p, err := lookupParam(k); err == nil && !p.readOnly {
			_ = s.Reset(k, false)
		}
	}
}

// Snapshot is what ROLLBACK TO SAVEPOINT restores: the values and
// the block's session-level SETs as they were.
type Snapshot struct{ vals, session map[string]string }

// Snapshot is taken at SAVEPOINT.
func (s *Settings) Snapshot() Snapshot {
	return Snapshot{maps.Clone(s.vals), maps.Clone(s.txnSession)}
}

// Restore is ROLLBACK TO SAVEPOINT: the values and the block's
// session-level SETs as snap has them.
func (s *Settings) Restore(snap Snapshot) {
	s.txnSession = maps.Clone(snap.session)
	for k := range s.vals {
		if _, ok := snap.vals[k]; !ok {
			delete(s.vals, k)
		}
	}
	for k, v := range snap.vals {
		if s.vals[k] != v {
			_ = s.apply(k, v)
		}
	}
}

// Begin, Commit and Rollback follow the transaction block: a block's SETs
// are kept at COMMIT, its SET LOCALs and everything at ROLLBACK are
// undone. The executor also brackets an autocommit statement with Begin
// and End, so that set_config() in a statement that fails is undone.
func (s *Settings) Begin() {
	s.inTxn, s.txnBefore, s.txnSession = true, nil, nil // made by the block's first SET
}

func (s *Settings) Commit() { s.End(true) }

func (s *Settings) Rollback() { s.End(false) }

// InTxn says the settings are inside a transaction (Begin without End).
func (s *Settings) InTxn() bool { return s.inTxn }

// End ends the transaction Begin began, kept (commit) or undone.
func (s *Settings) End(commit bool) {
	if !s.inTxn {
		return
	}
	s.inTxn = false
	for k, before := range s.txnBefore {
		v := before
		if sv, ok := s.txnSession[k]; ok && commit {
			v = sv
		}
		if v == "\x00" {
			delete(s.vals, k)
			continue
		}
		_ = s.apply(k, v)
	}
	s.txnBefore, s.txnSession = nil, nil
}

// NormalizeParam is values.NormalizeParam for a bound parameter of type
// t; a date or timestamptz in text reads in the session's DateStyle order.
func (s *Settings) NormalizeParam(v any, t values.Type) (any, error) {
	if s.dateStyle.Order != values.MDY && (t == values.TDate || t == values.TTimestamptz) {
		switch x := v.(type) {
		case string:
			return values.ParseTextIn(x, t, s.dateStyle.Order)
		case []byte:
			return values.ParseTextIn(string(x), t, s.dateStyle.Order)
		}
	}
	return values.NormalizeParam(v, t)
}

// Location is TimeZone, the zone timestamptz values print in.
func (s *Settings) Location() *time.Location { return s.loc }

// DateStyle is DateStyle: how dates print and the order they read in.
func (s *Settings) DateStyle() values.DateStyle { return s.dateStyle }

// StatementTimeout is statement_timeout; 0 is none.
func (s *Settings) StatementTimeout() time.Duration { return s.stmtTimeout }

// IdleTimeout is idle_session_timeout; 0 is none.
func (s *Settings) IdleTimeout() time.Duration { return s.idleTimeout }

// IdleInTxnTimeout is idle_in_transaction_session_timeout; 0 is none.
func (s *Settings) IdleInTxnTimeout() time.Duration { return s.idleInTxnTimeout }

// Muted says what client_min_messages keeps from the client: notices
// (at warning or error) and warnings too (at error).
func (s *Settings) Muted() (notices, warnings bool) { return s.quiet, s.quieter }
