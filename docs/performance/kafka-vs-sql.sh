#!/usr/bin/env bash
# kafka-vs-sql.sh [kafkaload flags...]
#
# The Kafka door against the SQL door on one server (issue 28: the Kafka
# door's produce should reach the SQL door's ingest-batch rate, its fetch
# the consume rate). Builds ./cmd/topicgate and ./cmd/kafkaload, starts one
# topicgate on a fresh data dir with --kafka-listen, runs
# ../shared/bench/run.sh's ingest-batch and consume against it (--target tg
# with TG_DSN set, so run.sh starts no server of its own), then kafkaload's
# produce and fetch with the same clients, size, batch (100) and message
# count, back to back, and prints the kafka/sql ratios of msgs/s.
#
# Environment: MESSAGES (default 200000: consume's prefill and produce's
# count), DURATION (ingest-batch's, default 10s), CLIENTS (16), SIZE (100),
# BENCH (default ../shared/bench beside the checkout), OUT (a directory to
# keep sql.json, kafka.json and the server's log in), TMPDIR. Flags go to
# kafkaload, e.g. --linger 5ms. Run from the checkout.
set -euo pipefail

PROJECT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH=${BENCH:-$PROJECT/../shared/bench}
MESSAGES=${MESSAGES:-200000}
DURATION=${DURATION:-10s}
CLIENTS=${CLIENTS:-16}
SIZE=${SIZE:-100}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kafka-vs-sql.XXXXXX")
TG_PID=""
cleanup() {
	local rc=$?
	set +e
	if [[ -n $TG_PID ]]; then
		kill -TERM "$TG_PID" 2>/dev/null && wait "$TG_PID" 2>/dev/null
	fi
	if [[ -n ${OUT:-} ]]; then
		mkdir -p "$OUT"
		cp "$WORK"/*.json "$WORK/topicgate.log" "$OUT/" 2>/dev/null
	fi
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT

cd "$PROJECT"
go build -o "$WORK/topicgate" ./cmd/topicgate
go build -o "$WORK/kafkaload" ./cmd/kafkaload

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
accepting() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pg=$(free_port)
kp=$(free_port)
"$WORK/topicgate" serve --listen "127.0.0.1:$pg" --kafka-listen "127.0.0.1:$kp" --data-dir "$WORK/data" \
	>"$WORK/topicgate.log" 2>&1 </dev/null &
TG_PID=$!
for _ in $(seq 1 600); do
	accepting "$pg" && accepting "$kp" && break
	kill -0 "$TG_PID" 2>/dev/null || { cat "$WORK/topicgate.log" >&2; exit 1; }
	sleep 0.1
done
accepting "$kp" || { echo "kafka-vs-sql.sh: topicgate not accepting after 60s" >&2; exit 1; }
echo "topicgate $(git rev-parse --short HEAD): SQL on 127.0.0.1:$pg, Kafka on 127.0.0.1:$kp, data in $WORK/data"
echo

rc=0
TG_DSN="postgres://postgres@127.0.0.1:$pg/postgres?sslmode=disable" "$BENCH/run.sh" --target tg \
	--workload ingest-batch,consume --clients "$CLIENTS" --size "$SIZE" \
	--messages "$MESSAGES" --duration "$DURATION" --json "$WORK/sql.json" || rc=1
echo
"$WORK/kafkaload" --brokers "127.0.0.1:$kp" --workload produce,fetch --clients "$CLIENTS" --size "$SIZE" \
	--messages "$MESSAGES" --batch 100 --json "$WORK/kafka.json" "$@" || rc=1
echo

rate() { jq -r --arg w "$2" '[.results[] | select(.workload == $w and .ok)][0].msgs_per_s // empty' "$WORK/$1" 2>/dev/null; }
ratio() { # kafka workload, sql workload
	local k s
	k=$(rate kafka.json "$1")
	s=$(rate sql.json "$2")
	if [[ -z $k || -z $s ]]; then
		echo "RATIO $1/$2 kafka/sql=n/a (a side failed)"
		return
	fi
	awk -v k="$k" -v s="$s" -v a="$1" -v b="$2" \
		'BEGIN { printf "RATIO %s/%s kafka/sql=%.2f (kafka %.0f msgs/s, sql %.0f)\n", a, b, k / s, k, s }'
}
ratio produce ingest-batch
ratio fetch consume
exit "$rc"
