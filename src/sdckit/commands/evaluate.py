"""``sdckit evaluate``: information loss and disclosure risk of a protected file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.commands._common import QuietOption, out, run_guarded, split_list
from sdckit.core.uri import Target, output_target


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{v:.6g}"


def _print(doc: dict) -> None:
    from rich.table import Table  # (20 ms of import: only when printing)

    t = Table(title="Evaluation", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("records", f"{doc['n_records']:,}")
    for k in ("il1s", "propensity_u", "bounded_il", "score_il"):
        t.add_row(f"information loss: {k}", _fmt(doc["information_loss"][k]))
    for k in ("dbrl", "prl", "interval_disclosure", "score_dr"):
        t.add_row(f"disclosure risk: {k}", _fmt(doc["disclosure_risk"][k]))
    t.add_row("score (score_il + 100 score_dr) / 2", _fmt(doc["score"]))
    det = doc["details"]
    if "dbrl_mahalanobis" in det:
        t.add_row("DBRL Mahalanobis", _fmt(det["dbrl_mahalanobis"]["dbrl"]))
    if "dbrl_weighted" in det:
        t.add_row("DBRL weighted", _fmt(det["dbrl_weighted"]["dbrl"]))
    if "sdcmicro_drisk" in det:
        t.add_row("sdcMicro dRisk (every attribute inside)", _fmt(det["sdcmicro_drisk"]))
    if "sdcmicro_drisk_at_most_one_outside" in det:
        t.add_row(
            "dRisk, <= 1 attribute outside (sdcMicro < 5.5.2)",
            _fmt(det["sdcmicro_drisk_at_most_one_outside"]),
        )
    if "isolation" in doc:
        iso = doc["isolation"]
        label = f"(c={iso['c']:g}, t={iso['t']})-isolation"
        t.add_row(f"{label}: isolated by own record", _fmt(iso["isolated_by_own"]))
        t.add_row(f"{label}: isolated by any record", _fmt(iso["isolated_by_any"]))
    if "transparency_attack" in doc:
        ta = doc["transparency_attack"]
        t.add_row("transparency attack: certain matches", _fmt(ta["certain_matches"]))
        t.add_row("transparency attack: re-identified", _fmt(ta["reidentified"]))
    for fam, r in doc.get("worst_case_linkage", {}).items():
        t.add_row(f"worst-case linkage ({fam}): linked", _fmt(r["linked_share"]))
    if "use_specific" in doc:
        u = doc["use_specific"]
        if "regression" in u:
            t.add_row(
                f"regression of {u['target']}: mean CI overlap",
                _fmt(u["regression"]["mean_ci_overlap"]),
            )
        else:
            t.add_row(
                f"classifier for {u['target']}: accuracy loss",
                _fmt(u["classifier"]["accuracy_loss"]),
            )
    if "generalization" in doc:
        g = doc["generalization"]
        for key in ("loss", "precision", "discernibility", "aecs"):
            t.add_row(f"generalization: {key}", _fmt(g[key]))
    if "reidentification" in doc:
        r = doc["reidentification"]
        t.add_row("matching: share re-identified (DR)", _fmt(r["disclosure_risk"]))
        t.add_row("matching: highest record risk", _fmt(r["matching"]["highest_risk"]))
        t.add_row("matching: relative entropy loss (IL)", _fmt(r["information_loss"]))
        t.add_row("matching: R-U score (IL + DR) / 2, %", _fmt(r["score"]))
    if "categorical" in doc:
        t.add_row("categorical: changed values", _fmt(doc["categorical"]["changed_values_share"]))
        t.add_row("categorical: CTBIL share", _fmt(doc["categorical"]["ctbil_share"]))
    out.print(t)
    for note in doc["notes"]:
        out.print(f"note: {note}", highlight=False)


def _parse_weights(spec: str) -> dict[str, float] | None:
    """``"a=1,b=0.5"`` -> ``{"a": 1.0, "b": 0.5}`` (empty -> None; ConfigError otherwise)."""
    from sdckit.errors import ConfigError

    if not spec.strip():
        return None
    weights: dict[str, float] = {}
    for item in split_list(spec):
        col, sep, val = item.partition("=")
        col, val = col.strip(), val.strip()
        if not sep or not col or not val:
            raise ConfigError(
                f"--dbrl-weights {item!r}: expected COLUMN=WEIGHT pairs, e.g. "
                "--dbrl-weights AGI=2,FICA=1"
            )
        if col in weights:
            raise ConfigError(f"--dbrl-weights: column {col!r} is given twice")
        try:
            weights[col] = float(val)
        except ValueError:
            raise ConfigError(
                f"--dbrl-weights: the weight {val!r} of column {col!r} is not a number"
            ) from None
    return weights


def evaluate_command(
    original: Path,
    protected: Path,
    columns: list[str],
    qi: list[str],
    categorical: list[str],
    json_out: Target | None,
    html_out: Target | None,
    known_method: str | None,
    p_percent: float | None,
    k: int | None,
    target: str | None,
    learned_distance: list[str],
    learned_time_limit: float,
    intruder_share: float | None,
    dbrl_weights: str,
    hierarchy: list[str],
    delimiter: str | None,
    encoding: str,
    seed: int,
    quiet: bool,
    isolation_c: float = 2.0,
    isolation_t: int = 5,
) -> dict:
    """Implementation of ``sdckit evaluate``: ``--dbrl-weights`` parsed, then
    :func:`sdckit.jobs.evaluate.run_evaluate` (read both files, evaluate, then write the
    outputs), then the measures printed.
    """
    from sdckit.jobs.evaluate import run_evaluate

    json_out = output_target(json_out, "--json")
    html_out = output_target(html_out, "--html")
    doc = run_evaluate(
        original,
        protected,
        columns=columns,
        qi=qi,
        categorical=categorical,
        json_out=json_out,
        html_out=html_out,
        known_method=known_method,
        p_percent=p_percent,
        k=k,
        target=target,
        learned_distance=learned_distance,
        learned_time_limit=learned_time_limit,
        intruder_share=intruder_share,
        dbrl_weights=_parse_weights(dbrl_weights),
        hierarchy=hierarchy,
        delimiter=delimiter,
        encoding=encoding,
        seed=seed,
        isolation_c=isolation_c,
        isolation_t=isolation_t,
    )
    if not quiet:
        _print(doc)
        for label, path in (("JSON", json_out), ("HTML report", html_out)):
            if path:
                out.print(f"{label}: {path}")
    return doc


def evaluate_cli(
    original: Annotated[
        Path, typer.Option("--original", help="The original file (CSV or Parquet).")
    ],
    protected: Annotated[
        Path,
        typer.Option("--protected", help="The protected file: same records, same order."),
    ],
    columns: Annotated[
        str, typer.Option(help="Columns to compare, comma-separated (default: all).")
    ] = "",
    qi: Annotated[
        str,
        typer.Option(
            "--qi",
            help="Attributes the intruder knows, comma-separated (default: the numeric compared "
            "columns). Distance linkage, interval disclosure and the transparency attack use "
            "the numeric ones; PRL all of them.",
        ),
    ] = "",
    categorical: Annotated[
        str,
        typer.Option(
            help="Columns to treat as categories even if numeric (e.g. codes, or an age "
            "recoded to intervals): categorical measures instead of numeric ones."
        ),
    ] = "",
    json_out: Annotated[str | None, typer.Option("--json", help="Write the JSON here.")] = None,
    html_out: Annotated[
        str | None, typer.Option("--html", help="Write the HTML report here.")
    ] = None,
    known_method: Annotated[
        str | None,
        typer.Option(
            "--known-method",
            help="Transparency attack: rank_swapping (with --p-percent) or "
            "microaggregation (with --k).",
        ),
    ] = None,
    p_percent: Annotated[
        float | None, typer.Option("--p-percent", help="Rank-swapping window in % of n.")
    ] = None,
    k: Annotated[int | None, typer.Option("--k", help="Microaggregation group size.")] = None,
    target: Annotated[
        str | None,
        typer.Option(
            help="Use-specific utility for this column: a numeric target gets a regression on "
            "the other numeric columns (coefficients, CI overlap; Karr et al. 2006), a "
            "categorical one a classifier trained on protected, tested on original data."
        ),
    ] = None,
    learned_distance: Annotated[
        str,
        typer.Option(
            "--learned-distance",
            help="Worst-case linkage by MILP: weighted_mean,owa,choquet (a few hundred rows).",
        ),
    ] = "",
    learned_time_limit: Annotated[
        float,
        typer.Option("--learned-time-limit", help="Seconds of HiGHS per learned distance."),
    ] = 60.0,
    intruder_share: Annotated[
        float | None,
        typer.Option(
            "--intruder-share",
            help="The intruder knows a random share of the records (DBRL, transparency).",
        ),
    ] = None,
    dbrl_weights: Annotated[
        str,
        typer.Option(
            "--dbrl-weights",
            help="COLUMN=WEIGHT,...: adds weighted-distance DBRL, sqrt(sum w_k (z_k - z'_k)^2), "
            "beside the Euclidean and Mahalanobis ones; weigh every numeric --qi column "
            "(0 leaves it out).",
        ),
    ] = "",
    hierarchy: Annotated[
        list[str] | None,
        typer.Option(
            "--hierarchy",
            help="COLUMN=FILE: an ARX hierarchy CSV (;-separated); repeat per column. Adds the "
            "generalization metrics (loss, precision, discernibility, ...).",
        ),
    ] = None,
    delimiter: Annotated[
        str | None, typer.Option(help="CSV delimiter (sniffed if omitted).")
    ] = None,
    encoding: Annotated[str, typer.Option(help="Text encoding of CSV input.")] = "utf-8",
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = 0,
    isolation_c: Annotated[
        float,
        typer.Option(
            "--isolation-c",
            help="(c,t)-isolation (Chawla et al. 2005): a released point isolates an original "
            "record when the ball of radius c times their distance holds fewer than t "
            "original records; c >= 1.",
        ),
    ] = 2.0,
    isolation_t: Annotated[
        int, typer.Option("--isolation-t", help="(c,t)-isolation threshold t >= 2.")
    ] = 5,
    quiet: QuietOption = False,
) -> None:
    """Information loss and disclosure risk of a protected file against its original.

    Both files must hold the same records in the same order. Reported: information loss
    (IL1s, propensity score U, bounded IL, the 2001 matrix measures and score_il; categorical
    measures for categorical columns) and disclosure risk (distance-based linkage with
    Euclidean and Mahalanobis distances, probabilistic linkage, interval disclosure,
    sdcMicro's dRisk, (c,t)-isolation), and score = (score_il + 100 score_dr) / 2. Options
    add the transparency attack, weighted DBRL, learned-distance linkage, use-specific
    utility and generalization metrics.

    Example: sdckit evaluate --original census.csv --protected masked.csv
    --known-method rank_swapping --p-percent 5 --json ev.json --html ev.html
    """
    run_guarded(
        evaluate_command,
        original,
        protected,
        split_list(columns),
        split_list(qi),
        split_list(categorical),
        json_out,
        html_out,
        known_method,
        p_percent,
        k,
        target,
        split_list(learned_distance),
        learned_time_limit,
        intruder_share,
        dbrl_weights,
        list(hierarchy or []),
        delimiter,
        encoding,
        seed,
        quiet,
        isolation_c,
        isolation_t,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit evaluate`` to ``app``."""
    app.command("evaluate")(evaluate_cli)
