package executor

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// readOnlyCheck refuses, inside a block opened with BEGIN READ ONLY, a
// statement that would change something, as PostgreSQL does (25006):
// only queries that read as no consumer (a consumer read acquires
// messages or moves a position), COPY TO, EXPLAIN (whose ANALYZE runs
// queries only, and reads as a consumer without moving or locking),
// cursors over such queries, and transaction control, SET and SHOW run.
// It is an allow-list: a statement kind added later is refused until it
// is listed here.
func readOnlyCheck(plan plantree.Plan, accesses []plantree.Access) error {
	what := "this statement"
	switch p := plan.(type) {
	case *plantree.ExplainPlan:
		return nil
	case *plantree.SelectPlan, *plantree.CopyOutPlan, *plantree.DeclareCursorPlan, *plantree.FetchPlan, *plantree.CloseCursorPlan:
		for _, a := range accesses {
			if a.Insert {
				return readOnlyError("INSERT")
			}
			if a.Consumer != "" {
				return readOnlyError("a read as consumer \"" + a.Consumer + "\"")
			}
		}
		return nil
	case *plantree.UtilityPlan:
		switch p.Stmt.(type) {
		case *sql.Begin, *sql.Commit, *sql.Rollback, *sql.Savepoint, *sql.SetVar, *sql.Show, *sql.ShowCreateTopic,
			*sql.Empty, *sql.Discard, *sql.Deallocate:
			return nil
		}
	case *plantree.InsertPlan:
		what = "INSERT"
	case *plantree.CopyPlan:
		what = "COPY FROM"
	case *plantree.SharedActionPlan, *plantree.SetPositionPlan:
		what = "UPDATE or DELETE"
	}
	return readOnlyError(what)
}

func readOnlyError(what string) error {
	return pgerror.Newf(pgerror.CodeReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", what)
}
