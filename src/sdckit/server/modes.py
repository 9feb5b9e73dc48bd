"""How each protection mode answers a checked query (:class:`~sdckit.server.sql.ParsedQuery`).

* :func:`answer_dp` -- output perturbation (Dwork, McSherry, Nissim & Smith 2006): exact
  aggregates computed in SQL on clamped values, noise from :mod:`sdckit.dp` (exact discrete
  Laplace on a grid, CSPRNG). COUNT: sensitivity 1; SUM: ``max(|lo|, |hi|)`` on the grid of
  :func:`sdckit.dp.queries.sum_query`; AVG: noisy SUM / noisy COUNT with the budget split in
  halves (as :func:`sdckit.dp.queries.dp_mean`); MEDIAN/QUANTILE:
  :func:`sdckit.dp.queries.dp_quantile` (Smith's exponential mechanism over the intervals
  between the cell's sorted values, one release per cell). Several aggregates split the
  query's epsilon equally (sequential composition); the groups of a GROUP BY are disjoint, so
  every group gets the aggregate's whole share (parallel composition, McSherry 2009, PINQ).
  Every declared group is answered, empty ones too (with noise), so a group's absence is not
  revealed.
* :func:`query_sets` + :func:`answer_exact` -- restriction mode: the record ids each group
  selects (for the auditor), then exact COUNT/SUM/AVG.
* :func:`answer_camouflage` -- CVC intervals (Gopal, Garfinkel & Goes 2002, "Confidentiality via
  camouflage", Operations Research 50(3)): each confidential value ``x`` lies in its own
  interval ``[lo, hi]`` drawn once, when the data is loaded (:func:`camouflage_ends`), and
  kept in the database; SUM/AVG answers are the sums of the lower and upper ends; COUNT is
  exact unless the WHERE reads a camouflaged column, then it is the interval [records that
  satisfy it for every point of the intervals, records that satisfy it for some point].
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from sdckit.dp._numbers import power_of_two_at_most
from sdckit.dp.mechanisms import discrete_laplace_variance, laplace_epsilon_floor, laplace_scale
from sdckit.dp.queries import SUM_STEPS, BoundedQuery, dp_quantile, release
from sdckit.server.backends import ID_COLUMN, Backend
from sdckit.server.config import Dataset
from sdckit.server.sql import (
    Aggregate,
    ParsedQuery,
    UnsupportedQuery,
    camouflage_condition,
    clamp,
    column,
    literal,
)

try:
    from sqlglot import exp
except ImportError as _missing:  # pragma: no cover
    raise ImportError("pip install -e '.[server]'") from _missing

__all__ = [
    "ENDS_PREFIX",
    "Answer",
    "Domain",
    "answer_camouflage",
    "answer_dp",
    "answer_exact",
    "camouflage_ends",
    "dp_epsilon_floor",
    "end_columns",
    "query_sets",
]

#: The most GROUP BY cells a query may have (the product of the key domains).
MAX_CELLS = 100_000


@dataclass
class Answer:
    """Rows to return and what the log records."""

    rows: list[dict[str, Any]]
    details: list[dict[str, Any]] = field(default_factory=list)
    noise_variance: float | None = None
    interval_width: float | None = None
    cells: int = 0


@dataclass(frozen=True)
class Domain:
    """The public values of each public key (declared, or read from the data at start)."""

    values: dict[str, list[Any]]

    def cells(self, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """Every combination of the values of ``keys`` (one empty tuple for no keys)."""
        total = math.prod(len(self.values[k]) for k in keys)
        if total > MAX_CELLS:
            raise UnsupportedQuery(
                f"GROUP BY {', '.join(keys)} has {total:,} cells; at most {MAX_CELLS:,}"
            )
        return list(itertools.product(*(self.values[k] for k in keys)))


def _key_alias(i: int) -> str:
    return f"k{i}"


def _select(
    table: str,
    keys: Sequence[str],
    items: Sequence[exp.Expression],
    where: exp.Expression | None,
) -> exp.Select:
    """``SELECT keys..., items AS a0.. FROM table [WHERE] [GROUP BY keys]``, from trees."""
    select = exp.Select(
        expressions=[
            exp.Alias(this=column(k), alias=exp.Identifier(this=_key_alias(i), quoted=True))
            for i, k in enumerate(keys)
        ]
        + [
            exp.Alias(this=e, alias=exp.Identifier(this=f"a{i}", quoted=True))
            for i, e in enumerate(items)
        ]
    )
    select = select.from_(exp.Table(this=exp.Identifier(this=table, quoted=True)), copy=False)
    if where is not None:
        select = select.where(where.copy(), copy=False)
    if keys:
        select = select.group_by(*[column(k) for k in keys], copy=False)
    return select


def _cells_frame(
    backend: Backend,
    table: str,
    keys: Sequence[str],
    items: Sequence[exp.Expression],
    where: exp.Expression | None,
    cells: list[tuple[Any, ...]],
) -> pd.DataFrame:
    """The items per declared cell (rows of cells with no record: NaN; other cells dropped)."""
    sql = _select(table, keys, items, where).sql(dialect=backend.dialect)
    result = backend.frame(sql)
    values = result[[f"a{i}" for i in range(len(items))]]
    if not keys:
        if len(values) == 0:
            return pd.DataFrame(np.nan, index=[0], columns=values.columns)
        return values.reset_index(drop=True)
    index = pd.MultiIndex.from_frame(result[[_key_alias(i) for i in range(len(keys))]])
    values.index = index
    target = pd.MultiIndex.from_tuples(cells, names=index.names)
    return values.reindex(target).reset_index(drop=True)


def _bounds_of(dataset: Dataset, agg: Aggregate) -> tuple[float, float]:
    assert agg.column is not None
    if agg.column not in dataset.bounds:
        raise UnsupportedQuery(
            f"{agg.func.upper()}({agg.column}) needs clamping bounds for {agg.column!r}: add "
            f"{dataset.key('bounds')}.{agg.column}: [lower, upper] to the server config"
        )
    return dataset.bounds[agg.column]


def _grid_sum(col: str, lo: float, hi: float) -> tuple[exp.Expression, Fraction, int]:
    """SQL of the exact grid sum of clamped values, its step and its sensitivity in steps
    (the grid of :func:`sdckit.dp.queries.sum_query`: step the largest power of two
    ``<= max(|lo|, |hi|) / 2**20``)."""
    flo, fhi = Fraction(lo), Fraction(hi)
    step = power_of_two_at_most(max(abs(flo), abs(fhi)) / SUM_STEPS)
    glo, ghi = math.floor(flo / step), math.ceil(fhi / step)
    value = clamp(column(col), lo, hi)
    scaled = (
        exp.Mul(this=value, expression=literal(int(1 / step)))
        if step < 1
        else exp.Div(this=value, expression=literal(int(step)))
    )
    rounded = exp.Cast(
        this=exp.func("ROUND", exp.Paren(this=scaled)), to=exp.DataType.build("bigint")
    )
    grid: exp.Expression = exp.Least(
        this=exp.Greatest(this=rounded, expressions=[literal(glo)]), expressions=[literal(ghi)]
    )
    total = exp.Coalesce(
        this=exp.Cast(this=exp.Sum(this=grid), to=exp.DataType.build("bigint")),
        expressions=[literal(0)],
    )
    return total, step, max(abs(glo), abs(ghi))


def _count_sql(col: str | None) -> exp.Expression:
    return exp.Count(this=exp.Star() if col is None else column(col))


def _variance(scale: Fraction, step: Fraction) -> float:
    """The variance of the noise ``step * Z``, ``Z`` discrete Laplace of ``scale`` grid steps
    (:func:`sdckit.dp.mechanisms.discrete_laplace_variance`, not the continuous ``2 b**2``)."""
    return float(step) ** 2 * discrete_laplace_variance(scale)


def answer_dp(
    backend: Backend,
    dataset: Dataset,
    query: ParsedQuery,
    epsilon: Fraction,
    domain: Domain,
) -> Answer:
    """A dp answer (module docstring); ``epsilon`` is the whole query's budget."""
    cells = domain.cells(query.group_by)
    share = epsilon / len(query.aggregates)
    items: list[exp.Expression] = []
    plan: list[tuple[Aggregate, list[int], Any]] = []
    for agg in query.aggregates:
        if agg.func == "count":
            plan.append((agg, [len(items)], None))
            items.append(_count_sql(agg.column))
        elif agg.func in ("sum", "avg"):
            lo, hi = _bounds_of(dataset, agg)
            total, step, sens = _grid_sum(agg.column or "", lo, hi)
            at = [len(items)]
            items.append(total)
            if agg.func == "avg":
                at.append(len(items))
                items.append(_count_sql(agg.column))
            plan.append((agg, at, (step, sens, lo, hi)))
        else:
            plan.append((agg, [], _bounds_of(dataset, agg)))
    frame = (
        _cells_frame(backend, dataset.table, query.group_by, items, query.where, cells)
        if items
        else None
    )
    results: dict[str, Any] = {}
    details: list[dict[str, Any]] = []
    variance = 0.0
    additive = False

    def noisy(
        grid: np.ndarray, step: Fraction, sens: int, eps: Fraction
    ) -> tuple[Any, float, float]:
        bounded = BoundedQuery("server", grid.astype(np.int64), step, sens, sens)
        out = release(bounded, epsilon=eps)
        values = np.atleast_1d(np.asarray(out.value, dtype=np.float64))
        scale = laplace_scale(Fraction(sens) / eps)
        return values, float(scale * step), _variance(scale, step)

    for agg, at, extra in plan:
        if agg.func == "count":
            assert frame is not None
            grid = frame[f"a{at[0]}"].fillna(0).to_numpy(dtype=np.int64)
            values, scale, var = noisy(grid, Fraction(1), 1, share)
            results[agg.label] = values.astype(np.int64)
            details.append(_noise(agg, share, "discrete_laplace", scale, len(cells), var))
            variance += var * len(cells)
            additive = True
        elif agg.func == "sum":
            assert frame is not None
            step, sens, _, _ = extra
            grid = frame[f"a{at[0]}"].fillna(0).to_numpy(dtype=np.int64)
            values, scale, var = noisy(grid, step, sens, share)
            results[agg.label] = values
            details.append(_noise(agg, share, "laplace_on_grid", scale, len(cells), var))
            variance += var * len(cells)
            additive = True
        elif agg.func == "avg":
            assert frame is not None
            step, sens, lo, hi = extra
            grid = frame[f"a{at[0]}"].fillna(0).to_numpy(dtype=np.int64)
            counts = frame[f"a{at[1]}"].fillna(0).to_numpy(dtype=np.int64)
            sums, _, sum_var = noisy(grid, step, sens, share / 2)
            noisy_counts, _, count_var = noisy(counts, Fraction(1), 1, share / 2)
            safe = np.where(noisy_counts >= 1, noisy_counts, 1.0)
            means = np.where(noisy_counts >= 1, np.clip(sums / safe, lo, hi), (lo + hi) / 2)
            results[agg.label] = means
            entry = _noise(agg, share, "noisy_sum/noisy_count", None, len(cells))
            entry["sum_variance"] = sum_var
            entry["count_variance"] = count_var
            details.append(entry)
            variance += (sum_var + count_var) * len(cells)
            additive = True
        else:
            lo, hi = extra
            results[agg.label] = _quantiles(backend, dataset, query, agg, lo, hi, share, cells)
            details.append(_noise(agg, share, "exponential (quantile)", None, len(cells)))
    rows = _rows(query.group_by, cells, results)
    return Answer(
        rows,
        details,
        noise_variance=variance if additive else None,
        cells=len(cells) * len(query.aggregates),
    )


