#!/usr/bin/env bash
# Does "your change, judged" (docs/your-change.md) catch a slower change,
# and stay quiet about an unchanged one? Makes a git repository of its own
# holding a copy of services/go-stdlib with three tagged commits:
#   base   the copy as it is;
#   same   a change to its README only (nothing the build sees);
#   slow   SPIN_US (default 2) microseconds of busy work added to each
#          /uppercase request (4 µs made it 24% slower on an AMD EPYC core).
# Then:
#   1. the true ratio: one run of base against slow with the defaults (no
#      budget, no precision: ±3% within 10 minutes), the method of
#      ../shared/MEASURING.md (fresh starts, interleaved rounds, an
#      interval); skipped when TRUE gives the ratio;
#   2. N_SLOW runs (default 10) of base against slow, and N_SAME runs
#      (default 20) of base against same, each with BUDGET (default 2m;
#      "default" for the plan's defaults) and fail_if: {slower_than: 5%}.
# For each run it prints the ratio, its interval, the verdict and the
# exit code; then how many slow runs were judged slower, how many of
# their intervals hold the true ratio, how many same runs claimed a
# difference, with exact (Clopper-Pearson) 95% intervals, and how many
# exits fail_if gave each kind.
# Usage: bench/yourchange.sh
# Environment: N_SLOW (10), N_SAME (20), BUDGET (2m), SPIN_US (2), TRUE
# (the true ratio base/slow, to skip step 1), KEEP (1: keep the folder,
# with each run's run.json, summary.md and log under runs/).
set -euo pipefail
cd "$(dirname "$0")/.."
n_slow=${N_SLOW:-10}
n_same=${N_SAME:-20}
budget=${BUDGET:-2m}
spin=${SPIN_US:-2}
command -v jq >/dev/null || { echo "yourchange.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
go build -o bin/showdown ./cmd/showdown
sd=$PWD/bin/showdown
work=$(mktemp -d /tmp/yourchange.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# The repository: base, same (README only), slow (busy work per request).
repo=$work/repo
mkdir -p "$repo"
cp -r services/go-stdlib "$repo/our-service"
rm -rf "$repo/our-service/bin"
sed -i 's/^name: go-stdlib$/name: our-service/' "$repo/our-service/showdown.yaml"
git -C "$repo" init -q
git -C "$repo" -c user.name=bench -c user.email=bench@localhost add -A
git -C "$repo" -c user.name=bench -c user.email=bench@localhost commit -qm base
git -C "$repo" tag base
echo "A line that changes nothing the build sees." >>"$repo/our-service/README.md"
git -C "$repo" -c user.name=bench -c user.email=bench@localhost commit -qam same
git -C "$repo" tag same
git -C "$repo" checkout -q base
python3 - "$repo/our-service/string.go" "$spin" <<'PY'
import sys
p, spin = sys.argv[1], sys.argv[2]
s = open(p).read()
s = s.replace('import (\n', 'import (\n\t"time"\n', 1)
old = "\twriteJSON(w, http.StatusOK, stringResult{toUpper(s)})"
assert old in s
s = s.replace(old, "\tfor end := time.Now().Add(%s * time.Microsecond); time.Now().Before(end); {\n\t}\n%s" % (spin, old), 1)
open(p, "w").write(s)
PY
gofmt -l "$repo/our-service" >/dev/null
git -C "$repo" -c user.name=bench -c user.email=bench@localhost commit -qam "slow: ${spin} µs of busy work per /uppercase request"
git -C "$repo" tag slow
git -C "$repo" checkout -q base

plan() { # name arm2 budget
	{
		echo "name: $1"
		echo "implementations:"
		echo "  - {path: our-service, rev: base}"
		echo "  - {path: our-service, rev: $2}"
		echo "workloads: [string]"
		echo "load: {model: closed, levels: [50], warmup: auto}"
		echo "fail_if: {slower_than: 5%}"
		[ "$3" = default ] || echo "budget: $3"
	} >"$repo/$1.yaml"
	echo "$repo/$1.yaml"
}

# run PLAN: prints "ratio low high significant better starts seconds exit".
run() {
	local out=$work/out code=0
	rm -rf "$out"
	"$sd" run --results "$out" "$1" >"$work/stdout" 2>"$work/log" || code=$?
	if [ "$code" != 0 ] && [ "$code" != 3 ]; then echo "run of $1 failed (exit $code):" >&2; tail -8 "$work/log" >&2; exit 1; fi
	local dir
	dir=$(ls -d "$out"/*/ | tail -1)
	local keep
	keep=$work/runs/$(date -u +%H%M%S)-$(basename "$1" .yaml)
	mkdir -p "$work/runs"
	cp "$dir/run.json" "$keep.json"
	cp "$work/log" "$keep.log"
	[ ! -f "$dir/summary.md" ] || cp "$dir/summary.md" "$keep.md"
	jq -r --arg code "$code" '.comparisons[0].verdict as $v | $v.pairs[0] | "\(.ratio) \(.low) \(.high) \(.significant) \(.better) \(.starts) \($v.measured_seconds) \($code)"' "$dir/run.json"
}

echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD) $(lscpu | sed -n 's/^Model name: *//p') x$(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); our-service = go-stdlib, slow = +${spin} µs per request; budget $budget per run"
{ "$sd" noise --seconds 11 2>&1 || true; } | grep -E '^\| [0-9]|CV|floor:' | sed 's/^/# /' || true

truth=${TRUE:-}
if [ -z "$truth" ]; then
	began=$SECONDS
	read -r ratio low high sig better starts secs code < <(run "$(plan truth slow default)")
	[ -n "${code:-}" ] || exit 1
	printf 'true ratio (defaults, %d s): base/slow %.4f [%.4f, %.4f], ±%.1f%%, %s starts, better %s\n' "$((SECONDS - began))" "$ratio" "$low" "$high" "$(python3 -c "print(($high - $low) / 2 / $ratio * 100)")" "$starts" "$better"
	truth=$ratio
	[ "$better" = "our-service@base" ] || truth=$(python3 -c "print(1 / $ratio)")
fi

slower=0 holds=0 slow_fail=0 claims=0 same_fail=0
for i in $(seq 1 "$n_slow"); do
	read -r ratio low high sig better starts secs code < <(run "$(plan slow slow "$budget")")
	[ -n "${code:-}" ] || exit 1
	# ratio is better/worse; as base/slow:
	if [ "$better" != "our-service@base" ]; then read -r ratio low high < <(python3 -c "print(1 / $ratio, 1 / $high, 1 / $low)"); fi
	judged=-
	if [ "$sig" = true ] && [ "$better" = "our-service@base" ]; then judged=SLOWER; slower=$((slower + 1)); fi
	hold=$(python3 -c "print('holds' if $low <= $truth <= $high else 'misses')")
	[ "$hold" = holds ] && holds=$((holds + 1))
	[ "$code" = 3 ] && slow_fail=$((slow_fail + 1))
	printf 'slow %2d: base/slow %.4f [%.4f, %.4f] %s starts, %.0f s of rounds: %s, interval %s the true ratio, exit %s\n' "$i" "$ratio" "$low" "$high" "$starts" "$secs" "$judged" "$hold" "$code"
done
for i in $(seq 1 "$n_same"); do
	read -r ratio low high sig better starts secs code < <(run "$(plan same same "$budget")")
	[ -n "${code:-}" ] || exit 1
	claimed=-
	if [ "$sig" = true ]; then claimed="CLAIMED ($better faster)"; claims=$((claims + 1)); fi
	[ "$code" = 3 ] && same_fail=$((same_fail + 1))
	printf 'same %2d: %.4f [%.4f, %.4f] %s starts, %.0f s of rounds: %s, exit %s\n' "$i" "$ratio" "$low" "$high" "$starts" "$secs" "$claimed" "$code"
done

python3 - "$slower" "$n_slow" "$holds" "$claims" "$n_same" "$slow_fail" "$same_fail" "$truth" <<'PY'
import sys
slower, n_slow, holds, claims, n_same, slow_fail, same_fail = map(int, sys.argv[1:8])
truth = float(sys.argv[8])
sys.path.insert(0, "bench")
from clopper_pearson import interval as cp
for what, k, n in (("slow judged slower", slower, n_slow), ("slow intervals holding the true ratio %.4f" % truth, holds, n_slow), ("same claimed a difference", claims, n_same)):
    if n:
        lo, hi = cp(k, n)
        print(f"{what}: {k} of {n} ({100 * k / n:.0f}%, 95% interval [{100 * lo:.0f}%, {100 * hi:.0f}%])")
print(f"fail_if slower_than 5% exited 3 in {slow_fail} of {n_slow} slow runs and {same_fail} of {n_same} same runs")
PY
