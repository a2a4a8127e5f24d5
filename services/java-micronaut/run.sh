#!/usr/bin/env bash
# run.sh execs the JVM on target/app.jar (the harness signals and samples that process itself).
# JAVA_OPTS is split on spaces and passed to the JVM; empty means the JVM's defaults.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
[ -f target/app.jar ] || { echo "java-micronaut: target/app.jar missing; hint: run ./build.sh first" >&2; exit 1; }
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" ${JAVA_OPTS:-} -jar target/app.jar
