package planner

import (
	"errors"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Name resolution: the scope a query block binds column names in, and the
// scopes around it a correlated subquery reaches.

// Scope resolves column names for the binder.
type Scope struct {
	Names []string
	Types []Type
	// Lookup, when set, resolves names not in Names (e.g. YDB aliases); it
	// returns an index into Names.
	Lookup func(name string) (int, bool)
	// Source names the relation for error messages.
	Source string
	// Quals, when set (a join), is each column's relation name or alias:
	// names may be qualified and an unqualified one must be unique.
	Quals []string
	// QualOnly marks columns only a qualified name reaches: the right
	// side's copy of a USING column (the unqualified name is the left's).
	QualOnly []bool
	// Outer, in a subquery of an expression, is the scope of the query
	// around it: names not found here resolve there, as OuterRefs, which
	// outerUse records.
	Outer    *Scope
	outerUse *outerUse
	// lateral marks the left side of a join as a lateral item to its
	// right sees it (lateral.go): past its columns, Outer's follow.
	lateral bool
	// Rel, in a subquery's single-relation scope, is the relation's name
	// or alias: a name qualified otherwise is looked up outside.
	Rel string
	// used, in a topic's scope, collects the message columns the
	// statement names (bit i: plantree.MsgCol i), for the column
	// privilege check (MsgScan.Used).
	used *uint64
}

// use records that the statement reads column i of s.
func (s *Scope) use(i int) {
	if s != nil && s.used != nil && i < 64 {
		*s.used |= 1 << uint(i)
	}
}

// withOuter returns a copy of s (which may be shared, or nil) whose names
// not found fall back to outer.
func (s *Scope) withOuter(outer *Scope, use *outerUse, rel string) *Scope {
	var c Scope
	if s != nil {
		c = *s
	}
	c.Outer, c.outerUse, c.Rel = outer, use, rel
	return &c
}

// outerUse collects what a subquery of an expression takes from the query
// around it: the columns it reads, and whether it calls a volatile
// function (then its result is not reused for equal columns).
type outerUse struct {
	cols     map[int]bool
	volatile bool
}

// resolveRef resolves a possibly qualified column reference. Without
// Quals (one relation) the qualifier is not checked.
func (s *Scope) resolveRef(table, name string) (int, error) {
	// In a subquery, a name qualified by another relation is not here
	// (the query around may have it).
	otherRel := s != nil && s.Rel != "" && table != "" && table != s.Rel
	if s != nil && s.Quals != nil {
		found := -1
		for i, n := range s.Names {
			if n != name || table != "" && s.Quals[i] != table || table == "" && s.QualOnly[i] {
				continue
			}
			if found >= 0 {
				return 0, pgerror.Newf(pgerror.CodeAmbiguousColumn, "column reference \"%s\" is ambiguous", name)
			}
			found = i
		}
		if found >= 0 {
			return found, nil
		}
	} else if i, _, ok := s.resolve(name); ok && !otherRel {
		s.use(i)
		return i, nil
	}
	col := name
	if table != "" {
		col = table + "." + name
	}
	if s == nil || s.Source == "" {
		return 0, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist", col)
	}
	return 0, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist in %s", col, s.Source)
}

func (s *Scope) resolve(name string) (int, Type, bool) {
	if s == nil {
		return 0, 0, false
	}
	for i, n := range s.Names {
		if n == name {
			return i, s.Types[i], true
		}
	}
	if s.Lookup != nil {
		if i, ok := s.Lookup(name); ok {
			return i, s.Types[i], true
		}
	}
	return 0, 0, false
}

// column binds a column reference: a column of s, else (a correlated
// subquery, a lateral item) an OuterRef to the row around.
func (s *Scope) column(x *sql.ColumnRef) (plantree.Expr, error) {
	i, err := s.resolveRef(x.Table, x.Name)
	if err != nil {
		return s.outerRef(x, err)
	}
	return &plantree.ColExpr{Idx: i, T: s.Types[i], Name: s.Names[i]}, nil
}

// outerRef resolves a column this query lacks (err) in the query around
// it, for a correlated subquery.
func (s *Scope) outerRef(x *sql.ColumnRef, err error) (plantree.Expr, error) {
	var pe *pgerror.Error
	if s == nil || s.Outer == nil || !errors.As(err, &pe) || pe.Code != pgerror.CodeUndefinedColumn {
		return nil, err
	}
	o := s.Outer
	if i, oerr := o.resolveRef(x.Table, x.Name); oerr == nil {
		s.outerUse.add(i)
		return &plantree.OuterRef{Idx: i, T: o.Types[i], Name: o.Names[i]}, nil
	} else if !errors.As(oerr, &pe) || pe.Code != pgerror.CodeUndefinedColumn {
		return nil, oerr // ambiguous there
	}
	far := o.Outer
	if o.lateral && far != nil {
		if ref, ok, err := s.lateralOuterRef(o, x); ok || err != nil {
			return ref, err
		}
		far = far.Outer
	}
	for ; far != nil; far = far.Outer {
		if _, ferr := far.resolveRef(x.Table, x.Name); ferr == nil {
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported,
				"a subquery's reference to column \"%s\" of a query two or more levels out is not supported", x.Name)
		}
	}
	return nil, err
}
