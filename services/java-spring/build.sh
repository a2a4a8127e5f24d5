#!/usr/bin/env bash
# build.sh builds target/app.jar with Maven on a JDK >= 21. Extra arguments go to Maven (e.g. -o to
# build offline once the dependencies are in ~/.m2).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
exec mvn -B -q -DskipTests "$@" package
