//go:build !linux

package natsnode

import "os/exec"

// Outside Linux there is no parent-death signal: a parent killed with SIGKILL
// leaves its nodes running.
func startProcess(cmd *exec.Cmd) error { return cmd.Start() }