def _noise(
    agg: Aggregate,
    eps: Fraction,
    mechanism: str,
    scale: float | None,
    cells: int,
    variance: float | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "aggregate": agg.label,
        "epsilon": float(eps),
        "mechanism": mechanism,
        "cells": cells,
    }
    if scale is not None:
        entry["scale"] = scale
        entry["variance"] = variance
    return entry


def dp_epsilon_floor(dataset: Dataset, query: ParsedQuery) -> Fraction:
    """The smallest epsilon :func:`answer_dp` can answer ``query`` with.

    :func:`answer_dp` gives each of the ``k`` aggregates ``epsilon / k``, which AVG halves
    again (noisy SUM, noisy COUNT); each Laplace release of sensitivity ``s`` grid steps needs
    its share ``>= laplace_epsilon_floor(s)`` (:func:`sdckit.dp.mechanisms.laplace_epsilon_floor`:
    the sampler's largest scale). MEDIAN/QUANTILE (exponential mechanism) have no floor. The
    floor depends on the query text and the configured bounds only, never on the data.
    """
    k = len(query.aggregates)
    floor = Fraction(0)
    for agg in query.aggregates:
        if agg.func == "count":
            parts = [1]
        elif agg.func in ("sum", "avg"):
            lo, hi = _bounds_of(dataset, agg)
            sens = _grid_sum(agg.column or "", lo, hi)[2]
            parts = [sens] if agg.func == "sum" else [sens, 1]
        else:
            parts = []
        for sens in parts:
            floor = max(floor, k * len(parts) * laplace_epsilon_floor(Fraction(sens)))
    return floor


