package fold

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// Roles is the role catalog (topicstore.RoleStore) as folded. A document
// is stored as one or more parts, consecutive messages of one atomic
// batch on the subject <prefix>.a (a header holds at most 64 KiB), the
// first rolling up the document before it, so the subject holds the last
// document only; the last part's stream sequence is the document's
// version (jetstream/catalog publishes them).
type Roles struct {
	Doc []byte // never modified: the next document replaces it
	Seq uint64 // 0: none folded
	// next is the document whose parts are being folded.
	next *rolesParts
}

// rolesParts is a document being folded, part by part.
type rolesParts struct {
	id   string // the change's id (HRolesID)
	n    int    // its parts
	doc  []byte // the parts folded so far
	have int
}

// RolesPart is the HRolesPart header of part i of n.
func RolesPart(i, n int) string { return strconv.Itoa(i) + "/" + strconv.Itoa(n) }

// applyRoles folds one part of a role catalog document; the last one
// replaces the document before it whole. A part that does not follow the
// parts folded before it (their document's first parts were rolled up by
// a newer one before this fold read them) is skipped: its document is
// replaced already, and the newer one's parts follow.
func (f *State) applyRoles(h nats.Header, seq uint64) error {
	part, err := base64.StdEncoding.DecodeString(h.Get(HRoles))
	if err != nil {
		return fmt.Errorf("role catalog: bad %s header: %w", HRoles, err)
	}
	i, n := 0, 1
	if v := h.Get(HRolesPart); v != "" {
		a, b, _ := strings.Cut(v, "/")
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
		if err != nil || i < 0 || n < 1 || i >= n {
			return fmt.Errorf("role catalog: bad %s header %q", HRolesPart, v)
		}
	}
	id := h.Get(HRolesID)
	if i == 0 {
		f.Roles.next = &rolesParts{id: id, n: n}
	}
	p := f.Roles.next
	if p == nil || p.id != id || p.n != n || p.have != i {
		f.Roles.next = nil
		return nil
	}
	p.doc = append(p.doc, part...)
	p.have++
	if p.have == p.n {
		if p.doc == nil {
			p.doc = []byte{}
		}
		f.Roles.Doc, f.Roles.Seq, f.Roles.next = p.doc, seq, nil
	}
	return nil
}
