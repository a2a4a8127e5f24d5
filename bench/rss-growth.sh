#!/usr/bin/env bash
# Does a service's memory settle under steady load, or keep growing? The
# leak check (internal/rounds Growths) calls a slope of RSS a leak when
# its whole interval lies above 1 MiB a minute; a runtime whose heap is
# still growing into its sizing looks the same over a few minutes of
# rounds. This runs one fresh `showdown up` of the service pinned to CPU 0,
# `showdown attack` at RATE from CPU 1 (Poisson arrivals over CONNS
# keep-alive connections, the main job's shape) for MINUTES, reads the
# service tree's RSS every STEP seconds from /proc, and prints the series
# and the slope (MiB a minute) of each third of the time: a leak grows as
# fast in the last third as in the first, a heap that settles does not.
# For a JVM it adds the heap's committed and used size (jcmd GC.heap_info)
# at the start and the end.
# Usage: bench/rss-growth.sh [service]
# Environment: RATE (22000), MINUTES (6), STEP (10), CONNS (50),
# PORT (18591), ENV (K=V ... passed to the service as --env).
set -euo pipefail
cd "$(dirname "$0")/.."
svc=${1:-java-spring}
rate=${RATE:-22000}
minutes=${MINUTES:-6}
step=${STEP:-10}
conns=${CONNS:-50}
port=${PORT:-18591}
[ "$(nproc)" -ge 2 ] || { echo "rss-growth.sh: needs 2 CPUs (service on CPU 0, generator on CPU 1)" >&2; exit 2; }
go build -o bin/showdown ./cmd/showdown
url=http://127.0.0.1:$port
tmp=$(mktemp -d)
envs=()
for kv in ${ENV:-}; do envs+=(--env "$kv"); done
taskset -c 0 bin/showdown up --service "$svc" --workload string --port "$port" "${envs[@]}" >"$tmp/up.log" 2>&1 &
up=$!
attack=
trap '[ -n "$attack" ] && kill $attack 2>/dev/null; kill $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 900); do
	curl -fsS "$url/health" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -fsS "$url/health" >/dev/null || { echo "rss-growth.sh: $svc did not come up:" >&2; cat "$tmp/up.log" >&2; exit 1; }
pid=$(ss -ltnpH "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
[ -n "$pid" ] || { echo "rss-growth.sh: no process listens on $port" >&2; exit 1; }
# The RSS of pid and its descendants, in KiB.
rss() {
	local p kids total=0
	for p in "$1" $(pgrep -P "$1" || true); do
		total=$((total + $(awk '/^VmRSS:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)))
	done
	echo "$total"
}
heap() { command -v jcmd >/dev/null || return 0; jcmd "$pid" GC.heap_info 2>/dev/null | grep -iE 'garbage-first heap|total|committed' | head -2 | tr -s ' ' | paste -sd ';' || true; }
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
PATH=$JAVA_HOME/bin:$PATH
echo "# $svc (pid $pid) on CPU 0 at $rate req/s (poisson over $conns connections) for $minutes min; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)${ENV:+, env $ENV}"
echo "# heap at the start: $(heap)"
secs=$((minutes * 60))
taskset -c 1 bin/showdown attack --rate "$rate" --arrivals poisson --connections "$conns" --duration "${secs}s" \
	--method POST --header 'Content-Type: application/json' --body '{"s":"hello"}' --out "$tmp/out" "$url/uppercase" >/dev/null 2>"$tmp/attack.log" &
attack=$!
t0=$(date +%s)
: >"$tmp/series"
while kill -0 "$attack" 2>/dev/null; do
	echo "$(($(date +%s) - t0)) $(rss "$pid")" | tee -a "$tmp/series"
	sleep "$step"
done
wait "$attack" || { echo "rss-growth.sh: the attack failed:" >&2; tail -5 "$tmp/attack.log" >&2; exit 1; }
attack=
echo "# heap at the end: $(heap)"
python3 - "$tmp/series" "$tmp/out/summary.json" <<'PY'
import json, sys
pts = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
s = json.load(open(sys.argv[2]))
def slope(ps):
    n = len(ps)
    mx = sum(p[0] for p in ps) / n; my = sum(p[1] for p in ps) / n
    sxx = sum((p[0]-mx)**2 for p in ps)
    return sum((p[0]-mx)*(p[1]-my) for p in ps) / sxx * 60 / 1024 if sxx else float("nan")
k = len(pts) // 3
print(f"requests {s['total']['samples']}, served {s['total']['samples']/ (pts[-1][0] or 1):.0f}/s over the sampled time")
print(f"RSS {pts[0][1]/1024:.1f} MiB at {pts[0][0]:.0f} s, {pts[-1][1]/1024:.1f} MiB at {pts[-1][0]:.0f} s")
print("slope, MiB a minute: whole %.2f; thirds %.2f, %.2f, %.2f" % (slope(pts), slope(pts[:k]), slope(pts[k:2*k]), slope(pts[2*k:])))
PY
