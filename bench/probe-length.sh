#!/usr/bin/env bash
# How long must a capacity probe be to agree with a sustained run? Reads a
# capacity plan's results (run.json), starts the service fresh (`showdown
# up`, on CPU 0), warms it for WARM seconds at 95% of the held rate, then
# attacks it at two rates, the lower start's search edge (the highest rate
# a probe passed in that start) and the held rate (what held 2 × 30 s),
# RUNS times at each probe length of LENGTHS, each run with the plan's
# settle uncounted, on the plan's pool of connections and arrivals, and
# judged by the plan's objective (--fail-if). Prints, per rate and length,
# in how many runs the objective held and the p99s: the length from which
# the edge fails as often as a sustained run is the length a probe needs.
# Usage: bench/probe-length.sh RESULTS [service] [workload]
# Environment: LENGTHS ("2 5 10 30", seconds), RUNS (3), WARM (60), PORT
# (18490).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/probe-length.sh RESULTS [service] [workload]" >&2; exit 2; }
results=$1
svc=${2:-go-stdlib}
wl=${3:-string}
runs=${RUNS:-3}
warm=${WARM:-60}
port=${PORT:-18490}
lengths=${LENGTHS:-2 5 10 30}
[ "$(nproc)" -ge 2 ] || { echo "probe-length.sh: needs 2 CPUs (service on CPU 0, generator on CPU 1)" >&2; exit 2; }
read -r edge held fails settle conns arrivals < <(python3 - "$results/run.json" "$svc" "$wl" <<'PY'
import json, re, sys
def seconds(d):
    mult = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(v) * mult[u] for v, u in re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", d))
run = json.load(open(sys.argv[1]))
cap = [c for c in run.get("capacities", []) if c["arm"].split("@")[0] == sys.argv[2] and c["workload"] == sys.argv[3]]
if not cap:
    sys.exit(f"no capacity of {sys.argv[2]} on {sys.argv[3]} in {sys.argv[1]}")
c = cap[0]
if (c.get("unit") or "req/s") != "req/s" or (c.get("steps_per_arrival") or 1) != 1:
    sys.exit("probe-length.sh: an open-model capacity of a one-step scenario only")
passes = [b["pass"] for b in c.get("brackets") or [] if b.get("pass", 0) > 0 and b.get("fail", 0) > 0]
held = c.get("held") or (c["rate"] if all(b.get("confirmed") for b in c.get("brackets") or []) else 0)
if not passes or not held:
    sys.exit(f"probe-length.sh: {sys.argv[2]} has no bracket and held rate to compare (answer {c.get('answer')})")
slo = run["plan"]["slo"]
ifs = ",".join(f'p{p["q"]:g}>{p["limit"]}' for p in slo["percentiles"]) + f',errors>{100 * slo["errors"]:g}%'
cp = run["plan"].get("capacity") or {}
load = run["plan"].get("load") or {}
print(round(min(passes)), round(held), ifs, seconds(run["plan"].get("rounds", {}).get("settle") or "1s"),
      cp.get("connections") or 64, load.get("arrivals") or "even")
PY
)
go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
up_pid=
cleanup() {
	if [ -n "$up_pid" ]; then kill -INT "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; fi
	rm -rf "$out"
}
trap cleanup EXIT
taskset -c 0 bin/showdown up --service "$svc" --workload "$wl" --port "$port" >"$out/up.log" 2>&1 &
up_pid=$!
for _ in $(seq 600); do grep -q '^up;' "$out/up.log" && break; sleep 0.5; done
grep -q '^up;' "$out/up.log" || { echo "$svc: showdown up did not come up:"; tail -20 "$out/up.log"; exit 1; }
base="http://127.0.0.1:$port"
scenario="workloads/$wl/scenario.yaml"
common=(--scenario "$scenario" --base-url "$base" --max-inflight "$conns" --arrivals "$arrivals")
taskset -c 1 bin/showdown attack "${common[@]}" --rate "$(python3 -c "print(round(0.95 * $held))")" --duration "${warm}s" >/dev/null
flags=()
IFS=, read -ra conds <<<"$fails"
for c in "${conds[@]}"; do flags+=(--fail-if "$c"); done
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(lscpu | sed -n 's/^Model name: *//p') x$(nproc); $svc on $wl, objective ${fails//,/, }; edge $edge req/s (the lower start's highest pass), held $held req/s; $conns connections, $arrivals arrivals, settle ${settle}s"
for rate in "$edge" "$held"; do
	for secs in $lengths; do
		met=0
		p99s=()
		for k in $(seq "$runs"); do
			rc=0
			rm -rf "$out/r"
			taskset -c 1 bin/showdown attack "${common[@]}" --rate "$rate" --warmup "${settle}s" --duration "${secs}s" "${flags[@]}" --out "$out/r" >"$out/a.txt" 2>&1 || rc=$?
			case $rc in 0) met=$((met + 1)) ;; 3) ;; *) echo "showdown attack failed (exit $rc):"; tail -5 "$out/a.txt"; exit 1 ;; esac
			p99s+=("$(python3 -c "import json; print('%.2f' % json.load(open('$out/r/summary.json'))['total']['latency_ms']['p99'])")")
		done
		printf '%7s req/s  %3ss probes: objective met in %d of %d (p99 %s ms)\n' "$rate" "$secs" "$met" "$runs" "${p99s[*]}"
	done
done
