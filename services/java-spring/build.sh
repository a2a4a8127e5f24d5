#!/usr/bin/env bash
# build.sh builds the service into target/app/: Maven packages target/app.jar, which is extracted
# (app.jar + lib/, Spring Boot's recommended layout for running), then two training runs record the
# JVM's startup caches beside it: app.jsa, a class-data-sharing archive from one start that exits
# once the context is up (the default, AOT=cds), and on JDK 25 app.aot, an ahead-of-time cache from a
# start that serves requests it sends itself (classes loaded and linked, and the method profiles of
# those requests; AOT=cache). Extra arguments go to Maven (e.g. -o to build offline once ~/.m2 holds
# the dependencies).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
mvn -B -q -DskipTests "$@" package
rm -rf target/app
"$JAVA_HOME/bin/java" -Djarmode=tools -jar target/app.jar extract --destination target/app >/dev/null
# A training run has no databases and listens on any free port. Without what it records the service
# still runs, only starts (and warms up) slower; run.sh then starts without it.
train() { # train OUT LOG JVM-OPTION...: one training start in target/app, OUT must exist after it
  local out=$1 log=$2
  shift 2
  (cd target/app && env -u DATABASE_URL -u MYSQL_URL -u LOG_REQUESTS PORT=0 HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" "$@" -jar app.jar >"$log" 2>&1) && [ -s "target/app/$out" ]
}
# CDS: exit after the context refresh. The CDS warnings in training.log (classes it cannot archive,
# such as generated proxies) are expected.
if ! train app.jsa training.log -XX:ArchiveClassesAtExit=app.jsa -Dspring.context.exit=onRefresh &&
  ! train app.jsa training.log -XX:ArchiveClassesAtExit=app.jsa -Dspring.context.exit=onRefresh; then
  echo "java-spring: the CDS training start failed twice (see target/app/training.log); the service will start without the archive" >&2
  rm -f target/app/app.jsa
fi
# AOT cache (JDK 25, JEPs 483/514/515): 2000 rounds of the string requests and every route's
# no-database answer (Training.java), then exit; the JVM assembles the cache at exit.
if [ "$(java_major "$JAVA_HOME")" -ge 25 ]; then
  aot=(-XX:AOTCacheOutput=app.aot -Dshowdown.train=2000)
  if ! train app.aot aot-training.log "${aot[@]}" && ! train app.aot aot-training.log "${aot[@]}"; then
    echo "java-spring: the AOT training run failed twice (see target/app/aot-training.log); AOT=cache will start without the cache" >&2
    rm -f target/app/app.aot
  fi
fi
