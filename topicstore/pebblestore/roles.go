package pebblestore

import (
	"context"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// The role catalog (topicstore.RoleStore): one record, u/roles, holding
// the version and the document, rewritten whole by each change. The store
// keeps both in memory (recoverRoles, at Open); a change runs on the
// committer goroutine like the other DDL, so changes are serialized and
// ordered with commits, and the memory changes only after the synced
// write.

// roleCatalog is the role catalog as stored.
type roleCatalog struct {
	mu      sync.RWMutex // guards doc and version; the committer alone writes them
	doc     []byte       // never modified: a change replaces it
	version uint64       // 0: nothing stored
}

// Roles implements topicstore.RoleStore: the stored document and its
// version (0 and nil when none was stored). The document is shared:
// SetRoles replaces it, never changes it.
func (s *PebbleStore) Roles() ([]byte, uint64) {
	s.roles.mu.RLock()
	defer s.roles.mu.RUnlock()
	if s.roles.version == 0 {
		return nil, 0
	}
	return s.roles.doc, s.roles.version
}

// SetRoles implements topicstore.RoleStore: a synced DDL batch on the
// committer goroutine, when the stored version is still expect. The new
// version is the old one plus one. A closed or failed store answers as
// its other DDL does (ErrClosed, the fatal write error).
func (s *PebbleStore) SetRoles(ctx context.Context, expect uint64, doc []byte) (uint64, error) {
	doc = append([]byte{}, doc...) // the caller's slice stays the caller's
	var version uint64
	_, err := s.submit(ctx, &op{ddl: func() error {
		s.roles.mu.RLock()
		stored := s.roles.version
		s.roles.mu.RUnlock()
		if stored != expect {
			return fmt.Errorf("%w: version %d is stored, the change was based on version %d", topicstore.ErrRolesConflict, stored, expect)
		}
		next := stored + 1
		b := s.db.NewBatch()
		_ = b.Set(keys.Roles(), keys.EncodeRoles(next, doc), nil)
		if err := s.syncDDL(b); err != nil {
			return err
		}
		s.roles.mu.Lock()
		s.roles.doc, s.roles.version = doc, next
		s.roles.mu.Unlock()
		version = next
		return nil
	}})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// recoverRoles loads the role catalog at Open.
func (s *PebbleStore) recoverRoles() error {
	v, closer, err := s.db.Get(keys.Roles())
	if err == pebble.ErrNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	version, doc, err := keys.ParseRoles(v)
	if err != nil {
		return err
	}
	s.roles.doc, s.roles.version = doc, version
	return nil
}
