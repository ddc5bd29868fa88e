// Package settings owns a session's run-time parameters as PostgreSQL 15
// has them, for the parameters drivers read or set: the table of
// parameters (their names, defaults, which are reported and which are
// read-only), the validation and parsing of their values, their scopes
// inside a transaction block, the startup packet's parameters, and what
// is reported of them (ParameterStatus, pg_settings' rows, SHOW ALL).
// The executor holds one Settings per session and runs SET, RESET, SHOW,
// set_config and current_setting through it; nothing outside the executor
// imports the package.
//
// Files:
//   - params.go: the parameters' table, and a parameter looked up by any
//     spelling of its name (a name with a dot is a placeholder, as in
//     PostgreSQL).
//   - settings.go: a session's values (Settings) and their scopes: a
//     block's SETs, kept at COMMIT and undone at ROLLBACK, its SET LOCALs,
//     undone when it ends, and a savepoint's Snapshot, which ROLLBACK TO
//     SAVEPOINT restores.
//   - check.go: each parameter's check, which normalises a value as
//     PostgreSQL prints it or refuses it with PostgreSQL's error.
//     timezone.go: TimeZone's values (an IANA zone, a number of hours, an
//     offset) as a *time.Location.
//   - startup.go: the startup packet's parameters and its options
//     parameter's -c settings, checked (CheckStartup) and applied (New) in
//     PostgreSQL's order.
//   - report.go: the reported parameters sent at startup (Startup) and
//     again when they change (Changes), pg_settings' rows and SHOW ALL.
//
// Invariants: every value a Settings holds passed its parameter's check
// and is in its normalised form, except the read-only values that come
// from the session itself (session_authorization's first, its user, and
// SetInternal's); every refusal carries PostgreSQL's
// SQLSTATE (42704 for an unknown name, 22023 for a bad value, 55P02 for a
// read-only parameter, 0A000 for a value topicgate cannot honour rather
// than accept and ignore). The typed values the executor reads on its hot
// paths (Location, DateStyle, the timeouts, Muted) always agree with the
// text values: one function (apply) sets both. A read-only parameter
// changes only through SetTrusted, for role and session_authorization
// once authz allowed the change, or SetInternal, for is_superuser.
// Inside a transaction (Begin to End) the value a parameter had before it
// is kept at the parameter's first change, so that End restores it unless
// the transaction committed with a session-level SET of it; a SET LOCAL
// outside a transaction only checks its value. Changes returns each reported parameter whose value
// differs from what the client was last sent, so the client hears every
// change once, in the session's next ParameterStatus messages.
//
// The package knows nothing of the session besides its startup packet:
// who the session acts as is the executor's, which the settings tell,
// through the hook it sets with OnIdentity, whenever role or
// session_authorization takes a value (set, or restored by a rollback).
// A Settings does no I/O, starts no goroutines and is not safe for
// concurrent use; it imports only sql/pgerror, sql/values and wire's
// types.
package settings
