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
	go trimLoop()
}

// trims carries releaseCMemory's requests to trimLoop; one pending request
// stands for any number made while a trim ran.
var trims = make(chan struct{}, 1)

// releaseCMemory asks for the C heap's free memory to be handed back to the
// OS, without waiting (Pebble calls it holding its mutex). It is the
// pebblestore's OnRelease.
//
// Why: glibc returns freed memory to the OS only from the top of an arena
// (M_TRIM_THRESHOLD); a freed chunk below a live one stays resident. The
// block cache's values are as large as the blocks, and a block holding one
// record batch is up to megabytes, so at the bench's peak the arenas held
// 152 MB of free chunks of 0.5-6 MB each out of 153 MB (malloc_info), half
// of the server's 300 MB RSS. malloc_trim(0) gives back every free page in
// every arena (madvise), after each flush and table deletion, when Pebble
// has just freed in bulk: the bench's peak fell from 294 to 265 MB with
// no workload slower (ab.sh, three rounds; docs/performance/memory.md).
func releaseCMemory() {
	select {
	case trims <- struct{}{}:
	default:
	}
}

// trimLoop runs for the life of the process: the C heap is the process's.
func trimLoop() {
	for range trims {
		C.malloc_trim(0)
	}
}
