"""Benchmark of ``sdckit analyze`` and of the k-anonymity / t-closeness checks (issue 2, sec. 8).

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
  (issue: 0.29 s and 36 s on this machine).

pycanon is not a dependency of sdckit. It is timed in-process when importable; otherwise give
``--pycanon-python PATH`` (an interpreter of a separate venv with ``pip install pycanon``) and
it is timed in a subprocess on the same CSV; without either its columns say "n/a".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

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
    path, qis, sa, repeat, t_repeat = sys.argv[1], sys.argv[2].split(","), sys.argv[3], \\
        int(sys.argv[4]), int(sys.argv[5])
    df = pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)
    def timed(fn, n):
        ts, cs, out = [], [], None
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            out = fn()
            ts.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
        return statistics.median(ts), statistics.median(cs), out
    tk, ck, k = timed(lambda: anonymity.k_anonymity(df, qis), repeat)
    tt, ct, t = timed(lambda: anonymity.t_closeness(df, qis, [sa]), t_repeat)
    print(json.dumps({"k_time": tk, "k_cpu": ck, "k": int(k), "t_time": tt, "t_cpu": ct,
                      "t": float(t)}))
    """
)


def timed(run: Callable[[], Any], repeat: int = 3) -> tuple[float, float, Any]:
    """Median wall time, median process CPU time of ``repeat`` runs, and the last result.

    On a shared machine wall time includes waiting for a core; CPU time does not.
    """
    times, cpu, res = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = run()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), statistics.median(cpu), res


def pycanon_in_process(df: pd.DataFrame, repeat: int, t_repeat: int) -> dict | None:
    """Time pycanon here when it is importable (None otherwise)."""
    try:
        from pycanon import anonymity  # type: ignore[import-not-found]
    except ImportError:
        return None
    tk, ck, k = timed(lambda: anonymity.k_anonymity(df, QIS_8), repeat)
    tt, ct, t = timed(lambda: anonymity.t_closeness(df, QIS_8, [SENSITIVE]), t_repeat)
    return {"k_time": tk, "k_cpu": ck, "k": int(k), "t_time": tt, "t_cpu": ct, "t": float(t)}


def pycanon_subprocess(python: str, csv: str, repeat: int, t_repeat: int) -> dict | None:
    """Time pycanon with another interpreter (its own venv) on the same CSV."""
    cmd = [python, "-c", PYCANON_SCRIPT, csv, ",".join(QIS_8), SENSITIVE, str(repeat)]
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

    schema = Schema.from_roles(quasi_identifying=QIS_8, sensitive=[SENSITIVE])
    tk, ck_cpu, ck = timed(lambda: check(adult, schema, [KAnonymity(5)]), args.check_repeat)
    t_model = TCloseness(SENSITIVE, 0.2, "equal")
    tt, ct_cpu, ct = timed(lambda: check(adult, schema, [t_model]), args.check_repeat)
    k_value = ck.results[0].details["min_class_size"]
    t_value = ct.results[0].details["max_distance"]

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
    for task, wall, cpu, key, mine, other in (
        ("check k-anonymity (k=5), 8 QIs", tk, ck_cpu, "k", f"k = {k_value}", k_value),
        (
            "check t-closeness occupation (equal), 8 QIs",
            tt,
            ct_cpu,
            "t",
            f"t = {t_value:.6f}",
            t_value,
        ),
    ):
        ours = f"{wall:.3f}/{cpu:.3f}"
        if peer is None:
            pc, speed, agree = "n/a", "n/a", ""
        else:
            pc = f"{peer[key + '_time']:.3f}/{peer[key + '_cpu']:.3f}"
            speed = f"{peer[key + '_cpu'] / cpu:.0f}x"
            same = np.isclose(peer[key], other, atol=1e-9)
            agree = f" (pycanon {key} = {peer[key]:.6g}, {'same' if same else 'DIFFERENT'})"
        print(f"{task:<44} {len(adult):>10,} {ours:>16} {pc:>17} {speed:>9}  {mine}{agree}")
    print("speed-up = pycanon CPU time / sdckit CPU time")


if __name__ == "__main__":
    main()
