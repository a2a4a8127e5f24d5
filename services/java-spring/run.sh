#!/usr/bin/env bash
# run.sh execs the JVM on target/app/app.jar (the harness signals and samples that process itself),
# with the class-data-sharing archive target/app/app.jsa unless CDS=false. JAVA_OPTS is split on
# spaces and passed to the JVM; empty means the JVM's defaults.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
[ -f target/app/app.jar ] || { echo "java-spring: target/app/app.jar missing; hint: run ./build.sh first" >&2; exit 1; }
cd target/app
cds=()
if [ "${CDS:-true}" != "false" ] && [ -f app.jsa ]; then
  # -Xshare:auto falls back to no archive (silently, with cds logging off) if it does not match
  # this JDK or class path.
  cds=(-XX:SharedArchiveFile=app.jsa -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off)
fi
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" "${cds[@]}" ${JAVA_OPTS:-} -jar app.jar
