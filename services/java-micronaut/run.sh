#!/usr/bin/env bash
# run.sh execs the JVM on target/app.jar (the harness signals and samples that process itself), with
# the class-data-sharing archive build.sh recorded (target/app.jsa) unless AOT=off. JAVA_OPTS is split
# on spaces and passed to the JVM; empty means the JVM's defaults.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
[ -f target/app.jar ] || { echo "java-micronaut: target/app.jar missing; hint: run ./build.sh first" >&2; exit 1; }
# An archive that does not match this JDK or class path is ignored (-Xshare:auto, logging off), so a
# mismatch costs startup time, never the start.
cds=()
case "${AOT:-cds}" in
  off) ;;
  cds) [ -f target/app.jsa ] && cds=(-XX:SharedArchiveFile=target/app.jsa -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off) ;;
  *) echo "java-micronaut: AOT=$AOT: want cds or off" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" "${cds[@]}" ${JAVA_OPTS:-} -jar target/app.jar
