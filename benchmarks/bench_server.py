"""Benchmark of ``sdckit serve``: DP COUNT / SUM / AVG with GROUP BY one key over a
1,000,000-row synthetic table, through the HTTP API, on DuckDB and PostgreSQL; then the same
kind of queries at epsilon 1 compared with SmartNoise SQL and OpenDP (time and error).

Run: ``python benchmarks/bench_server.py [--rows 1000000] [--queries 200] [--reps 20]
[--smartnoise-python /tmp/snsql-venv/bin/python] [--opendp-python /tmp/opendp-venv/bin/python]``.

**Latency table.** Every query is distinct (a different WHERE), so the ledger's answer cache is
never hit. PostgreSQL runs on a throwaway cluster (initdb as in the tests) and is skipped when no
initdb is found. ``--queries 0`` skips this table.

**Comparison table** (epsilon 1 per query; ``SELECT region, AGG FROM big GROUP BY region``, with
AGG ``COUNT(*)``, ``SUM(income)`` or ``AVG(income)``; the 4 regions are declared public in every
tool, so none thresholds or drops groups; income is clamped to ``[0, 500000]``; one record per
person (add/remove-one-record neighbours, sensitivity of SUM ``max(|lo|, |hi|)`` = 500000).
The data is written once, to a Parquet file (and a CSV copy for SmartNoise, whose pinned
environment has no Parquet engine), which every tool reads; loading is timed apart from the
queries. Each tool first answers one untimed COUNT (warm-up). Each repetition is a fresh
release: sdckit gets a fresh analyst per repetition (its answer cache, keyed by analyst, is
never hit), the libraries draw fresh noise on every call. The error is the mean absolute error
``|noisy - exact|`` over the 4 groups and the repetitions, the exact answer computed with pandas
on the unclamped data (clamping changes nothing here: no income exceeds the bounds); ``se`` is
its standard error.

Epsilon split, the same for all three: COUNT and SUM get the whole epsilon 1 (the groups are
disjoint: parallel composition); AVG is noisy SUM / noisy COUNT with epsilon 1/2 each.

* sdckit: ``answer_dp`` (exact discrete Laplace on a grid; AVG halves the query's epsilon
  between SUM and COUNT and clips the ratio to the bounds). Timed: the HTTP round trip of
  ``POST /v1/query`` to ``sdckit serve`` on DuckDB (parsing, SQL on DuckDB, noise, the ledger
  transaction that charges the budget and stores the answer, JSON), client on the same machine;
  and, in process, ``QueryService.query`` (the same without HTTP).
* SmartNoise SQL: ``PrivateReader`` over its ``PandasReader`` (the data loaded once into
  SQLite in memory), metadata ``rows`` = the row count, ``max_ids: 1``, ``pid`` as
  ``private_id``, ``censor_dims: false``, income ``lower``/``upper`` = the bounds. SmartNoise
  gives **every noisy column of a query** the ``Privacy`` epsilon (AVG is a noisy SUM and a noisy
  COUNT, so it spends 2 epsilon); the benchmark sets each query's ``Privacy(epsilon=1/k)`` with
  ``k`` its number of mechanisms (``get_privacy_cost`` checked = 1). Default mechanisms:
  discrete Laplace for COUNT, Laplace for a float SUM. Timed: ``execute`` in process. A second
  SmartNoise row, ``row_privacy``, declares ``row_privacy: true`` instead of ``pid``: the same
  privacy unit here (one record per person) without the per-``pid`` ``ROW_NUMBER()`` window
  that ``max_ids: 1`` adds to every query (its cost, not SQLite's GROUP BY, dominates the first
  row).
* OpenDP: the polars ``Context`` API (``Context.compositor``, ``unit_of(contributions=1)``,
  ``loss_of(epsilon=1)``, a ``Margin`` on region with public keys, ``max_length`` = the row
  count, 4 groups); COUNT ``dp.len()`` (integer Laplace), SUM ``.dp.sum(bounds)`` (float Laplace);
  AVG is a context of epsilon 1 split evenly over two queries, SUM and COUNT, divided and clipped
  like sdckit. Timed: building the context and query, ``release()`` and ``collect()`` in process
  (the data already in memory as a polars frame).

The libraries run in their own virtual environments, as subprocesses of this script
(``--worker``), and print their results as JSON; their rows say "not run" without the option
that names their interpreter.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# httpx, pandas, sdckit and the test helpers are imported inside the functions that need them:
# the --worker modes run in the other tools' virtual environments, which lack them.

QUERIES = {
    "COUNT": "SELECT region, COUNT(*) FROM big WHERE age > {i} GROUP BY region",
    "SUM": "SELECT region, SUM(income) FROM big WHERE age > {i} GROUP BY region",
    "AVG": "SELECT region, AVG(income) FROM big WHERE age > {i} GROUP BY region",
}

#: The comparison's queries; ``{table}`` is ``big`` (sdckit) or ``public.big`` (SmartNoise).
COMPARED = {
    "COUNT": "SELECT region, COUNT(*) AS value FROM {table} GROUP BY region",
    "SUM": "SELECT region, SUM(income) AS value FROM {table} GROUP BY region",
    "AVG": "SELECT region, AVG(income) AS value FROM {table} GROUP BY region",
}
REGIONS = ["east", "north", "south", "west"]
INCOME_BOUNDS = (0.0, 500000.0)
AGE_BOUNDS = (0, 120)
HELP_SMARTNOISE = "not run (give --smartnoise-python PATH)"
HELP_OPENDP = "not run (give --opendp-python PATH)"


def _support() -> Any:
    """The server test helpers (``tests/server_support.py``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import server_support

    return server_support


def make_data(folder: Path, rows: int, with_id: bool = False) -> None:
    """``big.parquet`` (region, age, income); ``with_id`` adds a ``pid`` column (one per record)
    and a CSV copy ``big.csv``."""
    import pandas as pd

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "region": rng.choice(np.array(["north", "south", "east", "west"]), rows),
            "age": rng.integers(18, 90, rows),
            "income": rng.gamma(2.0, 20000.0, rows).round(2),
        }
    )
    if with_id:
        frame.insert(0, "pid", np.arange(rows))
        frame.to_csv(folder / "big.csv", index=False)
    frame.to_parquet(folder / "big.parquet", index=False)


