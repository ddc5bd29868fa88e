package pebblestore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/reclaim"
	"topicgate/topicstore/pebblestore/internal/sequencer"
	"topicgate/topicstore/pebblestore/internal/staging"
)

// Options configures a PebbleStore. Zero values mean defaults.
type Options struct {
	// Clock returns the current time; default time.Now. Tests inject one.
	Clock func() time.Time
	// ProducerExpiry is how long a producer's binding and dedup state
	// survive without writes; default DefaultProducerExpiry (14 days).
	ProducerExpiry time.Duration
	// MemTableSize is Pebble's memtable size; default 16 MiB (at most two
	// exist).
	MemTableSize uint64
	// CacheSize is Pebble's block cache size. Pebble charges memtables to
	// the cache (Cache.Reserve), and after a busy write period two full
	// memtables stay reserved (measured: the mutable one and a flushed
	// "zombie" one), so by default it is BlockCacheSize plus 2 ×
	// MemTableSize: memtables and blocks together stay under it.
	CacheSize int64
	// BlockCacheSize is the room for sstable blocks when CacheSize is 0;
	// default 32 MiB. Blocks are stored uncompressed and a log is mostly
	// read once, soon after it was written (from the memtables), so a
	// miss costs a pread from the OS page cache, not a decompression.
	BlockCacheSize int64
	// MaxGroupBytes bounds the encoded bytes one group commit gathers;
	// default 16 MiB (a single larger request still commits alone).
	MaxGroupBytes int
	// PlainSync makes the committer wait for each group's fsync itself
	// (batch.Commit(pebble.Sync)) instead of overlapping the next group's
	// CPU work with the fsync (ApplyNoSyncWait + SyncWait on a second
	// goroutine). For measurement.
	PlainSync bool
	// RetentionInterval is how often a background goroutine applies
	// retention (RunRetention with the Clock's time); default 30s, a
	// negative value disables the loop (tests call RunRetention).
	RetentionInterval time.Duration
	// Logf receives Pebble's informational log lines; nil drops them.
	// Pebble's errors are always logged with the standard log package.
	Logf func(format string, args ...any)

	// Logger receives the store's operational events that an operator
	// must see (a dead-letter move that failed, once per message); nil
	// means slog.Default().
	Logger *slog.Logger

	// OnRelease, when set, is called each time Pebble has let go of
	// memory in bulk: a flush ended (its memtable is freed) or a table was
	// deleted (its blocks leave the block cache). Pebble allocates both
	// with C malloc, which keeps freed memory resident until asked to give
	// it back; the server uses the call to ask. It runs on Pebble's
	// goroutines, some of them holding the database's mutex, so it must
	// only signal and return.
	OnRelease func()

	// SharedWindow is the per-partition acquisition window of shared consumers (offsets from the first unfinished one); default sharedcore.DefaultWindow (1000).
	SharedWindow int

	fs        vfs.FS // test hook: Pebble's file system
	noReclaim bool   // test hook: no reclaimer goroutine (a crash before it ran)
	noCompact bool   // test hook: no automatic compactions (only the reclaimer's)
	onWake    func() // test hook: publish calls it just before it wakes long-pollers
}

// releaseListener returns a Pebble event listener that calls release after
// each flush and table deletion, or nil when release is nil.
func releaseListener(release func()) *pebble.EventListener {
	if release == nil {
		return nil
	}
	return &pebble.EventListener{
		FlushEnd:     func(pebble.FlushInfo) { release() },
		TableDeleted: func(pebble.TableDeleteInfo) { release() },
	}
}

// pebbleLogger adapts Options.Logf to pebble.Logger.
type pebbleLogger struct{ logf func(string, ...any) }

func (l pebbleLogger) Infof(format string, args ...any) {
	if l.logf != nil {
		l.logf(format, args...)
	}
}
func (l pebbleLogger) Errorf(format string, args ...any) { log.Printf("pebble: "+format, args...) }
func (l pebbleLogger) Fatalf(format string, args ...any) { log.Fatalf("pebble: "+format, args...) }

