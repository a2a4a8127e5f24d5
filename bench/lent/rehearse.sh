#!/usr/bin/env bash
# The lent machine rehearsed here: a bare Debian root (mmdebstrap, the
# essential packages and xz; no Go, JDK, Node, Python or PostgreSQL) gets
# the tracked tree and the packs (bench/lent/pack.sh), unpacks them one
# after another as the calls would (bench/lent/run.sh unpack with one pack
# carried at a time), checks that every carried program finds its
# libraries in the packs, then runs bench/lent/rehearse.yaml (all six
# stacks on string and bank, cores [1], one start) with what the packs
# carry, in a chroot of its own mount and PID namespaces. Fails when any
# piece would come from this machine. Needs root, mmdebstrap, unshare.
#
# The lent machine has its own Python 3.12, which the bare root lacks:
# after the checks, the rehearsal adds a stand-in for it, this machine's
# CPython 3.12 (pyenv's, $STANDIN, default /root/.pyenv/versions/3.12.1),
# copied into the root with the shared libraries it loads in a folder of
# its own; it stands in for the machine's interpreter and for nothing the
# packs carry (the carried wheels are for 3.12, so no other version stands
# in). run.sh also uses python3 there (the pinning check, the venv).
#
# Environment: KEEP=1 keeps the root (its folder is printed); ROOT_CACHE
# (default bin/lent/root-bookworm.tar: the base root, made once).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
began=$(date +%s)
standin=${STANDIN:-/root/.pyenv/versions/3.12.1}
cache=${ROOT_CACHE:-bin/lent/root-bookworm.tar}
say() { echo "rehearse.sh: $*" >&2; }
die() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot, namespaces)"
command -v mmdebstrap >/dev/null || die "needs mmdebstrap (apt-get install mmdebstrap; scripts/setup.sh installs it)"
for n in 1 2 3 4; do
	[ -d "bin/lent/pack$n" ] || die "no bin/lent/pack$n: run bash bench/lent/pack.sh first"
done
"$standin/bin/python3" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null ||
	die "no CPython 3.12 at $standin to stand in for the lent machine's (set STANDIN)"

if [ ! -f "$cache" ]; then
	say "making the base root (once): $cache"
	mkdir -p "$(dirname "$cache")"
	nice mmdebstrap --quiet --variant=essential --include=xz-utils,mawk \
		--dpkgopt=path-exclude=/usr/share/man/* --dpkgopt=path-exclude=/usr/share/doc/* \
		--dpkgopt=path-exclude=/usr/share/locale/* bookworm "${cache%.tar}.new.tar"
	mv "${cache%.tar}.new.tar" "$cache"
fi
tmp=$(mktemp -d /tmp/showdown-rehearse.XXXXXX)
root=$tmp/root
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then say "kept $root"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
mkdir -p "$root"
tar -C "$root" -xf "$cache"

# 1. The root is bare: none of the toolchains or runtimes, anywhere in it.
found=$(find "$root/usr" "$root/opt" "$root/bin" "$root/sbin" \( -name go -o -name 'java' -o -name 'node' -o -name 'nodejs' \
	-o -name 'python*' -o -name postgres -o -name initdb -o -name 'libjvm.so' -o -name 'libpython*' \) \
	-not -path '*/share/*' 2>/dev/null || true)
[ -z "$found" ] || die "the base root is not bare: $found"
chroot "$root" /bin/sh -c 'for t in go java node python python3 postgres initdb mvn cargo; do command -v $t && exit 1; done; exit 0' >/dev/null ||
	die "the base root has a toolchain on PATH"
echo "bare root: none of go, java, node, python, postgres in it ($(du -sh "$root" | cut -f1))"

# 2. The tree as a call carries it (tracked files and untracked ones git
# does not ignore), then the packs one at a time, as the calls bring them.
w=$root/work/showdown
mkdir -p "$w"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$w" -xf -
ns() { # ns CMD...: in the root, its own mount and PID namespaces, /proc /dev /sys mounted
	unshare --mount --pid --fork /bin/sh -c '
		r=$1; shift
		mount --make-rprivate /
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		mount --rbind /sys "$r/sys"
		mount -t tmpfs tmpfs "$r/tmp"
		exec chroot "$r" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
	' sh "$root" "$@"
}
# /tmp is a tmpfs per namespace: the packs unpack to /var/lent, which stays.
for n in 1 2 3 4; do
	rm -rf "$w/bin/lent"
	mkdir -p "$w/bin/lent"
	cp -al "bin/lent/pack$n" "$w/bin/lent/" 2>/dev/null || cp -a "bin/lent/pack$n" "$w/bin/lent/"
	ns /bin/bash -c "cd /work/showdown && LENT=/var/lent bash bench/lent/run.sh unpack" || die "unpacking pack$n"
done
rm -rf "$w/bin/lent"

# 3. Every carried program finds its libraries in the root (glibc) or in
# the packs, as the wrappers point the loader.
check=$(ns /bin/bash -c '
L=/var/lent
miss() { out=$(env LD_LIBRARY_PATH="$1" ldd "$2" 2>&1) || { echo "$2: not a dynamic program?"; return; }; echo "$out" | grep "not found" | sed "s|^|$2: |"; }
for f in /work/showdown/bin/showdown /work/showdown/services/go-stdlib/bin/server /work/showdown/services/rust-axum/target/release/server \
	$L/jre/bin/java $L/jre/lib/server/libjvm.so $L/jre/lib/*.so; do
	case $(ldd "$f" 2>&1) in *"not a dynamic"*|*"statically linked"*) continue ;; esac
	case $f in */libawt_xawt.so|*/libsplashscreen.so|*/libjawt.so|*/libawt_headless.so|*/libfontmanager.so|*/liblcms.so|*/libjsound.so|*/libawt.so|*/libmlib_image.so|*/libjavajpeg.so) continue ;; esac
	miss $L/jre/lib/server "$f" # the JDK libraries load after libjvm.so, which the launcher loads
