#!/usr/bin/env bash
# run.sh execs the JVM on target/app/app.jar (the harness signals and samples that process itself),
# with the startup cache AOT chooses: cds (default) the class-data-sharing archive target/app/app.jsa,
# cache the AOT cache target/app/app.aot (JDK 25), off neither. JAVA_OPTS is split on spaces and
# passed to the JVM; empty means the JVM's defaults.
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
[ -f target/app/app.jar ] || { echo "java-spring: target/app/app.jar missing; hint: run ./build.sh first" >&2; exit 1; }
cd target/app
# A cache or archive that does not match this JDK or class path is ignored (AOTMode and -Xshare
# auto, logging off), so a mismatch costs startup time, never the start.
cache=()
case "${AOT:-cds}" in
  off) ;;
  cds) [ -f app.jsa ] && cache=(-XX:SharedArchiveFile=app.jsa -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off) ;;
  cache)
    if [ -f app.aot ]; then
      cache=(-XX:AOTCache=app.aot -Xlog:aot*=off -Xlog:cds*=off)
    else
      echo "java-spring: AOT=cache but target/app/app.aot is missing (it needs JDK 25; see target/app/aot-training.log); starting without it" >&2
    fi ;;
  *) echo "java-spring: AOT=$AOT: want off, cds or cache" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" "${cache[@]}" ${JAVA_OPTS:-} -jar app.jar
