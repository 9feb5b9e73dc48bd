"""Benchmark of synthetic data on Adult: sdckit's synthesizers against python-synthpop's CART,
SDV's Gaussian copula, MST on mbi (private-pgm) and smartnoise-synth's MST and AIM; time, and
utility measured the same way for every tool.

Run::

    python benchmarks/bench_synthesis.py [--data /work/shared/data/arx/adult.csv] [--reps 3]
        [--synthpop-python /tmp/synthpop-venv/bin/python] [--sdv-python /tmp/sdv-venv/bin/python]
        [--mbi-python /tmp/mbi-venv/bin/python]
        [--smartnoise-python /tmp/smartnoise-venv/bin/python] [--no-aim] [--aim-reps N]
        [--no-peers] [--peer-timeout 3600]

The data: the ARX Adult extract, ``;``-separated, 30,162 records, 9 columns (age an integer,
the other 8 categorical). Every synthesizer gets the whole file and samples as many records as
it has, once per seed ``0 .. reps-1`` (``--reps``, default 3).

**What each row measures.** ``seconds``: the median over the seeds of the wall time of fit +
sample of the 30,162 records (reading the input and writing the output are not timed, except
in the ``sdckit CLI`` rows); ``CPU s``: the median CPU time of the same (all threads of the
process, children included for the CLI rows; the benchmark machine may be shared, and under
load wall time grows while CPU time does not). Nothing is warmed up: the first seed of each
row pays its process's one-time costs (imports are outside the timing, but e.g. jax's JIT
compilation is inside), the median over three is the warm figure. Utility is the mean over the
seeds of sdckit's own measures of the synthetic file against the original, the same code for
every tool's output: ``pMSE`` and ``S_pMSE`` of :func:`sdckit.utility.propensity.propensity_mse`
(logistic regression on main effects, age z-scored, the rest one-hot; S_pMSE about 1 means "as
alike as two samples of one distribution", see :class:`~sdckit.utility.propensity.PropensityMSE`
for its expectation, which differs from the published one by the factor ``1 - c``) and the mean
total variation distance of all 1-way and 2-way marginals of
:func:`sdckit.utility.marginals.marginal_distances` (age in 10 quantile bins).

Rows:

* ``sdckit`` (in this process): ``sdckit.synthesize(data, method=M, seed=s)`` with M = ``cart``,
  ``parametric``, ``marginal_dp`` (``epsilon=1, delta=1e-6``), ``hybrid``, with ``holdout=0,
  evaluate=False, n=30162`` (fit on all the records, no evaluation, as many records as the
  original, as the peers; ``marginal_dp`` would otherwise sample its noisy count); timed
  around the call (its ``.data`` is the synthetic file). ``marginal_dp`` reads no domain from
  the data: it is declared from the extract's published hierarchy files next to ``--data``
  (``adult_hierarchy_<column>.csv``: each column's leaves; a column whose leaves are all whole
  numbers, age, as ``bounds`` [smallest, largest leaf]), see :func:`declared_domain`; its noise
  comes from the OS CSPRNG (the seed fixes the sampling). A fifth row, ``marginal_dp, peers'
  ρ``, gives ``marginal_dp`` the zCDP budget the DP peers get from the same epsilon and delta
  (``rho=0.0244``, below), so that the comparison with them is at equal noise.
* ``sdckit CLI``: the whole command ``sdckit synthesize --config JOB`` in a fresh process
  (start-up, reading the CSV, synthesis, writing the CSV, report and JSON) for ``cart`` and
  ``marginal_dp``; the job file is written to a temporary folder (input the ``--data`` file,
  ``delimiter: ";"``, ``method``, ``seed``, and for ``marginal_dp`` ``epsilon: 1``,
  ``delta: 1e-6`` and the declared domain in ``options``; output ``synthetic.csv``,
  ``synth.html``, ``synth.json``), the rest at the command's defaults (so with its holdout
  share and its evaluation, which the in-process rows leave out: the table notes a record
  count other than 30,162).
* ``python-synthpop`` (``--synthpop-python``): ``synthpop.CARTMethod`` with its defaults
  (``minibucket=5``). The PyPI package named ``synthpop`` is an unrelated population
  synthesizer; the Python port of R's synthpop is ``python-synthpop`` (Algorithm Audit). Its
  ``DataProcessor`` fails on columns of 10 or more categories, so the worker label-encodes the
  categorical columns itself (as that processor does for the smaller ones). Unlike R's
  synthpop, this CART does not synthesize sequentially: each column is drawn from the leaf of
  a tree that predicts it from all the other columns of a resampled *original* record.
* ``SDV`` (``--sdv-python``): ``GaussianCopulaSynthesizer`` with its defaults, metadata
  declared (age numerical, the rest categorical).
* ``mbi`` (``--mbi-python``): MST (McKenna, Miklau & Sheldon 2021) written in
  ``_synthesis_peers.py`` on mbi's ``Dataset``/``LinearMeasurement``/``MirrorDescent`` (mbi 2
  ships no MST), epsilon 1, delta 1e-6, rho by the conversion of Canonne, Kamath & Steinke
  2020 (as MST's reference code and smartnoise-synth; rho = 0.0244, while sdckit's
  ``rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))**2`` gives 0.0175 for the same
  epsilon and delta: the peers' noise is smaller at the same nominal budget).
* ``smartnoise-synth`` (``--smartnoise-python``): ``Synthesizer.create("mst"|"aim",
  epsilon=1.0, delta=1e-6)``, defaults otherwise, 8 columns categorical and age ordinal
  (``preprocessor_eps=0``); its MST runs on mbi 1.1 (1000 and 5000 mirror-descent iterations,
  the exact record count given to the estimator). AIM is the slowest row by far (about 20
  minutes a seed on 2 cores): ``--aim-reps N`` runs it for seeds ``0 .. N-1`` only (the table
  notes it), ``--no-aim`` skips it.
* ``reference``: a bootstrap resample of the original (no synthesizer): what the measures give
  for a file drawn from the data itself.

Every peer and DP tool takes the domain of each column (its categories; age's minimum and
maximum) from the data, as is usual in such benchmarks; strictly, a DP release needs it public.

The peers run in their own virtual environments, as subprocesses of this script
(``--worker NAME``), each running all the seeds in one process; they write each synthetic file
to a temporary CSV and print JSON (``{"versions", "runs": [{"seed", "seconds", "cpu",
"path"}]}``);
this process evaluates them. A peer's row says "not run" without the option that names its
interpreter (or with ``--no-peers``, which runs sdckit's rows alone), or when its worker fails
(the reason is printed under the table). The environments (Python 3.11)::

    python3.11 -m venv /tmp/synthpop-venv && /tmp/synthpop-venv/bin/pip install python-synthpop
    python3.11 -m venv /tmp/sdv-venv && /tmp/sdv-venv/bin/pip install torch  # CPU-only build
    /tmp/sdv-venv/bin/pip install sdv
    python3.11 -m venv /tmp/mbi-venv && /tmp/mbi-venv/bin/pip install mbi pandas
    python3.11 -m venv /tmp/smartnoise-venv && /tmp/smartnoise-venv/bin/pip install smartnoise-synth

(install torch's CPU-only build before sdv, or sdv brings the CUDA one, several GB;
smartnoise-synth brings CUDA torch through opacus all the same, and pins mbi 1.1.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# numpy, pandas and sdckit are imported inside the functions that need them: the --worker
# modes run in the peers' virtual environments (see _synthesis_peers.py).

DEFAULT_DATA = Path("/work/shared/data/arx/adult.csv")
EPSILON, DELTA = 1.0, 1e-6
DP_LABEL = "1 (δ=1e-6)"
#: sdckit's methods (in process) and their extra parameters.
SDCKIT_METHODS: dict[str, dict[str, Any]] = {
    "cart": {},
    "parametric": {},
    "marginal_dp": {"epsilon": EPSILON, "delta": DELTA},
    "hybrid": {},
}
#: sdckit's methods run through ``sdckit synthesize --config``.
SDCKIT_CLI_METHODS = ("cart", "marginal_dp")
#: (label, method, epsilon column, --option, worker name)
PEERS = [
    ("python-synthpop", "CART", "-", "synthpop_python", "synthpop-cart"),
    ("SDV", "GaussianCopula", "-", "sdv_python", "sdv-gaussiancopula"),
    ("mbi (private-pgm)", "MST", DP_LABEL, "mbi_python", "mbi-mst"),
    ("smartnoise-synth", "MST", DP_LABEL, "smartnoise_python", "smartnoise-mst"),
    ("smartnoise-synth", "AIM", DP_LABEL, "smartnoise_python", "smartnoise-aim"),
]
PEER_PACKAGES = {
    "synthpop_python": "python-synthpop",
    "sdv_python": "sdv",
    "mbi_python": "mbi (and pandas)",
    "smartnoise_python": "smartnoise-synth",
}


def read_original(path: Path) -> Any:
    import pandas as pd

    return pd.read_csv(path, sep=";")


def read_synthetic(path: Path, columns: list[str]) -> Any:
    """A synthetic CSV (``,`` or ``;``, whichever its header uses), in the original's order."""
    import pandas as pd

    with open(path, encoding="utf-8") as f:
        header = f.readline()
    sep = ";" if header.count(";") > header.count(",") else ","
    frame = pd.read_csv(path, sep=sep)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{path.name}: columns {missing} missing from the synthetic file")
    return frame[columns]


