package console

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"topicgate/topicstore"
)

// Figures is where the sampler reads the live charts' figures: the store,
// as /metrics reads it (topicstore.Store satisfies it). Topics is the
// store's in-memory catalog: every partition's end offset and written
// bytes; Positions and SharedStats a consumer's committed offsets.
type Figures interface {
	Topics() []topicstore.TopicInfo
	Positions(topic, consumer string) (map[int32]int64, error)
	SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error)
}

const (
	// DefaultSampleInterval is how often the sampler records the charts'
	// figures (Config.SampleInterval).
	DefaultSampleInterval = 5 * time.Second
	// sampleHistory is how far back the charts go.
	sampleHistory = time.Hour
	// idleInterval is how often the sampler samples while no chart is
	// open: one sample a minute instead of twelve, so that a console no
	// one looks at costs next to nothing, and the hour it shows when a
	// chart opens has a point a minute until then.
	idleInterval = time.Minute
	// maxSeries bounds the series the sampler keeps: past it, the series
	// of new topics and consumers are not recorded (logged once).
	maxSeries = 1000
)

// seriesKind is what a series measures.
type seriesKind uint8

const (
	kindIn      seriesKind = iota // a topic's messages written per second
	kindInBytes                   // a topic's bytes written per second
	kindOut                       // a topic's messages consumed per second: its consumers' committed offsets' advance
	kindLag                       // a consumer's lag in messages, summed over its partitions
)

// seriesKey names a series: topic-wide kinds have no consumer.
type seriesKey struct {
	kind            seriesKind
	topic, consumer string
}

// series is one ring of values, aligned with the sampler's times: vals[i]
// is the value at times[i], NaN where it had none (before the series
// existed, or a rate's first sample).
type series struct {
	vals []float32
	// last is the counter a rate is the change of (kindIn: the messages
	// ever written; kindLag: the consumer's committed offsets' sum, which
	// its topic's kindOut is the change of), at the previous sample.
	last int64
	// seen is the sample that last saw it: a series not seen by the
	// latest sample (its topic or consumer is gone) is dropped.
	seen uint64
}

// consumerFigures is a consumer's figures in one sample.
type consumerFigures struct {
	key       seriesKey
	committed int64 // summed over partitions
	lag       int64
}

// sampler keeps the last hour of the charts' figures in fixed-size rings:
// one timestamp ring and one float32 ring per series, all of capacity
// sampleHistory/interval (720 at 5 s: 2.8 KiB per series, at most
// maxSeries of them).
type sampler struct {
	src      Figures
	clock    func() time.Time
	interval time.Duration

	mu     sync.Mutex
	times  []int64 // unix milliseconds; ring
	head   int     // the next slot written
	count  int     // slots filled
	seq    uint64  // samples taken
	prevAt time.Time
	series map[seriesKey]*series
	capped bool // maxSeries was reached (logged once)
	// cost is the time the last sample took (Stats).
	cost time.Duration
	subs map[chan struct{}]struct{}

	// sampleMu serializes samples (the ticker's, SampleNow's) and guards
	// their reused buffers.
	sampleMu sync.Mutex
	consBuf  []consumerFigures
	out      map[string]float64 // messages consumed by topic, this sample

	startOnce sync.Once
	stopOnce  sync.Once
	stop      chan struct{}
	done      chan struct{}
}

func newSampler(src Figures, clock func() time.Time, interval time.Duration) *sampler {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	n := int(sampleHistory / interval)
	if n < 2 {
		n = 2
	}
	return &sampler{src: src, clock: clock, interval: interval, times: make([]int64, n),
		series: make(map[seriesKey]*series), subs: make(map[chan struct{}]struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
}

// start begins sampling every interval (once; the console's first
// request calls it, so that a server whose console no one opened samples
// nothing).
func (s *sampler) start() {
	s.startOnce.Do(func() {
		s.sample()
		go s.loop()
	})
}

func (s *sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if s.due() {
				s.sample()
			}
		}
	}
}