def _quantiles(
    backend: Backend,
    dataset: Dataset,
    query: ParsedQuery,
    agg: Aggregate,
    lo: float,
    hi: float,
    eps: Fraction,
    cells: list[tuple[Any, ...]],
) -> np.ndarray:
    """dp quantile per cell (:func:`sdckit.dp.queries.dp_quantile` on each cell's values)."""
    assert agg.column is not None and agg.q is not None
    present = exp.Not(this=exp.Is(this=column(agg.column), expression=exp.Null()))
    where = (
        present
        if query.where is None
        else exp.And(this=exp.Paren(this=query.where.copy()), expression=present)
    )
    keys = query.group_by
    select = exp.Select(
        expressions=[
            exp.Alias(this=column(k), alias=exp.Identifier(this=_key_alias(i), quoted=True))
            for i, k in enumerate(keys)
        ]
        + [exp.Alias(this=clamp(column(agg.column), lo, hi), alias="v")]
    ).from_(exp.Table(this=exp.Identifier(this=dataset.table, quoted=True)), copy=False)
    frame = backend.frame(select.where(where, copy=False).sql(dialect=backend.dialect))
    values = frame["v"].to_numpy(dtype=np.float64)
    if keys:
        codes = pd.MultiIndex.from_tuples(cells).get_indexer(
            pd.MultiIndex.from_frame(frame[[_key_alias(i) for i in range(len(keys))]])
        )
    else:
        codes = np.zeros(values.size, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(cells) + 1))
    out = np.empty(len(cells))
    for i in range(len(cells)):  # one release per cell (a few cells), never per record
        part = values[order[bounds[i] : bounds[i + 1]]]
        out[i] = dp_quantile(part, agg.q, lo, hi, eps).value
    return out


