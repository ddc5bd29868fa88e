package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kgoPackage is franz-go's client package, whose own tests
// (KGO_SEEDS names the brokers) TestKafkaKgoSuite runs against the door.
// Its tests import nothing outside the franz-go module and the packages
// kgo itself imports, so go.mod and go.sum already hold all they need:
// `go test` builds them from the module cache at go.mod's version.
const kgoPackage = "github.com/twmb/franz-go/pkg/kgo"

// kgoAllEnv, set to 1, makes TestKafkaKgoSuite run every test of
// kgoPackage, not only the allowlisted ones, and list those that pass
// but are not allowlisted: the way to grow the allowlist.
const kgoAllEnv = "TOPICGATE_KGO_ALL"

// kgoDir is testdata/kafka/kgo: allowlist.txt, the kgo tests that pass
// against the door, and failures.md, why each other one does not.
func kgoDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(kafkaScenarioDir(t), "kgo")
}

// readKgoAllowlist reads allowlist.txt: one test name a line, blank
// lines and # comments ignored.
func readKgoAllowlist(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(kgoDir(t), "allowlist.txt"))
	require.NoError(t, err)
	defer f.Close()
	var names []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		require.Regexp(t, kgoTestName, line, "allowlist.txt: not a test name")
		require.False(t, seen[line], "allowlist.txt names %s twice", line)
		seen[line] = true
		names = append(names, line)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, names)
	return names
}

// kgoResult is one top-level kgo test's outcome: its last action (pass,
// fail, skip; "" when it never finished, as when another test's panic
// ended the binary) and its output, its subtests' included.
type kgoResult struct {
	action string
	out    strings.Builder
}

// testEvent is the part of a `go test -json` event (test2json) read here.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// runKgoTests runs the kgo tests run selects (a -run pattern) against
// addr (a trust door) and scramAddr (a door that requires SASL, where
// the role kgo's password is kgopw) and returns each top-level test's
// result and the output no test claimed (the package's, a panic's).
func runKgoTests(t *testing.T, addr, scramAddr, run string) (map[string]*kgoResult, string) {
	t.Helper()
	// -timeout bounds a test that never ends (TestTxnEtl retries its
	// transactional producer's COORDINATOR_NOT_AVAILABLE forever); the
	// tests listed end in well under a minute. -parallel is pinned
	// rather than GOMAXPROCS (kgo's tests mostly run in parallel), so
	// that the load on the server is the same on every machine: four
	// tests at a time, about 35 seconds on two cores (two take about 55,
	// eight about 28).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, goCommand(t), "test", "-json", "-count=1", "-timeout=4m", "-parallel=4", "-run", run, kgoPackage)
	// The client's logs only when KGO_LOG_LEVEL asks (info, debug).
	cmd.Env = append(append([]string{"KGO_LOG_LEVEL=none"}, os.Environ()...),
		"KGO_SEEDS="+addr,
		// The door is one broker: a topic's replication factor is 1
		// (the store replicates it by itself).
		"KGO_TEST_RF=1",
		// The ETL tests' records (500,000 by default) through one
		// in-process gateway on a 2-core machine: 20,000 keep them to
		// seconds and still span many batches and rebalances.
		"KGO_TEST_RECORDS=20000",
		// TestSCRAMAuth and TestSCRAMAuthBadCredentials authenticate
		// with SCRAM-SHA-256 there.
		"KGO_TEST_SCRAM_SEEDS="+scramAddr,
		"KGO_TEST_SCRAM=kgo:kgopw",
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	require.NoError(t, ctx.Err(), "go test %s did not end:\n%s", kgoPackage, stderr.String())

	results := map[string]*kgoResult{}
	var rest strings.Builder
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var ev testEvent
		if json.Unmarshal(line, &ev) != nil {
			rest.Write(line)
			rest.WriteByte('\n')
			continue
		}
		if ev.Test == "" {
			rest.WriteString(ev.Output)
			continue
		}
		top, _, sub := strings.Cut(ev.Test, "/")
		r := results[top]
		if r == nil {
			r = &kgoResult{}
			results[top] = r
		}
		r.out.WriteString(ev.Output)
		switch ev.Action {
		case "pass", "fail", "skip":
			if !sub {
				r.action = ev.Action
			}
		}
	}
	rest.WriteString(stderr.String())
	if runErr != nil {
		rest.WriteString("go test: " + runErr.Error() + "\n")
	}
	return results, rest.String()
}

