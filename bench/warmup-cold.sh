#!/usr/bin/env bash
# Does the warm-up rule end a JVM's warm-up when it is warm? Drives
# java-spring cold for 240 s in one process at the default plan's load
# (closed model, 50 users, the string workload's scenario, no ramp-up),
# the service pinned to CPU 0 and the generator to CPU 1 as the lab pins
# them (`showdown up`, `showdown attack --out`), samples its JIT compiler
# threads once a second meanwhile, then applies the lab's rule (package
# warmup, offline, bench/warmup-cold/main.go) to that process's
# per-second series and compares the throughput of the rule's steady
# window with the last 40 s of the process. The target: not more than 5%
# lower (exit 3 when it is). It prints the CPU model and the machine's
# noise first (`showdown noise`, the lab's probe): run it on a quiet
# machine for figures, and say which.
# Usage: bench/warmup-cold.sh
# Environment: SERVICE (default java-spring), DURATION (s, default 240),
# LAST (s, default 40), PORT (default 18490), KEEP=1 keeps the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
svc=${SERVICE:-java-spring}
secs=${DURATION:-240}
last=${LAST:-40}
port=${PORT:-18490}
[ "$(nproc)" -ge 2 ] || { echo "warmup-cold.sh: needs 2 CPUs (service on CPU 0, generator on CPU 1)" >&2; exit 2; }

go build -o bin/showdown ./cmd/showdown
go build -o bin/warmup-cold ./bench/warmup-cold
out=$(mktemp -d)
up_pid=
cleanup() {
	if [ -n "$up_pid" ]; then kill -INT "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; fi
	if [ "${KEEP:-}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT

printf '%s UTC, commit %s, %s, %s CPUs, load average %s\n' "$(date -u '+%F %T')" "$(git rev-parse --short HEAD)" \
	"$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine noise (the lab's probe, 11 s on CPUs 0 and 1 at once):"
bin/showdown noise --seconds 11 --cpus 0,1

taskset -c 0 bin/showdown up --service "$svc" --workload string --port "$port" >"$out/up.log" 2>&1 &
up_pid=$!
for _ in $(seq 600); do grep -q '^up;' "$out/up.log" && break; sleep 0.5; done
grep -q '^up;' "$out/up.log" || { echo "$svc: showdown up did not come up:"; tail -20 "$out/up.log"; exit 1; }
pid=$(sed -n 's/.*(pid \([0-9]*\),.*/\1/p' "$out/up.log" | head -1)
echo "$svc: pid $pid, cold; ${secs} s at 50 users"
taskset -c 1 bin/warmup-cold -pid "$pid" -out "$out/attack" -last "${last}s" -- \
	bin/showdown attack --scenario workloads/string/scenario.yaml --base-url "http://127.0.0.1:$port" \
	--users 50 --duration "${secs}s" --out "$out/attack"
