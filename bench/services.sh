#!/usr/bin/env bash
# Runs every implementation on every workload at a fixed closed-model load
# (bench/services.yaml) and prints throughput, p99, CPU and RSS side by side,
# with each implementation's throughput as a ratio of the best on that
# workload, then per implementation its startup, warm-up until steady,
# memory before and after warm-up and load, and artifact size.
# Usage: bench/services.sh [extra showdown run flags]
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin/showdown run --results "$out" "$@" bench/services.yaml >/dev/null
dir=$(ls -d "$out"/*/ | head -1)
python3 - "$dir/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
rows = {}
for s in run["services"]:
    for l in s["levels"]:
        if l["status"] != "ok":
            continue
        t = l["total"]
        rows.setdefault(s["workload"], []).append((s["implementation"], t["throughput"], t["latency_ms"]["p99"],
            l["service"]["cpu_percent_mean"], l["service"]["rss_peak_bytes"] / 2**20, t["error_percent"],
            l["generator"]["cpu_percent_mean"]))
m = run["machine"]
print(f'{m["cpu_model"]}, {m["cpus"]} CPUs; commit {m.get("git_commit", "?")[:12]}; {run["plan"]["load"]["levels"][0]} users, {run["plan"]["load"]["duration"]} per cell')
print(f'{"workload":<8} {"implementation":<14} {"req/s":>9} {"ratio":>6} {"p99 ms":>8} {"CPU %":>6} {"RSS MiB":>8} {"err %":>6} {"gen CPU %":>9}')
for w, rs in rows.items():
    best = max(r[1] for r in rs) or 1
    for r in rs:
        print(f'{w:<8} {r[0]:<14} {r[1]:>9.0f} {r[1]/best:>6.2f} {r[2]:>8.2f} {r[3]:>6.0f} {r[4]:>8.1f} {r[5]:>6.2f} {r[6]:>9.0f}')
print()
print(f'{"implementation":<14} {"startup s":>9} {"warm-up s":>9} {"steady":>6} {"warm-up req":>11} {"RSS idle":>8} {"warm":>6} {"loaded":>6} {"artifact MiB":>12}')
seen = set()
for s in run["services"]:
    if s["implementation"] in seen:
        continue
    seen.add(s["implementation"])
    wu = s.get("warmup") or {}
    mib = lambda b: b / 2**20
    print(f'{s["implementation"]:<14} {s["startup_seconds"]:>9.2f} {wu.get("seconds", 0):>9.0f} {"yes" if wu.get("steady") else "NO":>6} '
          f'{wu.get("requests", 0):>11} {mib(s["rss_idle_bytes"]):>8.1f} {mib(s["rss_after_warmup_bytes"]):>6.1f} '
          f'{mib(s["rss_after_load_bytes"]):>6.1f} {mib(s["artifact_bytes"]):>12.1f}')
print('(warm-up: the first workload of each start, string, until steady or the cap; RSS in MiB of the service tree)')
for s in run["services"]:
    if s["status"] != "ok":
        print(f'FAILED: {s["implementation"]} on {s["workload"]}: {s["reason"]}')
PY
