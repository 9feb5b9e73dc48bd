"""``sdckit import-argus DATA.rda --data DATA.asc --out job.yaml``: the anonymize job of a
mu-Argus metadata file and its data, written for the user to read, edit and run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.commands._common import QuietOption, out, run_guarded


def import_argus_command(
    rda: Path, data: Path, job_out: Path, k: int = 5, quiet: bool = False
) -> dict[str, Any]:
    """Implementation of ``sdckit import-argus`` (derive, check by loading, write)."""
    import yaml

    from sdckit.core.io import write_text
    from sdckit.errors import ConfigError
    from sdckit.jobs.argus import import_argus_job
    from sdckit.jobs.config import job_from_dict

    for given, flag in ((rda, "RDA"), (data, "--data")):
        if not given.is_file():
            raise ConfigError(f"{flag}: {str(given)!r} does not exist; check the path")
        if job_out.resolve() == given.resolve():
            raise ConfigError(
                f"--out {str(job_out)!r} is the input {flag}; write the job elsewhere"
            )
    if k < 2:
        raise ConfigError(f"--k must be 2 or more, got {k}")
    doc, notes = import_argus_job(rda, data, job_out, k=k)
    base = job_out.resolve().parent
    job = job_from_dict(doc, base, source=repr(str(job_out)))  # the job loads as written
    schema, records = job.schema, job.read_input()  # the data read, every hierarchy built
    for name in schema.quasi_identifiers:  # and every code of the data in its hierarchy
        hierarchy = schema.hierarchy(name)
        if hierarchy is not None:
            hierarchy.leaf_index(records[name], column=name)
    text = "".join(f"# {line}\n" for line in notes)
    text += yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    write_text(job_out, text)
    if not quiet:
        qis = [n for n, a in doc["attributes"].items() if a.get("role") == "quasi_identifying"]
        out.print(f"job: {job_out} ({len(doc['attributes'])} attributes, {len(qis)} key variables)")
        out.print(f"run it: sdckit anonymize --config {job_out}")
    return doc


def import_argus_cli(
    rda: Annotated[Path, typer.Argument(help="mu-Argus metadata file (.rda).")],
    data: Annotated[
        Path, typer.Option("--data", "-d", help="The data file it describes (.asc or free format).")
    ],
    job_out: Annotated[Path, typer.Option("--out", "-o", help="Write the job file here (YAML).")],
    k: Annotated[int, typer.Option("--k", help="k of the job's k-anonymity model.")] = 5,
    quiet: QuietOption = False,
) -> None:
    """Write the anonymize job of a mu-Argus .rda and its data (roles from <IDLEVEL>,
    hierarchies from .hrc files, missing codes as missing)."""
    run_guarded(import_argus_command, rda, data, job_out, k, quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit import-argus`` to ``app``."""
    app.command("import-argus")(import_argus_cli)
