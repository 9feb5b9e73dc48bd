"""``sdckit analyze``: the re-identification risk of one data set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import (
    EngineOption,
    QuietOption,
    SparkConfOption,
    SparkMasterOption,
    escape,
    out,
    run_guarded,
    split_list,
)
from sdckit.core.uri import Target, output_target


def _print_risk(summary: dict) -> None:
    from rich.table import Table  # (20 ms of import: only when printing)

    t = Table(title="Re-identification risk", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("records", f"{summary['records']:,}")
    mv = summary.get("missing_values") or {}
    if mv.get("records_with_missing_key"):
        t.add_row(
            f"records with a missing key ({mv['semantics']})",
            f"{mv['records_with_missing_key']:,}",
        )
    t.add_row("equivalence classes", f"{summary['equivalence_classes']:,}")
    t.add_row(
        "sample uniques", f"{summary['sample_uniques']:,} ({summary['sample_uniques_share']:.2%})"
    )
    for k in ("prosecutor", "journalist"):
        v = summary[k]
        t.add_row(
            f"{k} risk min / avg / max", f"{v['min']:.4f} / {v['average']:.4f} / {v['max']:.4f}"
        )
    t.add_row("marketer risk", f"{summary['marketer']:.6f}")
    t.add_row(
        f"records with risk > {summary['threshold']:g}", f"{summary['records_at_risk_share']:.2%}"
    )
    for k, v in summary.get("population_uniques_share", {}).items():
        t.add_row(f"population uniques ({k})", f"{v:.6f}" if isinstance(v, float) else str(v))
    for k, v in summary.get("individual_risk", {}).items():
        t.add_row(f"individual risk {k}", f"{v:.6f}")
    for k, v in summary.get("household_risk", {}).items():
        t.add_row(f"household risk {k}", f"{v:.6f}")
    for k, v in summary.get("suda", {}).items():
        t.add_row(f"SUDA {k}", f"{v:,.4f}" if isinstance(v, float) else f"{v:,}")
    for a, v in summary.get("sensitive", {}).items():
        t.add_row(
            f"{a}: distinct l / entropy l",
            f"{v['distinct_l']} / {v['entropy_l']:.2f}"
            + (
                f" ({v['homogeneous_classes']:,} one-value classes)"
                if v["homogeneous_classes"]
                else ""
            ),
        )
        t.add_row(
            f"{a}: largest value share"
            + (" / smallest range" if v.get("min_range") is not None else ""),
            f"{v['max_confidence']:.4f}"
            + (f" / {v['min_range']:g}" if v.get("min_range") is not None else ""),
        )
        if "max_relative_gain" in v:
            t.add_row(
                f"{a}: beta-likeness / delta-disclosure",
                f"{v['max_relative_gain']:.4f} / {v['max_log2_ratio']:.4f}",
            )
    coverage = summary.get("attack_coverage")
    if coverage:
        from sdckit.models.attacks import ATTACK_LABELS

        t.add_row(
            "attacks no measured model covers",
            ", ".join(ATTACK_LABELS[a] for a in coverage["uncovered"]) or "none",
        )
    out.print(t)
    for k, why in summary.get("skipped", {}).items():
        out.print(f"[yellow]skipped {k}:[/] {escape(why)}", highlight=False)


def analyze_command(
    input: Path | None,
    qi: list[str],
    sensitive: list[str],
    delimiter: str | None,
    sampling_fraction: float | None,
    weight: str | None,
    household: str | None,
    threshold: float,
    json_out: Target | None,
    html_out: Target | None,
    population: Path | None,
    encoding: str,
    quiet: bool,
    measures: list[str] | None = None,
    suda_max_size: int | None = None,
    missing: str = "wildcard",
    config: Path | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
    spark_conf: list[str] | None = None,
) -> dict:
    """Implementation of ``sdckit analyze`` (also used by ``demo``): the analysis
    :func:`sdckit.jobs.analyze.analyze_request` describes, run by
    :func:`sdckit.jobs.analyze.run_analyze`, then printed.

    With ``config`` (a job file) the input, its delimiter and encoding, the quasi-identifiers
    (``qi:``, else the attributes with role quasi_identifying), the sensitive attributes, the
    engine and the JSON/HTML outputs come from the job; options given here win.
    """
    from sdckit.jobs.analyze import analyze_request, run_analyze

    json_out = output_target(json_out, "--json")
    html_out = output_target(html_out, "--html")
    request = analyze_request(
        input,
        qi,
        sensitive,
        delimiter=delimiter,
        encoding=encoding,
        json_out=json_out,
        html_out=html_out,
        config=config,
        engine=engine,
        spark_master=spark_master,
        spark_conf=spark_conf,
    )
    json_out, html_out = request.json_out, request.html_out
    summary = run_analyze(
        request,
        population,
        sampling_fraction=sampling_fraction,
        weight=weight,
        household=household,
        threshold=threshold,
        measures=measures,
        suda_max_size=suda_max_size,
        missing=missing,
    )
    if not quiet:
        _print_risk(summary)
        for label, path in (("JSON", json_out), ("HTML report", html_out)):
            if path:
                out.print(f"{label}: {path}")
    return summary


def analyze_cli(
    input: Annotated[
        Path | None, typer.Argument(help="CSV or Parquet file to analyze (or give --config).")
    ] = None,
    qi: Annotated[str, typer.Option("--qi", help="Quasi-identifiers, comma-separated.")] = "",
    sensitive: Annotated[str, typer.Option(help="Sensitive attributes, comma-separated.")] = "",
    delimiter: Annotated[
        str | None, typer.Option(help="CSV delimiter (sniffed if omitted).")
    ] = None,
    sampling_fraction: Annotated[
        float | None,
        typer.Option(
            "--sampling-fraction", help="Sample / population size, for population uniqueness."
        ),
    ] = None,
    weight: Annotated[
        str | None, typer.Option(help="Sampling-weight column (sdcMicro risk).")
    ] = None,
    household: Annotated[
        str | None, typer.Option(help="Household-id column (needs --weight).")
    ] = None,
    threshold: Annotated[float, typer.Option(help="Risk threshold for 'records at risk'.")] = 0.2,
    json_out: Annotated[
        str | None, typer.Option("--json", help="Write the summary as JSON.")
    ] = None,
    html_out: Annotated[str | None, typer.Option("--html", help="Write an HTML report.")] = None,
    population: Annotated[
        Path | None, typer.Option(help="Population table (journalist risk).")
    ] = None,
    encoding: Annotated[str, typer.Option(help="Text encoding of CSV input.")] = "utf-8",
    quiet: QuietOption = False,
    measures: Annotated[
        str | None,
        typer.Option(
            help="Per-subset measures to compute, comma-separated: distinction, suda (default: "
            "both, each skipped with a note when its estimated cost is too high; named here, "
            "a measure always runs)."
        ),
    ] = None,
    suda_max_size: Annotated[
        int | None,
        typer.Option(
            "--suda-max-size", min=1, help="Largest minimal-sample-unique size SUDA2 searches."
        ),
    ] = None,
    missing: Annotated[
        str,
        typer.Option(
            help="What a missing key value (empty, NA, NaN) matches: 'wildcard' (any value, "
            "as sdcMicro and mu-Argus count locally suppressed records) or 'category' (only "
            "itself, as ARX counts suppressed values)."
        ),
    ] = "wildcard",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="Job file: input, quasi-identifiers (qi: or the attributes' roles), sensitive "
            "attributes, engine and outputs from it.",
        ),
    ] = None,
    engine: EngineOption = None,
    spark_master: SparkMasterOption = None,
    spark_conf: SparkConfOption = None,
) -> None:
    """Measure the re-identification risk of a data set.

    Always: prosecutor/journalist/marketer risk, sample uniques, class sizes (and population,
    individual and household risk with their options; l-diversity, beta-likeness and
    delta-disclosure levels of --sensitive attributes).
    Per QI subset, when affordable or asked with --measures: distinction/separation, SUDA2.
    """
    run_guarded(
        analyze_command,
        input,
        split_list(qi),
        split_list(sensitive),
        delimiter,
        sampling_fraction,
        weight,
        household,
        threshold,
        json_out,
        html_out,
        population,
        encoding,
        quiet,
        split_list(measures) if measures is not None else None,
        suda_max_size,
        missing,
        config,
        engine,
        spark_master,
        spark_conf,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit analyze`` to ``app``."""
    app.command("analyze")(analyze_cli)
