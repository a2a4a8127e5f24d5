#!/usr/bin/env bash
# The packs for the lent machine (bench/lent/README.md): everything a call
# there runs, built here where the toolchains are, one pack per call, each
# under 64 MiB together with the tree the call carries.
#
#   bash bench/lent/pack.sh          builds what is missing (the manifests'
#                                    build steps), then bin/lent/parts/*.tar.xz
#                                    and bin/lent/pack1..4/ (hard links)
#   PARTS="jre spring" bash bench/lent/pack.sh   remakes only those parts
#
# A part is one tar.xz of paths relative to the folder the packs unpack to
# there (run.sh: LENT, default /tmp/showdown-lent): tree/ goes into the
# repository (bin/showdown, the services' artifacts), the rest stays outside
# it (jre/, node/, pg/, python/, zoneinfo/). A pack is a folder of parts,
# carried as one path; run.sh unpacks each part once while the machine stays
# warm, so a later call may use what an earlier one unpacked.
#
#   pack1 (call 1)  showdown go-stdlib jre helidon spring
#   pack2 (call 2)  showdown go-stdlib node python
#   pack3 (call 3)  showdown go-stdlib node pg   (+ jre spring from pack1)
#   pack4 (call 4)  showdown go-stdlib rust-axum
#
# Environment: JDK (default /usr/lib/jvm/temurin-25-jdk-amd64), XZ (the
# compressor's options, default -6 -T2), LIMIT (bytes a call may carry,
# default 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
jdk=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
limit=${LIMIT:-$((64 << 20))}
out=bin/lent
stage=$out/stage
parts_dir=$out/parts
all_parts="showdown go-stdlib rust-axum jre helidon spring node python pg"
want=${PARTS:-$all_parts}
declare -A packs=(
	[1]="showdown go-stdlib jre helidon spring"
	[2]="showdown go-stdlib node python"
	[3]="showdown go-stdlib node pg"
	[4]="showdown go-stdlib rust-axum"
)

say() { echo "pack.sh: $*" >&2; }
die() { say "$*"; exit 1; }
artifact() { sed -n 's/^artifact: *\([^ #]*\).*/\1/p' "services/$1/showdown.yaml"; }

# build runs a service's manifest build steps (services/*/showdown.yaml
# build:) when its artifact is missing; nice, the machine is shared.
build() {
	local s=$1
	[ -e "services/$s/$(artifact "$s")" ] && return 0
	say "building $s (its manifest's build steps)"
	case $s in
	java-helidon | java-spring) (cd "services/$s" && JAVA_HOME=$jdk nice ./build.sh) ;;
	node-http) (cd services/node-http && nice npm ci --omit=dev --no-audit --no-fund) ;;
	rust-axum) (cd services/rust-axum && nice cargo build --release --locked -j 2) ;;
	*) die "no build for $s here" ;;
	esac
}

# glibc is the machine's own (there and in a bare root): never carried.
is_glibc() {
	case $(basename "$1") in
	linux-vdso.so.* | ld-linux-x86-64.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | \
		libresolv.so.* | libutil.so.* | libanl.so.* | libnss_*) return 0 ;;
	esac
	return 1
}

# libs copies into DIR the shared libraries the ELF files after it load
# (ldd, transitively), glibc's apart.
libs() {
	local dir=$1 f l
	shift
	mkdir -p "$dir"
	for f in "$@"; do
		ldd "$f" 2>/dev/null | awk '/=> \//{print $3}' | while read -r l; do
			is_glibc "$l" && continue
			cp -L "$l" "$dir/$(basename "$l")"
		done
	done
}

# store rewrites the jars under DIR with their entries stored, not
# deflated: xz over the plain class files packs them about half as small
# as it packs deflated jars (signatures stay valid: they cover the entries'
# contents). Before the archives are recorded: they check each jar's size
# and time.
store() {
	find "$1" -name '*.jar' -print0 | python3 -c '
import os, sys, zipfile
for jar in sys.stdin.read().split("\0"):
    if not jar:
        continue
    tmp = jar + ".stored"
    with zipfile.ZipFile(jar) as zi, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zo:
        for info in zi.infolist():
            out = zipfile.ZipInfo(info.filename, info.date_time)
            out.external_attr, out.comment = info.external_attr, info.comment
            zo.writestr(out, zi.read(info), zipfile.ZIP_STORED)
    os.replace(tmp, jar)
'
}

part_showdown() { # static, stripped: runs whatever the machine's libc
	mkdir -p "$1/tree/bin"
	CGO_ENABLED=0 nice go build -trimpath -ldflags="-s -w" -o "$1/tree/bin/showdown" ./cmd/showdown
}