def _rows(
    keys: Sequence[str], cells: list[tuple[Any, ...]], results: dict[str, Any]
) -> list[dict[str, Any]]:
    """One dict per cell: its key values, then each aggregate's value."""
    columns = {label: np.asarray(v).tolist() for label, v in results.items()}
    rows = []
    for i, cell in enumerate(cells):
        row: dict[str, Any] = {k: _plain(v) for k, v in zip(keys, cell, strict=True)}
        for label, values in columns.items():
            row[label] = values[i]
        rows.append(row)
    return rows


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def query_sets(
    backend: Backend, dataset: Dataset, query: ParsedQuery, domain: Domain
) -> tuple[list[tuple[Any, ...]], list[np.ndarray]]:
    """The record ids each declared cell of the query selects (restriction mode)."""
    cells = domain.cells(query.group_by)
    keys = query.group_by
    select = exp.Select(
        expressions=[
            exp.Alias(this=column(k), alias=exp.Identifier(this=_key_alias(i), quoted=True))
            for i, k in enumerate(keys)
        ]
        + [exp.Alias(this=column(ID_COLUMN), alias="id")]
    ).from_(exp.Table(this=exp.Identifier(this=dataset.table, quoted=True)), copy=False)
    if query.where is not None:
        select = select.where(query.where.copy(), copy=False)
    frame = backend.frame(select.sql(dialect=backend.dialect))
    ids = frame["id"].to_numpy(dtype=np.int64)
    if keys:
        codes = pd.MultiIndex.from_tuples(cells).get_indexer(
            pd.MultiIndex.from_frame(frame[[_key_alias(i) for i in range(len(keys))]])
        )
        keep = codes >= 0
        ids, codes = ids[keep], codes[keep]
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(cells) + 1))
        sorted_ids = ids[order]
        sets = [np.sort(sorted_ids[bounds[i] : bounds[i + 1]]) for i in range(len(cells))]
    else:
        sets = [np.sort(ids)]
    return cells, sets


