"""Builders that derive generalization hierarchies from the values of a column.

They follow the four builder families of ARX (``HierarchyBuilderIntervalBased``,
``HierarchyBuilderOrderBased``, ``HierarchyBuilderRedactionBased``, ``HierarchyBuilderDate``;
Prasser & Kohlmayer 2015) with simpler, explicit parameters. Every builder returns a
validated :class:`~sdckit.core.hierarchy.Hierarchy` whose last level is a single root (``*``;
for masking the all-mask string), so it can be written with ``to_csv`` and read back by
:func:`~sdckit.core.hierarchy.read_hierarchy` unchanged.

Values are taken in canonical text form (:func:`sdckit.core.encoding.as_text`); each
distinct text becomes one leaf. In the interval, order and date builders the missing value
``""`` is a leaf of its own that stays ``""`` at every level below the root (missing values are
data and are not merged with real categories).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from sdckit.core.encoding import MISSING_TEXT, as_text
from sdckit.core.hierarchy import Hierarchy, IntervalShares
from sdckit.errors import HierarchyError, preview

__all__ = ["interval_hierarchy", "order_hierarchy", "masking_hierarchy", "date_hierarchy"]

ROOT = "*"


# ---------------------------------------------------------------------------- helpers
def _distinct(values) -> np.ndarray:
    """Distinct canonical texts of ``values`` (object array, first-appearance order)."""
    return np.asarray(pd.unique(as_text(values)), dtype=object)


def _finish(columns: list[np.ndarray], name: str, root: str = ROOT) -> Hierarchy:
    """Stack level columns into a Hierarchy, appending a ``root`` level unless already rooted."""
    last = columns[-1]
    if len(columns) == 1 or not (last == root).all():
        columns = [*columns, np.full(len(columns[0]), root, dtype=object)]
    table = np.empty((len(columns[0]), len(columns)), dtype=object)
    for h, col in enumerate(columns):
        table[:, h] = col
    return Hierarchy(table, name=name)


def _only_missing(missing: np.ndarray, n_levels: int, name: str, builder: str) -> Hierarchy:
    """The hierarchy of a column whose only value is missing: ``""`` at every level, then ``*``."""
    if missing.size == 0:
        raise HierarchyError(f"{builder}: no values given; pass the column's values.")
    return _finish([missing.astype(object)] * (n_levels + 1), name)


def _parse_numbers(texts: np.ndarray, builder: str) -> np.ndarray:
    """Parse texts as finite floats; the error names the first unparsable value."""
    nums = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    bad = ~np.isfinite(nums)
    if bad.any():
        v = texts[int(np.argmax(bad))]
        raise HierarchyError(
            f"{builder}: value {v!r} is not a finite number ({int(bad.sum())} such value(s)); "
            "fix the data or use order_hierarchy/masking_hierarchy for non-numeric columns."
        )
    return nums


def _fmt(x: float) -> str:
    """Short text of a bound: integral values without ``.0``, others to 12 significant digits."""
    r = float(f"{x:.12g}")
    if r == int(r) and abs(r) < 1e15:
        return str(int(r))
    return repr(r)


def _check_nesting(steps: Sequence, what: str) -> list[float]:
    """Validate positive, increasing, nested step sizes (each a multiple of the previous)."""
    try:
        out = [float(s) for s in steps]
    except (TypeError, ValueError):
        raise HierarchyError(f"{what} must be a list of positive numbers, got {steps!r}.") from None
    for k, s in enumerate(out):
        if not np.isfinite(s) or s <= 0:
            raise HierarchyError(f"{what}[{k}] = {steps[k]!r} must be a positive number.")
        if k:
            ratio = s / out[k - 1]
            if ratio < 1 or abs(ratio - round(ratio)) > 1e-9 * max(1.0, ratio):
                raise HierarchyError(
                    f"{what} must nest: {what}[{k}] = {steps[k]!r} is not a multiple of "
                    f"{what}[{k - 1}] = {steps[k - 1]!r}; otherwise a group of level {k} would "
                    f"be split across two groups of level {k + 1} (not a tree). Use e.g. "
                    f"{[steps[0], 2 * steps[0], 4 * steps[0]]!r}."
                )
    return out


def _numeric_aware_sort(texts: np.ndarray) -> np.ndarray:
    """Sort texts numerically when all parse as finite numbers, else lexicographically."""
    nums = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    if len(texts) and np.isfinite(nums).all():
        return texts[np.lexsort((texts.astype(str), nums))]
    return texts[np.argsort(texts.astype(str), kind="stable")]


# ---------------------------------------------------------------------------- intervals
def _interval_labels(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``[lo, hi)`` labels, formatting each distinct interval once."""
    pairs = np.stack([lo, hi], axis=1)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    texts = np.array([f"[{_fmt(a)}, {_fmt(b)})" for a, b in uniq], dtype=object)
    return texts[inverse.ravel()]


