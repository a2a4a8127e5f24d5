#!/usr/bin/env bash
# Installs what showdown needs on a fresh Debian 12 machine, and nothing that
# is already there. Safe to run again. Go, Node.js with npm, a JDK >= 21,
# Maven, Rust (cargo) and Python 3 with venv are expected from the machine
# image; this script checks them.
set -euo pipefail

need_apt=()
have() { command -v "$1" >/dev/null 2>&1; }

have mariadbd || have mysqld || need_apt+=(mariadb-server)
have wrk || need_apt+=(wrk)
have hey || need_apt+=(hey)
have chromium || need_apt+=(chromium)
# showdown images build: podman builds the images, mmdebstrap the Debian
# base that the Java and Node images sit on (no registry is needed).
have podman || need_apt+=(podman)
have mmdebstrap || need_apt+=(mmdebstrap)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need_apt+=(postgresql)

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${need_apt[*]}" >&2
    echo "hint: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
fi

for tool in go node npm mvn cargo python3; do
  have "$tool" || { echo "setup: $tool not found on PATH" >&2; exit 1; }
done
python3 -c 'import venv, ensurepip' 2>/dev/null || {
  echo "setup: python3 lacks the venv/ensurepip modules (python-fastapi builds a virtual environment)" >&2
  echo "hint: apt-get install -y python3-venv" >&2
  exit 1
}

echo "setup: fetching Go modules"
go mod download
