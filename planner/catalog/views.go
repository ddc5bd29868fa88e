package catalog

import (
	"strings"

	"topicgate/sql/values"
)

// SysView describes a system view's columns; the executor produces rows.
type SysView struct {
	Names []string
	Types []values.Type
	// Shown, when not zero, is how many of Names SELECT * lists: a
	// pg_catalog table's last column is its system column tableoid,
	// which a query reaches only by name (psql's \dL and \dd join
	// pg_description on it).
	Shown int
}

// Star is how many columns SELECT * lists.
func (v SysView) Star() int {
	if v.Shown > 0 {
		return v.Shown
	}
	return len(v.Names)
}

// PgCatalogViews are the pg_catalog tables psql 15's describe commands
// (\d, \d+, \dt, \dv, \dn+, \l+, \du, \df, \di) and its tab completion
// read, with the columns those queries use (see pgCatalogSpec). Topics are
// tables of the public schema; the sys views are views of a sys schema.
// Tables topicgate has nothing for (policies, publications, inheritance,
// rules, indexes, ...) exist with no rows, so the queries psql sends for
// every table plan and return nothing, as for a table without them.
var PgCatalogViews = map[string]SysView{}

// pgCatalogSpec lists each table's columns as name:type.
var pgCatalogSpec = map[string]string{
	"pg_namespace": "oid:oid nspname:name nspowner:oid nspacl:text[]",
	"pg_class": "oid:oid relname:name relnamespace:oid relkind:char relowner:oid relam:oid reltuples:float8 " +
		"relpersistence:char relchecks:int2 relhasindex:bool relhasrules:bool relhastriggers:bool " +
		"relrowsecurity:bool relforcerowsecurity:bool relispartition:bool reltablespace:oid reloftype:oid " +
		"relreplident:char reltoastrelid:oid reloptions:text[] relpartbound:text reltype:oid relnatts:int2 " +
		"relpages:int4 relhassubclass:bool relisshared:bool relacl:text[]",
	"pg_am": "oid:oid amname:name amtype:char",
	"pg_database": "oid:oid datname:name datdba:oid encoding:int4 datcollate:text datctype:text daticulocale:text " +
		"datlocprovider:char datacl:text[] dattablespace:oid datistemplate:bool datallowconn:bool datconnlimit:int4",
	"pg_attribute": "attrelid:oid attname:name atttypid:oid atttypmod:int4 attnum:int2 attnotnull:bool atthasdef:bool " +
		"attisdropped:bool attcollation:oid attidentity:char attgenerated:char attstorage:char attcompression:char " +
		"attstattarget:int4 attlen:int2 attndims:int4 attislocal:bool attinhcount:int4 atthasmissing:bool attacl:text[]",
	"pg_attrdef": "oid:oid adrelid:oid adnum:int2 adbin:text",
	"pg_type": "oid:oid typname:name typnamespace:oid typowner:oid typlen:int2 typbyval:bool typtype:char " +
		"typcategory:char typisdefined:bool typdelim:char typrelid:oid typelem:oid typarray:oid typnotnull:bool " +
		"typbasetype:oid typtypmod:int4 typndims:int4 typcollation:oid typinput:oid typdefault:text typacl:text[]",
	"pg_collation": "oid:oid collname:name collnamespace:oid collowner:oid collprovider:char " +
		"collisdeterministic:bool collencoding:int4 collcollate:text collctype:text colliculocale:text",
	"pg_roles": "oid:oid rolname:name rolsuper:bool rolinherit:bool rolcreaterole:bool rolcreatedb:bool " +
		"rolcanlogin:bool rolreplication:bool rolconnlimit:int4 rolpassword:text rolvaliduntil:timestamptz " +
		"rolbypassrls:bool rolconfig:text[]",
	"pg_auth_members": "roleid:oid member:oid grantor:oid admin_option:bool",
	"pg_tablespace":   "oid:oid spcname:name spcowner:oid spcacl:text[] spcoptions:text[]",
	"pg_proc": "oid:oid proname:name pronamespace:oid proowner:oid prolang:oid prokind:char prosecdef:bool " +
		"proretset:bool provolatile:char proparallel:char proisstrict:bool pronargs:int2 prorettype:oid proargtypes:oid[] prosrc:text proacl:text[] " +
		"proargnames:text[] proallargtypes:oid[] proargmodes:\"char\"[] proargdefaults:text",
	// pg_depend is empty: topicgate has no extensions or dependent objects.
	"pg_depend": "classid:oid objid:oid objsubid:int4 refclassid:oid refobjid:oid refobjsubid:int4 deptype:char",
	"pg_index": "indexrelid:oid indrelid:oid indnatts:int2 indnkeyatts:int2 indisunique:bool indisprimary:bool " +
		"indisexclusion:bool indimmediate:bool indisclustered:bool indisvalid:bool indisready:bool " +
		"indislive:bool indisreplident:bool indkey:text indexprs:text indpred:text",
	"pg_description":   "objoid:oid classoid:oid objsubid:int4 description:text",
	"pg_shdescription": "objoid:oid classoid:oid description:text",
	"pg_policy": "oid:oid polname:name polrelid:oid polcmd:char polpermissive:bool polroles:oid[] " +
		"polqual:text polwithcheck:text",
	"pg_statistic_ext": "oid:oid stxrelid:oid stxname:name stxnamespace:oid stxowner:oid stxstattarget:int4 " +
		"stxkeys:int2[] stxkind:text[]",
	"pg_publication": "oid:oid pubname:name pubowner:oid puballtables:bool pubinsert:bool pubupdate:bool " +
		"pubdelete:bool pubtruncate:bool pubviaroot:bool",
	"pg_publication_namespace": "oid:oid pnpubid:oid pnnspid:oid",
	"pg_publication_rel":       "oid:oid prpubid:oid prrelid:oid prqual:text prattrs:int2[]",
	"pg_inherits":              "inhrelid:oid inhparent:oid inhseqno:int4 inhdetachpending:bool",
	"pg_rewrite":               "oid:oid rulename:name ev_class:oid ev_type:char ev_enabled:char is_instead:bool ev_qual:text ev_action:text",
	"pg_trigger": "oid:oid tgrelid:oid tgparentid:oid tgname:name tgfoid:oid tgtype:int2 tgenabled:char " +
		"tgisinternal:bool tgconstraint:oid",
	"pg_constraint": "oid:oid conname:name connamespace:oid contype:char condeferrable:bool condeferred:bool " +
		"convalidated:bool conrelid:oid contypid:oid conindid:oid conparentid:oid confrelid:oid conislocal:bool " +
		"conkey:int2[] confkey:int2[]",
	// pg_range has no rows: topicgate has no range types (asyncpg's type
	// introspection joins it).
	"pg_range":     "rngtypid:oid rngsubtype:oid rngmultitypid:oid rngcollation:oid rngsubopc:oid",
	"pg_extension": "oid:oid extname:name extowner:oid extnamespace:oid extrelocatable:bool extversion:text",
	// pg_cursors lists the session's open cursors (psycopg 3 checks it
	// before closing a named cursor).
	"pg_cursors": "name:text statement:text is_holdable:bool is_binary:bool is_scrollable:bool creation_time:timestamptz",
	// pg_settings is the session's run-time parameters (psql's \dconfig).
	// The objects topicgate has none of: operators, conversions, event
	// triggers, text search objects, foreign data, user mappings, large
	// objects, per-database role settings, subscriptions, operator classes
	// and families. Their tables exist with no rows, as in a fresh
	// PostgreSQL database without them (\do, \dc, \dy, \dF*, \de*, \dl,
	// \drds, \dRs, \dd, \dAo, \dAp). pg_cast has no rows either (\dC, see docs/psql-catalog.md).
	"pg_operator": "oid:oid oprname:name oprnamespace:oid oprowner:oid oprkind:char oprcanmerge:bool " +
		"oprcanhash:bool oprleft:oid oprright:oid oprresult:oid oprcom:oid oprnegate:oid oprcode:oid " +
		"oprrest:oid oprjoin:oid",
	"pg_cast":       "oid:oid castsource:oid casttarget:oid castfunc:oid castcontext:char castmethod:char",
	"pg_conversion": "oid:oid conname:name connamespace:oid conowner:oid conforencoding:int4 contoencoding:int4 conproc:oid condefault:bool",
	// pg_language has the one language topicgate's functions are in:
	// internal (compiled into the server); no procedural language, so
	// \dL lists none.
	"pg_language": "oid:oid lanname:name lanowner:oid lanispl:bool lanpltrusted:bool lanplcallfoid:oid " +
		"laninline:oid lanvalidator:oid lanacl:text[]",
	"pg_event_trigger": "oid:oid evtname:name evtevent:name evtowner:oid evtfoid:oid evtenabled:char evttags:text[]",
	"pg_ts_config":     "oid:oid cfgname:name cfgnamespace:oid cfgowner:oid cfgparser:oid",
	"pg_ts_dict":       "oid:oid dictname:name dictnamespace:oid dictowner:oid dicttemplate:oid dictinitoption:text",
	"pg_ts_parser": "oid:oid prsname:name prsnamespace:oid prsstart:oid prstoken:oid prsend:oid prsheadline:oid " +
		"prslextype:oid",
	"pg_ts_template": "oid:oid tmplname:name tmplnamespace:oid tmplinit:oid tmpllexize:oid",
	"pg_foreign_data_wrapper": "oid:oid fdwname:name fdwowner:oid fdwhandler:oid fdwvalidator:oid fdwacl:text[] " +
		"fdwoptions:text[]",
	"pg_foreign_server": "oid:oid srvname:name srvowner:oid srvfdw:oid srvtype:text srvversion:text srvacl:text[] " +
		"srvoptions:text[]",
	"pg_foreign_table":        "ftrelid:oid ftserver:oid ftoptions:text[]",
	"pg_user_mappings":        "umid:oid srvid:oid srvname:name umuser:oid usename:name umoptions:text[]",
	"pg_largeobject_metadata": "oid:oid lomowner:oid lomacl:text[]",
	"pg_db_role_setting":      "setdatabase:oid setrole:oid setconfig:text[]",
	"pg_subscription": "oid:oid subdbid:oid subname:name subowner:oid subenabled:bool subbinary:bool " +
		"substream:bool subtwophasestate:char subdisableonerr:bool subconninfo:text subslotname:name " +
		"subsynccommit:text subpublications:text[] subskiplsn:text",
	"pg_opclass": "oid:oid opcmethod:oid opcname:name opcnamespace:oid opcowner:oid opcfamily:oid opcintype:oid " +
		"opcdefault:bool opckeytype:oid",
	"pg_opfamily": "oid:oid opfmethod:oid opfname:name opfnamespace:oid opfowner:oid",
	"pg_amop": "oid:oid amopfamily:oid amoplefttype:oid amoprighttype:oid amopstrategy:int2 amoppurpose:char " +
		"amopopr:oid amopmethod:oid amopsortfamily:oid",
	"pg_amproc": "oid:oid amprocfamily:oid amproclefttype:oid amprocrighttype:oid amprocnum:int2 amproc:oid",
	// pg_default_acl: ALTER DEFAULT PRIVILEGES' entries (\ddp), a
	// consumer's as a sequence's ('S').
	"pg_default_acl": "oid:oid defaclrole:oid defaclnamespace:oid defaclobjtype:char defaclacl:text[]",
	"pg_settings": "name:text setting:text unit:text category:text short_desc:text extra_desc:text context:text " +
		"vartype:text source:text min_val:text max_val:text boot_val:text reset_val:text pending_restart:bool",
}

