package pebblestore

import (
	"errors"
	"reflect"
	"testing"
)

// Minimal assertion helpers, older than testify's use in this module;
// the store's tests keep them.

func must(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		t.Fatal(append([]any{"unexpected error:", err}, msg...)...)
	}
}

func mustErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

func eq(t testing.TB, got, want any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v %v", got, want, msg)
	}
}

func check(t testing.TB, cond bool, msg ...any) {
	t.Helper()
	if !cond {
		t.Fatal(msg...)
	}
}
