"""Benchmark of the Spark engine: ``analyze`` and ``anonymize`` (k=5, 5%) on 10^7 and more rows.

Run ``python benchmarks/bench_spark.py`` (needs the spark extra and Java 17). Two data sets,
both generated on Spark, never held in the driver's memory, written once as Parquet under
``--workdir`` and reused:

* ``--data adult`` (default): ``spark.range(n)`` picks a uniformly random Adult record for
  every row (``rand(seed=0)``), so the classes and hierarchies are Adult's (ARX's hierarchies,
  8 quasi-identifiers, occupation sensitive); 10^7 and 10^8 rows, local[1] and local[2].
* ``--data nearunique``: 8 quasi-identifiers with realistic cardinalities -- age, sex, 5-digit
  ZIP code, birth month and day, education, occupation, marital status -- on which nearly
  every record is unique (:mod:`_nearunique`; its share of unique records is printed), a
  diagnosis sensitive, hierarchies written beside the data; 10^7 rows, local[2], 2g driver.

Each command runs as a fresh process of this checkout's code (``sdckit analyze --config ...
--engine spark --spark-master local[C] --spark-conf spark.driver.memory=M``, ``sdckit
anonymize ...``: JVM start, reading, counting, the optimal search, writing and the verifying
recount -- what a user waits for), and with the local engine where the data fits this machine
(``--local-max`` rows). Peak memory is sampled from ``/proc`` every 0.2 s over the command's
process tree: the Python driver and the JVM separately. Each row prints the frequency-set
path the JSON reports (``frequency_set: {path, classes}``, ``-`` when it reports none) and
whether the Spark figures equal the local engine's (the whole JSON summary but timings, run
ids and paths). ``--quick``: 10^5 rows on local[2] (a few minutes).
Options: ``--rows 10000000 100000000``, ``--cores 1 2``, ``--repeat 1``, ``--engines``,
``--commands``, ``--driver-memory``. A Spark-only call (``--engines spark``) compares with the
local JSON an earlier ``--engines local`` call left in ``--workdir``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _nearunique as nearunique  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country",
             "workclass", "salary-class"]  # fmt: skip


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


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run_measured(cmd: list[str]) -> tuple[float, float, float, float, str | None]:
    """Run ``cmd`` with this checkout's ``src`` first on PYTHONPATH; return (wall seconds,
    peak Python MB, peak JVM MB, CPU seconds of its process tree -- sampled, so up to 0.2 s
    per process short --, None or the last lines of its error output when it failed)."""
    peak = {"python": 0.0, "java": 0.0}
    cpu: dict[int, float] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
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
                    cpu[p] = max(cpu.get(p, 0.0), _cpu_s(p))
            done.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    done.set()
    thread.join()
    failed = None
    if proc.returncode != 0:
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        failed = f"exit {proc.returncode}: {' | '.join(lines[-2:])[-300:]}"
    return wall, peak["python"], peak["java"], sum(cpu.values()), failed


def _spark(memory: str = "4g") -> Any:
    """A local[2] Spark session for generating the data (this process, not a measured one)."""
    from sdckit.spark.session import spark_session

    return spark_session("local[2]", {"spark.driver.memory": memory})


def generate_adult(rows: int, workdir: Path) -> Path:
    """The Adult-like Parquet table of ``rows`` rows (generated on Spark once, then reused)."""
    target = workdir / f"adult_{rows}.parquet"
    if (target / "_SUCCESS").exists():
        return target
    from pyspark.sql import functions as F

    from sdckit.datasets import load_adult

    spark = _spark()
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


def generate_nearunique(rows: int, workdir: Path) -> tuple[Path, dict[str, Any]]:
    """The near-unique Parquet table of ``rows`` rows (:mod:`_nearunique`, generated on Spark
    once, then reused) and its statistics: distinct QI combinations and the share of records
    unique on all eight QIs (counted on Spark at generation, kept in ``<table>.stats.json``)."""
    target = workdir / f"nearunique_{rows}.parquet"
    stats_path = workdir / f"nearunique_{rows}.stats.json"
    if (target / "_SUCCESS").exists() and stats_path.exists():
        return target, json.loads(stats_path.read_text())
    from pyspark.sql import functions as F

    spark = _spark()
    t0 = time.perf_counter()
    nearunique.generate(spark, rows, target)
    seconds = time.perf_counter() - t0
    classes = spark.read.parquet(str(target)).groupBy(*nearunique.QIS).count()
    row = classes.agg(
        F.count(F.lit(1)).alias("classes"),
        F.sum(F.when(F.col("count") == 1, 1).otherwise(0)).alias("uniques"),
    ).collect()[0]
    spark.stop()
    stats = {"rows": rows, "classes": int(row["classes"]), "uniques": int(row["uniques"] or 0),
             "unique_share": (row["uniques"] or 0) / rows, "generate_seconds": seconds}  # fmt: skip
    stats_path.write_text(json.dumps(stats))
    return target, stats


def job_file(data: Path, workdir: Path, kind: str, tag: str) -> tuple[Path, Path]:
    """The benchmark's job (k=5, 5% suppression, the optimal search, release as Parquet) on
    ``data`` -- Adult's hierarchies or the near-unique data's (written into ``workdir``) --
    and the path of the anonymization's JSON; ``tag`` names the run's outputs."""
    if kind == "adult":
        src = ROOT / "src" / "sdckit" / "datasets" / "data"
        qis = {q: src / f"adult_hierarchy_{q}.csv" for q in ADULT_QIS}
        sensitive = "occupation"
    else:
        qis = nearunique.write_hierarchies(workdir)
        sensitive = nearunique.SENSITIVE
    out_json = workdir / f"anonymize_{tag}.json"
    doc = {
        "input": {"path": str(data)},
        "attributes": {
            **{q: {"role": "quasi_identifying", "hierarchy": str(h)} for q, h in qis.items()},
            sensitive: {"role": "sensitive"},
        },
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression_limit": 0.05,
        "algorithm": "optimal",
        "output": {"path": str(workdir / f"released_{tag}.parquet"), "json": str(out_json)},
    }
    path = workdir / f"job_{tag}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path, out_json


def local_summary(workdir: Path, data: Path, command: str) -> dict[str, Any] | None:
    """The local engine's JSON for ``command`` on ``data`` left in ``workdir`` by an earlier
    call (``--engines local``), when it is newer than the data; else ``None``. Lets the
    local and the Spark runs of one size be measured by separate calls (or side by side)
    and still compared."""
    tag = f"{data.stem}_local"
    path = workdir / (f"analyze_{tag}.json" if command == "analyze" else f"anonymize_{tag}.json")
    if not path.exists() or path.stat().st_mtime < data.stat().st_mtime:
        return None
    return dict(json.loads(path.read_text()))


#: What differs between equal runs on two engines: timings, run ids, paths, the engine itself.
NOT_COMPARED = {"elapsed_seconds", "run_id", "input", "outputs", "engine", "frequency_set",
                "spark", "spark_master", "timings"}  # fmt: skip


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """The JSON paths at which two summaries differ (floats equal to 1e-9 relative, as the
    Spark engine's weighted sums are equal up to the order of floating additions), leaving
    out :data:`NOT_COMPARED`."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k in NOT_COMPARED:
                continue
            if k not in a or k not in b:
                out.append(f"{where}.{k}")
            else:
                out.extend(differences(a[k], b[k], f"{where}.{k}"))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [where or "."]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{where}[{i}]")
        ]
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float))
        return [] if ok and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [where]
    return [] if a == b else [where or "."]


