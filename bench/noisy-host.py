#!/usr/bin/env python3
"""A noisy host made on purpose: other tenants' bursts of CPU on every CPU.

The targets of the noisy-day issue are stated for a host whose machine
noise (`showdown noise`, the lab's probe) reads 4% or more per second;
the 2-CPU hosts here read 0-5% from day to day. This stands in for such a
host when the day is quiet: one process per CPU, pinned to it, that spins
for a random burst (BURST_MS, 20-200 ms by default) and then sleeps a
random gap (GAP_MS, 100-1500 ms), at the default nice level, so a service
or the generator on that CPU loses a random share of some seconds, as it
does beside a neighbour's cron job or a noisy VM on the same core. It is
bounded: it ends after --seconds (default 1800) or on SIGINT/SIGTERM, and
its children die with it.

    python3 bench/noisy-host.py --seconds 900 &      # then run the bench
    bin/showdown noise --seconds 11 --cpus 0,1       # what it reads now

It names itself in every figure it is used for: say "a noisy host made
with bench/noisy-host.py" beside the machine noise the run printed.
"""
import argparse
import os
import random
import signal
import sys
import time


def burn(cpu, until, burst, gap, seed):
    try:  # die with the parent, however it ends (PR_SET_PDEATHSIG)
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    os.sched_setaffinity(0, {cpu})
    rng = random.Random(seed)
    while time.monotonic() < until:
        end = time.monotonic() + rng.uniform(*burst) / 1000
        while time.monotonic() < end:
            pass
        time.sleep(rng.uniform(*gap) / 1000)
    os._exit(0)


def span(text, name):
    try:
        lo, hi = (float(x) for x in text.split("-"))
    except ValueError:
        sys.exit("noisy-host.py: %s %r: want two numbers of milliseconds, such as 20-200" % (name, text))
    if not 0 <= lo <= hi:
        sys.exit("noisy-host.py: %s %r: want 0 <= low <= high" % (name, text))
    return lo, hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1800, help="how long it runs (default 1800)")
    ap.add_argument("--cpus", default="", help="CPU list such as 0,1 (default: every CPU this process may use)")
    ap.add_argument("--burst", default=os.environ.get("BURST_MS", "20-200"), help="a burst's length, ms (20-200)")
    ap.add_argument("--gap", default=os.environ.get("GAP_MS", "100-1500"), help="the sleep between bursts, ms (100-1500)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not 0 < a.seconds <= 24 * 3600:
        sys.exit("noisy-host.py: --seconds %g: want more than 0 and at most a day" % a.seconds)
    cpus = sorted(os.sched_getaffinity(0)) if not a.cpus else [int(c) for c in a.cpus.split(",")]
    burst, gap = span(a.burst, "--burst"), span(a.gap, "--gap")
    until = time.monotonic() + a.seconds
    kids = []
    for i, cpu in enumerate(cpus):
        pid = os.fork()
        if pid == 0:
            burn(cpu, until, burst, gap, a.seed * 1000 + i)
        kids.append(pid)

    def stop(*_):
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except ProcessLookupError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print("noisy-host.py: CPUs %s, bursts %g-%g ms every %g-%g ms, for %g s (pid %d)"
          % (",".join(map(str, cpus)), burst[0], burst[1], gap[0], gap[1], a.seconds, os.getpid()), flush=True)
    for k in kids:
        os.waitpid(k, 0)


if __name__ == "__main__":
    main()
