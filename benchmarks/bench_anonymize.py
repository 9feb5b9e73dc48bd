"""Benchmark of ``sdckit.anonymize`` (optimal lattice search): median of 3 runs, with ARX's.

Run ``python benchmarks/bench_anonymize.py`` (``--big`` adds a 10,000,000-row resample of
Adult, ``np.random.default_rng(0)``, k=5, 5%, with peak memory; ``--process`` runs the whole
``sdckit anonymize`` command as a fresh process on a 2,000,000-row x 8-QI resample of Adult
(k=5, CSV + HTML + JSON written) and prints its wall time and peak memory; ``--case TEXT``
runs only the cases whose name contains TEXT, e.g. ``--case t=0.2``, ``--case population``
or ``--case presence``). Cases: ARX's own benchmark settings (the population models: Adult's
10% ``adult_subset.csv`` released, all of Adult as the population, 9 QIs, δ-presence with
ARX's benchmark bounds 0.05 and 0.15); ARX 3.9.2's in-process ``anonymize()`` medians on the
same machine class are printed beside ours (the population models: the 0.2 s the comparison
with ARX reported). Two figures per case: ``search`` is the optimal search alone
(:func:`sdckit.algorithms.optimal.optimal`: encoding, lattice search, applying the
transformation -- what ARX's ``anonymize()`` does), ``anonymize`` is the whole
:func:`sdckit.anonymize` (plus metrics and independent verification; without the risk
before/after, which ARX's ``anonymize()`` does not compute either).
Data: ``../shared/data/arx`` (Adult, Cup and their hierarchies).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

import sdckit
from _timing import timed
from sdckit.algorithms.optimal import optimal
from sdckit.core.hierarchy import read_hierarchy
from sdckit.core.io import read_table
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.models import DeltaPresence, KAnonymity, KMap, LDiversity, TCloseness

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arx"
CUP_QIS = ["ZIP", "AGE", "GENDER", "INCOME", "STATE", "RAMNTALL", "NGIFTALL", "MINRAMNT"]


def cases(big: bool) -> list[tuple[str, float | None, Callable[[], tuple]]]:
    """(name, ARX seconds, () -> (data, schema, models, limit))."""
    df, h = load_adult()
    all_qi = Schema.from_roles(quasi_identifying=list(df.columns), hierarchies=h)
    qi8 = [c for c in df.columns if c != "occupation"]
    tclose = Schema.from_roles(quasi_identifying=qi8, sensitive=["occupation"], hierarchies=h)
    out = [
        ("Adult k=5 0%", 0.087, lambda: (df, all_qi, [KAnonymity(5)], 0.0)),
        ("Adult k=5 5%", 1.69, lambda: (df, all_qi, [KAnonymity(5)], 0.05)),
        (
            "Adult l=3 (occupation, distinct) 5%",
            1.09,
            lambda: (df, tclose, [LDiversity("occupation", 3)], 0.05),
        ),
        (
            "Adult t=0.2 (occupation, equal) 5%",
            4.9,
            lambda: (df, tclose, [TCloseness("occupation", 0.2)], 0.05),
        ),
    ]
    if (DATA / "adult_subset.csv").exists():  # ARX's research subset: Adult the population
        subset = read_table(DATA / "adult_subset.csv", delimiter=";")
        out += [
            (
                "Adult subset k=5-map (population) 0%",
                0.2,
                lambda: (subset, all_qi, [KMap(5, population=df)], 0.0),
            ),
            (
                "Adult subset (0.05,0.15)-presence 0%",
                0.2,
                lambda: (subset, all_qi, [DeltaPresence(0.05, 0.15, population=df)], 0.0),
            ),
        ]
    if (DATA / "cup.csv").exists():
        cup = read_table(DATA / "cup.csv", delimiter=";")
        ch = {c: read_hierarchy(DATA / f"cup_hierarchy_{c}.csv", name=c) for c in CUP_QIS}
        cup_schema = Schema.from_roles(quasi_identifying=CUP_QIS, hierarchies=ch)
        out.append(("Cup k=5 5%", 8.8, lambda: (cup, cup_schema, [KAnonymity(5)], 0.05)))
    if big:
        rng = np.random.default_rng(0)
        rows = rng.integers(0, len(df), 10_000_000)
        big_df = df.iloc[rows].reset_index(drop=True)
        out = [("Adult 10M rows k=5 5%", None, lambda: (big_df, all_qi, [KAnonymity(5)], 0.05))]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="add the 10,000,000-row Adult resample")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--process",
        action="store_true",
        help="time the whole `sdckit anonymize` process on 2,000,000 rows x 8 QIs (peak memory)",
    )
    ap.add_argument(
        "--case",
        default="",
        help="run only the cases whose name contains this text (case-insensitive), e.g. t=0.2",
    )
    args = ap.parse_args()
    if args.big_only:
        run_cases(cases(big=True), args.repeat)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        print(f"peak memory of the 10M-row process (ru_maxrss): {peak:.2f} GiB")
        return
    if args.process:
        whole_process(args.repeat)
        return
    todo = [c for c in cases(big=False) if args.case.lower() in c[0].lower()]
    run_cases(todo, args.repeat, header=True)
    if args.big:  # own process, so that its peak memory is its own
        subprocess.run([sys.executable, __file__, "--big-only"], check=True)


def run_cases(todo, repeat: int, header: bool = False) -> None:
    """Time each case and print one table row per case (after a header line if asked)."""
    line = (
        f"{'case':36} {'ARX s':>6} {'search s':>9} {'(cpu)':>7} {'anonymize s':>12} "
        f"{'(cpu)':>7} {'nodes':>6}  result"
    )
    if header:
        print(line)
        print("-" * len(line))
    for name, arx, make in todo:
        data, schema, models, limit = make()
        rep = 1 if len(data) > 1_000_000 else repeat
        t_search, c_search, out = timed(
            lambda data=data, schema=schema, models=models, limit=limit: optimal(
                data, schema, models, suppression_limit=limit
            ),
            rep,
        )
        trans = ",".join(str(v) for v in out.transformation.values())
        nodes = out.nodes_checked
        del out  # do not hold two releases at once
        t_full, c_full, res = timed(
            lambda data=data, schema=schema, models=models, limit=limit: sdckit.anonymize(
                data, schema, models, suppression_limit=limit, risk=False
            ),
            rep,
        )
        arx_s = f"{arx:6.3f}" if arx is not None else "     -"
        print(
            f"{name:36} {arx_s} {t_search:9.3f} {c_search:7.3f} {t_full:12.3f} {c_full:7.3f} "
            f"{nodes:6d}  "
            f"[{trans}] loss={res.metrics['loss']:.6f} suppressed={res.suppressed_records}"
        )


def whole_process(repeat: int) -> None:
    """``sdckit anonymize`` as a fresh process on 2,000,000 resampled Adult rows x 8 QIs, k=5,
    0% and 5%: wall time (median) and the peak resident memory of the process."""
    import statistics
    import tempfile
    import time

    from sdckit.datasets import data_dir

    df, _ = load_adult()
    qi8 = [c for c in df.columns if c != "occupation"]
    rows = np.random.default_rng(0).integers(0, len(df), 2_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        df.iloc[rows][qi8].to_csv(folder / "adult2m.csv", sep=";", index=False)
        size = (folder / "adult2m.csv").stat().st_size / 1024**2
        print(f"{'case (fresh process, 2,000,000 rows x 8 QIs)':44} {'wall s':>8} {'peak GiB':>9}")
        for limit in (0.0, 0.05):
            lines = ['input: {path: adult2m.csv, delimiter: ";"}', "attributes:"]
            hier = data_dir()
            lines += [
                f"  {c}: {{role: quasi_identifying, hierarchy: {hier}/adult_hierarchy_{c}.csv}}"
                for c in qi8
            ]
            lines += [
                "models: [{k_anonymity: {k: 5}}]",
                f"suppression_limit: {limit}",
                "output: {path: out.csv, report: out.html, json: out.json}",
            ]
            (folder / "job.yaml").write_text("\n".join(lines) + "\n")
            walls, peaks = [], []
            for _ in range(repeat):
                cmd = [sys.executable, "-c", _PEAK, str(folder / "job.yaml")]
                t0 = time.perf_counter()
                res = subprocess.run(cmd, capture_output=True, text=True, check=True)
                walls.append(time.perf_counter() - t0)
                peaks.append(float(res.stdout.strip().splitlines()[-1]))
            name = f"anonymize k=5 {limit:.0%} ({size:.0f} MB CSV)"
            print(f"{name:44} {statistics.median(walls):8.2f} {max(peaks):9.2f}")


#: Runs the CLI in a child and prints the child's peak RSS in GiB (ru_maxrss is in KiB).
_PEAK = (
    "import resource, subprocess, sys; "
    "subprocess.run([sys.executable, '-m', 'sdckit.cli', 'anonymize', '--config', sys.argv[1], "
    "'--quiet'], check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2)"
)


if __name__ == "__main__":
    main()
