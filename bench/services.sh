#!/usr/bin/env bash
# Runs every implementation on every workload at a fixed closed-model load
# (bench/services.yaml) and prints throughput, p99, CPU and RSS side by side,
# with each implementation's throughput as a ratio of the best on that
# workload, then per implementation its startup, warm-up until steady,
# memory before and after warm-up and load, and artifact size.
# With TRIALS=3 (or more) every cell is measured on that many fresh starts
# and the table gives the mean and the trial-to-trial CV of throughput.
# Usage: [SERVICES="go-stdlib rust-axum"] [WORKLOADS="string sku"] [TRIALS=3] [KEEP=dir] bench/services.sh [extra showdown run flags]
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/showdown ./cmd/showdown
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - bench/services.yaml "$out/plan.yaml" "${SERVICES:-}" "${TRIALS:-}" "${WORKLOADS:-}" <<'PY'
import sys
src, dst, services, trials, wls = sys.argv[1:6]
lines, skip = [], False
for line in open(src):
    if services and line.startswith("implementations:"):
        lines.append("implementations: [" + ", ".join(services.split()) + "]\n")
        skip = True
        continue
    if skip and line.startswith("  - "):
        continue
    skip = False
    if wls and line.startswith("workloads:"):
        line = "workloads: [" + ", ".join(wls.split()) + "]\n"
    if trials and line.startswith("trials:"):
        line = f"trials: {int(trials)}\n"
    lines.append(line)
open(dst, "w").writelines(lines)
PY
bin/showdown run --results "$out" "$@" "$out/plan.yaml" >/dev/null
dir=$(ls -d "$out"/*/ | head -1)
# KEEP=folder keeps the run's results (run.json, levels, report) there.
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$dir" "$KEEP"/; fi
python3 - "$dir/run.json" <<'PY'
import json, statistics, sys
run = json.load(open(sys.argv[1]))
cells = {}
for s in run["services"]:
    for l in s["levels"]:
        if l["status"] != "ok":
            continue
        cells.setdefault((s["workload"], s["implementation"]), []).append(l)
m = run["machine"]
load = run["plan"]["load"]
print(f'{m["cpu_model"]}, {m["cpus"]} CPUs; commit {m.get("git_commit", "?")[:12]}; {load["levels"][0]} users, '
      f'{load["duration"]} per cell, {run["plan"]["trials"]} trial(s) (fresh starts)')
n = m.get("noise")
if n:
    print('machine noise before the run (per-second CV of a memory-bound probe): ' +
          ', '.join(f'CPU {c} {v * 100:.0f}%' for c, v in zip(n["cpus"], n["cv"])))
print(f'{"workload":<8} {"implementation":<14} {"req/s":>9} {"CV %":>5} {"ratio":>6} {"p99 ms":>8} {"CPU %":>6} {"RSS MiB":>8} '
      f'{"err %":>6} {"gen CPU %":>9} {"disturbed":>9}')
mean = lambda xs: sum(xs) / len(xs)
workloads = []
for w, _ in cells:
    if w not in workloads:
        workloads.append(w)
for w in workloads:
    rows = [(i, ls) for (cw, i), ls in cells.items() if cw == w]
    best = max(mean([l["total"]["throughput"] for l in ls]) for _, ls in rows) or 1
    for i, ls in rows:
        tp = [l["total"]["throughput"] for l in ls]
        cv = f'{statistics.stdev(tp) / mean(tp) * 100:.1f}' if len(tp) > 1 and mean(tp) else "-"
        flagged = sum(1 for l in ls if (l.get("disturbance") or {}).get("flagged"))
        print(f'{w:<8} {i:<14} {mean(tp):>9.0f} {cv:>5} {mean(tp)/best:>6.2f} '
              f'{mean([l["total"]["latency_ms"]["p99"] for l in ls]):>8.2f} '
              f'{mean([l["service"]["cpu_percent_mean"] for l in ls]):>6.0f} '
              f'{max(l["service"]["rss_peak_bytes"] for l in ls) / 2**20:>8.1f} '
              f'{mean([l["total"]["error_percent"] for l in ls]):>6.2f} '
              f'{mean([l["generator"]["cpu_percent_mean"] for l in ls]):>9.0f} {f"{flagged}/{len(ls)}":>9}')

print()
print(f'{"implementation":<14} {"startup s":>9} {"warm-up s":>9} {"steady":>6} {"warm-up req":>11} {"RSS idle":>8} {"warm":>6} '
      f'{"loaded":>6} {"artifact MiB":>12}')
starts = {}
for s in run["services"]:
    # The first record of each start is the one whose warm-up was cold.
    starts.setdefault(s["implementation"], {}).setdefault(s.get("start") or s["trial"], s)
mib = lambda b: b / 2**20
for i, by_start in starts.items():
    ss = list(by_start.values())
    wus = [s.get("warmup") or {} for s in ss]
    steady = sum(1 for wu in wus if wu.get("steady"))
    print(f'{i:<14} {mean([s["startup_seconds"] for s in ss]):>9.2f} {mean([wu.get("seconds", 0) for wu in wus]):>9.0f} '
          f'{f"{steady}/{len(ss)}":>6} {mean([wu.get("requests", 0) for wu in wus]):>11.0f} '
          f'{mib(mean([s["rss_idle_bytes"] for s in ss])):>8.1f} {mib(mean([s["rss_after_warmup_bytes"] for s in ss])):>6.1f} '
          f'{mib(mean([s["rss_after_load_bytes"] for s in ss])):>6.1f} {mib(ss[0]["artifact_bytes"]):>12.1f}')
print('(means over starts; warm-up: the first workload of each start, until steady or the cap; RSS of the service tree;'
      ' disturbed: levels flagged because other processes or steal took CPU)')
for s in run["services"]:
    if s["status"] != "ok":
        print(f'FAILED: {s["implementation"]} on {s["workload"]}, trial {s["trial"]}: {s["reason"]}')
PY