def utility(original: Any, synthetic: Any) -> dict[str, float]:
    """sdckit's measures of one synthetic file (the same for every tool)."""
    from sdckit.utility.marginals import marginal_distances
    from sdckit.utility.propensity import propensity_mse

    p = propensity_mse(original, synthetic)
    m = marginal_distances(original, synthetic)
    return {
        "pmse": p.pmse,
        "s_pmse": p.s_pmse,
        "tvd1": m.tvd_1way_mean,
        "tvd2": m.tvd_2way_mean,
        "rows": float(len(synthetic)),
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median seconds and CPU seconds, mean utility over the runs (each ``{"seconds", "cpu",
    utility...}``)."""
    out: dict[str, Any] = {"seconds": statistics.median(r["seconds"] for r in runs)}
    cpus = [r["cpu"] for r in runs if r.get("cpu") is not None]
    out["cpu"] = statistics.median(cpus) if cpus else None
    for key in ("pmse", "s_pmse", "tvd1", "tvd2", "rows"):
        out[key] = statistics.fmean(r[key] for r in runs)
    out["n"] = len(runs)
    return out


# -- sdckit ---------------------------------------------------------------------------------------


def whole_command_ratio(rows: list[tuple[str, str, str, dict[str, Any]]], method: str) -> str:
    """The line comparing ``sdckit synthesize`` (the whole command: start-up, reading,
    fitting, sampling, evaluating, writing) with fitting and sampling alone in this process;
    the issue's target is at most 1.5."""
    found = {(tool, label): r for tool, label, _, r in rows}
    cli, inner = found.get(("sdckit CLI", method), {}), found.get(("sdckit", method), {})
    if "seconds" not in cli or "seconds" not in inner:
        return f"{method}: whole command / fit + sample: n/a"
    ratio = cli["seconds"] / inner["seconds"]
    return (
        f"{method}: whole command {cli['seconds']:.2f} s / fit + sample {inner['seconds']:.2f} s"
        f" = {ratio:.2f} (target <= 1.5 for marginal_dp)"
    )


def sdckit_available() -> str | None:
    """None when ``sdckit.synthesize`` exists, else why not."""
    try:
        import sdckit
    except ImportError as exc:
        return f"not available (sdckit not importable: {exc})"
    if not callable(getattr(sdckit, "synthesize", None)):
        return "not available (sdckit.synthesize does not exist yet)"
    return None


def declared_domain(data: Path, columns: list[str]) -> dict[str, Any]:
    """marginal_dp's public domain of the Adult extract, from the hierarchy files next to
    ``data`` (module docstring): ``{"domain": {...}, "bounds": {...}}``."""
    import pandas as pd

    domain: dict[str, list[str]] = {}
    bounds: dict[str, list[int]] = {}
    for c in columns:
        path = data.parent / f"adult_hierarchy_{c}.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: marginal_dp needs each column's declared domain")
        leaves = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)[0]
        numbers = pd.to_numeric(leaves, errors="coerce")
        if numbers.notna().all() and (numbers % 1 == 0).all():
            bounds[c] = [int(numbers.min()), int(numbers.max())]
        else:
            domain[c] = list(leaves)
    return {"domain": domain, "bounds": bounds}


