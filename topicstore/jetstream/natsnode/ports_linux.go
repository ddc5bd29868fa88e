package natsnode

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// reserved holds the port locks this process took (reservePort), open for
// the process's life: a node that is down keeps its ports against every
// other allocatePorts until it is restarted, and one process starts a few
// hundred clusters at most (nine files each).
var reserved struct {
	sync.Mutex
	files []*os.File
}

// reservePort takes an exclusive flock on a file named for port under the
// temporary directory, so that no other allocatePorts (of this process or
// another test binary of the same `go test ./...`) picks the port while
// the node that owns it is killed and not yet restarted: CI saw a node
// restarted by TestClusterQuorumLost exit with "address already in use".
// It reports false if another holder has the port. Without a usable
// directory it reserves nothing and reports true (the listen test still
// applies).
func reservePort(port int) bool {
	dir := filepath.Join(os.TempDir(), "topicgate-natsnode-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	reserved.Lock()
	reserved.files = append(reserved.files, f)
	reserved.Unlock()
	return true
}
