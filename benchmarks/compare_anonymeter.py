"""sdckit's singling-out, linkability and inference attacks beside anonymeter's, on Adult.

Run ``python benchmarks/compare_anonymeter.py --anonymeter-python /tmp/anonymeter-venv/bin/python``
(anonymeter lives in its own virtual environment: ``python3 -m venv /tmp/anonymeter-venv &&
/tmp/anonymeter-venv/bin/pip install anonymeter``; without it the anonymeter columns read
"not run").

Data: Adult (``../shared/data/arx/adult.csv``, ``;``-separated, 30,162 records), shuffled
(seed ``--seed``) and split into a training part (``--n-train``, default 20,000) and a control
part (the rest). Two synthetic sets of the training part's size, both reproducible from the
seed:

* ``independent``: every column resampled independently from the training marginals (an
  independent-marginals synthesizer: it keeps no record, so every risk should be about 0);
* ``leaky``: the same, with a share ``--leak`` (default 20%) of its rows replaced by exact
  copies of training records (a memorizing synthesizer: the risks should rise clearly).

Attacks (both tools, the same data, ``--n-attacks`` attacks each): singling out, univariate and
multivariate (3 columns); linkability with the column sets
``[age, sex, race, marital-status, native-country]`` and
``[education, workclass, occupation, salary-class]``; inference of ``occupation`` (categorical)
and of ``age`` (numeric, anonymeter's 5% relative tolerance) from all the other columns.
Prints one Markdown table: risk and confidence interval of each tool and the wall time of one
call (after one warm-up call of each attack on a small sample, so that numba compilation is not
counted for either tool), and the successes main/baseline/control of each (for singling out
the control count is scaled to the training set's size; the count before scaling in
parentheses). The estimates are random (random queries, random targets): they should agree
within their intervals, not to the digit.

Known differences from anonymeter 1.1.0 (its source, read for this comparison):

* singling-out control correction: anonymeter's ``_measure_queries_success`` records the
  *number of queries* (``len`` of the per-query counts) for every subsample instead of the
  number that single out, so the fitted model is degenerate (``w = 1``) and the correction is
  ``(n_control + 1) / (n_train + 1)`` whatever the data (0.57 here): it halves the control
  successes and reports a multivariate risk of about 0.1 for independent marginals. sdckit
  fits the model to the counts of predicates that single out (correction near 1 here).
* inference baseline: anonymeter aligns the random synthetic guesses to the targets by index
  label (``reindex_like``), so almost every baseline guess is missing and its baseline is near
  0; sdckit pairs them by position (the intended random-guess baseline). The risk does not
  use the baseline.
* ties between equally close synthetic records (common on Adult, which has one numeric
  column): anonymeter takes whatever ``argsort`` puts first; sdckit breaks them by one random
  priority per synthetic record (seeded).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.risk.synthetic_attacks import inference, linkability, singling_out

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "arx" / "adult.csv"
LINK_COLUMNS = (
    ["age", "sex", "race", "marital-status", "native-country"],
    ["education", "workclass", "occupation", "salary-class"],
)

#: The attacks, as (label, kind, options); the same options drive both tools.
ATTACKS: list[tuple[str, str, dict]] = [
    ("singling out, univariate", "singling_out", {"mode": "univariate"}),
    ("singling out, multivariate (3)", "singling_out", {"mode": "multivariate", "n_cols": 3}),
    ("linkability", "linkability", {"aux_columns": LINK_COLUMNS}),
    ("inference occupation", "inference", {"secret": "occupation", "regression": False}),
    ("inference age (numeric)", "inference", {"secret": "age", "regression": True}),
]

# The anonymeter side, run by the other interpreter: reads the CSV files written here and
# prints one JSON object per attack.
ANONYMETER_SCRIPT = r"""
import json, sys, time, warnings
import pandas as pd
from anonymeter.evaluators import (
    InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator)

from anonymeter.evaluators import singling_out_evaluator as so_module

warnings.filterwarnings("ignore")
raw_control = {}
_fit = so_module.fit_correction_term


def recording_fit(df, queries):  # the control count before anonymeter's size correction
    raw_control["n"] = len(so_module._evaluate_queries_and_return_successful(df, queries))
    return _fit(df, queries)


so_module.fit_correction_term = recording_fit
folder, spec = sys.argv[1], json.loads(sys.argv[2])
read = lambda name: pd.read_csv(f"{folder}/{name}.csv")
ori, ctl = read("training"), read("control")


def run(kind, opts, syn, n_attacks, seed, ori, ctl):
    if kind == "singling_out":
        ev = SinglingOutEvaluator(ori=ori, syn=syn, control=ctl, n_attacks=n_attacks,
                                  n_cols=opts.get("n_cols", 1), seed=seed)
        ev.evaluate(mode=opts["mode"])
    elif kind == "linkability":
        ev = LinkabilityEvaluator(ori=ori, syn=syn, control=ctl, n_attacks=n_attacks,
                                  aux_cols=tuple(opts["aux_columns"]), n_neighbors=1)
        ev.evaluate(n_jobs=-1)
    else:
        aux = [c for c in ori.columns if c != opts["secret"]]
        ev = InferenceEvaluator(ori=ori, syn=syn, control=ctl, aux_cols=aux,
                                secret=opts["secret"], regression=opts["regression"],
                                n_attacks=n_attacks)
        ev.evaluate(n_jobs=-1)
    return ev