part_go-stdlib() { # the manifest's step, static (CGO_ENABLED=0) and stripped as its image build
	mkdir -p "$1/tree/services/go-stdlib/bin"
	(cd services/go-stdlib && CGO_ENABLED=0 nice go build -trimpath -ldflags="-s -w" -o "$1/tree/services/go-stdlib/bin/server" .)
}

part_rust-axum() {
	build rust-axum
	install -D -m 755 services/rust-axum/target/release/server "$1/tree/services/rust-axum/target/release/server"
	strip "$1/tree/services/rust-axum/target/release/server" 2>/dev/null || true
}

# jre: a jlinked runtime of Temurin 25 with the modules both JVM stacks load
# (internal/images jlinkModules, measured for the images' base-jre), and its
# default CDS archive generated for it; classes_nocoops.jsa is left out: the
# default heap (a quarter of 128 GiB, capped by the JVM where compressed oops
# reach) keeps compressed oops, so only classes.jsa maps.
part_jre() {
	local mods
	mods=$(sed -n '/^var jlinkModules/,/}/p' internal/images/base.go | grep -o '"[a-z.]*"' | tr -d '"' | paste -sd, -)
	[ -n "$mods" ] || die "no module list in internal/images/base.go"
	[ -x "$jdk/bin/jlink" ] || die "no jlink at $jdk (set JDK)"
	nice "$jdk/bin/jlink" --add-modules "$mods" --strip-debug --no-man-pages --no-header-files \
		--generate-cds-archive --output "$1/jre" >/dev/null
	rm -f "$1/jre/lib/server/classes_nocoops.jsa"
	echo "$mods" >"$1/jre/modules.txt"
}

# helidon: app.jar and libs/. Its AOT cache (AOT=true, the default) is
# not carried: 40 MB that pack1 has no room for (about 10 MB packed);
# run.sh records it there with the carried runtime, as build.sh does here,
# once per warm machine (seconds on 16 CPUs).
part_helidon() {
	build java-helidon
	local d=$1/tree/services/java-helidon/target
	mkdir -p "$d"
	cp -a services/java-helidon/target/app.jar services/java-helidon/target/libs "$d/"
	store "$d"
}

# spring: the extracted jar (app.jar + lib/). Its CDS archive app.jsa
# (AOT=cds, the default) is recorded there by run.sh as helidon's cache
# is; its AOT cache app.aot (AOT=cache, a variant no call uses) not at all.
part_spring() {
	build java-spring
	local d=$1/tree/services/java-spring/target/app
	mkdir -p "$d"
	cp -a services/java-spring/target/app/app.jar services/java-spring/target/app/lib "$d/"
	store "$d"
}

# node: the node binary and the libraries it loads beyond glibc, behind a
# wrapper on PATH that points the loader at them; node-http's node_modules.
part_node() {
	build node-http
	local n
	n=$(readlink -f "$(command -v node)")
	install -D -m 755 "$n" "$1/node/libexec/node"
	strip "$1/node/libexec/node" 2>/dev/null || true
	libs "$1/node/lib" "$n"
	mkdir -p "$1/node/bin"
	cat >"$1/node/bin/node" <<'SH'
#!/bin/sh
# the carried node with its own libstdc++ (bench/lent/pack.sh)
d=$(dirname "$(readlink -f "$0")")/..
LD_LIBRARY_PATH=$d/lib exec "$d/libexec/node" "$@"
SH
	chmod 755 "$1/node/bin/node"
	mkdir -p "$1/tree/services/node-http"
	cp -a services/node-http/node_modules "$1/tree/services/node-http/"
}

# python: the locked wheels for CPython 3.12 (the lent machine's), checked
# against the lock's hashes, unpacked as pip would install them into
# python/site-packages (their .data folders' libraries moved in, the
# extension modules stripped of their symbols: a wheel's zip compresses far
# less than xz over the files); run.sh makes a venv there that uses them.
part_python() {
	local w=$1/python/wheels
	mkdir -p "$w"
	nice python3 -m pip download --quiet --no-input --require-hashes --no-deps --only-binary=:all: \
		--python-version 3.12 --implementation cp --abi cp312 --abi abi3 --abi none \
		--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
		--platform manylinux_2_36_x86_64 \
		-d "$w" -r services/python-fastapi/requirements.lock
	python3 - "$w" "$1/python/site-packages" <<'PY'
import glob, os, shutil, sys, zipfile
wheels, site = sys.argv[1:3]
os.makedirs(site, exist_ok=True)
for whl in sorted(glob.glob(os.path.join(wheels, "*.whl"))):
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
for data in glob.glob(os.path.join(site, "*.data")):
    for kind in ("purelib", "platlib"):
        src = os.path.join(data, kind)
        if os.path.isdir(src):
            shutil.copytree(src, site, dirs_exist_ok=True)
    shutil.rmtree(data)  # scripts and headers: nothing the service runs
for dirpath, _, files in os.walk(site):
    for f in files:
        if f.endswith(".so") or ".so." in f:
            os.chmod(os.path.join(dirpath, f), 0o755)
PY
	find "$1/python/site-packages" -name '*.so' -exec strip --strip-unneeded {} + 2>/dev/null || true
	find "$1/python/site-packages" -name '__pycache__' -prune -exec rm -rf {} +
	(cd "$w" && ls) >"$1/python/wheels.txt"
	rm -rf "$w"
}

