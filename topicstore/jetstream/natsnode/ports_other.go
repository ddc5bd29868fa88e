//go:build !linux

package natsnode

// reservePort reserves nothing where ports are not picked below the
// ephemeral range (see ports_linux.go).
func reservePort(int) bool { return true }