def check_interval_parameters(
    widths: Sequence[float] | None,
    breakpoints: Sequence[Sequence[float]] | None,
    bottom: float | None,
    top: float | None,
) -> None:
    """The checks :func:`interval_hierarchy` makes of its parameters, without any value
    (HierarchyError): exactly one of ``widths`` and ``breakpoints``, ``bottom < top``,
    positive nested widths or sorted breakpoints."""
    builder = "interval_hierarchy"
    if (widths is None) == (breakpoints is None):
        raise HierarchyError(
            f"{builder}: give exactly one of widths= (e.g. [5, 10, 20]) or "
            "breakpoints= (one sorted list of cut points per level)."
        )
    if bottom is not None and top is not None and not float(bottom) < float(top):
        raise HierarchyError(f"{builder}: bottom={bottom!r} must be smaller than top={top!r}.")
    if widths is not None:
        _check_nesting(widths, "widths")
    else:
        _check_breakpoints(breakpoints, bottom, top)


def interval_hierarchy(
    values,
    widths: Sequence[float] | None = None,
    breakpoints: Sequence[Sequence[float]] | None = None,
    bottom: float | None = None,
    top: float | None = None,
    name: str = "",
) -> Hierarchy:
    """Hierarchy of nested closed-open intervals for a numeric column.

    Follows ARX's interval-based builder (``HierarchyBuilderIntervalBased``: intervals
    ``[min, max)``, grouped level by level, with bottom/top coding bounds). Leaves are the
    distinct values sorted numerically; each level ``k >= 1`` maps a value ``x`` to

    * ``widths`` mode: ``[o + j*w_k, o + (j+1)*w_k)`` with ``j = floor((x - o) / w_k)`` and
      origin ``o = bottom`` if given, else 0. Widths must nest (each a multiple of the
      previous), so every interval lies inside one interval of the next level.
    * ``breakpoints`` mode: ``[b_i, b_{i+1})`` for the level's sorted cut points; values below
      the first cut get ``<b_0`` and values at or above the last get ``>=b_m``. Each level's
      cut points must be a subset of the previous level's (nesting).

    With ``bottom``/``top`` (coding bounds), values ``< bottom`` become ``<bottom`` and values
    ``>= top`` become ``>=top`` at every level >= 1, and intervals are clipped to
    ``[bottom, top)``. A final ``*`` level is appended. Missing values (``""``) stay ``""``.

    Where the builder's range ``[lower, upper)`` is known -- ``[bottom, top)`` in ``widths``
    mode (both given), the first and last cut point of the finest level in ``breakpoints``
    mode (ARX's default range bounds: the first interval's minimum and the last interval's
    maximum) -- and every value lies in an interval at every level (none coded as ``<b`` or
    ``>=b``, which ARX refuses as outside the range), the hierarchy carries ARX's interval
    domain shares (:class:`~sdckit.core.hierarchy.IntervalShares`, ARX
    ``DomainShareInterval``): ``1 / (upper - lower)`` for a value, ``(max - min) / (upper -
    lower)`` for an interval, 1 for ``*``.
    """
    builder = "interval_hierarchy"
    check_interval_parameters(widths, breakpoints, bottom, top)
    texts = _distinct(values)
    missing_texts = texts[texts == MISSING_TEXT]
    texts = texts[texts != MISSING_TEXT]
    n_levels = len(widths) if widths is not None else len(breakpoints or ())
    if texts.size == 0:
        return _only_missing(missing_texts, n_levels, name, builder)
    nums = _parse_numbers(texts, builder)
    order = np.lexsort((texts.astype(str), nums))
    texts, x = texts[order], nums[order]
    below = np.zeros(len(x), bool) if bottom is None else x < float(bottom)
    above = np.zeros(len(x), bool) if top is None else x >= float(top)
    columns: list[np.ndarray] = [texts]
    # per interval level, each value's interval [lo, hi) (nan: coded outside the range), and
    # the builder's range (None where it has none), for ARX's interval domain shares
    bounds: list[tuple[np.ndarray, np.ndarray]] = []
    domain: tuple[float, float] | None = None

    if widths is not None:
        w = _check_nesting(widths, "widths")
        origin = 0.0 if bottom is None else float(bottom)
        if w:
            # index at the finest level; a quotient within 1e-9 of an integer is that integer,
            # so 0.3 with width 0.1 falls in [0.3, 0.4) as its decimal label says
            q = (x - origin) / w[0]
            near = np.round(q)
            j = np.where(
                np.abs(q - near) <= 1e-9 * np.maximum(1.0, np.abs(q)), near, np.floor(q)
            ).astype(np.int64)
        for wk in w:
            ratio = round(wk / w[0])
            jk = np.floor_divide(j, ratio)
            lo = origin + jk * wk
            hi = lo + wk
            if top is not None:
                hi = np.minimum(hi, float(top))
            columns.append(_interval_labels(lo, hi))
            bounds.append((lo.astype(float), hi.astype(float)))
        if bottom is not None and top is not None:
            domain = (float(bottom), float(top))
    else:
        cuts_per_level = _check_breakpoints(breakpoints, bottom, top)
        domain = (float(cuts_per_level[0][0]), float(cuts_per_level[0][-1]))
        for cuts in cuts_per_level:
            i = np.searchsorted(cuts, x, side="right") - 1
            inside = (i >= 0) & (i < len(cuts) - 1)
            at = np.clip(i, 0, len(cuts) - 2)
            nan = np.full(len(x), np.nan)
            bounds.append((np.where(inside, cuts[at], nan), np.where(inside, cuts[at + 1], nan)))
            col = np.empty(len(x), dtype=object)
            if inside.any():
                col[inside] = _interval_labels(cuts[i[inside]], cuts[i[inside] + 1])
            col[i < 0] = f"<{_fmt(cuts[0])}"
            col[i >= len(cuts) - 1] = f">={_fmt(cuts[-1])}"
            columns.append(col)
    for col in columns[1:]:
        if bottom is not None:
            col[below] = f"<{_fmt(float(bottom))}"
        if top is not None:
            col[above] = f">={_fmt(float(top))}"
    if missing_texts.size:
        columns = [np.concatenate([c, missing_texts]) for c in columns]
    hierarchy = _finish(columns, name)
    if domain is not None and not (below.any() or above.any()):
        hierarchy.interval_shares = _interval_shares(hierarchy, bounds, domain, len(missing_texts))
    return hierarchy


