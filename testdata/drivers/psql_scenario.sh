#!/usr/bin/env bash
# psql scenario: the simple query protocol, psql variables (:'v', client-side
# interpolation), BEGIN/COMMIT/ROLLBACK in one session, inline COPY FROM
# STDIN data, \copy ... TO STDOUT, and VERBOSITY sqlstate for errors.
set -u
P=${TOPICGATE_PREFIX:-drv_psql_$$_$(date +%s)_}
# TOPICGATE_PASSWORD unset: the server trusts.
[ -n "${TOPICGATE_PASSWORD:-}" ] && export PGPASSWORD=$TOPICGATE_PASSWORD
PSQL=(psql -X -w -h "${TOPICGATE_HOST:-127.0.0.1}" -p "${TOPICGATE_PORT:-5433}" -U "${TOPICGATE_USER:-postgres}" -d postgres -v ON_ERROR_STOP=1)
passed=0
failed=()

ok() { passed=$((passed + 1)); echo "ok $1: $2"; }
fail() { failed+=("$1"); echo "FAIL $1: $2"; }

# check NAME WANT DETAIL [psql options]: runs psql -At (with the script on
# stdin unless the options give -c) and compares what it printed, stdout
# and stderr (NOTICEs, errors) together, with WANT.
check() {
	local name=$1 want=$2 detail=$3
	shift 3
	local got
	got=$("${PSQL[@]}" -At "$@" 2>&1)
	if [ "$got" == "$want" ]; then
		ok "$name" "$detail"
	else
		fail "$name" "got $(printf '%q' "$got"), want $(printf '%q' "$want")"
	fi
}

echo "version psql $(psql --version | awk '{print $3}')"

check connect "1" "SELECT 1" -c "SELECT 1"

check create_topics $'CREATE TOPIC\nCREATE TOPIC\nCREATE TOPIC\nCREATE TOPIC' "4 topics" <<SQL
CREATE TOPIC ${P}in (CONSUMER c);
CREATE TOPIC ${P}out;
CREATE TOPIC ${P}bin;
CREATE TOPIC ${P}copy;
SQL

check insert_params $'INSERT 0 1\nINSERT 0 1\nINSERT 0 1\nINSERT 0 1\nINSERT 0 1\nNOTICE:  skipped 1 duplicate message(s): seqno not above the producer\'s last stored seqno\nINSERT 0 0\nINSERT 0 5\nNOTICE:  skipped 2 duplicate message(s): seqno not above the producer\'s last stored seqno\nINSERT 0 0' \
	"psql variables: 5 inserts, duplicate INSERT 0 0, a multi-row INSERT, a multi-row duplicate" <<SQL
