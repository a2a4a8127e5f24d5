#!/usr/bin/env bash
# run.sh runs every JMeter fixture of internal/jmx/testdata in JMeter 5.6.3
# (laid out by jmeter-maven-plugin from Maven Central into target/) and its
# import with showdown's load engine, against go-stdlib on a private
# PostgreSQL, and compares sample and error counts per sampler. It takes a
# few minutes, so it is not part of make test. Needs mvn, java, PostgreSQL
# (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
SHOWDOWN_JMETER=1 exec go test -count=1 -timeout 30m -run TestJMeterAgreement -v ./internal/jmx/ "$@"