func (o *Options) setDefaults() {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.ProducerExpiry == 0 {
		o.ProducerExpiry = topicstore.DefaultProducerExpiry
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 16 << 20
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = 32 << 20
	}
	if o.CacheSize == 0 {
		o.CacheSize = o.BlockCacheSize + 2*int64(o.MemTableSize)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RetentionInterval == 0 {
		o.RetentionInterval = 30 * time.Second
	}
	if o.MaxGroupBytes == 0 {
		o.MaxGroupBytes = 16 << 20
	}
}

// partition is a partition's published (visible) state.
type partition struct {
	visibleEnd atomic.Int64 // offsets below it are synced and readable
	mu         sync.Mutex
	start      int64 // first retained offset
	startCum   int64 // cumulative bytes at start
	endCum     int64 // cumulative bytes at visibleEnd
	lastWrite  time.Time
	hints      seekHints // recently read batches, for forward seeks
	// cached counts the store's batchCache entries of this partition: a
	// Scan looks there only when it has some.
	cached atomic.Int32
}

// topic is a topic's catalog entry and partitions. Replaced, never mutated,
// except parts' contents.
type topic struct {
	id        uint64
	cfg       topicstore.TopicConfig
	layout    topicstore.Layout // immutable: a new layout installs a new topic
	createdAt time.Time
	parts     []*partition
	codecs    [8]bool // supported codecs
	consumers map[string]bool
	thr       *sequencer.Throttle // write-speed state; nil: never throttled (configureThrottle)
}

// catalogRecord is the value of a catalog key.
type catalogRecord struct {
	Config     topicstore.TopicConfig
	ID         uint64
	CreatedAt  time.Time
	Partitions int
	// Layout is the partitions' key ranges and split tree (topicstore/layout.go);
	// a record without one (written before layouts) is flat.
	Layout *topicstore.Layout `json:",omitempty"`
}

// layoutOf returns rec's layout: its own, else flat, keyed if the topic
// has auto-partitioning.
func (rec *catalogRecord) layoutOf() topicstore.Layout {
	if rec.Layout != nil && len(rec.Layout.Parts) == rec.Partitions {
		return rec.Layout.Clone()
	}
	l := topicstore.FlatLayout(rec.Partitions)
	if topicstore.AutoPartitioned(&rec.Config) {
		l.KeyAll()
	}
	return l
}

// PebbleStore implements Store on Pebble. See doc.go.
type PebbleStore struct {
	db    *pebble.DB
	cache *pebble.Cache
	opts  Options
	// batches are recently read record batches (batchcache.go).
	batches batchCache

	// meter meters partitions' write rates for auto-partitioning and
	// sys.partitions (split.go); splits counts the splits it caused.
	meter  sequencer.Meter
	splits atomic.Int64

	mu     sync.RWMutex // guards topics, byID
	topics map[string]*topic
	byID   map[uint64]*topic

	coreMu  sync.Mutex // guards core (the committer holds it while applying)
	core    sequencer.State
	nextID  uint64    // committer-owned after Open
	lastNow time.Time // committer-owned: the last group's time

	notifyMu sync.Mutex // guards notify
	notify   map[uint64]chan struct{}
	waiters  atomic.Int32 // len(notify): publish skips the lock when 0

	shared sharedRegistry // shared-consumer managers (shared.go)
	walT   walTickets     // deferred syncs of acknowledgements (shared.go)

	bg sync.WaitGroup // background goroutines that use db (retention, reclaim)

	reclaim *reclaim.Reclaimer // dropped topics' ranges to compact (internal/reclaim)

	stage *staging.Stagings // open transactions' staged data (internal/staging)

	roles roleCatalog // the role catalog (roles.go)

	ops       chan *op
	syncq     chan *group
	quit      chan struct{}
	done      chan struct{} // closed when committer and syncer have exited
	closeOnce sync.Once
	failed    atomic.Pointer[error]

	groups, groupedOps atomic.Int64 // commitGroup's batches and their requests (EngineStats)
}

// PebbleStore implements the contract and its optional interfaces.
var (
	_ topicstore.Store         = (*PebbleStore)(nil)
	_ topicstore.Stager        = (*PebbleStore)(nil)
	_ topicstore.EngineStatter = (*PebbleStore)(nil)
	_ topicstore.RoleStore     = (*PebbleStore)(nil)
)

// Open opens (creating if needed) a store in dir.
func Open(dir string, opts Options) (*PebbleStore, error) {
	opts.setDefaults()
	fsys := opts.fs
	if fsys == nil {
		fsys = sizedFS{vfs.Default}
	}
	cache := pebble.NewCache(opts.CacheSize)
	popts := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                opts.MemTableSize,
		MemTableStopWritesThreshold: 2, // memtables: at most 2 × MemTableSize
		// Pebble scores L0 as 2 × sublevels / threshold, so the default
		// of 4 compacts as soon as two flushes overlap. Every flush of a
		// topic store overlaps the last one (each memtable holds the tail
		// of every busy partition), so that rewrote each flushed byte into
		// Lbase after only 2 flushes, together with the Lbase files that
		// straddle partition boundaries. At 8 a compaction takes 4
		// sublevels at once: half as many compactions, each rewriting the
		// same straddling files once for twice the data, for a read
		// amplification of at most 4 sublevels, which a consumer's
		// sequential read pays once per seek. It took a 32 MB compaction
		// out of the bench's 1 s read-process-write window (+10-15%).
		L0CompactionThreshold: 8,
		// Files that do not overlap (one busy partition, or flushes split
		// at partition tails) add no sublevel, so the threshold above never
		// fires for them and L0 could grow to Pebble's default of 500 files
		// (1-2 GB here). Data of a dropped topic or behind a retention cut
		// is freed without being read only once it is below L0 (a
		// delete-only compaction), so L0 is kept to about 64 files.
		L0CompactionFileThreshold: 64,
		L0StopWritesThreshold:     24,
		MaxConcurrentCompactions:  func() int { return 2 },
		// Message bodies are stored as the producer encoded them (raw,
		// gzip, zstd, lzop), as a Kafka broker stores producer batches:
		// compressing them again in every flush and compaction spent 8-12%
		// of the server's CPU on write-heavy loads for random payloads. The
		// deeper levels use the last level configured (Options.Level).
		//
		// Blocks are 32 KiB, not Pebble's 4 KiB: a 100-message consumer
		// read takes one block instead of four (BenchmarkScan +5-15%).
		// They were first measured on 2026-11-30 (ingest-copy +11%, rpw
		// +3%) and not kept for their peak RSS (262-298 MB against
		// 251-273); with malloc's free memory handed back after each
		// flush (Options.OnRelease) they fit: ab.sh over three rounds gave
		// rpw 1.13, ingest-batch 1.06, no workload slower, peak 272 MB
		// against 244 MB.
		Levels:        []pebble.LevelOptions{{Compression: pebble.NoCompression, BlockSize: 32 << 10}},
		Logger:        pebbleLogger{opts.Logf},
		FS:            fsys,
		EventListener: releaseListener(opts.OnRelease),

		DisableAutomaticCompactions: opts.noCompact,
	}
	if opts.noCompact { // without compactions nothing would ever lift a write stall
		popts.L0StopWritesThreshold = 1 << 20
	}
	db, err := pebble.Open(dir, popts)
	if err != nil {
		cache.Unref()
		return nil, err
	}
	s := &PebbleStore{
		db: db, cache: cache, opts: opts,
		topics: map[string]*topic{}, byID: map[uint64]*topic{},
		core:   sequencer.State{Topics: map[uint64]*sequencer.Topic{}, Expiry: opts.ProducerExpiry},
		nextID: 1,
		ops:    make(chan *op, 4096),
		syncq:  make(chan *group, 64),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	s.stage = staging.New(db, opts.Clock, stageHost{s})
	s.reclaim = reclaim.New(compactor{db})
	if err := s.recover(); err != nil {
		db.Close()
		cache.Unref()
		return nil, err
	}
	go s.committer()
	go s.syncer()
	if !opts.noReclaim {
		known := make([]uint64, 0, len(s.byID))
		for id := range s.byID {
			known = append(known, id)
		}
		s.reclaim.Unknown(known, s.nextID)
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			s.reclaim.Run(s.quit)
		}()
	}
	if opts.RetentionInterval > 0 {
		s.bg.Add(1)
		go s.retentionLoop(opts.RetentionInterval)
	}
	return s, nil
}

