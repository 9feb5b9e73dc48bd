"""Helpers of the tests that compare the Spark engine with the local one: a Spark release
read back from its part files, rows compared as sets, summaries without their timings."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def no_time(summary: dict) -> dict:
    """A summary without what differs between runs (timing, run id) and the Spark engine's
    note of where the classes were counted (``frequency_set``)."""
    skip = ("elapsed_seconds", "run_id", "frequency_set")
    return {k: v for k, v in summary.items() if k not in skip}


def released_rows(folder: Path, delimiter: str = ",") -> pd.DataFrame:
    """A Spark release folder's rows, read from its part files (CSV as text, or Parquet)."""
    parts = sorted(folder.glob("part-*"))
    assert parts, f"no part files in {folder}"
    if parts[0].suffix == ".csv":
        frames = [pd.read_csv(p, sep=delimiter, dtype=str, keep_default_na=False) for p in parts]
    else:
        frames = [pd.read_parquet(p) for p in parts]
    return pd.concat(frames, ignore_index=True)


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two tables hold the same rows as text, in any order."""
    a = a.astype(str)
    b = b.astype(str)[list(a.columns)]
    key = list(a.columns)
    return (
        a.sort_values(key).reset_index(drop=True).equals(b.sort_values(key).reset_index(drop=True))
    )


def assert_same_anonymization(local, remote, out: Path) -> None:
    """A Spark anonymization (``remote``, its release at ``out``) equals the local one: the
    transformation, suppression, metrics, models, nodes checked, risks and released rows."""
    assert remote.details["engine"] == "spark"
    assert remote.transformation == local.transformation
    assert remote.suppressed_records == local.suppressed_records
    assert remote.metrics == local.metrics
    assert remote.models_satisfied == local.models_satisfied
    assert remote.nodes_checked == local.nodes_checked
    assert no_time(remote.risk_before) == no_time(local.risk_before)
    assert no_time(remote.risk_after) == no_time(local.risk_after)
    assert same_rows(local.data, released_rows(out))
