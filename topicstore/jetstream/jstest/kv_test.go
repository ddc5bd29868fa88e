package jstest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/jstest"
)

// TestKVRevisionsTTLAndWatch: an R3 KV bucket as the store's leases and
// positions would use it. Create is create-only, Update is a compare-and-set
// on the revision (both refused with err_code 10071), a watch on one
// connection wakes on another connection's update, and per-key TTLs
// (LimitMarkerTTL, nats-server 2.11+) expire a key with a marker the watch
// sees; a lease is renewed by a CAS publish that carries a new Nats-TTL.
func TestKVRevisionsTTLAndWatch(t *testing.T) {
	c := jstest.Start(t, 3)
	jsA, jsB := jstest.JetStream(t, c.ConnectTo(0)), jstest.JetStream(t, c.ConnectTo(2))
	ctx := ctxFor(t, 20*time.Second)
	kvA, err := jsA.CreateKeyValue(ctx, natsjs.KeyValueConfig{
		Bucket: "leases", Replicas: 3, Storage: natsjs.FileStorage, LimitMarkerTTL: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The bucket's stream answers once its replicas elected a leader (a
	// publish before that has no responder: "no response from stream").
	c.StreamLeader("KV_leases")
	kvB, err := jsB.KeyValue(ctx, "leases")
	if err != nil {
		t.Fatal(err)
	}
	// A publish through a node reaches the leader only once that node's
	// routes carry the stream's interest, which right after the cluster
	// formed may still be on its way (CI saw "no response from stream"
	// through node 2 here, its routes being set up again). Both
	// connections publish until the stream answers them.
	for i, kv := range []natsjs.KeyValue{kvA, kvB} {
		jstest.Eventually(t, jstest.WaitTimeout, func() error {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err := kv.Put(pctx, fmt.Sprintf("ready.%d", i), nil)
			return err
		})
	}

	rev, err := kvA.Create(ctx, "pos.c1", []byte("10"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = kvB.Create(ctx, "pos.c1", []byte("11"))
	if !errors.Is(err, natsjs.ErrKeyExists) {
		t.Fatalf("second Create: %v, want ErrKeyExists", err)
	}
	t.Logf("create of an existing key: %v (err_code %d)", err, jsext.ErrorCode(err))
	rev2, err := kvA.Update(ctx, "pos.c1", []byte("20"), rev)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kvB.Update(ctx, "pos.c1", []byte("21"), rev)
	if !errors.Is(err, natsjs.ErrKeyRevisionMismatch) {
		t.Fatalf("stale Update: %v, want ErrKeyRevisionMismatch", err)
	}
	t.Logf("stale update: %v (err_code %d)", err, jsext.ErrorCode(err))

	w, err := kvA.Watch(ctx, "pos.*", natsjs.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	t0 := time.Now()
	if _, err := kvB.Update(ctx, "pos.c1", []byte("30"), rev2); err != nil {
		t.Fatal(err)
	}
	// UpdatesOnly may still deliver the update made just before the watch
	// (rev2): the watch's consumer can start on a replica that had not
	// applied it yet. Watchers must compare revisions.
	e := nextEntry(t, w)
	if e.Revision() == rev2 {
		t.Logf("UpdatesOnly watch delivered revision %d, written before it started", rev2)
		e = nextEntry(t, w)
	}
	if string(e.Value()) != "30" || e.Operation() != natsjs.KeyValuePut || e.Revision() <= rev2 {
		t.Fatalf("watch saw %s %q at revision %d", e.Operation(), e.Value(), e.Revision())
	}
	t.Logf("watch on node 0 woke %v after an update through node 2", time.Since(t0))

	// Per-key TTL: the key expires by itself and the watch sees the marker.
	lw, err := kvB.Watch(ctx, "lease.*", natsjs.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Stop()
	t0 = time.Now()
	if _, err := kvA.Create(ctx, "lease.g1", []byte("gw1"), natsjs.KeyTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	if e := nextEntry(t, lw); e.Operation() != natsjs.KeyValuePut {
		t.Fatalf("watch saw %s, want the put", e.Operation())
	}
	if e := nextEntry(t, lw); e.Operation() != natsjs.KeyValuePurge {
		t.Fatalf("watch saw %s, want the expiry marker", e.Operation())
	}
	expiry := time.Since(t0)
	if expiry < time.Second {
		t.Fatalf("1s lease expired after %v", expiry)
	}
	t.Logf("1s key TTL: expiry marker seen after %v", expiry)
	if _, err := kvA.Get(ctx, "lease.g1"); !errors.Is(err, natsjs.ErrKeyNotFound) {
		t.Fatalf("expired key: %v, want ErrKeyNotFound", err)
	}

	// Renew: a CAS on the key's revision carrying a longer TTL (nats.go's
	// Update takes no TTL, so publish on the key's subject).
	rev, err = kvA.Create(ctx, "lease.g1", []byte("gw1"), natsjs.KeyTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	renewedAt := time.Now()
	if _, err := jsA.PublishMsg(ctx, &nats.Msg{Subject: "$KV.leases.lease.g1", Data: []byte("gw1")},
		natsjs.WithExpectLastSequencePerSubject(rev), natsjs.WithMsgTTL(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	// The watch sees the creation and the renewal, then the expiry; the
	// creation only if it delivers it before the renewal replaces it (the
	// bucket keeps one revision per key), which on a busy machine it may
	// not.
	puts := 0
	for {
		e := nextEntry(t, lw)
		if e.Operation() == natsjs.KeyValuePurge {
			break
		}
		if e.Operation() != natsjs.KeyValuePut {
			t.Fatalf("watch saw %s, want puts and then the expiry marker", e.Operation())
		}
		puts++
	}
	if puts < 1 || puts > 2 {
		t.Fatalf("watch saw %d puts before the expiry, want the renewal (and the creation before it)", puts)
	}
	if d := time.Since(renewedAt); d < 2*time.Second {
		t.Fatalf("lease renewed for 2s expired after %v", d)
	} else {
		t.Logf("renewed lease (2s TTL) expired %v after the renewal", d)
	}
}

func nextEntry(t *testing.T, w natsjs.KeyWatcher) natsjs.KeyValueEntry {
	t.Helper()
	select {
	case e := <-w.Updates():
		if e == nil {
			t.Fatal("watch closed")
		}
		return e
	case <-time.After(jstest.WaitTimeout):
		t.Fatal("watch: nothing")
	}
	return nil
}
