"""Tests: ``method: audit`` of ``sdckit table`` -- a table protected by another tool (cells
with a status column) is audited: feasibility intervals of its suppressed cells, primaries
from the rules or from the statuses, exposed cells named; bad input is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sdckit import cli
from sdckit.tables import Dimension, FrequencyRule, Table
from sdckit.tables.protect import audit_table

# region x sector, frequencies and values of the cells (totals included), as tau-Argus or
# sdcTable would publish them beside their suppression status (sdcTable's codes).
CELLS = pd.DataFrame(
    {
        "region": ["Total"] * 3 + ["E"] * 3 + ["N"] * 3 + ["S"] * 3,
        "sector": ["Total", "a", "b"] * 4,
        "value": [835, 260, 575, 245, 95, 150, 400, 90, 310, 190, 75, 115],
        "freq": [15, 7, 8, 6, 2, 4, 4, 2, 2, 5, 3, 2],
        "status": ["s", "s", "s", "x", "u", "s", "x", "u", "u", "s", "x", "u"],
    }
)


def main(argv: list[str]) -> int:
    """Run ``sdckit ARGV`` in-process; its exit code."""
    import sys

    saved = sys.argv
    sys.argv = ["sdckit", *argv]
    try:
        cli.main()
    except SystemExit as stop:
        return int(stop.code or 0)
    finally:
        sys.argv = saved
    return 0


def _job(tmp_path: Path, cells: pd.DataFrame, **overrides) -> Path:
    cells.to_csv(tmp_path / "given.csv", index=False)
    doc = {
        "cells": {"path": "given.csv"},
        "dimensions": {"region": {}, "sector": {}},
        "method": "audit",
        "output": {"cells": "audited.csv", "report": "audit.html", "json": "audit.json"},
    }
    doc.update(overrides)
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _audited(tmp_path: Path) -> pd.DataFrame:
    return pd.read_csv(tmp_path / "audited.csv", keep_default_na=False, na_values=[""])


def test_a_safe_pattern_gets_its_feasibility_intervals(tmp_path: Path) -> None:
    # hand-computed: N,b in [235, 425]: column b 575 = E,b 150 + N,b + S,b with S,b in
    # [0, 190] (S total 190 published); N,b <= N total <= 835-245... the LP bounds are
    # N,b = 425 - S,b ... lower 575-150-190 = 235, upper 575-150-0 = 425.
    job = _job(tmp_path, CELLS, rules=[{"frequency": {"threshold": 3}}])
    assert main(["table", "--config", str(job), "--quiet"]) == 0
    summary = json.loads((tmp_path / "audit.json").read_text())
    assert summary["method"] == "audit"
    assert summary["safe"] is True
    assert summary["primary"] == 4  # freq < 3: E,a N,a N,b S,b (N total has 4)
    assert summary["secondary"] == 3  # E total, N total, S,a
    assert summary["exposed_count"] == 0
    cells = _audited(tmp_path).set_index(["region", "sector"])
    assert cells.loc[("N", "b"), ["audit_lower", "audit_upper"]].tolist() == [235.0, 425.0]
    assert cells.loc[("E", "Total"), ["audit_lower", "audit_upper"]].tolist() == [150.0, 410.0]
    assert cells.loc[("S", "a"), ["audit_lower", "audit_upper"]].tolist() == [0.0, 190.0]
    assert np.isnan(cells.loc[("N", "b"), "published"])
    assert cells.loc[("E", "b"), "published"] == 150.0
    assert cells.loc[("N", "Total"), "status"] == "secondary"


def test_publishing_a_secondary_cell_exposes_two_primaries(tmp_path: Path, capsys) -> None:
    # with S,a published: S,b = 190 - 75 exactly, then N,b = 575 - 150 - 115 exactly
    given = CELLS.copy()
    given.loc[(given.region == "S") & (given.sector == "a"), "status"] = "s"
    job = _job(tmp_path, given)
    assert main(["table", "--config", str(job)]) == 0  # a finding, not an error
    summary = json.loads((tmp_path / "audit.json").read_text())
    assert summary["safe"] is False
    assert summary["primaries_from"] == "status"
    assert summary["exposed_count"] == 2
    assert {(c["region"], c["sector"]) for c in summary["exposed"]} == {("N", "b"), ("S", "b")}
    cells = _audited(tmp_path).set_index(["region", "sector"])
    assert cells.loc[("S", "b"), ["audit_lower", "audit_upper"]].tolist() == [115.0, 115.0]
    printed = capsys.readouterr().out
    assert "exposed" in printed and "region=N, sector=b" in printed


def test_a_sensitive_cell_the_other_tool_published_is_exposed() -> None:
    dims = [Dimension.flat("region", ["E", "N", "S"]), Dimension.flat("sector", ["a", "b"])]
    table = Table.from_cells(CELLS, {"region": None, "sector": None}, value="value")
    assert [d.name for d in table.dimensions] == [d.name for d in dims]
    given = CELLS.copy()
    given.loc[(given.region == "E") & (given.sector == "a"), "status"] = "s"  # freq 2
    prot = audit_table(table, given, [FrequencyRule(3)])
    assert not prot.safe
    assert prot.details["sensitive_published"] == 1
    assert {"region": "E", "sector": "a"} in prot.details["exposed"]


def test_other_tools_status_codes_are_named_in_the_job(tmp_path: Path) -> None:
    # tau-Argus style: A (frequency) and D (dominance) primaries, m secondary, V safe
    given = CELLS.copy()
    given["flag"] = given["status"].map({"u": "A", "x": "m", "s": "V"})
    given.loc[(given.region == "E") & (given.sector == "a"), "flag"] = "D"
    job = _job(
        tmp_path,
        given.drop(columns="status"),
        options={
            "status": "flag",
            "primary_statuses": ["A", "D"],
            "secondary_statuses": ["m"],
            "published_statuses": ["V"],
        },
    )
    assert main(["table", "--config", str(job), "--quiet"]) == 0
    summary = json.loads((tmp_path / "audit.json").read_text())
    assert summary["safe"] is True
    assert (summary["primary"], summary["secondary"]) == (4, 3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"options": {"status": "flag"}}, "no column 'flag'"),
        ({"options": {"primary_statuses": "u"}}, "primary_statuses must be a list of codes"),
    ],
)
def test_bad_audit_jobs_are_usage_errors(tmp_path: Path, capsys, change, message) -> None:
    job = _job(tmp_path, CELLS, **change)
    assert main(["table", "--config", str(job), "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "audit.json").exists()


def test_an_unknown_status_code_names_it(tmp_path: Path, capsys) -> None:
    given = CELLS.copy()
    given.loc[3, "status"] = "B"
    job = _job(tmp_path, given)
    assert main(["table", "--config", str(job), "--quiet"]) == 2
    assert "unknown cell status 'b'" in capsys.readouterr().err


def test_audit_needs_cells_not_microdata(tmp_path: Path, capsys) -> None:
    micro = pd.DataFrame({"region": ["E", "N"], "sector": ["a", "b"], "turnover": [1, 2]})
    micro.to_csv(tmp_path / "micro.csv", index=False)
    doc = {
        "input": {"path": "micro.csv"},
        "dimensions": {"region": {}, "sector": {}},
        "method": "audit",
        "output": {"json": "audit.json"},
    }
    (tmp_path / "j.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["table", "--config", str(tmp_path / "j.yaml"), "--quiet"]) == 2
    assert "`cells:` with a status column" in capsys.readouterr().err


def test_a_pattern_written_by_sdckit_audits_the_same(tmp_path: Path) -> None:
    """Round trip: the cells file of an optimal job read back by an audit job gives the
    same statuses and intervals."""
    micro = pd.DataFrame(
        {
            "region": list("NNNNSSSSSEEEEEE"),
            "sector": list("aabbaaabbaabbbb"),
            "turnover": [50, 40, 300, 10, 20, 25, 30, 60, 55, 90, 5, 30, 35, 40, 45],
        }
    )
    micro.to_csv(tmp_path / "micro.csv", index=False)
    doc = {
        "input": {"path": "micro.csv"},
        "dimensions": {"region": {}, "sector": {}},
        "response": "turnover",
        "rules": [{"frequency": {"threshold": 3}}],
        "method": "optimal",
        "output": {"cells": "cells.csv"},
    }
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["table", "--config", str(tmp_path / "p.yaml"), "--quiet"]) == 0
    protected = pd.read_csv(tmp_path / "cells.csv", keep_default_na=False, na_values=[""])
    job = _job(
        tmp_path,
        protected[["region", "sector", "value", "freq", "status"]],
        rules=[{"frequency": {"threshold": 3}}],
    )
    assert main(["table", "--config", str(job), "--quiet"]) == 0
    back = _audited(tmp_path)
    pd.testing.assert_frame_equal(
        back[["region", "sector", "status", "audit_lower", "audit_upper"]],
        protected[["region", "sector", "status", "audit_lower", "audit_upper"]],
    )
