#!/usr/bin/env bash
# build.sh builds the service into target/app.jar, the runnable jar Micronaut's Maven plugin makes
# (the application and its dependencies in one jar). Micronaut's dependency injection, routes and
# serializers are generated at compile time by its annotation processors, so nothing is scanned or
# reflected on at start. Extra arguments go to Maven (e.g. -o to build offline once ~/.m2 holds the
# dependencies).
set -euo pipefail
cd "$(dirname "$0")"
. ./jdk.sh
mvn -B -q -DskipTests "$@" package