def frequency_set_path(summary: Any) -> str:
    """``path/classes`` of the frequency-set path the summary reports (any ``frequency_set``
    entry with a ``path``, e.g. ``details.frequency_set``), or ``-`` when it reports none."""
    if isinstance(summary, dict):
        fs = summary.get("frequency_set")
        if isinstance(fs, dict) and "path" in fs:
            classes = fs.get("classes")
            return f"{fs['path']}/{classes:,}" if isinstance(classes, int) else str(fs["path"])
        for v in summary.values():
            found = frequency_set_path(v)
            if found != "-":
                return found
    return "-"


def result_text(command: str, summary: dict[str, Any]) -> str:
    """The figures a row prints: classes and sample uniques, or the transformation, the
    suppressed records and the nodes the search checked."""
    if command == "analyze":
        return (f"{summary['equivalence_classes']:,} classes, "
                f"{summary['sample_uniques']:,} uniques")  # fmt: skip
    return (
        ",".join(str(v) for v in summary["transformation"].values())
        + f" supp {summary['suppressed_records']:,} nodes {summary.get('nodes_checked', '-')}"
    )


def main() -> None:
    """Parse the options, generate the data, run every command, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=["adult", "nearunique"], default="adult",
                    help="adult: Adult resampled; nearunique: 8 QIs, near-unique")  # fmt: skip
    ap.add_argument("--rows", type=int, nargs="+",
                    help="row counts (default: adult 10^7 10^8, nearunique 10^7)")  # fmt: skip
    ap.add_argument("--quick", action="store_true",
                    help="10^5 rows, local[2]: a smoke test of a few minutes")  # fmt: skip
    ap.add_argument("--cores", type=int, nargs="+",
                    help="local[C] masters (default 1 2 for adult, 2 for nearunique)")  # fmt: skip
    ap.add_argument("--driver-memory", help="spark.driver.memory (default 6g adult, 2g nearunique)")
    ap.add_argument("--commands", nargs="+", choices=["analyze", "anonymize"],
                    default=["analyze", "anonymize"])  # fmt: skip
    ap.add_argument("--engines", nargs="+", choices=["spark", "local"], default=["spark", "local"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--generate-only", action="store_true", help="write the data and stop")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="more Spark settings for the Spark runs, e.g. "
                    "spark.sdckit.driverClasses=0 to keep the classes on Spark")  # fmt: skip
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/sdckit-spark-bench"))
    ap.add_argument("--local-max", type=int, default=10_000_000,
                    help="largest row count the local engine is also timed on")  # fmt: skip
    args = ap.parse_args()
    near = args.data == "nearunique"
    rows_list = [100_000] if args.quick else args.rows or (
        [10_000_000] if near else [10_000_000, 100_000_000])  # fmt: skip
    cores_list = args.cores or ([2] if near or args.quick else [1, 2])
    memory = args.driver_memory or ("2g" if near else "6g")
    args.workdir.mkdir(parents=True, exist_ok=True)
    sdckit = [str(Path(sys.executable).parent / "sdckit")]
    header = (
        f"{'rows':>12} {'engine':>7} {'cores':>5} {'command':>10} {'wall s':>8} "
        f"{'CPU s':>7} {'python MB':>10} {'JVM MB':>8} {'freq. set':>18} {'= local':>7}  result"
    )
    for rows in rows_list:
        if near:
            data, stats = generate_nearunique(rows, args.workdir)
            print(f"{args.data} {rows:,} rows: {stats['classes']:,} QI combinations, "
                  f"{stats['uniques']:,} records unique on all 8 QIs "
                  f"({stats['unique_share']:.2%})", flush=True)  # fmt: skip
        else:
            data = generate_adult(rows, args.workdir)
        if args.generate_only:
            continue
        print(header)
        print("-" * len(header), flush=True)
        plans = [("spark", c) for c in cores_list if "spark" in args.engines]
        if rows <= args.local_max and "local" in args.engines:
            plans.append(("local", 0))
        # local first, so that each Spark row can say whether its figures equal the local ones
        plans.sort(key=lambda p: p[0] != "local")
        local: dict[str, dict[str, Any]] = {}
        for engine, cores in plans:
            tag = f"{data.stem}_{engine}{cores or ''}"
            job, anon_json = job_file(data, args.workdir, args.data, tag)
            for command in args.commands:
                out_json = (
                    args.workdir / f"analyze_{tag}.json" if command == "analyze" else anon_json
                )
                cmd = [*sdckit, command, "--config", str(job), "--quiet", "--engine", engine]
                if engine == "spark":
                    cmd += ["--spark-master", f"local[{cores}]",
                            "--spark-conf", f"spark.driver.memory={memory}"]  # fmt: skip
                    for setting in args.spark_conf:
                        cmd += ["--spark-conf", setting]
                if command == "analyze":
                    cmd += ["--json", str(out_json)]
                out_json.unlink(missing_ok=True)
                runs = [run_measured(cmd) for _ in range(args.repeat)]
                wall = statistics.median(r[0] for r in runs)
                py = max(r[1] for r in runs)
                jvm = max(r[2] for r in runs)
                cpu = statistics.median(r[3] for r in runs)
                failed = next((r[4] for r in runs if r[4]), None)
                path, same, result = "-", "-", failed or ""
                if failed is None:
                    summary = json.loads(out_json.read_text())
                    path = frequency_set_path(summary)
                    result = result_text(command, summary)
                    if engine == "local":
                        local[command] = summary
                    elif command not in local and "local" not in args.engines:
                        # a local run of the same data and job written by an earlier call
                        earlier = local_summary(args.workdir, data, command)
                        if earlier is not None:
                            local[command] = earlier
                    if engine != "local" and command in local:
                        # what the Spark run skipped (it says why) is not compared
                        skipped = {*summary.get("skipped", {}), "skipped"}
                        if "distinction" in skipped:  # reported together
                            skipped.add("separation")
                        mine = {k: v for k, v in local[command].items() if k not in skipped}
                        theirs = {k: v for k, v in summary.items() if k not in skipped}
                        diff = differences(mine, theirs)
                        same = "yes" if not diff else "NO"
                        if summary.get("skipped"):
                            result += f"; skipped on Spark: {', '.join(summary['skipped'])}"
                        if diff:
                            result += f"; differs at {', '.join(diff[:5])}"
                print(
                    f"{rows:>12,} {engine:>7} {cores or '-':>5} {command:>10} {wall:>8.1f} "
                    f"{cpu:>7.1f} {py:>10.0f} {jvm:>8.0f} {path:>18} {same:>7}  {result}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
