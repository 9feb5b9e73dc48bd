"""Benchmark of the perturbative masking methods: wall time, median of 3 runs.

Run ``python benchmarks/bench_masking.py`` (``--quick`` uses 1,000,000 values instead of
10,000,000). Data: one float column, standard normal (rank swapping), or one integer column
with 10 equally likely categories (PRAM), both from ``np.random.default_rng(0)``. Numba
kernels are compiled (or loaded from cache) by a warm-up call before timing. Target: rank
swapping and PRAM of 10,000,000 values in <= 5 s each.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import pandas as pd

from _timing import timed_wall as timed
from sdckit.masking.base import MaskResult
from sdckit.masking.randomization import pram
from sdckit.masking.swapping import rank_swap_p_buckets, rank_swap_p_distribution, rank_swapping


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000,000 values instead of 10,000,000")
    args = ap.parse_args()
    n = 1_000_000 if args.quick else 10_000_000
    rng = np.random.default_rng(0)
    num = pd.DataFrame({"x": rng.normal(size=n)})
    cat = pd.DataFrame({"c": rng.integers(0, 10, n)})

    # warm-up: compile / load the numba kernels (all code paths)
    small = pd.DataFrame({"x": np.random.default_rng(1).normal(size=70_000)})
    rank_swapping(small, "x", 5, seed=0)
    rank_swapping(small, "x", 0.01, seed=0)
    rank_swap_p_buckets(small, "x", 5, seed=0)
    rank_swap_p_distribution(small, "x", 5, seed=0)
    pram(cat.head(100), "c", seed=0)

    cases: list[tuple[str, Callable[[], MaskResult]]] = [
        ("rank_swapping p=5%", lambda: rank_swapping(num, "x", 5.0, seed=1)),
        ("rank_swapping p=0.0001% (scan)", lambda: rank_swapping(num, "x", 1e-4, seed=1)),
        ("rank_swap_p_buckets p=5%", lambda: rank_swap_p_buckets(num, "x", 5.0, seed=1)),
        ("rank_swap_p_distribution p=5%", lambda: rank_swap_p_distribution(num, "x", 5.0, seed=1)),
        ("pram 10 categories p_diag=0.8", lambda: pram(cat, "c", p_diagonal=0.8, seed=1)),
        ("pram invariant alpha=0.5", lambda: pram(cat, "c", invariant=True, seed=1)),
    ]
    print(f"n = {n:,} values, one column; median of 3 runs")
    print(f"{'method':<34} {'seconds':>8}  check")
    for name, run in cases:
        sec, res = timed(run)
        if name.startswith("rank"):
            y = res.data["x"].to_numpy()
            check = (
                "marginal kept"
                if np.array_equal(np.sort(y), np.sort(num["x"].to_numpy()))
                else "MARGINAL CHANGED"
            )
        else:
            check = f"{res.details['c']['n_changed'] / n:.1%} changed"
        print(f"{name:<34} {sec:8.2f}  {check}")


if __name__ == "__main__":
    main()
