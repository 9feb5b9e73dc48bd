"""Benchmark of the heuristic anonymizers on Adult: wall time, median of 3 runs.

Run ``python benchmarks/bench_heuristics.py`` (``--repeat N`` to change the number of runs).
Data: the bundled Adult extract (30,162 records) with ARX's hierarchies; ``age`` is typed
integer (Mondrian cuts it at medians, TDS splits it at run time; Datafly uses its hierarchy).
Numba kernels are compiled (or loaded from cache) by a warm-up call before timing. Target:
Mondrian on Adult, k=5, well under 1-2 s.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from _timing import timed_wall as timed
from sdckit.algorithms.anatomy import anatomy
from sdckit.algorithms.datafly import datafly
from sdckit.algorithms.mondrian import mondrian
from sdckit.algorithms.tds import tds
from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.models import KAnonymity, LDiversity, LKCPrivacy, TCloseness


def _summary(out: AlgorithmOutput) -> str:
    d = out.details
    parts = [f"suppressed={out.suppressed_records}"]
    if out.transformation is not None:
        parts.append("levels=" + ",".join(str(v) for v in out.transformation.values()))
    for key in ("partitions", "groups", "classes"):
        if key in d:
            parts.append(f"{key}={d[key]}")
    if "specializations" in d:
        parts.append(f"specializations={len(d['specializations'])}")
    parts.append(f"checked={out.nodes_checked}")
    return " ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per case (median is shown)")
    args = ap.parse_args()
    df, hier = load_adult()
    cols = list(df.columns)
    all9 = Schema.from_roles(quasi_identifying=cols, hierarchies=hier, types={"age": "integer"})
    all9_hier = Schema.from_roles(quasi_identifying=cols, hierarchies=hier)
    qi8 = [c for c in cols if c != "occupation"]
    sens8 = Schema.from_roles(
        quasi_identifying=qi8, sensitive=["occupation"], hierarchies=hier, types={"age": "integer"}
    )
    qi7 = [c for c in qi8 if c != "salary-class"]
    tds_schema = Schema.from_roles(
        quasi_identifying=qi7,
        sensitive=["occupation"],
        insensitive=["salary-class"],
        hierarchies=hier,
        types={"age": "integer"},
    )
    lkc = LKCPrivacy(2, 5, 0.5, {"occupation": ["Prof-specialty"]})

    anatomy(df.head(200), sens8, [LDiversity("occupation", 3)])  # numba warm-up

    cases: list[tuple[str, Callable[[], AlgorithmOutput]]] = [
        ("mondrian k=5 (9 QIs)", lambda: mondrian(df, all9, [KAnonymity(5)])),
        (
            "mondrian k=5 relaxed (9 QIs)",
            lambda: mondrian(df, all9, [KAnonymity(5)], relaxed=True),
        ),
        (
            "mondrian k=5 + distinct 2-div (occupation)",
            lambda: mondrian(df, sens8, [KAnonymity(5), LDiversity("occupation", 2)]),
        ),
        (
            "mondrian t=0.2 equal (occupation)",
            lambda: mondrian(df, sens8, [TCloseness("occupation", 0.2)]),
        ),
        ("datafly k=5 0% (9 QIs)", lambda: datafly(df, all9_hier, [KAnonymity(5)])),
        (
            "datafly k=5 5% (9 QIs)",
            lambda: datafly(df, all9_hier, [KAnonymity(5)], suppression_limit=0.05),
        ),
        (
            "tds k=5 (7 QIs, class salary-class)",
            lambda: tds(df, tds_schema, [KAnonymity(5)], class_attribute="salary-class"),
        ),
        (
            "tds LKC L=2 K=5 C=0.5 (7 QIs)",
            lambda: tds(df, tds_schema, [lkc], class_attribute="salary-class"),
        ),
        (
            "anatomy l=5 (occupation)",
            lambda: anatomy(df, sens8, [LDiversity("occupation", 5)], seed=0),
        ),
    ]
    print(f"Adult, {len(df):,} records; median of {args.repeat} runs")
    print(f"{'case':<45} {'seconds':>8}  result")
    for name, run in cases:
        t, out = timed(run, args.repeat)
        print(f"{name:<45} {t:8.3f}  {_summary(out)}")


if __name__ == "__main__":
    main()
