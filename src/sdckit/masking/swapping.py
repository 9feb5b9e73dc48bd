"""Swapping: rank swapping (and two variants), data swapping, targeted record swapping.

* Rank swapping (Moore 1996, "Controlled data-swapping techniques for masking public use
  microdata sets", US Census Bureau RR96/04; Domingo-Ferrer & Torra 2001, "A quantitative
  comparison of disclosure control methods for microdata", in *Confidentiality, Disclosure and
  Data Access*, 111-134): per attribute, values are ranked and each value is swapped with a
  random not yet swapped value whose rank is at most ``p`` percent of ``n`` above it.
* Rank swapping p-buckets and p-distribution (Nin, Herranz & Torra 2008, "Rethinking rank
  swapping to decrease disclosure risk", Data & Knowledge Engineering 64(1), 346-364).
* Data swapping of categorical attributes between records that agree on matching variables
  (Dalenius & Reiss 1982, "Data-swapping: a technique for disclosure control", Journal of
  Statistical Planning and Inference 6, 73-85).
* Targeted record swapping of households across geographic areas (sdcMicro's ``recordSwap``,
  J. Gussenbauer; the SDC method recommended for the European 2021 census round).

The sequential parts (every swap changes which values are still available) are numba
kernels; all random numbers are drawn beforehand from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import AliasChoices, Field, model_validator

from sdckit.core.encoding import as_text, encode
from sdckit.core.frequency import group_keys
from sdckit.core.spec import (
    ColumnList,
    ColumnName,
    NonEmptyList,
    Number,
)
from sdckit.errors import DataError, ParameterError
from sdckit.masking.base import (
    MaskResult,
    accepts_series,
    check_columns,
    integer_like,
    numeric_matrix,
)
from sdckit.masking.spec import (
    Count,
    MaskingMethod,
    Probability,
    Rng,
)


def _kernels() -> Any:
    """The numba kernels of the swaps (:mod:`sdckit.masking._swapping_kernels`), imported on
    first use: numba's start-up is paid by a run that swaps, not by every job that loads the
    masking methods to validate its ``methods:`` list."""
    from sdckit.masking import _swapping_kernels

    return _swapping_kernels


# --------------------------------------------------------------------------- rank helpers


def _check_percent(p: float, name: str, method: str) -> float:
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{method}: {name}={p!r} is not a number; give a percentage of the "
            "number of records in (0, 100], e.g. 5"
        ) from None
    if not (0.0 < v <= 100.0):
        raise ParameterError(
            f"{method}: {name}={p!r} must be a percentage of the number of records "
            f"in (0, 100], e.g. {name}=5 for 5 percent (not a fraction)"
        )
    return v


def _rank_apply(
    data: pd.DataFrame, cols: list[str], method: str, partner_fn
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rank each column (missing values left out and left in place), let ``partner_fn(m, j)``
    give the partner of every rank, and write the swapped values back (dtype kept)."""
    x = numeric_matrix(data, cols, method)
    out = data.copy()
    info: dict[str, Any] = {}
    for j, c in enumerate(cols):
        col = x[:, j]
        nan = np.isnan(col)
        ok = np.flatnonzero(~nan) if nan.any() else None
        vals = col if ok is None else col[ok]
        m = len(vals)
        order = _kernels().stable_order(vals)
        perm, extra = partner_fn(m, j)
        # the record of rank i receives the value of rank perm[i]
        new = np.empty(m)
        new[order] = vals[order[perm]]
        if ok is None:
            res = new
        else:
            res = col.copy()
            res[ok] = new
        s = data[c]
        out[c] = integer_like(s, res)
        moved = int(np.sum(perm != np.arange(m)))
        info[c] = {"n_values": m, "n_swapped": moved, **extra}
    return out, info


