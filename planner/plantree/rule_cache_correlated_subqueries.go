package plantree

// cacheCorrelatedSubqueries lets the executor keep the results of each
// correlated subquery of the block by the outer values it reads, unless
// it calls a volatile function (SubPlan ... cached, in EXPLAIN): a
// subquery per outer row then runs once per distinct outer value.
func cacheCorrelatedSubqueries(p *SelectPlan) {
	for _, sq := range allSubqueries(p) {
		sq.Reusable = sq.Correlated && !sq.Volatile
	}
}
