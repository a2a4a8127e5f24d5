#!/usr/bin/env python3
"""The exact (Clopper-Pearson) 95% interval of a rate of k in n, by
bisection on the binomial tails, for bench/aa.sh and bench/yourchange.sh.

    python3 bench/clopper_pearson.py K N     # prints "low high" as fractions
"""
import math
import sys


def interval(k, n):
    if n == 0:
        return 0.0, 1.0

    def tail(p, lo, hi):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(lo, hi + 1))

    def solve(f):
        a, b = 0.0, 1.0
        for _ in range(60):
            m = (a + b) / 2
            if f(m):
                b = m
            else:
                a = m
        return (a + b) / 2

    low = 0.0 if k == 0 else solve(lambda p: tail(p, k, n) >= 0.025)
    high = 1.0 if k == n else solve(lambda p: tail(p, 0, k) <= 0.025)
    return low, high


if __name__ == "__main__":
    print("%.6f %.6f" % interval(int(sys.argv[1]), int(sys.argv[2])))
