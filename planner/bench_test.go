package planner

import (
	"testing"

	"topicgate/sql/parser"
	"topicgate/topicstore"
)

// benchPlan measures Build of q (parsed once, outside the loop): binding,
// type checking and the tree rules.
func benchPlan(b *testing.B, q string) {
	stmts, err := parser.Parse(q)
	if err != nil {
		b.Fatal(err)
	}
	c := fakeCatalog{"events": {Config: topicstore.TopicConfig{Name: "events", MinActivePartitions: 4,
		Consumers: []topicstore.ConsumerConfig{{Name: "analytics"}}}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Build(c, stmts[0], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanConsumerRead(b *testing.B) {
	benchPlan(b, "SELECT partition, offset, data FROM events WITH (CONSUMER = analytics, WAIT = '5s') LIMIT 100")
}

func BenchmarkPlanInsert(b *testing.B) {
	benchPlan(b, "INSERT INTO events (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)")
}

func BenchmarkPlanScan(b *testing.B) {
	benchPlan(b, "SELECT partition, offset, data FROM events WHERE partition = $1 AND offset >= $2 ORDER BY offset LIMIT 100")
}
