package planner

import (
	"errors"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Lateral references. A function in FROM (and a LATERAL subquery) may name
// the columns of the FROM items to its left, as in PostgreSQL:
// `FROM t, jsonb_each_text(t.attrs) a`. The right side of such a join is
// planned with the left side's scope as the scope around it, so those
// names bind as OuterRefs below the left's width; in a subquery of an
// expression, the names of the query around that subquery follow, as
// OuterRefs past the left's columns. A right side that reads the left
// makes the join lateral (JoinPlan.Lateral): the executor runs it again
// for each left row, with that row (then the row around) as its outer row.

// lateralOuterRef resolves x, which the left side o of a lateral join
// lacks, in the query around (o.Outer): ok false if it is not there
// either.
func (b *binder) lateralOuterRef(o *Scope, x *sql.ColumnRef) (Expr, bool, error) {
	i, err := o.Outer.resolveRef(x.Table, x.Name)
	if err != nil {
		var pe *pgerror.Error
		if errors.As(err, &pe) && pe.Code == pgerror.CodeUndefinedColumn {
			return nil, false, nil
		}
		return nil, false, err
	}
	o.outerUse.add(i)
	b.scope.outerUse.add(len(o.Names) + i)
	return &OuterRef{Idx: len(o.Names) + i, T: o.Outer.Types[i], Name: o.Outer.Names[i]}, true, nil
}

func (u *outerUse) add(col int) {
	if u == nil {
		return
	}
	if u.cols == nil {
		u.cols = map[int]bool{}
	}
	u.cols[col] = true
}

// planRight plans the right side of join j, whose left side is l: as a
// lateral item when it may be one (a function, a LATERAL subquery) and
// reads l's columns (lateral true), else as an input of its own.
func planRight(cat Catalog, j *sql.Join, params *[]Type, where []sql.Expr, l relation, outer *Scope, use *outerUse) (relation, bool, error) {
	if j.Right.Func != nil || j.Right.Sub != nil && j.Right.Lateral {
		var lu outerUse
		ls := l.scope.withOuter(outer, use, "")
		ls.lateral = true
		r, err := planRelation(cat, &j.Right, params, where, ls, &lu)
		if err != nil {
			return relation{}, false, err
		}
		for c := range lu.cols {
			if c < len(l.scope.Names) {
				if lu.volatile && use != nil {
					use.volatile = true
				}
				return r, true, nil
			}
		}
	}
	r, err := planRelation(cat, &j.Right, params, where, outer, use)
	return r, false, err
}
