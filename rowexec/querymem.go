package rowexec

import (
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
)

// queryMem accounts for the rows one statement materializes: sorted rows
// without a LIMIT, groups and their aggregate state. PostgreSQL spills such
// work to disk past work_mem; topicgate keeps it in memory, so past the
// limit the statement fails with 54000 instead of the server running out
// of memory for everyone.
//
// A statement has one budget, shared by all its query blocks. A run that
// ends before the statement does (a subquery's, a lateral right side's for
// one left row) charges a sub-budget, which counts against the
// statement's and gives back what it charged when it ends.
type queryMem struct {
	used, limit int64
	parent      *queryMem // a sub-budget's statement budget
}

// sub is a budget for a run that ends before the statement does.
func (m *queryMem) sub() *queryMem { return &queryMem{parent: m} }

// end gives back everything the sub-budget m charged.
func (m *queryMem) end() {
	for p := m.parent; p != nil; p = p.parent {
		p.used -= m.used
	}
	m.used = 0
}

// charge accounts for n more bytes held to sort or group rows.
func (m *queryMem) charge(n int64) error {
	return m.chargeFor(n, "sort or group its rows")
}

// chargeFor accounts for n more bytes held to do what; past the limit it
// returns 54000 naming the limit and what.
func (m *queryMem) chargeFor(n int64, what string) error {
	m.used += n
	if m.parent != nil {
		return m.parent.chargeFor(n, what)
	}
	if m.limit > 0 && m.used > m.limit {
		return pgerror.Newf(pgerror.CodeProgramLimitExceeded,
			"the query needs more than %d MiB of memory to %s (server flag --max-query-mib); add a LIMIT or a narrower WHERE",
			m.limit>>20, what)
	}
	return nil
}

// rowBytes estimates the memory a materialized row holds.
func rowBytes(r []any) int64 {
	n := int64(24 + 16*len(r))
	for _, v := range r {
		n += valueBytes(v)
	}
	return n
}

func valueBytes(v any) int64 {
	switch x := v.(type) {
	case []byte:
		return int64(len(x))
	case string:
		return int64(len(x))
	case *apd.Decimal:
		return 48 + int64(x.NumDigits()/2)
	case time.Time:
		return 24
	case []int64:
		return 24 + 8*int64(len(x))
	case []string:
		n := 24 + 16*int64(len(x))
		for _, s := range x {
			n += int64(len(s))
		}
		return n
	}
	return 0
}
