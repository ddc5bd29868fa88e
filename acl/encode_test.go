package acl

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func sampleDoc(t *testing.T) *Doc {
	d := newTestDoc(t, "app", "weird name", "cr")
	r := d.mustRole(t, "app")
	r.Login, r.ConnLimit, r.Password = true, 5, MD5Verifier("app", "secret")
	r.ValidUntil = time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	d.mustRole(t, "cr").CreateRole = true
	must(t, d.GrantRole("app", "weird name", "postgres", true, false, true))
	d.CreatedBy("cr", "app")
	d.AlterDefaults("app", KindTopic, true, "weird name", Select, true)
	d.AlterDefaults("app", KindConsumer, false, "app", Usage, false)
	d.SchemaACL = Grant(d.SchemaACL, "app", "pg_database_owner", Create, false)
	return d
}

func TestEncodeDecode(t *testing.T) {
	fresh, err := Decode(nil)
	must(t, err)
	if !reflect.DeepEqual(fresh, NewDoc()) || fresh.NextOID != 16384 || fresh.SchemaOwner != "pg_database_owner" {
		t.Fatalf("Decode(nil) = %+v", fresh)
	}
	for _, d := range []*Doc{NewDoc(), sampleDoc(t)} {
		got, err := Decode(d.Encode())
		must(t, err)
		if !reflect.DeepEqual(got, d) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, d)
		}
		c := d.Clone()
		if !reflect.DeepEqual(c, d) {
			t.Error("Clone differs")
		}
		if len(c.Defaults) > 0 {
			c.Defaults[0].ACL[0].Privs = 0
			c.SchemaACL[0].Privs = 0
			if reflect.DeepEqual(c, d) {
				t.Error("Clone shares its slices")
			}
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := string(sampleDoc(t).Encode())
	for _, b := range []string{
		"{", "null", "[]", `{"v":2}`, `{"v":1,"x":1}`, `{"v":1} {}`, "\xff",
		`{"v":1,"roles":[{"name":"a","oid":16384},{"name":"a","oid":16385}]}`,
		`{"v":1,"roles":[{"name":"a","oid":16384},{"name":"b","oid":16384}]}`,
		`{"v":1,"roles":[{"name":"a","oid":5}]}`,
		`{"v":1,"roles":[{"name":"pg_monitor","oid":16384}]}`,
		`{"v":1,"roles":[{"name":"","oid":16384}]}`,
		`{"v":1,"roles":[{"name":"a","oid":16384,"connlimit":-2}]}`,
		`{"v":1,"roles":[{"name":"a","oid":16384}],"members":[{"role":"a","member":"b","grantor":"a"}]}`,
		`{"v":1,"roles":[{"name":"a","oid":16384}],"members":[{"role":"a","member":"a","grantor":"a"}]}`,
		`{"v":1,"schema_owner":"ghost"}`,
		`{"v":1,"schema_acl":[{"e":"ghost","o":"pg_monitor","p":1}]}`,
		`{"v":1,"schema_acl":[{"o":"pg_monitor","p":1,"g":2}]}`,
		`{"v":1,"schema_acl":[{"o":"pg_monitor","p":1},{"o":"pg_monitor","p":2}]}`,
		`{"v":1,"schema_acl":[{"o":"pg_monitor","p":65536}]}`,
		`{"v":1,"roles":[{"name":"a","oid":16384}],"defaults":[{"role":"a","kind":"x","acl":[]}]}`,
		`{"v":1,"roles":[{"name":"a","oid":16384}],"defaults":[{"role":"a","kind":"r","acl":[]},{"role":"a","kind":"r","acl":[]}]}`,
		good[:len(good)/2],
	} {
		if d, err := Decode([]byte(b)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(%q) = %+v, %v; want ErrCorrupt", b, d, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(NewDoc().Encode())
	f.Add([]byte(`{"v":1,"roles":[{"name":"a","oid":16384,"valid_until":-9223372036854775808}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(d.Encode())
		if err != nil {
			t.Fatalf("Decode(Encode(d)): %v", err)
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, d)
		}
	})
}

func FuzzParseItem(f *testing.F) {
	for _, s := range []string{"app=ar*/postgres", `"weird name"=r/"a""b"`, "=r/postgres", "group app=r/x", "app=r", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		it, err := ParseItem(s)
		if err != nil || it.Grantor == "" {
			return
		}
		text := FormatItem(it)
		back, err := ParseItem(text)
		if err != nil || back != it {
			t.Fatalf("ParseItem(%q) = %+v; FormatItem = %q; again %+v, %v", s, it, text, back, err)
		}
		if FormatItem(back) != text {
			t.Fatalf("FormatItem is not stable for %q", s)
		}
	})
}
