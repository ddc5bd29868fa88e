package main

import (
	"context"
	"fmt"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kcat runs kcat (librdkafka's command-line client, the Debian package
// .ci/run installs) against a's Kafka door with args and stdin, and
// returns its standard output.
func kcat(t *testing.T, a *app, stdin string, args ...string) string {
	t.Helper()
	path, err := osexec.LookPath("kcat")
	require.NoError(t, err, "kcat is not installed (.ci/run installs the Debian package kcat)")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, path, append([]string{"-b", a.KafkaAddr()}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "kcat %v: %s", args, stderr.String())
	return string(out)
}

// TestKafkaKcat: kcat -L lists the topics and their partitions led by
// broker 0; kcat -P with -K, -H and -z snappy produces, and kcat -C -e
// reads the values back in order, as SQL does; SQL's INSERT is read by
// kcat; an idempotent kcat producer (lz4) is a topicgate producer.
func TestKafkaKcat(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC orders WITH (min_active_partitions = 2)")
	exec(t, c, "CREATE TOPIC other")
	meta := kcat(t, a, "", "-L")
	require.Contains(t, meta, fmt.Sprintf("broker 0 at %s", a.KafkaAddr()))
	require.Contains(t, meta, `topic "orders" with 2 partitions:`)
	require.Contains(t, meta, "partition 1, leader 0, replicas: 0, isrs: 0")
	require.Contains(t, meta, `topic "other" with 1 partitions:`)

	kcat(t, a, "acct-17:deposit 100\nacct-18:withdraw 5\n", "-t", "orders", "-p", "1", "-P", "-K:", "-H", "source=web", "-z", "snappy")
	out := kcat(t, a, "", "-C", "-e", "-t", "orders", "-p", "1", "-f", "%p %o %s\n")
	require.Equal(t, "1 0 deposit 100\n1 1 withdraw 5\n", out)
	rows, err := c.Query(context.Background(), "SELECT partition, offset, convert_from(data, 'UTF8') FROM orders ORDER BY offset")
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var p, off int64
		var s string
		require.NoError(t, rows.Scan(&p, &off, &s))
		got = append(got, fmt.Sprintf("%d %d %s", p, off, s))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"1 0 deposit 100", "1 1 withdraw 5"}, got)

	exec(t, c, "INSERT INTO other (data) VALUES ('from sql')")
	require.Equal(t, "0 0 from sql\n", kcat(t, a, "", "-C", "-e", "-t", "other", "-f", "%p %o %s\n"))

	// librdkafka's idempotent producer: InitProducerId, then sequences.
	kcat(t, a, "one\ntwo\n", "-t", "other", "-P", "-X", "enable.idempotence=true", "-z", "lz4")
	require.Equal(t, "0 1 one\n0 2 two\n", kcat(t, a, "", "-C", "-e", "-t", "other", "-o", "1", "-f", "%p %o %s\n"))
	var prod string
	require.NoError(t, c.QueryRow(context.Background(), "SELECT producer_id FROM other WHERE offset = 2").Scan(&prod))
	require.Regexp(t, `^kafka/\d+/0$`, prod)
}

// TestKafkaKcatKeysHeaders: kcat's keys, headers and null values (-Z)
// come back through kcat -C as they were produced.
func TestKafkaKcatKeysHeaders(t *testing.T) {
	a := startKafkaServer(t, nil)
	exec(t, connect(t, a), "CREATE TOPIC keyed")
	kcat(t, a, "acct-17:deposit 100\nacct-18:\n", "-t", "keyed", "-P", "-K:", "-Z", "-H", "source=web", "-H", "source=retry", "-z", "snappy")
	out := kcat(t, a, "", "-C", "-e", "-t", "keyed", "-Z", "-f", "%k|%S|%h\n")
	require.Equal(t, "acct-17|11|source=web,source=retry\nacct-18|-1|source=web,source=retry\n", out)
}

// TestKafkaKcatGroup: kcat -G (librdkafka's balanced consumer) reads a
// topic as a group and commits as it closes: SQL sees the group's
// positions in sys.consumers, and a second kcat -G of the group reads
// only what came after them.
func TestKafkaKcatGroup(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "orders", 2, 6)
	group := []string{"-X", "auto.offset.reset=earliest", "-f", "%s\n", "-G", "billing", "orders"}
	out := kcat(t, a, "", append([]string{"-c", "6"}, group...)...)
	require.ElementsMatch(t, []string{"0", "1", "2", "3", "4", "5"}, strings.Fields(out))
	require.Equal(t, []string{"0 3", "1 3"},
		queryText(t, c, "SELECT partition, committed_offset FROM sys.consumers WHERE topic = 'orders' AND consumer = 'billing' ORDER BY partition"))

	exec(t, c, "INSERT INTO orders (partition, data) VALUES (1, 'six')")
	require.Equal(t, "six\n", kcat(t, a, "", append([]string{"-c", "1"}, group...)...))
}
