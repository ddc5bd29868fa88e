package pebblestore

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
	"topicgate/topicstore/storetest"
)

func alter(t testing.TB, s *PebbleStore, name string, fn func(*topicstore.TopicConfig)) {
	t.Helper()
	must(t, s.AlterTopic(ctx, name, func(c *topicstore.TopicConfig) error { fn(c); return nil }))
}

func setConsumer(name string, fn func(*topicstore.ConsumerConfig)) func(*topicstore.TopicConfig) {
	return func(c *topicstore.TopicConfig) {
		for i := range c.Consumers {
			if c.Consumers[i].Name == name {
				fn(&c.Consumers[i])
			}
		}
	}
}

func TestReadFromAndAlter(t *testing.T) {
	clk := newTestClock()
	t0 := clk.Now()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	consumerTopic(t, s, "t", 2, topicstore.ConsumerConfig{Name: "early", ReadFrom: t0.Add(time.Hour)})
	eq(t, positions(t, s, "t", "early"), map[int32]int64{0: 0, 1: 0})
	commit(t, s, "t", at(0, body("a"), body("b"))...) // p0 0-1 at t0
	clk.Advance(time.Hour)
	commit(t, s, "t", at(0, body("c"))...) // p0 2 at t0+1h
	commit(t, s, "t", at(1, body("d"))...) // p1 0 at t0+1h
	clk.Advance(time.Hour)
	commit(t, s, "t", at(0, body("e"))...) // p0 3 at t0+2h

	ot, err := s.OffsetForTime("t", t0.Add(30*time.Minute))
	must(t, err)
	eq(t, ot, map[int32]int64{0: 2, 1: 0})
	ot, _ = s.OffsetForTime("t", t0.Add(time.Hour+time.Second))
	eq(t, ot, map[int32]int64{0: 3, 1: 1})
	ot, _ = s.OffsetForTime("t", t0.Add(-time.Hour))
	eq(t, ot, map[int32]int64{0: 0, 1: 0})
	_, err = s.OffsetForTime("nope", t0)
	mustErrIs(t, err, topicstore.ErrTopicNotFound)

	// ADD CONSUMER: with read_from, from OffsetForTime; without, the start.
	alter(t, s, "t", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers,
			topicstore.ConsumerConfig{Name: "late", ReadFrom: t0.Add(30 * time.Minute)},
			topicstore.ConsumerConfig{Name: "all"})
	})
	eq(t, positions(t, s, "t", "late"), map[int32]int64{0: 2, 1: 0})
	eq(t, positions(t, s, "t", "all"), map[int32]int64{0: 0, 1: 0})
	eq(t, positions(t, s, "t", "early"), map[int32]int64{0: 0, 1: 0}) // unchanged

	// ALTER CONSUMER SET (read_from = ...) repositions; other changes do not.
	must(t, s.SetPosition(ctx, "t", "all", 0, 4))
	alter(t, s, "t", setConsumer("early", func(c *topicstore.ConsumerConfig) { c.ReadFrom = t0.Add(90 * time.Minute) }))
	eq(t, positions(t, s, "t", "early"), map[int32]int64{0: 3, 1: 1})
	alter(t, s, "t", setConsumer("all", func(c *topicstore.ConsumerConfig) { c.Important = true }))
	eq(t, positions(t, s, "t", "all"), map[int32]int64{0: 4, 1: 0})
	alter(t, s, "t", setConsumer("early", func(c *topicstore.ConsumerConfig) { c.ReadFrom = time.Time{} }))
	eq(t, positions(t, s, "t", "early"), map[int32]int64{0: 0, 1: 0})
	alter(t, s, "t", setConsumer("early", func(c *topicstore.ConsumerConfig) { c.ReadFrom = t0.Add(90 * time.Minute) }))

	// New partitions start at 0 for everyone.
	alter(t, s, "t", func(c *topicstore.TopicConfig) { c.MinActivePartitions = 3 })
	eq(t, positions(t, s, "t", "early"), map[int32]int64{0: 3, 1: 1, 2: 0})
	eq(t, positions(t, s, "t", "all"), map[int32]int64{0: 4, 1: 0, 2: 0})

	// DROP CONSUMER deletes its positions: re-added, it starts over.
	alter(t, s, "t", func(c *topicstore.TopicConfig) { c.Consumers = c.Consumers[1:] }) // drops "early"
	_, err = s.Positions("t", "early")
	mustErrIs(t, err, topicstore.ErrConsumerNotFound)
	must(t, s.Close())

	s = openTest(t, dir, clk)
	defer s.Close()
	eq(t, positions(t, s, "t", "late"), map[int32]int64{0: 2, 1: 0, 2: 0})
	eq(t, positions(t, s, "t", "all"), map[int32]int64{0: 4, 1: 0, 2: 0})
	alter(t, s, "t", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "early"})
	})
	eq(t, positions(t, s, "t", "early"), map[int32]int64{0: 0, 1: 0, 2: 0})

	// DROP TOPIC deletes positions with everything else.
	must(t, s.DropTopic(ctx, "t"))
	_, err = s.Positions("t", "all")
	mustErrIs(t, err, topicstore.ErrTopicNotFound)
	consumerTopic(t, s, "t", 1, topicstore.ConsumerConfig{Name: "all"})
	eq(t, positions(t, s, "t", "all"), map[int32]int64{0: 0})
}

