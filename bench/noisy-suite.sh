#!/usr/bin/env bash
# Do the timing-sensitive packages' tests pass on a noisy host? Runs
# bench/noisy-host.py (bursts of CPU on every CPU) and, beside it,
# `go test -count=1` of each package that holds tests whose outcome once
# hung on the machine's speed, N times in turn (default 10), then prints
# "N passed, M failed" per package. The target (issue 43): 10 of 10.
# internal/lab runs only its tests that start no service (a -run filter;
# TestAwaitQuiet starts a PostgreSQL): its service tests are make test's.
# A failure's output is kept in the folder printed at the end.
# Usage: bench/noisy-suite.sh [N]
# Environment: PKGS (space-separated, default below), NOISY_ARGS (extra
# arguments for noisy-host.py, such as "--burst 50-400").
# Not part of make test: 10 rounds take several minutes of both CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "noisy-suite.sh: N $n: want a count of runs" >&2; exit 2; }
lab_run='^(TestPathMatches|TestCompareWritten|TestCheckConnections|TestConnectionsAlive|TestConnectionsAliveCores|TestArmEnv|TestBuildLanes|TestGeneratorGuard|TestGeneratorCPUs|TestSpareCPUsHint|TestParseNMT|TestWarmupAndIterationModels|TestRunnerNeedsItsSteps|TestThresholds|TestAwaitQuiet)$'
pkgs=${PKGS:-./load ./internal/monitor ./internal/noise ./internal/neighbour ./internal/warmup ./internal/lab}
out=$(mktemp -d /tmp/noisy-suite.XXXXXX)

echo "noisy-suite.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Compile first, so the first round's time is the tests', not the build's.
for p in $pkgs; do go test -count=1 -run '^$' "$p" >/dev/null; done

# shellcheck disable=SC2086
python3 bench/noisy-host.py --seconds 7200 ${NOISY_ARGS:-} &
noisy=$!
trap 'kill "$noisy" 2>/dev/null || true; wait "$noisy" 2>/dev/null || true' EXIT
sleep 1

declare -A passed failed
for p in $pkgs; do passed[$p]=0; failed[$p]=0; done
for i in $(seq 1 "$n"); do
	for p in $pkgs; do
		args=(-count=1)
		[ "$p" = ./internal/lab ] && args+=(-run "$lab_run")
		log="$out/$(echo "$p" | tr -c 'A-Za-z0-9\n' '_')-$i.log"
		start=$SECONDS
		if go test "${args[@]}" "$p" >"$log" 2>&1; then
			passed[$p]=$((passed[$p] + 1))
			rm -f "$log"
			echo "round $i: $p ok ($((SECONDS - start)) s)"
		else
			failed[$p]=$((failed[$p] + 1))
			echo "round $i: $p FAILED ($((SECONDS - start)) s), log $log"
			grep -E -- '--- FAIL|_test\.go:[0-9]+:' "$log" | head -10 | sed 's/^/    /'
		fi
	done
done

echo
echo "beside bench/noisy-host.py, $n runs each (load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
bad=0
for p in $pkgs; do
	printf '%-22s %d passed, %d failed\n' "$p" "${passed[$p]}" "${failed[$p]}"
	[ "${failed[$p]}" -eq 0 ] || bad=1
done
if [ "$bad" -eq 0 ]; then rmdir "$out" 2>/dev/null || true; else echo "the failures' output: $out"; fi
exit "$bad"