// recover rebuilds the in-memory state from the catalog, the first and last
// batch of each partition and the producer records. No message is read.
func (s *PebbleStore) recover() error {
	if v, closer, err := s.db.Get([]byte(keys.NextTopicID)); err == nil {
		s.nextID = binary.BigEndian.Uint64(v)
		closer.Close()
	} else if err != pebble.ErrNotFound {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	var recs []catalogRecord
	for ok := it.SeekGE([]byte(keys.PrefixCatalog)); ok && keys.HasPrefix(it.Key(), keys.PrefixCatalog); ok = it.Next() {
		var rec catalogRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return fmt.Errorf("%w: catalog %q: %v", topicstore.ErrCorrupt, it.Key(), err)
		}
		recs = append(recs, rec)
	}
	for _, rec := range recs {
		t := newTopic(rec)
		ct := &sequencer.Topic{ID: rec.ID, Producers: map[string]*sequencer.ProducerState{}, Consumers: map[string][]int64{}}
		for i := range t.parts {
			p := &partition{}
			var cp sequencer.Partition
			lo, hi := keys.Partition(rec.ID, int32(i)), keys.Partition(rec.ID, int32(i)+1)
			if it.SeekGE(lo) && string(it.Key()) < string(hi) {
				h, _, err := topicstore.DecodeBatchHeader(it.Value())
				if err != nil {
					return err
				}
				p.start, p.startCum = h.Base, h.CumBefore
				it.SeekLT(hi)
				h, _, err = topicstore.DecodeBatchHeader(it.Value())
				if err != nil {
					return err
				}
				cp.End = h.Base + int64(h.Count)
				cp.EndCum = h.CumBefore + h.Bytes
				p.lastWrite = time.UnixMicro(h.WrittenAt).UTC()
			}
			cp.Start = p.start
			p.endCum = cp.EndCum
			p.visibleEnd.Store(cp.End)
			t.parts[i] = p
			ct.Parts = append(ct.Parts, cp)
		}
		for _, c := range rec.Config.Consumers {
			pos := make([]int64, len(ct.Parts))
			for p := range pos {
				pos[p] = sequencer.NoPosition // until a record says otherwise
			}
			ct.Consumers[c.Name] = pos
		}
		ct.SetLayout(t.layout.Clone())
		s.configureThrottle(t, ct)
		ct.Expiry = t.cfg.ProducerExpiry
		s.topics[t.cfg.Name] = t
		s.byID[t.id] = t
		s.core.Topics[t.id] = ct
	}
	for ok := it.SeekGE([]byte(keys.PrefixPositions)); ok && keys.HasPrefix(it.Key(), keys.PrefixPositions); ok = it.Next() {
		id, part, consumer, off, err := keys.ParsePosition(it.Key(), it.Value())
		if err != nil {
			return err
		}
		s.core.RestorePosition(id, part, consumer, off)
	}
	now := s.opts.Clock()
	for ok := it.SeekGE([]byte(keys.PrefixProducer)); ok && keys.HasPrefix(it.Key(), keys.PrefixProducer); ok = it.Next() {
		k := it.Key()[len(keys.PrefixProducer):]
		if len(k) < 8 {
			return fmt.Errorf("%w: producer key", topicstore.ErrCorrupt)
		}
		if err := s.core.RestoreProducer(binary.BigEndian.Uint64(k), string(k[8:]), it.Value(), now); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := s.recoverRoles(); err != nil {
		return err
	}
	return s.stage.Recover(&s.core)
}

func newTopic(rec catalogRecord) *topic {
	t := &topic{id: rec.ID, cfg: rec.Config, layout: rec.layoutOf(), createdAt: rec.CreatedAt, parts: make([]*partition, rec.Partitions),
		consumers: make(map[string]bool, len(rec.Config.Consumers))}
	for _, c := range rec.Config.Consumers {
		t.consumers[c.Name] = true
	}
	codecs := rec.Config.SupportedCodecs
	if len(codecs) == 0 {
		codecs = topicstore.AllCodecs
	}
	for _, c := range codecs {
		if c.Valid() {
			t.codecs[c] = true
		}
	}
	return t
}

// err returns the store's fatal error, if any.
func (s *PebbleStore) err() error {
	if e := s.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// fail records a fatal error: every later operation returns it.
func (s *PebbleStore) fail(err error) {
	err = fmt.Errorf("topicstore: fatal write error, store closed: %w", err)
	s.failed.CompareAndSwap(nil, &err)
}

// compactor is what internal/reclaim needs of the store: a manual
// compaction of a key range.
type compactor struct{ db *pebble.DB }

func (c compactor) Compact(start, end []byte) error { return c.db.Compact(start, end, false) }

// Close stops the committer (waiting for in-flight commits) and closes
// Pebble. Operations after Close return ErrClosed.
func (s *PebbleStore) Close() error {
	var err error
	s.closeOnce.Do(func() {
		closed := topicstore.ErrClosed
		s.failed.CompareAndSwap(nil, &closed)
		close(s.quit)
		s.bg.Wait()
		<-s.done
		s.wakeAll()                     // long-pollers return now rather than at their timeout
		err = s.stage.Close(s.db.Close) // waits for StageBatch and DiscardStaged; later ones see ErrClosed
		s.cache.Unref()
	})
	return err
}

func (s *PebbleStore) lookup(name string) (*topic, error) {
	s.mu.RLock()
	t := s.topics[name]
	s.mu.RUnlock()
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
	}
	return t, nil
}

// TopicConfig implements topicstore.Configer: a topic object's config is
// never changed (AlterTopic installs a new one), so it is shared.
func (s *PebbleStore) TopicConfig(name string) (topicstore.TopicConfig, error) {
	t, err := s.lookup(name)
	if err != nil {
		return topicstore.TopicConfig{}, err
	}
	return t.cfg, nil
}

// PartitionCount implements topicstore.PartitionCounter.
func (s *PebbleStore) PartitionCount(name string) (int, error) {
	t, err := s.lookup(name)
	if err != nil {
		return 0, err
	}
	return len(t.parts), nil
}

// Topic returns a topic's definition and state.
func (s *PebbleStore) Topic(name string) (topicstore.TopicInfo, error) {
	t, err := s.lookup(name)
	if err != nil {
		return topicstore.TopicInfo{}, err
	}
	return t.info(), nil
}

// WriteRates returns each partition's write rate in bytes/s, the mean
// over the topic's stabilization window (what auto-partitioning compares
// with its threshold), indexed by partition ID.
func (s *PebbleStore) WriteRates(name string) ([]float64, error) {
	t, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	now := s.opts.Clock()
	out := make([]float64, len(t.parts))
	for i := range out {
		out[i] = s.meter.Rate(sequencer.PartKey{Topic: t.id, Part: int32(i)}, now)
	}
	return out, nil
}

// Topics lists all topics, sorted by name.
func (s *PebbleStore) Topics() []topicstore.TopicInfo {
	s.mu.RLock()
	ts := make([]*topic, 0, len(s.topics))
	for _, t := range s.topics {
		ts = append(ts, t)
	}
	s.mu.RUnlock()
	sortTopics(ts)
	out := make([]topicstore.TopicInfo, len(ts))
	for i, t := range ts {
		out[i] = t.info()
	}
	return out
}

func (t *topic) info() topicstore.TopicInfo {
	ti := topicstore.TopicInfo{Config: topicstore.CloneConfig(t.cfg), ID: t.id, CreatedAt: t.createdAt}
	for i, p := range t.parts {
		p.mu.Lock()
		end := p.visibleEnd.Load()
		pi := topicstore.PartitionInfo{
			ID: int32(i), Active: true, Parent: -1, StartOffset: p.start, EndOffset: end,
			Bytes: p.endCum - p.startCum, Messages: end - p.start, LastWrite: p.lastWrite, WrittenBytes: p.endCum,
		}
		if i < len(t.layout.Parts) {
			pl := &t.layout.Parts[i]
			pi.Active, pi.Deleted, pi.Parent, pi.Children = !pl.Inactive, pl.Deleted, pl.Parent, slices.Clone(pl.Children)
			if t.layout.Keyed {
				pi.Keyed, pi.KeyLo, pi.KeyHi = true, pl.KeyLo, pl.KeyHi
			}
		}
		ti.Partitions = append(ti.Partitions, pi)
		p.mu.Unlock()
	}
	t.thr.Fill(&ti)
	return ti
}

// Producer implements Store. Like Producers it may include a group whose
// fsync is in progress.
func (s *PebbleStore) Producer(topic, producer string) (topicstore.ProducerInfo, bool) {
	t, err := s.lookup(topic)
	if err != nil {
		return topicstore.ProducerInfo{}, false
	}
	now := s.opts.Clock()
	s.coreMu.Lock()
	defer s.coreMu.Unlock()
	if ct := s.core.Topics[t.id]; ct != nil {
		return s.core.ProducerInfo(ct, producer, now)
	}
	return topicstore.ProducerInfo{}, false
}

// Producers lists a topic's live (not expired) producers, sorted by id.
// MaxSeqNo may include a group whose fsync is in progress.
func (s *PebbleStore) Producers(name string) ([]topicstore.ProducerInfo, error) {
	t, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	now := s.opts.Clock()
	var out []topicstore.ProducerInfo
	s.coreMu.Lock()
	if ct := s.core.Topics[t.id]; ct != nil {
		out = s.core.ProducerInfos(ct, now)
	}
	s.coreMu.Unlock()
	sortProducers(out)
	return out, nil
}
