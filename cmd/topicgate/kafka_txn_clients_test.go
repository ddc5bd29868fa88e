package main

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnScenarioInputs is how many records the transaction scenarios' jobs
// read and answer.
const txnScenarioInputs = 30

// runTxnScenario fills topic in (two partitions) with the inputs "0".."29",
// creates topic out and runs a client's transactions scenario (in
// testdata/kafka) with TOPICGATE_TOPIC=in, TOPICGATE_OUT=out,
// TOPICGATE_GROUP=group and TOPICGATE_INPUTS; it returns its output lines.
func runTxnScenario(t *testing.T, a *app, in, out, group string, argv ...string) []string {
	t.Helper()
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC "+in+" WITH (min_active_partitions = 2)")
	exec(t, c, "CREATE TOPIC "+out+" WITH (min_active_partitions = 2)")
	var recs []*kgo.Record
	for i := range txnScenarioInputs {
		recs = append(recs, &kgo.Record{Topic: in, Partition: int32(i % 2), Value: []byte(strconv.Itoa(i))})
	}
	require.NoError(t, kafkaClient(t, a).ProduceSync(testCtx(t), recs...).FirstErr())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = kafkaScenarioDir(t)
	cmd.Env = append(os.Environ(), "TOPICGATE_KAFKA="+a.KafkaAddr(), "TOPICGATE_TOPIC="+in, "TOPICGATE_OUT="+out,
		"TOPICGATE_GROUP="+group, "TOPICGATE_INPUTS="+strconv.Itoa(txnScenarioInputs),
		"PYTHONDONTWRITEBYTECODE=1", "LC_ALL=C.UTF-8")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	o, err := cmd.Output()
	require.NoError(t, err, "%v\nstdout:\n%s\nstderr:\n%s", argv, o, stderr.String())
	t.Logf("%v:\n%s", argv, o)
	return strings.Split(strings.TrimSuffix(string(o), "\n"), "\n")
}

// checkTxnScenarioSQL: the output topic holds each input's answer exactly
// once and the fresh producer's record; nothing of the aborted or the
// fenced transaction; the group's position stands past every input.
func checkTxnScenarioSQL(t *testing.T, a *app, in, out, group string) {
	t.Helper()
	c := connect(t, a)
	got := queryText(t, c, "SELECT convert_from(data, 'UTF8') FROM "+out)
	sort.Strings(got)
	var want []string
	for i := range txnScenarioInputs {
		want = append(want, "out-"+strconv.Itoa(i))
	}
	want = append(want, "fresh")
	sort.Strings(want)
	require.Equal(t, want, got, "each input answered once; nothing aborted or fenced")
	require.Equal(t, []string{strconv.Itoa(txnScenarioInputs)}, queryText(t, c,
		fmt.Sprintf("SELECT sum(committed_offset)::text FROM sys.consumers WHERE topic = '%s' AND consumer = '%s'", in, group)))
}

// TestKafkaConfluentPythonTransactions: librdkafka's Python binding runs
// testdata/kafka/confluent_txn.py: an aborted transaction, a
// read-process-write job with send_offsets_to_transaction, and a second
// producer of the same transactional.id fencing the first (librdkafka
// calls it fatal, as against Kafka).
func TestKafkaConfluentPythonTransactions(t *testing.T) {
	requireConfluent(t)
	a := startKafkaServer(t, nil)
	lines := runTxnScenario(t, a, "pyin", "pyout", "pyetl", debianPython, "-E", "-s", "confluent_txn.py")
	// librdkafka reports a staged record's offset as unknown (None in
	// Python) from the -1 the door answers.
	require.Equal(t, []string{"aborted, delivered at offset [None]", "rpw 30 in several transactions", "zombie refused _FENCED fatal=True",
		"fresh committed", "done"}, lines)
	checkTxnScenarioSQL(t, a, "pyin", "pyout", "pyetl")
}

// TestKafkaKafkajsTransactions: kafkajs runs
// testdata/kafka/node/transactions.js, the same scenario; kafkajs 2.2
// predates PRODUCER_FENCED and is told INVALID_PRODUCER_EPOCH, as Kafka
// tells a client of its EndTxn version.
func TestKafkaKafkajsTransactions(t *testing.T) {
	node := requireKafkajs(t)
	a := startKafkaServer(t, nil)
	lines := runTxnScenario(t, a, "jsin", "jsout", "jsetl", node, filepath.Join("node", "transactions.js"))
	// kafkajs reports the batch's base offset as the door answers it: -1.
	require.Equal(t, []string{"aborted, delivered at offset -1", "rpw 30 in several transactions", "zombie refused INVALID_PRODUCER_EPOCH",
		"fresh committed", "done"}, lines)
	checkTxnScenarioSQL(t, a, "jsin", "jsout", "jsetl")
}
