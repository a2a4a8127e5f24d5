#!/usr/bin/env bash
# run.sh execs the JVM on target/quarkus-app/quarkus-run.jar (the harness signals and samples that
# process itself), with the AppCDS archive Quarkus recorded at build time (target/quarkus-app/
# app-cds.jsa) unless AOT=off. JAVA_OPTS is split on spaces and passed to the JVM; empty means the
# JVM's defaults.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
[ -f target/quarkus-app/quarkus-run.jar ] || { echo "java-quarkus: target/quarkus-app/quarkus-run.jar missing; hint: run ./build.sh first" >&2; exit 1; }
cd target/quarkus-app
# An archive that does not match this JDK or class path is ignored (-Xshare:auto, logging off), so a
# mismatch costs startup time, never the start.
cds=()
case "${AOT:-cds}" in
  off) ;;
  cds) [ -f app-cds.jsa ] && cds=(-XX:SharedArchiveFile=app-cds.jsa -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off) ;;
  *) echo "java-quarkus: AOT=$AOT: want cds or off" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" "${cds[@]}" ${JAVA_OPTS:-} -jar quarkus-run.jar
