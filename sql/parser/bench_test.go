package parser

import (
	"testing"
)

func BenchmarkParseInsert(b *testing.B) {
	q := "INSERT INTO orders (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)"
	for i := 0; i < b.N; i++ {
		if _, err := Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSelectHint(b *testing.B) {
	q := "SELECT partition, offset, data FROM events WITH (CONSUMER = analytics, WAIT = '5s') WHERE offset >= $1 LIMIT 100"
	for i := 0; i < b.N; i++ {
		if _, err := Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCreateTopic(b *testing.B) {
	q := "CREATE TOPIC orders (CONSUMER a, CONSUMER b WITH (important = true)) WITH (min_active_partitions = 4, retention_period = Interval('PT18H'))"
	for i := 0; i < b.N; i++ {
		if _, err := Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}