// blockFS blocks file syncs while armed, reporting each blocked sync.
type blockFS struct {
	vfs.FS
	armed   *atomic.Bool
	entered chan struct{}
	release chan struct{}
}

type blockFile struct {
	vfs.File
	fs *blockFS
}

func (f *blockFS) wrap(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return blockFile{file, f}, nil
}
func (f *blockFS) Create(name string) (vfs.File, error) { return f.wrap(f.FS.Create(name)) }
func (f *blockFS) ReuseForWrite(o, n string) (vfs.File, error) {
	return f.wrap(f.FS.ReuseForWrite(o, n))
}
func (f blockFile) block() {
	if f.fs.armed.Load() {
		select {
		case f.fs.entered <- struct{}{}:
		default:
		}
		<-f.fs.release
	}
}
func (f blockFile) Sync() error     { f.block(); return f.File.Sync() }
func (f blockFile) SyncData() error { f.block(); return f.File.SyncData() }
func (f blockFile) SyncTo(n int64) (bool, error) {
	f.block()
	return f.File.SyncTo(n)
}

func TestChanged(t *testing.T) {
	var armed atomic.Bool
	fs := &blockFS{FS: vfs.Default, armed: &armed, entered: make(chan struct{}, 1), release: make(chan struct{})}
	s, err := Open(t.TempDir(), Options{fs: fs, RetentionInterval: -1})
	must(t, err)
	defer s.Close()
	createTopic(t, s, "t", 2)
	createTopic(t, s, "u", 1)
	_, err = s.Changed("nope")
	mustErrIs(t, err, topicstore.ErrTopicNotFound)

	ch, err := s.Changed("t")
	must(t, err)
	ch2, _ := s.Changed("t")
	check(t, ch == ch2, "one channel per topic while nobody fired")
	chU, _ := s.Changed("u")

	// The commit is applied but its fsync is held: nothing fires yet.
	armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{body("x")}}}})
		done <- err
	}()
	<-fs.entered
	check(t, !storetest.Closed(ch), "Changed fired before the fsync")
	info, _ := s.Topic("t")
	eq(t, info.Partitions[0].EndOffset+info.Partitions[1].EndOffset, int64(0))
	armed.Store(false)
	close(fs.release)
	must(t, <-done)
	<-ch // fired by the publish
	check(t, !storetest.Closed(chU), "another topic's waiter woke")

	// A fresh channel after firing; DropTopic wakes it.
	ch3, _ := s.Changed("t")
	check(t, ch3 != ch && !storetest.Closed(ch3))
	must(t, s.DropTopic(ctx, "t"))
	<-ch3
	_, err = s.Changed("t")
	mustErrIs(t, err, topicstore.ErrTopicNotFound)
}

// TestPublishWakesWithoutLock: publish wakes a topic's long-pollers
// with s.mu released. Changed holds notifyMu while it takes s.mu.RLock,
// so a wake under publish's read lock deadlocked the store when a DDL
// queued for s.mu in between (a Kafka Fetch long-polling, a Produce and
// a CreateTopics at once: franz-go's kgo suite hit it).
//
// The hook has a writer take s.mu while publish wakes, and waits for it:
// a publish holding s.mu would keep the writer out until the hook gave
// up. (A TryLock failed now and then on CI: any reader of the moment,
// such as a Pebble event's, makes it fail, where a writer only waits.)
func TestPublishWakesWithoutLock(t *testing.T) {
	free := make(chan bool, 1)
	var s *PebbleStore
	s, err := Open(t.TempDir(), Options{RetentionInterval: -1, onWake: func() {
		got := make(chan struct{})
		go func() {
			s.mu.Lock()
			close(got) // under s.mu: the writer is in
			s.mu.Unlock()
		}()
		ok := true
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			ok = false
		}
		select {
		case free <- ok:
		default:
		}
	}})
	must(t, err)
	defer s.Close()
	createTopic(t, s, "t", 1)
	ch, err := s.Changed("t")
	must(t, err)
	_, err = s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{body("x")}}}})
	must(t, err)
	<-ch
	check(t, <-free, "publish wakes long-pollers while it holds s.mu")
}

func TestChangedClose(t *testing.T) {
	s := openTest(t, t.TempDir(), nil)
	createTopic(t, s, "t", 1)
	ch, err := s.Changed("t")
	must(t, err)
	must(t, s.Close())
	<-ch
	_, err = s.Changed("t")
	mustErrIs(t, err, topicstore.ErrClosed)
}
