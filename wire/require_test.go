package wire

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A minimal stand-in for testify's require, older than testify's use in
// this module (wire/pgvalue's tests use testify itself); wire's tests keep
// it.
type requireT struct{}

var require requireT

func fail(t testing.TB, msgs []any, format string, args ...any) {
	t.Helper()
	m := fmt.Sprintf(format, args...)
	if len(msgs) > 0 {
		m += ": " + fmt.Sprint(msgs...)
	}
	t.Fatal(m)
}

func (requireT) NoError(t testing.TB, err error, msgs ...any) {
	t.Helper()
	if err != nil {
		fail(t, msgs, "unexpected error: %v", err)
	}
}

func (requireT) Error(t testing.TB, err error, msgs ...any) {
	t.Helper()
	if err == nil {
		fail(t, msgs, "expected an error")
	}
}

func (requireT) ErrorIs(t testing.TB, err, target error, msgs ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		fail(t, msgs, "error %v is not %v", err, target)
	}
}

func (requireT) ErrorAs(t testing.TB, err error, target any, msgs ...any) {
	t.Helper()
	if !errors.As(err, target) {
		fail(t, msgs, "error %v (%T) is not %T", err, err, target)
	}
}

func (requireT) ErrorContains(t testing.TB, err error, s string, msgs ...any) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), s) {
		fail(t, msgs, "error %v does not contain %q", err, s)
	}
}

func (requireT) Equal(t testing.TB, want, got any, msgs ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		fail(t, msgs, "not equal:\nwant %#v\ngot  %#v", want, got)
	}
}

func (requireT) True(t testing.TB, b bool, msgs ...any) {
	t.Helper()
	if !b {
		fail(t, msgs, "expected true")
	}
}

func (requireT) Contains(t testing.TB, s, sub string, msgs ...any) {
	t.Helper()
	if !strings.Contains(s, sub) {
		fail(t, msgs, "%q does not contain %q", s, sub)
	}
}

func (requireT) Len(t testing.TB, v any, n int, msgs ...any) {
	t.Helper()
	if l := reflect.ValueOf(v).Len(); l != n {
		fail(t, msgs, "length %d, want %d", l, n)
	}
}

func (requireT) NotZero(t testing.TB, v any, msgs ...any) {
	t.Helper()
	if v == nil || reflect.ValueOf(v).IsZero() {
		fail(t, msgs, "unexpected zero value %#v", v)
	}
}

func (requireT) NotNil(t testing.TB, v any, msgs ...any) {
	t.Helper()
	if v == nil || (reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()) {
		fail(t, msgs, "unexpected nil")
	}
}
