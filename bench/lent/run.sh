#!/usr/bin/env bash
# One call on the lent 16-CPU machine (bench/lent/README.md): unpacks the
# packs carried with it (bench/lent/pack.sh), checks that CPU pinning holds,
# runs the call's plan from the carried runtimes and artifacts within its
# budget, prints the cores table (and the scaling fit, where showdown
# writes one), and returns everything as one tar under $OUT.
#
#   bash bench/lent/run.sh 1        call 1: go-stdlib, java-helidon, java-spring at 1-8 cores (pack1)
#   bash bench/lent/run.sh 2        call 2: node-http, python-fastapi, go-stdlib at 1-8 cores (pack2)
#   bash bench/lent/run.sh 3        call 3: bank capacity, go-stdlib, java-spring, node-http at 1 and 4 (pack3 + pack1's jre, spring)
#   bash bench/lent/run.sh 4        call 4: rust-axum against go-stdlib at 1-8 cores (pack4)
#   bash bench/lent/run.sh next     the first call not yet done (the state file), else says none is left
#   bash bench/lent/run.sh unpack   only unpacks what was carried (to bring parts a later call needs)
#   bash bench/lent/run.sh status   what is done, what is unpacked, what is left
#   bash bench/lent/run.sh rehearse the rehearsal's plan (bench/lent/rehearse.sh, in a bare root here)
#
# Environment: LENT (where packs unpack, outside the tree; default
# /tmp/showdown-lent), BUDGET (seconds the whole call may take, default 540:
# 9 minutes by this script's clock), OUT (the folder the tar goes to;
# default results/lent), PINNING=ignore (go on when pinning does not hold).
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
began=$(date +%s)
budget=${BUDGET:-540}
lent=${LENT:-/tmp/showdown-lent}
out=${OUT:-$repo/results/lent}
state_repo=bench/lent/state
calls="1 2 3 4"

say() { echo "run.sh: $*" >&2; }
left() { echo $((began + budget - $(date +%s))); }

# What each call runs, and the parts it needs unpacked.
plan_of() { case $1 in rehearse) echo bench/lent/rehearse.yaml ;; *) echo "bench/lent/call$1.yaml" ;; esac; }
needs() {
	case $1 in
	1) echo "showdown go-stdlib jre helidon spring" ;;
	2) echo "showdown go-stdlib node python" ;;
	3) echo "showdown go-stdlib jre spring node pg" ;;
	4) echo "showdown go-stdlib rust-axum" ;;
	rehearse) echo "showdown go-stdlib rust-axum jre helidon spring node python pg" ;;
	esac
}
what_of() {
	case $1 in
	1) echo "go-stdlib vs java-helidon vs java-spring, string, cores 1 2 4 8, two starts" ;;
	2) echo "node-http and python-fastapi vs go-stdlib, string, cores 1 2 4 8, two starts" ;;
	3) echo "bank capacity at p99 <= 10 ms: go-stdlib, java-spring, node-http at cores 1 and 4, PostgreSQL on its own CPUs" ;;
	4) echo "rust-axum vs go-stdlib, string, cores 1 2 4 8, two starts" ;;
	rehearse) echo "the rehearsal: every stack on string and bank at cores 1, from the packs alone" ;;
	esac
}

# done_calls lists the calls recorded done: the tracked state file (what
# earlier loans brought back and someone committed) and the machine's own
# (earlier calls of this loan).
done_calls() { cat "$state_repo" "$lent/state" 2>/dev/null | awk '/^[0-9]/{print $1}' | sort -u; }
next_call() {
	local c
	for c in $calls; do
		done_calls | grep -qx "$c" || { echo "$c"; return; }
	done
}