// goCommand is the go command's path.
func goCommand(t *testing.T) string {
	t.Helper()
	goBin, err := osexec.LookPath("go")
	if err != nil {
		root := os.Getenv("GOROOT")
		require.NotEmpty(t, root, "the go command is needed to run franz-go's tests: %v", err)
		goBin = filepath.Join(root, "bin", "go")
	}
	return goBin
}

// listKgoTests is the names of kgoPackage's tests (go test -list).
func listKgoTests(t *testing.T) []string {
	t.Helper()
	out, err := osexec.Command(goCommand(t), "test", "-list", "^Test", kgoPackage).CombinedOutput()
	require.NoError(t, err, "go test -list %s:\n%s", kgoPackage, out)
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if kgoTestName.MatchString(line) {
			names = append(names, line)
		}
	}
	require.NotEmpty(t, names, "go test -list %s:\n%s", kgoPackage, out)
	return names
}

// kgoTestName matches a top-level test's name.
var kgoTestName = regexp.MustCompile(`^Test\w*$`)

// failureEntry matches a list item of failures.md that names a test: the
// tests it says why they are not allowlisted.
var failureEntry = regexp.MustCompile("(?m)^- `(Test\\w*)`")

// checkKgoLists: allowlist.txt names only tests kgo has, and failures.md
// gives a reason for exactly the kgo tests allowlist.txt does not name,
// so a franz-go upgrade's new or renamed tests are classified.
func checkKgoLists(t *testing.T, allow []string) {
	t.Helper()
	all := listKgoTests(t)
	md, err := os.ReadFile(filepath.Join(kgoDir(t), "failures.md"))
	require.NoError(t, err)
	explained := map[string]bool{}
	for _, m := range failureEntry.FindAllStringSubmatch(string(md), -1) {
		require.False(t, explained[m[1]], "failures.md lists %s twice", m[1])
		explained[m[1]] = true
	}
	for _, name := range allow {
		require.Contains(t, all, name, "allowlist.txt names a test %s does not have", kgoPackage)
		require.False(t, explained[name], "%s is allowlisted and listed in failures.md", name)
	}
	for _, name := range all {
		if !slices.Contains(allow, name) {
			require.True(t, explained[name], "%s is neither in allowlist.txt nor in failures.md's list", name)
		}
	}
	for name := range explained {
		require.Contains(t, all, name, "failures.md lists a test %s does not have", kgoPackage)
	}
}

// TestKafkaKgoSuite runs franz-go's own kgo tests (go.mod's version,
// from the module cache) against an in-process server's Kafka door, on
// the selected store: every test allowlist.txt names must pass (a skip
// is not a pass). failures.md says why each other test fails or skips.
// With TOPICGATE_KGO_ALL=1 it runs every kgo test and lists the ones
// that pass but are not allowlisted.
func TestKafkaKgoSuite(t *testing.T) {
	allow := readKgoAllowlist(t)
	checkKgoLists(t, allow)
	all := os.Getenv(kgoAllEnv) == "1"
	run := "^(" + strings.Join(allow, "|") + ")$"
	if all {
		run = "."
	}
	a := startKafkaServer(t, nil)
	scramCfg := testConfig(t)
	scramCfg.Auth, scramCfg.Users, scramCfg.KafkaListen = "scram-sha-256", map[string]string{"kgo": "kgopw"}, "127.0.0.1:0"
	scramSrv := startServer(t, scramCfg)
	start := time.Now()
	results, rest := runKgoTests(t, a.KafkaAddr(), scramSrv.KafkaAddr(), run)
	t.Logf("franz-go's kgo tests took %v", time.Since(start).Round(time.Second))

	var failed []string
	for _, name := range allow {
		r := results[name]
		switch {
		case r == nil:
			failed = append(failed, name)
			t.Errorf("%s did not run", name)
		case r.action != "pass":
			failed = append(failed, name)
			t.Errorf("%s: %s\n%s", name, cmp.Or(r.action, "did not finish"), r.out.String())
		}
	}
	if len(failed) > 0 {
		t.Errorf("allowlisted kgo tests that did not pass: %s\noutput outside the tests:\n%s", strings.Join(failed, " "), rest)
	}
	if all {
		var more, other []string
		for name, r := range results {
			if !slices.Contains(allow, name) {
				if r.action == "pass" {
					more = append(more, name)
				} else {
					other = append(other, name+"="+cmp.Or(r.action, "unfinished"))
				}
			}
		}
		sort.Strings(more)
		sort.Strings(other)
		t.Logf("%d kgo tests ran; pass but not allowlisted (%d):\n%s\nnot passing (%d):\n%s",
			len(results), len(more), strings.Join(more, "\n"), len(other), strings.Join(other, "\n"))
	}
}
