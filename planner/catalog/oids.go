package catalog

import (
	"sort"
	"strings"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

// The OIDs of the emulated catalog (package pgcatalog): schemas, the
// sys views (numbered by name from OIDSysViews), topics (OIDFirstTopic +
// the topic's store ID), and the pg_catalog tables with PostgreSQL 15's
// own OIDs.
const (
	OIDPgCatalogNS = 11
	OIDPublicNS    = 2200
	OIDSysNS       = 16300
	OIDSysViews    = 16310
	OIDFirstTopic  = 16384
)

// PgCatalogOIDs are PostgreSQL 15's OIDs of the pg_catalog tables (and
// the pg_roles view) topicgate emulates.
var PgCatalogOIDs = map[string]int64{
	"pg_am": 2601, "pg_attrdef": 2604, "pg_attribute": 1249, "pg_auth_members": 1261, "pg_authid": 1260,
	"pg_class": 1259, "pg_collation": 3456, "pg_constraint": 2606, "pg_database": 1262, "pg_description": 2609,
	"pg_extension": 3079, "pg_index": 2610, "pg_inherits": 2611, "pg_namespace": 2615, "pg_policy": 3256,
	"pg_proc": 1255, "pg_range": 3541, "pg_publication": 6104, "pg_publication_namespace": 6237, "pg_publication_rel": 6106,
	"pg_rewrite": 2618, "pg_roles": 12000, "pg_shdescription": 2396, "pg_statistic_ext": 3381,
	"pg_tablespace": 1213, "pg_trigger": 2620, "pg_type": 1247, "pg_cursors": 12165, "pg_settings": 12156,
	"pg_depend": 2608, "pg_operator": 2617, "pg_cast": 2605, "pg_conversion": 2607, "pg_language": 2612,
	"pg_event_trigger": 3466, "pg_ts_config": 3602, "pg_ts_dict": 3600, "pg_ts_parser": 3601, "pg_ts_template": 3764,
	"pg_foreign_data_wrapper": 2328, "pg_foreign_server": 1417, "pg_foreign_table": 3118, "pg_user_mappings": 12327,
	"pg_largeobject_metadata": 2995, "pg_db_role_setting": 2964, "pg_subscription": 6100, "pg_opclass": 2616,
	"pg_opfamily": 2753, "pg_amop": 2602, "pg_amproc": 2603, "pg_default_acl": 826,
}

// sysViewsAdded are the sys views added after the first set, in the
// order they were added: they are numbered after it, so that a view's OID
// never changes when another view is added.
var sysViewsAdded = []string{"consumer_options", "cluster", "consumer_privileges", "kafka_producers", "kafka_groups", "consumer_deliveries"}

// SysViewNames are the sys views in OID order: the first set by name,
// then sysViewsAdded.
func SysViewNames() []string {
	added := map[string]bool{}
	for _, n := range sysViewsAdded {
		added[n] = true
	}
	names := make([]string, 0, len(SysViews))
	for n := range SysViews {
		if !added[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range sysViewsAdded {
		if _, ok := SysViews[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

// Topics finds a topic by name (the planner's Catalog is one).
type Topics interface {
	Topic(name string) (topicstore.TopicInfo, error)
}

// RegclassOID resolves a relation name, as 'name'::regclass does: an
// optionally schema-qualified (pg_catalog, public or sys) topic, system
// view or catalog table; a name without a schema is looked up on the
// search path (pg_catalog, then public). A bare number is an OID.
func RegclassOID(topics Topics, s string) (int64, error) {
	if n, err := values.ParseText(s, values.TInt8); err == nil {
		return n.(int64), nil
	}
	schema, name, qualified := strings.Cut(s, ".")
	if !qualified {
		schema, name = "", s
	}
	unquote := func(x string) string {
		if len(x) >= 2 && x[0] == '"' && x[len(x)-1] == '"' {
			return strings.ReplaceAll(x[1:len(x)-1], `""`, `"`)
		}
		return strings.ToLower(x)
	}
	schema, name = unquote(schema), unquote(name)
	if schema == "" || schema == "pg_catalog" {
		if oid, ok := PgCatalogOIDs[name]; ok {
			return oid, nil
		}
	}
	if schema == "sys" {
		for i, v := range SysViewNames() {
			if v == name {
				return int64(OIDSysViews + i), nil
			}
		}
	}
	if schema == "" || schema == "public" {
		if ti, err := topics.Topic(name); err == nil {
			return int64(OIDFirstTopic) + int64(ti.ID), nil
		}
	}
	return 0, pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"%s\" does not exist", s)
}
