package fold

import "testing"

// TestSubjectKind checks Kind against the builders and Tokens: the kind of
// every subject the store writes, "" for a subject of another prefix, and
// no allocation (ownSuperseded runs it on every message of a batch).
func TestSubjectKind(t *testing.T) {
	p := Subjects("tg.s1")
	for _, c := range []struct{ subject, kind string }{
		{p.Data(7, 3), KindData},
		{p.Producer(7, "prod"), KindProducer},
		{p.Position(7, "c", 1), KindPosition},
		{p.Shared(7, "w", 2), KindShared},
		{p.Catalog("t"), KindCatalog},
		{"tg.s10.d.7.3", ""},
		{"tg.s1", ""},
		{"other.d.7.3", ""},
	} {
		if got := p.Kind(c.subject); got != c.kind {
			t.Errorf("Kind(%q) = %q, want %q", c.subject, got, c.kind)
		}
		if c.kind != "" && p.Tokens(c.subject)[0] != c.kind {
			t.Errorf("Tokens(%q)[0] = %q, want %q", c.subject, p.Tokens(c.subject)[0], c.kind)
		}
	}
	s := p.Shared(7, "w", 2)
	if n := testing.AllocsPerRun(100, func() { _ = p.Kind(s) }); n != 0 {
		t.Errorf("Kind allocates %v times", n)
	}
}
