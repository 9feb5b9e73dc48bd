"""Benchmark of ``sdckit serve``: DP COUNT / SUM / AVG with GROUP BY one key over a
1,000,000-row synthetic table, through the HTTP API, on DuckDB and PostgreSQL.

Run: ``python benchmarks/bench_server.py [--rows 1000000] [--queries 200]``. Every query is
distinct (a different WHERE), so the ledger's answer cache is never hit. PostgreSQL runs on a
throwaway cluster (initdb as in the tests) and is skipped when no initdb is found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from server_support import (  # noqa: E402
    KEYS,
    find_initdb,
    free_port,
    postgres_cluster,
    server_process,
    write_config,
)

QUERIES = {
    "COUNT": "SELECT region, COUNT(*) FROM big WHERE age > {i} GROUP BY region",
    "SUM": "SELECT region, SUM(income) FROM big WHERE age > {i} GROUP BY region",
    "AVG": "SELECT region, AVG(income) FROM big WHERE age > {i} GROUP BY region",
}


def make_data(folder: Path, rows: int) -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "region": rng.choice(np.array(["north", "south", "east", "west"]), rows),
            "age": rng.integers(18, 90, rows),
            "income": rng.gamma(2.0, 20000.0, rows).round(2),
        }
    )
    frame.to_parquet(folder / "big.parquet", index=False)


def run(database: dict, folder: Path, n: int) -> list[tuple[str, float, float, float]]:
    datasets = {
        "big": {
            "load": {"path": "big.parquet"},
            "mode": "dp",
            "budget": {"epsilon": 1000},
            "bounds": {"income": [0, 500000], "age": [0, 120]},
            "public_keys": ["region"],
        }
    }
    config = write_config(folder, database, datasets)
    port = free_port()
    out = []
    with server_process(config, port), httpx.Client(timeout=120) as client:
        headers = {"Authorization": f"Bearer {KEYS['ALICE_KEY']}"}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print(f"{args.rows:,} rows, {args.queries} distinct queries per aggregate, GROUP BY region")
    print(f"{'backend':<11}{'query':<7}{'p50 ms':>9}{'p95 ms':>9}{'queries/s':>11}")
    backends: list[tuple[str, object]] = [("duckdb", None)]
    if find_initdb() is not None:
        backends.append(("postgresql", None))
    for backend, _ in backends:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            make_data(folder, args.rows)
            if backend == "duckdb":
                results = run({"duckdb": "bench.duckdb"}, folder, args.queries)
            else:
                with postgres_cluster() as dsn:
                    results = run({"postgresql": dsn}, folder, args.queries)
            for name, p50, p95, qps in results:
                print(f"{backend:<11}{name:<7}{p50:>9.1f}{p95:>9.1f}{qps:>11.1f}")
    if find_initdb() is None:
        print("postgresql: skipped (no initdb found)")


if __name__ == "__main__":
    main()
