package kproducer

import "testing"

// TestRoundTrip: Parse and Split invert Name and SeqNo, and Parse refuses
// every other spelling.
func TestRoundTrip(t *testing.T) {
	id, part, ok := Parse(Name(4294967297, 3))
	if !ok || id != 4294967297 || part != 3 {
		t.Fatalf("Parse(Name) = %d, %d, %v", id, part, ok)
	}
	for _, bad := range []string{"p1", "kafka/", "kafka/1", "kafka/1/", "kafka/-1/0", "kafka/01/0", "kafka/1/+2", "kafka/1/2/3", "kafka/x/1"} {
		if _, _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	epoch, seq := Split(SeqNo(7, 2147483647))
	if epoch != 7 || seq != 2147483647 {
		t.Fatalf("Split(SeqNo(7, max)) = %d, %d", epoch, seq)
	}
	if SeqNo(1, 0) <= SeqNo(0, 2147483647) {
		t.Fatal("a later epoch must order after every sequence of an earlier one")
	}
}
