"""Cost of one lattice node evaluated on Spark: the near-unique data's class table grouped by
a node's generalized codes (the shuffle a distributed optimal search pays per node).

Run ``python benchmarks/bench_spark_node.py --rows 1000000 10000000`` after
``bench_spark.py --data nearunique`` has written the data (the same ``--workdir``). For each
row count: the base class table -- one row per distinct combination of the 8 quasi-identifiers:
each QI's code at every level of its hierarchy (:mod:`_nearunique`) and the count -- built
with one group-by, cached, its size as Parquet (bytes per class); then each of :data:`NODES`
evaluated as a k-anonymity check does it: select the node's level columns, group by them
summing the counts (one shuffle of the class table), count the classes and the records in
classes under k. Prints the median wall and JVM CPU seconds per node (CPU seconds hold on a
shared machine), the figures a projection to a cluster scales.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _nearunique as nearunique  # noqa: E402
from bench_spark import _cpu_s, _rss_mb, _tree  # noqa: E402

#: Nodes timed (levels in :data:`_nearunique.QIS` order): the bottom, two in between, the
#: optimum of the 10^5-row data (age in 20-year bands, ZIP code suppressed, the rest one level
#: up; bench_spark.py prints it), the top.
NODES = [
    (0, 0, 0, 0, 0, 0, 0, 0),
    (1, 0, 2, 1, 1, 1, 1, 1),
    (2, 1, 3, 1, 1, 1, 1, 1),
    (3, 0, 5, 1, 1, 1, 1, 1),
    (4, 1, 5, 3, 2, 2, 2, 2),
]


def level_columns(sdf: Any) -> tuple[Any, list[list[str]]]:
    """``sdf`` with each QI's integer code at every level of its hierarchy (``<qi>_<level>``,
    level 0 the leaf) and ``count``; per QI, its level columns."""
    from pyspark.sql import functions as F

    rows = nearunique.hierarchy_rows()
    cols, names = [], []
    for qi in nearunique.QIS:
        table = rows[qi]
        leaves = [r[0] for r in table]
        mine = []
        for level in range(len(table[0])):
            labels = sorted({r[level] for r in table})
            codes = [labels.index(r[level]) for r in table]
            if qi == "zip":  # 30,000 leaves: a prefix is the code divided by a power of 10
                code = (F.col("zip").cast("int") / (10**level)).cast("int")
                code = F.lit(0) if level == 5 else code
            else:
                pos = F.array_position(
                    F.array(*[F.lit(v) for v in leaves]), F.col(qi).cast("string")
                )
                code = F.element_at(F.array(*[F.lit(c) for c in codes]), pos.cast("int"))
            name = f"{qi}_{level}"
            cols.append(code.alias(name))
            mine.append(name)
        names.append(mine)
    return sdf.select(*cols, "count"), names


def jvm_cpu_s() -> float:
    """CPU seconds used so far by this process's JVMs (the Spark driver and executors of a
    local master), from /proc: what a node costs, whatever else runs on the machine."""
    return sum(_cpu_s(p) for p in _tree(os.getpid()) if _rss_mb(p)[0] == "java")


def main() -> None:
    """Build the class table, time the nodes, print the table (and JSON with --json)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/sdckit-spark-bench"))
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from sdckit.spark.session import spark_session

    spark = spark_session(f"local[{args.cores}]", {"spark.driver.memory": args.driver_memory})
    out: list[dict[str, Any]] = []
    for rows in args.rows:
        data = args.workdir / f"nearunique_{rows}.parquet"
        if not (data / "_SUCCESS").exists():
            raise SystemExit(f"{data} missing: run bench_spark.py --data nearunique first")
        t0 = time.perf_counter()
        classes = spark.read.parquet(str(data)).groupBy(*nearunique.QIS).count()
        table, names = level_columns(classes)
        table = table.persist(StorageLevel.MEMORY_AND_DISK)
        c0 = jvm_cpu_s()
        n_classes = table.count()
        build, build_cpu = time.perf_counter() - t0, jvm_cpu_s() - c0
        pq = args.workdir / f"classes_{rows}.parquet"
        base = [n[0] for n in names]
        table.select(*base, "count").write.mode("overwrite").parquet(str(pq))
        size = sum(f.stat().st_size for f in pq.glob("*.parquet"))
        print(
            f"{rows:,} rows: {n_classes:,} classes, class table built in {build:.1f} s "
            f"({build_cpu:.1f} CPU s), {size / n_classes:.1f} B/class as Parquet (8 codes + count)"
        )
        print(f"{'node':>26} {'s/node':>8} {'CPU s':>7} {'classes':>10} {'< k':>10}")
        for node in NODES:
            cols = [names[i][lv] for i, lv in enumerate(node)]
            times, cpus = [], []
            for _ in range(args.repeat):
                c0 = jvm_cpu_s()
                t0 = time.perf_counter()
                g = table.groupBy(*cols).agg(F.sum("count").alias("n"))
                res = g.agg(
                    F.count(F.lit(1)).alias("classes"),
                    F.sum(F.when(F.col("n") < args.k, F.col("n")).otherwise(0)).alias("small"),
                ).collect()[0]
                times.append(time.perf_counter() - t0)
                cpus.append(jvm_cpu_s() - c0)
            sec, cpu = statistics.median(times), statistics.median(cpus)
            print(
                f"{str(node):>26} {sec:>8.2f} {cpu:>7.1f} "
                f"{res['classes']:>10,} {res['small'] or 0:>10,}",
                flush=True,
            )
            out.append(
                {
                    "rows": rows,
                    "classes": n_classes,
                    "bytes_per_class": size / n_classes,
                    "node": node,
                    "seconds": sec,
                    "cpu_seconds": cpu,
                    "node_classes": res["classes"],
                    "under_k": res["small"],
                }
            )
        table.unpersist()
    spark.stop()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