# unpack extracts every part of every pack carried in bin/lent/ that is not
# unpacked yet (a stamp per part and checksum), then lays the parts' tree/
# into the repository.
unpack() {
	mkdir -p "$lent/.parts"
	chmod 755 "$lent"
	local f part sum
	for f in bin/lent/pack*/*.tar.xz; do
		[ -f "$f" ] || continue
		part=$(basename "$f" .tar.xz)
		sum=$(cksum <"$f" | cut -d' ' -f1)
		if [ -f "$lent/.parts/$part" ] && [ "$(cat "$lent/.parts/$part")" = "$sum" ]; then
			continue
		fi
		if command -v xz >/dev/null; then
			tar -C "$lent" -xJf "$f" || return 1
		else # Python's lzma where the machine has no xz
			python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$f" "$lent" || return 1
		fi
		echo "$sum" >"$lent/.parts/$part"
		say "unpacked $part ($(du -sh "$f" | cut -f1) packed) from $(dirname "$f")"
	done
	cat bin/lent/pack*/COMMIT 2>/dev/null | head -1 >"$lent/COMMIT.new" && [ -s "$lent/COMMIT.new" ] && mv "$lent/COMMIT.new" "$lent/COMMIT"
	rm -f "$lent/COMMIT.new"
	if [ -d "$lent/tree" ]; then
		cp -a "$lent/tree/." "$repo/"
	fi
	# The lent machine's own python3 (3.12) gets the carried site-packages in a venv.
	if [ -d "$lent/python/site-packages" ]; then
		local v venv=services/python-fastapi/.venv
		v=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
		if [ "$v" != 3.12 ]; then
			say "python3 is ${v:-missing}, the carried wheels are for 3.12: python-fastapi cannot run"
		elif [ ! -f "$venv/.lent" ] || [ "$(cat "$venv/.lent")" != "$(cat "$lent/.parts/python")" ]; then
			rm -rf "$venv"
			if ! python3 -m venv --without-pip "$venv" 2>/dev/null; then
				# No venv module (a distribution's split package): the same by hand.
				rm -rf "$venv"
				mkdir -p "$venv/bin" "$venv/lib/python3.12/site-packages"
				ln -s "$(command -v python3)" "$venv/bin/python"
				printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.12\n' "$(dirname "$(command -v python3)")" >"$venv/pyvenv.cfg"
			fi
			cp -a "$lent/python/site-packages/." "$venv/lib/python3.12/site-packages/"
			cp "$lent/.parts/python" "$venv/.lent"
		fi
	fi
	return 0
}

# setup points showdown at the carried runtimes, and prepares what
# PostgreSQL needs from the machine: a postgres user (showdown, as root, runs
# it as that user) and time zones where the machine has none.
setup() {
	export SHOWDOWN_PREBUILT=1
	[ -x "$lent/jre/bin/java" ] && export JAVA_HOME=$lent/jre
	[ -x "$lent/node/bin/node" ] && export PATH=$lent/node/bin:$PATH
	if [ -x "$lent/pg/wrap/postgres" ]; then
		export SHOWDOWN_PG_BIN=$lent/pg/wrap
		if [ ! -e /usr/share/zoneinfo/UTC ] && [ -d "$lent/zoneinfo" ]; then
			mkdir -p /usr/share && cp -a "$lent/zoneinfo" /usr/share/zoneinfo && say "time zones: the carried ones in /usr/share/zoneinfo"
		fi
		if [ "$(id -u)" = 0 ] && ! getent passwd postgres >/dev/null; then
			local id=70
			while getent passwd "$id" >/dev/null || getent group "$id" >/dev/null; do id=$((id + 1)); done
			echo "postgres:x:$id:" >>/etc/group
			echo "postgres:x:$id:$id:PostgreSQL:$lent:/bin/false" >>/etc/passwd
			say "added the user postgres ($id): showdown runs PostgreSQL as postgres when it is root"
		fi
	fi
}

