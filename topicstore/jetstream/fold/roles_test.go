package fold

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// rolesMsg is part i of n of change id's document.
func rolesMsg(id string, i, n int, part string) nats.Header {
	h := nats.Header{}
	h.Set(HRoles, base64.StdEncoding.EncodeToString([]byte(part)))
	h.Set(HRolesID, id)
	if n > 1 {
		h.Set(HRolesPart, RolesPart(i, n))
	}
	return h
}

// TestApplyRoles: a document's parts fold into it at its last part, whose
// sequence is the version; a document whose first parts this fold never
// read (a newer one rolled them up) is skipped for the newer one; a bad
// header is an error.
func TestApplyRoles(t *testing.T) {
	var subj Subjects = "tg"
	f := New(subj, time.Now, nil)
	apply := func(h nats.Header, seq uint64) {
		t.Helper()
		require.NoError(t, f.Apply(subj.Of(KindRoles), h, seq, time.Time{}))
	}
	apply(rolesMsg("x", 0, 1, "one"), 5)
	require.Equal(t, "one", string(f.Roles.Doc))
	require.Equal(t, uint64(5), f.Roles.Seq)

	apply(rolesMsg("y", 0, 3, "a"), 7)
	apply(rolesMsg("y", 1, 3, "b"), 8)
	require.Equal(t, uint64(5), f.Roles.Seq, "a document is folded at its last part")
	apply(rolesMsg("y", 2, 3, "c"), 9)
	require.Equal(t, "abc", string(f.Roles.Doc))
	require.Equal(t, uint64(9), f.Roles.Seq)

	// z's first part was rolled up before this fold read it: z is
	// skipped, w (which rolled it up) folds.
	apply(rolesMsg("z", 1, 2, "late"), 11)
	apply(rolesMsg("w", 0, 2, "new"), 12)
	apply(rolesMsg("w", 1, 2, "er"), 13)
	require.Equal(t, "newer", string(f.Roles.Doc))
	require.Equal(t, uint64(13), f.Roles.Seq)

	// v's last part was rolled up: u's parts follow, u folds.
	apply(rolesMsg("v", 0, 2, "lost"), 14)
	apply(rolesMsg("u", 0, 1, ""), 16)
	require.Empty(t, f.Roles.Doc)
	require.NotNil(t, f.Roles.Doc, "an empty document is a document")
	require.Equal(t, uint64(16), f.Roles.Seq)

	bad := rolesMsg("t", 0, 1, "x")
	bad.Set(HRoles, "not base64!")
	require.Error(t, f.Apply(subj.Of(KindRoles), bad, 17, time.Time{}))
	bad = rolesMsg("t", 0, 1, "x")
	bad.Set(HRolesPart, "2/2")
	require.Error(t, f.Apply(subj.Of(KindRoles), bad, 18, time.Time{}))
}