out = []
for synthetic in spec["synthetic"]:
    syn = read(synthetic)
    for label, kind, opts in spec["attacks"]:
        small = lambda f: f.sample(min(len(f), 300), random_state=0)
        run(kind, opts, small(syn), 20, 0, small(ori), small(ctl))  # warm-up (numba)
        raw_control.clear()
        t0 = time.perf_counter()
        ev = run(kind, opts, syn, spec["n_attacks"], spec["seed"], ori, ctl)
        seconds = time.perf_counter() - t0
        res = ev.results()
        risk = ev.risk()
        out.append({"synthetic": synthetic, "attack": label, "risk": risk.value,
                    "ci": list(risk.ci), "seconds": seconds, "n_success": float(res.n_success),
                    "n_baseline": float(res.n_baseline), "n_control": float(res.n_control),
                    "n_control_raw": raw_control.get("n")})
print(json.dumps(out))
"""


def make_data(path: Path, n_train: int, leak: float, seed: int) -> dict[str, pd.DataFrame]:
    """Training, control and the two synthetic sets (module docstring)."""
    df = pd.read_csv(path, sep=";")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(df))
    training = df.iloc[order[:n_train]].reset_index(drop=True)
    control = df.iloc[order[n_train:]].reset_index(drop=True)
    independent = pd.DataFrame(
        {c: training[c].to_numpy()[rng.integers(0, n_train, n_train)] for c in training.columns}
    )
    leaky = independent.copy()
    copied = rng.choice(n_train, size=int(round(leak * n_train)), replace=False)
    for c in leaky.columns:
        values = leaky[c].to_numpy(copy=True)
        values[copied] = training[c].to_numpy()[copied]
        leaky[c] = values
    return {"training": training, "control": control, "independent": independent, "leaky": leaky}


def run_sdckit(kind: str, opts: dict, ori, syn, ctl, n_attacks: int, seed: int):
    if kind == "singling_out":
        return singling_out(ori, syn, ctl, n_attacks=n_attacks, seed=seed, **opts)
    if kind == "linkability":
        return linkability(ori, syn, ctl, n_attacks=n_attacks, seed=seed, **opts)
    aux = [c for c in ori.columns if c != opts["secret"]]
    return inference(ori, syn, ctl, aux, n_attacks=n_attacks, seed=seed, **opts)


def run_anonymeter(python: str, data: dict[str, pd.DataFrame], n_attacks: int, seed: int):
    """anonymeter's results keyed by (synthetic set, attack), or None when it cannot run."""
    if not python or not Path(python).exists():
        return None
    with tempfile.TemporaryDirectory() as folder:
        for name, frame in data.items():
            frame.to_csv(Path(folder) / f"{name}.csv", index=False)
        spec = {
            "synthetic": ["independent", "leaky"],
            "attacks": ATTACKS,
            "n_attacks": n_attacks,
            "seed": seed,
        }
        proc = subprocess.run(
            [python, "-c", ANONYMETER_SCRIPT, folder, json.dumps(spec)],
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        print(f"anonymeter failed:\n{proc.stderr[-3000:]}", file=sys.stderr)
        return None
    return {(r["synthetic"], r["attack"]): r for r in json.loads(proc.stdout.splitlines()[-1])}


def fmt(risk: float, ci) -> str:
    return f"{risk:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--n-train", type=int, default=20_000)
    ap.add_argument("--n-attacks", type=int, default=500)
    ap.add_argument("--leak", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--anonymeter-python", default="")
    args = ap.parse_args(argv)

    data = make_data(args.data, args.n_train, args.leak, args.seed)
    ori, ctl = data["training"], data["control"]
    other = run_anonymeter(args.anonymeter_python, data, args.n_attacks, args.seed)

    print(
        f"Adult: {len(ori)} training, {len(ctl)} control records; {args.n_attacks} attacks; "
        f"leaky = {args.leak:.0%} exact copies\n"
    )
    print(
        "| attack | synthetic | sdckit risk [ci] | anonymeter risk [ci] | sdckit s | "
        "anonymeter s | sdckit main/base/ctrl | anonymeter main/base/ctrl |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for synthetic in ("independent", "leaky"):
        syn = data[synthetic]
        for label, kind, opts in ATTACKS:
            small = {k: f.sample(min(len(f), 300), random_state=0) for k, f in data.items()}
            run_sdckit(kind, opts, small["training"], small[synthetic], small["control"], 20, 0)
            t0 = time.perf_counter()
            res = run_sdckit(kind, opts, ori, syn, ctl, args.n_attacks, args.seed)
            seconds = time.perf_counter() - t0
            ours = fmt(res.risk, res.risk_ci)
            counts = f"{res.n_success:g}/{res.n_baseline:g}/{res.n_control:.4g}"
            if "n_control_raw" in res.details and res.details["control_correction"]:
                counts += f" ({res.details['n_control_raw']})"
            theirs = their_s = their_counts = "not run"
            if other is not None:
                r = other[(synthetic, label)]
                theirs, their_s = fmt(r["risk"], r["ci"]), f"{r['seconds']:.2f}"
                their_counts = f"{r['n_success']:g}/{r['n_baseline']:g}/{r['n_control']:.4g}"
                if r.get("n_control_raw") is not None:
                    their_counts += f" ({r['n_control_raw']})"
            print(
                f"| {label} | {synthetic} | {ours} | {theirs} | {seconds:.2f} | {their_s} | "
                f"{counts} | {their_counts} |"
            )


if __name__ == "__main__":
    main()
