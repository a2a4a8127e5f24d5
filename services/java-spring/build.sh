#!/usr/bin/env bash
# build.sh builds the service into target/app/: Maven packages target/app.jar, which is extracted
# (app.jar + lib/, Spring Boot's recommended layout for running) and given a class-data-sharing
# archive, app.jsa, recorded from one training start that exits once the context is up. Extra
# arguments go to Maven (e.g. -o to build offline once ~/.m2 holds the dependencies).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
mvn -B -q -DskipTests "$@" package
rm -rf target/app
"$JAVA_HOME/bin/java" -Djarmode=tools -jar target/app.jar extract --destination target/app >/dev/null
# The training start: no databases, any free port, exit after the context refresh. Its CDS warnings
# in training.log (classes it cannot archive, such as generated proxies) are expected. Without an
# archive the service still runs, only starts slower.
train() {
  (cd target/app && env -u DATABASE_URL -u MYSQL_URL -u LOG_REQUESTS PORT=0 HOST=127.0.0.1 \
    "$JAVA_HOME/bin/java" -XX:ArchiveClassesAtExit=app.jsa -Dspring.context.exit=onRefresh \
    -jar app.jar >training.log 2>&1) && [ -s target/app/app.jsa ]
}
if ! train && ! train; then
  echo "java-spring: the CDS training start failed twice (see target/app/training.log); the service will start without the archive" >&2
  rm -f target/app/app.jsa
fi
