package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestShowCreateTopicRoundTrip: the statement SHOW CREATE TOPIC prints
// recreates the topic: run under another name, it makes a topic whose
// every option (sys.topics) and every consumer's (sys.consumer_options)
// are the original's, for topics that set each option there is.
func TestShowCreateTopicRoundTrip(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	topics := map[string]string{
		"plain": "CREATE TOPIC plain",
		"opts": `CREATE TOPIC opts WITH (min_active_partitions = 3, max_active_partitions = 9,
			retention_period = Interval('P1DT2H3M4.5S'), retention_storage_mb = 512, supported_codecs = 'raw,gzip,zstd',
			partition_write_speed_bytes_per_second = 1048576, partition_write_burst_bytes = 2097152,
			metering_mode = 'request_units', producer_inactivity_period = Interval('P3D'))`,
		"auto": `CREATE TOPIC auto WITH (min_active_partitions = 2, max_active_partitions = 8,
			auto_partitioning_strategy = 'scale_up', auto_partitioning_up_utilization_percent = 80,
			auto_partitioning_down_utilization_percent = 20, auto_partitioning_stabilization_window = Interval('PT90S'))`,
		"Mixed Case": `CREATE TOPIC "Mixed Case" (CONSUMER "with", CONSUMER c2 WITH (important = true,
			read_from = Datetime('2026-01-02T03:04:05.123456Z'), supported_codecs = 'raw'),
			CONSUMER c3 WITH (availability_period = Interval('PT10M')))`,
		"queue": `CREATE TOPIC queue (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT45S'),
			max_processing_attempts = 3, dead_letter_policy = 'move', dead_letter_queue = 'queue''s dlq',
			keep_messages_order = true, receive_message_delay = Interval('PT0.25S')), CONSUMER d WITH (type = 'shared',
			dead_letter_policy = 'delete'))`,
	}
	for _, ddl := range topics {
		exec(t, c, ddl)
	}
	for name := range topics {
		var got, stmt string
		require.NoError(t, c.QueryRow(ctx, "SHOW CREATE TOPIC "+pgx.Identifier{name}.Sanitize()).Scan(&got, &stmt))
		require.Equal(t, name, got)
		prefix := "CREATE TOPIC " + ddlName(name)
		require.True(t, strings.HasPrefix(stmt, prefix), stmt)
		copyName := "copy_" + strings.ReplaceAll(strings.ToLower(name), " ", "_")
		exec(t, c, "CREATE TOPIC "+copyName+stmt[len(prefix):])
		require.Equal(t, topicOptionRow(t, c, name), topicOptionRow(t, c, copyName), "%s: %s", name, stmt)
		require.Equal(t, consumerOptionRows(t, c, name), consumerOptionRows(t, c, copyName), "%s: %s", name, stmt)
		t.Logf("%s", stmt)
	}
	_, err := c.Exec(ctx, "SHOW CREATE TOPIC nope")
	require.Equal(t, "42P01", pgCode(err))
}

// ddlName is how SHOW CREATE TOPIC writes the test's names.
func ddlName(name string) string {
	if name == "Mixed Case" {
		return `"Mixed Case"`
	}
	return name
}

// topicOptionRow is sys.topics' row of topic but for its name, creation
// time and contents.
func topicOptionRow(t *testing.T, c *pgx.Conn, topic string) string {
	t.Helper()
	rows := queryText(t, c, `SELECT partitions, active_partitions, min_active_partitions, max_active_partitions,
		retention_period, retention_storage_mb, supported_codecs, partition_write_speed_bytes_per_second,
		auto_partitioning_strategy, consumers, partition_write_burst_bytes, metering_mode,
		auto_partitioning_up_utilization_percent, auto_partitioning_down_utilization_percent,
		auto_partitioning_stabilization_window, producer_inactivity_period FROM sys.topics WHERE topic = $1`, topic)
	require.Len(t, rows, 1, topic)
	return rows[0]
}

// consumerOptionRows is sys.consumer_options' rows of topic but for the
// topic's name.
func consumerOptionRows(t *testing.T, c *pgx.Conn, topic string) string {
	t.Helper()
	rows := queryText(t, c, `SELECT consumer, type, important, read_from, availability_period, supported_codecs,
		default_processing_timeout, max_processing_attempts, dead_letter_policy, dead_letter_queue,
		keep_messages_order, receive_message_delay FROM sys.consumer_options WHERE topic = $1 ORDER BY consumer`, topic)
	return fmt.Sprint(rows)
}