def _interval_shares(
    hierarchy: Hierarchy,
    bounds: list[tuple[np.ndarray, np.ndarray]],
    domain: tuple[float, float],
    n_missing: int,
) -> IntervalShares | None:
    """ARX's ``DomainShareInterval`` shares of an interval hierarchy (rows: the values in
    ``bounds``' order, then ``n_missing`` missing ones): ``1 / D`` at level 0 and for a
    missing value, ``(hi - lo) / D`` for an interval, 1 at the root, ``D = upper - lower``;
    None where a value lies outside every interval of some level or the range is empty."""
    size = domain[1] - domain[0]
    if not size > 0 or any(np.isnan(lo).any() for lo, _ in bounds):
        return None
    shares = [np.full(len(hierarchy.labels[0]), 1.0 / size)]
    for level, (lo, hi) in enumerate(bounds, start=1):
        per_row = np.concatenate([(hi - lo) / size, np.full(n_missing, 1.0 / size)])
        per_code = np.empty(len(hierarchy.labels[level]))
        per_code[hierarchy.levels[level]] = per_row  # one interval per label
        shares.append(per_code)
    shares += [np.ones(len(hierarchy.labels[h])) for h in range(len(shares), hierarchy.height)]
    return IntervalShares(size, tuple(shares))


def _check_breakpoints(breakpoints, bottom, top) -> list[np.ndarray]:
    """Validate per-level cut points (sorted, nested) and merge the coding bounds into them."""
    if (
        isinstance(breakpoints, (str, bytes))
        or not isinstance(breakpoints, Sequence)
        or not all(isinstance(b, Sequence) and not isinstance(b, str) for b in breakpoints)
    ):
        raise HierarchyError(
            "interval_hierarchy: breakpoints must be a list with one list of "
            f"cut points per level, e.g. [[0, 18, 65], [0, 65]]; got "
            f"{breakpoints!r}."
        )
    out: list[np.ndarray] = []
    raw_prev = np.empty(0)
    for k, level in enumerate(breakpoints):
        try:
            cuts = np.asarray([float(c) for c in level], dtype=float)
        except (TypeError, ValueError):
            raise HierarchyError(
                f"interval_hierarchy: breakpoints[{k}] = {level!r} must contain numbers only."
            ) from None
        if cuts.size == 0 or not np.isfinite(cuts).all() or (np.diff(cuts) <= 0).any():
            raise HierarchyError(
                f"interval_hierarchy: breakpoints[{k}] = {list(level)!r} must "
                "be a non-empty, strictly increasing list of finite numbers."
            )
        if k:
            extra = np.setdiff1d(cuts, raw_prev)
            if extra.size:
                raise HierarchyError(
                    f"interval_hierarchy: breakpoints must nest: breakpoints[{k}] has "
                    f"{preview([_fmt(c) for c in extra])} which breakpoints[{k - 1}] lacks; "
                    "otherwise an interval would fall into two intervals of the next level "
                    "(not a tree). Use a subset of the previous level's cut points."
                )
        raw_prev = cuts
        if bottom is not None:
            cuts = np.concatenate([[float(bottom)], cuts[cuts > float(bottom)]])
        if top is not None:
            cuts = np.concatenate([cuts[cuts < float(top)], [float(top)]])
        out.append(cuts)
    return out


