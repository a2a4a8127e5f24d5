#!/usr/bin/env bash
# An independent reading of a service's CPU per request at one rate, to
# hold the scorecard's figure against: a fresh `showdown up` of the
# service pinned to CPU 0 from its first instruction (taskset on the
# whole command), warmed for WARM seconds, then RUNS pairs of 10 s runs
# at RATE on CPU 1, alternating two load tools, `showdown attack` and
# `hey` (its own workers, each at RATE/WORKERS), each bracketed by the
# service's own /proc/PID/stat (utime + stime of the process and its
# children, in ticks) and counted by the tool's own total of requests.
# Prints each run's µs per request, each tool's mean, their ratio, and,
# given a results folder of a plan with at_rate, the scorecard's figure
# for the service with the ratio of the two.
# Usage: bench/cpu-per-request.sh [service] [RESULTS]
# Environment: RATE (2000), RUNS (3), WARM (20), WORKERS (8), PORT (18590).
set -euo pipefail
cd "$(dirname "$0")/.."
svc=${1:-go-stdlib}
results=${2:-}
rate=${RATE:-2000}
runs=${RUNS:-3}
warm=${WARM:-20}
workers=${WORKERS:-8}
port=${PORT:-18590}
[ "$(nproc)" -ge 2 ] || { echo "cpu-per-request.sh: needs 2 CPUs (service on CPU 0, generator on CPU 1)" >&2; exit 2; }
command -v hey >/dev/null || { echo "cpu-per-request.sh: hey not found (scripts/setup.sh installs it)" >&2; exit 2; }
go build -o bin/showdown ./cmd/showdown
url=http://127.0.0.1:$port
body='{"s":"hello"}'
tmp=$(mktemp -d)
taskset -c 0 bin/showdown up --service "$svc" --workload string --port "$port" >"$tmp/up.log" 2>&1 &
up=$!
trap 'kill $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 600); do
  curl -fsS "$url/health" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "$url/health" >/dev/null || { echo "cpu-per-request.sh: $svc did not come up:" >&2; cat "$tmp/up.log" >&2; exit 1; }
pid=$(ss -ltnpH "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
[ -n "$pid" ] || { echo "cpu-per-request.sh: no process listens on $port" >&2; exit 1; }
# utime + stime of pid and its waited-for children (fields 14-17), in ticks.
ticks() { awk '{print $14+$15+$16+$17}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
echo "$svc (pid $pid) on CPU 0 at $rate req/s; generator on CPU 1; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
taskset -c 1 bin/showdown attack --rate "$rate" --duration "${warm}s" --method POST --header 'Content-Type: application/json' --body "$body" "$url/uppercase" >/dev/null
one() { # tool -> prints µs per request
  local t0 t1 n
  t0=$(ticks "$pid")
  if [ "$1" = showdown ]; then
    rm -rf "$tmp/out"
    taskset -c 1 bin/showdown attack --rate "$rate" --duration 10s --method POST --header 'Content-Type: application/json' --body "$body" --out "$tmp/out" "$url/uppercase" >/dev/null
    t1=$(ticks "$pid")
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["samples"])' "$tmp/out/summary.json")
  else
    taskset -c 1 hey -z 10s -c "$workers" -q $((rate / workers)) -m POST -T application/json -d "$body" "$url/uppercase" >"$tmp/hey.txt"
    t1=$(ticks "$pid")
    n=$(awk '/^  \[[0-9]+\]/{s+=$2} END{print s+0}' "$tmp/hey.txt")
  fi
  python3 -c "import sys; t,n,hz=float(sys.argv[1]),int(sys.argv[2]),float(sys.argv[3]); print('%.1f %d' % (t/hz/n*1e6, n))" "$((t1 - t0))" "$n" "$hz"
}
declare -a S H
for i in $(seq 1 "$runs"); do
  read -r s ns < <(one showdown); read -r h nh < <(one hey)
  S+=("$s"); H+=("$h")
  echo "pair $i: showdown attack $s µs/request ($ns requests), hey $h µs/request ($nh requests)"
done
python3 - "$svc" "$results" "${S[*]}" "${H[*]}" <<'PY'
import json, math, os, sys
svc, results, s, h = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
ms, mh = sum(s)/len(s), sum(h)/len(h)
print(f"mean: showdown attack {ms:.1f} µs, hey {mh:.1f} µs; hey/showdown {mh/ms:.3f}")
if results:
    run = json.load(open(os.path.join(results, "run.json")))
    for c in run.get("comparisons", []):
        v = c.get("verdict") or {}
        if not c.get("at_rate"):
            continue
        for f in v.get("arm_figures", []):
            if f["arm"] == svc:
                x = f["cpu_us_per_request"]
                print(f"the scorecard's {svc} at {c['level']} req/s ({results}): {x:.1f} µs; this reading / the scorecard's: {ms/x:.3f} (showdown attack), {mh/x:.3f} (hey)")
PY
