#!/usr/bin/env bash
# build.sh builds the service into target/: Maven packages target/app.jar with its dependencies in
# target/libs/ (Helidon's own layout: a thin jar whose manifest class path names libs/*.jar), then
# one training run records the JVM's ahead-of-time cache target/app.aot (JDK 25: classes loaded and
# linked, and the method profiles of the paths the training sent; JDK 21-24: a dynamic CDS archive
# of the loaded classes, target/app.jsa). Extra arguments go to Maven (e.g. -o to build offline once
# ~/.m2 holds the dependencies).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
mvn -B -q -DskipTests "$@" package
rm -f target/app.aot target/app.jsa
major=$(java_major "$JAVA_HOME")
if [ "$major" -ge 25 ]; then
  record=(-XX:AOTCacheOutput=app.aot) out=app.aot
else
  record=(-XX:ArchiveClassesAtExit=app.jsa) out=app.jsa
fi
# The training run: no databases, any free port, 2000 rounds of the string workload and the
# error paths sent by the service to itself (Training.java), then the normal shutdown, at which the
# JVM writes the cache. Without a cache the service still runs, only starts and warms up slower.
train() {
  (cd target && env -u DATABASE_URL -u MYSQL_URL -u LOG_REQUESTS PORT=0 HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" "${record[@]}" -Dshowdown.train=2000 -jar app.jar >training.log 2>&1) && [ -s "target/$out" ]
}
if ! train && ! train; then
  echo "java-helidon: the AOT training run failed twice (see target/training.log); the service will start without a cache" >&2
  rm -f "target/$out"
fi
