package consume

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// render prints an assignment as "s1:[0 1] s2:[2]" in session order.
func render(a map[int32]uint32, sessions []uint32) string {
	by := map[uint32][]int{}
	for p, s := range a {
		by[s] = append(by[s], int(p))
	}
	var parts []string
	for _, s := range sessions {
		ps := by[s]
		sort.Ints(ps)
		parts = append(parts, fmt.Sprintf("s%d:%v", s, ps))
	}
	return strings.Join(parts, " ")
}

func parts(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// TestBalanceScript plays sessions joining and leaving over 4 partitions
// and checks each step's assignment and how many partitions moved.
func TestBalanceScript(t *testing.T) {
	steps := []struct {
		sessions []uint32
		want     string
		moved    int
	}{
		{[]uint32{1}, "s1:[0 1 2 3]", 4},
		{[]uint32{1, 2}, "s1:[0 1] s2:[2 3]", 2},
		{[]uint32{1, 2, 3}, "s1:[0 1] s2:[2] s3:[3]", 1},
		{[]uint32{1, 2, 3, 4, 5}, "s1:[0] s2:[2] s3:[3] s4:[1] s5:[]", 1},
		{[]uint32{2, 3, 4, 5}, "s2:[2] s3:[3] s4:[1] s5:[0]", 1},
		{[]uint32{5}, "s5:[0 1 2 3]", 3},
		{nil, "", 0},
	}
	cur := map[int32]uint32{}
	for i, st := range steps {
		next := balance(parts(4), st.sessions, cur, nil)
		require.Equal(t, st.want, render(next, st.sessions), "step %d", i)
		if st.sessions != nil {
			moved := 0
			for p, s := range next {
				if cur[p] != s {
					moved++
				}
			}
			require.Equal(t, st.moved, moved, "step %d", i)
			require.Len(t, next, 4, "every partition has exactly one holder")
		}
		cur = next
	}
}

// TestBalanceEven checks the shares for many shapes.
func TestBalanceEven(t *testing.T) {
	for p := 1; p <= 9; p++ {
		for s := 1; s <= 6; s++ {
			var sessions []uint32
			for i := 1; i <= s; i++ {
				sessions = append(sessions, uint32(i))
			}
			a := balance(parts(p), sessions, nil, nil)
			count := map[uint32]int{}
			for _, sess := range a {
				count[sess]++
			}
			for _, sess := range sessions {
				require.LessOrEqual(t, count[sess], p/s+1)
				require.GreaterOrEqual(t, count[sess], p/s)
			}
		}
	}
}
