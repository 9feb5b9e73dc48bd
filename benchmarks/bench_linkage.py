"""Benchmark of the record-linkage disclosure-risk measures.

Run ``python benchmarks/bench_linkage.py``; prints a Markdown table of the median wall time of
3 runs (and the measured risk) for:

* DBRL, 100,000 x 100,000 records, 10 attributes (standard normal data + N(0, 0.1^2) noise,
  seed 0), Euclidean and Mahalanobis;
* DBRL, PRL (full comparison, 1,166,400 pairs) and interval disclosure on the 1,080-record
  CASC Census file (``../shared/data/sdcmicro/sdcMicro_CASCrefmicrodata.csv``) with additive
  noise of 10% of each column's sd (seed 0);
* a rank-swap transparency attack on 10,000 records (4 attributes, window 50) and a learned
  weighted-mean distance on 200 Census records;
* matching re-identification (``sdckit.risk.matching``, the re-identification R-U scale of
  ``sdckit compare``) on 1,000,000 records drawn from Adult (``../shared/data/arx``, 8 QIs,
  seed 1): a global recoding with ARX's hierarchies and 2% of the records suppressed, and a
  PRAM-like release changing 10% of each QI's values (seed 0); and Mondrian k=5 boxes on
  50,000 records with two uniform integer QIs (0..4999, 0..2999), printed as intervals;
* DBRL on 10,000 x 10,000 records, 3 attributes, beside the full-index comparison of the
  ``recordlinkage`` package on the same records (100,000,000 pairs; one run only, it needs
  several GB), if that package is importable, and the speed-up. ``recordlinkage`` is not a
  dependency: install it anywhere on ``PYTHONPATH`` for this comparison, e.g.
  ``pip install --target /tmp/rlpkg recordlinkage`` and ``PYTHONPATH=src:/tmp/rlpkg``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import sdckit
from _timing import timed_wall
from sdckit.datasets import ADULT_COLUMNS
from sdckit.risk.interval_disclosure import interval_disclosure
from sdckit.risk.learned_distance import learned_distance_linkage
from sdckit.risk.linkage import distance_linkage
from sdckit.risk.probabilistic_linkage import probabilistic_linkage
from sdckit.risk.transparency import rank_swap_attack

ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT.parent / "shared" / "data" / "sdcmicro" / "sdcMicro_CASCrefmicrodata.csv"
ARX = ROOT.parent / "shared" / "data" / "arx"
ADULT_QI = [c for c in ADULT_COLUMNS if c != "occupation"]
RUNS = 3


def noisy(frame: pd.DataFrame, share: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sd = frame.std().to_numpy()
    return frame + rng.normal(size=frame.shape) * sd * share


def swap_within_blocks(values: np.ndarray, rng, window: int) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    out = values.copy()
    n_blocks = -(-values.size // (window + 1))
    pad = n_blocks * (window + 1) - values.size
    blocks = np.concatenate([order, np.full(pad, -1)]).reshape(n_blocks, window + 1)
    for row in blocks:
        row = row[row >= 0]
        out[row] = values[rng.permutation(row)]
    return out


def _timed(fn):
    """Median wall time of RUNS calls and the last result."""
    return timed_wall(fn, RUNS)


def main() -> None:
    rows: list[tuple[str, str, float, str]] = []

    rng = np.random.default_rng(0)
    x = rng.normal(size=(100_000, 10))
    y = x + 0.1 * rng.normal(size=x.shape)
    cols = [f"v{k}" for k in range(10)]
    xo, yo = pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols)
    for metric in ("euclidean", "mahalanobis"):
        t, res = _timed(lambda m=metric: distance_linkage(xo, yo, cols, metric=m))
        rows.append((f"DBRL {metric}", "100,000 x 100,000 x 10", t, f"dbrl={res.dbrl:.5f}"))

    if CENSUS.is_file():
        census = pd.read_csv(CENSUS)
        cn = noisy(census, 0.1)
        size = f"{len(census):,} x {len(census):,} x {census.shape[1]}"
        t, res = _timed(lambda: distance_linkage(census, cn))
        rows.append(("DBRL euclidean (Census, 10% noise)", size, t, f"dbrl={res.dbrl:.4f}"))
        t, res = _timed(lambda: probabilistic_linkage(census, cn))
        rows.append(
            (
                "PRL full index (Census, 10% noise)",
                f"{res.n_pairs:,} pairs",
                t,
                f"prl={res.prl:.4f} (EM {res.iterations} it.)",
            )
        )
        t, res = _timed(lambda: probabilistic_linkage(census, cn, blocking="sorted_neighbourhood"))
        rows.append(
            ("PRL sorted neighbourhood w=5", f"{res.n_pairs:,} pairs", t, f"prl={res.prl:.4f}")
        )
        t, res = _timed(
            lambda: probabilistic_linkage(
                census, cn, blocking="sorted_neighbourhood", u_estimate="random_pairs"
            )
        )
        rows.append(
            (
                "PRL sorted neighbourhood w=5, random-pair u",
                f"{res.n_pairs:,} pairs",
                t,
                f"prl={res.prl:.4f}",
            )
        )
        t, res = _timed(lambda: sdckit.evaluate(census, cn))
        rows.append(
            ("sdckit.evaluate (all measures, Census)", size, t, f"score={res['score']:.2f}")
        )
        t, res = _timed(lambda: interval_disclosure(census, cn))
        rows.append(("Interval disclosure p=1..10", size, t, f"id={res.interval_disclosure:.4f}"))
        sub, subn = census.iloc[:200].reset_index(drop=True), cn.iloc[:200].reset_index(drop=True)
        t, res = _timed(lambda: learned_distance_linkage(sub, subn, time_limit=60))
        rows.append(
            (
                "Learned weighted-mean distance (MILP)",
                "200 x 200 x 13",
                t,
                f"learned={res.linked_share:.3f} eucl={res.euclidean_share:.3f}",
            )
        )
    else:
        print(f"(Census file not found at {CENSUS}; Census rows skipped)", file=sys.stderr)

    rng = np.random.default_rng(0)
    xs = rng.normal(size=(10_000, 4))
    ys = np.column_stack([swap_within_blocks(xs[:, j], rng, 50) for j in range(4)])
    xo, yo = pd.DataFrame(xs, columns=list("abcd")), pd.DataFrame(ys, columns=list("abcd"))
    t, res = _timed(lambda: rank_swap_attack(xo, yo, list("abcd"), window=50))
    rows.append(
        (
            "Rank-swap transparency attack",
            "10,000 x 4, window 50",
            t,
            f"certain={res.certain_matches:.4f} reid={res.reidentified:.4f}",
        )
    )

    if (ARX / "adult.csv").is_file():
        rows.extend(_bench_matching())
    else:
        print(f"(Adult not found at {ARX}; matching rows skipped)", file=sys.stderr)

    a, b = _peer_data()
    t_ours, res = _timed(lambda: distance_linkage(a, b, list("abc")))
    rows.append(
        ("DBRL euclidean (peer data)", "10,000 x 10,000 x 3", t_ours, f"dbrl={res.dbrl:.4f}")
    )
    try:
        import recordlinkage  # noqa: F401
    except ImportError:
        rl_note = "recordlinkage: not installed (no side-by-side timing)"
    else:
        t_peer = _bench_recordlinkage(rows, a, b)
        rl_note = (
            f"recordlinkage {recordlinkage.__version__}: full index + 3 numeric comparisons "
            f"{t_peer:.2f} s (1 run) vs sdckit DBRL {t_ours:.3f} s (median of {RUNS}): "
            f"{t_peer / t_ours:.0f}x faster (and sdckit also finds the nearest record)"
        )

    print(f"machine: {os.cpu_count()} CPU cores; median of {RUNS} runs\n")
    print("| measure | size | median s | result |")
    print("|---|---|---:|---|")
    for name, size, t, result in rows:
        print(f"| {name} | {size} | {t:.3f} | {result} |")
    print(f"\n{rl_note}")


def _bench_matching() -> list[tuple[str, str, float, str]]:
    """Matching re-identification risk on 1M Adult-like records: generalized and PRAM-like."""
    from sdckit.core.hierarchy import read_hierarchy
    from sdckit.risk.matching import matching_risk

    adult = pd.read_csv(ARX / "adult.csv", sep=";")
    hs = {c: read_hierarchy(ARX / f"adult_hierarchy_{c}.csv", name=c) for c in ADULT_QI}
    big = adult.sample(1_000_000, replace=True, random_state=1).reset_index(drop=True)
    levels = dict(zip(ADULT_QI, [0, 1, 1, 1, 2, 1, 1, 0], strict=True))
    rng = np.random.default_rng(0)
    gen = big.copy()
    for c in ADULT_QI:
        gen[c] = hs[c].generalize(big[c], levels[c])
    gen.loc[rng.random(len(gen)) < 0.02, ADULT_QI] = "*"
    pram = big.copy()
    for c in ADULT_QI:
        change = rng.random(len(big)) < 0.1
        pram.loc[change, c] = rng.choice(big[c].unique(), int(change.sum()))
    out = []
    t, res = _timed(lambda: matching_risk(big, gen, ADULT_QI, hs))
    out.append(
        (
            "Matching re-identification, global recoding + 2% suppressed",
            "1,000,000 x 8 QIs",
            t,
            f"DR={res.average:.5f}",
        )
    )
    t, res = _timed(lambda: matching_risk(big, pram, ADULT_QI))
    out.append(
        (
            "Matching re-identification, PRAM-like 10%",
            "1,000,000 x 8 QIs",
            t,
            f"DR={res.average:.5f}",
        )
    )
    # local recoding: Mondrian boxes on two numeric QIs (many overlapping intervals per column)
    from sdckit.core.schema import Schema
    from sdckit.models import KAnonymity

    x = pd.DataFrame({"a": rng.integers(0, 5000, 50_000), "b": rng.integers(0, 3000, 50_000)})
    schema = Schema.from_roles(quasi_identifying=["a", "b"], types={"a": "integer", "b": "integer"})
    boxes = sdckit.anonymize(x, schema, [KAnonymity(5)], algorithm="mondrian", risk=False).data
    t, res = _timed(lambda: matching_risk(x, boxes, ["a", "b"]))
    out.append(
        (
            "Matching re-identification, Mondrian k=5 intervals",
            "50,000 x 2 numeric QIs",
            t,
            f"DR={res.average:.5f}",
        )
    )
    return out


def _peer_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    """10,000 records, 3 standard normal attributes, protected = + N(0, 0.1^2) noise (seed 0)."""
    rng = np.random.default_rng(0)
    a = pd.DataFrame(rng.normal(size=(10_000, 3)), columns=list("abc"))
    b = a + 0.1 * rng.normal(size=a.shape)
    return a, b


def _bench_recordlinkage(rows, a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Full-index comparison of the recordlinkage package on 10,000 records (100M pairs)."""
    import recordlinkage

    def run():
        idx = recordlinkage.Index()
        idx.full()
        pairs = idx.index(a, b)
        cmp = recordlinkage.Compare()
        for c in "abc":
            cmp.numeric(c, c, method="step", offset=0.1)
        return cmp.compute(pairs, a, b)

    t0 = time.perf_counter()
    out = run()
    t = time.perf_counter() - t0
    rows.append(
        (
            "recordlinkage full index + compare (1 run)",
            "10,000 x 10,000 x 3",
            t,
            f"{len(out):,} pairs",
        )
    )
    return t


if __name__ == "__main__":
    main()
