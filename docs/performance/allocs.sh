#!/usr/bin/env bash
# allocs.sh WORKLOAD [DELAY [SECONDS]] [run.sh args...]
#
# Allocations per message of one tg-only run of a bench workload: builds
# ./cmd/topicgate, starts it through ../shared/bench/run.sh with --http,
# and DELAY seconds in (default 5) takes /debug/pprof/allocs and /metrics,
# then again SECONDS later (default 5). Prints the objects and bytes the
# server allocated in between per message read (the rise of
# topicgate_topic_messages_read_total), and leaves both profiles in
# ./profiles/WORKLOAD/ for
#   go tool pprof -sample_index=alloc_objects -top -diff_base profiles/W/allocs0.pb.gz profiles/W/server profiles/W/allocs1.pb.gz
# The window must lie inside the drain: the prefill's COPY and its count
# come first (rpw with --messages 4000000: a DELAY of 16). Bytes are
# sampled (one sample per 512 KiB), so they move more between runs than
# objects do.
set -euo pipefail
DEFAULT_DELAY=5 DEFAULT_SECS=5
source "$(dirname "$0")/benchserver.sh"
sleep "$delay"
curl -sf "http://$http/debug/pprof/allocs" -o "$out/allocs0.pb.gz"
curl -sf "http://$http/metrics" -o "$out/metrics0.txt"
sleep "$secs"
curl -sf "http://$http/debug/pprof/allocs" -o "$out/allocs1.pb.gz"
curl -sf "http://$http/metrics" -o "$out/metrics1.txt"
wait $bench || true
grep -E "^ *$w +tg" "$out/bench.txt" || tail -5 "$out/bench.txt"
python3 - "$out" <<'PY'
import re, subprocess, sys
d = sys.argv[1]
def read(f):
    return sum(float(l.split()[-1]) for l in open(f) if l.startswith("topicgate_topic_messages_read_total"))
def total(prof, index):
    top = subprocess.run(["go", "tool", "pprof", "-sample_index=" + index, "-top", "-nodecount=1", d + "/server", prof],
                         capture_output=True, text=True).stdout
    m = re.search(r"of ([0-9.]+)([kMG]?B?) total", top)
    scale = {"": 1, "B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
    return float(m.group(1)) * scale
n = read(d + "/metrics1.txt") - read(d + "/metrics0.txt")
if n <= 0:
    sys.exit("allocs.sh: no message read in the window (is it inside the drain?)")
objs = total(d + "/allocs1.pb.gz", "alloc_objects") - total(d + "/allocs0.pb.gz", "alloc_objects")
byts = total(d + "/allocs1.pb.gz", "alloc_space") - total(d + "/allocs0.pb.gz", "alloc_space")
print(f"{n:.0f} messages read in the window: {objs / n:.2f} objects and {byts / n:.0f} bytes allocated per message")
PY
