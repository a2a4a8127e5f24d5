#!/usr/bin/env bash
# build.sh builds the service into target/app.jar, the runnable jar Micronaut's Maven plugin makes
# (the application and its dependencies in one jar). Micronaut's dependency injection, routes and
# serializers are generated at compile time by its annotation processors, so nothing is scanned or
# reflected on at start. Then one training start, without databases, that exits once the server is
# up, records a class-data-sharing archive of the classes it loaded, target/app.jsa (run.sh, AOT=cds).
# Extra arguments go to Maven (e.g. -o to build offline once ~/.m2 holds the dependencies).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
mvn -B -q -DskipTests "$@" package
rm -f target/app.jsa
# PORT=-1: any free port (Micronaut's random port). Without the archive the service still runs, only
# starts slower; run.sh then starts without it.
train() {
  env -u DATABASE_URL -u MYSQL_URL -u LOG_REQUESTS PORT=-1 HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" -XX:ArchiveClassesAtExit=target/app.jsa -Dshowdown.cds=true -jar target/app.jar \
    >target/training.log 2>&1 && [ -s target/app.jsa ]
}
if ! train && ! train; then
  echo "java-micronaut: the CDS training start failed twice (see target/training.log); the service will start without the archive" >&2
  rm -f target/app.jsa
fi
