package planner

import (
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// FROM: the item a query block reads (a topic, a view, a join, a function,
// a derived table, VALUES, a set operation, a recursive query or its work
// table) and the scope its columns are bound in.

// planFrom plans s's FROM item into p: the scope of its columns and the
// columns * expands to (nil for none). A join takes the WHERE terms over
// one of its sides into that side (fromJoin).
func planFrom(cat Catalog, s *sql.Select, params *[]Type, p *plantree.SelectPlan, outer *Scope, use *outerUse) (*Scope, []int, error) {
	f := s.From
	switch {
	case f == nil:
		return nil, nil, nil
	case f.Join != nil:
		return fromJoin(cat, f.Join, params, p, sqlConjuncts(s.Where, nil), outer, use)
	case f.Func != nil:
		// The arguments see no FROM columns, only the query around.
		b := newBinder(params, (&Scope{Source: "function"}).withOuter(outer, use, "\x00"), cat)
		if outer == nil {
			b = newBinder(params, nil, cat)
		}
		return everyColumn(fromFunc(b, f, p))
	case f.Recursive != nil || f.WorkTable != nil:
		return everyColumn(fromRecursive(cat, f, params, p, outer, use))
	case f.Sub != nil:
		return everyColumn(fromSubquery(cat, f, params, p, outer, use))
	case f.SetOp != nil:
		return everyColumn(fromSetOp(cat, f, params, p, outer, use))
	case f.Values != nil:
		return everyColumn(fromValues(f, params, p, outer, use))
	}
	return fromNamed(cat, f, params, p)
}

// everyColumn is a FROM item's scope with * expanding to each of its
// columns.
func everyColumn(scope *Scope, err error) (*Scope, []int, error) {
	if err != nil {
		return nil, nil, err
	}
	var star []int
	for i := range scope.Names {
		star = append(star, i)
	}
	return scope, star, nil
}

// fromNamed plans a FROM item that names a relation: a topic (of the
// public schema), a sys view or a pg_catalog table.
func fromNamed(cat Catalog, f *sql.TableRef, params *[]Type, p *plantree.SelectPlan) (*Scope, []int, error) {
	schema := f.Schema
	if _, ok := catalog.PgCatalogViews[f.Name]; ok && schema == "" {
		// pg_catalog is searched first, as in PostgreSQL: ruby-pg
		// reads "pg_type" unqualified.
		schema = "pg_catalog"
	}
	var star []int
	switch schema {
	case "", "public":
		return fromTopic(cat, f, params, p)
	case "sys":
		view, ok := catalog.SysViews[f.Name]
		if !ok {
			return nil, nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"sys.%s\" does not exist", f.Name), f.Pos)
		}
		p.Sys = &plantree.SysScan{View: f.Name, Names: view.Names, Types: view.Types}
		for i := range view.Names {
			star = append(star, i)
		}
		return &Scope{Names: view.Names, Types: view.Types, Source: "sys." + f.Name}, star, nil
	case "pg_catalog":
		view, ok := catalog.PgCatalogViews[f.Name]
		if !ok {
			return nil, nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"pg_catalog.%s\" does not exist", f.Name), f.Pos)
		}
		p.Sys = &plantree.SysScan{View: "pg_catalog." + f.Name, Names: view.Names, Types: view.Types}
		for i := range view.Star() {
			star = append(star, i)
		}
		return &Scope{Names: view.Names, Types: view.Types, Source: "pg_catalog." + f.Name}, star, nil
	case "information_schema":
		view, ok := catalog.InfoSchemaViews[f.Name]
		if !ok {
			return nil, nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"information_schema.%s\" does not exist", f.Name), f.Pos)
		}
		p.Sys = &plantree.SysScan{View: "information_schema." + f.Name, Names: view.Names, Types: view.Types}
		for i := range view.Names {
			star = append(star, i)
		}
		return &Scope{Names: view.Names, Types: view.Types, Source: "information_schema." + f.Name}, star, nil
	}
	return nil, nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"%s.%s\" does not exist", f.Schema, f.Name), f.Pos)
}

// fromTopic plans a read of a topic: a scan of its stateless messages, or
// with read hints naming a consumer, a read as that consumer.
func fromTopic(cat Catalog, f *sql.TableRef, params *[]Type, p *plantree.SelectPlan) (*Scope, []int, error) {
	ti, err := lookupTopic(cat, f.Name)
	if err != nil {
		return nil, nil, pgerror.At(err, f.Pos)
	}
	if len(f.Hints) > 0 {
		if p.Consumer, err = planConsumerRead(newBinder(params, nil, nil), ti, f.Hints); err != nil {
			return nil, nil, err
		}
	}
	shared := p.Consumer != nil && p.Consumer.Shared
	scope := msgScope(f.Name)
	if shared {
		scope = sharedScope(f.Name)
	}
	p.Scan = &plantree.MsgScan{Topic: f.Name}
	scope.used = &p.Scan.Used
	p.Hints = f.Hints
	var star []int
	for _, c := range plantree.StarColumns {
		star = append(star, int(c))
	}
	if shared {
		star = append(star, int(plantree.ColDeliveryCount), int(plantree.ColLockedUntil))
	}
	return scope, star, nil
}

// fromRel is the name a subquery of an expression knows s's FROM item by
// (its alias, else its name; none for a join or no FROM).
func fromRel(f *sql.TableRef) string {
	if f == nil || f.Join != nil {
		return ""
	}
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// sharedScope adds delivery_count and locked_until for shared-consumer
// reads.
func sharedScope(topic string) *Scope {
	s := msgScope(topic)
	for _, c := range []plantree.MsgCol{plantree.ColDeliveryCount, plantree.ColLockedUntil} {
		s.Names = append(s.Names, plantree.MsgColumns[c].Name)
		s.Types = append(s.Types, plantree.MsgColumns[c].Type)
	}
	return s
}

// msgScope is the scope of a topic's message columns for stateless reads.
func msgScope(topic string) *Scope {
	n := plantree.NumTopicCols
	s := &Scope{Names: make([]string, n), Types: make([]Type, n), Source: "topic \"" + topic + "\""}
	for i := 0; i < n; i++ {
		s.Names[i] = plantree.MsgColumns[i].Name
		s.Types[i] = plantree.MsgColumns[i].Type
	}
	s.Lookup = func(name string) (int, bool) {
		c, ok := plantree.YDBAliases[name]
		if ok && int(c) < n {
			return int(c), true
		}
		return 0, false
	}
	return s
}
