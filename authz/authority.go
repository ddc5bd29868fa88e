package authz

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"topicgate/acl"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
)

// Authority answers for one store. It is safe for concurrent use.
type Authority struct {
	store topicstore.Store
	roles topicstore.RoleStore // nil: the store keeps no roles
	// md5 stores new passwords as md5 hashes (--auth md5 needs them),
	// else as SCRAM-SHA-256 verifiers.
	md5   bool
	trust bool
	now   func() time.Time

	cache atomic.Pointer[cachedDoc]
	// bootName names the bootstrap superuser if a change makes it: the
	// first bootstrap user while Seed runs (before any session), else
	// "postgres" (initdb's usual name).
	bootName string

	mu    sync.Mutex
	conns map[string]int // open sessions per role, for CONNECTION LIMIT
}

type cachedDoc struct {
	ver uint64
	doc *acl.Doc
}

// Options configure an Authority.
type Options struct {
	// Auth is the server's authentication method ("trust", "password",
	// "md5", "scram-sha-256").
	Auth string
	// Clock is the time VALID UNTIL is compared with; nil: time.Now.
	Clock func() time.Time
}

// New returns the Authority of store.
func New(store topicstore.Store, o Options) *Authority {
	a := &Authority{store: store, md5: o.Auth == "md5", trust: o.Auth == "" || o.Auth == "trust",
		now: o.Clock, conns: map[string]int{}}
	a.roles, _ = store.(topicstore.RoleStore)
	if a.now == nil {
		a.now = time.Now
	}
	return a
}

// Doc is the role document as this process sees it now, decoded once per
// version. Callers must not modify it (change works on a copy).
func (a *Authority) Doc() (*acl.Doc, error) {
	if a.roles == nil {
		return acl.Decode(nil)
	}
	raw, ver := a.roles.Roles()
	if c := a.cache.Load(); c != nil && c.ver == ver {
		return c.doc, nil
	}
	d, err := acl.Decode(raw)
	if err != nil {
		return nil, pgerror.Newf(pgerror.CodeDataCorrupted, "the role catalog cannot be read: %v", err)
	}
	a.cache.Store(&cachedDoc{ver: ver, doc: d})
	return d, nil
}

// barrier brings this process's view of the store up to every change
// acknowledged before it (the cluster store), so a decision sees the
// grants in force when the statement began.
func (a *Authority) barrier(ctx context.Context) {
	if b, ok := a.store.(topicstore.ReadBarrier); ok {
		_ = b.Barrier(ctx)
	}
}

// change applies fn to a copy of the current role document and stores the
// result by compare-and-set, reading again and retrying when another
// change came first.
func (a *Authority) change(ctx context.Context, fn func(d *acl.Doc) error) error {
	if a.roles == nil {
		return pgerror.New(pgerror.CodeFeatureNotSupported, "this store keeps no roles")
	}
	for {
		a.barrier(ctx)
		raw, ver := a.roles.Roles()
		d, err := acl.Decode(raw)
		if err != nil {
			return pgerror.Newf(pgerror.CodeDataCorrupted, "the role catalog cannot be read: %v", err)
		}
		if d.Bootstrap() == "" {
			// The first change makes the bootstrap superuser (OID 10) that
			// owns what was created before roles, as initdb does.
			name := a.bootName
			if name == "" {
				name = "postgres"
			}
			if _, err := d.CreateBootstrap(name); err != nil {
				return err
			}
		}
		if err := fn(d); err != nil {
			return err
		}
		_, err = a.roles.SetRoles(ctx, ver, d.Encode())
		if errors.Is(err, topicstore.ErrRolesConflict) {
			continue
		}
		if err != nil {
			return txn.StoreError(err, "")
		}
		return nil
	}
}

// Seed creates each bootstrap user (--user, --users-file) that is not a
// role yet, as a superuser that may log in with its password; one that
// exists is left as SQL made it.
func (a *Authority) Seed(ctx context.Context, users map[string]string) error {
	if a.roles == nil || len(users) == 0 {
		return nil
	}
	d, err := a.Doc()
	if err != nil {
		return err
	}
	missing := false
	for u := range users {
		if _, ok := d.Role(u); !ok {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	names := slices.Sorted(maps.Keys(users))
	a.bootName = names[0]
	defer func() { a.bootName = "" }()
	return a.change(ctx, func(d *acl.Doc) error {
		for _, u := range names {
			stored, err := acl.StoredPassword(u, users[u], a.md5)
			if err != nil {
				return err
			}
			if r, ok := d.Role(u); ok {
				if r.OID == acl.BootstrapOID && r.Password == "" {
					r.Password = stored // made by change() just now
				}
				continue
			}
			if _, err := d.CreateRole(acl.Role{Name: u, Superuser: true, CreateRole: true, CreateDB: true,
				Inherit: true, Login: true, ConnLimit: -1, Password: stored}); err != nil {
				return err
			}
		}
		return nil
	})
}

// loginBarrierTimeout bounds the read barrier of a login; past it the
// login reads the gateway's view as it is.
const loginBarrierTimeout = 5 * time.Second

// Verifier is what a role's password is checked against at login: its
// stored verifier; ok false when the role does not exist or has none.
func (a *Authority) Verifier(user string) (verifier string, ok bool) {
	// A login sees every role change acknowledged before it, through any
	// gateway (a role just created, a password just changed).
	ctx, cancel := context.WithTimeout(context.Background(), loginBarrierTimeout)
	a.barrier(ctx)
	cancel()
	d, err := a.Doc()
	if err != nil {
		return "", false
	}
	r, ok := d.Role(user)
	if !ok || r.Password == "" {
		return "", false
	}
	if !r.ValidUntil.IsZero() && !a.now().Before(r.ValidUntil) {
		// An expired password fails as a wrong one does (PostgreSQL).
		return "", false
	}
	return r.Password, true
}