def _exact_items(query: ParsedQuery) -> list[exp.Expression]:
    items: list[exp.Expression] = []
    for agg in query.aggregates:
        if agg.func == "quantile":
            raise UnsupportedQuery(
                "MEDIAN and QUANTILE are answered in dp mode only (an exact median is a "
                "record's value)"
            )
        if agg.func == "count":
            items.append(_count_sql(agg.column))
        else:
            cls = exp.Sum if agg.func == "sum" else exp.Avg
            value = exp.Cast(this=column(agg.column or ""), to=exp.DataType.build("double"))
            items.append(cls(this=value))
    return items


def answer_exact(
    backend: Backend, dataset: Dataset, query: ParsedQuery, cells: list[tuple[Any, ...]]
) -> Answer:
    """Exact COUNT/SUM/AVG per declared cell (restriction mode, after the audit)."""
    items = _exact_items(query)
    frame = _cells_frame(backend, dataset.table, query.group_by, items, query.where, cells)
    results: dict[str, Any] = {}
    for i, agg in enumerate(query.aggregates):
        column_values = frame[f"a{i}"]
        if agg.func == "count":
            results[agg.label] = column_values.fillna(0).to_numpy(dtype=np.int64)
        else:
            results[agg.label] = column_values.astype(object).where(column_values.notna(), None)
    rows = _rows(query.group_by, cells, results)
    return Answer(rows, cells=len(cells) * len(query.aggregates))


#: Prefix of the columns holding each camouflaged value's interval ends (never queryable).
ENDS_PREFIX = "_sdc_"


def end_columns(col: str) -> tuple[str, str]:
    """The names of the lower and upper interval-end columns of camouflaged column ``col``."""
    return f"{ENDS_PREFIX}lo_{col}", f"{ENDS_PREFIX}hi_{col}"