# record records the Java services' startup archives with the carried
# runtime, as their build.sh do (no databases, any free port), once per
# warm machine: java-helidon's AOT cache app.aot (AOT=true, its default) and
# java-spring's CDS archive app.jsa (AOT=cds, its default). They are not
# carried (pack1 has no room; bench/lent/pack.sh). Both at once, in the
# repository where the services run from (the archives record the class
# path), then kept in LENT/tree for the later calls of a warm spell. A
# failed one is said, and that service starts without it (slower to warm).
record() {
	local j=$lent/jre/bin/java h=services/java-helidon/target s=services/java-spring/target/app
	[ -x "$j" ] || return 0
	local t0 pids=()
	t0=$(date +%s)
	if [ -f "$h/app.jar" ] && [ ! -s "$h/app.aot" ]; then
		(cd "$h" && env -u DATABASE_URL -u MYSQL_URL -u LOG_REQUESTS PORT=0 HOST=127.0.0.1 \
			"$j" -XX:AOTCacheOutput=app.aot -Dshowdown.train=2000 -jar app.jar >training.log 2>&1) &
		pids+=($!)
	fi
	if [ -f "$s/app.jar" ] && [ ! -s "$s/app.jsa" ]; then
		(cd "$s" && env -u DATABASE_URL -u MYSQL_URL -u LOG_REQUESTS PORT=0 HOST=127.0.0.1 \
			"$j" -XX:ArchiveClassesAtExit=app.jsa -Dspring.context.exit=onRefresh -jar app.jar >training.log 2>&1) &
		pids+=($!)
	fi
	[ ${#pids[@]} -gt 0 ] || return 0
	wait "${pids[@]}"
	if [ -s "$h/app.aot" ]; then cp -a "$h/app.aot" "$lent/tree/$h/"; elif [ -f "$h/app.jar" ]; then say "java-helidon's AOT cache was not recorded (see $h/training.log)"; fi
	if [ -s "$s/app.jsa" ]; then cp -a "$s/app.jsa" "$lent/tree/$s/"; elif [ -f "$s/app.jar" ]; then say "java-spring's CDS archive was not recorded (see $s/training.log)"; fi
	echo "Java archives recorded with the carried runtime in $(($(date +%s) - t0)) s"
}

# archives checks that the Java archives map with the carried runtime
# (-Xshare:on and AOTMode=on fail where they do not).
archives() {
	[ -x "$lent/jre/bin/java" ] || return 0
	local j=$lent/jre/bin/java r=0
	"$j" -Xshare:on -version >/dev/null 2>&1 || { say "the runtime's CDS archive does not map"; r=1; }
	if [ -f services/java-spring/target/app/app.jar ]; then
		(cd services/java-spring/target/app && "$j" -Xshare:on -XX:SharedArchiveFile=app.jsa -cp app.jar -version >/dev/null 2>&1) ||
			{ say "java-spring's app.jsa does not map: it will start without it"; r=1; }
	fi
	if [ -f services/java-helidon/target/app.jar ]; then
		(cd services/java-helidon/target && "$j" -XX:AOTMode=on -XX:AOTCache=app.aot -cp app.jar -version >/dev/null 2>&1) ||
			{ say "java-helidon's app.aot does not map: it will start without it"; r=1; }
	fi
	[ "$r" = 0 ] && echo "Java archives: the runtime's CDS archive, java-spring's app.jsa and java-helidon's app.aot map with the carried runtime"
	return $r
}

# pinning runs, at each core count n of the plan, 2n busy loops pinned two
# to each of CPUs 0..n-1 for a second: where pinning holds they get n CPUs
# in all (1.0 per core); where it does not they spread over the machine
# (up to 2.0). Prints one line per count; fails above 1.25.
pinning() {
	python3 - "$@" <<'PY'
import os, sys, time
counts = [int(c) for c in sys.argv[1:]]
ncpu = os.cpu_count() or 1
bad = False
for n in counts:
    if 2 * n > ncpu:
        continue
    kids = []
    t0 = time.monotonic()
    for i in range(2 * n):
        pid = os.fork()
        if pid == 0:
            os.sched_setaffinity(0, {i % n})
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                pass
            os._exit(0)
        kids.append(pid)
    cpu = 0.0
    for pid in kids:
        _, _, ru = os.wait4(pid, 0)
        cpu += ru.ru_utime + ru.ru_stime
    wall = time.monotonic() - t0
    per = cpu / (wall * n)
    ok = per <= 1.25
    bad |= not ok
    print("pinning: %d core(s), %d busy loops pinned 2 per CPU: %.2f CPU per core (1.00 when pinning holds, up to 2.00 when not) %s"
          % (n, 2 * n, per, "ok" if ok else "DOES NOT HOLD"))
sys.exit(1 if bad else 0)
PY
}

machine() {
	local k model
	k=$(uname -r)
	model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
	[ -n "$model" ] || model=$(sed -n 's/^model name\t*: *//p' /proc/cpuinfo | head -1)
	local sandbox="kernel $k"
	if [ "${k%%-*}" = 4.4.0 ] || dmesg 2>/dev/null | grep -qi gvisor; then
		sandbox="gVisor (the kernel reports $k)"
	fi
	echo "machine: ${model:-unknown CPU} x$(nproc), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $sandbox, python3 $(python3 -c 'import platform; print(platform.python_version())' 2>/dev/null || echo none)"
}

# report prints the summary's cores table, crossings and any scaling fit.
report() {
	local sum=$1/summary.md
	[ -f "$sum" ] || return 0
	awk '/^Scaling with cores/{p=1} p&&/^(Warnings:|## )/{p=0} p' "$sum"
	# The Universal Scalability Law fit (internal/scaling), once showdown writes one.
	awk 'tolower($0) ~ /^#+ .*(scalability|usl|scaling fit)/{p=1; print; next} p&&/^## /{p=0} p' "$sum"
	awk '/^#+ .*[Cc]apacity/{p=1} p&&/^## /&&!/[Cc]apacity/{p=0} p' "$sum" | head -60
}

# finish tars what the call made into $OUT: the results folder, the log,
# the state; one file, under the 16 MiB a file may bring back.
finish() {
	local call=$1 rc=$2 run=${3:-}
	mkdir -p "$out"
	local tarf=$out/lent-call$call-$(date -u +%Y%m%dT%H%M%SZ).tar.gz
	cp "$lent/state" "$work/state" 2>/dev/null || : >"$work/state"
	local list=(-C "$work" log state)
	[ -n "$run" ] && [ -d "$run" ] && list+=(-C "$(dirname "$run")" "$(basename "$run")")
	tar -czf "$tarf" "${list[@]}" 2>/dev/null
	if [ "$(stat -c %s "$tarf")" -gt $((15 << 20)) ] && [ -n "$run" ]; then
		# Too large: the summaries and run.json only.
		(cd "$(dirname "$run")" && find "$(basename "$run")" -name '*.md' -o -name '*.json' -o -name '*.csv' -o -name '*.log' -size -1M) >"$work/small"
		tar -czf "$tarf" -C "$work" log state -C "$(dirname "$run")" -T "$work/small"
	fi
	echo "exit $rc after $(($(date +%s) - began)) s; results: $tarf ($(du -h "$tarf" | cut -f1))"
}

call=${1:-}
case $call in
status)
	echo "done: $(done_calls | paste -sd' ' -)"
	echo "unpacked: $(ls "$lent/.parts" 2>/dev/null | paste -sd' ' -)"
	for c in $calls; do done_calls | grep -qx "$c" || echo "left: call $c: $(what_of "$c")"; done
	exit 0
	;;
next)
	call=$(next_call)
	if [ -z "$call" ]; then
		echo "run.sh: every call is done ($(done_calls | paste -sd' ' -)); nothing is left"
		exit 0
	fi
	say "next: call $call: $(what_of "$call")"
	;;
