package main

import (
	"encoding/binary"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaMetrics: /metrics counts the Kafka door's requests by API,
// those whose answer carried an error code, those that closed their
// connection, their latencies, and the open connections.
func TestKafkaMetrics(t *testing.T) {
	a := startKafkaServer(t, nil)
	exec(t, connect(t, a), "CREATE TOPIC m")
	srv := httptest.NewServer(a.metricsHandler())
	t.Cleanup(srv.Close)
	before := scrape(t, srv)
	require.Equal(t, 0.0, before[`topicgate_kafka_requests_total{api="Produce"}`])

	cl := kafkaClient(t, a)
	ctx := testCtx(t)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "m", Partition: 0, Value: []byte("x")}).FirstErr())
	missing := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("no_such_topic")
	missing.Topics = append(missing.Topics, mt)
	_, err := missing.RequestWith(ctx, cl)
	require.NoError(t, err)

	r := dialKafka(t, a)
	f := request(kmsg.NewPtrMetadataRequest(), 1, 1)
	binary.BigEndian.PutUint16(f[4:], 9999)
	r.send(f)
	r.closed()

	m := scrape(t, srv)
	require.GreaterOrEqual(t, m[`topicgate_kafka_requests_total{api="Produce"}`], 1.0)
	require.Equal(t, 0.0, m[`topicgate_kafka_request_errors_total{api="Produce"}`])
	require.GreaterOrEqual(t, m[`topicgate_kafka_requests_total{api="ApiVersions"}`], 1.0)
	require.GreaterOrEqual(t, m[`topicgate_kafka_request_errors_total{api="Metadata"}`], 1.0)
	require.Equal(t, 1.0, m[`topicgate_kafka_requests_total{api="unknown"}`])
	require.Equal(t, 1.0, m[`topicgate_kafka_request_errors_total{api="unknown"}`])
	require.Equal(t, 1.0, m["topicgate_kafka_refused_requests_total"])
	require.GreaterOrEqual(t, m["topicgate_kafka_connections"], 1.0)
	require.Equal(t, m[`topicgate_kafka_requests_total{api="Produce"}`], m[`topicgate_kafka_request_duration_seconds_count{api="Produce"}`])
	require.Equal(t, m[`topicgate_kafka_requests_total{api="Produce"}`], m[`topicgate_kafka_request_duration_seconds_bucket{api="Produce",le="+Inf"}`])
	require.Greater(t, m[`topicgate_kafka_request_duration_seconds_sum{api="Produce"}`], 0.0)
}
