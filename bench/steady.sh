#!/usr/bin/env bash
# Is showdown's steady state the service's steady state? For each service,
# in one go:
#   1. `showdown run` on `string` at 50 users with the lab's warm-up rule
#      (warmup: auto, at most 4 minutes), 15 s measured: showdown's figure;
#   2. a fresh start of the same service (`showdown up`, on the CPU the lab
#      gives services), warmed by wrk for WARM seconds (default 180) and then
#      measured by wrk for 15 s at 50 connections: wrk's figure;
#   3. on that same warm process, ROUNDS pairs (default 3) of `showdown
#      attack` and wrk, 15 s each, one after the other: the paired ratio.
# and prints the figures with their ratios. showdown's figure should be
# within 10% of wrk's: a larger gap means the lab measured before the
# service was warm, the generators differ, or the two starts (and minutes)
# differ. The paired ratio tells them apart: it compares the two generators
# on one warm process, so a first ratio far from 1 beside a paired one
# near 1 is the service's start-to-start and minute-to-minute spread, not
# an early end of the warm-up.
# Usage: bench/steady.sh [service ...]   (default: go-stdlib java-spring node-http)
# Environment: WARM (wrk's warm-up seconds, default 180), ROUNDS (default 3),
# PORT (default 18480).
set -euo pipefail
cd "$(dirname "$0")/.."
warm=${WARM:-180}
rounds=${ROUNDS:-3}
port=${PORT:-18480}
services=("$@")
[ ${#services[@]} -gt 0 ] || services=(go-stdlib java-spring node-http)
command -v wrk >/dev/null || { echo "steady.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "steady.sh: needs 2 CPUs (service on CPU 0, generator on CPU 1)" >&2; exit 2; }

go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
up_pid=
cleanup() {
	if [ -n "$up_pid" ]; then kill -INT "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; fi
	rm -rf "$out"
}
trap cleanup EXIT
# POST /uppercase, the request of workloads/string/scenario.yaml.
cat >"$out/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"s":"hello"}'
wrk.headers["Content-Type"] = "application/json"
LUA

# wrk_rps prints the requests per second of a wrk report on stdin.
wrk_rps() { awk '/^Requests\/sec:/ {print $2}'; }

printf '%s, %s CPUs, load average %s; wrk warm-up %ss\n' "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$warm"
printf '%-14s %12s %9s %6s %12s %8s %-20s %s\n' service showdown warm-up steady wrk ratio verdict "paired (range)"
for svc in "${services[@]}"; do
	# 1. showdown run, the lab's placement and warm-up rule.
	cat >"$out/plan.yaml" <<YAML
name: steady-$svc
description: bench/steady.sh, showdown's side.
implementations: [$svc]
workloads: [string]
load:
  model: closed
  levels: [50]
  ramp_up: 1s
  duration: 15s
  warmup: auto
  warmup_max: 4m
trials: 1
YAML
	rm -rf "$out/results"
	bin/showdown run --results "$out/results" "$out/plan.yaml" >"$out/run.log" 2>&1 || { echo "$svc: showdown run failed:"; tail -20 "$out/run.log"; continue; }
	read -r sd wu steady < <(python3 - "$(ls -d "$out"/results/*/)run.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["services"][0]
w = s.get("warmup") or {}
print(round(s["levels"][0]["total"]["throughput"]), round(w.get("seconds", 0)), "yes" if w.get("steady") else "NO")
PY
)
	# 2. a fresh start, warmed and measured by wrk.
	taskset -c 0 bin/showdown up --service "$svc" --workload string --port "$port" >"$out/up.log" 2>&1 &
	up_pid=$!
	for _ in $(seq 600); do grep -q '^up;' "$out/up.log" && break; sleep 0.5; done
	grep -q '^up;' "$out/up.log" || { echo "$svc: showdown up did not come up:"; tail -20 "$out/up.log"; exit 1; }
	url="http://127.0.0.1:$port/uppercase"
	taskset -c 1 wrk -t1 -c50 -d"${warm}s" -s "$out/post.lua" "$url" >/dev/null
	wk=$(taskset -c 1 wrk -t1 -c50 -d15s -s "$out/post.lua" "$url" | wrk_rps)
	pairs=
	for _ in $(seq "$rounds"); do
		a=$(taskset -c 1 bin/showdown attack --users 50 --ramp-up 1s --duration 15s --method POST \
			--header 'Content-Type: application/json' --body '{"s":"hello"}' "$url" 2>/dev/null |
			awk '/Throughput\/s/ {getline; print $(NF-2)}')
		w=$(taskset -c 1 wrk -t1 -c50 -d15s -s "$out/post.lua" "$url" | wrk_rps)
		pairs="$pairs $a/$w"
	done
	kill -INT "$up_pid"; wait "$up_pid" 2>/dev/null || true; up_pid=
	python3 - "$svc" "$sd" "$wu" "$steady" "$wk" $pairs <<'PY'
import sys
svc, sd, wu, steady, wk = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
r = sd / wk if wk else 0
ratios = [float(a) / float(w) for a, w in (p.split("/") for p in sys.argv[6:]) if a and w and float(w)]
paired = (f'{sum(ratios) / len(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})' if ratios else "-")
print(f'{svc:<14} {sd:>12.0f} {wu + "s":>9} {steady:>6} {wk:>12.0f} {r:>7.2f}x {"within 10%" if abs(r - 1) <= 0.10 else "OFF BY MORE THAN 10%":<20} {paired}')
for p in sys.argv[6:]:
    print(f'{"":<14} pair showdown/wrk: {p}')
PY
done
printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
