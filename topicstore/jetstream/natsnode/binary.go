package natsnode

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// Binary returns the path of the nats-server binary the nodes run, and
// how it was found: $TG_NATS_SERVER when set; else, inside the topicgate
// checkout, the one built from the version go.mod pins through its tool
// directive (`go tool -n nats-server` builds it once into the Go build
// cache, keyed by its sources, and prints its path); else, from a built
// binary anywhere, that same version built once with `go install` into
// the user's cache directory (topicgate/nats-server-<version>), which
// needs the go command and its module proxy; else a nats-server on the
// PATH. The answer is computed once per process.
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
	if err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			return p, nil
		}
	}
	inModule := err
	if p, err := installed(); err == nil {
		return p, nil
	} else if path, lerr := exec.LookPath("nats-server"); lerr == nil {
		return path, nil
	} else {
		return "", fmt.Errorf("natsnode: no nats-server: not inside the topicgate checkout (go tool -n nats-server: %v: %s), %v, and none on the PATH; set $%s to one (2.12 or newer)",
			inModule, strings.TrimSpace(stderr.String()), err, BinaryEnv)
	}
}

// serverModule is the module nats-server is built from; ServerVersion the
// version go.mod pins (TestServerVersionMatchesGoMod keeps them equal): a
// built binary has no go.mod to ask.
const (
	serverModule  = "github.com/nats-io/nats-server/v2"
	ServerVersion = "v2.15.2"
)

// installed is nats-server of ServerVersion, built once into the user's
// cache directory.
func installed() (string, error) {
	version := ServerVersion
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "topicgate", "nats-server-"+version)
	p := filepath.Join(dir, "nats-server")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	var stderr bytes.Buffer
	cmd := exec.Command("go", "install", serverModule+"@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	cmd.Dir = os.TempDir() // outside any module
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w: %s", serverModule, version, err, strings.TrimSpace(stderr.String()))
	}
	return p, nil
}
