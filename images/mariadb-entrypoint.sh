#!/bin/bash
# The entry point of showdown's MariaDB image (images/mariadb.Containerfile).
# Started as root, it gives the data directory to the mysql user and runs
# itself again as that user; on an empty data directory it makes the
# system tables (root and mysql by their Unix socket only, no password),
# starts the server on a private socket without networking, creates
# MARIADB_DATABASE and MARIADB_USER (by MARIADB_PASSWORD from any host,
# all privileges on that database only), runs the *.sql files of
# /docker-entrypoint-initdb.d in name order on that database, stops, then
# serves on every address with the arguments as flags.
set -euo pipefail
datadir=/var/lib/mysql
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$datadir" /run/mysqld
	chown mysql:mysql "$datadir" /run/mysqld
	chmod 700 "$datadir"
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi
# The package's own system tables (an image run without a volume) are
# replaced by the database this entry point makes; its mark says it made it.
if [ ! -e "$datadir/.showdown-initialised" ]; then
	find "$datadir" -mindepth 1 -delete
	for v in MARIADB_USER MARIADB_PASSWORD MARIADB_DATABASE; do
		if [ -z "${!v:-}" ]; then
			echo "mariadb: $v is not set" >&2
			exit 1
		fi
	done
	mariadb-install-db --datadir="$datadir" --user=mysql --auth-root-authentication-method=socket \
		--skip-test-db --skip-name-resolve >/dev/null
	sock=/run/mysqld/init.sock
	mariadbd --datadir="$datadir" --skip-networking --socket="$sock" &
	pid=$!
	for _ in $(seq 1 120); do
		mariadb-admin --socket="$sock" ping >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || { echo "mariadb: the server exited during the first start" >&2; exit 1; }
		sleep 0.5
	done
	# The values are the pod's own settings; quoted for SQL all the same.
	q() { printf "%s" "$1" | sed "s/'/''/g"; }
	mariadb --socket="$sock" --user=mysql <<SQL
CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;
CREATE USER '$(q "$MARIADB_USER")'@'%' IDENTIFIED BY '$(q "$MARIADB_PASSWORD")';
GRANT ALL PRIVILEGES ON \`$MARIADB_DATABASE\`.* TO '$(q "$MARIADB_USER")'@'%';
FLUSH PRIVILEGES;
SQL
	for f in /docker-entrypoint-initdb.d/*.sql; do
		[ -e "$f" ] || continue
		echo "mariadb: running $f"
		mariadb --socket="$sock" --user=mysql "$MARIADB_DATABASE" <"$f"
	done
	mariadb-admin --socket="$sock" --user=mysql shutdown
	wait "$pid" || true
	touch "$datadir/.showdown-initialised"
fi
exec mariadbd --datadir="$datadir" --bind-address=0.0.0.0 --port=3306 --socket=/run/mysqld/mysqld.sock --skip-name-resolve "$@"
