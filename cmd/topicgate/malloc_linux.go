//go:build linux && cgo

package main

// #include <malloc.h>
// #include <stdlib.h>
//
// // tgArenas runs when the program is loaded, before the Go runtime starts
// // any thread, so that every thread's malloc is bound by it.
// __attribute__((constructor)) static void tgArenas(void) {
// 	if (getenv("MALLOC_ARENA_MAX") == NULL) mallopt(M_ARENA_MAX, 2);
// }
import "C"

import (
	"bytes"
	"os"
	"strconv"
)

// Pebble allocates its block cache and memtables with C malloc (cgo), from
// whichever OS thread the Go scheduler runs it on. glibc gives threads
// their own malloc arenas (up to 8 per core), and freed cache blocks stay
// fragmented in each: a full bench run peaked at 417 MB RSS this way,
// against 337 MB with two arenas (MALLOC_ARENA_MAX=2). Two arenas are
// plenty: the allocations are large and infrequent. MALLOC_ARENA_MAX in
// the environment overrides it. It is set in a C constructor (tgArenas),
// which runs before the Go runtime starts its threads: set from a Go init
// it bound only threads that first called malloc after that init, and
// malloc_info at a bench's peak listed six arenas.
func init() {
	go trimLoop(trims, residentBytes, func() { C.malloc_trim(0) })
}

// trimAbove is the resident memory above which the C heap's free memory
// is handed back to the OS: two thirds of the 300 MB budget of
// docs/performance/memory.md, which the Go heap's limit, the memtables and
// the block cache leave room for.
//
// Why not trim every time: malloc_trim(0) gives back every free page
// (madvise), and the block cache's next blocks are carved from those same
// pages, so each of them faults in again, zeroed by the kernel and then by
// calloc. Trimming after every flush cost about 5% where blocks are read
// (ab.sh over five rounds against this threshold: consume 1.07, rpw 1.06,
// queue 1.01), while the C heap reuses its free chunks well enough that a
// whole bench run without any trim peaked at 245 MB. The measure is the process's resident memory, not
// glibc's free bytes: those count the pages a trim already gave back.
const trimAbove = 200_000_000

// trims carries releaseCMemory's requests to trimLoop; one pending request
// stands for any number made while a trim ran.
var trims = make(chan struct{}, 1)

// releaseCMemory asks for the C heap's free memory to be handed back to the
// OS if the process's resident memory is above trimAbove, without waiting
// (Pebble calls it holding its mutex). It is the pebblestore's OnRelease.
//
// Why: glibc returns freed memory to the OS only from the top of an arena
// (M_TRIM_THRESHOLD); a freed chunk below a live one stays resident. The
// block cache's values are as large as the blocks, and a block holding one
// record batch is up to megabytes, so at the bench's peak the arenas held
// 152 MB of free chunks of 0.5-6 MB each out of 153 MB (malloc_info), half
// of the server's 300 MB RSS. malloc_trim(0) gives back every free page in
// every arena (madvise); it is asked for after each flush and table
// deletion, when Pebble has just freed in bulk.
func releaseCMemory() {
	select {
	case trims <- struct{}{}:
	default:
	}
}

// residentBytes is the process's resident memory (/proc/self/statm's
// second field, in pages), or 0 if it cannot be read.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// trimLoop runs for the life of the process (the C heap is the process's):
// for each request on reqs it calls trim if resident reports more than
// trimAbove.
func trimLoop(reqs <-chan struct{}, resident func() uint64, trim func()) {
	for range reqs {
		if resident() > trimAbove {
			trim()
		}
	}
}