// due reports whether a tick samples: always while a chart is open (a
// live stream subscribed), else once every idleInterval.
func (s *sampler) due() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.subs) > 0 || s.prevAt.IsZero() {
		return true
	}
	// A tick may come a little early: within half an interval is due.
	return s.clock().Sub(s.prevAt) >= idleInterval-s.interval/2
}

// close stops sampling.
func (s *sampler) close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		started := true
		s.startOnce.Do(func() { started = false })
		if started {
			<-s.done
		}
	})
}

// sample records one sample of every series, drops the series of topics
// and consumers gone, and tells the subscribers; it returns the sample's
// number and time.
func (s *sampler) sample() (seq uint64, at time.Time) {
	began := time.Now()
	topics := s.src.Topics()
	// Only sample runs these lines, one call at a time (sampleMu): the
	// buffers are reused, so that a sample allocates nothing of its own
	// but new series.
	s.sampleMu.Lock()
	defer s.sampleMu.Unlock()
	cs := s.consBuf[:0]
	for _, t := range topics {
		for _, c := range t.Config.Consumers {
			k := consumerFigures{key: seriesKey{kind: kindLag, topic: t.Config.Name, consumer: c.Name}}
			if c.Shared {
				stats, err := s.src.SharedStats(t.Config.Name, c.Name)
				if err != nil {
					continue
				}
				for _, st := range stats {
					k.committed += st.StartOffset
					for _, p := range t.Partitions {
						if p.ID == st.Partition {
							k.lag += max(p.EndOffset-st.StartOffset, 0)
						}
					}
				}
			} else {
				pos, err := s.src.Positions(t.Config.Name, c.Name)
				if err != nil {
					continue
				}
				for _, p := range t.Partitions {
					k.committed += pos[p.ID]
					k.lag += max(p.EndOffset-pos[p.ID], 0)
				}
			}
			cs = append(cs, k)
		}
	}
	s.consBuf = cs
	now := s.clock()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	dt := now.Sub(s.prevAt).Seconds()
	if s.prevAt.IsZero() || dt <= 0 {
		dt = 0
	}
	s.prevAt = now
	slot := s.head
	s.times[slot] = now.UnixMilli()
	s.head = (s.head + 1) % len(s.times)
	s.count = min(s.count+1, len(s.times))
	// rate records counter's change per second since the previous sample
	// (NaN for a new series or a counter that went back).
	rate := func(sr *series, fresh bool, counter int64) float32 {
		v := float32(math.NaN())
		if !fresh && dt > 0 && counter >= sr.last {
			v = float32(float64(counter-sr.last) / dt)
		}
		sr.last = counter
		return v
	}
	if s.out == nil {
		s.out = make(map[string]float64)
	}
	out := s.out
	clear(out)
	for _, c := range cs {
		sr, fresh := s.get(c.key)
		if sr == nil {
			continue
		}
		if !fresh && c.committed >= sr.last && dt > 0 {
			out[c.key.topic] += float64(c.committed - sr.last)
		}
		sr.last = c.committed
		sr.vals[slot] = float32(c.lag)
	}
	for _, t := range topics {
		var msgs, bytes int64
		for _, p := range t.Partitions {
			msgs += p.EndOffset
			bytes += p.WrittenBytes
		}
		name := t.Config.Name
		if sr, fresh := s.get(seriesKey{kind: kindIn, topic: name}); sr != nil {
			sr.vals[slot] = rate(sr, fresh, msgs)
		}
		if sr, fresh := s.get(seriesKey{kind: kindInBytes, topic: name}); sr != nil {
			sr.vals[slot] = rate(sr, fresh, bytes)
		}
		if sr, _ := s.get(seriesKey{kind: kindOut, topic: name}); sr != nil {
			sr.vals[slot] = float32(math.NaN())
			if n, ok := out[name]; ok || (dt > 0 && len(t.Config.Consumers) == 0) {
				sr.vals[slot] = float32(n / dt)
			}
		}
	}
	for k, sr := range s.series {
		if sr.seen != s.seq {
			delete(s.series, k)
		}
	}
	s.cost = time.Since(began)
	for ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default: // it has one pending already
		}
	}
	return s.seq, now
}

