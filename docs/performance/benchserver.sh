# benchserver.sh is sourced by profile.sh and allocs.sh: it reads
# WORKLOAD [DELAY [SECONDS]] from the script's arguments (setting w, delay
# and secs; defaults DEFAULT_DELAY and DEFAULT_SECS), builds ./cmd/topicgate
# into profiles/WORKLOAD/server (out), and starts one tg-only run of the
# workload against it through ../shared/bench/run.sh with --http on a free
# port (http) and SERVER_FLAGS, the remaining arguments going to run.sh;
# bench is the run's pid, its output in $out/bench.txt.
w=${1:?workload}; shift
delay=${DEFAULT_DELAY:-5} secs=${DEFAULT_SECS:-5}
if [[ ${1:-} =~ ^[0-9]+$ ]]; then delay=$1; shift; fi
if [[ ${1:-} =~ ^[0-9]+$ ]]; then secs=$1; shift; fi
out=profiles/$w
mkdir -p "$out"
go build -o "$out/server" ./cmd/topicgate
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
http=127.0.0.1:$port
TG_CMD="$PWD/$out/server serve --listen \$TG_LISTEN --data-dir \$TG_DATA_DIR --http $http ${SERVER_FLAGS:-}" \
	../shared/bench/run.sh --target tg --workload "$w" "$@" >"$out/bench.txt" 2>&1 &
bench=$!