unpack)
	machine
	unpack || exit 1
	setup
	record
	archives
	echo "unpacked: $(ls "$lent/.parts" | paste -sd' ' -) ($(($(date +%s) - began)) s)"
	exit 0
	;;
1 | 2 | 3 | 4 | rehearse) ;;
*)
	echo "usage: bash bench/lent/run.sh 1|2|3|4|next|unpack|status|rehearse" >&2
	exit 2
	;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exec > >(tee "$work/log") 2>&1
echo "# lent call $call: $(what_of "$call"); $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || cat "$lent/COMMIT" 2>/dev/null), budget ${budget} s"
machine
unpack || { finish "$call" 1; exit 1; }
setup
missing=""
for p in $(needs "$call"); do
	[ -f "$lent/.parts/$p" ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "call $call needs the parts:$missing, not unpacked on this machine (a bare machine, or its packs not carried)."
	say "carry them first, within the machine's warm spell: bin/lent/pack1 holds jre helidon spring, pack2 node python, pack3 node pg, pack4 rust-axum (bench/lent/README.md)"
	finish "$call" 2
	exit 2
fi
record
archives || [ "$call" != rehearse ] || { finish "$call" 1; exit 1; }
plan=$(plan_of "$call")
counts=$(sed -n 's/^cores: *\[\(.*\)\].*/\1/p' "$plan" | tr -d ' ' | tr , ' ')
# shellcheck disable=SC2086
if ! pinning $counts && [ "${PINNING:-}" != ignore ]; then
	say "CPU pinning does not hold here: a core count means nothing; stopping (PINNING=ignore goes on)"
	finish "$call" 3
	exit 3
fi
# The plan gets what is left of the budget, less a minute for its own
# ending (SIGINT: showdown stops the arms and writes what it measured) and the tar.
limit=$(($(left) - 60))
[ "$limit" -gt 60 ] || { say "no time left for the plan"; finish "$call" 1; exit 1; }
echo "plan $plan: $limit s at most (SIGINT then; 30 s later KILL)"
timeout -s INT -k 30 "$limit" bin/showdown run --results "$work/results" "$plan" >"$work/showdown.out" 2>&1
rc=$?
tail -40 "$work/showdown.out"
cp "$work/showdown.out" "$work/log.showdown" 2>/dev/null
run=$(ls -td "$work/results"/*/ 2>/dev/null | head -1)
run=${run%/}
if [ -n "$run" ] && [ -f "$run/summary.md" ]; then
	cp "$work/showdown.out" "$run/showdown.out"
	report "$run"
	if [ "$call" != rehearse ] && { [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$rc" = 130 ]; }; then
		# Done, or cut at the budget with what it measured: either way this
		# call's measurements exist; a cut one says so in the state.
		how=complete
		[ "$rc" = 0 ] || how="cut at the budget (exit $rc)"
		echo "$call $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || cat "$lent/COMMIT" 2>/dev/null || echo '?') $how" >>"$lent/state"
	fi
else
	say "the plan wrote no summary (exit $rc)"
	[ "$rc" = 0 ] && rc=1
fi
for c in $calls; do done_calls | grep -qx "$c" || echo "left: call $c: $(what_of "$c")"; done
echo "(copy the state line(s) from the tar's state into bench/lent/state and commit them, so a later loan goes on from there)"
finish "$call" "$rc" "$run"
exit "$rc"
