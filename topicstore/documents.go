package topicstore

import (
	"context"
	"errors"
)

// ErrDocumentConflict: SetDocument found another version of the key than
// the one its change was based on (another gateway changed or deleted
// it); read it again and decide.
var ErrDocumentConflict = errors.New("document changed concurrently")

// MaxDocumentBytes is the largest document a store must keep.
const MaxDocumentBytes = 256 << 10

// Documents is implemented by stores that keep small named documents for
// the layers above them: opaque bytes under a key the caller chooses
// (the Kafka door keeps each live group's membership in one), each
// replaced whole under a compare-and-set on its version and deleted when
// its owner has nothing more to keep. A store keeps what is set and not
// deleted: bounded by the keys that live, never by the number of changes
// ever made. Keys are at most 512 bytes of any value; the store spells
// them in its own key space.
type Documents interface {
	// Document returns key's document and its version; a nil document
	// means none is stored, and its version (0 or another) is what a
	// SetDocument creating it is based on. On a cluster it is read from
	// the store, not from a gateway's view: a version that was current
	// may be replaced by the time the caller uses it, which its
	// SetDocument then finds.
	Document(ctx context.Context, key string) (doc []byte, version uint64, err error)
	// SetDocument stores doc durably under key when key's version is
	// still expect and returns the new version; a nil doc deletes the
	// key. A version names one stored state of the key: it is never given
	// to another, so a change based on a document that was replaced, or
	// deleted and created again, is refused. Otherwise it stores nothing
	// and returns ErrDocumentConflict; ErrOutcomeUnknown when the store
	// cannot say whether it stored it.
	SetDocument(ctx context.Context, key string, expect uint64, doc []byte) (uint64, error)
	// DocumentKeys lists the keys that start with prefix and hold a
	// document (what a sweep looks at; a key being deleted may be
	// listed).
	DocumentKeys(ctx context.Context, prefix string) ([]string, error)
}

// CheckDocument refuses a key or document beyond the bounds Documents
// states.
func CheckDocument(key string, doc []byte) error {
	switch {
	case key == "" || len(key) > 512:
		return errors.New("a document's key is 1 to 512 bytes")
	case len(doc) > MaxDocumentBytes:
		return errors.New("a document is at most 256 KiB")
	}
	return nil
}
