"""``sdckit synthesize``: synthetic data from a job file, evaluated, written."""

from __future__ import annotations

from pathlib import Path

import typer

from sdckit.commands._common import (
    ConfigOption,
    JsonOption,
    QuietOption,
    out,
    print_original_records,
    run_guarded,
)
from sdckit.core.uri import Target, output_target


def synthesize_command(config: Path, json_out: Target | None, quiet: bool) -> dict:
    """Implementation of ``sdckit synthesize``: run the job, print the figures and outputs."""
    json_out = output_target(json_out, "--json")
    from sdckit.jobs.config import load_job
    from sdckit.jobs.synthesize import run_synthesize_job

    job = load_job(config)
    job.require_outputs(json_out)
    outcome = run_synthesize_job(job, json_out=json_out)
    s = outcome.summary
    if not quiet:
        rel, ev = s["release"], s["steward_evaluation"]
        out.print(
            f"{s['method']}: {rel['copies']} cop{'y' if rel['copies'] == 1 else 'ies'} of "
            f"{rel['records']:,} records"
        )
        privacy = rel["privacy"]
        if privacy.get("epsilon") is not None:
            out.print(f"privacy: epsilon {privacy['epsilon']:g}, delta {privacy.get('delta')}")
        if not privacy["private"]:  # NOT PRIVATE, NOT covered by epsilon, or no guarantee
            out.print(privacy["statement"])
        out.print(
            f"steward evaluation (not covered by epsilon, do not publish): fitted on "
            f"{ev['training_records']:,} training records"
        )
        for key, label in (
            ("s_pmse", "S_pMSE"),
            ("tvd_1way_mean", "mean TVD 1-way"),
            ("tvd_2way_mean", "mean TVD 2-way"),
        ):
            v = ev["utility"].get(key)
            if v is not None:
                out.print(f"  {label}: {v:.4f}")
        for key, label in (("dcr_share_closer_than_holdout", "DCR share closer"), ("tcap", "TCAP")):
            v = ev["risk"].get(key)
            if v is not None:
                out.print(f"  {label}: {v:.4f}")
        print_original_records(ev["risk"].get("original_records"))
        for kind, path in outcome.written.items():
            out.print(f"{kind}: {path}")
    return s


def synthesize_cli(
    config: ConfigOption, json_out: JsonOption = None, quiet: QuietOption = False
) -> None:
    """Synthetic data: CART, parametric, partial, hybrid, marginal_dp, safepub, alpha_beta."""
    run_guarded(synthesize_command, config, json_out, quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit synthesize`` to ``app``."""
    app.command("synthesize")(synthesize_cli)