def camouflage_ends(
    x: np.ndarray, range_fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each value's camouflage interval (the box ``Pi`` of CVC, Gopal, Garfinkel & Goes 2002):
    width ``w = r * max(|x|, m) * (1 + V)`` with ``m`` the column's mean ``|x|`` (so a zero
    is not published as the exact interval [0, 0]) and ``V ~ U(0, 1)``, placed with the value
    at a uniform position ``U ~ U(0, 1)`` inside: ``lo = x - U w``, ``hi = lo + w``.

    A symmetric interval ``[x - r|x|, x + r|x|]`` would be broken by a one-record query (its
    midpoint is ``x``, its width ``2r|x|``); random widths and positions, drawn once and
    stored, leave an intruder with the interval and nothing inside it, however often asked.
    Missing values stay missing."""
    x = np.asarray(x, dtype=np.float64)
    present = ~np.isnan(x)
    scale = float(np.abs(x[present]).mean()) if present.any() else 1.0
    scale = scale if scale > 0 else 1.0
    w = range_fraction * np.maximum(np.abs(x), scale) * (1.0 + rng.random(len(x)))
    lo = x - rng.random(len(x)) * w
    hi = lo + w
    return np.where(present, lo, np.nan), np.where(present, hi, np.nan)


def camouflaged_columns(dataset: Dataset, columns: dict[str, str]) -> frozenset[str]:
    """The camouflaged columns: ``camouflage.columns``, else the numeric columns with
    ``bounds``."""
    names = dataset.camouflage_columns
    if names is None:
        names = [c for c in dataset.bounds if columns.get(c) == "numeric"]
    return frozenset(names)


def answer_camouflage(
    backend: Backend,
    dataset: Dataset,
    query: ParsedQuery,
    domain: Domain,
    camouflaged: frozenset[str],
) -> Answer:
    """CVC interval answers (module docstring); every aggregate is ``{lower, upper, width}``."""
    cells = domain.cells(query.group_by)

    def ends(col: str) -> tuple[exp.Expression, exp.Expression]:
        lo, hi = end_columns(col)
        double = exp.DataType.build("double")
        return exp.Cast(this=column(lo), to=double), exp.Cast(this=column(hi), to=double.copy())

    uncertain = bool(query.where_columns & camouflaged)
    items: list[exp.Expression] = []
    for agg in query.aggregates:
        if agg.func == "quantile":
            raise UnsupportedQuery("MEDIAN and QUANTILE are answered in dp mode only")
        if agg.func != "count" and uncertain:
            raise UnsupportedQuery(
                f"{agg.label}: SUM and AVG cannot be answered when WHERE reads a camouflaged "
                f"column ({', '.join(sorted(query.where_columns & camouflaged))}); only COUNT can"
            )
        if agg.func == "count":
            if not uncertain:
                items += [_count_sql(agg.column)] * 2
                continue
            assert query.where is not None
            for certain in (True, False):
                condition = camouflage_condition(query.where, camouflaged, ends, certain)
                if agg.column is not None:
                    present = exp.Not(this=exp.Is(this=column(agg.column), expression=exp.Null()))
                    condition = exp.And(this=exp.Paren(this=condition), expression=present)
                case = exp.Case(ifs=[exp.If(this=condition, true=literal(1))], default=literal(0))
                items.append(exp.Coalesce(this=exp.Sum(this=case), expressions=[literal(0)]))
        else:
            col = agg.column or ""
            if col in camouflaged:
                lo, hi = ends(col)
            else:
                value = exp.Cast(this=column(col), to=exp.DataType.build("double"))
                lo, hi = value, value.copy()
            cls = exp.Sum if agg.func == "sum" else exp.Avg
            items += [cls(this=lo), cls(this=hi)]
    where = None if uncertain else query.where
    frame = _cells_frame(backend, dataset.table, query.group_by, items, where, cells)
    results: dict[str, Any] = {}
    widths: list[np.ndarray] = []
    for i, agg in enumerate(query.aggregates):
        lower = frame[f"a{2 * i}"].to_numpy(dtype=np.float64)
        upper = frame[f"a{2 * i + 1}"].to_numpy(dtype=np.float64)
        if agg.func == "count":
            lower, upper = np.nan_to_num(lower), np.nan_to_num(upper)
        width = upper - lower
        widths.append(width[~np.isnan(width)])
        results[agg.label] = [
            None
            if math.isnan(lo_)
            else {
                "lower": int(lo_) if agg.func == "count" else lo_,
                "upper": int(hi_) if agg.func == "count" else hi_,
                "width": w,
            }
            for lo_, hi_, w in zip(lower.tolist(), upper.tolist(), width.tolist(), strict=True)
        ]
    rows = _rows(query.group_by, cells, results)
    every = np.concatenate(widths) if widths else np.zeros(0)
    details = [
        {"aggregate": agg.label, "interval_width_max": float(np.max(w)) if w.size else None}
        for agg, w in zip(query.aggregates, widths, strict=True)
    ]
    return Answer(
        rows,
        details,
        interval_width=float(every.mean()) if every.size else None,
        cells=len(cells) * len(query.aggregates),
    )
