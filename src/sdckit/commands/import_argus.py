"""``sdckit import-argus DATA.rda --data DATA.asc --out job.yaml``: the anonymize job of a
mu-Argus metadata file and its data, written for the user to read, edit and run; with
``--table`` (or ``--cells TABLE.tab``) the table job of tau-Argus metadata and its microdata
(or its cell file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.commands._common import QuietOption, out, run_guarded


def _rule_entries(values: list[str]) -> list[dict[str, Any]] | None:
    """``--rule`` values (each one rule as a job file writes it, ``p_percent: {p: 15}``) as
    ``rules:`` entries; None when none was given. ConfigError naming a value that is not
    one ``name: {parameters}`` mapping (the names and parameters are checked when the job
    is loaded)."""
    import yaml

    from sdckit.errors import ConfigError

    if not values:
        return None
    entries = []
    for value in values:
        text = value.strip()
        try:
            entry = yaml.safe_load(text if text.startswith("{") else "{" + text + "}")
        except yaml.YAMLError:
            entry = None
        params = next(iter(entry.values())) if isinstance(entry, dict) and entry else None
        if not (isinstance(entry, dict) and len(entry) == 1 and isinstance(params, dict)):
            raise ConfigError(
                f"--rule {value!r}: give one rule as a job file writes it, e.g. --rule "
                "'p_percent: {p: 15}' or --rule 'frequency: {threshold: 3}'"
            )
        entries.append({str(next(iter(entry))): params})
    return entries


def import_argus_command(
    rda: Path,
    data: Path | None,
    job_out: Path,
    k: int | None = None,
    quiet: bool = False,
    *,
    table: bool = False,
    cells: Path | None = None,
    dimensions: list[str] | None = None,
    response: str | None = None,
    frequency: bool = False,
    rules: list[str] | None = None,
    method: str | None = None,
) -> dict[str, Any]:
    """Implementation of ``sdckit import-argus`` (derive, check by loading and reading the
    data -- every hierarchy built, every code in it -- and write)."""
    import yaml

    from sdckit.core.io import write_text
    from sdckit.errors import ConfigError
    from sdckit.jobs.config import job_from_dict

    table = table or cells is not None
    if (data is None) == (cells is None):
        raise ConfigError(
            "give the data the .rda describes: --data DATA.asc (microdata), or --cells "
            "TABLE.tab (a tau-Argus cell file), not both"
        )
    for given, flag in ((rda, "RDA"), (data, "--data"), (cells, "--cells")):
        if given is None:
            continue
        if not given.is_file():
            raise ConfigError(f"{flag}: {str(given)!r} does not exist; check the path")
        if job_out.resolve() == given.resolve():
            raise ConfigError(
                f"--out {str(job_out)!r} is the input {flag}; write the job elsewhere"
            )
    table_flags = {
        "--dimensions": dimensions,
        "--response": response,
        "--frequency": frequency or None,
        "--rule": rules or None,
        "--method": method,
    }
    if table:
        if k is not None:
            raise ConfigError(
                "--k is the k of an anonymize job's k-anonymity; a table job (--table) "
                "protects cells by its sensitivity rules (--rule): remove --k"
            )
        from sdckit.jobs.argus import import_argus_table_job

        doc, notes = import_argus_table_job(
            rda,
            job_out,
            data=data,
            cells=cells,
            dimensions=dimensions,
            response=response,
            frequency=frequency,
            rules=_rule_entries(rules or []),
            method=method or "optimal",
        )
    else:
        named = [flag for flag, value in table_flags.items() if value]
        if named:
            raise ConfigError(
                f"{named[0]} sets up a table job: add --table (without it import-argus "
                "writes an anonymize job)"
            )
        if k is not None and k < 2:
            raise ConfigError(f"--k must be 2 or more, got {k}")
        from sdckit.jobs.argus import import_argus_job

        assert data is not None
        doc, notes = import_argus_job(rda, data, job_out, k=5 if k is None else k)
    base = job_out.resolve().parent
    job = job_from_dict(doc, base, source=repr(str(job_out)))  # the job loads as written
    if table:
        from sdckit.jobs.table import check_table_job

        check_table_job(job)  # the data read, every hierarchy (with every code) and rule built
    else:
        schema, records = job.schema, job.read_input()  # the data read, hierarchies built
        for name in schema.quasi_identifiers:  # and every code of the data in its hierarchy
            hierarchy = schema.hierarchy(name)
            if hierarchy is not None:
                hierarchy.leaf_index(records[name], column=name)
    text = "".join(f"# {line}\n" for line in notes)
    text += yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    write_text(job_out, text)
    if not quiet:
        if table:
            out.print(f"job: {job_out} (a table of {', '.join(doc['dimensions'])})")
            out.print(f"run it: sdckit table --config {job_out}")
        else:
            attrs = doc["attributes"]
            qis = [n for n, a in attrs.items() if a.get("role") == "quasi_identifying"]
            out.print(f"job: {job_out} ({len(attrs)} attributes, {len(qis)} key variables)")
            out.print(f"run it: sdckit anonymize --config {job_out}")
    return doc


def import_argus_cli(
    rda: Annotated[Path, typer.Argument(help="mu-Argus or tau-Argus metadata file (.rda).")],
    job_out: Annotated[Path, typer.Option("--out", "-o", help="Write the job file here (YAML).")],
    data: Annotated[
        Path | None,
        typer.Option("--data", "-d", help="The microdata it describes (.asc or free format)."),
    ] = None,
    k: Annotated[
        int | None, typer.Option("--k", help="k of the anonymize job's k-anonymity (default 5).")
    ] = None,
    table: Annotated[
        bool, typer.Option("--table", help="Write a table job (sdckit table) of the microdata.")
    ] = False,
    cells: Annotated[
        Path | None,
        typer.Option("--cells", help="A tau-Argus cell file (.tab) instead: a table job of it."),
    ] = None,
    dimensions: Annotated[
        str | None,
        typer.Option(
            "--dimensions", help="Table: the explanatory variables (default every recodeable)."
        ),
    ] = None,
    response: Annotated[
        str | None,
        typer.Option("--response", help="Table: the response (default the first numeric)."),
    ] = None,
    frequency: Annotated[
        bool, typer.Option("--frequency", help="Table: a frequency table (no response).")
    ] = False,
    rule: Annotated[
        list[str] | None,
        typer.Option(
            "--rule",
            help="Table: a sensitivity rule, e.g. 'p_percent: {p: 15}' (repeat for more; "
            "default p% with p 10 and frequency 3).",
        ),
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="Table: the protection method (optimal).")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Write the job of an Argus .rda and its data: an anonymize job of mu-Argus microdata
    (roles from <IDLEVEL>, hierarchies from .hrc files, missing codes as missing), or with
    --table / --cells a table job of tau-Argus metadata (dimensions from <RECODEABLE>,
    totals, .hrc hierarchies, the response from <NUMERIC>)."""
    dims = [d.strip() for d in dimensions.split(",") if d.strip()] if dimensions else None
    run_guarded(
        import_argus_command,
        rda,
        data,
        job_out,
        k,
        quiet,
        table=table,
        cells=cells,
        dimensions=dims,
        response=response,
        frequency=frequency,
        rules=rule,
        method=method,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit import-argus`` to ``app``."""
    app.command("import-argus")(import_argus_cli)