def run(database: dict, folder: Path, n: int) -> list[tuple[str, float, float, float]]:
    """The latency table of one backend: p50, p95 (ms) and queries/s of each aggregate."""
    import httpx

    support = _support()
    datasets = {
        "big": {
            "load": {"path": "big.parquet"},
            "mode": "dp",
            "budget": {"epsilon": 1000},
            "bounds": {"income": [0, 500000], "age": [0, 120]},
            "public_keys": ["region"],
        }
    }
    config = support.write_config(folder, database, datasets)
    port = support.free_port()
    out = []
    with support.server_process(config, port), httpx.Client(timeout=120) as client:
        headers = {"Authorization": f"Bearer {support.KEYS['ALICE_KEY']}"}
        for name, template in QUERIES.items():
            times = []
            start = time.perf_counter()
            for i in range(n):
                t0 = time.perf_counter()
                r = client.post(
                    f"http://127.0.0.1:{port}/v1/query",
                    json={"dataset": "big", "sql": template.format(i=i), "epsilon": 0.001},
                    headers=headers,
                )
                times.append(time.perf_counter() - t0)
                assert r.status_code == 200, r.text
            total = time.perf_counter() - start
            ms = np.array(times) * 1000
            out.append(
                (name, float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), n / total)
            )
    return out


def latency_table(rows: int, queries: int) -> None:
    """Print the latency table (DuckDB, and PostgreSQL when initdb is found)."""
    support = _support()
    print(f"{rows:,} rows, {queries} distinct queries per aggregate, GROUP BY region")
    print(f"{'backend':<11}{'query':<7}{'p50 ms':>9}{'p95 ms':>9}{'queries/s':>11}")
    backends = ["duckdb"]
    if support.find_initdb() is not None:
        backends.append("postgresql")
    for backend in backends:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            make_data(folder, rows)
            if backend == "duckdb":
                results = run({"duckdb": "bench.duckdb"}, folder, queries)
            else:
                with support.postgres_cluster() as dsn:
                    results = run({"postgresql": dsn}, folder, queries)
            for name, p50, p95, qps in results:
                print(f"{backend:<11}{name:<7}{p50:>9.1f}{p95:>9.1f}{qps:>11.1f}")
    if support.find_initdb() is None:
        print("postgresql: skipped (no initdb found)")


# -- the comparison: every tool returns {"load_s", "results": {AGG: {"seconds", "answers"}}} --


