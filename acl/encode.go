package acl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// docVersion is the version of the encoding Encode writes.
const docVersion = 1

// wireDoc is the stored form of a Doc: JSON with a version.
type wireDoc struct {
	Version     int           `json:"v"`
	Roles       []wireRole    `json:"roles,omitempty"`
	Members     []wireMember  `json:"members,omitempty"`
	SchemaOwner string        `json:"schema_owner"`
	SchemaACL   []Item        `json:"schema_acl"`
	Defaults    []wireDefault `json:"defaults,omitempty"`
	NextOID     uint32        `json:"next_oid"`
}

type wireRole struct {
	Name        string `json:"name"`
	OID         uint32 `json:"oid"`
	Superuser   bool   `json:"super,omitempty"`
	CreateRole  bool   `json:"createrole,omitempty"`
	CreateDB    bool   `json:"createdb,omitempty"`
	Inherit     bool   `json:"inherit,omitempty"`
	Login       bool   `json:"login,omitempty"`
	Replication bool   `json:"replication,omitempty"`
	BypassRLS   bool   `json:"bypassrls,omitempty"`
	ConnLimit   int    `json:"connlimit"`
	// ValidUntil is microseconds since the Unix epoch, PostgreSQL's
	// precision; absent is forever.
	ValidUntil *int64 `json:"valid_until,omitempty"`
	Password   string `json:"password,omitempty"`
}

type wireMember struct {
	Role    string `json:"role"`
	Member  string `json:"member"`
	Grantor string `json:"grantor"`
	Admin   bool   `json:"admin,omitempty"`
	Inherit bool   `json:"inherit,omitempty"`
	Set     bool   `json:"set,omitempty"`
}

type wireDefault struct {
	Role string `json:"role"`
	Kind string `json:"kind"`
	ACL  []Item `json:"acl"`
}

// Encode returns d's stored form: JSON with a version field. Decode of it
// gives d back.
func (d *Doc) Encode() []byte {
	w := wireDoc{Version: docVersion, SchemaOwner: d.SchemaOwner, SchemaACL: d.SchemaACL, NextOID: d.NextOID}
	for _, r := range d.Roles {
		wr := wireRole{Name: r.Name, OID: r.OID, Superuser: r.Superuser, CreateRole: r.CreateRole,
			CreateDB: r.CreateDB, Inherit: r.Inherit, Login: r.Login, Replication: r.Replication,
			BypassRLS: r.BypassRLS, ConnLimit: r.ConnLimit, Password: r.Password}
		if !r.ValidUntil.IsZero() {
			us := r.ValidUntil.UnixMicro()
			wr.ValidUntil = &us
		}
		w.Roles = append(w.Roles, wr)
	}
	for _, m := range d.Members {
		w.Members = append(w.Members, wireMember(m))
	}
	for _, def := range d.Defaults {
		w.Defaults = append(w.Defaults, wireDefault{Role: def.Role, Kind: string(rune(def.Kind)), ACL: def.ACL})
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic(fmt.Sprintf("acl: encoding a role catalog: %v", err)) // only plain values: cannot happen
	}
	return b
}

// ErrCorrupt wraps every reason Decode refuses a document.
var ErrCorrupt = errors.New("acl: corrupt role catalog")

// Decode reads a document Encode wrote. A nil or empty b is a fresh Doc
// with PostgreSQL 15's defaults (NewDoc). A document that is not one, of
// an unknown version, or that breaks the Doc's invariants (duplicate
// names or OIDs, a membership, default or ACL entry naming a role that
// does not exist, a role granted to itself, invalid UTF-8) is an error
// wrapping ErrCorrupt; Decode never panics.
func Decode(b []byte) (*Doc, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return NewDoc(), nil
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrCorrupt)
	}
	var w wireDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the document", ErrCorrupt)
	}
	if w.Version != docVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, w.Version, docVersion)
	}
	d := fromWire(&w)
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return d, nil
}

func fromWire(w *wireDoc) *Doc {
	d := &Doc{SchemaOwner: w.SchemaOwner, SchemaACL: w.SchemaACL, NextOID: w.NextOID}
	for _, wr := range w.Roles {
		r := Role{Name: wr.Name, OID: wr.OID, Superuser: wr.Superuser, CreateRole: wr.CreateRole,
			CreateDB: wr.CreateDB, Inherit: wr.Inherit, Login: wr.Login, Replication: wr.Replication,
			BypassRLS: wr.BypassRLS, ConnLimit: wr.ConnLimit, Password: wr.Password}
		if wr.ValidUntil != nil {
			r.ValidUntil = time.UnixMicro(*wr.ValidUntil).UTC()
		}
		d.Roles = append(d.Roles, r)
	}
	for _, m := range w.Members {
		d.Members = append(d.Members, Membership(m))
	}
	for _, wd := range w.Defaults {
		kind := byte(0)
		if len(wd.Kind) == 1 {
			kind = wd.Kind[0]
		}
		d.Defaults = append(d.Defaults, DefaultACL{Role: wd.Role, Kind: kind, ACL: wd.ACL})
	}
	return d
}

// validate checks the invariants Decode promises.
func (d *Doc) validate() error {
	seen := map[string]bool{}
	oids := map[uint32]bool{}
	for _, r := range d.Roles {
		if r.Name == "" || len(r.Name) >= nameDataLen || isPredefined(r.Name) || seen[r.Name] {
			return fmt.Errorf("role %q: bad or duplicate name", r.Name)
		}
		if r.OID == 0 || oids[r.OID] || r.OID != BootstrapOID && r.OID < FirstNormalObjectID {
			return fmt.Errorf("role %q: bad or duplicate OID %d", r.Name, r.OID)
		}
		if r.ConnLimit < -1 {
			return fmt.Errorf("role %q: connection limit %d", r.Name, r.ConnLimit)
		}
		seen[r.Name], oids[r.OID] = true, true
	}
	exists := func(name string) bool { _, ok := d.Role(name); return ok }
	for _, m := range d.Members {
		if !exists(m.Role) || !exists(m.Member) || !exists(m.Grantor) || m.Role == m.Member {
			return fmt.Errorf("membership of %q in %q by %q", m.Member, m.Role, m.Grantor)
		}
	}
	if d.SchemaOwner != "" && !exists(d.SchemaOwner) {
		return fmt.Errorf("schema owner %q", d.SchemaOwner)
	}
	if err := d.validateACL(d.SchemaACL); err != nil {
		return err
	}
	kinds := map[string]bool{}
	for _, def := range d.Defaults {
		key := string(rune(def.Kind)) + def.Role
		if !exists(def.Role) || def.Kind != KindTopic && def.Kind != KindConsumer || kinds[key] {
			return fmt.Errorf("default privileges of %q", def.Role)
		}
		kinds[key] = true
		if err := d.validateACL(def.ACL); err != nil {
			return err
		}
	}
	return nil
}

func (d *Doc) validateACL(list []Item) error {
	for i, it := range list {
		_, okE := d.Role(it.Grantee)
		_, okG := d.Role(it.Grantor)
		if it.Grantee != "" && !okE || !okG || Priv(it.Privs)&^allPrivs != 0 || it.GrantOptions&^it.Privs != 0 {
			return fmt.Errorf("ACL entry %q", FormatItem(it))
		}
		if slices.ContainsFunc(list[:i], func(o Item) bool { return o.Grantee == it.Grantee && o.Grantor == it.Grantor }) {
			return fmt.Errorf("duplicate ACL entry %q", FormatItem(it))
		}
	}
	return nil
}