def sdckit_rows(
    original: Any, seeds: list[int], declared: dict[str, Any]
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``sdckit.synthesize`` in this process, each method and seed (``declared``:
    marginal_dp's domain, :func:`declared_domain`)."""
    import inspect

    import sdckit
    from _synthesis_peers import cdp_rho

    # fit on all the records, sample as many, no evaluation inside the timing (as the peers)
    accepted = inspect.signature(sdckit.synthesize).parameters
    wanted = (("holdout", 0), ("evaluate", False), ("n", len(original)))
    plain = {k: v for k, v in wanted if k in accepted}
    rho = cdp_rho(EPSILON, DELTA)
    cases = [(m, m, p, DP_LABEL if "epsilon" in p else "-") for m, p in SDCKIT_METHODS.items()]
    # the peers' budget: the same rho as MST on mbi and smartnoise-synth
    cases.insert(3, ("marginal_dp", "marginal_dp, peers' ρ", {"rho": rho}, f"ρ={rho:.4f}"))
    rows = []
    for method, label, params, eps in cases:
        if method == "marginal_dp":
            params = {**params, **declared}
        runs = []
        try:
            for seed in seeds:
                t0, c0 = time.perf_counter(), time.process_time()
                result = sdckit.synthesize(original, method, seed=seed, **plain, **params)
                seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
                run = utility(original, result.data[list(original.columns)])
                runs.append({"seconds": seconds, "cpu": cpu, **run})
        except Exception as exc:  # noqa: BLE001 - a failing method is a row, not a crash
            rows.append(("sdckit", label, eps, {"error": f"failed: {type(exc).__name__}: {exc}"}))
            continue
        rows.append(("sdckit", label, eps, summarize(runs)))
    return rows


def _sdckit_command() -> list[str]:
    """``sdckit`` of this interpreter's environment (``python -m sdckit.cli`` without it)."""
    script = Path(sys.executable).parent / "sdckit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sdckit.cli"]


def write_job(folder: Path, data: Path, method: str, seed: int, declared: dict[str, Any]) -> Path:
    """The job file of one CLI run (module docstring; ``declared``: marginal_dp's domain)."""
    import yaml

    job: dict[str, Any] = {
        "input": {"path": str(data.resolve()), "delimiter": ";"},
        "method": method,
        "seed": seed,
    }
    job.update({k: v for k, v in SDCKIT_METHODS[method].items()})
    if method == "marginal_dp":
        job["options"] = declared
    job["output"] = {
        "path": str(folder / "synthetic.csv"),
        "report": str(folder / "synth.html"),
        "json": str(folder / "synth.json"),
    }
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    return path


def sdckit_cli_rows(
    original: Any, data: Path, seeds: list[int]
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``sdckit synthesize --config JOB``, a fresh process per seed, timed whole."""
    declared = declared_domain(data, list(original.columns))
    rows = []
    for method in SDCKIT_CLI_METHODS:
        eps = DP_LABEL if "epsilon" in SDCKIT_METHODS[method] else "-"
        runs, error = [], None
        for seed in seeds:
            with tempfile.TemporaryDirectory(prefix="bench-synth-cli-") as tmp:
                folder = Path(tmp)
                job = write_job(folder, data, method, seed, declared)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                done = subprocess.run(
                    [*_sdckit_command(), "synthesize", "--config", str(job)],
                    capture_output=True,
                    text=True,
                    cwd=folder,
                )
                seconds = time.perf_counter() - t0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                if done.returncode != 0:
                    lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
                    error = f"failed (exit {done.returncode}): {lines[-1]}"
                    if "No such command" in done.stderr:
                        error = "not available (no `sdckit synthesize` command yet)"
                    break
                synthetic = read_synthetic(folder / "synthetic.csv", list(original.columns))
                runs.append({"seconds": seconds, "cpu": cpu, **utility(original, synthetic)})
        found = {"error": error} if error else summarize(runs)
        rows.append(("sdckit CLI", method, eps, found))
    return rows


# -- peers ----------------------------------------------------------------------------------------


def run_worker(
    python: str, worker: str, data: Path, seeds: list[int], out: Path, timeout: float
) -> dict[str, Any]:
    """Run ``--worker`` under another interpreter; its JSON, or ``{"error": ...}``."""
    command = [python, str(Path(__file__).resolve()), "--worker", worker, "--data", str(data)]
    command += ["--seeds", ",".join(map(str, seeds)), "--out", str(out)]
    env = {**os.environ, "JAX_ENABLE_COMPILATION_CACHE": "false", "PYTHONWARNINGS": "ignore"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"failed: no result within --peer-timeout {timeout:.0f} s"}
    except OSError as exc:
        return {"error": f"failed: {exc}"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"failed (exit {done.returncode}): {tail}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def peer_rows(
    args: argparse.Namespace, original: Any, seeds: list[int]
) -> tuple[list[tuple[str, str, str, dict[str, Any]]], dict[str, dict[str, str]]]:
    """The peers' rows and the versions each worker reported."""
    rows, reported = [], {}
    columns = list(original.columns)
    with tempfile.TemporaryDirectory(prefix="bench-synth-peers-") as tmp:
        for label, method, eps, option, worker in PEERS:
            python = getattr(args, option)
            if args.no_peers:
                rows.append((label, method, eps, {"error": "not run (--no-peers)"}))
                continue
            if python is None:
                flag = "--" + option.replace("_", "-")
                why = f"not run (give {flag} PATH, a venv with {PEER_PACKAGES[option]})"
                rows.append((label, method, eps, {"error": why}))
                continue
            if worker == "smartnoise-aim" and args.no_aim:
                rows.append((label, method, eps, {"error": "not run (--no-aim)"}))
                continue
            out = Path(tmp) / worker
            out.mkdir()
            print(f"running {label} {method} ...", file=sys.stderr, flush=True)
            own = seeds
            if worker == "smartnoise-aim" and args.aim_reps is not None:
                own = list(range(args.aim_reps))
            found = run_worker(python, worker, args.data, own, out, args.peer_timeout)
            if "error" in found:
                rows.append((label, method, eps, found))
                continue
            reported[f"{label} {method}"] = found["versions"]
            runs = []
            try:
                for run in found["runs"]:
                    synthetic = read_synthetic(Path(run["path"]), columns)
                    runs.append({"seconds": run["seconds"], "cpu": run.get("cpu"),
                                 **utility(original, synthetic)})  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - an unreadable output is a row's failure
                rows.append((label, method, eps, {"error": f"output not evaluated: {exc}"}))
                continue
            rows.append((label, method, eps, summarize(runs)))
    return rows, reported


def reference_row(original: Any, seeds: list[int]) -> tuple[str, str, str, dict[str, Any]]:
    """A bootstrap resample of the original per seed: the measures of a file drawn from the
    data itself (no time)."""
    runs = []
    for seed in seeds:
        resample = original.sample(len(original), replace=True, random_state=seed)
        runs.append({"seconds": float("nan"), "cpu": None, **utility(original, resample)})
    return ("reference", "bootstrap of the original", "-", summarize(runs))


# -- the table -------------------------------------------------------------------------------------


def machine() -> str:
    """Cores, CPU model, load and Python of this machine."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"{os.cpu_count()} cores, {model}; load average {load} at the start; "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def _fmt(value: float | None, spec: str) -> str:
    if value is None or value != value:  # None or NaN
        return "-"
    return format(value, spec)


def print_table(
    rows: list[tuple[str, str, str, dict[str, Any]]], n_records: int, reps: int
) -> None:
    print(
        "| tool | method | epsilon | seconds (median) | CPU s (median) | pMSE | S_pMSE "
        "| TVD 1-way | TVD 2-way |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    notes = []
    for tool, method, eps, found in rows:
        if "error" in found:
            status = (
                found["error"].split(" (", 1)[0] if found["error"].startswith("not") else "failed"
            )
            print(f"| {tool} | {method} | {eps} | {status} | | | | | |")
            notes.append(f"{tool} {method}: {found['error']}")
            continue
        if found["n"] != reps:
            notes.append(f"{tool} {method}: {found['n']} seed(s), not {reps}")
        if abs(found["rows"] - n_records) > 0.5:
            notes.append(f"{tool} {method}: {found['rows']:.0f} synthetic records on average")
        print(
            f"| {tool} | {method} | {eps} | {_fmt(found['seconds'], '.2f')} "
            f"| {_fmt(found['cpu'], '.2f')} | {found['pmse']:.5f} | {found['s_pmse']:.1f} "
            f"| {found['tvd1']:.4f} | {found['tvd2']:.4f} |"
        )
    for note in notes:
        print(f"- {note}")


def sdckit_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("sdckit", "numpy", "pandas", "scikit-learn"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Adult CSV (;)")
    parser.add_argument("--reps", type=int, default=3, help="seeds 0..reps-1 per row")
    parser.add_argument("--synthpop-python", help="python of a venv with python-synthpop")
    parser.add_argument("--sdv-python", help="python of a venv with sdv")
    parser.add_argument("--mbi-python", help="python of a venv with mbi and pandas")
    parser.add_argument("--smartnoise-python", help="python of a venv with smartnoise-synth")
    parser.add_argument("--no-aim", action="store_true", help="skip smartnoise-synth's AIM")
    parser.add_argument("--aim-reps", type=int, help="seeds of AIM (default: --reps)")
    parser.add_argument("--no-peers", action="store_true", help="sdckit's rows alone")
    parser.add_argument(
        "--peer-timeout", type=float, default=3600.0, help="seconds per peer worker (all seeds)"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        from _synthesis_peers import WORKERS

        seeds = [int(s) for s in args.seeds.split(",")]
        print(json.dumps(WORKERS[args.worker](args.data, seeds, args.out)))
        return
    if args.reps < 1 or (args.aim_reps is not None and args.aim_reps < 1):
        parser.error("--reps and --aim-reps must be at least 1")

    seeds = list(range(args.reps))
    started = machine()
    original = read_original(args.data)
    rows: list[tuple[str, str, str, dict[str, Any]]] = []
    missing = sdckit_available()
    if missing is None:
        print("running sdckit ...", file=sys.stderr, flush=True)
        rows += sdckit_rows(original, seeds, declared_domain(args.data, list(original.columns)))
        rows += sdckit_cli_rows(original, args.data, seeds)
    else:
        rows += [("sdckit", m, "-", {"error": missing}) for m in SDCKIT_METHODS]
        rows += [("sdckit CLI", m, "-", {"error": missing}) for m in SDCKIT_CLI_METHODS]
    found, reported = peer_rows(args, original, seeds)
    rows += found
    rows.append(reference_row(original, seeds))

    print(
        f"Adult ({args.data}): {len(original):,} records x {original.shape[1]} columns; "
        f"fit + sample of {len(original):,} records, seeds {seeds[0]}..{seeds[-1]}; "
        "utility: mean over the seeds"
    )
    print()
    print_table(rows, len(original), len(seeds))
    print()
    for method in SDCKIT_CLI_METHODS:
        print(whole_command_ratio(rows, method))
    print(f"machine: {started}")
    versions = ", ".join(f"{k} {v}" for k, v in sdckit_versions().items())
    print(f"- sdckit side: {versions}")
    for label, packages in reported.items():
        print(f"- {label}: " + ", ".join(f"{k} {v}" for k, v in packages.items()))


if __name__ == "__main__":
    main()
