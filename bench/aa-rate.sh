#!/usr/bin/env bash
# Are the comparisons at one rate calibrated? Runs RUNS A/A plans
# (bench/aa-rate.yaml: go-stdlib and its own second start, go-stdlib+aa,
# among four stacks, with `at_rate: auto`) and counts, in each run's
# run.json, the verdict's claims between go-stdlib and its twin in the
# comparison at the rate:
#
#   p99   the pair of the twins in verdict.pairs (the ranking on p99)
#         judged different: significant, and not inside the host's floor
#         (inside it the verdict says "≈" and does not rank by p99). When
#         another arm sits between the twins in the ranking, verdict.aa
#         (the twins' own p99 interval) judges them, with the floor
#         applied the same way from their arm figures.
#   CPU   the twins judged different on CPU per request at the rate:
#         their pair in verdict.cpu_pairs where they are adjacent there,
#         otherwise verdict.cpu_aa (the twin is kept out of the CPU
#         ranking, so cpu_aa is the verdict's own judgement of them).
#
# An arm that could not carry the rate (verdict.overloaded) is not ranked,
# and such a run is counted as not judged. A calibrated 5% test claims a
# difference in about 5% of the runs; each count is printed with its exact
# 95% interval (Clopper-Pearson, bench/clopper_pearson.py). The closed
# level's throughput A/A (verdict.aa of the level's comparison, what
# bench/aa.sh counts) is printed beside it.
# Usage: bench/aa-rate.sh
# Environment: RUNS (20), PLAN (bench/aa-rate.yaml), STACKS (replaces the
# plan's implementations, go-stdlib first: the twin is the first one's),
# ROUND, MEASURE, WARMUP (the plan's round, measure_max and load.warmup:
# a time such as 5s instead of auto, for a smoke test), BUDGET (adds a
# budget), KEEP (a folder to keep each run's run.json, and the last log,
# in).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
src=${PLAN:-bench/aa-rate.yaml}
command -v jq >/dev/null || { echo "aa-rate.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
run_pid=
cleanup() {
	if [ -n "$run_pid" ]; then kill -INT "$run_pid" 2>/dev/null || true; wait "$run_pid" 2>/dev/null || true; fi
	if [ -n "${KEEP:-}" ] && [ -f "$out/log" ]; then { mkdir -p "$KEEP" && cp "$out/log" "$KEEP/last.log"; } 2>/dev/null || true; fi
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
python3 - "$src" "$out/plan.yaml" "${STACKS:-}" "${ROUND:-}" "${MEASURE:-}" "${BUDGET:-}" "${WARMUP:-}" <<'PY'
import sys
src, dst, stacks, rnd, measure, budget, warmup = sys.argv[1:8]
out = []
for line in open(src):
    if stacks and line.startswith("implementations:"):
        line = "implementations: [" + ", ".join(stacks.split()) + "]\n"
    if rnd and line.startswith("round:"):
        line = f"round: {rnd}\n"
    if measure and line.startswith("measure_max:"):
        line = f"measure_max: {measure}\n"
    if warmup and line.startswith("  warmup:"):
        line = f"  warmup: {warmup}\n"
    out.append(line)
if budget:
    out.append(f"budget: {budget}\n")
open(dst, "w").writelines(out)
PY
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') x$(nproc); A/A at one rate, $runs runs of $src$([ -n "${STACKS:-}" ] && echo " with implementations [$STACKS]")${ROUND:+, round $ROUND}${MEASURE:+, measure_max $MEASURE}${WARMUP:+, warmup $WARMUP}${BUDGET:+, budget $BUDGET}"
began=$(date +%s)
tally=$out/tally
: >"$tally"
for i in $(seq 1 "$runs"); do
	bin/showdown run --results "$out" "$out/plan.yaml" >/dev/null 2>"$out/log" &
	run_pid=$!
	rc=0
	wait "$run_pid" || rc=$?
	run_pid=
	[ "$rc" -eq 0 ] || { echo "run $i failed (exit $rc):"; tail -5 "$out/log"; exit 1; }
	# shellcheck disable=SC2012 # the run folders are named by their time
	run=$(ls -td "$out"/*/ | head -1)
	if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP/$i" && cp "$run/run.json" "$KEEP/$i/"; fi
	# One line a judgement to the tally ("KIND claim|same"), one line of
	# words for the log.
	python3 - "$run/run.json" "$tally" "$i" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
tally = open(sys.argv[2], "a")
def twin_of(c):
    first = c["arms"][0]
    twins = [a for a in c["arms"][1:] if a.split("@")[0].endswith("aa")]
    return first, (twins[0] if twins else None)
def find(pairs, a, b):
    for p in pairs or []:
        if {p["better"], p["worse"]} == {a, b}:
            return p
    return None
def fig(v, arm):
    return next((f for f in v.get("arm_figures") or [] if f["arm"] == arm), {})
def count(kind, claim):
    tally.write(f"{kind}\t{'claim' if claim else 'same'}\n")
words = []
for c in run.get("comparisons", []):
    v = c.get("verdict") or {}
    first, twin = twin_of(c)
    if twin is None:
        continue
    if not c.get("at_rate"):
        aa = v.get("aa")
        if aa:
            count("throughput at the level (bench/aa.sh's count)", aa["significant"])
            words.append(f'throughput {aa["ratio"]:.3f} [{aa["low"]:.3f}, {aa["high"]:.3f}]')
        continue
    shape = ("busy rate, " if c.get("busy") else "") + (c.get("shape") or "at the rate")
    head = f'{c["level"]} req/s {shape}'
    over = v.get("overloaded") or {}
    if first in over or twin in over:
        words.append(f"{head}: not judged, overloaded: {over}")
        continue
    pr, how = find(v.get("pairs"), first, twin), "adjacent"
    if pr is None and v.get("aa"):
        pr, how = dict(v["aa"]), "verdict.aa"
        lat = v.get("lateness_p99_ms") or 0
        if lat > 0 and abs(fig(v, first).get("p99_ms", 0) - fig(v, twin).get("p99_ms", 0)) < lat:
            pr["inside_floor"] = True
    if pr:
        count(f"p99, {shape}", pr["significant"] and not pr.get("inside_floor"))
        words.append(f'{head}: p99 {pr["ratio"]:.3f} [{pr["low"]:.3f}, {pr["high"]:.3f}]'
                     + (" inside the floor" if pr.get("inside_floor") else "") + ("" if how == "adjacent" else f" ({how})"))
    cp, how = find(v.get("cpu_pairs"), first, twin), "adjacent"
    if cp is None and v.get("cpu_aa"):
        cp, how = v["cpu_aa"], "verdict.cpu_aa"
    if cp:
        count(f"CPU per request, {shape}", cp["significant"])
        words.append(f'CPU {cp["ratio"]:.3f} [{cp["low"]:.3f}, {cp["high"]:.3f}] ({fig(v, first).get("cpu_us_per_request", 0):.1f} and {fig(v, twin).get("cpu_us_per_request", 0):.1f} \u00b5s)'
                     + ("" if how == "adjacent" else f" ({how})"))
    else:
        words.append(f"{head}: twins not judged on CPU per request")
print(f"{int(sys.argv[3]):3d}  " + ("; ".join(words) or "no comparison with the twin"))
PY
	rm -rf "$run"
done
echo "$runs runs in $(($(date +%s) - began)) s"
report() { # kind claims judged
	local lo hi
	read -r lo hi < <(python3 bench/clopper_pearson.py "$2" "$3")
	python3 -c "import sys; k, c, n, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]); print('%s: false claims in %d of %d runs (%.1f%%), 95%% interval [%.1f%%, %.1f%%] (Clopper-Pearson; a calibrated test claims 5%%)' % (k, c, n, 100 * c / n, 100 * lo, 100 * hi))" "$1" "$2" "$3" "$lo" "$hi"
}
[ -s "$tally" ] || { echo "no run judged the twins"; exit 0; }
while IFS=$'\t' read -r kind claims judged; do
	report "$kind" "$claims" "$judged"
done < <(python3 - "$tally" <<'PY'
import sys
seen = {}
for line in open(sys.argv[1]):
    kind, what = line.rstrip("\n").split("\t")
    c, n = seen.get(kind, (0, 0))
    seen[kind] = (c + (what == "claim"), n + 1)
for kind, (c, n) in seen.items():
    print(f"{kind}\t{c}\t{n}")
PY
)
