#!/usr/bin/env bash
# The floor against the lab's engine where it matters most: the C floor
# client (bench/floor/floor.c) and `showdown attack --scenario
# workloads/string/scenario.yaml` (the lab's scenario engine, closed model,
# 50 users) against rust-axum, the fastest stack, on `string`, in
# rounds, each in a fresh rotation of the clients: the floor, showdown as
# the lab runs it (it sleeps on its timer and reads responses in batches:
# load.Coalesce), showdown with `--coalesce 0` (it spins up to 20 µs,
# then sleeps on its sockets: load.Spin) and with `--coalesce 0 --spin 0`
# (it sleeps on its sockets at once, as the floor does). Per round:
# each client's CPU per request (user + system of its process over the
# round, start-up included) and the server's (from /proc/PID/stat over the
# round). Prints the ratios showdown / floor (CPU per request and
# throughput) and showdown / server with a 95% interval over the rounds
# (t over the per-round log ratios), for each showdown arm.
# Needs rust-axum built (showdown verify --service rust-axum builds it).
# Environment: ROUNDS (8), SECS (3), SERVER_CPU (0), GEN_CPU (1), PORT (18080).
set -euo pipefail
cd "$(dirname "$0")/../.."
srv=services/rust-axum/target/release/server
[ -x "$srv" ] || { echo "vs-lab.sh: $srv is not built (bin/showdown verify --service rust-axum builds it)" >&2; exit 2; }
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -o "$work/floor" bench/floor/floor.c
[ "${SHOWDOWN_PREBUILT:-0}" = 1 ] || go build -o bin/showdown ./cmd/showdown
port=${PORT:-18080}
PORT=$port taskset -c "${SERVER_CPU:-0}" "$srv" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
secs=${SECS:-3}
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $(lscpu | sed -n 's/^Model name: *//p') x$(nproc); rust-axum on CPU ${SERVER_CPU:-0}, clients on CPU ${GEN_CPU:-1}, ${secs}s rounds"
ticks=$(getconf CLK_TCK)
srvcpu() { awk -v t="$ticks" '{printf "%.4f\n", ($14+$15)/t}' /proc/$pid/stat; }
# childcpu writes this shell's finished children's user + system seconds
# to $work/cpu (times must run in this shell: a subshell has no children).
childcpu() { times >"$work/times"; tail -1 "$work/times" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.4f\n", u[1]*60 + u[2] + s[1]*60 + s[2] }' >"$work/cpu"; }
: >"$work/rows"
one() { # tool round
	local c0 c1 s0 s1 n
	childcpu; c0=$(cat "$work/cpu"); s0=$(srvcpu)
	if [ "$1" = floor ]; then
		taskset -c "${GEN_CPU:-1}" "$work/floor" -c 50 -d "$secs" -b '{"s":"hello"}' "http://127.0.0.1:$port/uppercase" >"$work/out"
		n=$(sed -n 's/^requests \([0-9]*\) .*/\1/p' "$work/out")
	else
		local wait=()
		case "$1" in
		showdown-coalesce0) wait=(--coalesce 0) ;;
		showdown-spin0) wait=(--coalesce 0 --spin 0) ;;
		esac
		rm -rf "$work/sum"
		taskset -c "${GEN_CPU:-1}" bin/showdown attack --scenario workloads/string/scenario.yaml --base-url "http://127.0.0.1:$port" --users 50 --duration "${secs}s" "${wait[@]}" --out "$work/sum" >"$work/out" 2>&1
		n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["samples"])' "$work/sum/summary.json")
	fi
	childcpu; c1=$(cat "$work/cpu"); s1=$(srvcpu)
	echo "$2 $1 $n $(echo "$c1 - $c0" | bc -l) $(echo "$s1 - $s0" | bc -l)" >>"$work/rows"
}
tools=(floor showdown showdown-coalesce0 showdown-spin0)
for r in $(seq 1 "${ROUNDS:-8}"); do
	for i in 0 1 2 3; do one "${tools[$(((r + i) % 4))]}" "$r"; done
done
python3 - "$work/rows" <<'PY'
import math, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    r, tool, n, c, s = line.split()
    rows.setdefault(int(r), {})[tool] = (int(n), float(c), float(s))
t975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131}
arms = ["showdown", "showdown-coalesce0", "showdown-spin0"]
print("round  floor requests  µs/req  server µs/req | " + " | ".join("%s requests  µs/req  server µs/req" % a for a in arms))
gf = {a: [] for a in arms}; gs = {a: [] for a in arms}; gt = {a: [] for a in arms}
for r in sorted(rows):
    f = rows[r]["floor"]
    fu, fs = f[1] / f[0] * 1e6, f[2] / f[0] * 1e6
    line = "%5d  %14d  %6.2f  %13.2f" % (r, f[0], fu, fs)
    for a in arms:
        s = rows[r][a]
        su, ss = s[1] / s[0] * 1e6, s[2] / s[0] * 1e6
        line += " | %*d  %6.2f  %13.2f" % (len(a) + 9, s[0], su, ss)
        gf[a].append(math.log(su / fu)); gs[a].append(math.log(su / ss)); gt[a].append(math.log(s[0] / f[0]))
    print(line)
def ci(d, name):
    m = st.mean(d); h = t975[len(d) - 1] * st.stdev(d) / math.sqrt(len(d))
    print("%s: %.2f× [%.2f, %.2f] (95%%, %d rounds)" % (name, math.exp(m), math.exp(m - h), math.exp(m + h), len(d)))
for a in arms:
    ci(gf[a], "%s / floor, generator CPU per request" % a)
    ci(gs[a], "%s / rust-axum's own CPU per request (under it)" % a)
    ci(gt[a], "%s / floor, requests (throughput)" % a)
PY
