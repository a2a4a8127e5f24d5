#!/usr/bin/env bash
# How stacks scale with cores, on a many-core machine: bench/cores.yaml
# (go-stdlib and rust-axum on string, cores 1, 2, 4 and 8; each
# implementation at each count an arm of the same interleaved rounds,
# pinned to CPUs 0..n-1, the generator on the CPUs after the largest
# count), then the report's cores table and crossings.
#
#   bench/cores.sh pack   where the toolchains are: builds bin/showdown and
#                         the services' artifacts, packs bin/carry/cores.tar.xz
#                         (carry that path to the machine); BUILT=1 packs
#                         the services' artifacts as they are
#   bench/cores.sh        there: unpacks bin/carry/cores.tar.xz when
#                         bin/showdown is missing, runs the plan from the
#                         carried artifacts (SHOWDOWN_PREBUILT=1; no Go, no
#                         cargo needed) and prints the table
#
# Environment: CORES (the counts, default "1 2 4 8"; the plan is refused
# where the machine has fewer than 2 x the largest CPUs), SERVICES
# (default "go-stdlib rust-axum"), OUT (a folder for the results; default
# results/), PREBUILT (default 1: the artifacts as they are; 0 builds
# what is out of date, with the toolchains), LIMIT
# (seconds: then showdown is interrupted, and writes what it measured).
set -euo pipefail
cd "$(dirname "$0")/.."
services=${SERVICES:-go-stdlib rust-axum}
carry=bin/carry/cores.tar.xz

# artifact is a service's built artifact, from its manifest.
artifact() { sed -n 's/^artifact: *\([^ #]*\).*/\1/p' "services/$1/showdown.yaml"; }

if [ "${1:-}" = pack ]; then
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/showdown ./cmd/showdown
	files=(bin/showdown)
	for s in $services; do
		# The manifests' build steps; go-stdlib static (CGO_ENABLED=0), so
		# it runs whatever the other machine's libc.
		[ -f "services/$s/showdown.yaml" ] || { echo "cores.sh: no service $s" >&2; exit 2; }
		case ${BUILT:-0}:$s in
		1:*) ;; # BUILT=1: pack the artifacts as they are
		*:go-stdlib) (cd services/go-stdlib && CGO_ENABLED=0 go build -trimpath -o bin/server .) ;;
		*:rust-axum) (cd services/rust-axum && cargo build --release --locked -j 2) ;;
		*) echo "cores.sh: pack builds go-stdlib and rust-axum; build $s by hand and add $(artifact "$s")" >&2; exit 2 ;;
		esac
		files+=("services/$s/$(artifact "$s")")
	done
	mkdir -p bin/carry
	tar -cJf "$carry" "${files[@]}"
	ls -l "$carry"
	exit 0
fi

if [ ! -x bin/showdown ] && [ -f "$carry" ]; then
	tar -xJf "$carry"
fi
[ -x bin/showdown ] || { echo "cores.sh: no bin/showdown; run bench/cores.sh pack where Go is, and carry $carry" >&2; exit 2; }
prebuilt=${PREBUILT:-1}
cores=${CORES:-1 2 4 8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - bench/cores.yaml "$work/cores.yaml" "$cores" "$services" <<'PY'
import sys
src, dst, cores, services = sys.argv[1:5]
out = []
for line in open(src):
    if line.startswith("cores:"):
        line = "cores: [" + ", ".join(cores.split()) + "]\n"
    elif line.startswith("implementations:"):
        line = "implementations: [" + ", ".join(services.split()) + "]\n"
    out.append(line)
open(dst, "w").write("".join(out))
PY
results=${OUT:-results}
mkdir -p "$results"
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(lscpu | sed -n 's/^Model name: *//p') x$(nproc); cores [$cores]; $services; SHOWDOWN_PREBUILT=$prebuilt"
began=$(date +%s)
set +e
SHOWDOWN_PREBUILT=$prebuilt ${LIMIT:+timeout -s INT "$LIMIT"} bin/showdown run --results "$results" "$work/cores.yaml" >"$work/out" 2>&1
rc=$?
set -e
run=$(ls -td "$results"/*-cores/ 2>/dev/null | head -1)
if [ -z "$run" ] || [ ! -f "$run/summary.md" ]; then
	echo "cores.sh: the run wrote no summary (exit $rc):" >&2
	tail -20 "$work/out" >&2
	exit 1
fi
grep -E '^(warning: |cores )' "$work/out" || true
# The cores table, its note and the crossings, as summary.md has them.
awk '/^Scaling with cores/{p=1} p&&/^(Warnings:|## )/{exit} p' "$run/summary.md"
echo "exit $rc, $(( $(date +%s) - began )) s; results in $run"
