"""What users wait for: each ``sdckit`` command as a fresh process, from start to files written.

Run ``python benchmarks/bench_commands.py`` (``--repeat N``, default 3; ``--case TEXT`` runs
only the cases whose name contains TEXT, and the floor). Each case is run as a new Python
process (``python -m sdckit.cli ...``, as the ``sdckit`` script does), in rounds (every case
once per round, in turn); the table shows the median wall time of the runs and, beside it,
the median over rounds of the case's time minus the floor's in the same round -- sdckit's own
share, steadier than the total on a machine whose speed drifts from minute to minute. The
reference figure is ARX 3.9.2 (whole anonymization) or sdcMicro 5.8.1 measured on the same
machine class (2 cores), and the target is the project's goal for the case.

The package's bytecode is compiled first, as ``pip install`` does. Cases: the floor (a
process that only imports the libraries an ``anonymize`` job needs: pandas, pyarrow,
pydantic, typer, PyYAML, Jinja2; the machine's share of every figure below); ``--help``;
``anonymize`` job files on the bundled Adult data (k=5 at 0% and 5%, distinct 3-diversity and
equal-distance 0.2-closeness of occupation at 5%, all writing CSV + JSON + HTML) and on Cup
(k=5 5%, needs ``../shared/data/arx``); ``mask`` MDAV k=5 on 100,000 x 10 normal columns
(seed 0) with its report; ``analyze`` on 1,000,000 resampled Adult rows x 8 QIs and on
1,000,000 near-unique census-like records x 8 QIs (:func:`_nearunique.generate_local`, seed 0:
SUDA2 and distinction over records nearly all unique) with the default measures;
``synthesize`` ``marginal_dp`` (epsilon 1, delta 1e-6, seed 1, the domain declared from the
bundled hierarchy files, :func:`bench_synthesis.declared_domain`) on the bundled Adult data
with every default output (CSV + HTML + JSON) and the default evaluation, beside "fit + sample
only": a fresh process that does what the command does up to its synthetic copy -- the same
imports, the job file loaded and its input read and typed, the same holdout split, fit and
sample -- and nothing else (no evaluation, no output). The line below the table gives the
ratio of their medians (the goal: whole command <= 1.5 x fit + sample).
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import sdckit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _nearunique as nearunique  # noqa: E402
from bench_synthesis import declared_domain  # noqa: E402
from sdckit.datasets import ADULT_COLUMNS, data_dir, load_adult

SHARED_ARX = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arx"
ADULT_QIS = list(ADULT_COLUMNS)
#: The floor case: import what ``sdckit anonymize`` needs from other packages, then exit.
FLOOR = [
    "-c",
    "import pandas, pyarrow.csv, pydantic.main, pydantic.types, typer, yaml, jinja2",
]
#: The "fit + sample only" case: what ``sdckit synthesize --config JOB`` does up to its
#: synthetic copy, in a fresh process (``{job}``: the job file).
FIT_SAMPLE = """
from pathlib import Path
from sdckit.jobs.config import load_job
from sdckit.jobs.mask import _typed
from sdckit.jobs.synthesize import _JOB_OPTIONS
from sdckit.synthesis.api import _split, make_synthesizer
from sdckit.synthesis.base import as_generator
job = load_job(Path({job!r}))
data = _typed(job.read_input(), job.schema)
split_rng, fit_rng, copy_rng = as_generator(job.spec.seed).spawn(3)
options = {{k: v for k, v in job.algorithm_options.items() if k not in _JOB_OPTIONS}}
synthesizer = make_synthesizer(
    job.spec.method, epsilon=job.spec.epsilon, delta=job.spec.delta, **options
)
training, hold = _split(data, 0.2, split_rng)
synthesizer.fit(training, seed=fit_rng)
synthesizer.sample(synthesizer.default_records(len(data), 0.2), seed=copy_rng)
"""
SYNTH_WHOLE = "synthesize marginal_dp Adult"
SYNTH_FIT = "  fit + sample only"
CUP_QIS = ["ZIP", "AGE", "GENDER", "INCOME", "STATE", "RAMNTALL", "NGIFTALL", "MINRAMNT"]


def _anonymize_job(
    folder: Path, name: str, csv: Path, hierarchies: Path, prefix: str, qis: list[str], body: str
) -> list[str]:
    lines = [f'input: {{path: "{csv}", delimiter: ";"}}', "attributes:"]
    lines += [
        f'  {q}: {{role: quasi_identifying, hierarchy: "{hierarchies}/{prefix}_hierarchy_{q}.csv"}}'
        for q in qis
    ]
    lines.append(body)
    lines.append(
        f'output: {{path: "{folder}/{name}.csv", report: "{folder}/{name}.html", '
        f'json: "{folder}/{name}.json"}}'
    )
    job = folder / f"{name}.yaml"
    job.write_text("\n".join(lines) + "\n")
    return ["anonymize", "--config", str(job), "--quiet"]


def cases(folder: Path) -> list[tuple[str, str, str, list[str]]]:
    """(name, reference figure, target, sdckit arguments)."""
    adult = data_dir() / "adult.csv"
    hier = data_dir()
    qi8 = [q for q in ADULT_QIS if q != "occupation"]
    out: list[tuple[str, str, str, list[str]]] = [
        # the machine's floor for an anonymize job: a process that imports the libraries the
        # command needs (pandas, pyarrow, pydantic, typer, PyYAML, Jinja2) and does nothing
        ("floor: the libraries alone", "-", "-", FLOOR),
        ("sdckit --help", "-", "<= 0.3 s", ["--help"]),
        ("sdckit analyze --help", "-", "<= 0.3 s", ["analyze", "--help"]),
    ]
    k5 = "models: [{k_anonymity: {k: 5}}]\nmetric: {name: loss}"
    out.append(
        (
            "anonymize Adult k=5 0%",
            "ARX 2.1 s",
            "<= 1.0 s",
            _anonymize_job(
                folder, "a0", adult, hier, "adult", ADULT_QIS, k5 + "\nsuppression_limit: 0"
            ),
        )
    )
    out.append(
        (
            "anonymize Adult k=5 5%",
            "ARX 5.8 s",
            "<= 2.9 s",
            _anonymize_job(
                folder, "a5", adult, hier, "adult", ADULT_QIS, k5 + "\nsuppression_limit: 0.05"
            ),
        )
    )
    sens = "  occupation: {role: sensitive}\n"
    out.append(
        (
            "anonymize Adult l=3 5%",
            "ARX 6.8 s",
            "<= 3.4 s",
            _anonymize_job(
                folder,
                "l3",
                adult,
                hier,
                "adult",
                qi8,
                sens + "models: [{l_diversity: {attribute: occupation, l: 3}}]\n"
                "suppression_limit: 0.05",
            ),
        )
    )
    out.append(
        (
            "anonymize Adult t=0.2 5%",
            "ARX 12.4 s",
            "<= 6.2 s",
            _anonymize_job(
                folder,
                "t02",
                adult,
                hier,
                "adult",
                qi8,
                sens + "models: [{t_closeness: {attribute: occupation, t: 0.2}}]\n"
                "suppression_limit: 0.05",
            ),
        )
    )
    if (SHARED_ARX / "cup.csv").exists():
        out.append(
            (
                "anonymize Cup k=5 5%",
                "ARX 16.0 s",
                "<= 8.0 s",
                _anonymize_job(
                    folder,
                    "cup",
                    SHARED_ARX / "cup.csv",
                    SHARED_ARX,
                    "cup",
                    CUP_QIS,
                    k5 + "\nsuppression_limit: 0.05",
                ),
            )
        )
    rng = np.random.default_rng(0)
    cols = [f"x{i}" for i in range(10)]
    pd.DataFrame(rng.normal(size=(100_000, 10)), columns=cols).to_csv(
        folder / "num.csv", index=False
    )
    (folder / "mask.yaml").write_text(
        f'input: {{path: "{folder}/num.csv"}}\n'
        f"methods: [{{microaggregation: {{columns: [{', '.join(cols)}], k: 5, method: mdav}}}}]\n"
        f'output: {{path: "{folder}/masked.csv", report: "{folder}/mask.html", '
        f'json: "{folder}/mask.json"}}\nseed: 1\n'
    )
    out.append(
        (
            "mask MDAV k=5 100,000 x 10",
            "sdcMicro 88 s",
            "<= 8.8 s",
            ["mask", "--config", str(folder / "mask.yaml"), "--quiet"],
        )
    )
    df, _ = load_adult()
    rows = np.random.default_rng(0).integers(0, len(df), 1_000_000)
    df.iloc[rows][qi8].to_csv(folder / "adult1m.csv", sep=";", index=False)
    out.append(
        (
            "analyze 1,000,000 x 8 QIs",
            "-",
            "<= 3 s",
            [
                "analyze",
                str(folder / "adult1m.csv"),
                "--delimiter",
                ";",
                "--qi",
                ",".join(qi8),
                "--json",
                str(folder / "risk.json"),
                "--quiet",
            ],
        )
    )
    near = nearunique.generate_local(1_000_000, seed=0)
    near[nearunique.QIS].to_csv(folder / "nearunique1m.csv", index=False)
    out.append(
        (
            "analyze 1,000,000 near-unique",
            "-",
            "<= 10 s over floor",
            [
                "analyze",
                str(folder / "nearunique1m.csv"),
                "--qi",
                ",".join(nearunique.QIS),
                "--json",
                str(folder / "risk_near.json"),
                "--quiet",
            ],
        )
    )
    out += _synthesize_cases(folder)
    return out


def _synthesize_cases(folder: Path) -> list[tuple[str, str, str, list[str]]]:
    """The synthesize job on Adult and its fit + sample alone (module docstring)."""
    import yaml

    adult = data_dir() / "adult.csv"
    columns = list(pd.read_csv(adult, sep=";", nrows=0).columns)
    job = {
        "input": {"path": str(adult), "delimiter": ";"},
        "method": "marginal_dp",
        "epsilon": 1.0,
        "delta": 1e-6,
        "seed": 1,
        "options": declared_domain(adult, columns),
        "output": {
            "path": str(folder / "synthetic.csv"),
            "report": str(folder / "synth.html"),
            "json": str(folder / "synth.json"),
        },
    }
    path = folder / "synth.yaml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    return [
        (SYNTH_WHOLE, "-", "<= 1.5 x fit", ["synthesize", "--config", str(path), "--quiet"]),
        (SYNTH_FIT, "-", "-", ["-c", FIT_SAMPLE.format(job=str(path))]),
    ]


def main() -> None:
    """Print the table of whole-process timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", default="")
    args = parser.parse_args()
    # sdckit's bytecode first, as pip compiles it at install: an editable install compiles
    # each module on first import, never when PYTHONDONTWRITEBYTECODE is set (0.1-0.2 s more)
    compileall.compile_dir(Path(sdckit.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        chosen = [
            c
            for c in cases(Path(tmp))
            if c[3] is FLOOR
            or args.case in c[0]
            or (c[0] == SYNTH_FIT and args.case in SYNTH_WHOLE)  # the ratio's base with it
        ]  # the floor always: each round's floor is the base of that round's differences
        walls: dict[str, list[float]] = {name: [] for name, *_ in chosen}
        for _ in range(max(args.repeat, 1)):  # rounds: every case once, in turn
            for name, _ref, _target, argv in chosen:
                walls[name].append(_run(argv))
    floor = walls[chosen[0][0]]
    print(
        f"{'case (fresh process)':32} {'median s':>9} {'over floor':>11} {'runs':>22}  "
        f"{'reference':>14}  target"
    )
    for name, reference, target, argv in chosen:
        w = walls[name]
        over = "" if argv is FLOOR else f"{statistics.median(np.subtract(w, floor)):+.2f}"
        runs = " ".join(f"{x:.2f}" for x in w)
        print(
            f"{name:32} {statistics.median(w):9.2f} {over:>11} {runs:>22}  {reference:>14}  "
            f"{target}"
        )
    if SYNTH_WHOLE in walls and SYNTH_FIT in walls:
        whole, fit = statistics.median(walls[SYNTH_WHOLE]), statistics.median(walls[SYNTH_FIT])
        print(
            f"synthesize: whole command {whole:.2f} s / fit + sample {fit:.2f} s = "
            f"{whole / fit:.2f} (goal <= 1.5)"
        )


def _run(argv: list[str]) -> float:
    """Wall seconds of one fresh process (``-c`` code: the floor's imports or fit + sample;
    otherwise ``sdckit`` with argv)."""
    t0 = time.perf_counter()
    command = argv if argv[0] == "-c" else ["-m", "sdckit.cli", *argv]
    subprocess.run([sys.executable, *command], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
