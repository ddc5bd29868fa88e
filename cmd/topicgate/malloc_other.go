//go:build !linux || !cgo

package main

// releaseCMemory has nothing to do where glibc's malloc is not the one
// Pebble uses (malloc_linux.go says why it exists).
func releaseCMemory() {}
