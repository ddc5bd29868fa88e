package fold

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"topicgate/topicstore"

	"github.com/nats-io/nats.go"
)

// GroupKey names a group in the fold: a topic by ID (a dropped and
// re-created topic's groups start over) and a consumer.
type GroupKey struct {
	Topic    uint64
	Consumer string
}

// Groups is the groups as folded.
type Groups struct {
	Beats map[string]*Beat
	Recs  map[GroupKey]map[string]*Member
	Waits map[GroupKey]chan struct{} // closed at the group's next change
}

// Beat is a gateway's last heartbeat.
type Beat struct {
	Seq     uint64
	Until   time.Time
	Expired bool   // the sweep has told the groups that it expired
	Name    string // what the gateway calls itself (Options.Name)
}

// Member is a member record as folded.
type Member struct {
	Seq, Since uint64
	Ann        topicstore.Announcement
}

// NotifyGroup wakes the group's waiters.
func (g *Groups) NotifyGroup(k GroupKey) {
	if ch := g.Waits[k]; ch != nil {
		close(ch)
		delete(g.Waits, k)
	}
}

// NotifyGateway wakes every group gw has a record in.
func (g *Groups) NotifyGateway(gw string) {
	for k, byGw := range g.Recs {
		if _, ok := byGw[gw]; ok {
			g.NotifyGroup(k)
		}
	}
}

// applyGroup folds a heartbeat or a member record.
func (f *State) applyGroup(tok []string, h nats.Header, seq uint64) error {
	g := &f.Groups
	if tok[0] == KindBeat {
		gw := tok[1]
		if g.Beats == nil {
			g.Beats = map[string]*Beat{}
		}
		b := g.Beats[gw]
		now := f.clock()
		wasLive := b != nil && now.Before(b.Until)
		if b == nil {
			b = &Beat{}
			g.Beats[gw] = b
		}
		b.Seq, b.Until, b.Expired = seq, TimeMicros(HeaderInt(h, HUntil)), false
		if name := h.Get(HName); name != "" {
			b.Name = name
		}
		if !wasLive && now.Before(b.Until) {
			g.NotifyGateway(gw) // back (a gateway's first beat precedes its records)
		}
		return nil
	}
	if len(tok) != 4 {
		return nil
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return err
	}
	consumer, err := hex.DecodeString(tok[2])
	if err != nil {
		return err
	}
	held, err := ParseHeld(h.Get(HHeld))
	if err != nil {
		return err
	}
	r := &Member{Seq: seq, Since: uint64(HeaderInt(h, HSince)),
		Ann: topicstore.Announcement{Sessions: int(HeaderInt(h, HSessions)), Held: held, Saw: uint64(HeaderInt(h, HSaw))}}
	if r.Since == 0 {
		r.Since = seq
	}
	k := GroupKey{id, string(consumer)}
	if g.Recs == nil {
		g.Recs = map[GroupKey]map[string]*Member{}
	}
	if g.Recs[k] == nil {
		g.Recs[k] = map[string]*Member{}
	}
	g.Recs[k][tok[3]] = r
	g.NotifyGroup(k)
	return nil
}

func ParseHeld(v string) ([]int32, error) {
	if v == "" {
		return nil, nil
	}
	f := strings.Split(v, ",")
	out := make([]int32, len(f))
	for i, x := range f {
		p, err := strconv.ParseInt(x, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("member record: partition %q: %w", x, err)
		}
		out[i] = int32(p)
	}
	return out, nil
}

func FormatHeld(held []int32) string {
	var b strings.Builder
	for i, p := range held {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}
