package acl

import (
	"errors"
	"testing"
)

// aclStep is one GRANT or REVOKE of a scenario and relacl after it, as
// PostgreSQL 15.18 printed it after the same statement ("" when the
// statement failed with "dependent privileges exist").
type aclStep struct {
	grant            bool
	grantee, grantor string
	privs            Priv
	option, cascade  bool
	want             string
}

// runPure runs steps with Grant and Revoke from list.
func runPure(t *testing.T, name string, list []Item, steps []aclStep) []Item {
	t.Helper()
	for i, s := range steps {
		before := FormatACL(list)
		if s.grant {
			list = Grant(list, s.grantee, s.grantor, s.privs, s.option)
		} else {
			var err error
			var out []Item
			out, _, err = Revoke(list, s.grantee, s.grantor, s.privs, s.option, s.cascade)
			if s.want == "" {
				if !errors.Is(err, ErrDependentPrivileges) {
					t.Fatalf("%s step %d: err %v, want dependent privileges", name, i, err)
				}
				if FormatACL(out) != before {
					t.Fatalf("%s step %d: a refused revoke changed the list to %s", name, i, FormatACL(out))
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s step %d: %v", name, i, err)
			}
			list = out
		}
		if got := FormatACL(list); got != s.want {
			t.Fatalf("%s step %d:\n got %s\nwant %s", name, i, got, s.want)
		}
	}
	return list
}

// The scenarios of owner o, as a PostgreSQL session ran them with SET ROLE
// o, v1, v2 (the grantor is who ran the statement).
func TestGrantRevokeAgainstPostgres(t *testing.T) {
	own := Default("o", TopicPrivs)
	// A: a chain o -> v1 -> v2 -> v3 of SELECT with grant option.
	runPure(t, "A", own, []aclStep{
		{true, "v1", "o", Select | Insert, true, false, "{o=arwdDxt/o,v1=a*r*/o}"},
		{true, "v2", "v1", Select, true, false, "{o=arwdDxt/o,v1=a*r*/o,v2=r*/v1}"},
		{true, "v3", "v2", Select, false, false, "{o=arwdDxt/o,v1=a*r*/o,v2=r*/v1,v3=r/v2}"},
		{false, "v1", "o", Select, true, false, ""},
		{false, "v1", "o", Select, true, true, "{o=arwdDxt/o,v1=a*r/o}"},
		{true, "v1", "o", Select, true, false, "{o=arwdDxt/o,v1=a*r*/o}"},
		{true, "v1", "o", Update, false, false, "{o=arwdDxt/o,v1=a*r*w/o}"},
		{false, "v1", "o", Select | Update, false, false, "{o=arwdDxt/o,v1=a*/o}"},
		{false, "v2", "o", Delete, false, false, "{o=arwdDxt/o,v1=a*/o}"},
	})
	// B: v2 holds the grant option from o and from v1.
	runPure(t, "B", own, []aclStep{
		{true, "v1", "o", Select, true, false, "{o=arwdDxt/o,v1=r*/o}"},
		{true, "v2", "o", Select, true, false, "{o=arwdDxt/o,v1=r*/o,v2=r*/o}"},
		{true, "v2", "v1", Select, true, false, "{o=arwdDxt/o,v1=r*/o,v2=r*/o,v2=r*/v1}"},
		{true, "v3", "v2", Select, false, false, "{o=arwdDxt/o,v1=r*/o,v2=r*/o,v2=r*/v1,v3=r/v2}"},
		{false, "v1", "o", Select, false, true, "{o=arwdDxt/o,v2=r*/o,v3=r/v2}"},
		{false, "v2", "o", Select, false, false, ""},
		{false, "v2", "o", Select, false, true, "{o=arwdDxt/o}"},
	})
	// D: the owner revokes from itself, and grants back.
	runPure(t, "D", own, []aclStep{
		{false, "o", "o", Select, false, false, "{o=awdDxt/o}"},
		{true, "o", "o", Select, false, false, "{o=arwdDxt/o}"},
	})
}

func TestRevokeReports(t *testing.T) {
	list := []Item{{Grantee: "v1", Grantor: "o", Privs: uint32(Select | Insert), GrantOptions: uint32(Select)}}
	_, revoked, err := Revoke(list, "v1", "o", Select|Update, false, false)
	if err != nil || revoked != Select {
		t.Errorf("revoked %v, %v; want SELECT", revoked.Names(), err)
	}
	out, revoked, _ := Revoke(list, "v1", "o", Insert|Select, true, false)
	if revoked != Select || FormatACL(out) != "{v1=ar/o}" {
		t.Errorf("grant option for: revoked %v, list %s", revoked.Names(), FormatACL(out))
	}
	_, revoked, _ = Revoke(list, "v2", "o", Select, false, false)
	if revoked != 0 {
		t.Errorf("nothing to revoke, revoked %v", revoked.Names())
	}
	if FormatACL(list) != "{v1=ar*/o}" {
		t.Errorf("Revoke changed its input: %s", FormatACL(list))
	}
}

// F: ALTER TABLE t4 OWNER TO v3, then TO v1 (PostgreSQL's aclnewowner).
func TestReplaceRoleAgainstPostgres(t *testing.T) {
	list := []Item{
		{Grantee: "o", Grantor: "o", Privs: uint32(TopicPrivs)},
		{Grantee: "v1", Grantor: "o", Privs: uint32(Select), GrantOptions: uint32(Select)},
		{Grantee: "v2", Grantor: "v1", Privs: uint32(Select), GrantOptions: uint32(Select)},
	}
	list = ReplaceRole(list, "o", "v3")
	if got, want := FormatACL(list), "{v3=arwdDxt/v3,v1=r*/v3,v2=r*/v1}"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	list = ReplaceRole(list, "v3", "v1")
	if got, want := FormatACL(list), "{v1=ar*wdDxt/v1,v2=r*/v1}"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if ReplaceRole(nil, "a", "b") != nil {
		t.Error("ReplaceRole(nil) is not nil")
	}
}

func TestRemoveRoleAndMentions(t *testing.T) {
	list := []Item{
		{Grantee: "o", Grantor: "o", Privs: uint32(TopicPrivs)},
		{Grantee: "v1", Grantor: "o", Privs: uint32(Select), GrantOptions: uint32(Select)},
		{Grantee: "v2", Grantor: "v1", Privs: uint32(Select | Insert), GrantOptions: uint32(Select)},
		{Grantee: "v3", Grantor: "v2", Privs: uint32(Select)},
		{Grantee: "v4", Grantor: "o", Privs: uint32(Update)},
		{Grantor: "o", Privs: uint32(Select)},
	}
	if !Mentions(list, "v1") || !Mentions(list, "v3") || Mentions(list, "v9") || Mentions(list, "") {
		t.Error("Mentions")
	}
	got := FormatACL(RemoveRole(list, "v1"))
	if want := "{o=arwdDxt/o,v4=w/o,=r/o}"; got != want {
		t.Errorf("RemoveRole v1: got %s, want %s", got, want)
	}
	got = FormatACL(RemoveRole(list, "v4"))
	if want := "{o=arwdDxt/o,v1=r*/o,v2=ar*/v1,v3=r/v2,=r/o}"; got != want {
		t.Errorf("RemoveRole v4: got %s, want %s", got, want)
	}
}

func TestDefaultAndEffective(t *testing.T) {
	if got := FormatACL(Default("app", ConsumerPrivs)); got != "{app=U/app}" {
		t.Errorf("Default = %s", got)
	}
	if Effective(nil, "o", TopicPrivs)[0].Grantee != "o" || len(Effective([]Item{}, "o", TopicPrivs)) != 0 {
		t.Error("Effective: nil is the default ACL, empty is empty")
	}
}
