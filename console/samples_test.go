package console

import (
	"fmt"
	"testing"
	"time"

	"topicgate/topicstore"
)

// fakeFigures is a store's figures the test sets.
type fakeFigures struct {
	topics []topicstore.TopicInfo
	pos    map[string]map[int32]int64 // by topic/consumer
}

func (f *fakeFigures) Topics() []topicstore.TopicInfo { return f.topics }

func (f *fakeFigures) Positions(topic, consumer string) (map[int32]int64, error) {
	return f.pos[topic+"/"+consumer], nil
}

func (f *fakeFigures) SharedStats(string, string) ([]topicstore.SharedPartitionStats, error) {
	return nil, nil
}

// topic is a topic with one partition at end and consumers.
func topic(name string, end, bytes int64, consumers ...string) topicstore.TopicInfo {
	ti := topicstore.TopicInfo{Config: topicstore.TopicConfig{Name: name},
		Partitions: []topicstore.PartitionInfo{{ID: 0, EndOffset: end, WrittenBytes: bytes}}}
	for _, c := range consumers {
		ti.Config.Consumers = append(ti.Config.Consumers, topicstore.ConsumerConfig{Name: c})
	}
	return ti
}

func val(t *testing.T, d chartData, line, i int) float64 {
	t.Helper()
	if d.Lines[line][i] == nil {
		t.Fatalf("line %d at %d: null", line, i)
	}
	return *d.Lines[line][i]
}

// TestSamplerRates: messages and bytes written per second, consumed per
// second and lag, from the counters' changes between samples.
func TestSamplerRates(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	f := &fakeFigures{topics: []topicstore.TopicInfo{topic("a", 100, 1000, "c")},
		pos: map[string]map[int32]int64{"a/c": {0: 40}}}
	s := newSampler(f, func() time.Time { return now }, 5*time.Second)
	s.sample()
	now = now.Add(5 * time.Second)
	f.topics[0] = topic("a", 150, 3000, "c")
	f.pos["a/c"][0] = 50
	s.sample()
	in, inBytes := line{{kind: kindIn, topic: "a"}}, line{{kind: kindInBytes, topic: "a"}}
	out, lag := line{{kind: kindOut, topic: "a"}}, line{{kind: kindLag, topic: "a", consumer: "c"}}
	d := s.read(0, in, inBytes, out, lag)
	if len(d.Times) != 2 || d.Times[1]-d.Times[0] != 5 || d.Seq != 2 {
		t.Fatalf("times %v seq %d", d.Times, d.Seq)
	}
	if d.Lines[0][0] != nil || d.Lines[2][0] != nil {
		t.Errorf("a rate at the first sample: %v %v", d.Lines[0][0], d.Lines[2][0])
	}
	if got := val(t, d, 0, 1); got != 10 {
		t.Errorf("in %v, want 10/s", got)
	}
	if got := val(t, d, 1, 1); got != 400 {
		t.Errorf("in bytes %v, want 400/s", got)
	}
	if got := val(t, d, 2, 1); got != 2 {
		t.Errorf("out %v, want 2/s", got)
	}
	if val(t, d, 3, 0) != 60 || val(t, d, 3, 1) != 100 {
		t.Errorf("lag %v %v, want 60 100", val(t, d, 3, 0), val(t, d, 3, 1))
	}
	// Since the first sample: the second only.
	if d := s.read(1, lag); len(d.Times) != 1 || val(t, d, 0, 0) != 100 {
		t.Errorf("read since 1: %+v", d)
	}
	// A line sums its series.
	if d := s.read(0, line{in[0], out[0]}); val(t, d, 0, 1) != 12 {
		t.Errorf("sum %v", val(t, d, 0, 1))
	}
}

