package pgcatalog

import (
	"sort"

	"topicgate/eval"
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/planner/topicopts"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

// catalogRel is one relation of pg_class: a topic or a sys view.
type catalogRel struct {
	oid    int64
	name   string
	ns     int64
	kind   string
	tuples float64
	bytes  int64
	names  []string
	types  []values.Type
	// options are a topic's pg_class.reloptions, which psql's \d+ shows
	// as its Options footer (topicopts.TopicReloptions); nil for a view.
	options []string
	// owner and acl are a topic's owner ("": the bootstrap superuser) and
	// access list (relowner, relacl).
	owner string
	acl   []topicstore.ACLItem
}

// catalogRels lists the topics and the built-in views (sys views and
// pg_catalog tables), topics first.
func catalogRels(topics []topicstore.TopicInfo) []catalogRel {
	var rels []catalogRel
	var names []string
	var types []values.Type
	for c := plantree.ColPartition; int(c) < plantree.NumTopicCols; c++ {
		names = append(names, plantree.MsgColumns[c].Name)
		types = append(types, plantree.MsgColumns[c].Type)
	}
	sort.Slice(topics, func(i, j int) bool { return topics[i].Config.Name < topics[j].Config.Name })
	for _, t := range topics {
		var msgs, bytes int64
		for _, p := range t.Partitions {
			msgs += p.Messages
			bytes += p.Bytes
		}
		rels = append(rels, catalogRel{oid: int64(oidFirstTopic) + int64(t.ID), name: t.Config.Name, ns: oidPublicNS,
			kind: "r", tuples: float64(msgs), bytes: bytes, names: names, types: types, options: topicopts.TopicReloptions(t),
			owner: t.Config.Owner, acl: t.Config.ACL})
	}
	for i, name := range catalog.SysViewNames() {
		v := catalog.SysViews[name]
		rels = append(rels, catalogRel{oid: int64(oidSysViews + i), name: name, ns: oidSysNS, kind: "v", tuples: -1,
			names: v.Names, types: v.Types})
	}
	for name, oid := range catalog.PgCatalogOIDs {
		v, ok := catalog.PgCatalogViews[name]
		if !ok {
			continue
		}
		kind := "r"
		if catalog.PgCatalogIsView[name] {
			kind = "v"
		}
		rels = append(rels, catalogRel{oid: oid, name: name, ns: oidPgCatalogNS, kind: kind, tuples: -1,
			names: v.Names[:v.Star()], types: v.Types[:v.Star()]})
	}
	sort.SliceStable(rels[len(topics):], func(i, j int) bool { return rels[len(topics)+i].oid < rels[len(topics)+j].oid })
	return rels
}

// replIdent is pg_class.relreplident: 'd' (default) for a topic, 'n'
// (nothing) for a view and for the catalog's own tables, as PostgreSQL
// has them (psql's \d+ prints "Replica Identity: ???" otherwise).
func replIdent(r catalogRel) string {
	if r.kind == "r" && r.ns != oidPgCatalogNS {
		return "d"
	}
	return "n"
}

// Relation finds the relation of an OID among topics and the built-in
// views (ok false for none), for the catalog functions eval runs
// (pg_relation_size, pg_table_is_visible, regclass output, ...).
func Relation(topics []topicstore.TopicInfo, oid int64) (eval.Relation, bool) {
	for _, r := range catalogRels(topics) {
		if r.oid == oid {
			return eval.Relation{Name: r.name, Namespace: r.ns, Kind: r.kind, Bytes: r.bytes, Columns: r.names}, true
		}
	}
	return eval.Relation{}, false
}
