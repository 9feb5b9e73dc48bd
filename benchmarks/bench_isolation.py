"""Benchmark of (c, t)-isolation (:mod:`sdckit.risk.isolation`).

Run ``python benchmarks/bench_isolation.py [--runs 3]``; prints a Markdown table of the
median wall and CPU seconds (``_timing.timed``) and the three shares for standard normal
originals (seed 0) released with N(0, 0.3^2) noise per attribute (seed 1), c = 2:

* 100,000 records x 3, 4, 6 and 10 attributes, t = 5 (the ``sdckit evaluate`` default);
* 100,000 x 4 with t = 20;
* 1,000,000 x 3, t = 5.

Target: 100,000 records in seconds for the few numeric attributes an intruder links on.
The cost is one k = t nearest-neighbour query per released record in a kd-tree, which
slows down as the number of attributes grows. Measured on the 2-core development machine
under load from other jobs (one run; CPU seconds): 100,000 x 3: 0.6 s, x 4: 1.7 s, x 6:
6.2 s, x 10: 69 s; x 4 with t = 20: 2.8 s; 1,000,000 x 3: 10.4 s. (scikit-learn's KDTree
and BallTree were slower than scipy's cKDTree on the 10-attribute case.)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from _timing import timed
from sdckit.risk.isolation import isolation_risk

CASES = ((100_000, 3, 5), (100_000, 4, 5), (100_000, 6, 5), (100_000, 10, 5), (100_000, 4, 20))
BIG = (1_000_000, 3, 5)


def pair(n: int, d: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Original N(0, 1) records and their release with N(0, 0.3^2) noise."""
    cols = [f"x{i}" for i in range(d)]
    x = np.random.default_rng(0).normal(size=(n, d))
    noise = np.random.default_rng(1).normal(scale=0.3, size=(n, d))
    return pd.DataFrame(x, columns=cols), pd.DataFrame(x + noise, columns=cols)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| records | attributes | t | wall s | CPU s | by own | by any | isolating |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, d, t in (*CASES, BIG):
        original, released = pair(n, d)
        wall, cpu, res = timed(
            lambda o=original, r=released, t=t: isolation_risk(o, r, t=t), args.runs
        )
        print(
            f"| {n:,} | {d} | {t} | {wall:.2f} | {cpu:.2f} | {res.isolated_by_own:.4f} | "
            f"{res.isolated_by_any:.4f} | {res.isolating_released:.4f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
