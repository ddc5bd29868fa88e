package storetest

import (
	"bytes"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

// Named documents (topicstore.Documents): opaque bytes under a key,
// replaced whole by compare-and-set, deleted without a trace.
var documentTests = []subtest{
	{"CompareAndSet", testDocumentsCAS},
	{"DeleteAndCreate", testDocumentsDelete},
	{"Keys", testDocumentsKeys},
	{"Reopen", testDocumentsReopen},
	{"Bounds", testDocumentsBounds},
}

// documents returns the store's Documents, or skips the test if the
// backend says it does not claim them.
func (e *env) documents() topicstore.Documents {
	e.t.Helper()
	return claimed[topicstore.Documents](e, Docs, "topicstore.Documents")
}

// doc reads key's document.
func (e *env) doc(key string) ([]byte, uint64) {
	e.t.Helper()
	d, v, err := e.documents().Document(ctx, key)
	require.NoError(e.t, err)
	return d, v
}

// setDoc stores doc under key over version expect and returns the new
// version.
func (e *env) setDoc(key string, expect uint64, doc []byte) uint64 {
	e.t.Helper()
	v, err := e.documents().SetDocument(ctx, key, expect, doc)
	require.NoError(e.t, err)
	return v
}

// testDocumentsCAS: a key holds nothing at first; a document stored over
// the version read is read back with a new version; a change based on an
// older version is refused and changes nothing; keys are apart.
func testDocumentsCAS(e *env) {
	t := e.t
	ds := e.documents()
	d, v0 := e.doc("g/one")
	require.Nil(t, d, "nothing stored yet")
	v1 := e.setDoc("g/one", v0, []byte("first"))
	require.NotEqual(t, v0, v1)
	d, v := e.doc("g/one")
	require.Equal(t, "first", string(d))
	require.Equal(t, v1, v)

	_, err := ds.SetDocument(ctx, "g/one", v0, []byte("stale"))
	require.ErrorIs(t, err, topicstore.ErrDocumentConflict, "version %d was replaced by %d", v0, v1)
	v2 := e.setDoc("g/one", v1, []byte("second"))
	for _, stale := range []uint64{v0, v1, v2 + 1} {
		_, err = ds.SetDocument(ctx, "g/one", stale, []byte("stale"))
		require.ErrorIs(t, err, topicstore.ErrDocumentConflict, "expect %d, stored %d", stale, v2)
	}
	d, v = e.doc("g/one")
	require.Equal(t, "second", string(d), "refused changes stored nothing")
	require.Equal(t, v2, v)

	d, _ = e.doc("g/two")
	require.Nil(t, d, "another key holds nothing")
	e.setDoc("g/two", 0, []byte{})
	d, _ = e.doc("g/two")
	require.NotNil(t, d, "an empty document is a document")
	require.Empty(t, d)
	d, _ = e.doc("g/one")
	require.Equal(t, "second", string(d))
}

// testDocumentsDelete: a nil document deletes the key; a change based on
// the deleted document's version is refused, and the key is created again
// over the version Document gives after the deletion, with a version
// never given before.
func testDocumentsDelete(e *env) {
	t := e.t
	ds := e.documents()
	v1 := e.setDoc("k", 0, []byte("one"))
	vd := e.setDoc("k", v1, nil)
	d, v := e.doc("k")
	require.Nil(t, d, "deleted")
	require.Equal(t, vd, v, "Document gives the deletion's version")
	_, err := ds.SetDocument(ctx, "k", v1, []byte("stale"))
	require.ErrorIs(t, err, topicstore.ErrDocumentConflict, "the deleted document's version is gone")
	_, err = ds.SetDocument(ctx, "k", v1, nil)
	require.ErrorIs(t, err, topicstore.ErrDocumentConflict, "a stale deletion is refused too")
	v2 := e.setDoc("k", v, []byte("two"))
	require.NotEqual(t, v1, v2, "a version is never given twice")
	d, v = e.doc("k")
	require.Equal(t, "two", string(d))
	require.Equal(t, v2, v)
}

// testDocumentsKeys: DocumentKeys lists the keys holding a document under
// a prefix, in order; deleted keys are not listed.
func testDocumentsKeys(e *env) {
	t := e.t
	ds := e.documents()
	keys, err := ds.DocumentKeys(ctx, "kafka/")
	require.NoError(t, err)
	require.Empty(t, keys)
	for _, k := range []string{"kafka/b", "kafka/a", "other/a", "kafka/\x00bin\xff"} {
		e.setDoc(k, 0, []byte(k))
	}
	_, v := e.doc("kafka/b")
	e.setDoc("kafka/b", v, nil)
	keys, err = ds.DocumentKeys(ctx, "kafka/")
	require.NoError(t, err)
	require.Equal(t, []string{"kafka/\x00bin\xff", "kafka/a"}, keys)
	keys, err = ds.DocumentKeys(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{"kafka/\x00bin\xff", "kafka/a", "other/a"}, keys)
}

// testDocumentsReopen: documents, their versions and the deletions
// survive closing and reopening the store; binary bytes are kept as
// given, and neither the caller's slice nor the returned one is the
// store's.
func testDocumentsReopen(e *env) {
	t := e.t
	doc := make([]byte, 100<<10)
	for i := range doc {
		doc[i] = byte(i*7 + i/251)
	}
	in := bytes.Clone(doc)
	v1 := e.setDoc("big", 0, in)
	in[0]++
	vx := e.setDoc("gone", 0, []byte("x"))
	e.setDoc("gone", vx, nil)
	e.reopen()
	d, v := e.doc("big")
	require.Equal(t, v1, v)
	require.True(t, bytes.Equal(doc, d), "the document as given, after a reopen")
	d[0]++
	d, _ = e.doc("big")
	require.True(t, bytes.Equal(doc, d), "the returned slice is the caller's")
	d, _ = e.doc("gone")
	require.Nil(t, d, "a deletion survives a reopen")
	_, err := e.documents().SetDocument(ctx, "big", vx, []byte("stale"))
	require.ErrorIs(t, err, topicstore.ErrDocumentConflict)
	v2 := e.setDoc("big", v1, []byte("small"))
	require.NotEqual(t, v1, v2)
}

// testDocumentsBounds: keys and documents beyond the stated bounds are
// refused and store nothing.
func testDocumentsBounds(e *env) {
	t := e.t
	ds := e.documents()
	_, err := ds.SetDocument(ctx, "", 0, []byte("x"))
	require.Error(t, err)
	_, err = ds.SetDocument(ctx, string(make([]byte, 513)), 0, []byte("x"))
	require.Error(t, err)
	_, err = ds.SetDocument(ctx, "huge", 0, make([]byte, topicstore.MaxDocumentBytes+1))
	require.Error(t, err)
	d, _ := e.doc("huge")
	require.Nil(t, d)
	e.setDoc("max", 0, make([]byte, topicstore.MaxDocumentBytes))
}
