package main

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kafkaScenarioDir is testdata/kafka, where the scenarios of the Kafka
// clients that are not Go modules live.
func kafkaScenarioDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "testdata", "kafka"))
	require.NoError(t, err)
	return d
}

// requireKafkajs fails the test unless kafkajs (testdata/kafka/node)
// and node are installed, as .ci/run installs them, and returns node.
func requireKafkajs(t *testing.T) string {
	t.Helper()
	_, err := os.Stat(filepath.Join(kafkaScenarioDir(t), "node", "node_modules", "kafkajs", "package.json"))
	require.NoError(t, err, "kafkajs is not installed: .ci/run installs it with `npm ci --prefix testdata/kafka/node`")
	node, err := osexec.LookPath("node")
	require.NoError(t, err, "node is not installed (.ci/run installs Debian's nodejs)")
	return node
}

// requireConfluent fails the test unless Debian's python3-confluent-kafka
// is installed, as .ci/run installs it.
func requireConfluent(t *testing.T) {
	t.Helper()
	out, err := osexec.Command(debianPython, "-c", "import confluent_kafka").CombinedOutput()
	require.NoError(t, err, "python3-confluent-kafka is not installed (.ci/run installs the Debian package): %s", out)
}

// runKafkaScenario creates topic on a, runs the client scenario argv (in
// testdata/kafka) against a's Kafka door with TOPICGATE_KAFKA,
// TOPICGATE_TOPIC and TOPICGATE_GROUP set, and returns its output lines.
// The scenario bounds its own waits; the context is the backstop.
func runKafkaScenario(t *testing.T, a *app, topic, group string, argv ...string) []string {
	t.Helper()
	exec(t, connect(t, a), "CREATE TOPIC "+topic)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = kafkaScenarioDir(t)
	cmd.Env = append(os.Environ(), "TOPICGATE_KAFKA="+a.KafkaAddr(), "TOPICGATE_TOPIC="+topic,
		"TOPICGATE_GROUP="+group, "PYTHONDONTWRITEBYTECODE=1", "LC_ALL=C.UTF-8")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%v\nstdout:\n%s\nstderr:\n%s", argv, out, stderr.String())
	t.Logf("%v:\n%s", argv, out)
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// wantKafkaScenario is what both client scenarios print after their
// version and produced lines: the three records read back as produced
// (hex key, value and headers), the group's first run reading all three,
// its second run nothing, and the group's committed offset.
var wantKafkaScenario = []string{
	"read 0 616363742d3137 6465706f73697420313030 source=776562 same",
	"read 1 616363742d3138 77697468647261772035 source=6261746368,trace=0001feff same",
	"read 2 ff007f 00c328ff empty= same",
	"group first run 3 0,1,2",
	"group second run 0",
	"committed 0:3",
	"done",
}

// checkKafkaScenarioSQL: the scenario's records, read through SQL, carry
// the keys and headers the client produced, and the producer id of an
// idempotent Kafka producer.
func checkKafkaScenarioSQL(t *testing.T, a *app, topic string) {
	t.Helper()
	c := connect(t, a)
	for _, p := range queryText(t, c, "SELECT producer_id FROM "+topic) {
		require.Regexp(t, `^kafka/\d+/0$`, p)
	}
	got := queryText(t, c, `SELECT "offset", encode(key, 'hex'), encode(data, 'hex'), headers::text FROM `+topic+` ORDER BY partition, "offset"`)
	require.Equal(t, []string{
		`0 616363742d3137 6465706f73697420313030 [{"key": "source", "value": "web"}]`,
		`1 616363742d3138 77697468647261772035 [{"key": "source", "value": "batch"}, {"key": "trace", "value": "\\x0001feff"}]`,
		`2 ff007f 00c328ff [{"key": "empty", "value": ""}]`,
	}, got)
}

// TestKafkaKafkajs: kafkajs (npm, testdata/kafka/node, which .ci/run
// installs with npm ci) runs testdata/kafka/node/scenario.js: an
// idempotent producer with keys and headers, a read from the beginning,
// and a consumer group that commits and resumes from its commit.
func TestKafkaKafkajs(t *testing.T) {
	node := requireKafkajs(t)
	a := startKafkaServer(t, nil)
	lines := runKafkaScenario(t, a, "jsorders", "jsbilling", node, filepath.Join("node", "scenario.js"))
	require.Regexp(t, `^version kafkajs 2\.2\.\d+$`, lines[0])
	// kafkajs reports a send's batch by partition and base offset.
	require.Equal(t, "produced 0:0", lines[1])
	require.Equal(t, wantKafkaScenario, lines[2:])
	checkKafkaScenarioSQL(t, a, "jsorders")
}

// TestKafkaConfluentPython: librdkafka's Python binding (Debian's
// python3-confluent-kafka, which .ci/run installs) runs
// testdata/kafka/confluent_scenario.py: an idempotent zstd producer with
// keys and headers, a read from the beginning, and a consumer group that
// commits and resumes from its commit.
func TestKafkaConfluentPython(t *testing.T) {
	requireConfluent(t)
	a := startKafkaServer(t, nil)
	lines := runKafkaScenario(t, a, "pyorders", "pybilling", debianPython, "-E", "-s", "confluent_scenario.py")
	require.Regexp(t, `^version confluent-kafka \S+ librdkafka \S+$`, lines[0])
	// librdkafka reports each record's delivery.
	require.Equal(t, "produced 0:0 0:1 0:2", lines[1])
	require.Equal(t, wantKafkaScenario, lines[2:])
	checkKafkaScenarioSQL(t, a, "pyorders")
}
