package planner

// SysView describes a system view's columns; the executor produces rows.
type SysView struct {
	Names []string
	Types []Type
}

// PgCatalogViews are the few pg_catalog tables psql's \d, \dt, \dn and
// \l read, with the columns those queries use. Topics are tables of the
// public schema; the sys views are views of a sys schema.
var PgCatalogViews = map[string]SysView{
	"pg_namespace": {Names: []string{"oid", "nspname", "nspowner"}, Types: []Type{TOid, TName, TOid}},
	"pg_class": {
		Names: []string{"oid", "relname", "relnamespace", "relkind", "relowner", "relam", "reltuples", "relpersistence"},
		Types: []Type{TOid, TName, TOid, TChar, TOid, TOid, TFloat8, TChar},
	},
	"pg_am": {Names: []string{"oid", "amname"}, Types: []Type{TOid, TName}},
	"pg_database": {
		Names: []string{"oid", "datname", "datdba", "encoding", "datcollate", "datctype", "daticulocale", "datlocprovider", "datacl"},
		Types: []Type{TOid, TName, TOid, TInt4, TText, TText, TText, TChar, TTextArray},
	},
}

// SysViews are the views under the sys schema.
var SysViews = map[string]SysView{
	"topics": {
		Names: []string{"topic", "partitions", "active_partitions", "min_active_partitions", "max_active_partitions",
			"retention_period", "retention_storage_mb", "supported_codecs", "partition_write_speed_bytes_per_second",
			"auto_partitioning_strategy", "consumers", "messages", "bytes", "created_at"},
		Types: []Type{TText, TInt8, TInt8, TInt8, TInt8, TInterval, TInt8, TText, TInt8, TText, TText, TInt8, TInt8, TTimestamptz},
	},
	"partitions": {
		Names: []string{"topic", "partition", "active", "start_offset", "end_offset", "messages", "bytes", "last_write_at"},
		Types: []Type{TText, TInt8, TBool, TInt8, TInt8, TInt8, TInt8, TTimestamptz},
	},
	"consumers": {
		Names: []string{"topic", "consumer", "type", "important", "partition", "committed_offset", "end_offset",
			"lag_messages", "lag_time", "read_session", "available", "acquired", "delayed", "archived", "oldest_unacked_age"},
		Types: []Type{TText, TText, TText, TBool, TInt8, TInt8, TInt8, TInt8, TInterval, TInt8,
			TInt8, TInt8, TInt8, TInt8, TInterval},
	},
	"sessions": {
		Names: []string{"pid", "user", "database", "application_name", "client_addr", "state", "txn_id", "txn_age",
			"staged_messages", "staged_bytes", "reading"},
		Types: []Type{TInt8, TText, TText, TText, TText, TText, TInt8, TInterval, TInt8, TInt8, TText},
	},
	"transactions": {
		Names: []string{"id", "pid", "state", "age", "staged_messages", "staged_bytes", "topics", "reads"},
		Types: []Type{TInt8, TInt8, TText, TInterval, TInt8, TInt8, TText, TText},
	},
	"producers": {
		Names: []string{"topic", "producer_id", "partition", "max_seqno", "last_write_at"},
		Types: []Type{TText, TText, TInt8, TInt8, TTimestamptz},
	},
}
