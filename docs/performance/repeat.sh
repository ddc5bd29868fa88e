#!/usr/bin/env bash
# repeat.sh WORKLOAD N [harness args...]
#
# Runs one bench workload N times against one server, to tell a fresh
# server's first run from the later ones (a fresh process faults its
# memtables, C heap and Go heap in while it runs; see limits.md). Builds
# ./cmd/topicgate into profiles/repeat/server, or runs SERVER instead: a
# command that takes --listen ADDR --data-dir DIR, e.g.
#   SERVER="/tmp/tg-floor -pebble" docs/performance/repeat.sh rpw 3
# starts it once on a fresh data directory, runs the bench harness
# (../shared/bench, tg only, --messages 400000 unless given) against it N
# times, and prints for each run the harness's msgs/s, the server's CPU
# seconds and minor page faults over the run (/proc/PID/stat) and, for
# topicgate, its WAL fsyncs and their mean time (/metrics). Run from the
# checkout, with nothing else running.
set -euo pipefail
w=${1:?workload} n=${2:?runs}
shift 2
out=profiles/repeat
mkdir -p "$out"
(cd ../shared/bench && go build -o "$OLDPWD/$out/bench" .)
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(freeport)
data=$(mktemp -d)
http=
if [[ -z ${SERVER:-} ]]; then
	go build -o "$out/server" ./cmd/topicgate
	http=127.0.0.1:$(freeport)
	"$out/server" serve --listen "127.0.0.1:$port" --data-dir "$data" --http "$http" >"$out/server.log" 2>&1 &
else
	$SERVER --listen "127.0.0.1:$port" --data-dir "$data" >"$out/server.log" 2>&1 &
fi
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 50); do
	pg_isready -q -h 127.0.0.1 -p "$port" 2>/dev/null && break
	sleep 0.2
done
stat() { awk '{print $10, $14 + $15}' "/proc/$server/stat"; } # minor faults, CPU ticks
wal() {
	[[ -n $http ]] || { echo "0 0"; return; }
	curl -sf "http://$http/metrics" | awk '/^topicgate_store_wal_syncs_total /{n=$2} /^topicgate_store_wal_sync_seconds_total /{t=$2} END {print n+0, t+0}'
}
args=("$@")
[[ " $* " == *" --messages "* ]] || args+=(--messages 400000)
tick=$(getconf CLK_TCK)
for i in $(seq "$n"); do
	read -r f0 c0 <<<"$(stat)"
	read -r s0 t0 <<<"$(wal)"
	rate=$("$out/bench" --target tg --tg "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable" \
		--workload "$w" "${args[@]}" 2>&1 | awk -v w="$w" '$1 == w && $2 == "tg" {print $3}')
	read -r f1 c1 <<<"$(stat)"
	read -r s1 t1 <<<"$(wal)"
	awk -v i="$i" -v r="${rate:-failed}" -v f=$((f1 - f0)) -v c=$((c1 - c0)) -v k="$tick" \
		-v s=$((s1 - s0)) -v t="$t0 $t1" 'BEGIN {
		split(t, a, " "); mean = s > 0 ? (a[2] - a[1]) / s * 1e6 : 0
		printf "run %d: %s msgs/s, server CPU %.2f s, minor faults %d", i, r, c / k, f
		if (s > 0) printf ", WAL fsyncs %d (mean %.0f us)", s, mean
		printf "\n" }'
done
