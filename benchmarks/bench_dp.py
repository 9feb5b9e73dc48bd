"""Benchmark of the exact DP samplers and of one mechanism call: wall and CPU time, median of 3.

Run ``python benchmarks/bench_dp.py`` (``--draws N``, default 100,000). Each sampler draws N
values from the OS CSPRNG (the default) and from a seeded generator. Target (query server):
10**5 discrete Laplace draws in < 1 s; a single Laplace release in well under a millisecond.
"""

from __future__ import annotations

import argparse
from fractions import Fraction

from _timing import timed
from sdckit import dp
from sdckit.dp import samplers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=100_000, help="draws per sampler call")
    n = ap.parse_args().draws
    cases = {
        "discrete_laplace(scale=7/2)": lambda seed: samplers.discrete_laplace(
            Fraction(7, 2), n, seed
        ),
        "discrete_laplace(scale=0.3)": lambda seed: samplers.discrete_laplace(0.3, n, seed),
        "discrete_laplace(scale=1e4)": lambda seed: samplers.discrete_laplace(10_000, n, seed),
        "discrete_gaussian(sigma2=20)": lambda seed: samplers.discrete_gaussian(20, n, seed),
        "discrete_gaussian(sigma2=1e6)": lambda seed: samplers.discrete_gaussian(10**6, n, seed),
        "bernoulli_exp(gamma=7/3)": lambda seed: samplers.bernoulli_exp(Fraction(7, 3), n, seed),
        "exp_weighted_index(100 candidates)": lambda seed: samplers.exp_weighted_index(
            [Fraction(i, 10) for i in range(100)], n, seed
        ),
    }
    print(f"{'sampler':38s} {'csprng wall':>12s} {'cpu':>7s} {'seeded wall':>12s} {'cpu':>7s}")
    for name, run in cases.items():
        wall_c, cpu_c, _ = timed(lambda run=run: run(None))
        wall_s, cpu_s, _ = timed(lambda run=run: run(1))
        print(f"{name:38s} {wall_c:11.3f}s {cpu_c:6.3f}s {wall_s:11.3f}s {cpu_s:6.3f}s")
    calls = 1000
    wall, cpu, _ = timed(lambda: [dp.laplace(3.7, 1.0, 0.5) for _ in range(calls)])
    print(f"laplace(): {wall / calls * 1e6:.0f} µs per call (cpu {cpu / calls * 1e6:.0f} µs)")


if __name__ == "__main__":
    main()
