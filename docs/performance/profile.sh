#!/usr/bin/env bash
# profile.sh WORKLOAD [DELAY [SECONDS]] [run.sh args...]
#
# Profiles the server during one tg-only run of a bench workload: builds
# ./cmd/topicgate, starts it through ../shared/bench/run.sh with --http and
# --contention-profiles, waits DELAY seconds (default 4: past the start and a
# drain workload's prefill), then takes SECONDS (default 8) of CPU, block and
# mutex profiles and an execution trace, and the /metrics text at the end of
# that window. Everything lands in ./profiles/WORKLOAD/; read it with
#   go tool pprof -top profiles/WORKLOAD/server profiles/WORKLOAD/cpu.pb.gz
#   go tool pprof -top -cum profiles/WORKLOAD/server profiles/WORKLOAD/block.pb.gz
#   python3 docs/performance/insert-path.py <(go tool trace -d=parsed profiles/WORKLOAD/trace.out)
# (the last for an INSERT workload). Run from the checkout; bench flags after
# the numbers go to run.sh, e.g.: profile.sh queue 4 8 --messages 400000
set -euo pipefail
DEFAULT_DELAY=4 DEFAULT_SECS=8 SERVER_FLAGS=--contention-profiles
source "$(dirname "$0")/benchserver.sh"
sleep "$delay"
curl -sf "http://$http/debug/pprof/profile?seconds=$secs" -o "$out/cpu.pb.gz" &
cpu=$!
curl -sf "http://$http/debug/pprof/block?seconds=$secs" -o "$out/block.pb.gz" &
curl -sf "http://$http/debug/pprof/mutex?seconds=$secs" -o "$out/mutex.pb.gz" &
wait $cpu || echo "profile.sh: no CPU profile (did the workload end before the window?)" >&2
curl -sf "http://$http/debug/pprof/trace?seconds=1" -o "$out/trace.out" || true
curl -sf "http://$http/metrics" -o "$out/metrics.txt" || true
wait $bench || true
grep -E "^ *$w +tg" "$out/bench.txt" || tail -5 "$out/bench.txt"
echo "profiles in $out/"