def _analyst_keys(reps: int) -> dict[str, str]:
    """Environment variable -> key of the analysts ``a0``.. (one per repetition) and ``warm``."""
    keys = {f"BENCH_A{i}_KEY": f"bench-analyst-key-{i:04d}-0123456789" for i in range(reps)}
    keys["BENCH_WARM_KEY"] = "bench-analyst-key-warm-0123456789"
    return keys


def _comparison_config(folder: Path, database: str, reps: int) -> Path:
    """A server config of the comparison: the dataset ``big``, one analyst per repetition."""
    import yaml

    analysts = {f"a{i}": {"key_env": f"BENCH_A{i}_KEY"} for i in range(reps)}
    analysts["warm"] = {"key_env": "BENCH_WARM_KEY"}
    config = {
        "database": {"duckdb": database},
        "datasets": {
            "big": {
                "load": {"path": "big.parquet"},
                "mode": "dp",
                "budget": {"epsilon": 10},
                "bounds": {"income": list(INCOME_BOUNDS), "age": list(AGE_BOUNDS)},
                "public_keys": {"region": REGIONS},
            }
        },
        "analysts": analysts,
        "listen": {"host": "127.0.0.1", "port": 0},
    }
    path = folder / f"compare-{Path(database).stem}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _by_region(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {row["region"]: float(row["value"]) for row in rows}


def _timed_reps(reps: int, ask: Callable[[int, str], dict[str, float]]) -> dict[str, Any]:
    """``ask(repetition, aggregate)`` for every aggregate and repetition, timed."""
    results: dict[str, Any] = {}
    for name in COMPARED:
        seconds, answers = [], []
        for i in range(reps):
            t0 = time.perf_counter()
            answer = ask(i, name)
            seconds.append(time.perf_counter() - t0)
            answers.append(answer)
        results[name] = {"seconds": seconds, "answers": answers}
    return results


def sdckit_http(folder: Path, reps: int) -> dict[str, Any]:
    """sdckit through ``sdckit serve`` on DuckDB (a subprocess), over HTTP."""
    import httpx

    support = _support()
    keys = _analyst_keys(reps)
    os.environ.update(keys)
    config = _comparison_config(folder, "http.duckdb", reps)
    port = support.free_port()
    url = f"http://127.0.0.1:{port}/v1/query"
    t0 = time.perf_counter()
    with support.server_process(config, port), httpx.Client(timeout=120) as client:
        load = time.perf_counter() - t0

        def ask(analyst: str, name: str) -> dict[str, float]:
            r = client.post(
                url,
                json={"dataset": "big", "sql": COMPARED[name].format(table="big"), "epsilon": 1},
                headers={"Authorization": f"Bearer {keys[f'BENCH_{analyst.upper()}_KEY']}"},
            )
            assert r.status_code == 200, r.text
            return _by_region(r.json()["rows"])

        ask("warm", "COUNT")
        results = _timed_reps(reps, lambda i, name: ask(f"a{i}", name))
    return {"load_s": load, "results": results}


def sdckit_inprocess(folder: Path, reps: int) -> dict[str, Any]:
    """sdckit's ``QueryService`` in this process (no HTTP), on its own DuckDB file."""
    from sdckit.server.config import load_server_config
    from sdckit.server.service import QueryService

    config = _comparison_config(folder, "inprocess.duckdb", reps)
    t0 = time.perf_counter()
    service = QueryService(load_server_config(config, environ=_analyst_keys(reps)))
    load = time.perf_counter() - t0
    try:

        def ask(analyst: str, name: str) -> dict[str, float]:
            body = service.query(analyst, "big", COMPARED[name].format(table="big"), 1.0)
            return _by_region(body["rows"])

        ask("warm", "COUNT")
        results = _timed_reps(reps, lambda i, name: ask(f"a{i}", name))
    finally:
        service.close()
    return {"load_s": load, "results": results}