// PgCatalogIsView marks the pg_catalog relations that are views in
// PostgreSQL (relkind 'v', no tableoid).
var PgCatalogIsView = map[string]bool{"pg_roles": true, "pg_user_mappings": true, "pg_settings": true, "pg_cursors": true}

func init() {
	for table, spec := range pgCatalogSpec {
		var v SysView
		for _, col := range strings.Fields(spec) {
			name, typ, _ := strings.Cut(col, ":")
			t, ok := values.TypeFromName(typ)
			if typ == "char" {
				t, ok = values.TChar, true
			}
			if !ok {
				panic("pg_catalog." + table + "." + name + ": unknown type " + typ)
			}
			v.Names = append(v.Names, name)
			v.Types = append(v.Types, t)
		}
		if !PgCatalogIsView[table] {
			v.Shown = len(v.Names)
			v.Names = append(v.Names, "tableoid")
			v.Types = append(v.Types, values.TOid)
		}
		PgCatalogViews[table] = v
	}
	// pg_authid is pg_roles (without the password masking).
	PgCatalogViews["pg_authid"] = PgCatalogViews["pg_roles"]
}

// SysViews are the views under the sys schema.
var SysViews = map[string]SysView{
	"topics": {
		Names: []string{"topic", "partitions", "active_partitions", "min_active_partitions", "max_active_partitions",
			"retention_period", "retention_storage_mb", "supported_codecs", "partition_write_speed_bytes_per_second",
			"auto_partitioning_strategy", "consumers", "messages", "bytes", "created_at",
			"partition_write_burst_bytes", "metering_mode", "auto_partitioning_up_utilization_percent",
			"auto_partitioning_down_utilization_percent", "auto_partitioning_stabilization_window", "producer_inactivity_period"},
		Types: []values.Type{values.TText, values.TInt8, values.TInt8, values.TInt8, values.TInt8, values.TInterval, values.TInt8, values.TText, values.TInt8, values.TText, values.TText, values.TInt8, values.TInt8, values.TTimestamptz,
			values.TInt8, values.TText, values.TInt8, values.TInt8, values.TInterval, values.TInterval},
	},
	"partitions": {
		Names: []string{"topic", "partition", "active", "start_offset", "end_offset", "messages", "bytes", "last_write_at",
			"state", "parent", "children", "key_from", "key_to", "write_rate", "utilization", "throttled_seconds"},
		Types: []values.Type{values.TText, values.TInt8, values.TBool, values.TInt8, values.TInt8, values.TInt8, values.TInt8, values.TTimestamptz,
			values.TText, values.TInt8, values.TInt8Array, values.TText, values.TText, values.TFloat8, values.TFloat8, values.TFloat8},
	},
	"consumers": {
		Names: []string{"topic", "consumer", "type", "important", "partition", "committed_offset", "end_offset",
			"lag_messages", "lag_time", "read_session", "available", "acquired", "delayed", "archived", "oldest_unacked_age",
			"archived_total", "dead_lettered", "dead_letter_failures", "dead_letter_error", "read_gateway", "kafka_member"},
		Types: []values.Type{values.TText, values.TText, values.TText, values.TBool, values.TInt8, values.TInt8, values.TInt8, values.TInt8, values.TInterval, values.TInt8,
			values.TInt8, values.TInt8, values.TInt8, values.TInt8, values.TInterval, values.TInt8, values.TInt8, values.TInt8, values.TText, values.TText, values.TText},
	},
	// consumer_options is one row per consumer with every consumer option
	// as it is in effect (defaults filled in); the shared-only options are
	// NULL for a streaming consumer.
	"consumer_options": {
		Names: []string{"topic", "consumer", "type", "important", "read_from", "availability_period", "supported_codecs",
			"default_processing_timeout", "max_processing_attempts", "dead_letter_policy", "dead_letter_queue",
			"dead_letter_queue_exists", "keep_messages_order", "receive_message_delay"},
		Types: []values.Type{values.TText, values.TText, values.TText, values.TBool, values.TTimestamptz, values.TInterval, values.TText,
			values.TInterval, values.TInt8, values.TText, values.TText, values.TBool, values.TBool, values.TInterval},
	},
	// consumer_deliveries is a shared consumer's delivery-count
	// histogram: per partition, how many unfinished messages of its
	// window (available, delayed or acquired) were delivered how many
	// times (0: never), a row per count that has messages.
	"consumer_deliveries": {
		Names: []string{"topic", "consumer", "partition", "deliveries", "messages"},
		Types: []values.Type{values.TText, values.TText, values.TInt8, values.TInt8, values.TInt8},
	},
	// consumer_privileges is information_schema.table_privileges for
	// consumers: a row per privilege of each entry of a consumer's access
	// list (its owner's USAGE while it has none), grantee PUBLIC for
	// every role, is_grantable YES or NO.
	"consumer_privileges": {
		Names: []string{"topic", "consumer", "grantee", "grantor", "privilege_type", "is_grantable"},
		Types: []values.Type{values.TText, values.TText, values.TText, values.TText, values.TText, values.TText},
	},
	// sessions are the PostgreSQL door's sessions and the Kafka door's
	// connections (protocol 'postgres' or 'kafka'; a Kafka connection's
	// pid is negative, kafka_api its current or last request's API).
	"sessions": {
		Names: []string{"pid", "user", "database", "application_name", "client_addr", "state", "txn_id", "txn_age",
			"staged_messages", "staged_bytes", "reading", "gateway", "protocol", "backend_start", "kafka_api"},
		Types: []values.Type{values.TInt8, values.TText, values.TText, values.TText, values.TText, values.TText, values.TInt8, values.TInterval, values.TInt8, values.TInt8, values.TText, values.TText,
			values.TText, values.TTimestamptz, values.TText},
	},
	"transactions": {
		Names: []string{"id", "pid", "state", "age", "staged_messages", "staged_bytes", "topics", "reads", "gateway"},
		Types: []values.Type{values.TInt8, values.TInt8, values.TText, values.TInterval, values.TInt8, values.TInt8, values.TText, values.TText, values.TText},
	},
	"producers": {
		Names: []string{"topic", "producer_id", "partition", "max_seqno", "last_write_at"},
		Types: []values.Type{values.TText, values.TText, values.TInt8, values.TInt8, values.TTimestamptz},
	},
	// kafka_producers are the Kafka door's idempotent producers, a row
	// per (producer id, partition) the store still knows, with the epoch
	// and sequence of the last record it stored (package kproducer's
	// mapping read back from sys.producers' rows).
	"kafka_producers": {
		Names: []string{"topic", "producer_id", "partition", "producer_epoch", "last_sequence", "last_write_at"},
		Types: []values.Type{values.TText, values.TInt8, values.TInt8, values.TInt4, values.TInt4, values.TTimestamptz},
	},
	// kafka_groups are the Kafka consumer groups this gateway coordinates
	// (membership is a gateway's own; offsets are the store's consumer
	// positions): a row per member, or one with NULL member columns for a
	// group without members.
	"kafka_groups": {
		Names: []string{"group", "state", "protocol_type", "protocol", "generation", "leader",
			"member_id", "instance_id", "client_id", "client_host", "assignment"},
		Types: []values.Type{values.TText, values.TText, values.TText, values.TText, values.TInt8, values.TText,
			values.TText, values.TText, values.TText, values.TText, values.TText},
	},
	// cluster is the cluster store as this gateway sees it, a row per
	// member: the stream, its nodes (leader, replicas), the gateways
	// alive (this one, the maintenance lease holder). Empty on the
	// embedded store.
	"cluster": {
		Names: []string{"kind", "name", "role", "alive", "lag", "sequence", "detail"},
		Types: []values.Type{values.TText, values.TText, values.TText, values.TBool, values.TInt8, values.TInt8, values.TText},
	},
}

// InfoSchemaViews are the information_schema views topicgate emulates:
// the grants on topics, as PostgreSQL's for tables (a topic is a table of
// schema public; the system catalogs' own grants are not listed).
var InfoSchemaViews = map[string]SysView{}

func init() {
	grants := "grantor:name grantee:name table_catalog:name table_schema:name table_name:name " +
		"privilege_type:text is_grantable:text with_hierarchy:text"
	for _, v := range []string{"table_privileges", "role_table_grants"} {
		var sv SysView
		for _, col := range strings.Fields(grants) {
			name, typ, _ := strings.Cut(col, ":")
			t, _ := values.TypeFromName(typ)
			sv.Names = append(sv.Names, name)
			sv.Types = append(sv.Types, t)
		}
		InfoSchemaViews[v] = sv
	}
}
