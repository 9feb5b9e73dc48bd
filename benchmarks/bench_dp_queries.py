"""Benchmark of the DP median and histogram on a million records: error and time per method.

Run ``python benchmarks/bench_dp_queries.py`` (``--n``, default 1,000,000; ``--draws``, default
20; ``--epsilon``, default 1). The median rows: ``n`` lognormal incomes clipped to
``[0, 200000]`` (numpy seed 0); mean absolute error of ``--draws`` releases and the median time
of one, for sdckit's Smith (2011) intervals (:func:`sdckit.dp.dp_quantile`), the exponential
mechanism over 1,025 evenly spaced candidates that sdckit used before, and diffprivlib's
``median`` when it imports. The histogram rows: :func:`sdckit.dp.dp_histogram` of ``n`` strings
over 50 declared categories, median of 5 (wall and CPU).
"""

from __future__ import annotations

import argparse
import statistics
import time
from fractions import Fraction

import numpy as np
import pandas as pd

from _timing import timed
from sdckit import dp
from sdckit.dp.randomness import Randomness
from sdckit.dp.selection import exponential_indices

LOWER, UPPER = 0.0, 200_000.0


def former_grid(values: np.ndarray, epsilon: float, draws: int) -> np.ndarray:
    """The former release: the exponential mechanism over 1,025 evenly spaced candidates,
    score ``-|2 #{x < c} - n|``, sensitivity 2 (its bound ``m b`` for the median)."""
    points = np.linspace(LOWER, UPPER, 1025)
    data = np.sort(np.clip(values, LOWER, UPPER))
    below = np.searchsorted(data, points, side="left").astype(np.int64)
    scores = -np.abs(2 * below - data.size)
    index = exponential_indices(
        scores, Fraction(2), Fraction(epsilon), monotonic=False, size=draws, rnd=Randomness(None)
    )
    return points[index]


def _median_rows(values: np.ndarray, epsilon: float, draws: int) -> list[tuple[str, str, str]]:
    truth = float(np.median(values))
    rows = []
    runs = [
        (
            "sdckit (Smith intervals)",
            lambda: dp.dp_quantile(values, 0.5, LOWER, UPPER, epsilon).value,
        ),
        ("former 1,025-point grid", lambda: float(former_grid(values, epsilon, 1)[0])),
    ]
    try:
        from diffprivlib.tools import median  # type: ignore[import-not-found]

        runs.append(
            (
                "diffprivlib median",
                lambda: float(median(values, epsilon=epsilon, bounds=(LOWER, UPPER))),
            )
        )
    except Exception as exc:  # noqa: BLE001 -- any import failure: the row says why
        rows.append(("diffprivlib median", "not importable", type(exc).__name__))
    for name, run in runs:
        errors, times = [], []
        for _ in range(draws):
            start = time.perf_counter()
            errors.append(abs(run() - truth))
            times.append(time.perf_counter() - start)
        rows.append((name, f"{np.mean(errors):.4f}", f"{statistics.median(times):.3f}s"))
    return rows


def main() -> None:
    """Print the median and histogram table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="records")
    ap.add_argument("--draws", type=int, default=20, help="median releases per method")
    ap.add_argument("--epsilon", type=float, default=1.0)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    incomes = np.clip(rng.lognormal(10.3, 0.8, args.n), LOWER, UPPER)
    print(f"median of {args.n:,} incomes in [0, 200000], epsilon {args.epsilon:g}")
    print(f"{'method':28s} {'mean |error|':>13s} {'time':>8s}")
    for name, error, seconds in _median_rows(incomes, args.epsilon, args.draws):
        print(f"{name:28s} {error:>13s} {seconds:>8s}")
    cats = [f"category-{i}" for i in range(50)]
    texts = np.array(cats, dtype=object)[rng.integers(0, len(cats), args.n)]
    print(f"\ndp_histogram of {args.n:,} strings, 50 categories (median of 5)")
    print(f"{'input':28s} {'wall':>8s} {'cpu':>8s}")
    inputs = {
        "list": list(texts),
        "object ndarray": texts,
        "Series (object)": pd.Series(texts, dtype=object),
        "Series (str)": pd.Series(texts, dtype="str"),
    }
    for name, values in inputs.items():
        wall, cpu, _ = timed(lambda v=values: dp.dp_histogram(v, 1.0, categories=cats), repeat=5)
        print(f"{name:28s} {wall:7.3f}s {cpu:7.3f}s")


if __name__ == "__main__":
    main()
