package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"topicgate/audit"
	"topicgate/console"
	"topicgate/kafka"
	"topicgate/wire"
)

// openAudit opens `serve --audit-log` (nil when it is off); a write that
// fails is logged as a warning, and the statement goes on.
func openAudit(cfg config, logger *slog.Logger) (*audit.Log, error) {
	if cfg.AuditLog == "" {
		if cfg.AuditClasses != "" {
			return nil, fmt.Errorf("--audit-classes needs --audit-log")
		}
		return nil, nil
	}
	classes := audit.DefaultClasses
	if cfg.AuditClasses != "" {
		var err error
		if classes, err = audit.ParseClasses(cfg.AuditClasses); err != nil {
			return nil, fmt.Errorf("--audit-classes: %w", err)
		}
	}
	return audit.Open(cfg.AuditLog, audit.Options{Classes: classes,
		OnError: func(err error) { logger.Warn("audit: a line was not written", "err", err) }})
}

// closeAudit closes the audit log, if there is one, once nothing writes to
// it any more.
func closeAudit(l *audit.Log) {
	if l != nil {
		_ = l.Close()
	}
}

// authLine writes one AUTH line of the audit log for a login through any
// door: outcome is the refusal's SQLSTATE, "" for a success.
func authLine(l *audit.Log, user, remote, outcome string, session uint32) {
	if outcome == "" {
		outcome = audit.OK
	}
	l.Write(&audit.Record{Time: time.Now(), Role: user, SessionUser: user, Remote: remote,
		Session: session, Class: audit.Auth, Command: "LOGIN", Outcome: outcome})
}

// auditLogin is wire.Config.OnAuth writing the audit log's AUTH lines:
// every refused login, and the ones that succeed when AUTH is enabled.
func auditLogin(l *audit.Log) func(wire.AuthEvent) {
	return func(ev wire.AuthEvent) { authLine(l, ev.User, ev.Remote, ev.Code, ev.ProcessID) }
}

// auditKafkaLogin is kafka.Config.OnAuth writing a Kafka SASL
// authentication to l as a PostgreSQL login's AUTH line.
func auditKafkaLogin(l *audit.Log) func(kafka.AuthEvent) {
	return func(ev kafka.AuthEvent) { authLine(l, ev.User, ev.Remote, ev.Code, 0) }
}

// auditConsoleLogin is console.Config.OnLogin writing a web console
// login to l as a PostgreSQL login's AUTH line.
func auditConsoleLogin(l *audit.Log) func(console.LoginEvent) {
	return func(ev console.LoginEvent) { authLine(l, ev.User, ev.Remote, ev.Code, 0) }
}

// handleSIGHUP reopens the audit log on SIGHUP: logrotate moves the file
// and sends it, and the next lines go to a new file at the path. Nothing
// else in topicgate listens for SIGHUP; without an audit log it keeps its
// default (it ends the process).
func (a *app) handleSIGHUP() {
	if a.audit == nil {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go a.reopenAuditOnHUP(hup, nil)
}

// reopenAuditOnHUP reopens the audit log for each signal sig delivers
// (SIGHUP: logrotate moved the file), until sig is closed; each reopen's
// result goes to reopened when it is not nil.
func (a *app) reopenAuditOnHUP(sig <-chan os.Signal, reopened chan<- error) {
	for range sig {
		err := a.audit.Reopen()
		if err != nil {
			fmt.Fprintln(os.Stderr, "topicgate: SIGHUP:", err)
		}
		if reopened != nil {
			reopened <- err
		}
	}
}
