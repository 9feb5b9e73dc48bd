"""Benchmark of restriction mode's shared audit: the cost per query of keeping the audit in the
database (lock the dataset's audit row, catch up, check, append the batch, commit), on DuckDB
and PostgreSQL, and what one query adds to the database.

Run: ``python benchmarks/bench_server_audit.py [--rows 30000] [--queries 200]``.

Each query is ``SELECT SUM(income) FROM big WHERE region = R AND age BETWEEN a AND b`` with a
distinct window (in process, ``QueryService.query``, no HTTP); the table has ``--rows`` records
(4 regions, ages 18..89). Reported per backend: the median and 90th percentile of the time per
answered query, how many were refused, the mean size of a stored batch (one compressed bitmap
of the records per query set) and the size of the whole auditor snapshot
(``QuerySetAuditor.state()``, what a design that rewrites the state on every query would write
each time). PostgreSQL only (skipped without initdb): the time a second server process (a
second ``QueryService`` on the same database) takes to answer its first query after the first
one answered them all, i.e. to replay every batch.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def _support() -> Any:
    """The server test helpers (``tests/server_support.py``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import server_support

    return server_support


def make_data(folder: Path, rows: int) -> None:
    """``big.csv``: region, age, income."""
    import pandas as pd

    rng = np.random.default_rng(1)
    pd.DataFrame(
        {
            "region": rng.choice(np.array(["north", "south", "east", "west"]), rows),
            "age": rng.integers(18, 90, rows),
            "income": rng.integers(0, 200_000, rows),
        }
    ).to_csv(folder / "big.csv", index=False)


def service(folder: Path, database: dict) -> Any:
    """A QueryService on ``database`` serving ``big`` in restriction mode (k = 5)."""
    support = _support()
    from sdckit.server.config import load_server_config
    from sdckit.server.service import QueryService

    os.environ.update(support.KEYS)
    datasets = {
        "big": {
            "load": {"path": "big.csv", "delimiter": ","},
            "mode": "restriction",
            "min_query_set": 5,
            "public_keys": ["region"],
        }
    }
    config = support.write_config(folder, database, datasets)
    return QueryService(load_server_config(config))


def queries(n: int) -> list[str]:
    """``n`` distinct windows over region and age."""
    out = []
    for i in range(n):
        region = ["north", "south", "east", "west"][i % 4]
        lo = 18 + (i * 7) % 60
        out.append(
            f"SELECT SUM(income) FROM big WHERE region = '{region}' "
            f"AND age BETWEEN {lo} AND {lo + 3 + i % 11}"
        )
    return out


def run(svc: Any, sqls: list[str]) -> tuple[list[float], int]:
    """Seconds per answered query, and the number refused."""
    from sdckit.server.service import Refusal

    times, refused = [], 0
    for sql in sqls:
        t0 = time.perf_counter()
        try:
            svc.query("alice", "big", sql, None)
            times.append(time.perf_counter() - t0)
        except Refusal:
            refused += 1
    return times, refused


def report(name: str, svc: Any, times: list[float], refused: int) -> None:
    sizes = [len(r[0]) for r in svc.backend.execute("SELECT query_sets FROM _sdc_audit_sets")]
    copy = svc.datasets["big"].auditor
    snapshot = len(json.dumps(copy.auditor.state()))
    p90 = sorted(times)[int(0.9 * (len(times) - 1))]
    print(
        f"{name:<10} answered {len(times):>4}  refused {refused:>3}  "
        f"median {1000 * statistics.median(times):7.2f} ms  p90 {1000 * p90:7.2f} ms  "
        f"stored batch {statistics.mean(sizes):8.0f} B (of {len(sizes)})  "
        f"snapshot {snapshot:,} B  atoms {copy.auditor.n_atoms}  rank {copy.auditor.rank}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    sqls = queries(args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_data(folder, args.rows)
        svc = service(folder, {"duckdb": "audit.duckdb"})
        try:
            report("duckdb", svc, *run(svc, sqls))
        finally:
            svc.close()
        support = _support()
        if support.find_initdb() is None:
            print("postgresql: skipped (no initdb)")
            return
        with support.postgres_cluster() as dsn:
            first = service(folder, {"postgresql": dsn})
            second = service(folder, {"postgresql": dsn})
            try:
                report("postgresql", first, *run(first, sqls))
                t0 = time.perf_counter()
                run(second, ["SELECT SUM(income) FROM big WHERE region = 'north'"])
                print(
                    f"postgresql second server: first query after {args.queries} answered "
                    f"elsewhere (replays them) {1000 * (time.perf_counter() - t0):.1f} ms"
                )
            finally:
                first.close()
                second.close()


if __name__ == "__main__":
    main()
