#!/usr/bin/env bash
# A service's CPU per request at one moderate rate depends on the shape of
# the traffic that brings the requests: how many keep-alive connections
# they come over and how evenly they are spaced. This script reads it
# under six shapes, for every stack of plans/default.yaml on the
# `string` workload: one fresh `showdown up` per stack, pinned to CPU 0
# from its first instruction (taskset on the whole command), warmed by
# `showdown attack` at the rate (WARM seconds, WARM_JVM for the JVMs, as
# bench/cpu-per-request.sh warms), then from CPU 1, each for DUR seconds
# at RATE req/s:
#
#   wrk2 -c1, -c16, -c64   wrk -R RATE -c C -t 1 -d DUR (giltene/wrk2:
#                          even arrivals, one thread, C connections)
#   hey -c50               hey -z DURs -c 50 -q RATE/50 (50 workers, each
#                          paced on its own, closed per worker)
#   showdown even/1        showdown attack --arrivals even --connections 1 --max-inflight 1
#   showdown poisson/50    showdown attack --arrivals poisson --connections 50
#                          (the main job's default shape)
#
# Each run is bracketed by the service's process tree's CPU time from
# /proc (utime + stime of every process of the tree, and cutime + cstime
# of its reaped children, in ticks): the tree is the process listening on
# the port and everything under the topmost of its ancestors that
# `showdown up` started. CPU per request is that over the requests the
# tool counts as answered. It prints a Markdown table (stack x shape,
# µs/request) headed by the host's CPU model, the date and the commit,
# then each stack's rank under each shape (1: least CPU per request) and
# the pairs of stacks whose order differs between shapes, then for the
# showdown shapes the generator's own reading (its summary.json: requests,
# achieved rate against the target, p99, send lateness, connections it
# opened, its own CPU per request), and for every cell whether the
# requests answered are within 10% of RATE x DUR (a cell under it is
# marked: the stack did not carry the rate under that shape, or the tool
# did not send it).
#
# wrk2 is not packaged in Debian: WRK2 names its binary, or a wrk2 on
# PATH is used, or it is built from source (WRK2_SRC, a git URL or a
# local clone, default https://github.com/giltene/wrk2, at WRK2_REV,
# default 44a94c1, the commit bench/README.md's figures used) into
# ${XDG_CACHE_HOME:-~/.cache}/showdown/wrk2/WRK2_REV, outside the repo,
# with its own make (LuaJIT bundled; needs cc, make and OpenSSL's
# headers). If it cannot be built the script says so and skips wrk2's
# columns; without hey (apt-get install hey) it skips hey's.
#
# Usage: bench/shapes.sh
# Environment: STACKS (plans/default.yaml's six), RATE (4300), DUR (20),
# WARM (30), WARM_JVM (180: java-spring took 135-207 s to steady on one
# CPU), WARM_FULL and WARM_FULL_JVM (0: none; seconds of a closed model
# of 50 users at full speed before the warm-up at the rate, as the main
# job warms its stacks: a JIT sees many times the requests, and compiles
# what a warm-up at a moderate rate leaves still compiling), PORT (18690), WRK2, WRK2_SRC, WRK2_REV, SHAPES (all six; a
# subset by name: "wrk2-c1 wrk2-c16 wrk2-c64 hey-c50 showdown-even-1
# showdown-poisson-50"), KEEP (a folder to keep every tool's output in).
set -euo pipefail
cd "$(dirname "$0")/.."
stacks=${STACKS:-go-stdlib rust-axum java-spring java-helidon node-http python-fastapi}
rate=${RATE:-4300}
dur=${DUR:-20}
warm=${WARM:-30}
warm_jvm=${WARM_JVM:-180}
warm_full=${WARM_FULL:-0}
warm_full_jvm=${WARM_FULL_JVM:-$warm_full}
port=${PORT:-18690}
shapes=${SHAPES:-wrk2-c1 wrk2-c16 wrk2-c64 hey-c50 showdown-even-1 showdown-poisson-50}
[ "$(nproc)" -ge 2 ] || { echo "shapes.sh: needs 2 CPUs (service on CPU 0, load on CPU 1)" >&2; exit 2; }
[ "$rate" -ge 50 ] || { echo "shapes.sh: RATE must be at least 50 (hey's 50 workers at RATE/50 each)" >&2; exit 2; }

