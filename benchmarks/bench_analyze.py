"""Benchmark of ``sdckit analyze`` and of the k-anonymity / t-closeness checks.

Run ``python benchmarks/bench_analyze.py``. Wall and CPU time, median of 3 runs, measured
after the data is parsed (the CSV is read once, outside the timings):

* ``analyze`` of Adult (30,162 rows, 9 QIs) and of a 1,000,000-row table (Adult resampled
  with ``np.random.default_rng(0)``), with ``sampling_fraction=0.1``: every measure the CLI
  reports -- frequency set, prosecutor/journalist/marketer, population uniqueness, SUDA2/DIS,
  and distinction/separation of all 511 QI combinations. Target: 1M rows in <= 2 s.
* ``check`` (median of 11 runs: they take milliseconds) with k-anonymity (k = 5) and with
  t-closeness (occupation sensitive, equal distance, t = 0.2) on Adult, QIs = the other 8
  columns, side by side with the Python peer pycanon (``k_anonymity`` and ``t_closeness``,
  which also use equal distance for text attributes). Target: >= 20x faster than pycanon
  (pycanon: 0.29 s and 36 s on this machine class).

pycanon is not a dependency of sdckit. It is timed in-process when importable; otherwise give
``--pycanon-python PATH`` (an interpreter of a separate venv with ``pip install pycanon``) and
it is timed in a subprocess on the same CSV; without either its columns say "n/a".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pandas as pd

from _timing import timed
from sdckit.core.schema import Schema
from sdckit.datasets import ADULT_COLUMNS, load_adult
from sdckit.models import KAnonymity, TCloseness, check
from sdckit.risk.analyze import analyze

SENSITIVE = "occupation"
QIS_8 = [c for c in ADULT_COLUMNS if c != SENSITIVE]

# Runs in pycanon's interpreter: read the CSV with pandas, time k_anonymity and t_closeness.
PYCANON_SCRIPT = textwrap.dedent(
    """
    import json, statistics, sys, time
    import pandas as pd
    from pycanon import anonymity
    path, qis9, sa, repeat, t_repeat = sys.argv[1], sys.argv[2].split(","), sys.argv[3], \\
        int(sys.argv[4]), int(sys.argv[5])
    qis8 = [q for q in qis9 if q != sa]
    df = pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)
    def timed(fn, n):
        ts, cs, out = [], [], None
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            out = fn()
            ts.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
        return [statistics.median(ts), statistics.median(cs), float(out)]
    print(json.dumps({
        "k8": timed(lambda: anonymity.k_anonymity(df, qis8), repeat),
        "k9": timed(lambda: anonymity.k_anonymity(df, qis9), repeat),
        "t": timed(lambda: anonymity.t_closeness(df, qis8, [sa]), t_repeat),
    }))
    """
)


def pycanon_in_process(df: pd.DataFrame, repeat: int, t_repeat: int) -> dict | None:
    """Time pycanon here when it is importable (None otherwise): ``{case: [wall, cpu, value]}``."""
    try:
        from pycanon import anonymity  # type: ignore[import-not-found]
    except ImportError:
        return None
    out = {}
    for case, fn, n in (
        ("k8", lambda: anonymity.k_anonymity(df, QIS_8), repeat),
        ("k9", lambda: anonymity.k_anonymity(df, list(ADULT_COLUMNS)), repeat),
        ("t", lambda: anonymity.t_closeness(df, QIS_8, [SENSITIVE]), t_repeat),
    ):
        wall, cpu, value = timed(fn, n)
        out[case] = [wall, cpu, float(value)]
    return out


def pycanon_subprocess(python: str, csv: str, repeat: int, t_repeat: int) -> dict | None:
    """Time pycanon with another interpreter (its own venv) on the same CSV."""
    cmd = [python, "-c", PYCANON_SCRIPT, csv, ",".join(ADULT_COLUMNS), SENSITIVE, str(repeat)]
    proc = subprocess.run([*cmd, str(t_repeat)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"pycanon run failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    ap.add_argument(
        "--check-repeat", type=int, default=11, help="runs per check timing (they are short)"
    )
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the resampled table")
    ap.add_argument("--pycanon-python", help="interpreter of a venv where pycanon is installed")
    ap.add_argument(
        "--pycanon-t-repeat",
        type=int,
        default=None,
        help="runs of pycanon's t-closeness (default: --repeat; it takes ~36 s a run)",
    )
    args = ap.parse_args()
    t_repeat = args.pycanon_t_repeat or args.repeat

    demo = load_adult()
    adult = demo.data
    big = adult.iloc[np.random.default_rng(0).integers(0, len(adult), args.rows)]
    big = big.reset_index(drop=True)
    qis = list(ADULT_COLUMNS)

    def run_analyze(df: pd.DataFrame):
        return analyze(df, qis, sampling_fraction=0.1)

    run_analyze(adult.head(1000))  # warm-up: imports, numba caches
    rows: list[dict[str, Any]] = []
    for name, df in (("Adult", adult), (f"{len(big):,} rows", big)):
        t, cpu, res = timed(lambda df=df: run_analyze(df), args.repeat)
        rows.append(
            {
                "task": f"analyze {name}, 9 QIs",
                "rows": len(df),
                "sdckit_s": t,
                "cpu": cpu,
                "result": res,
            }
        )

    schema8 = Schema.from_roles(quasi_identifying=QIS_8, sensitive=[SENSITIVE])
    schema9 = Schema.from_roles(quasi_identifying=list(ADULT_COLUMNS))
    t_model = TCloseness(SENSITIVE, 0.2, "equal")
    checks = []  # (task, case, wall, cpu, value)
    for task, case, schema, model, read in (
        ("check k-anonymity (k=5), 8 QIs", "k8", schema8, KAnonymity(5), "min_class_size"),
        ("check k-anonymity (k=5), 9 QIs", "k9", schema9, KAnonymity(5), "min_class_size"),
        ("check t-closeness occupation (equal), 8 QIs", "t", schema8, t_model, "max_distance"),
    ):
        wall, cpu, res = timed(lambda s=schema, m=model: check(adult, s, [m]), args.check_repeat)
        checks.append((task, case, wall, cpu, float(res.results[0].details[read])))

    peer = pycanon_in_process(adult, args.check_repeat, t_repeat)
    if peer is None and args.pycanon_python:
        peer = pycanon_subprocess(args.pycanon_python, str(demo.path), args.check_repeat, t_repeat)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} "
        f"{os.cpu_count()} cores visible, load average {load:.1f}, Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}; "
        f"median of {args.repeat} runs (checks and pycanon k-anonymity: {args.check_repeat}, "
        f"pycanon t-closeness: {t_repeat}), after parsing; "
        "wall / CPU seconds"
    )
    header = (
        f"{'task':<44} {'rows':>10} {'sdckit wall/cpu':>16} {'pycanon wall/cpu':>17} "
        f"{'speed-up':>9}  result"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        s = r["result"].summary
        detail = (
            f"classes {s['equivalence_classes']:,}, uniques {s['sample_uniques']:,}, "
            f"J/n {s['marketer']:.6f}"
        )
        ours = f"{r['sdckit_s']:.3f}/{r['cpu']:.3f}"
        print(f"{r['task']:<44} {r['rows']:>10,} {ours:>16} {'':>17} {'':>9}  {detail}")
    for task, case, wall, cpu, value in checks:
        ours = f"{wall:.3f}/{cpu:.3f}"
        mine = f"{case[0]} = {value:.6g}"
        if peer is None:
            pc, speed, agree = "n/a", "n/a", ""
        else:
            p_wall, p_cpu, p_value = peer[case]
            pc = f"{p_wall:.3f}/{p_cpu:.3f}"
            speed = f"{p_cpu / cpu:.0f}x"
            same = "same" if np.isclose(p_value, value, atol=1e-9) else "DIFFERENT"
            agree = f" (pycanon {case[0]} = {p_value:.6g}, {same})"
        print(f"{task:<44} {len(adult):>10,} {ours:>16} {pc:>17} {speed:>9}  {mine}{agree}")
    print("speed-up = pycanon CPU time / sdckit CPU time")


if __name__ == "__main__":
    main()
