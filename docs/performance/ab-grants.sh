#!/usr/bin/env bash
# ab-grants.sh — ab.sh's alternation with the bench's user ("postgres") as a
# plain role instead of the bootstrap superuser, to measure what the
# privilege checks cost (issue 27's budget: at most 2% on ingest-1, consume
# and queue). B is the working tree; A is --base (default HEAD~1). Each
# topicgate first starts on a side port with a bootstrap user "admin", which
# creates the role postgres (LOGIN, CREATE on schema public: it owns the
# topics the bench creates), then restarts on the bench's port. A build
# without roles refuses CREATE ROLE and runs the bench as before.
#
#   docs/performance/ab-grants.sh [--rounds N] [--base REV] [run.sh args...]
set -euo pipefail
rounds=3 base=HEAD~1 args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -gt 0 ] || args=(--workload ingest-1,consume,queue --duration 8s)
proj=$(pwd) bench=$(cd "$proj/../shared/bench" && pwd)
pgbin=/usr/lib/postgresql/15/bin
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-abg.XXXXXX")
trap 'git -C "$proj" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/base" "$(git rev-parse "$base")" >/dev/null 2>&1
(cd "$tmp/base" && go build -o "$tmp/A" ./cmd/topicgate)
go build -o "$tmp/B" ./cmd/topicgate
cat >"$tmp/serve" <<'SH'
#!/usr/bin/env bash
set -e
bin=$1
side=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --listen 127.0.0.1:$side --data-dir "$TG_DATA_DIR" --auth trust --user admin:pw &
pid=$!
until /usr/lib/postgresql/15/bin/pg_isready -q -h 127.0.0.1 -p $side; do sleep 0.2; done
/usr/lib/postgresql/15/bin/psql -q "postgres://admin@127.0.0.1:$side/postgres" \
  -c "CREATE ROLE postgres LOGIN" -c "GRANT CREATE ON SCHEMA public TO postgres" >&2 || true
kill $pid; wait $pid || true
exec "$bin" serve --listen "$TG_LISTEN" --data-dir "$TG_DATA_DIR" --auth trust
SH
chmod +x "$tmp/serve"
run() {
  TG_CMD="$tmp/serve $2" PROJECT="$proj" "$bench/run.sh" --target tg "${args[@]}" 2>&1 |
    awk -v l="$1" '$2=="tg" && $3+0>0 {print l, $1, $3, $5, $6; fflush()}'
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run A "$tmp/A"; run B "$tmp/B"; else run B "$tmp/B"; run A "$tmp/A"; fi
done | tee "$tmp/runs"
echo
echo "workload       A msgs/s    B msgs/s    B/A    (means over $rounds rounds)"
awk '{s[$1" "$2]+=$3; n[$1" "$2]++; w[$2]=1} END {for (k in w) printf "%-12s %11.1f %11.1f   %.2f\n", k, s["A "k]/n["A "k], s["B "k]/n["B "k], (s["B "k]/n["B "k])/(s["A "k]/n["A "k])}' "$tmp/runs" | sort