work=$(mktemp -d)
up_pid=
tool_pid=
cleanup() {
	if [ -n "$tool_pid" ]; then kill "$tool_pid" 2>/dev/null || true; wait "$tool_pid" 2>/dev/null || true; fi
	if [ -n "$up_pid" ]; then kill -INT "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; fi
	if [ -n "${KEEP:-}" ]; then { mkdir -p "$KEEP" && cp -r "$work"/. "$KEEP"/; } 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_tool OUT CMD...: runs CMD in the background with its output in OUT
# and waits for it, so that the cleanup can stop it on Ctrl-C.
run_tool() {
	local out=$1 rc=0
	shift
	"$@" >"$out" 2>&1 &
	tool_pid=$!
	wait "$tool_pid" || rc=$?
	tool_pid=
	return "$rc"
}

go build -o bin/showdown ./cmd/showdown

# wrk2: given, on PATH, cached, or built from source into the cache.
wrk2=${WRK2:-$(command -v wrk2 || true)}
wrk2_rev=${WRK2_REV:-44a94c1}
wrk2_cache=${XDG_CACHE_HOME:-$HOME/.cache}/showdown/wrk2/$wrk2_rev
wrk2_note=
if [ -z "$wrk2" ] && [ -x "$wrk2_cache/wrk" ]; then wrk2=$wrk2_cache/wrk; fi
if [ -z "$wrk2" ] && [[ " $shapes " == *" wrk2-"* ]]; then
	src=${WRK2_SRC:-https://github.com/giltene/wrk2}
	echo "building wrk2 $wrk2_rev from $src into $wrk2_cache (once)" >&2
	rm -rf "$wrk2_cache.tmp"
	mkdir -p "$(dirname "$wrk2_cache")"
	if git clone -q "$src" "$wrk2_cache.tmp" >"$work/wrk2-build.log" 2>&1 &&
		git -C "$wrk2_cache.tmp" checkout -q "$wrk2_rev" >>"$work/wrk2-build.log" 2>&1 &&
		nice -n 19 make -C "$wrk2_cache.tmp" >>"$work/wrk2-build.log" 2>&1 &&
		[ -x "$wrk2_cache.tmp/wrk" ]; then
		rm -rf "$wrk2_cache"
		mv "$wrk2_cache.tmp" "$wrk2_cache"
		wrk2=$wrk2_cache/wrk
	else
		wrk2_note="wrk2 could not be built from $src at $wrk2_rev ($(tail -1 "$work/wrk2-build.log")): its columns are skipped"
		echo "$wrk2_note" >&2
		rm -rf "$wrk2_cache.tmp"
	fi
fi
hey_note=
if ! command -v hey >/dev/null && [[ " $shapes " == *" hey-"* ]]; then
	hey_note="hey is not installed (apt-get install hey): its column is skipped"
	echo "$hey_note" >&2
fi

body='{"s":"hello"}'
printf 'wrk.method = "POST"\nwrk.body = [[%s]]\nwrk.headers["Content-Type"] = "application/json"\n' "$body" >"$work/post.lua"

# tree_ticks UP_PID PORT: the CPU ticks of the service's process tree.
tree_ticks() {
	python3 - "$1" "$2" <<'PY'
import os, subprocess, sys
up, port = int(sys.argv[1]), sys.argv[2]
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()
procs = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            procs[int(d)] = stat(d)
        except OSError:
            pass
ss = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
import re
m = re.search(r"pid=(\d+)", ss)
if not m:
    sys.exit(f"no process listens on {port}")
root = int(m.group(1))
# Up to the topmost ancestor below `showdown up`.
while root in procs and int(procs[root][1]) not in (up, 0, 1):
    root = int(procs[root][1])
tree, todo = set(), [root]
while todo:
    p = todo.pop()
    tree.add(p)
    todo += [q for q, f in procs.items() if int(f[1]) == p and q not in tree]
# utime, stime (fields 14, 15) of every live process; cutime, cstime
# (16, 17) count the children each has reaped, which are gone.
print(sum(sum(int(x) for x in procs[p][11:15]) for p in tree if p in procs), root, len(tree))
PY
}
hz=$(getconf CLK_TCK)

commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
rows=$work/rows.tsv
: >"$rows"
url=http://127.0.0.1:$port
for svc in $stacks; do
	echo "$svc: starting (showdown up on CPU 0)" >&2
	taskset -c 0 bin/showdown up --service "$svc" --workload string --port "$port" >"$work/up-$svc.log" 2>&1 &
	up_pid=$!
	for _ in $(seq 1200); do
		grep -q '^up;' "$work/up-$svc.log" && break
		kill -0 "$up_pid" 2>/dev/null || break
		sleep 0.5
	done
	if ! grep -q '^up;' "$work/up-$svc.log"; then
		echo "$svc: showdown up did not come up:" >&2
		tail -20 "$work/up-$svc.log" >&2
		exit 1
	fi
	w=$warm
	f=$warm_full
	case $svc in java-*) w=$warm_jvm f=$warm_full_jvm ;; esac
	if [ "$f" -gt 0 ]; then
		echo "$svc: warming ${f}s at full speed, 50 users" >&2
		run_tool "$work/warm-full-$svc.txt" taskset -c 1 bin/showdown attack --users 50 --duration "${f}s" --method POST \
			--header 'Content-Type: application/json' --body "$body" "$url/uppercase"
	fi
	echo "$svc: warming ${w}s at $rate req/s" >&2
	run_tool "$work/warm-$svc.txt" taskset -c 1 bin/showdown attack --rate "$rate" --duration "${w}s" --method POST \
		--header 'Content-Type: application/json' --body "$body" "$url/uppercase"
	for shape in $shapes; do
		out=$work/$svc-$shape
		case $shape in
		wrk2-c*) [ -n "$wrk2" ] || continue ;;
		hey-*) [ -z "$hey_note" ] || continue ;;
		esac
		read -r t0 root nprocs < <(tree_ticks "$up_pid" "$port")
		rc=0
		case $shape in
		wrk2-c*)
			c=${shape#wrk2-c}
			run_tool "$out.txt" taskset -c 1 "$wrk2" -R "$rate" -c "$c" -t 1 -d "${dur}s" -s "$work/post.lua" "$url/uppercase" || rc=$?
			;;
		hey-c*)
			c=${shape#hey-c}
			run_tool "$out.txt" taskset -c 1 hey -z "${dur}s" -c "$c" -q "$((rate / c))" -m POST -T application/json -d "$body" "$url/uppercase" || rc=$?
			;;
		showdown-*)
			a=${shape#showdown-}
			c=${a#*-}
			a=${a%%-*}
			# One connection stays one (a fixed pool, as the main job's
			# contrast and wrk2's -c 1); a pool of 50 may grow when busy.
			fixed=()
			[ "$c" = 1 ] && fixed=(--max-inflight 1)
			run_tool "$out.txt" taskset -c 1 bin/showdown attack --rate "$rate" --duration "${dur}s" --arrivals "$a" --connections "$c" "${fixed[@]}" \
				--method POST --header 'Content-Type: application/json' --body "$body" --out "$out" "$url/uppercase" || rc=$?
			;;
		*) echo "shapes.sh: unknown shape $shape" >&2; exit 2 ;;
		esac
		read -r t1 _ _ < <(tree_ticks "$up_pid" "$port")
		if [ "$rc" -ne 0 ]; then
			echo "$svc $shape: the tool failed (exit $rc):" >&2
			tail -5 "$out.txt" >&2
			continue
		fi
		# requests answered, errors, by the tool's own count.
		read -r n bad < <(python3 - "$shape" "$out" <<'PY'
import json, re, sys
shape, out = sys.argv[1], sys.argv[2]
if shape.startswith("showdown"):
    t = json.load(open(out + "/summary.json"))["total"]
    print(t["samples"], t["errors"])
    sys.exit()
txt = open(out + ".txt").read()
if shape.startswith("wrk2"):
    n = int(re.search(r"^\s*(\d+) requests in", txt, re.M).group(1))
    bad = sum(int(x) for x in re.findall(r"Non-2xx or 3xx responses: (\d+)", txt))
    bad += sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", txt))
else:  # hey: its status code distribution, "  [200]\t86000 responses"
    # and its error distribution, "  [12]\tPost ...: dial tcp ...".
    codes = {int(c): int(k) for c, k in re.findall(r"^\s*\[(\d+)\]\s+(\d+) responses", txt, re.M)}
    n = sum(codes.values())
    errs = txt.split("Error distribution:", 1)[1] if "Error distribution:" in txt else ""
    bad = n - codes.get(200, 0) + sum(int(x) for x in re.findall(r"^\s*\[(\d+)\]\s+\D", errs, re.M))
print(n, bad)
PY
)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$svc" "$shape" "$((t1 - t0))" "$n" "$bad" "$root" "$nprocs" >>"$rows"
		echo "$svc $shape: $((t1 - t0)) ticks, $n requests, $bad errors" >&2
	done
	kill -INT "$up_pid" 2>/dev/null || true
	wait "$up_pid" 2>/dev/null || true
	up_pid=
done

python3 - "$rows" "$work" "$hz" "$rate" "$dur" "$cpu_model" "$commit" "$(date -u +%FT%TZ)" "$stacks" "$shapes" "$wrk2_note" "$hey_note" "${wrk2:+$wrk2 ($wrk2_rev)}" <<'PY'
import itertools, json, os, sys
rows, work, hz, rate, dur, cpu, commit, when, stacks, shapes, wnote, hnote, wrk2 = sys.argv[1:14]
hz, rate, dur = float(hz), float(rate), float(dur)
stacks, shapes = stacks.split(), shapes.split()
us, cnt, err = {}, {}, {}
for line in open(rows):
    svc, shape, ticks, n, bad, root, nprocs = line.rstrip("\n").split("\t")
    n = int(n)
    if n > 0:
        us[svc, shape] = float(ticks) / hz / n * 1e6
    cnt[svc, shape], err[svc, shape] = n, int(bad)
shapes = [s for s in shapes if any((v, s) in us for v in stacks)]
offered = rate * dur
short = lambda k: cnt.get(k, 0) < 0.9 * offered
print(f"# CPU per request by traffic shape: {cpu}, {os.cpu_count()} CPUs; {when}; commit {commit}")
print(f"\nservice on CPU 0, load on CPU 1; `string` (POST /uppercase); {rate:.0f} req/s for {dur:.0f} s per cell; "
      f"µs of the service tree's CPU (user + system, /proc, {hz:.0f} ticks/s) per request answered")
if wrk2:
    print(f"wrk2: {wrk2}")
for n in (wnote, hnote):
    if n:
        print(n)
print()
print("| stack | " + " | ".join(shapes) + " |")
print("|---|" + "---:|" * len(shapes))
for v in stacks:
    cells = []
    for s in shapes:
        k = (v, s)
        if k not in us:
            cells.append("–")
            continue
        c = f"{us[k]:.1f}"
        if short(k) or err.get(k):
            c += " †"
        cells.append(c)
    print(f"| {v} | " + " | ".join(cells) + " |")
if any(short(k) or err.get(k) for k in us):
    print(f"\n† answered fewer than 90% of the {offered:.0f} requests offered, or had errors (below).")
print("\n## Rank under each shape (1: least CPU per request)\n")
print("| stack | " + " | ".join(shapes) + " |")
print("|---|" + "---:|" * len(shapes))
rank = {}
for s in shapes:
    order = sorted((v for v in stacks if (v, s) in us), key=lambda v: us[v, s])
    for i, v in enumerate(order):
        rank[v, s] = i + 1
for v in stacks:
    print(f"| {v} | " + " | ".join(str(rank.get((v, s), "–")) for s in shapes) + " |")
print("\n## Pairs whose order changes between shapes\n")
changed = 0
for a, b in itertools.combinations(stacks, 2):
    cheaper = {a: [], b: []}
    close = []
    for s in shapes:
        if (a, s) in us and (b, s) in us:
            x, y = us[a, s], us[b, s]
            cheaper[a if x < y else b].append(s)
            if abs(x - y) < 0.05 * min(x, y):
                close.append(s)
    if cheaper[a] and cheaper[b]:
        changed += 1
        note = f" (within 5% of each other under {', '.join(close)}: one reading each, no interval)" if close else ""
        print(f"- {a} / {b}: {a} cheaper under {', '.join(cheaper[a])}; {b} cheaper under {', '.join(cheaper[b])}{note}")
if not changed:
    print("- none: every pair keeps its order under every shape")
print("\n## Requests answered, and the generator's own reading\n")
print(f"| stack | shape | answered | of offered | errors | µs/request | showdown: achieved/target | p99 ms | send lateness p99 ms | connections opened | generator µs/request | shape said |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for v in stacks:
    for s in shapes:
        k = (v, s)
        if k not in cnt:
            continue
        cols = [v, s, str(cnt[k]), f"{cnt[k] / offered:.3f}" + (" (under 90%)" if short(k) else ""), str(err[k]), f"{us[k]:.1f}" if k in us else "–"]
        p = os.path.join(work, f"{v}-{s}", "summary.json")
        if s.startswith("showdown") and os.path.exists(p):
            j = json.load(open(p))
            t = j["total"]
            ach = j.get("achieved_rate", 0) / j["target_rate"] if j.get("target_rate") else 0
            gen = j["cpu_seconds"] / t["samples"] * 1e6 if t["samples"] else 0
            cols += [f"{ach:.3f}" + ("" if abs(ach - 1) <= 0.1 else " (not within 10%)"), f'{t["latency_ms"].get("p99", 0):.3f}',
                     f'{j.get("send_lateness_ms", {}).get("p99", 0):.3f}', str(j.get("connections_opened", "–")), f"{gen:.1f}", j.get("shape", "")]
        else:
            cols += ["", "", "", "", "", ""]
        print("| " + " | ".join(cols) + " |")
PY
