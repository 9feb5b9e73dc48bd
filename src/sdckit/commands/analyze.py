"""``sdckit analyze``: the re-identification risk of one data set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.commands._common import (
    EngineOption,
    QuietOption,
    SparkMasterOption,
    escape,
    out,
    run_guarded,
    split_list,
)


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
    json_out: Path | None,
    html_out: Path | None,
    population: Path | None,
    encoding: str,
    quiet: bool,
    measures: list[str] | None = None,
    suda_max_size: int | None = None,
    missing: str = "wildcard",
    config: Path | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
) -> dict:
    """Implementation of ``sdckit analyze`` (also used by ``demo``).

    With ``config`` (a job file) the input, its delimiter and encoding, the quasi-identifiers
    (``qi:``, else the attributes with role quasi_identifying), the sensitive attributes, the
    engine and the JSON/HTML outputs come from the job; options given here win.
    """
    from sdckit.core.io import check_output_paths, output_set, read_table, write_text
    from sdckit.errors import ConfigError, DataError
    from sdckit.report.risk_report import risk_report
    from sdckit.report.writer import write_json

    job = None
    if config is not None:
        from sdckit.jobs.config import load_job

        job = load_job(config).with_engine(engine, spark_master)
        if input is not None:
            raise ConfigError("give the data either as INPUT or in the job file's input:, not both")
        src = job.input["path"]
        input = src if isinstance(src, Path) else job._path(src)  # noqa: A001
        delimiter = delimiter or job.input.get("delimiter")
        encoding = job.input.get("encoding", encoding) if encoding == "utf-8" else encoding
        schema = None
        if job.engine == "spark":  # the roles from the header: Spark is not started for them
            columns = job.input_columns()
            job.check_attributes(columns)
            if columns is not None:
                schema = job.schema_without_data(columns)
        schema = schema or job.schema
        if not qi:
            qi = list(job.spec.qi or []) or schema.quasi_identifiers
        if not sensitive:
            sensitive = schema.sensitive
        json_out = json_out or job.output.json
        html_out = html_out or job.output.report
        engine = job.engine
    if input is None:
        raise DataError("name the data to analyze (sdckit analyze DATA.csv) or give --config JOB")
    if not qi:
        raise DataError("name the quasi-identifiers with --qi A,B,C")
    engine = engine or "local"
    if engine not in ("local", "spark"):
        raise ConfigError(f"--engine must be local or spark, got {engine!r}")
    check_output_paths(
        {"--json": json_out, "--html": html_out}, {"input": input, "--population": population}
    )
    options: dict[str, Any] = dict(
        sensitive=sensitive,
        sampling_fraction=sampling_fraction,
        weight=weight,
        household=household,
        threshold=threshold,
        measures=measures,
        suda_max_size=suda_max_size,
        missing=missing,
    )
    if engine == "spark":
        from sdckit.spark.analyze import analyze_spark, check_request
        from sdckit.spark.io import input_columns, read_spark

        known = (
            job.input_columns() if job is not None else input_columns(input, delimiter, encoding)
        )
        if known is not None:  # before Spark starts
            check_request(known, qi, household)
        if job is not None:
            session = job.spark_session()
            sdf = job.read_spark_input()
        else:
            from sdckit.spark.session import spark_session

            session = spark_session(spark_master or "local[2]")
            sdf = read_spark(session, input, delimiter, encoding)
        pop_sdf = read_spark(session, population, delimiter, encoding) if population else None
        result = analyze_spark(sdf, qi, population=pop_sdf, **options)
    else:
        from sdckit.risk.analyze import analyze

        df = read_table(input, delimiter=delimiter, encoding=encoding, columns=[*qi, *sensitive])
        pop = read_table(population, delimiter=delimiter, encoding=encoding) if population else None
        result = analyze(df, qi, population=pop, **options)
    summary = dict(result.summary)
    summary["input"] = str(input)
    summary["engine"] = engine
    from sdckit.models.attacks import attack_coverage
    from sdckit.risk.analyze import measured_models

    summary["attack_coverage"] = attack_coverage(measured_models(summary))
    # Everything is computed and rendered before the first file is written, so a failure
    # leaves nothing behind (each write is itself atomic).
    with output_set():  # one release: renamed into place together, or not at all
        html = (
            risk_report(
                summary,
                result.class_risk,
                source=str(input),
                risk_weights=result.frequency_set.counts,
            ).render_html()
            if html_out
            else None
        )
        if json_out:
            write_json(json_out, summary)
        if html_out and html is not None:
            write_text(html_out, html)
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
        Path | None, typer.Option("--json", help="Write the summary as JSON.")
    ] = None,
    html_out: Annotated[Path | None, typer.Option("--html", help="Write an HTML report.")] = None,
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
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit analyze`` to ``app``."""
    app.command("analyze")(analyze_cli)
