package natsnode

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux a node gets SIGKILL when the thread that forked it exits
// (PR_SET_PDEATHSIG), so nodes never outlive a test binary or tg-cluster that
// dies. The signal follows the forking *thread*, not the process, and Go may
// retire threads, so every node is forked by one goroutine locked to its
// thread for the life of the process. Each node also gets its own process
// group, so a Ctrl-C at a terminal reaches only the parent, which then stops
// the nodes in order.

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd, done}
	return <-done
}
