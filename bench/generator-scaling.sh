#!/usr/bin/env bash
# The generator across CPUs: CPU per request of showdown (the plain-URL
# engine and the scenario engine) at fixed arrival rates, and of its closed
# model, with the generator pinned to 1, 2 and 4 CPUs, beside wrk2 (the
# same rates) and wrk (closed, the same connections) on the same CPUs,
# against bench/attack/hello pinned to CPUs of its own. One run each; CPU
# is the user + system time of the generator's process over its run,
# divided by the requests it completed. For a many-CPU machine (the server
# takes SERVER_CPUS, default 8-15); runs carried binaries where there is
# no Go toolchain (bin/showdown, bin/hello).
# Environment: GEN (generator CPU lists, default "0 0-1 0-3"), RATES
# (per CPU of the generator, default "20000 50000"), SECS (5), CONNS (50
# per generator CPU), WRK2 (path of giltene/wrk2's binary; skipped
# without), WRK (default wrk on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v go >/dev/null && [ "${SHOWDOWN_PREBUILT:-0}" != 1 ]; then
	go build -o bin/showdown ./cmd/showdown
	go build -o bin/hello ./bench/attack/hello
fi
secs=${SECS:-5}
wrk=${WRK:-$(command -v wrk || true)}
wrk2=${WRK2:-$(command -v wrk2 || true)}
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
GOMAXPROCS=8 taskset -c "${SERVER_CPUS:-8-15}" bin/hello >"$work/addr" &
server=$!
for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
url="http://$(cat "$work/addr")/"
cat >"$work/one.yaml" <<YAML
name: one-step
steps:
  - name: hello
    method: GET
    url: $url
YAML
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(lscpu | sed -n 's/^Model name: *//p') x$(nproc); server on CPUs ${SERVER_CPUS:-8-15}, ${secs}s per run"
# childcpu writes the user + system seconds of this shell's finished children to $work/cpu.
# (times runs in this shell, not in a subshell, whose children are none.)
childcpu() { times >"$work/times"; tail -1 "$work/times" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.3f\n", u[1]*60 + u[2] + s[1]*60 + s[2] }' >"$work/cpu"; }
ncpus() { python3 -c "import sys; n=0
for p in sys.argv[1].split(','):
  a,_,b=p.partition('-'); n+=int(b or a)-int(a)+1
print(n)" "$1"; }
printf "%-8s %-22s %9s %11s %12s %10s\n" cpus tool mode req/s "µs CPU/req" "p50 ms"
for cpus in ${GEN:-0 0-1 0-3}; do
	n=$(ncpus "$cpus")
	c=$(( ${CONNS:-50} * n ))
	run() { # label mode rate cmd...
		local label=$1 mode=$2; shift 2
		local before after reqs p50
		childcpu; before=$(cat "$work/cpu")
		taskset -c "$cpus" "$@" >"$work/out" 2>&1 || true
		childcpu; after=$(cat "$work/cpu")
		case $label in
		wrk*) reqs=$(sed -n 's/^Requests\/sec: *//p' "$work/out"); p50=$(awk '$1 == "50%" || $1 == "50.000%" {print $2; exit}' "$work/out") ;;
		*) read -r reqs p50 < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
t = s.get("total") or {}
lat = t.get("latency_ms") or {}
print(t.get("throughput", 0), lat.get("p50", "-"))' "$work/sum/summary.json" 2>/dev/null || echo "0 -") ;;
		esac
		rm -rf "$work/sum"
		python3 - "$cpus" "$label" "$mode" "$reqs" "$before" "$after" "$secs" "$p50" <<'PY'
import sys
cpus,label,mode,reqs,b,a,secs,p50=sys.argv[1:]
try: r=float(reqs)
except: r=0
cpu=float(a)-float(b)
print("%-8s %-22s %9s %11.0f %12s %10s" % (cpus,label,mode,r,("%.2f" % (cpu/(r*float(secs))*1e6)) if r>0 else "-",p50))
PY
	}
	for per in ${RATES:-20000 50000}; do
		rate=$(( per * n ))
		run showdown "open $rate" bin/showdown attack --rate "$rate" --duration "${secs}s" --out "$work/sum" "$url"
		run showdown-scenario "open $rate" bin/showdown attack --rate "$rate" --duration "${secs}s" --out "$work/sum" --scenario "$work/one.yaml"
		[ -n "$wrk2" ] && run wrk2 "open $rate" "$wrk2" -t"$n" -c"$c" -d"${secs}s" -R"$rate" --latency "$url"
	done
	run showdown "closed $c" bin/showdown attack --users "$c" --duration "${secs}s" --out "$work/sum" "$url"
	run showdown-scenario "closed $c" bin/showdown attack --users "$c" --duration "${secs}s" --out "$work/sum" --scenario "$work/one.yaml"
	[ -n "$wrk" ] && run wrk "closed $c" "$wrk" -t"$n" -c"$c" -d"${secs}s" --latency "$url"
done