// get returns k's series, marked seen by this sample, creating it (fresh)
// unless maxSeries are kept already (nil). Called with mu held.
func (s *sampler) get(k seriesKey) (sr *series, fresh bool) {
	if sr = s.series[k]; sr != nil {
		sr.seen = s.seq
		return sr, false
	}
	if len(s.series) >= maxSeries {
		if !s.capped {
			s.capped = true
			slog.Warn("console: the live charts keep at most this many series; new topics and consumers are not charted",
				"max", maxSeries)
		}
		return nil, false
	}
	sr = &series{vals: make([]float32, len(s.times)), seen: s.seq}
	nan := float32(math.NaN())
	for i := range sr.vals {
		sr.vals[i] = nan
	}
	s.series[k] = sr
	return sr, true
}

// subscribe returns a channel told (without blocking: one pending at
// most) after each sample; cancel stops it.
func (s *sampler) subscribe() (ch <-chan struct{}, cancel func()) {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs[c] = struct{}{}
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}
}

// chartData is what a chart draws: the sample times (unix seconds,
// oldest first) and one array of values per line, null where it had none.
type chartData struct {
	Times []float64    `json:"t"`
	Lines [][]*float64 `json:"v"`
	Seq   uint64       `json:"seq"`
}

// line is one line of a chart: the sum of its series.
type line []seriesKey

// read returns lines over the samples taken after sample since (every
// sample held when since is 0 or older than the rings): at each, the sum
// of the line's series, null where none of them had a value.
func (s *sampler) read(since uint64, lines ...line) chartData {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.count
	if since > 0 && s.seq-since < uint64(n) {
		n = int(s.seq - since)
	}
	// The last hour only: idle samples are further apart, so the rings
	// may hold more.
	if n > 0 {
		newest := s.times[(s.head-1+len(s.times))%len(s.times)]
		from := newest - sampleHistory.Milliseconds()
		for n > 0 && s.times[(s.head-n+len(s.times))%len(s.times)] < from {
			n--
		}
	}
	d := chartData{Times: make([]float64, n), Lines: make([][]*float64, len(lines)), Seq: s.seq}
	first := (s.head - n + len(s.times)) % len(s.times)
	for i := range n {
		d.Times[i] = float64(s.times[(first+i)%len(s.times)]) / 1000
	}
	for l, keys := range lines {
		vals := make([]*float64, n)
		for _, k := range keys {
			sr := s.series[k]
			if sr == nil {
				continue
			}
			for i := range n {
				v := sr.vals[(first+i)%len(s.times)]
				if math.IsNaN(float64(v)) {
					continue
				}
				if vals[i] == nil {
					vals[i] = new(float64)
				}
				*vals[i] += float64(v)
			}
		}
		d.Lines[l] = vals
	}
	return d
}

// latest is series k's newest value, false when it has none (no sampler,
// no such series, or its newest sample gave it no value).
func (s *sampler) latest(k seriesKey) (float64, bool) {
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.series[k]
	if sr == nil || s.count == 0 {
		return 0, false
	}
	v := sr.vals[(s.head-1+len(s.times))%len(s.times)]
	if math.IsNaN(float64(v)) {
		return 0, false
	}
	return float64(v), true
}

// humanBytes is n bytes with a binary unit.
func humanBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// SamplerStats is what the sampler holds (docs/console.md's figures).
type SamplerStats struct {
	// Samples is how many were taken; Series and Slots how many series
	// and samples per series the rings hold.
	Samples       uint64
	Series, Slots int
	// RingBytes is the rings' size: the timestamps and every series'
	// values, at capacity.
	RingBytes int
	// LastSample is how long the last sample took.
	LastSample time.Duration
}

// stats returns the sampler's figures.
func (s *sampler) stats() SamplerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SamplerStats{Samples: s.seq, Series: len(s.series), Slots: len(s.times),
		RingBytes: 8*len(s.times) + 4*len(s.times)*len(s.series), LastSample: s.cost}
}
