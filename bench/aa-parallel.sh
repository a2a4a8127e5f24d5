#!/usr/bin/env bash
# The verdict's calibration on a many-core machine: STREAMS A/A
# comparisons side by side (stream i: the service on CPU i, the generator
# on CPU i+STREAMS), PER_STREAM each, `showdown aa` with short settings.
# Streams disturb each other (memory bandwidth, the shared cache): the
# test is whether the interval stays calibrated, claiming a difference in
# about 5% of the comparisons. Prints one line per comparison and the
# count; with OUT set, copies each run.json there.
# Runs built artifacts as they are where there is no toolchain:
# SHOWDOWN_PREBUILT=1 with bin/showdown and services/go-stdlib/bin carried.
# Environment: STREAMS (default nproc/2, at most 8), PER_STREAM (5),
# SERVICE (go-stdlib), ROUND (1s), MEASURE (30s), WARMUP (5s), DURATION (2s),
# DEADLINE (seconds after which no stream starts another comparison; none),
# NEIGHBOUR (1: each stream's noisy neighbour on its service CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
n=$(nproc)
streams=${STREAMS:-$(( n / 2 < 8 ? n / 2 : 8 ))}
per=${PER_STREAM:-5}
svc=${SERVICE:-go-stdlib}
[ -x bin/showdown ] || go build -o bin/showdown ./cmd/showdown
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(lscpu | sed -n 's/^Model name: *//p') x$n; $streams streams x $per A/A comparisons of $svc, neighbour=${NEIGHBOUR:-0}"
began=$(date +%s)
for s in $(seq 0 $((streams - 1))); do
	(
		for k in $(seq 1 "$per"); do
			if [ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$((began + DEADLINE))" ]; then break; fi
			d="$work/s$s-$k"
			mkdir -p "$d"
			if bin/showdown aa --service "$svc" --service-cpus "$s" --generator-cpus "$((s + streams))" \
				--round "${ROUND:-1s}" --measure-max "${MEASURE:-30s}" --warmup "${WARMUP:-5s}" --duration "${DURATION:-2s}" \
				$([ "${NEIGHBOUR:-0}" = 1 ] && echo --neighbour) --results "$d" >"$d.out" 2>"$d.err"; then :; else echo "stream $s run $k exit $?: $(tail -3 "$d.err")"; fi
		done
	) &
done
wait
claims=0
total=0
for f in "$work"/s*/*/run.json; do
	[ -f "$f" ] || continue
	line=$(python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
c=r["comparisons"][0]; v=c["verdict"]; a=v["aa"]
print("%.4f %.4f %.4f %s %d %d %.1f" % (a["ratio"], a["low"], a["high"], a["significant"], a["starts"], a["rounds"], a["half_width"]*100))
' "$f")
	read -r ratio low high sig starts rounds hw <<<"$line"
	total=$((total + 1))
	[ "$sig" = True ] && claims=$((claims + 1))
	echo "$(basename "$(dirname "$(dirname "$f")")")  A/A $ratio [$low, $high] ±$hw%  $starts starts, $rounds rounds  $([ "$sig" = True ] && echo CLAIMED || echo -)"
	if [ -n "${OUT:-}" ]; then cp "$f" "$OUT/$(basename "$(dirname "$(dirname "$f")")").run.json"; fi
done
echo "claimed a difference in $claims of $total A/A comparisons ($(( $(date +%s) - began )) s)"