def worker_smartnoise(
    data: Path, reps: int, epsilon: float, row_privacy: bool = False
) -> dict[str, Any]:
    """SmartNoise SQL over its PandasReader (run in SmartNoise's own environment); the privacy
    unit is the ``pid`` column (``max_ids: 1``), or the row with ``row_privacy``."""
    from importlib.metadata import version

    import pandas as pd
    from snsql import Privacy
    from snsql.sql.private_reader import PrivateReader
    from snsql.sql.reader.pandas import PandasReader

    t0 = time.perf_counter()
    frame = pd.read_csv(data)
    table = {
        "rows": len(frame),
        "max_ids": 1,
        "row_privacy": row_privacy,
        "censor_dims": False,
        "pid": {"type": "int", "private_id": not row_privacy},
        "region": {"type": "string"},
        "age": {"type": "int", "lower": AGE_BOUNDS[0], "upper": AGE_BOUNDS[1]},
        "income": {"type": "float", "lower": INCOME_BOUNDS[0], "upper": INCOME_BOUNDS[1]},
    }
    metadata = {"bench": {"public": {"big": table}}}
    base = PandasReader(frame, metadata)
    load = time.perf_counter() - t0
    readers, costs = {}, {}
    for name, template in COMPARED.items():
        sql = template.format(table="public.big")
        probe = PrivateReader(base, metadata, privacy=Privacy(epsilon=1.0, delta=0.0))
        mechanisms = float(probe.get_privacy_cost(sql)[0])  # epsilon 1 per noisy column
        readers[name] = PrivateReader(
            base, metadata, privacy=Privacy(epsilon=epsilon / mechanisms, delta=0.0)
        )
        costs[name] = float(readers[name].get_privacy_cost(sql)[0])

    def ask(name: str) -> dict[str, float]:
        out = readers[name].execute(COMPARED[name].format(table="public.big"))
        return {str(row[0]): float(row[1]) for row in out[1:]}

    ask("COUNT")
    results = _timed_reps(reps, lambda i, name: ask(name))
    for name in results:
        results[name]["epsilon_total"] = costs[name]
    return {"version": version("smartnoise-sql"), "load_s": load, "results": results}


def worker_opendp(data: Path, reps: int, epsilon: float) -> dict[str, Any]:
    """OpenDP's polars Context API (run in OpenDP's own environment)."""
    import warnings
    from importlib.metadata import version

    import opendp.prelude as dp
    import polars as pl

    warnings.filterwarnings("ignore", category=FutureWarning)  # dp.len()'s future default
    dp.enable_features("contrib")
    t0 = time.perf_counter()
    frame = pl.read_parquet(data).lazy()
    rows = frame.select(pl.len()).collect().item()
    load = time.perf_counter() - t0
    lo, hi = INCOME_BOUNDS
    margin = dp.polars.Margin(
        by=["region"], invariant="keys", max_length=rows, max_groups=len(REGIONS)
    )

    def context(queries: int) -> Any:
        return dp.Context.compositor(
            data=frame,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=epsilon),
            split_evenly_over=queries,
            margins=[margin],
        )

    def release(ctx: Any, expr: Any) -> dict[str, float]:
        out = ctx.query().group_by("region").agg(expr.alias("value")).release().collect()
        return {str(k): float(v) for k, v in zip(out["region"], out["value"], strict=True)}

    def income() -> Any:
        return pl.col("income").fill_null(0.0).dp.sum((lo, hi))

    def ask(name: str) -> dict[str, float]:
        if name == "COUNT":
            return release(context(1), dp.len())
        if name == "SUM":
            return release(context(1), income())
        ctx = context(2)
        sums, counts = release(ctx, income()), release(ctx, dp.len())
        return {
            k: min(max(sums[k] / counts[k], lo), hi) if counts[k] >= 1 else (lo + hi) / 2
            for k in sums
        }

    ask("COUNT")
    results = _timed_reps(reps, lambda i, name: ask(name))
    return {"version": version("opendp"), "load_s": load, "results": results}


