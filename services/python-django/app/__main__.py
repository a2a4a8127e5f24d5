"""python -m app: serve the contract on uvicorn, in this process (one
worker) or as N forked worker processes sharing one listening socket.

The supervisor is ours rather than uvicorn's --workers for three reasons:
uvicorn's spawns its workers (each re-imports everything) where a fork
shares the loaded code; it keeps the listening socket open in the parent
after SIGTERM, so new connections queue unanswered until it exits instead
of being refused; and it needs a health-check thread in every worker.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback

from app.config import Config, ConfigError, load

# STOP_WAIT bounds the workers' graceful shutdown after SIGTERM: the
# contract allows 10 s to exit; uvicorn's own grace is 7 s (see serve).
STOP_WAIT = 9.0
# STARTUP_WINDOW: a worker that dies this soon after its fork failed to start
# (bad code, a port in use) and is not restarted; the service exits instead.
STARTUP_WINDOW = 5.0


def log(level: str, msg: str, **fields: object) -> None:
    """log writes one JSON line to stderr: start, stop and failures, never
    requests (stdout holds request logs only)."""
    rec = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "level": level, "msg": msg, **fields}
    sys.stderr.write(json.dumps(rec) + "\n")
    sys.stderr.flush()


def bind(cfg: Config) -> socket.socket:
    """bind opens the listening socket once, before any worker exists."""
    family = socket.AF_INET6 if ":" in cfg.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((cfg.host, cfg.port))
    except OSError as e:
        sock.close()
        log("ERROR", f"python-django: cannot listen on {cfg.host}:{cfg.port}: {e} "
            "(check HOST and PORT: is another process on that port?)")
        raise SystemExit(1)
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _ignore(signum: int, frame: object) -> None:
    """_ignore stands as the SIGTERM handler around uvicorn's: after its
    graceful shutdown uvicorn raises the signal again to the previous
    handler, which must not be the default one (it would kill the process
    with the signal instead of exiting 0)."""


def serve(cfg: Config, sock: socket.socket) -> None:
    """serve runs one uvicorn server on sock until SIGTERM or SIGINT."""
    import uvicorn

    from app.main import create_app

    signal.signal(signal.SIGTERM, _ignore)
    signal.signal(signal.SIGINT, _ignore)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(cfg),
            loop="uvloop",  # libuv event loop: about twice asyncio's own on socket work
            http="httptools",  # the llhttp parser in C, not h11 in pure Python
            lifespan="on",  # pools open at startup and close at shutdown, per worker (observe.py: Django has no lifespan)
            access_log=False,  # LOG_REQUESTS decides request logs, in JSON, on stdout
            server_header=False,
            proxy_headers=False,  # no proxy in front: skip X-Forwarded-* handling per request
            timeout_keep_alive=120,  # like go-stdlib's IdleTimeout: load tools keep connections
            timeout_graceful_shutdown=7,  # requests in flight at SIGTERM get 7 s
            log_level="info",
        )
    )
    # Everything made so far lives as long as the process: out of the
    # collector's generations, full collections never traverse it.
    gc.freeze()
    server.run(sockets=[sock])
    if not server.started:
        raise SystemExit(3)


def serve_granian(cfg: Config) -> int:
    """serve_granian runs the application under granian, whose HTTP stack
    is Rust (hyper): its own supervisor process forks cfg.workers workers,
    each importing app.asgi:app, and stops them on SIGTERM."""
    from granian import Granian
    from granian.constants import HTTPModes, Interfaces, Loops

    if cfg.workers > 1:
        metrics_dir = tempfile.mkdtemp(prefix="python-django-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    try:
        Granian(
            "app.asgi:app",
            address=cfg.host,
            port=cfg.port,
            interface=Interfaces.ASGI,
            workers=cfg.workers,
            loop=Loops.uvloop,
            http=HTTPModes.http1,
            websockets=False,
            backlog=2048,
            log_access=False,
            # granian logs to stdout by default: its lines go to stderr, so
            # stdout holds request logs only (LOG_REQUESTS), as with uvicorn.
            log_dictconfig={"handlers": {
                "console": {"formatter": "generic", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"},
                "access": {"formatter": "access", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"},
            }},
            respawn_failed_workers=True,
            workers_kill_timeout=int(STOP_WAIT),
        ).serve()
    finally:
        if cfg.workers > 1:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def supervise(cfg: Config, sock: socket.socket) -> int:
    """supervise forks cfg.workers workers on sock, restarts one that dies,
    and on SIGTERM stops accepting, stops them gracefully and returns 0."""
    # Prometheus counters of all workers are summed at scrape time from
    # per-process files in this folder (prometheus_client's multiprocess
    # mode); it must be set before prometheus_client is imported.
    metrics_dir = tempfile.mkdtemp(prefix="python-django-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    from app.main import preload

    preload()  # Django, the URLconf and the views loaded once here, shared by the forked workers

    # Frozen before the fork (not in each worker, which would write to every
    # object's header): the collector of a worker then never touches the
    # pages it shares with the others, so they stay shared.
    gc.freeze()

    waited = {signal.SIGTERM, signal.SIGINT, signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    workers: dict[int, float] = {}  # pid -> fork time

    def fork() -> None:
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, set())
                serve(cfg, sock)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        workers[pid] = time.monotonic()

    for _ in range(cfg.workers):
        fork()
    log("INFO", "supervisor started", pid=os.getpid(), workers=cfg.workers)
    code = 0
    try:
        while True:
            info = signal.sigtimedwait(waited, 1.0)
            failed = False
            for pid, status in _reap(workers):
                started = workers.pop(pid)
                failed = failed or time.monotonic() - started < STARTUP_WINDOW
                log("ERROR", "worker died", pid=pid, status=status, restart=not failed)
                if not failed:
                    fork()
            if failed:
                log("ERROR", "python-django: a worker failed to start; stopping")
                code = 1
                break
            if info is not None and info.si_signo in (signal.SIGTERM, signal.SIGINT):
                break
        # Stop accepting in this process too (the workers close their
        # copies), so new connections are refused rather than queued.
        sock.close()
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT
        while workers and time.monotonic() < deadline:
            for pid, _ in _reap(workers):
                workers.pop(pid)
            time.sleep(0.05)
        for pid in workers:
            log("ERROR", "worker still running after the grace period; killing it", pid=pid)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        log("INFO", "stopped")
        return code
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _reap(workers: dict[int, float]) -> list[tuple[int, int]]:
    """_reap collects the workers that have exited, without waiting."""
    done = []
    for pid in list(workers):
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            got, status = pid, -1
        if got:
            done.append((pid, status))
    return done


def main() -> int:
    try:
        cfg = load()
    except ConfigError as e:
        log("ERROR", f"python-django: {e}")
        return 1
    if cfg.server == "granian":
        log("INFO", "starting granian", addr=f"{cfg.host}:{cfg.port}", workers=cfg.workers,
            pool_size=cfg.pool_size, pool_per_worker=cfg.worker_pool_size)
        return serve_granian(cfg)
    sock = bind(cfg)
    log(
        "INFO", "listening", addr=f"{cfg.host}:{sock.getsockname()[1]}", workers=cfg.workers,
        postgres=bool(cfg.database_url), mysql=cfg.mysql is not None,
        pool_size=cfg.pool_size, pool_per_worker=cfg.worker_pool_size,
    )
    if cfg.workers == 1:
        serve(cfg, sock)
        return 0
    return supervise(cfg, sock)


if __name__ == "__main__":
    sys.exit(main())
