#!/usr/bin/env bash
# Is the verdict calibrated? Runs N A/A comparisons (one implementation
# against its own second start, `showdown aa`, interleaved rounds over two
# fresh starts each) and counts how many claim a difference: a calibrated
# 5% test claims one in about 5% of them (at most 4 of 40 is the target).
# With NEIGHBOUR=1 a noisy neighbour hogs the service's CPU at random
# while measuring. With SEQ=1 it also runs the same implementation in
# TRIALS sequential fresh starts (interleave: false) and prints their CV:
# what sequential measurement sees on the same machine.
# Usage: bench/aa.sh            Environment: N (default 40), SERVICE
# (default go-stdlib), NEIGHBOUR (0/1), ROUND (default 2s), MEASURE
# (the rounds' time per comparison, default 60s), SEQ (0/1), TRIALS (5),
# WARMUP (the sequential starts' warm-up: auto, or a time such as 10s; a
# neighbour can keep the steady-state rule from holding until its cap),
# TURNS (the sequential starts' neighbour's time between turns, "30s, 2m"),
# PLAN (a plan with aa: true, run whole N times instead of `showdown aa`:
# the twin inside a comparison of several stacks, bench/aa-arms.yaml).
# Ends with the claim rate and its exact (Clopper-Pearson) 95% interval.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-40}
svc=${SERVICE:-go-stdlib}
neighbour=${NEIGHBOUR:-0}
round=${ROUND:-2s}
measure=${MEASURE:-60s}
command -v jq >/dev/null || { echo "aa.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(--service "$svc" --round "$round" --measure-max "$measure" --results "$out")
[ "$neighbour" = 1 ] && flags+=(--neighbour)
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $(lscpu | sed -n 's/^Model name: *//p') x$(nproc); A/A of $svc, $n comparisons, neighbour=$neighbour${PLAN:+, plan $PLAN}"
claims=0
began=$(date +%s)
for i in $(seq 1 "$n"); do
	if [ -n "${PLAN:-}" ]; then
		bin/showdown run --results "$out" "$PLAN" >/dev/null 2>"$out/log" || { echo "run $i failed:"; tail -5 "$out/log"; exit 1; }
	else
		bin/showdown aa "${flags[@]}" >/dev/null 2>"$out/log" || { echo "run $i failed:"; tail -5 "$out/log"; exit 1; }
	fi
	run=$(ls -td "$out"/*/ | head -1)
	line=$(jq -r '.comparisons[0].verdict.aa | "\(.ratio) \(.low) \(.high) \(.significant) \(.starts) \(.rounds) \(.half_width)"' "$run/run.json")
	read -r ratio low high sig starts rounds hw <<<"$line"
	[ "$sig" = true ] && claims=$((claims + 1))
	secs=$(jq -r '.comparisons[0].verdict.measured_seconds' "$run/run.json")
	printf "%3d  ratio %.4f [%.4f, %.4f]  ±%.1f%%  %s starts, %s rounds, %.0f s of rounds  %s\n" "$i" "$ratio" "$low" "$high" "$(echo "$hw*100" | bc -l)" "$starts" "$rounds" "$secs" "$([ "$sig" = true ] && echo CLAIMED || echo -)"
	rm -rf "$run"
done
echo "claimed a difference in $claims of $n A/A comparisons ($(( $(date +%s) - began )) s)"
# The claim rate's exact 95% interval (Clopper-Pearson, by bisection on
# the binomial tails): a calibrated test's 5% should sit inside it.
read -r cp_low cp_high < <(python3 bench/clopper_pearson.py "$claims" "$n")
python3 -c "print('claim rate %.1f%%, 95%% interval [%.1f%%, %.1f%%] (Clopper-Pearson; a calibrated test claims 5%%)' % (100 * $claims / $n, 100 * $cp_low, 100 * $cp_high))"
if [ "${SEQ:-0}" = 1 ]; then
	trials=${TRIALS:-5}
	cat >"$out/seq.yaml" <<YAML
name: aa-sequential
implementations: [$svc]
workloads: [string]
interleave: false
neighbour: $([ "$neighbour" = 1 ] && echo true || echo false)
$([ "$neighbour" = 1 ] && [ -n "${TURNS:-}" ] && echo "neighbour_turns: [$TURNS]")
trials: $trials
verify: quick
load: {model: closed, levels: [50], ramp_up: 1s, duration: 6s, warmup: ${WARMUP:-auto}}
YAML
	bin/showdown run --results "$out" "$out/seq.yaml" >/dev/null 2>"$out/log" || { tail -5 "$out/log"; exit 1; }
	run=$(ls -td "$out"/*/ | head -1)
	jq -r '[.services[].levels[0].total.throughput] | (add / length) as $m | "sequential starts: \(map(floor)) req/s, CV \(((map((. - $m) * (. - $m)) | add / (length - 1)) | sqrt) / $m * 1000 | round / 10)%"' "$run/run.json"
fi
