package pgcatalog

import (
	"testing"
	"time"

	"topicgate/planner/catalog"
	"topicgate/topicstore"
)

// Every table's rows have the table's columns, and Relation finds every
// relation pg_class lists.
func TestRowsHaveTheirColumns(t *testing.T) {
	topics := []topicstore.TopicInfo{{ID: 7, Config: topicstore.TopicConfig{Name: "orders"},
		Partitions: []topicstore.PartitionInfo{{ID: 0, Messages: 3, Bytes: 30}}}}
	src := Source{Database: "db", User: "u",
		Topics:   func() []topicstore.TopicInfo { return topics },
		Settings: func() []map[string]any { return []map[string]any{{"name": "DateStyle", "setting": "ISO, MDY"}} },
		Cursors: func() []Cursor {
			return []Cursor{{Name: "c", Statement: "DECLARE c CURSOR FOR SELECT 1", Created: time.Unix(0, 0)}}
		}}
	for table, v := range catalog.PgCatalogViews {
		for _, r := range Rows(table, src) {
			if len(r) != len(v.Names) {
				t.Fatalf("%s: a row of %d values, want %d", table, len(r), len(v.Names))
			}
		}
	}
	classes := Rows("pg_class", src)
	if len(classes) < 2 {
		t.Fatalf("pg_class has %d rows", len(classes))
	}
	for _, r := range classes {
		oid := r[0].(int64)
		rel, ok := Relation(topics, oid)
		if !ok || rel.Name != r[1] {
			t.Fatalf("Relation(%d) = %+v, %v; pg_class names %v", oid, rel, ok, r[1])
		}
	}
	if rel, _ := Relation(topics, int64(catalog.OIDFirstTopic)+7); rel.Name != "orders" || rel.Kind != "r" || rel.Bytes != 30 {
		t.Fatalf("the topic's relation: %+v", rel)
	}
	if _, ok := Relation(topics, 1); ok {
		t.Fatal("OID 1 names no relation")
	}
}
