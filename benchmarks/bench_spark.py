"""Benchmark of the Spark engine: ``analyze`` and ``anonymize`` (k=5, 5%) on 10^7 and 10^8 rows.

Run ``python benchmarks/bench_spark.py`` (needs the spark extra and Java 17). The data is an
Adult-like table generated on Spark, never held in the driver's memory: ``spark.range(n)``
picks a uniformly random Adult record for every row (``rand(seed=0)``), so the classes and
hierarchies are Adult's (ARX's hierarchies, 8 quasi-identifiers, occupation sensitive); it is
written once as Parquet under ``--workdir`` and reused. Each command runs as a fresh process
(``sdckit analyze --config ... --engine spark --spark-master local[C]``, ``sdckit anonymize
--config ...``: JVM start, reading, counting, search, writing and the verifying recount --
what a user waits for), on ``local[1]`` and ``local[2]``, and with the local engine where the
data fits this machine (``--local-max`` rows). Peak memory is sampled from ``/proc`` every
0.2 s over the command's process tree: the Python driver and the JVM separately.
Options: ``--rows 10000000 100000000``, ``--cores 1 2``, ``--repeat 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class"]  # fmt: skip


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _rss_mb(pid: int) -> tuple[str, float]:
    """(command name, resident MB) of one process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            name = fh.read().strip()
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return name, int(line.split()[1]) / 1024
    except OSError:
        pass
    return "", 0.0


def run_measured(cmd: list[str]) -> tuple[float, float, float]:
    """Run ``cmd``; return (wall seconds, peak Python MB, peak JVM MB) of its process tree."""
    peak = {"python": 0.0, "java": 0.0}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for p in _tree(proc.pid):
                name, mb = _rss_mb(p)
                if name == "java":
                    kind = "java"
                elif "python" in name or name == "sdckit":
                    kind = "python"
                else:
                    kind = None
                if kind is not None:
                    peak[kind] = max(peak[kind], mb)
            done.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    done.set()
    thread.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-3000:]}")
    return wall, peak["python"], peak["java"]


def generate(rows: int, workdir: Path) -> Path:
    """The Adult-like Parquet table of ``rows`` rows (generated on Spark once, then reused)."""
    target = workdir / f"adult_{rows}.parquet"
    if (target / "_SUCCESS").exists():
        return target
    from pyspark.sql import functions as F

    from sdckit.datasets import load_adult
    from sdckit.spark.session import spark_session

    spark = spark_session("local[2]", {"spark.driver.memory": "4g"})
    adult = load_adult().data.reset_index(drop=True)
    adult["__i"] = range(len(adult))
    pick = spark.createDataFrame(adult)
    n = len(adult)
    ids = spark.range(rows, numPartitions=max(2, rows // 2_000_000)).select(
        F.floor(F.rand(seed=0) * n).cast("long").alias("__i")
    )
    data = ids.join(F.broadcast(pick), on="__i").drop("__i")
    data.write.mode("overwrite").parquet(str(target))
    spark.stop()
    return target


def job_file(data: Path, workdir: Path, engine: str, cores: int) -> Path:
    """The benchmark's job: Adult's hierarchies, k=5, 5% suppression, release as Parquet."""
    src = ROOT / "src" / "sdckit" / "datasets" / "data"
    doc = {
        "input": {"path": str(data)},
        "engine": engine,
        "spark": {"master": f"local[{cores}]", "conf": {"spark.driver.memory": "6g"}},
        "attributes": {
            **{q: {"role": "quasi_identifying",
                   "hierarchy": str(src / f"adult_hierarchy_{q}.csv")} for q in QIS},
            "occupation": {"role": "sensitive"},
        },  # fmt: skip
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression_limit": 0.05,
        "output": {"path": str(workdir / f"released_{engine}_{cores}.parquet"),
                   "json": str(workdir / f"anonymize_{engine}_{cores}.json")},
    }  # fmt: skip
    path = workdir / f"job_{data.stem}_{engine}_{cores}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 100_000_000])
    ap.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/sdckit-spark-bench"))
    ap.add_argument("--local-max", type=int, default=10_000_000,
                    help="largest row count the local engine is also timed on")  # fmt: skip
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    sdckit = [str(Path(sys.executable).parent / "sdckit")]
    header = (
        f"{'rows':>12} {'engine':>7} {'cores':>5} {'command':>10} {'wall s':>8} "
        f"{'python MB':>10} {'JVM MB':>8}  result"
    )
    print(header)
    print("-" * len(header))
    for rows in args.rows:
        data = generate(rows, args.workdir)
        plans = [("spark", c) for c in args.cores]
        if rows <= args.local_max:
            plans.append(("local", 1))
        for engine, cores in plans:
            job = job_file(data, args.workdir, engine, cores)
            for command in ("analyze", "anonymize"):
                cmd = [*sdckit, command, "--config", str(job), "--quiet"]
                if command == "analyze":
                    cmd += ["--json", str(args.workdir / f"analyze_{engine}_{cores}.json")]
                runs = [run_measured(cmd) for _ in range(args.repeat)]
                wall = statistics.median(r[0] for r in runs)
                py = max(r[1] for r in runs)
                jvm = max(r[2] for r in runs)
                if command == "analyze":
                    s = json.loads((args.workdir / f"analyze_{engine}_{cores}.json").read_text())
                    result = f"{s['equivalence_classes']:,} classes"
                else:
                    s = json.loads((args.workdir / f"anonymize_{engine}_{cores}.json").read_text())
                    result = (
                        ",".join(str(v) for v in s["transformation"].values())
                        + f" supp {s['suppressed_records']:,}"
                    )
                print(
                    f"{rows:>12,} {engine:>7} {cores if engine == 'spark' else '-':>5} "
                    f"{command:>10} {wall:>8.1f} {py:>10.0f} {jvm:>8.0f}  {result}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