// TestSamplerRing: the rings keep the last hour (sampleHistory/interval
// samples) and no more; the series of a topic gone are dropped; no more
// than maxSeries series are kept; their size is bounded.
func TestSamplerRing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	f := &fakeFigures{topics: []topicstore.TopicInfo{topic("a", 0, 0, "c"), topic("b", 0, 0)},
		pos: map[string]map[int32]int64{"a/c": {0: 0}}}
	s := newSampler(f, func() time.Time { return now }, 5*time.Second)
	slots := int(time.Hour / (5 * time.Second))
	for i := range slots + 10 {
		f.topics[0].Partitions[0].EndOffset = int64(i)
		s.sample()
		now = now.Add(5 * time.Second)
	}
	lag := line{{kind: kindLag, topic: "a", consumer: "c"}}
	d := s.read(0, lag)
	if len(d.Times) != slots {
		t.Fatalf("%d samples held, want %d", len(d.Times), slots)
	}
	if val(t, d, 0, 0) != 10 || val(t, d, 0, slots-1) != float64(slots+9) {
		t.Errorf("oldest %v newest %v", val(t, d, 0, 0), val(t, d, 0, slots-1))
	}
	if d.Times[slots-1]-d.Times[0] != float64(slots-1)*5 {
		t.Errorf("times not in order: %v .. %v", d.Times[0], d.Times[slots-1])
	}
	// A reader far behind gets the hour held.
	if d := s.read(1, lag); len(d.Times) != slots {
		t.Errorf("since 1: %d samples", len(d.Times))
	}
	// Topic a dropped: its series go at the next sample.
	if st := s.stats(); st.Series != 7 {
		t.Errorf("%d series, want 7 (3 per topic, 1 consumer)", st.Series)
	}
	f.topics = f.topics[1:]
	s.sample()
	if st := s.stats(); st.Series != 3 {
		t.Errorf("%d series after a's drop, want 3", st.Series)
	}
	if d := s.read(0, lag); d.Lines[0][len(d.Times)-1] != nil {
		t.Error("a dropped consumer's lag is still charted")
	}

	// maxSeries: 3 per topic; those past it are not recorded.
	f.topics = nil
	for i := range maxSeries {
		f.topics = append(f.topics, topic(fmt.Sprintf("t%04d", i), 0, 0))
	}
	s.sample() // b's series still counted until its end
	s.sample()
	st := s.stats()
	if st.Series != maxSeries {
		t.Errorf("%d series, want the cap %d", st.Series, maxSeries)
	}
	// The bound docs/console.md gives: the rings at the cap.
	const bound = 3 << 20
	if st.RingBytes > bound {
		t.Errorf("rings of %d bytes at %d series, over %d", st.RingBytes, st.Series, bound)
	}
	t.Logf("at the cap: %d series x %d slots = %d bytes of rings", st.Series, st.Slots, st.RingBytes)
}

// TestSamplerSubscribe: a subscriber is told after each sample, without
// blocking the sampler (one pending at most).
func TestSamplerSubscribe(t *testing.T) {
	f := &fakeFigures{topics: []topicstore.TopicInfo{topic("a", 0, 0)}}
	s := newSampler(f, time.Now, time.Hour)
	ch, cancel := s.subscribe()
	s.sample()
	s.sample()
	<-ch
	select {
	case <-ch:
		t.Fatal("two pending notices")
	default:
	}
	cancel()
	s.sample()
	select {
	case <-ch:
		t.Fatal("told after cancel")
	default:
	}
	s.start()
	s.close()
	s.close()
}

// TestSamplerIdle: with no chart open the ticks sample once a minute;
// with one open, every tick; a chart gets the last hour only.
func TestSamplerIdle(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	f := &fakeFigures{topics: []topicstore.TopicInfo{topic("a", 0, 0)}}
	s := newSampler(f, func() time.Time { return now }, 5*time.Second)
	if !s.due() {
		t.Fatal("the first tick does not sample")
	}
	s.sample()
	now = now.Add(5 * time.Second)
	if s.due() {
		t.Error("a tick 5 s after the last sample samples, no chart open")
	}
	now = now.Add(55 * time.Second)
	if !s.due() {
		t.Error("a tick a minute after the last sample does not sample")
	}
	s.sample()
	now = now.Add(5 * time.Second)
	_, cancel := s.subscribe()
	if !s.due() {
		t.Error("a tick with a chart open does not sample")
	}
	cancel()
	// Two hours on: the chart shows the newest sample only.
	now = now.Add(2 * time.Hour)
	s.sample()
	if d := s.read(0, line{{kind: kindIn, topic: "a"}}); len(d.Times) != 1 {
		t.Errorf("%d samples in the last hour, want 1", len(d.Times))
	}
}
