#!/usr/bin/env bash
# Benchmarks showdown's load generator side by side with wrk, wrk2, hey, k6
# and a minimal C client: peak throughput, CPU per request and send
# lateness in the open model, memory per user; the open-model table of
# both engines beside wrk2, the coordinated-omission check against a
# stalling server, the closed model against wrk and the C floor in
# alternating rounds with 95% intervals. bench/README.md says what each
# column means.
# Installs nothing: a missing tool is skipped with a line saying so.
# wrk2 (github.com/giltene/wrk2, not packaged in Debian): WRK2=/path/to/its/wrk,
# or a wrk2 on PATH.
# Usage: bench/generators.sh [-duration 10s] [-only open,stall,closed,floor,throughput,cpu,lateness,memory]
#        [-tools showdown,wrk,hey,k6] [-server-cpu 0] [-gen-cpu 1] [-rounds 10] [-round 3s] ...
#        (every flag: go run ./bench/attack/generators -h)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v taskset >/dev/null || { echo "generators.sh: taskset (util-linux) is required" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/showdown" ./cmd/showdown
go build -o "$tmp/hello" ./bench/attack/hello
go build -o "$tmp/generators" ./bench/attack/generators
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
echo "# $(date -u +%FT%TZ) commit $commit, $(nproc) CPUs: ${model:-CPU model unknown}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
floor=()
if [[ ! -f bench/floor/floor.c ]]; then
	echo "floor              skipped: bench/floor/floor.c does not exist"
elif ! command -v cc >/dev/null; then
	echo "floor              skipped: no C compiler (cc)"
elif cc -O2 -o "$tmp/floor" bench/floor/floor.c; then
	floor=(-floor "$tmp/floor")
else
	echo "floor              skipped: bench/floor/floor.c did not build with cc -O2"
fi
"$tmp/generators" -showdown "$tmp/showdown" -hello "$tmp/hello" "${floor[@]}" "$@"
