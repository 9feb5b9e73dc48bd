"""Tests: ``method: audit`` of a table job reads its cells file once (the table and the
suppression statuses come from the same read) and audits exactly as before."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

import sdckit.jobs.table as table_job
from sdckit.jobs.config import load_job

# region x sector with tau-Argus-like statuses (sdcTable's codes: u primary, x secondary, s
# published); the same cells as tests/test_table_audit_job.py
CELLS = pd.DataFrame(
    {
        "region": ["Total"] * 3 + ["E"] * 3 + ["N"] * 3 + ["S"] * 3,
        "sector": ["Total", "a", "b"] * 4,
        "value": [835, 260, 575, 245, 95, 150, 400, 90, 310, 190, 75, 115],
        "freq": [15, 7, 8, 6, 2, 4, 4, 2, 2, 5, 3, 2],
        "status": ["s", "s", "s", "x", "u", "s", "x", "u", "u", "s", "x", "u"],
    }
)


def test_the_audit_job_reads_its_cells_file_once(tmp_path: Path, monkeypatch) -> None:
    CELLS.to_csv(tmp_path / "given.csv", index=False)
    doc = {
        "cells": {"path": "given.csv"},
        "dimensions": {"region": {}, "sector": {}},
        "rules": [{"frequency": {"threshold": 3}}],
        "method": "audit",
        "output": {"json": "audit.json"},
    }
    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    reads: list[str] = []
    real = table_job.read_table

    def counting(path, *args, **kwargs):
        reads.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(table_job, "read_table", counting)
    outcome = table_job.run_table_job(load_job(tmp_path / "audit.yaml"))
    assert reads == [str(tmp_path / "given.csv")]
    # the audit itself is unchanged: 4 primaries (freq < 3), 3 secondaries, nothing exposed
    assert outcome.summary["safe"] is True
    assert (outcome.summary["primary"], outcome.summary["secondary"]) == (4, 3)
    assert outcome.summary["exposed_count"] == 0
