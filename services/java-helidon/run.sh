#!/usr/bin/env bash
# run.sh execs the JVM on target/app.jar (the harness signals and samples that process itself), with
# the AOT cache target/app.aot (or CDS archive target/app.jsa) that build.sh recorded, unless AOT=false.
# GC and HEAP choose the collector and a fixed heap; JAVA_OPTS is split on spaces and passed last.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
[ -f target/app.jar ] || { echo "java-helidon: target/app.jar missing; hint: run ./build.sh first" >&2; exit 1; }
cd target
opts=()
if [ "${AOT:-true}" != "false" ]; then
  # Auto mode: a cache that does not match this JDK or class path is ignored, silently.
  if [ -f app.aot ]; then
    opts+=(-XX:AOTCache=app.aot -Xlog:aot*=off -Xlog:cds*=off)
  elif [ -f app.jsa ]; then
    opts+=(-XX:SharedArchiveFile=app.jsa -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off)
  fi
fi
case "${GC:-}" in
  "") ;;
  serial) opts+=(-XX:+UseSerialGC) ;;
  parallel) opts+=(-XX:+UseParallelGC) ;;
  g1) opts+=(-XX:+UseG1GC) ;;
  z) opts+=(-XX:+UseZGC) ;;
  shenandoah) opts+=(-XX:+UseShenandoahGC) ;;
  *) echo "java-helidon: GC=$GC: want serial, parallel, g1, z, shenandoah or empty (the JVM's choice)" >&2; exit 2 ;;
esac
if [ -n "${HEAP:-}" ]; then
  opts+=("-Xms$HEAP" "-Xmx$HEAP")
fi
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" "${opts[@]}" ${JAVA_OPTS:-} -jar app.jar
