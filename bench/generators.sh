#!/usr/bin/env bash
# Benchmarks showdown's load generator side by side with wrk, hey and k6
# (peak throughput, CPU per request and send lateness in the open model,
# memory per user).
# Installs nothing: a missing tool is skipped with a line saying so.
# Usage: bench/generators.sh [-duration 10s] [-only throughput,cpu,lateness,memory] [-tools showdown,wrk,hey,k6]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v taskset >/dev/null || { echo "generators.sh: taskset (util-linux) is required" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/showdown" ./cmd/showdown
go build -o "$tmp/hello" ./bench/attack/hello
go build -o "$tmp/generators" ./bench/attack/generators
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || true), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/generators" -showdown "$tmp/showdown" -hello "$tmp/hello" "$@"