@accepts_series
def rank_swapping(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p_percent: float = 5.0,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Rank swapping (Moore 1996; Domingo-Ferrer & Torra 2001), each column independently.

    The ``n`` non-missing values of a column are sorted (ties by row order). Visiting ranks in
    increasing order, every value ``a_i`` not yet swapped is swapped with a uniformly random
    not yet swapped ``a_l`` with ``i < l <= i + w``, ``w = floor(p_percent * n / 100)``; if all
    ranks of that window are taken, ``a_i`` stays. Each column keeps exactly its multiset of
    values (its marginal distribution); missing values stay where they are.

    ``p_percent`` **is a percentage** of ``n`` in ``(0, 100]``: ``p_percent=5`` allows swaps
    between values at most 5 % of the ranks apart. sdcMicro's ``rankSwap`` documents its ``P``
    the same way, but its C++ code uses ``P`` as a fraction (sdcMicro issue #366), so its
    ``P=5`` means a 500 % window; sdckit does not repeat that.
    """
    cols = check_columns(data, columns)
    p = _check_percent(p_percent, "p_percent", "rank_swap")
    rng = np.random.default_rng(seed)

    def partners(m: int, _j: int) -> tuple[np.ndarray, dict[str, Any]]:
        w = int(np.floor(p * m / 100.0 + 1e-9))
        u = rng.random(m)
        return _kernels().rank_swap_kernel(m, w, u, _kernels().top(m)), {"window_ranks": w}

    out, info = _rank_apply(data, cols, "rank_swap", partners)
    return MaskResult(out, "rank_swap", {"columns": cols, "p_percent": p}, info)


@accepts_series
def rank_swap_p_buckets(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p: float = 5.0,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Rank swapping p-buckets (Nin, Herranz & Torra 2008), each column independently.

    The ranks are cut into ``K`` buckets of ``b = max(1, floor(p * n / 100))`` consecutive
    ranks (``p`` a percentage of ``n`` as in :func:`rank_swapping`). Visiting ranks in increasing
    order, a value not yet swapped in bucket ``B_r`` is swapped with a uniformly random not yet
    swapped value of bucket ``B_s``, ``s >= r``, where ``B_s`` is drawn with probability
    ``(1/K') * 2^-(s - r + 1)``, ``K'`` normalizing over the buckets that still hold an
    unswapped value. Marginals are preserved exactly.
    """
    cols = check_columns(data, columns)
    pv = _check_percent(p, "p", "rank_swap_p_buckets")
    rng = np.random.default_rng(seed)

    def partners(m: int, _j: int) -> tuple[np.ndarray, dict[str, Any]]:
        b = max(1, int(np.floor(pv * m / 100.0 + 1e-9)))
        u = rng.random((m, 2))
        n_buckets = -(-m // b) if m else 0
        return _kernels().p_buckets_kernel(m, b, u, _kernels().top(m)), {
            "bucket_size": b,
            "n_buckets": n_buckets,
        }

    out, info = _rank_apply(data, cols, "rank_swap_p_buckets", partners)
    return MaskResult(out, "rank_swap_p_buckets", {"columns": cols, "p": pv}, info)


@accepts_series
def rank_swap_p_distribution(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p: float = 5.0,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Rank swapping p-distribution (Nin, Herranz & Torra 2008), each column independently.

    With ``P = p * n / 100`` ranks (``p`` a percentage of ``n``), every value ``a_i`` not yet
    swapped is swapped with ``a_(i+r)``, ``r`` drawn from the normal distribution with mean
    ``0.5 P`` and standard deviation ``0.5 P``, rounded and clipped into ``[1, n-1-i]``; if that
    rank is already taken the next free rank above it is used (the last free one at the end of
    the range). The value stays only when no rank above it is free. Marginals are preserved.
    """
    cols = check_columns(data, columns)
    pv = _check_percent(p, "p", "rank_swap_p_distribution")
    rng = np.random.default_rng(seed)

    def partners(m: int, _j: int) -> tuple[np.ndarray, dict[str, Any]]:
        P = pv * m / 100.0
        offsets = np.rint(rng.normal(0.5 * P, 0.5 * P, m)).astype(np.int64)
        return _kernels().p_distribution_kernel(m, offsets, _kernels().top(m)), {
            "mean_offset_ranks": 0.5 * P,
            "sd_offset_ranks": 0.5 * P,
        }

    out, info = _rank_apply(data, cols, "rank_swap_p_distribution", partners)
    return MaskResult(out, "rank_swap_p_distribution", {"columns": cols, "p": pv}, info)


# --------------------------------------------------------------------------- data swapping


def _check_rate(rate: float, name: str, method: str) -> float:
    try:
        v = float(rate)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{method}: {name}={rate!r} is not a number; give a fraction in [0, 1], e.g. 0.05"
        ) from None
    if not (0.0 <= v <= 1.0):
        raise ParameterError(
            f"{method}: {name}={rate!r} must be a fraction of records in [0, 1], "
            f"e.g. {name}=0.05 for 5 percent"
        )
    return v


def _group_ids(data: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    """Dense ids of the combinations of ``cols`` (missing is a value), in sorted key order
    (the frequency engine's :func:`~sdckit.core.frequency.group_keys`)."""
    if not cols:
        return np.zeros(len(data), dtype=np.int64)
    encoded = [encode(data[c], c) for c in cols]
    return group_keys([e.codes for e in encoded], [e.cardinality for e in encoded])[0]


@accepts_series
def data_swapping(
    data: pd.DataFrame,
    swap_columns: Sequence[str] | str,
    match_columns: Sequence[str] | str | None = None,
    rate: float = 0.05,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Swap the values of ``swap_columns`` between random pairs of records that agree on
    ``match_columns`` (Dalenius & Reiss 1982).

    Within every group of records sharing the matching values, about ``rate * size / 2`` random
    disjoint pairs (random rounding, at most ``size // 2``) exchange their whole vector of
    ``swap_columns`` values. Since both partners agree on the matching variables, every
    marginal of the swapped variables, their joint distribution and their cross-tabulation with
    the matching variables are preserved exactly; only their link to the other variables
    changes. ``details`` give the number of pairs and of records whose values changed.
    """
    scols = check_columns(data, swap_columns)
    mcols = [] if match_columns is None else check_columns(data, match_columns)
    both = sorted(set(scols) & set(mcols))
    if both:
        raise DataError(
            f"data_swap: column(s) {', '.join(both)} are both swapped and matched; "
            "a column cannot be both"
        )
    r = _check_rate(rate, "rate", "data_swap")
    rng = np.random.default_rng(seed)
    n = len(data)
    gid = _group_ids(data, mcols)
    n_groups = int(gid.max()) + 1 if n else 0
    order = np.lexsort((rng.random(n), gid))  # records grouped, random order inside a group
    sizes = np.bincount(gid, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    target = r * sizes / 2.0
    pairs = np.floor(target).astype(np.int64)
    pairs += rng.random(n_groups) < (target - pairs)
    pairs = np.minimum(pairs, sizes // 2)
    g_sorted = gid[order]
    pos = np.arange(n) - starts[g_sorted]
    chosen = pos < 2 * pairs[g_sorted]
    first = order[chosen & (pos % 2 == 0)]
    second = order[chosen & (pos % 2 == 1)]
    src = np.arange(n)
    src[first] = second
    src[second] = first
    out = data.copy()
    for c in scols:
        out[c] = pd.Series(data[c].array.take(src), index=data.index, name=c)
    changed = np.zeros(n, dtype=bool)
    for c in scols:
        changed |= as_text(data[c]) != as_text(out[c])
    details = {
        "n_pairs": int(pairs.sum()),
        "n_records_swapped": int(2 * pairs.sum()),
        "n_records_changed": int(changed.sum()),
        "n_groups": n_groups,
        "realized_rate": float(2 * pairs.sum() / n) if n else 0.0,
    }
    params = {"swap_columns": scols, "match_columns": mcols, "rate": r}
    return MaskResult(out, "data_swap", params, details)


# --------------------------------------------------------------------------- record swapping


def _profiles(similar: Any) -> list[list[str]]:
    if isinstance(similar, str):
        return [[similar]]
    sim = list(similar)
    if not sim:
        raise DataError(
            "record_swap: give at least one similarity variable in similar, e.g. similar=['hsize']"
        )
    if all(isinstance(s, str) for s in sim):
        return [sim]
    out = []
    for prof in sim:
        prof = [prof] if isinstance(prof, str) else list(prof)
        if not prof:
            raise DataError("record_swap: a similarity profile in similar is empty")
        out.append(prof)
    return out


def _refine(key: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Dense ids of the pairs (``key``, ``codes``) of two non-negative code columns."""
    return group_keys([key, codes])[0]


@accepts_series
def record_swapping(
    data: pd.DataFrame,
    household: str,
    similar: Sequence[str] | Sequence[Sequence[str]] | str,
    hierarchy: Sequence[str] | str,
    quasi_identifiers: Sequence[str] | str,
    swap_rate: float = 0.05,
    k_anonymity: int = 3,
    carry_along: Sequence[str] | str | None = None,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Targeted record swapping of households across geographic areas (sdcMicro ``recordSwap``).

    Following sdcMicro's ``recordSwap`` (R/recordSwap.R, src/recordSwap/recordSwap.cpp):

    1. Risk: for every geographic level ``h`` (``hierarchy`` from the highest level to the
       lowest) a record's risk is ``1 / count`` of records sharing its ``quasi_identifiers``
       (sdcMicro's ``riskVars``) and its areas of levels ``0..h``; a household takes the
       maximum over its members. A household must be swapped at the first level where its
       risk exceeds ``1/k_anonymity`` (count < k); ``k_anonymity = 0`` marks none.
    2. Number of swaps: ``ceil`` or ``floor`` (fair coin) of ``n_households * swap_rate / 2``
       (each swap moves two households), spread over the lowest-level areas in proportion to
       their number of households; fractional parts are rounded by drawing the areas that get
       one more swap with probability proportional to the fractional parts (sdcMicro draws
       them uniformly).
    3. From the highest to the lowest level, area by area: at the upper levels only the
       households that must be swapped at that level are swapped; at the lowest level the
       must-swap households plus, if the area's quota (minus the households already swapped
       out of it) is not reached, further households drawn with probability proportional to
       their risk (Efraimidis-Spirakis keys ``risk / Exp(1)``). Every household is swapped at
       most once.
    4. Donor: the first unused household (by decreasing key ``risk_h / Exp(1)``, i.e. sampled
       by risk) from *another* area of the current level with the same values of the first
       similarity profile (``similar``: a list of columns, or a list of such lists tried in
       turn); households without a donor stay and are counted.
    5. The ``hierarchy`` (and ``carry_along``) values of paired households are exchanged for
       all their members.

    The similarity and hierarchy variables are household-level (the first member's values are
    used; a household spread over several areas is an error). ``details`` report the number of
    households swapped, the risky households per level and those left without a donor.
    """
    hh_col = check_columns(data, [household])[0]
    hier = check_columns(data, hierarchy)
    profiles = _profiles(similar)
    for prof in profiles:
        check_columns(data, prof)
    risk_vars = check_columns(data, quasi_identifiers)
    carry = [] if carry_along is None else check_columns(data, carry_along)
    carry = [c for c in carry if c not in hier]
    rate = _check_rate(swap_rate, "swap_rate", "record_swap")
    if (
        isinstance(k_anonymity, bool)
        or not isinstance(k_anonymity, (int, np.integer))
        or k_anonymity < 0
    ):
        raise DataError(
            f"record_swap: k_anonymity={k_anonymity!r} must be an integer >= 0 "
            "(0 disables the k-anonymity rule)"
        )
    if hh_col in hier:
        raise DataError(f"record_swap: the household column {hh_col!r} cannot be a hierarchy level")
    rng = np.random.default_rng(seed)
    n = len(data)
    H = len(hier)
    if n == 0:
        return MaskResult(data.copy(), "record_swap", {}, {"n_households": 0})

    hh = encode(data[hh_col], hh_col)
    rec_hh = hh.codes.astype(np.int64)
    nhh = hh.cardinality
    order = np.argsort(rec_hh, kind="stable")
    sizes = np.bincount(rec_hh, minlength=nhh)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    first = order[starts]  # first member of every household

    warnings: list[str] = []
    hier_codes = []
    for c in hier + carry:
        codes = encode(data[c], c).codes.astype(np.int64)
        bad = codes != codes[first[rec_hh]]
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            hid = data[hh_col].iloc[row]
            hid = hid.item() if isinstance(hid, np.generic) else hid
            msg = f"column {c!r} differs within household {hid!r} (row {row + 1})"
            if c in hier:
                raise DataError(
                    f"record_swap: {msg}; geographic variables must be constant within a household"
                )
            warnings.append(
                f"{msg}: carry_along variables should be household-level; the "
                "first member's value is swapped to all members"
            )
        if c in hier:
            hier_codes.append(codes)

    # 1. risk per level: 1 / count of (risk variables, areas 0..h); household max
    key = _group_ids(data, risk_vars)
    hh_risk = np.empty((H, nhh))
    area = np.empty((H, nhh), dtype=np.int64)
    area_key = np.zeros(n, dtype=np.int64)
    for h in range(H):
        key = _refine(key, hier_codes[h])
        counts = np.bincount(key)
        risk = 1.0 / counts[key]
        hh_risk[h] = np.maximum.reduceat(risk[order], starts)
        area_key = _refine(area_key, hier_codes[h])
        area[h] = area_key[first]
    threshold = 2.0 if k_anonymity == 0 else 1.0 / k_anonymity
    above = hh_risk > threshold
    level = np.where(above.any(axis=0), np.argmax(above, axis=0), H)

    # random sampling keys per level (Efraimidis-Spirakis: risk / Exp(1), larger first)
    keys = hh_risk / rng.exponential(1.0, size=(H, nhh))

    # 2. number of swaps per lowest-level area
    total = int(np.ceil(nhh * rate / 2) if rng.integers(0, 2) == 0 else np.floor(nhh * rate / 2))
    low = area[H - 1]
    n_low = int(low.max()) + 1
    area_size = np.bincount(low, minlength=n_low)
    share = area_size / nhh * total
    quota = np.floor(share).astype(np.int64)
    frac = share - quota
    extra = int(np.round(frac.sum()))
    if extra > 0:
        pick = rng.choice(n_low, size=extra, replace=False, p=frac / frac.sum())
        quota[pick] += 1

    # similarity profile groups (household level), flattened over profiles
    gid = np.empty((len(profiles), nhh), dtype=np.int64)
    g_off = 0
    for p, prof in enumerate(profiles):
        g = _group_ids(data.iloc[first], prof)
        gid[p] = g + g_off
        g_off += int(g.max()) + 1
    n_groups = g_off

    used = np.zeros(nhh, dtype=np.bool_)
    failed = np.zeros(nhh, dtype=np.bool_)
    partner = np.full(nhh, -1, dtype=np.int64)
    swap_side = np.zeros(nhh, dtype=np.bool_)
    swaps_per_level = []
    hh_ids = np.arange(nhh)
    for h in range(H):
        # donor lists: per profile group, by decreasing key of this level
        don_parts = [np.lexsort((-keys[h], gid[p])) for p in range(len(profiles))]
        don = np.concatenate(don_parts)
        flat_gid = np.concatenate([gid[p][don_parts[p]] for p in range(len(profiles))])
        ends = np.searchsorted(flat_gid, np.arange(n_groups), side="right")
        ptr = np.searchsorted(flat_gid, np.arange(n_groups), side="left")

        free = ~used & ~failed
        if h < H - 1:
            sel = free & (level == h)
            cand = hh_ids[sel]
            cand = cand[np.lexsort((-keys[h][cand], area[h][cand]))]
            is_must = np.ones(len(cand), dtype=np.bool_)
            seg_area = area[h][cand]
            n_area = int(area[h].max()) + 1
            seg_start = np.searchsorted(seg_area, np.arange(n_area + 1), side="left")
            seg_quota = np.full(n_area, -1, dtype=np.int64)
        else:
            already = np.bincount(low[swap_side], minlength=n_low)
            seg_quota = np.maximum(0, quota - already)
            cand = hh_ids[free]
            must = level[cand] == h
            fresh = hh_risk[h][cand] / rng.exponential(1.0, size=len(cand))
            o = np.lexsort((-fresh, ~must, low[cand]))
            cand, is_must = cand[o], must[o]
            seg_start = np.searchsorted(low[cand], np.arange(n_low + 1), side="left")
        swaps_per_level.append(
            int(
                _kernels().trs_level(
                    cand.astype(np.int64),
                    is_must,
                    seg_start.astype(np.int64),
                    seg_quota.astype(np.int64),
                    area[h],
                    used,
                    failed,
                    partner,
                    swap_side,
                    gid,
                    don.astype(np.int64),
                    ends.astype(np.int64),
                    ptr.astype(np.int64),
                )
            )
        )

    # 5. exchange the geographic (and carried) values of paired households
    src_hh = np.where(partner >= 0, partner, np.arange(nhh))
    src_rec = first[src_hh[rec_hh]]
    out = data.copy()
    for c in hier + carry:
        out[c] = pd.Series(data[c].array.take(src_rec), index=data.index, name=c)
    swapped = partner >= 0
    no_donor = failed & ~swapped
    details = {
        "n_households": int(nhh),
        "target_swaps": total,
        "n_swapped_households": int(swapped.sum()),
        "n_swapped_records": int(sizes[swapped].sum()),
        "swaps_per_level": dict(zip(hier, swaps_per_level, strict=True)),
        "risky_households_per_level": {hier[h]: int(np.sum(level == h)) for h in range(H)},
        "n_without_donor": int(no_donor.sum()),
        "households_without_donor": [str(v) for v in hh.values[no_donor][:20]],
        "risk_threshold": threshold,
        "warnings": warnings,
    }
    params = {
        "household": hh_col,
        "similar": profiles,
        "hierarchy": hier,
        "quasi_identifiers": risk_vars,
        "swap_rate": rate,
        "k_anonymity": int(k_anonymity),
        "carry_along": carry,
    }
    return MaskResult(out, "record_swap", params, details)


# -- the method as a job-file step -----------------------------------------------------------------
class RankSwapping(MaskingMethod):
    """Rank swapping of numeric columns (:mod:`sdckit.masking.swapping`).

    Parameters
    ----------
    columns : list of str
        The columns swapped (each on its own).
    p_percent : float, default 5
        Largest rank distance of a swap, in percent of the number of records, in (0, 100].
    variant : {"standard", "p_buckets", "p_distribution"}, default "standard"
        Moore's rank swapping, or one of the two variants of Nin, Herranz & Torra.

    References
    ----------
    Moore, R. (1996). Controlled data-swapping techniques for masking public use microdata
    sets. US Census Bureau RR96/04. Nin, J., Herranz, J. & Torra, V. (2008). Rethinking rank
    swapping to decrease disclosure risk. Data & Knowledge Engineering 64(1), 346-364.
    """

    spec_name: ClassVar[str] = "rank_swapping"
    spark_refusal: ClassVar[str | None] = (
        "swaps values between records up to a rank distance over the whole file"
    )
    must_change: ClassVar[bool] = True

    columns: ColumnList
    p_percent: Annotated[Number, Field(gt=0, le=100)] = 5.0
    variant: Literal["standard", "p_buckets", "p_distribution"] = "standard"

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        if self.variant == "standard":
            return [rank_swapping(data, self.columns, self.p_percent, seed=rng)]
        if self.variant == "p_buckets":
            return [rank_swap_p_buckets(data, self.columns, self.p_percent, seed=rng)]
        return [rank_swap_p_distribution(data, self.columns, self.p_percent, seed=rng)]


class DataSwapping(MaskingMethod):
    """Data swapping between records that agree on matching columns
    (:func:`sdckit.masking.swapping.data_swapping`).

    Parameters
    ----------
    columns : list of str
        The columns whose values are swapped.
    match_columns : list of str, optional
        Records swap only with records of the same values of these columns.
    rate : float, default 0.05
        Share of the records swapped, in [0, 1].

    References
    ----------
    Dalenius, T. & Reiss, S. P. (1982). Data-swapping: a technique for disclosure control.
    Journal of Statistical Planning and Inference 6, 73-85.
    """

    spec_name: ClassVar[str] = "data_swapping"
    spark_refusal: ClassVar[str | None] = "pairs records across the whole file"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    match_columns: ColumnList | None = None
    rate: Probability = 0.05

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        return [data_swapping(data, self.columns, self.match_columns, self.rate, seed=rng)]


class RecordSwapping(MaskingMethod):
    """Targeted record swapping of households across areas
    (:func:`sdckit.masking.swapping.record_swapping`, after sdcMicro ``recordSwap``).

    Parameters
    ----------
    household : str
        The household identifier column.
    similar : list
        Columns a donor household must share (or a list of such lists, tried in turn).
    hierarchy : list of str
        The geographic levels, highest first (the values swapped).
    quasi_identifiers : list of str
        Columns whose rare combinations make a household risky (sdcMicro's ``riskVars``;
        ``risk_variables``, the name this parameter had before, is accepted too).
    swap_rate : float, default 0.05
        Share of the households swapped, in [0, 1].
    k_anonymity : int, default 3
        A household is risky where fewer than this many records share its values (>= 1).
    carry_along : list of str, optional
        Further columns swapped with the hierarchy.

    References
    ----------
    sdcMicro ``recordSwap`` (J. Gussenbauer), the SDC method recommended for the European
    2021 census round.
    """

    spec_name: ClassVar[str] = "record_swapping"
    spark_refusal: ClassVar[str | None] = "swaps households between areas of the whole file"
    must_change: ClassVar[bool] = True

    household: ColumnName
    similar: NonEmptyList
    hierarchy: ColumnList
    # sdcMicro's riskVars; `risk_variables` is the name it had before (job files keep working)
    quasi_identifiers: ColumnList = Field(
        validation_alias=AliasChoices("quasi_identifiers", "risk_variables")
    )
    swap_rate: Probability = 0.05
    k_anonymity: Count = 3
    carry_along: ColumnList | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and {"quasi_identifiers", "risk_variables"} <= set(data):
            raise ValueError("give quasi_identifiers only (risk_variables is its former name)")
        return data

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        return [
            record_swapping(
                data,
                self.household,
                self.similar,
                self.hierarchy,
                self.quasi_identifiers,
                swap_rate=self.swap_rate,
                k_anonymity=self.k_anonymity,
                carry_along=self.carry_along,
                seed=rng,
            )
        ]


def __getattr__(name: str) -> Any:
    """The former names of this module's functions (deprecated; :data:`sdckit.masking.RENAMED`)."""
    from sdckit.masking import renamed_attribute

    return renamed_attribute(__name__, name)
