package natsnode

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// BinaryEnv names the environment variable that, when set, points at a
// nats-server binary to use instead of the module's.
const BinaryEnv = "TG_NATS_SERVER"

var binary struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the nats-server binary the nodes run: $TG_NATS_SERVER
// when set, otherwise the one built from the version go.mod pins through its
// tool directive (`go tool -n nats-server` builds it once into the Go build
// cache, keyed by its sources, and prints its path). The answer is computed
// once per process. The go command must run inside the topicgate module, so a
// command using this runs from the checkout (tests always do).
func Binary() (string, error) {
	binary.once.Do(func() {
		binary.path, binary.err = findBinary()
	})
	return binary.path, binary.err
}

func findBinary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("natsnode: $%s: %w", BinaryEnv, err)
		}
		return p, nil
	}
	var stderr bytes.Buffer
	cmd := exec.Command("go", "tool", "-n", "nats-server")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("natsnode: building nats-server from the module (go tool -n nats-server; run inside the topicgate checkout, or set $%s): %w: %s",
			BinaryEnv, err, strings.TrimSpace(stderr.String()))
	}
	p := strings.TrimSpace(string(out))
	if p == "" {
		return "", fmt.Errorf("natsnode: go tool -n nats-server printed no path")
	}
	return p, nil
}
