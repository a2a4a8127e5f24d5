#!/bin/bash
# The entry point of showdown's PostgreSQL image (images/postgres.Containerfile).
# Started as root, it gives PGDATA to the postgres user and runs itself again
# as that user; on an empty PGDATA it makes the cluster (POSTGRES_USER as its
# superuser, POSTGRES_PASSWORD by SCRAM over TCP, UTF8 as the official image
# has it: pgx refuses another encoding for simple-protocol queries), creates POSTGRES_DB, runs
# the *.sql files of /docker-entrypoint-initdb.d in name order on it with
# ON_ERROR_STOP, then serves on every address with the arguments as flags.
set -euo pipefail
: "${PGDATA:=/var/lib/postgresql/data}" "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /run/postgresql
	chown postgres:postgres "$PGDATA" /run/postgresql
	chmod 700 "$PGDATA"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ]; then
		echo "postgres: POSTGRES_PASSWORD is not set" >&2
		exit 1
	fi
	pw=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"
	initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-locale >/dev/null
	rm -f "$pw"
	echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /run/postgresql" -w start >/dev/null
	export PGHOST=/run/postgresql
	if [ "$POSTGRES_DB" != postgres ]; then
		psql -v ON_ERROR_STOP=1 -q --username="$POSTGRES_USER" --dbname=postgres \
			-c "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\""
	fi
	for f in /docker-entrypoint-initdb.d/*.sql; do
		[ -e "$f" ] || continue
		echo "postgres: running $f"
		psql -v ON_ERROR_STOP=1 -q --username="$POSTGRES_USER" --dbname="$POSTGRES_DB" -f "$f"
	done
	pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	unset PGHOST
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /run/postgresql "$@"