done
miss $L/node/lib $L/node/libexec/node
for f in $L/pg/usr/lib/postgresql/15/bin/* $L/pg/usr/lib/postgresql/15/lib/*.so; do miss $L/pg/lib "$f"; done
')
[ -z "$check" ] || die "libraries the packs do not carry:
$check"
echo "libraries: every carried program finds its own in the root's glibc or the packs"

# 4. The stand-in for the lent machine's Python 3.12 (see the header).
sp=$root/opt/standin-python3.12
mkdir -p "$sp"
(cd "$standin" && tar -cf - --exclude='lib/python3.12/test' --exclude='lib/python3.12/site-packages/*' \
	--exclude='lib/python3.12/idlelib' --exclude='lib/python3.12/tkinter' --exclude='__pycache__' bin/python3.12 lib) | tar -C "$sp" -xf -
mkdir -p "$sp/syslib"
for f in "$sp/bin/python3.12" "$sp"/lib/libpython3.12.so* "$sp"/lib/python3.12/lib-dynload/*.so; do
	ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | while read -r l; do
	case $(basename "$l") in libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | libutil.so.* | ld-linux*) continue ;; esac
	case $l in "$standin"/*) continue ;; esac
	cp -L "$l" "$sp/syslib/"
done
# Its own prefix, found by the loader through /etc/ld.so.conf.d (after the check above).
rp=$(dirname "$standin")
mkdir -p "$root$rp"
ln -s /opt/standin-python3.12 "$root$standin"
echo /opt/standin-python3.12/syslib >"$root/etc/ld.so.conf.d/standin-python.conf"
echo "$standin/lib" >>"$root/etc/ld.so.conf.d/standin-python.conf"
chroot "$root" /sbin/ldconfig
ln -s "$standin/bin/python3.12" "$root/usr/local/bin/python3"
ns /usr/local/bin/python3 -c 'import ssl, ctypes, lzma, sqlite3, sys; print("stand-in for the lent machine'"'"'s Python:", sys.version.split()[0])' ||
	die "the stand-in Python 3.12 does not run in the root"

# 5. The calls' plans are valid (their core counts aside, which need the
# 16 CPUs: checked at [1] here), then the rehearsal's plan, with what the
# packs carry (all of them unpacked in /var/lent).
ns /bin/bash -c 'cd /work/showdown && for f in bench/lent/call*.yaml; do
	sed "s/^cores: .*/cores: [1]/" "$f" >"/tmp/$(basename "$f")" && bin/showdown run --check "/tmp/$(basename "$f")" || exit 1
done' || die "a call's plan is not valid"
rc=0
ns /bin/bash -c "cd /work/showdown && LENT=/var/lent OUT=/work/showdown/results/lent BUDGET=1200 bash bench/lent/run.sh rehearse" || rc=$?
# run.sh unpack again here: the venv needs the stand-in Python, absent at step 2.
if [ "$rc" = 0 ]; then
	mkdir -p results/lent
	cp "$w"/results/lent/*.tar.gz results/lent/ 2>/dev/null || true
	echo "rehearsal passed in $(($(date +%s) - began)) s"
else
	die "the rehearsal's plan failed (exit $rc) after $(($(date +%s) - began)) s"
fi
