package sequencer

import (
	"reflect"
	"testing"
)

// Minimal assertion helpers, as pebblestore's tests have them.

func must(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		t.Fatal(append([]any{"unexpected error:", err}, msg...)...)
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
