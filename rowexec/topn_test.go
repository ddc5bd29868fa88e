package rowexec

import (
	"math/rand"
	"reflect"
	"testing"
	"topicgate/planner/plantree"
)

// TestTopNMatchesStableSort: topN(k) returns the first k rows of the stable
// full sort, ties and NULLs included, for random rows and keys.
func TestTopNMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 2000; iter++ {
		n := rng.Intn(40)
		rows := make([][]any, n)
		for i := range rows {
			var a any = int64(rng.Intn(5))
			if rng.Intn(6) == 0 {
				a = nil
			}
			rows[i] = []any{a, int64(rng.Intn(3)), int64(i)} // column 2 tells rows apart
		}
		keys := []plantree.SortKey{{Idx: 0, Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0}}
		if rng.Intn(2) == 0 {
			keys = append(keys, plantree.SortKey{Idx: 1, Desc: rng.Intn(2) == 0})
		}
		k := rng.Intn(n + 3)
		want := append([][]any(nil), rows...)
		sortRows(want, keys)
		want = want[:min(k, len(want))]
		top := newTopN(keys, int64(k))
		for _, r := range rows {
			top.add(r)
		}
		if got := top.sorted(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("keys %+v k %d:\n got %v\nwant %v", keys, k, got, want)
		}
	}
}
