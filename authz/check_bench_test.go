package authz_test

import (
	"context"
	"testing"

	"topicgate/authz"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore"
)

// BenchmarkCheck is the privilege check of one INSERT by a plain role
// that owns its topic (what the bench's user does under ab-grants.sh),
// and by one that holds a grant through a group.
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	st, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	a := authz.New(st, authz.Options{Auth: "trust"})
	admin, _, _ := a.Admit("admin")
	out := nopOutput{}
	for _, q := range []sql.Stmt{
		&sql.CreateRole{Name: "owner", Options: sql.RoleOptions{Login: ptr(true)}},
		&sql.CreateRole{Name: "member", Options: sql.RoleOptions{Login: ptr(true)}},
		&sql.CreateRole{Name: "writers"},
		&sql.GrantRole{Roles: []string{"writers"}, Members: []sql.RoleSpec{{Name: "member"}}},
	} {
		if _, _, err := a.Exec(ctx, admin, q, out); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", Owner: "owner"}); err != nil {
		b.Fatal(err)
	}
	if _, _, err := a.Exec(ctx, admin, &sql.GrantPrivs{Privs: []sql.Privilege{{Name: "INSERT"}}, Objects: []string{"t"},
		Grantees: []sql.RoleSpec{{Name: "writers"}}}, out); err != nil {
		b.Fatal(err)
	}
	accs := []plantree.Access{{Topic: "t", Insert: true, InsertCols: 1 << plantree.ColData}}
	for _, role := range []string{"owner", "member"} {
		id, _, err := a.Admit(role)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(role, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Check(ctx, id, accs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type nopOutput struct{}

func (nopOutput) Notice(code, msg string)  {}
func (nopOutput) Warning(code, msg string) {}

func ptr[T any](v T) *T { return &v }