# pg: PostgreSQL 15's initdb and postgres, the modules they load (llvmjit
# aside: JIT is only tried on costly queries and goes without it), the share
# files, the libraries beyond glibc (ICU included), wrappers that point the
# loader at them (showdown: SHOWDOWN_PG_BIN=LENT/pg/wrap), and the time
# zones (Debian's build reads /usr/share/zoneinfo; run.sh puts them there
# when the machine has none).
part_pg() {
	local bin=/usr/lib/postgresql/15/bin lib=/usr/lib/postgresql/15/lib share=/usr/share/postgresql/15 p=$1/pg
	[ -x $bin/postgres ] || die "no PostgreSQL 15 at $bin"
	mkdir -p "$p/usr/lib/postgresql/15/bin" "$p/usr/lib/postgresql/15/lib" "$p/usr/share/postgresql"
	cp -a $bin/postgres $bin/initdb "$p/usr/lib/postgresql/15/bin/"
	find $lib -maxdepth 1 -name '*.so' ! -name 'llvmjit*' -exec cp -a {} "$p/usr/lib/postgresql/15/lib/" \;
	cp -a $share "$p/usr/share/postgresql/"
	rm -rf "$p/usr/share/postgresql/15/man"
	libs "$p/lib" "$p"/usr/lib/postgresql/15/bin/* "$p"/usr/lib/postgresql/15/lib/*.so
	mkdir -p "$p/wrap"
	local t
	for t in initdb postgres; do
		cat >"$p/wrap/$t" <<SH
#!/bin/sh
# PostgreSQL's $t with the carried libraries (bench/lent/pack.sh)
d=\$(dirname "\$(readlink -f "\$0")")/..
LD_LIBRARY_PATH=\$d/lib exec "\$d/usr/lib/postgresql/15/bin/$t" "\$@"
SH
		chmod 755 "$p/wrap/$t"
	done
	cp -a /usr/share/zoneinfo "$1/zoneinfo"
}

mkdir -p "$stage" "$parts_dir"
for part in $want; do
	case " $all_parts " in *" $part "*) ;; *) die "no part $part (parts: $all_parts)" ;; esac
done
for part in $all_parts; do
	case " $want " in *" $part "*) ;; *) continue ;; esac
	say "part $part"
	rm -rf "${stage:?}/$part"
	mkdir -p "$stage/$part"
	"part_$part" "$root/$stage/$part"
	nice tar -C "$stage/$part" --owner=0 --group=0 -cf - . | nice xz ${XZ:--6 -T2} >"$parts_dir/$part.tar.xz.new"
	mv "$parts_dir/$part.tar.xz.new" "$parts_dir/$part.tar.xz"
done

# The tree a call carries: tracked files and untracked ones git does not ignore.
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s+=$1} END{print s+0}')
mib() { awk -v b="$1" 'BEGIN{printf "%.1f", b/1048576}'; }
fail=0
printf '%-6s %-10s %10s %10s\n' pack part unpacked xz
for n in 1 2 3 4; do
	rm -rf "${out:?}/pack$n"
	mkdir -p "$out/pack$n"
	sum=0
	for part in ${packs[$n]}; do
		[ -f "$parts_dir/$part.tar.xz" ] || die "part $part was never built (PARTS=$part bash bench/lent/pack.sh)"
		ln "$parts_dir/$part.tar.xz" "$out/pack$n/$part.tar.xz"
		size=$(stat -c %s "$parts_dir/$part.tar.xz")
		raw=$(du -sb "$stage/$part" 2>/dev/null | cut -f1)
		sum=$((sum + size))
		printf '%-6s %-10s %9s M %9s M\n' "pack$n" "$part" "$(mib "${raw:-0}")" "$(mib "$size")"
	done
	git rev-parse --short HEAD >"$out/pack$n/COMMIT" 2>/dev/null || echo '?' >"$out/pack$n/COMMIT"
	total=$((sum + tree))
	printf '%-6s %-10s %10s %9s M  + tree %s M = %s M of %s M\n' "pack$n" total "" "$(mib "$sum")" "$(mib "$tree")" "$(mib "$total")" "$(mib "$limit")"
	if [ "$total" -gt "$limit" ]; then
		say "pack$n: $total bytes with the tree ($sum packed + $tree tree) > $limit"
		fail=1
	fi
done
[ "$fail" = 0 ] || die "a pack does not fit one call; see the sizes above"
