package pebblestore

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// Documents (topicstore.Documents): one record per key, d/<key>, holding
// its version and the document. A change runs on the committer goroutine
// like the other DDL (so changes are serialized, and checked against the
// version stored when they run) as one synced batch that also advances
// x/next_document_version, the store-wide counter versions come from, so
// no version is given twice, across deletions and restarts too.

var _ topicstore.Documents = (*PebbleStore)(nil)

// Document implements topicstore.Documents: the stored record, or nil and
// version 0.
func (s *PebbleStore) Document(_ context.Context, key string) ([]byte, uint64, error) {
	if err := s.err(); err != nil {
		return nil, 0, err
	}
	return s.readDocument(key)
}

// readDocument reads key's record.
func (s *PebbleStore) readDocument(key string) ([]byte, uint64, error) {
	v, closer, err := s.db.Get(keys.Document(key))
	if err == pebble.ErrNotFound {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer closer.Close()
	version, doc, err := keys.ParseDocument(v)
	return doc, version, err
}

// SetDocument implements topicstore.Documents: a synced DDL batch on the
// committer goroutine, when the stored version is still expect.
func (s *PebbleStore) SetDocument(ctx context.Context, key string, expect uint64, doc []byte) (uint64, error) {
	if err := topicstore.CheckDocument(key, doc); err != nil {
		return 0, err
	}
	if doc != nil {
		doc = append([]byte{}, doc...) // the caller's slice stays the caller's
	}
	var version uint64
	_, err := s.submit(ctx, &op{ddl: func() error {
		_, stored, err := s.readDocument(key)
		if err != nil {
			return err
		}
		if stored != expect {
			return fmt.Errorf("%w: %q has version %d, the change was based on version %d", topicstore.ErrDocumentConflict, key, stored, expect)
		}
		next, err := s.nextDocVersion()
		if err != nil {
			return err
		}
		b := s.db.NewBatch()
		_ = b.Set([]byte(keys.NextDocVersion), binary.BigEndian.AppendUint64(nil, next+1), nil)
		if doc == nil {
			_ = b.Delete(keys.Document(key), nil)
		} else {
			_ = b.Set(keys.Document(key), keys.EncodeDocument(next, doc), nil)
		}
		if err := s.syncDDL(b); err != nil {
			return err
		}
		version = next
		if doc == nil {
			version = 0
		}
		return nil
	}})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// nextDocVersion is the version the next document change is given (runs
// on the committer goroutine, the counter's only writer).
func (s *PebbleStore) nextDocVersion() (uint64, error) {
	v, closer, err := s.db.Get([]byte(keys.NextDocVersion))
	if err == pebble.ErrNotFound {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: %s", topicstore.ErrCorrupt, keys.NextDocVersion)
	}
	return binary.BigEndian.Uint64(v), nil
}

// DocumentKeys implements topicstore.Documents.
func (s *PebbleStore) DocumentKeys(_ context.Context, prefix string) ([]string, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	lower := keys.Document(prefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: keyUpperBound(lower)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []string
	for it.First(); it.Valid(); it.Next() {
		out = append(out, string(it.Key()[len(keys.PrefixDocuments):]))
	}
	return out, it.Error()
}

// keyUpperBound is the least key above every key that starts with p.
func keyUpperBound(p []byte) []byte {
	end := append([]byte{}, p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
