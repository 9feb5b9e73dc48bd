"""What the web app's pages compute from a project's data: the risk each quasi-identifier
adds, the risk page, the before/after distributions and the release of a lattice node.

Every number comes from the library the command line uses (:func:`sdckit.risk.analyze`,
:func:`sdckit.models.check`, the hierarchies of the job loader); this module only selects and
arranges them for a page.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import ConfigError

__all__ = [
    "DataCache",
    "distribution",
    "node_release",
    "qi_contributions",
    "record_risk_table",
]


class DataCache:
    """The last few data sets read, keyed by file path and modification time, so that the
    pages of one project do not read the file again at every click."""

    def __init__(self, size: int = 3) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int, str | None], pd.DataFrame] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: Path, delimiter: str | None) -> pd.DataFrame:
        """The data of ``path`` (read with :func:`sdckit.core.io.read_table`)."""
        from sdckit.core.io import read_table

        key = (str(path), path.stat().st_mtime_ns, delimiter)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        data = read_table(path, delimiter)
        with self._lock:
            self._items[key] = data
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return data


def _group_sizes(codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per record, the size of its class over the given code columns; and the class sizes
    (the grouping of the frequency-set engine, :func:`sdckit.core.frequency.group_keys`)."""
    from sdckit.core.frequency import group_keys

    cardinalities = [int(c.max()) + 1 if len(c) else 1 for c in codes]
    group, n_groups, _ = group_keys(codes, cardinalities, ordered=False)
    counts = np.bincount(group, minlength=n_groups)
    return counts[group], counts


def qi_contributions(data: pd.DataFrame, quasi_identifiers: Sequence[str]) -> dict[str, Any]:
    """The risk the chosen quasi-identifiers create and what each one adds.

    For all QIs together: records, equivalence classes, sample uniques (records alone in their
    class) and records in classes smaller than 5. For each QI: its distinct values, its own
    distinction and separation (:mod:`sdckit.risk.distinction`, the measures of the
    ``analyze`` command) and how many sample uniques disappear without it (its contribution
    to uniqueness). Missing values count as a value here (a first look; the risk page applies
    the wildcard rule of ``sdckit analyze``).
    """
    from sdckit.risk.distinction import distinction, separation

    qis = list(quasi_identifiers)
    n = len(data)
    codes = {q: pd.factorize(data[q], sort=False, use_na_sentinel=False)[0] for q in qis}
    out: dict[str, Any] = {"records": n, "quasi_identifiers": qis, "per_attribute": []}
    if not qis or n == 0:
        return out
    sizes, classes = _group_sizes([codes[q] for q in qis])
    uniques = int(np.count_nonzero(sizes == 1))
    out.update(
        classes=int(len(classes)),
        sample_uniques=uniques,
        sample_uniques_share=uniques / n,
        records_below_5=int(np.count_nonzero(sizes < 5)),
    )
    for q in qis:
        own = np.bincount(codes[q])
        others = [codes[o] for o in qis if o != q]
        without = int(np.count_nonzero(_group_sizes(others)[0] == 1)) if others else 0
        out["per_attribute"].append(
            {
                "attribute": q,
                "distinct": int(len(own)),
                "distinction": distinction(own),
                "separation": separation(own),
                "uniques_added": uniques - without,
            }
        )
    return out


