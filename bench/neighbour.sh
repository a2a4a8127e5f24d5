#!/usr/bin/env bash
# How much measuring time the noisy neighbour costs the verdict: go-stdlib
# against rust-axum in interleaved rounds to ±3% (precision: 3%), without
# and with the neighbour, each one run; prints each verdict, its starts
# and rounds, and the seconds of rounds it took, then their ratio (the
# verdict issue's target: at most 2).
# Environment: A, B (the two services; go-stdlib, rust-axum), MEASURE
# (measure_max, default 8m), TRIALS_MAX (8), WARMUP (10s: a fixed
# warm-up; the steady-state rule may not hold under the neighbour),
# ONLY (without|with: one of the two runs), KEEP (a folder to copy each
# run.json into), TURNS (the neighbour's time between turns, "30s, 2m";
# its default 5-20 s when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "neighbour.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
[ "${SHOWDOWN_PREBUILT:-0}" = 1 ] || go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(lscpu | sed -n 's/^Model name: *//p') x$(nproc)"
declare -A secs
for nb in without with; do
	[ -n "${ONLY:-}" ] && [ "$ONLY" != "$nb" ] && continue
	cat >"$out/$nb.yaml" <<YAML
name: neighbour-$nb
implementations: [${A:-go-stdlib}, ${B:-rust-axum}]
workloads: [string]
neighbour: $([ "$nb" = with ] && echo true || echo false)
$([ "$nb" = with ] && [ -n "${TURNS:-}" ] && echo "neighbour_turns: [$TURNS]")
verify: quick
load: {model: closed, levels: [50], ramp_up: 0s, duration: 2s, warmup: ${WARMUP:-10s}}
trials: 2
trials_max: ${TRIALS_MAX:-8}
precision: 3%
round: 2s
measure_max: ${MEASURE:-8m}
YAML
	began=$(date +%s)
	rc=0
	bin/showdown run --results "$out/$nb" "$out/$nb.yaml" >"$out/$nb.log" 2>&1 || rc=$?
	run=$(ls -td "$out/$nb"/*/ 2>/dev/null | head -1)
	if [ "$rc" != 0 ]; then
		# A failed start (exit 4) still leaves the others' verdict; say so.
		echo "$nb the neighbour: showdown run exited $rc:"
		grep -iE 'fail|warn|error' "$out/$nb.log" | grep -v '^report' | head -8 | sed 's/^/  /'
		[ -n "$run" ] && [ -f "$run/run.json" ] || exit 1
		cp -r "$run" "${KEEP:-/tmp}/neighbour-$nb-failed" 2>/dev/null || true
	fi
	secs[$nb]=$(jq -r '.comparisons[0].verdict.measured_seconds' "$run/run.json")
	[ -n "${KEEP:-}" ] && cp "$run/run.json" "$KEEP/neighbour-$nb.json"
	jq -r --arg nb "$nb" --arg wall "$(( $(date +%s) - began ))" '.comparisons[0].verdict as $v | $v.pairs[0] |
		"\($nb) the neighbour: \(.better) \(.ratio * 1000 | round / 1000)x \(.worse) [\(.low * 1000 | round / 1000), \(.high * 1000 | round / 1000)] ±\(.half_width * 1000 | round / 10)%, \(.starts) starts, \(.rounds) rounds, \($v.measured_seconds | round) s of rounds (\($wall) s in all); sd of the log ratio between starts \(.between_sd * 1000 | round / 10)%, within (mirrored pairs) \(.within_sd * 1000 | round / 10)%, per round \((.round_sd // 0) * 1000 | round / 10)%\(if ($v.unresolved // []) | length > 0 then "; NOT REACHED: " + ($v.unresolved | join("; ")) else "" end)"' "$run/run.json"
done
if [ -n "${secs[with]:-}" ] && [ -n "${secs[without]:-}" ]; then
	echo "with/without: $(echo "${secs[with]} / ${secs[without]}" | bc -l | cut -c1-5)x the seconds of rounds"
fi
