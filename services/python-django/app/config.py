"""The environment the service reads: the contract's variables and the knobs
of showdown.yaml, checked all at once so one start lists every mistake."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

DEFAULT_POOL_SIZE = 20
DEFAULT_ACQUIRE_TIMEOUT = "2s"
DEFAULT_QUERY_TIMEOUT = "30s"
# CONNECT_TIMEOUT bounds opening one database connection, so a database that
# is down costs a request at most this much before its 503.
CONNECT_TIMEOUT = 1.0

_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m)$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0}


class ConfigError(Exception):
    """ConfigError lists every mistake in the environment."""


@dataclass(frozen=True)
class MySQLTarget:
    """MySQLTarget is MYSQL_URL split into the driver's arguments."""

    host: str
    port: int
    user: str
    password: str
    database: str


@dataclass(frozen=True)
class Config:
    """Config is the checked environment."""

    host: str
    port: int
    database_url: str
    mysql: MySQLTarget | None
    pool_size: int  # DB_POOL_SIZE: connections of each pool, all workers together
    log_requests: bool
    workers: int
    worker_pool_size: int  # connections of each pool in one worker
    acquire_timeout: float  # seconds
    query_timeout: float  # seconds
    server: str  # "uvicorn" or "granian"


def usable_cpus() -> int:
    """usable_cpus is the number of CPUs this process may run on (its
    affinity mask, which taskset and cgroup cpusets set), not the machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _duration(name: str, raw: str, errs: list[str]) -> float:
    m = _DURATION.match(raw)
    if not m or float(m.group(1)) <= 0:
        errs.append(f"{name}={raw!r}: want a positive duration such as 2s or 500ms")
        return 1.0
    return float(m.group(1)) * _UNIT[m.group(2)]


def _mysql_target(raw: str, errs: list[str]) -> MySQLTarget | None:
    hint = "(want mysql://user:password@host:port/dbname)"
    try:
        u = urlsplit(raw)
        port = u.port or 3306
    except ValueError as e:
        errs.append(f"MYSQL_URL: {e} {hint}")
        return None
    if u.scheme not in ("mysql", "mariadb") or not u.hostname:
        errs.append(f"MYSQL_URL: scheme {u.scheme!r} or host {u.hostname!r} is not a MySQL address {hint}")
        return None
    return MySQLTarget(
        host=u.hostname,
        port=port,
        user=unquote(u.username or ""),
        password=unquote(u.password or ""),
        database=u.path.lstrip("/"),
    )


def load(env: os._Environ[str] | dict[str, str] = os.environ) -> Config:
    """load reads and checks env; it raises ConfigError naming every bad
    variable at once."""
    errs: list[str] = []
    get = lambda k, d="": env.get(k) or d  # noqa: E731 - unset and empty mean the default

    port_raw = get("PORT", "8080")
    port = int(port_raw) if port_raw.isdigit() and int(port_raw) <= 65535 else -1
    if port < 0:
        errs.append(f"PORT={port_raw!r}: want a TCP port, 0 .. 65535")

    pool_raw = get("DB_POOL_SIZE", str(DEFAULT_POOL_SIZE))
    pool = int(pool_raw) if pool_raw.isdigit() and 1 <= int(pool_raw) <= 10000 else 0
    if not pool:
        errs.append(f"DB_POOL_SIZE={pool_raw!r}: want a number of connections, 1 .. 10000")

    logs_raw = get("LOG_REQUESTS", "false").lower()
    if logs_raw not in ("true", "false", "1", "0"):
        errs.append(f"LOG_REQUESTS={logs_raw!r}: want true or false")

    database_url = get("DATABASE_URL")
    if database_url and not database_url.startswith(("postgres://", "postgresql://")):
        errs.append("DATABASE_URL: want postgres://user:password@host:port/dbname?sslmode=disable")
    mysql_raw = get("MYSQL_URL")
    mysql = _mysql_target(mysql_raw, errs) if mysql_raw else None

    # Workers: one per CPU the process may use, unless WORKERS says otherwise.
    # Each worker has its own pools, so DB_POOL_SIZE is split between them
    # and the connections of all workers together stay within it.
    has_db = bool(database_url or mysql_raw)
    workers_raw = get("WORKERS", "auto").lower()
    workers = 1
    if workers_raw in ("auto", "0"):
        workers = usable_cpus()
        if has_db and pool:
            workers = min(workers, pool)  # at least one connection per worker
    elif workers_raw.isdigit() and 1 <= int(workers_raw) <= 256:
        workers = int(workers_raw)
        if has_db and pool and workers > pool:
            errs.append(
                f"WORKERS={workers} with DB_POOL_SIZE={pool}: each worker needs at least one connection of "
                f"the pool; raise DB_POOL_SIZE or lower WORKERS"
            )
    else:
        errs.append(f"WORKERS={workers_raw!r}: want a number of processes, 1 .. 256, or auto (one per usable CPU)")

    acquire = _duration("DB_ACQUIRE_TIMEOUT", get("DB_ACQUIRE_TIMEOUT", DEFAULT_ACQUIRE_TIMEOUT), errs)
    query = _duration("DB_QUERY_TIMEOUT", get("DB_QUERY_TIMEOUT", DEFAULT_QUERY_TIMEOUT), errs)

    server = get("SERVER", "uvicorn").lower()
    if server not in ("uvicorn", "granian"):
        errs.append(f"SERVER={server!r}: want uvicorn or granian")

    if errs:
        raise ConfigError("; ".join(errs))
    return Config(
        host=get("HOST", "127.0.0.1"),
        port=port,
        database_url=database_url,
        mysql=mysql,
        pool_size=pool,
        log_requests=logs_raw in ("true", "1"),
        workers=workers,
        worker_pool_size=max(1, pool // workers),
        acquire_timeout=acquire,
        query_timeout=query,
        server=server,
    )