def run_worker(python: str, tool: str, data: Path, reps: int) -> dict[str, Any]:
    """Run ``--worker tool`` under another interpreter; its JSON, or ``{"error": ...}``."""
    command = [python, str(Path(__file__).resolve()), "--worker", tool]
    command += ["--data", str(data), "--reps", str(reps)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"failed: {exc}"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"failed (exit {done.returncode}): {tail}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def exact_answers(data: Path) -> dict[str, dict[str, float]]:
    """The exact COUNT, SUM and AVG of income per region (pandas, unclamped data)."""
    import pandas as pd

    frame = pd.read_parquet(data)
    grouped = frame.groupby("region")["income"]
    return {
        "COUNT": {k: float(v) for k, v in grouped.size().items()},
        "SUM": {k: float(v) for k, v in grouped.sum().items()},
        "AVG": {k: float(v) for k, v in grouped.mean().items()},
    }


def _errors(answers: list[dict[str, float]], exact: dict[str, float]) -> np.ndarray:
    return np.array([abs(a[k] - exact[k]) for a in answers for k in REGIONS])


def comparison_table(rows: int, reps: int, smartnoise: str | None, opendp: str | None) -> None:
    """Print the comparison table (module docstring) and the speed-up over SmartNoise."""
    print()
    print(
        f"epsilon 1 per query, {rows:,} rows, GROUP BY region ({len(REGIONS)} groups), "
        f"{reps} repetitions; MAE over groups x repetitions"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        make_data(folder, rows, with_id=True)
        print(f"data written (Parquet + CSV) in {time.perf_counter() - t0:.1f} s")
        exact = exact_answers(folder / "big.parquet")
        tools: list[tuple[str, dict[str, Any]]] = [
            ("sdckit HTTP (duckdb)", sdckit_http(folder, reps)),
            ("sdckit in-process", sdckit_inprocess(folder, reps)),
        ]
        for label, python, tool, data, missing in (
            ("smartnoise-sql", smartnoise, "smartnoise", "big.csv", HELP_SMARTNOISE),
            ("smartnoise-sql", smartnoise, "smartnoise-rows", "big.csv", HELP_SMARTNOISE),
            ("opendp", opendp, "opendp", "big.parquet", HELP_OPENDP),
        ):
            if python is None:
                tools.append((label, {"error": missing}))
                continue
            found = run_worker(python, tool, folder / data, reps)
            if "version" in found:
                label = f"{label} {found['version']}"
            if tool == "smartnoise-rows":
                label += " row_privacy"
            tools.append((label, found))
    header = f"{'tool':<34}{'query':<7}{'load s':>8}{'ms/query':>10}{'p50 ms':>9}"
    print(header + f"{'MAE':>13}{'se':>11}{'MAE/exact':>11}")
    summary: dict[str, dict[str, tuple[float, float, float]]] = {}
    for label, found in tools:
        if "error" in found:
            print(f"{label:<34}{'all':<7}{found['error']}")
            continue
        for name, cell in found["results"].items():
            ms = np.array(cell["seconds"]) * 1000
            errors = _errors(cell["answers"], exact[name])
            mae, se = float(errors.mean()), float(errors.std(ddof=1) / math.sqrt(errors.size))
            relative = mae / float(np.mean([abs(exact[name][k]) for k in REGIONS]))
            summary.setdefault(label, {})[name] = (float(ms.mean()), mae, se)
            print(
                f"{label:<34}{name:<7}{found['load_s']:>8.1f}{ms.mean():>10.1f}"
                f"{np.median(ms):>9.1f}{mae:>13.4g}{se:>11.3g}{relative:>11.2e}"
            )
    _verdict(summary)


def _verdict(summary: dict[str, dict[str, tuple[float, float, float]]]) -> None:
    """Speed-up and error ratio of sdckit over HTTP against SmartNoise SQL (target: >= 5x
    faster at an equal or lower error, equal meaning within two standard errors)."""
    ours = summary.get("sdckit HTTP (duckdb)", {})
    theirs = {k: v for k, v in summary.items() if k.startswith("smartnoise-sql")}
    if not theirs:
        print("target (sdckit >= 5x faster than SmartNoise SQL at <= error): SmartNoise not run")
    for label, cells in theirs.items():
        variant = "row_privacy" if label.endswith("row_privacy") else "max_ids 1"
        for name, (ms, mae, se) in ours.items():
            sn_ms, sn_mae, sn_se = cells[name]
            speed = sn_ms / ms
            not_worse = mae <= sn_mae + 2 * math.hypot(se, sn_se)
            met = "met" if speed >= 5 and not_worse else "NOT met"
            print(
                f"{name:<6} sdckit HTTP {speed:.1f}x faster than SmartNoise SQL ({variant}), "
                f"MAE ratio {mae / sn_mae:.2f} (sdckit/SmartNoise): target {met}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200, help="0 skips the latency table")
    parser.add_argument("--reps", type=int, default=20, help="repetitions per comparison cell")
    parser.add_argument("--smartnoise-python", help="python of a venv with smartnoise-sql")
    parser.add_argument("--opendp-python", help="python of a venv with opendp[polars]")
    workers = ["smartnoise", "smartnoise-rows", "opendp"]
    parser.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        if args.worker == "opendp":
            found = worker_opendp(args.data, args.reps, 1.0)
        else:
            found = worker_smartnoise(args.data, args.reps, 1.0, args.worker == "smartnoise-rows")
        print(json.dumps(found))
        return
    if args.queries > 0:
        latency_table(args.rows, args.queries)
    comparison_table(args.rows, args.reps, args.smartnoise_python, args.opendp_python)


if __name__ == "__main__":
    main()
