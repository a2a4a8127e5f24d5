#!/usr/bin/env bash
# build.sh builds the service into target/quarkus-app/, Quarkus's fast-jar layout (quarkus-run.jar,
# lib/, app/, quarkus/): Quarkus's build step runs at package time, so what the JVM loads at start is
# already wired (dependency injection, REST routes, configuration mapping), and it records an AppCDS
# archive, target/quarkus-app/app-cds.jsa, from one start of the application (no databases needed;
# quarkus.package.jar.appcds.enabled). Extra arguments go to Maven
# (e.g. -o to build offline once ~/.m2 holds the dependencies).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
mvn -B -q -DskipTests "$@" package
