package audit

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Options configure a Log.
type Options struct {
	// Classes are the classes written (DefaultClasses unless told
	// otherwise); denials and failed logins are written whatever they
	// are, even when Classes is empty.
	Classes Classes
	// OnError is told of a write or reopen that failed (the line is
	// dropped); nil: nothing is told.
	OnError func(error)
	// Stderr is where "-" writes (tests); nil: os.Stderr.
	Stderr io.Writer
}

// Log is an open audit log. Its methods are safe for concurrent use.
type Log struct {
	path    string // "-" for stderr
	classes Classes
	onError func(error)

	mu sync.Mutex
	w  io.Writer // f, or stderr; nil once closed
	f  *os.File  // nil for stderr, or once closed
}

// stderrPath is the path that means stderr.
const stderrPath = "-"

// Open opens the audit log at path for appending, creating it (mode
// 0600: it names who did what) if it does not exist; path "-" is stderr.
func Open(path string, opts Options) (*Log, error) {
	l := &Log{path: path, classes: opts.Classes, onError: opts.OnError}
	if path == stderrPath {
		l.w = opts.Stderr
		if l.w == nil {
			l.w = os.Stderr
		}
		return l, nil
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	l.f, l.w = f, f
	return l, nil
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return f, nil
}

// Wants reports whether a record of class c with outcome would be
// written: callers skip building what only the line needs (the
// statement's text) when it would not.
func (l *Log) Wants(c Class, outcome string) bool { return Logged(l.classes, c, outcome) }

// Write writes r as one line if its class is enabled or it is a denial
// or a failed login. The line is written (to the OS) before Write
// returns.
func (l *Log) Write(r *Record) {
	if !r.Logged(l.classes) {
		return
	}
	b := r.AppendJSON(nil) // outside the lock: sessions only queue for the write
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return // closed
	}
	if _, err := l.w.Write(b); err != nil {
		l.report(err)
	}
}

// Reopen opens the log's path again and writes there from now on, closing
// the file it wrote to: after logrotate moved the file away, the next
// lines go to a new file at the path. For stderr it does nothing. When
// the path cannot be opened the old file stays and the error is
// returned (and told to OnError).
func (l *Log) Reopen() error {
	if l.path == stderrPath {
		return nil
	}
	f, err := openFile(l.path)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.report(err)
		return err
	}
	if l.w == nil { // closed meanwhile
		return f.Close()
	}
	old := l.f
	l.f, l.w = f, f
	return old.Close()
}

// Close closes the log's file; later Writes do nothing.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = nil
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// report tells OnError of err (with l.mu held).
func (l *Log) report(err error) {
	if l.onError != nil {
		l.onError(fmt.Errorf("audit log %s: %w", l.path, err))
	}
}
