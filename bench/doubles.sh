#!/usr/bin/env bash
# Are the bank's broken doubles caught every time? Runs each lab test of a
# double RUNS times (go test -count), each a fresh PostgreSQL and fresh
# services, and counts the runs that caught it:
#
#   racy   TestRunRacyBankCaught: a bank that reads both balances and
#          writes them back without a transaction, on the 2018 scenario's
#          two hot rows, beside a correct bank; caught when its own
#          level's audit finds the money or the ledger broken in both
#          starts and the correct bank is never flagged.
#   leak   TestRunFindsConnectionLeak: a bank that opens a database
#          connection every 200th transfer and never closes it, beside a
#          correct bank; caught when the rounds' leak check names its
#          database connections and not the correct bank's.
#
# Each count is printed with its exact 95% interval (Clopper-Pearson,
# bench/clopper_pearson.py).
# Usage: bench/doubles.sh            Environment: RUNS (10)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "doubles: $runs runs each; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD)"
for t in racy:TestRunRacyBankCaught leak:TestRunFindsConnectionLeak; do
	name=${t%%:*} test=${t#*:}
	go test -count="$runs" -v -run "^${test}\$" ./internal/lab/ >"$log" 2>&1 || true
	caught=$(grep -c -- "^--- PASS: ${test} " "$log" || true)
	failed=$(grep -c -- "^--- FAIL: ${test} " "$log" || true)
	if [ $((caught + failed)) -ne "$runs" ]; then
		echo "$name: $caught passed and $failed failed of $runs: the test did not run each time" >&2
		tail -20 "$log" >&2
		exit 1
	fi
	printf '%-5s caught in %d of %d runs %s\n' "$name" "$caught" "$runs" "$(python3 bench/clopper_pearson.py "$caught" "$runs" | awk '{printf "[%.2f, %.2f]", $1, $2}')"
	if [ "$failed" -gt 0 ]; then
		grep -A6 -- "^--- FAIL: ${test} " "$log" | head -30
	fi
done