\set prod 'prod'
\set attrs '{"k":"v"}'
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES (:'prod', 1, 'm1', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES (:'prod', 2, 'm2', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES (:'prod', 3, 'm3', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES (:'prod', 4, 'm4', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES (:'prod', 5, 'm5', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES (:'prod', 3, 'dup', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES
  (:'prod', 6, 'm6', :'attrs'), (:'prod', 7, 'm7', :'attrs'), (:'prod', 8, 'm8', :'attrs'),
  (:'prod', 9, 'm9', :'attrs'), (:'prod', 10, 'm10', :'attrs');
INSERT INTO ${P}in (producer_id, seqno, data) VALUES (:'prod', 6, 'dup'), (:'prod', 7, 'dup');
SQL

hex256=""
for i in $(seq 0 255); do printf -v h '%02x' "$i"; hex256+=$h; done
hex=""
for i in $(seq 256); do hex+=$hex256; done
check bytea_roundtrip $'INSERT 0 1\nt|65536\n\\x'"$hex" "65536 bytes as a '\\x...' literal, read back as text" <<SQL
INSERT INTO ${P}bin (data) VALUES ('\\x${hex}');
SELECT encode(data, 'hex') = '${hex}', length(data) FROM ${P}bin;
SELECT data FROM ${P}bin;
SQL

check jsonb_attrs '{"k": "v"}|v|jsonb' "attrs and attrs->>'k'" \
	-c "SELECT attrs, attrs->>'k', pg_typeof(attrs) FROM ${P}in WHERE seqno = 1"

want=""
for i in $(seq 1 10); do want+="$i|m$i"$'\n'; done
check stateless_read "${want%$'\n'}"$'\n7\n8' "10 rows in order; WHERE/LIMIT" <<SQL
SELECT seqno, convert_from(data, 'UTF8') FROM ${P}in ORDER BY offset;
SELECT offset FROM ${P}in WHERE offset >= 7 ORDER BY offset LIMIT 2;
SQL

# Each check is a new psql session, so a new read session of consumer c:
# WAIT covers the moment until the previous session's partition is handed
# over (with messages available a WAIT read returns at once).
check consumer_read $'0|\\x6d31\n1|\\x6d32\n2|\\x6d33\n3|\\x6d34\n4|\\x6d35\n5|\\x6d36' "offsets 0-2 then 3-5" <<SQL
SELECT offset, data FROM ${P}in WITH (CONSUMER = c, WAIT = '5s') LIMIT 3;
SELECT offset, data FROM ${P}in WITH (CONSUMER = c, WAIT = '5s') LIMIT 3;
SQL

check rpw_txn $'BEGIN\n6|m7\n7|m8\nINSERT 0 2\nCOMMIT\n6|M7\n7|M8' "BEGIN; consumer read; INSERT; COMMIT" <<SQL
BEGIN;
SELECT offset, convert_from(data, 'UTF8') FROM ${P}in WITH (CONSUMER = c, WAIT = '5s') LIMIT 2;
INSERT INTO ${P}out (producer_id, seqno, data) VALUES ('rpw', 6, 'M7'), ('rpw', 7, 'M8');
COMMIT;
SELECT seqno, convert_from(data, 'UTF8') FROM ${P}out ORDER BY offset;
SQL

check rollback_rewind $'BEGIN\n8|m9\n9|m10\nINSERT 0 1\nROLLBACK\n8|m9\n9|m10\n2' "8-9 read again, nothing written" <<SQL
BEGIN;
SELECT offset, convert_from(data, 'UTF8') FROM ${P}in WITH (CONSUMER = c, WAIT = '5s') LIMIT 2;
INSERT INTO ${P}out (data) VALUES ('never');
ROLLBACK;
SELECT offset, convert_from(data, 'UTF8') FROM ${P}in WITH (CONSUMER = c, WAIT = '5s') LIMIT 10;
SELECT count(*) FROM ${P}out;
SQL

check copy_in $'NOTICE:  skipped 1 duplicate message(s): seqno not above the producer\'s last stored seqno\nCOPY 2\n1|c1\n2|c2' "COPY FROM STDIN with inline data, duplicate skipped" <<SQL
COPY ${P}copy (producer_id, seqno, data) FROM STDIN;
cp	1	c1
cp	2	c2
cp	2	dup
\\.
SELECT seqno, convert_from(data, 'UTF8') FROM ${P}copy ORDER BY offset;
SQL

check copy_out $'1,c1\n2,c2' "\\copy (SELECT ...) TO STDOUT csv" \
	-c "\\copy (SELECT seqno, convert_from(data, 'UTF8') FROM ${P}copy ORDER BY offset) TO STDOUT csv"

# Errors: VERBOSITY sqlstate prints "ERROR:  <code>"; ON_ERROR_STOP off so
# the SELECT 1 after it runs in the same session.
err() {
	local name=$1 code=$2 sql=$3
	check "$name" $'ERROR:  '"$code"$'\n1' "$code, then SELECT 1" -v ON_ERROR_STOP=0 <<SQL
\\set VERBOSITY sqlstate
$sql
SELECT 1;
SQL
}
err error_42601 42601 "SELEC 1;"
err error_42P01 42P01 "SELECT * FROM ${P}missing;"
err error_22012 22012 "SELECT 1/0;"
err error_bad_param 22P02 "SELECT offset FROM ${P}in WHERE seqno = 'abc';"
check error_copy $'ERROR:  22P02\n1' "22P02 from a COPY row, then SELECT 1" -v ON_ERROR_STOP=0 <<SQL
\\set VERBOSITY sqlstate
COPY ${P}copy (producer_id, seqno, data) FROM STDIN;
cp	abc	bad
\\.
SELECT 1;
SQL
# One Query message with two statements is one implicit transaction in
# PostgreSQL: the error rolls the INSERT back (psql 15 still prints its tag).
check error_multi_statement $'INSERT 0 1\nERROR:  22012\n0' "22012 in a two-statement query rolls back its INSERT" -v ON_ERROR_STOP=0 \
	-c "\\set VERBOSITY sqlstate" -c "INSERT INTO ${P}out (producer_id, data) VALUES ('multi', 'x'); SELECT 1/0;" \
	-c "SELECT count(*) FROM ${P}out WHERE producer_id = 'multi'"
check error_25P02 $'BEGIN\nERROR:  22012\nERROR:  25P02\nROLLBACK\n1' "22012, 25P02, ROLLBACK, SELECT 1" -v ON_ERROR_STOP=0 <<SQL
\\set VERBOSITY sqlstate
BEGIN;
SELECT 1/0;
SELECT 1;
ROLLBACK;
SELECT 1;
SQL

# The roles_* checks (README.md): a role with INSERT and not SELECT on a
# topic, logged in with psql -U and its password (PGPASSWORD).
ROLE=${P}writer
GRANTED=${P}granted
ROLE_PASSWORD=writer-pw
# as_role PASSWORD CHECK-ARGS...: check, logged in as ROLE with PASSWORD.
as_role() {
	local -x PGPASSWORD=$1
	shift
	check "$@" -U "$ROLE"
}
check roles_grant $'CREATE ROLE\nCREATE TOPIC\nGRANT' "CREATE ROLE ${ROLE} LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC" <<SQL
CREATE ROLE ${ROLE} LOGIN PASSWORD '${ROLE_PASSWORD}';
CREATE TOPIC ${GRANTED};
GRANT INSERT ON TOPIC ${GRANTED} TO ${ROLE};
SQL
as_role "$ROLE_PASSWORD" roles_login "$ROLE" "psql -U as the role (SCRAM-SHA-256), current_user ${ROLE}" -c "SELECT current_user"
# psql 15 has no \bind: a psql variable is its parameter path.
got=$(PGPASSWORD=$ROLE_PASSWORD "${PSQL[@]}" -At -U "$ROLE" 2>&1 <<SQL
\\set msg 'by-role'
INSERT INTO ${GRANTED} (data) VALUES (:'msg');
SQL
)
got+=$'\n'$("${PSQL[@]}" -At -c "SELECT convert_from(data, 'UTF8') FROM ${GRANTED}" 2>&1)
if [ "$got" == $'INSERT 0 1\nby-role' ]; then
	ok roles_insert "INSERT with a psql variable as the role: INSERT 0 1; read back as the bootstrap user"
else
	fail roles_insert "got $(printf '%q' "$got"), want $(printf '%q' $'INSERT 0 1\nby-role')"
fi
as_role "$ROLE_PASSWORD" roles_denied $'ERROR:  permission denied for topic '"${GRANTED}"$'\n42501\n1' \
	"42501 permission denied for topic ${GRANTED} (:LAST_ERROR_SQLSTATE), SELECT 1" -v ON_ERROR_STOP=0 <<SQL
\\set VERBOSITY terse
SELECT data FROM ${GRANTED} WHERE offset >= 0;
\\echo :LAST_ERROR_SQLSTATE
SELECT 1;
SQL
# psql prints no SQLSTATE for a failed connection (libpq has none): the message.
got=$(PGPASSWORD=wrong-pw "${PSQL[@]}" -At -U "$ROLE" -c "SELECT 1" 2>&1)
want="FATAL:  password authentication failed for user \"${ROLE}\""
if [[ "$got" == *"$want" ]]; then
	ok roles_bad_password "'password authentication failed for user \"${ROLE}\"' (no SQLSTATE: libpq has none for a failed connection)"
else
	fail roles_bad_password "got $(printf '%q' "$got"), want it to end with $(printf '%q' "$want")"
fi

echo "summary psql: $passed checks ok, ${#failed[@]} failed${failed:+ (${failed[*]})}"
[ ${#failed[@]} -eq 0 ]