def record_risk_table(
    data: pd.DataFrame,
    record_risk: np.ndarray,
    *,
    sort: str = "risk",
    descending: bool = True,
    min_risk: float = 0.0,
    search: str = "",
    page: int = 1,
    page_size: int = 25,
) -> dict[str, Any]:
    """One page of the per-record risk table: rows filtered by a minimum risk and a text
    (any column contains it, case-insensitive), sorted by ``sort`` (``risk`` or a column)."""
    frame = data.copy(deep=False)
    frame.insert(0, "risk", record_risk)
    frame.insert(0, "row", np.arange(1, len(frame) + 1))
    keep = frame["risk"].to_numpy() >= min_risk
    if search:
        needle = search.lower()
        hit = np.zeros(len(frame), dtype=bool)
        for column in data.columns:
            hit |= (
                frame[column].astype(str).str.lower().str.contains(needle, regex=False).to_numpy()
            )
        keep &= hit
    frame = frame[keep]
    if sort not in frame.columns:
        raise ConfigError(f"cannot sort by {sort!r}: no such column")
    frame = frame.sort_values([sort, "row"], ascending=[not descending, True], kind="stable")
    total = len(frame)
    pages = max(1, -(-total // page_size))
    page = min(max(1, page), pages)
    rows = frame.iloc[(page - 1) * page_size : page * page_size]
    return {
        "columns": list(rows.columns),
        "rows": rows.astype(object).where(rows.notna(), "").values.tolist(),
        "total": total,
        "page": page,
        "pages": pages,
    }


def _shares(values: pd.Series, top: int = 25) -> tuple[list[str], list[float]]:
    counts = values.astype(str).value_counts()
    shares = counts / max(1, len(values))
    shares = shares.head(top)
    return [str(v) for v in shares.index], [float(v) for v in shares.to_numpy()]


def distribution(
    original: pd.DataFrame,
    released: pd.DataFrame,
    column: str,
    hierarchy: Any = None,
    level: int = 0,
) -> dict[str, Any]:
    """The before/after figure of ``column``: the shares of its 25 most frequent values in
    the original and in the release (numbers binned on common edges when both are numeric).
    A column the release generalized (``level`` > 0 of ``hierarchy``) is compared on the
    released categories: the original's values are generalized to that level first, so
    ``20-39`` of the release stands beside the original's records aged 20 to 39 (a
    suppressed value, ``*``, is a category of its own)."""
    from sdckit.ui.figures import comparison_bars

    if column not in original.columns:
        raise ConfigError(f"column {column!r} is not in the data")
    if column not in released.columns:
        raise ConfigError(f"column {column!r} is not in the release (it was dropped)")
    if hierarchy is not None and level > 0:
        values = original[column].astype(str).to_numpy()
        before_values = pd.Series(hierarchy.generalize(values, int(level)))
        after_labels, after_shares = _shares(released[column])
        counts = before_values.astype(str).value_counts() / max(1, len(before_values))
        before_shares = [float(counts.get(label, 0.0)) for label in after_labels]
        return comparison_bars((after_labels, before_shares), (after_labels, after_shares), column)
    before = pd.to_numeric(original[column], errors="coerce")
    after = pd.to_numeric(released[column], errors="coerce")
    numeric = before.notna().mean() > 0.95 and after.notna().mean() > 0.95
    if numeric and before.nunique() > 25:
        edges = np.histogram_bin_edges(np.concatenate([before.dropna(), after.dropna()]), bins=20)
        labels = [f"{edges[i]:.4g}–{edges[i + 1]:.4g}" for i in range(len(edges) - 1)]
        b = np.histogram(before.dropna(), edges)[0] / max(1, len(before))
        a = np.histogram(after.dropna(), edges)[0] / max(1, len(after))
        return comparison_bars((labels, b.tolist()), (labels, a.tolist()), column)
    return comparison_bars(_shares(original[column]), _shares(released[column]), column)


def node_release(job: Any, data: pd.DataFrame, levels: Sequence[int], rows: int = 15):
    """The release a transformation of the lattice gives: the models' verdict on the data
    generalized to ``levels`` (:func:`sdckit.models.check`, before suppression), its classes,
    and the first ``rows`` rows generalized (one column per quasi-identifier)."""
    from sdckit.models import check

    schema = job.schema
    qis = list(schema.quasi_identifiers)
    if len(levels) != len(qis):
        raise ConfigError(
            f"a transformation gives one level per quasi-identifier ({len(qis)}), got {len(levels)}"
        )
    result = check(data, schema, job.models, levels=list(levels))
    head = data.head(rows).copy()
    for q, level in zip(qis, levels, strict=True):
        hierarchy = schema.hierarchy(q)
        if hierarchy is not None and level > 0:
            head[q] = hierarchy.generalize(head[q].astype(str).to_numpy(), int(level))
    return result, head
