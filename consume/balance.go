package consume

import "sort"

// balance computes a consumer's partition assignment over its read
// sessions, moving as few partitions as possible: every session ends with
// floor(P/S) or ceil(P/S) partitions; a session keeps what it holds up to
// its share, unowned partitions go to the sessions with the fewest, and a
// session over its share gives its highest-numbered partitions back, those
// it is not sticky to first (sticky: a partition pinned by a read or an open
// transaction, which would only wait for the handoff; handoff.go), so a
// joining session gets the partitions that can move now. It is
// a pure function (no clock, no goroutines) so it is tested by scripted
// cases.
//
// sessions lists the live sessions in join order (earlier sessions get the
// extra partition when P is not divisible by S); current maps partition ->
// session for the partitions currently held (entries for sessions not in
// sessions are ignored). The result maps every partition to a session, or is
// empty when there are no sessions.
//
// sticky (nil: none) reports the partitions their holder should keep
// before others.
func balance(partitions []int32, sessions []uint32, current map[int32]uint32, sticky func(int32) bool) map[int32]uint32 {
	out := make(map[int32]uint32, len(partitions))
	if len(sessions) == 0 || len(partitions) == 0 {
		return out
	}
	live := make(map[uint32]int, len(sessions)) // session -> index
	for i, s := range sessions {
		live[s] = i
	}
	share := func(i int) int {
		n := len(partitions) / len(sessions)
		if i < len(partitions)%len(sessions) {
			n++
		}
		return n
	}
	held := make([][]int32, len(sessions))
	var free []int32
	parts := append([]int32(nil), partitions...)
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		s, ok := current[p]
		i, isLive := live[s]
		if ok && isLive {
			held[i] = append(held[i], p)
		} else {
			free = append(free, p)
		}
	}
	// Sessions over their share give back their highest partitions, the
	// sticky ones last.
	for i := range held {
		if sticky != nil && len(held[i]) > share(i) {
			sort.SliceStable(held[i], func(a, b int) bool { return sticky(held[i][a]) && !sticky(held[i][b]) })
		}
		if extra := len(held[i]) - share(i); extra > 0 {
			free = append(free, held[i][len(held[i])-extra:]...)
			held[i] = held[i][:len(held[i])-extra]
		}
	}
	sort.Slice(free, func(i, j int) bool { return free[i] < free[j] })
	// Hand out free partitions to the sessions furthest below their share.
	for _, p := range free {
		best := -1
		for i := range held {
			if len(held[i]) >= share(i) {
				continue
			}
			if best < 0 || share(i)-len(held[i]) > share(best)-len(held[best]) {
				best = i
			}
		}
		if best < 0 {
			best = 0
		}
		held[best] = append(held[best], p)
	}
	for i, ps := range held {
		for _, p := range ps {
			out[p] = sessions[i]
		}
	}
	return out
}
