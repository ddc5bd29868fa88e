//go:build !linux

package wire

// peerClosed is Linux-only (POLLRDHUP); elsewhere a disconnect during a
// statement is noticed when the statement next writes to the connection.
func peerClosed(fd uintptr) bool { return false }