# ---------------------------------------------------------------------------- order
def order_hierarchy(
    values,
    order: Sequence | None = None,
    group_sizes: Sequence[int] | None = None,
    groups: Sequence[Mapping[str, Sequence]] | None = None,
    name: str = "",
) -> Hierarchy:
    """Hierarchy for ordered categories, grouping consecutive categories level by level.

    Follows ARX's order-based builder (``HierarchyBuilderOrderBased``): leaves are ``order``
    (the whole domain, lowest first) or, without it, the distinct values sorted (numerically
    when all are numbers, else alphabetically). Then either

    * ``group_sizes`` (e.g. ``[2, 4]``): level ``k`` groups ``group_sizes[k-1]`` consecutive
      leaves, labelled ``first-last`` (or the value alone for a single-leaf group); sizes
      must nest (each a multiple of the previous); or
    * ``groups``: one dict per level mapping a label to the members of the level below
      (leaves for level 1, level-1 labels for level 2, ...). Every member of the level below
      must be in exactly one group.

    A final ``*`` level is appended. A missing value ``""`` not listed in ``order`` stays
    ``""`` at every level below the root.
    """
    builder = "order_hierarchy"
    if (group_sizes is None) == (groups is None):
        raise HierarchyError(
            f"{builder}: give exactly one of group_sizes= (e.g. [2, 4]) or "
            "groups= (one dict label -> members per level)."
        )
    texts = _distinct(values)
    if order is None:
        leaves = _numeric_aware_sort(texts[texts != MISSING_TEXT])
    else:
        leaves = as_text(list(order))
        dup = pd.Series(leaves).duplicated().to_numpy()
        if dup.any():
            raise HierarchyError(
                f"{builder}: order lists {preview(pd.unique(leaves[dup]))} "
                "more than once; list each category once."
            )
        unknown = texts[~np.isin(texts, leaves) & (texts != MISSING_TEXT)]
        if unknown.size:
            raise HierarchyError(
                f"{builder}: {unknown.size} value(s) of the data are not in order: "
                f"{preview(unknown)}; add them to order (lowest category first)."
            )
    extra = (texts == MISSING_TEXT).any() and not (leaves == MISSING_TEXT).any()
    if leaves.size == 0:
        n_levels = len(group_sizes) if group_sizes is not None else len(groups or ())
        return _only_missing(texts[texts == MISSING_TEXT], n_levels, name, builder)
    columns: list[np.ndarray] = [leaves]
    if group_sizes is not None:
        sizes = _check_nesting(group_sizes, "group_sizes")
        if any(s != int(s) for s in sizes):
            raise HierarchyError(
                f"{builder}: group_sizes must be whole numbers, got {list(group_sizes)!r}."
            )
        pos = np.arange(len(leaves))
        for s in (int(s) for s in sizes):
            first = (pos // s) * s
            last = np.minimum(first + s, len(leaves)) - 1
            columns.append(
                np.where(first == last, leaves[first], leaves[first] + "-" + leaves[last]).astype(
                    object
                )
            )
    else:
        columns.extend(_explicit_groups(leaves, groups, builder))
    if extra:
        columns = [np.append(c, MISSING_TEXT).astype(object) for c in columns]
    return _finish(columns, name)


def _explicit_groups(leaves: np.ndarray, groups, builder: str) -> list[np.ndarray]:
    """Level columns from explicit per-level ``{label: members}`` dicts, validated."""
    if isinstance(groups, Mapping) or not all(isinstance(g, Mapping) for g in groups):
        raise HierarchyError(
            f"{builder}: groups must be a list with one dict per level, e.g. "
            "[{'low': ['a', 'b'], 'high': ['c']}, {'all': ['low', 'high']}]."
        )
    out: list[np.ndarray] = []
    below = leaves
    for k, level in enumerate(groups, start=1):
        parent_of: dict[str, str] = {}
        for label, members in level.items():
            members = [members] if isinstance(members, str) else list(members)
            for m in as_text(members):
                if m in parent_of:
                    raise HierarchyError(
                        f"{builder}: in groups[{k - 1}] (level {k}) {m!r} is in both "
                        f"{parent_of[m]!r} and {str(label)!r}; each member belongs to one group."
                    )
                parent_of[m] = str(label)
        uniq, inverse = np.unique(below.astype(str), return_inverse=True)
        known = set(uniq.tolist())
        unknown = [m for m in parent_of if m not in known]
        if unknown:
            hint = (
                " Missing values ('') map to themselves; list '' in order= to group it."
                if "" in unknown
                else ""
            )
            raise HierarchyError(
                f"{builder}: groups[{k - 1}] (level {k}) lists {preview(unknown)}, which "
                f"{'are not leaves' if k == 1 else f'are not labels of level {k - 1}'}.{hint} "
                "Check the spelling."
            )
        uncovered = [u for u in uniq.tolist() if u not in parent_of]
        if uncovered:
            raise HierarchyError(
                f"{builder}: groups[{k - 1}] (level {k}) does not cover {len(uncovered)} "
                f"value(s) of level {k - 1}: {preview(uncovered)}; put each into a group."
            )
        mapped = np.array([parent_of[u] for u in uniq.tolist()], dtype=object)
        below = mapped[inverse.ravel()]
        out.append(below)
    return out


# ---------------------------------------------------------------------------- masking
def masking_hierarchy(values, mask_char: str = "*", name: str = "") -> Hierarchy:
    """Hierarchy that redacts one character per level, right to left.

    Follows ARX's redaction-based builder (``HierarchyBuilderRedactionBased``, redaction
    order right-to-left), e.g. ``47677 -> 4767* -> 476** -> 47*** -> 4**** -> *****``.
    Values of unequal length are first right-padded with ``mask_char`` to the longest length
    (``"12"`` with longest length 3 gives ``12*`` at level 1), so every level has the same
    width and the last level, all mask characters, is the single root. Leaves are the
    distinct values sorted as text; a ``*`` level is appended only if there would otherwise
    be no single root (all values empty).
    """
    if not isinstance(mask_char, str) or len(mask_char) != 1:
        raise HierarchyError(
            f"masking_hierarchy: mask_char must be one character, got {mask_char!r}."
        )
    texts = _distinct(values)
    leaves = texts[np.argsort(texts.astype(str), kind="stable")]
    series = pd.Series(leaves, dtype=object)
    width = int(series.str.len().max()) if len(series) else 0
    if width == 0:
        return _finish([leaves], name)
    padded = series.str.pad(width, side="right", fillchar=mask_char)
    columns = [leaves]
    for k in range(1, width + 1):
        columns.append((padded.str[: width - k] + mask_char * k).to_numpy(dtype=object))
    return _finish(columns, name, root=mask_char * width)


# ---------------------------------------------------------------------------- dates
_DATE_LEVELS = ("day", "month", "quarter", "year", "decade", "century")


def date_hierarchy(
    values,
    format: str = "%Y-%m-%d",
    levels: Sequence[str] = ("month", "year", "decade"),
    name: str = "",
) -> Hierarchy:
    """Hierarchy of calendar periods for a date column.

    Follows ARX's date builder (``HierarchyBuilderDate`` granularities). Each level is one of,
    from fine to coarse: ``day`` (``1994-03-15``), ``month`` (``1994-03``), ``quarter``
    (``1994-Q1``), ``year`` (``1994``), ``decade`` (``1990-1999``), ``century``
    (``1900-1999``); they must be given fine to coarse. A final ``*`` level is appended.
    Dates are parsed with ``format`` (strftime codes); missing values (``""``) stay ``""``
    at every level below ``*``. Leaves are sorted by date.
    """
    builder = "date_hierarchy"
    levels = [levels] if isinstance(levels, str) else list(levels)
    ranks = []
    for lv in levels:
        if lv not in _DATE_LEVELS:
            raise HierarchyError(
                f"{builder}: unknown level {lv!r}; use some of "
                f"{', '.join(_DATE_LEVELS)} (fine to coarse)."
            )
        ranks.append(_DATE_LEVELS.index(lv))
    if any(b <= a for a, b in zip(ranks, ranks[1:], strict=False)):
        raise HierarchyError(
            f"{builder}: levels {levels!r} must go from fine to coarse without "
            f"repeats, in the order {', '.join(_DATE_LEVELS)}."
        )
    texts = _distinct(values)
    missing = texts[texts == MISSING_TEXT]
    texts = texts[texts != MISSING_TEXT]
    if texts.size == 0:
        return _only_missing(missing, len(levels), name, builder)
    try:
        parsed = pd.to_datetime(pd.Series(texts, dtype=object), format=format, errors="coerce")
    except ValueError as exc:
        raise HierarchyError(
            f"{builder}: format {format!r} is not a valid strftime format ({exc})."
        ) from None
    bad = parsed.isna().to_numpy()
    if bad.any():
        raise HierarchyError(
            f"{builder}: {texts[int(np.argmax(bad))]!r} is not a date in the expected format "
            f"{format!r} ({int(bad.sum())} such value(s)); fix the value or pass the right "
            "format= (strftime codes, e.g. '%d.%m.%Y')."
        )
    order = np.lexsort((texts.astype(str), parsed.to_numpy(dtype="datetime64[ns]")))
    texts = texts[order]
    dt = parsed.iloc[order].reset_index(drop=True).dt
    year = dt.year.to_numpy(dtype=np.int64)
    year_txt = pd.Series(year).astype(str).str.zfill(4)
    month_txt = year_txt + "-" + pd.Series(dt.month.to_numpy()).astype(str).str.zfill(2)

    def span(step: int) -> pd.Series:
        start = (year // step) * step
        return pd.Series(start).astype(str) + "-" + pd.Series(start + step - 1).astype(str)

    makers = {
        "day": lambda: month_txt + "-" + pd.Series(dt.day.to_numpy()).astype(str).str.zfill(2),
        "month": lambda: month_txt,
        "quarter": lambda: year_txt + "-Q" + pd.Series(dt.quarter.to_numpy()).astype(str),
        "year": lambda: year_txt,
        "decade": lambda: span(10),
        "century": lambda: span(100),
    }
    columns = [texts] + [makers[lv]().to_numpy(dtype=object) for lv in levels]
    if missing.size:
        columns = [np.concatenate([c, missing]) for c in columns]
    return _finish(columns, name)
