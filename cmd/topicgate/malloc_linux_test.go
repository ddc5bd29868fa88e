//go:build linux && cgo

package main

import (
	"runtime"
	"testing"
)

// TestTrimLoopAboveOnly: a request trims only while the resident memory it
// reads is above trimAbove, and the loop ends when its requests do.
func TestTrimLoopAboveOnly(t *testing.T) {
	reqs := make(chan struct{})
	resident := []uint64{trimAbove / 2, trimAbove, trimAbove + 1, 0, 2 * trimAbove}
	var trimmedAt []int
	i := -1
	done := make(chan struct{})
	go func() {
		trimLoop(reqs, func() uint64 { i++; return resident[i] }, func() { trimmedAt = append(trimmedAt, i) })
		close(done)
	}()
	for range resident {
		reqs <- struct{}{}
	}
	close(reqs)
	<-done
	if want := []int{2, 4}; len(trimmedAt) != len(want) || trimmedAt[0] != want[0] || trimmedAt[1] != want[1] {
		t.Fatalf("trimmed at requests %v, want %v", trimmedAt, want)
	}
}

// TestResidentBytes: the process's resident memory reads as at least what
// a live allocation the test has touched holds, and below its address
// space.
func TestResidentBytes(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := range buf {
		if i%4096 == 0 {
			buf[i] = 1
		}
	}
	r := residentBytes()
	if r < uint64(len(buf)) || r > 1<<40 {
		t.Fatalf("residentBytes() = %d with %d bytes touched", r, len(buf))
	}
	runtime.KeepAlive(buf)
}
