package pebblestore

import (
	"unsafe"

	"topicgate/topicstore"
)

// bodyCache keeps copies of the messages a shared consumer's fill read
// into its window, so that an acquisition hands them out without reading
// them again (sharedFetch reads only those it lacks). The fill reads each
// message of the window once anyway, to learn its group, delay and write
// time; keeping the copy saves the acquisition a seek or a walk of a
// record batch per partition it takes from.
//
// A message's content never changes once written and its (topic,
// partition, offset) is never reused, so an entry is never wrong, only
// useless once its message is handed out or finished. An entry leaves
// when an acquisition takes it, or when its partition's window start
// passes it (trim, at each fill). The cache lives under its manager's
// lock and dies with the manager; it holds at most bodyCacheBytes
// (counted as each message's struct and the bytes it references) and,
// per partition, one run of offsets no longer than twice the window:
// what does not fit is not kept, and the acquisition reads it.
type bodyCache struct {
	runs  []bodyRun // by partition
	bytes int
}

// bodyRun is one partition's kept messages: msgs[i] is offset base+i,
// nil when absent.
type bodyRun struct {
	base int64
	msgs []*topicstore.Message
}

// bodyCacheBytes bounds what one shared consumer's cache holds: about
// six thousand messages of 100 bytes, the windows of a few partitions.
const bodyCacheBytes = 2 << 20

// keptSize is what a kept message counts against bodyCacheBytes.
func keptSize(m *topicstore.Message) int {
	n := int(unsafe.Sizeof(*m)) + len(m.Body) + len(m.Key) + len(m.ProducerID) + len(m.MessageGroupID)
	for _, a := range m.Attrs {
		n += len(a.Key) + len(a.Value) + int(unsafe.Sizeof(a))
	}
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value) + int(unsafe.Sizeof(h))
	}
	return n
}

// keep stores a copy of m (a message of partition part that the fill
// just read; m is valid only during the call) if it fits. maxRun bounds
// the partition's run (the window: a fill loads no further ahead).
func (c *bodyCache) keep(part int, m *topicstore.Message, maxRun int) {
	size := keptSize(m)
	if c.bytes+size > bodyCacheBytes {
		return
	}
	for len(c.runs) <= part {
		c.runs = append(c.runs, bodyRun{})
	}
	r := &c.runs[part]
	if len(r.msgs) == 0 {
		r.base = m.Offset
	}
	i := m.Offset - r.base
	if i < 0 {
		return // below the run: read it when it is acquired
	}
	if i >= int64(maxRun) { // far ahead of the run: start over from m
		c.dropFront(r, int64(len(r.msgs)))
		r.base, i = m.Offset, 0
	}
	for int64(len(r.msgs)) <= i {
		r.msgs = append(r.msgs, nil)
	}
	if r.msgs[i] != nil {
		return
	}
	var arena []byte
	cp := m.CloneIn(&arena, len(m.Body))
	r.msgs[i] = &cp
	c.bytes += size
}

// take returns the kept message at ref and forgets it.
func (c *bodyCache) take(ref topicstore.MsgRef) (*topicstore.Message, bool) {
	if int(ref.Partition) >= len(c.runs) {
		return nil, false
	}
	r := &c.runs[ref.Partition]
	i := ref.Offset - r.base
	if i < 0 || i >= int64(len(r.msgs)) || r.msgs[i] == nil {
		return nil, false
	}
	m := r.msgs[i]
	c.bytes -= keptSize(m)
	r.msgs[i] = nil
	if i == 0 {
		c.dropFront(r, 0)
	}
	return m, true
}

// trim forgets partition part's messages below start (finished: never
// handed out again) and the absent ones at the run's front.
func (c *bodyCache) trim(part int, start int64) {
	if part < len(c.runs) {
		r := &c.runs[part]
		c.dropFront(r, start-r.base)
	}
}

// dropFront removes the run's first n messages, and then its absent ones.
// The run's slice moves forward in its array; append copies what is
// left into a new one when it is full, so the array stays within twice
// the run's length.
func (c *bodyCache) dropFront(r *bodyRun, n int64) {
	k := 0
	for ; k < len(r.msgs) && (int64(k) < n || r.msgs[k] == nil); k++ {
		if r.msgs[k] != nil {
			c.bytes -= keptSize(r.msgs[k])
			r.msgs[k] = nil
		}
	}
	r.base += int64(k)
	r.msgs = r.msgs[k:]
}
