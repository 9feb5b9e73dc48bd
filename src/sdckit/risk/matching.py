"""Re-identification by matching quasi-identifiers against a released file (prosecutor attack).

The intruder knows that the target is in the release (the prosecutor scenario of El Emam &
Dankar 2008) and knows the target's *original* values of the quasi-identifiers (QIs). He links
the target to one of the released records whose QI values are **compatible** with those
values, chosen uniformly at random. The expected share of targets correctly re-identified is

    DR = (1/n) sum_i [g_i compatible with u_i] / |{j : g_j compatible with u_i}|

with ``u_i`` record ``i``'s original QI values and ``g_j`` record ``j``'s released ones; ties
count fractionally, as in distance-based record linkage (Domingo-Ferrer & Torra 2001; seed
004). A record's *risk* is its term of the sum.

Compatibility, per column, follows what the released value says about the original one:

* ``*`` or an empty/missing value (suppressed) is compatible with every original value;
* a label of the column's generalization hierarchy is compatible with the values under it
  (with the label itself at level 0);
* a closed or half-open interval ``[lo, hi]``, ``[lo, hi)`` (Mondrian/TDS ranges, sdckit's
  global recoding) is compatible with the numbers inside it;
* any other value must equal the original value (recoding to a value of the domain, PRAM,
  swapping, top/bottom coding to a domain value).

A released value that is none of these (for example a number perturbed by noise) is an error:
exact matching says nothing about it (distance-based linkage does).

Records suppressed as a whole (``*`` or empty in every QI) carry no QI information: the
intruder tries them only when no other released record is compatible with the target (ARX
keeps them as an equivalence class of their own; a suppressed target is then found with
probability ``1/s`` among the ``s`` suppressed records, or not at all when its values still
match released records). Single suppressed values (local suppression) stay compatible with
every value, as sdcMicro counts missing values in its frequency counts (Templ, Kowarik & Meindl
2015, ``freqCalc``).

For a truthful release by global recoding every non-suppressed record's compatible set is its
equivalence class, so its risk is ``1/f`` and, without suppression, ``DR = J/n``: ARX's
prosecutor "success rate" (the average prosecutor risk of :mod:`sdckit.risk.reidentification`).
For perturbative masking (PRAM, swapping) a record whose released values differ from its
original ones is not matched, so the risk also counts the protection the perturbation gives.

Computation: the compatibility relation of each QI is listed once per distinct original value
(equal value, hierarchy ancestors, suppression marks, the intervals holding it); the compatible
released tuples of every distinct original tuple are then found by a join that walks the
released tuples' prefix tree one QI at a time -- for each candidate, over whichever is shorter:
the value's compatible released values (hash look-ups) or the prefix's children (membership
tests) -- in bounded chunks, never by comparing all n x n pairs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.core.frequency import group_keys
from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import DataError, preview
from sdckit.utility.numeric import check_aligned

__all__ = ["MatchingRisk", "WILDCARDS", "matching_risk", "reidentification_scale"]

#: Released values that say nothing about the original value (suppression).
WILDCARDS = frozenset({"*", ""})

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_INTERVAL = re.compile(rf"^\s*([\[\(])\s*({_NUM})\s*[,;]\s*({_NUM})\s*([\]\)\[])\s*$")


@dataclass(frozen=True)
class MatchingRisk:
    """Per-record re-identification risk of a QI-matching prosecutor (see the module doc).

    ``risk[i]`` is the probability that record ``i`` is correctly re-identified;
    ``candidates[i]`` the number of released records compatible with its original values;
    ``matchable[i]`` whether the intruder's candidates include record ``i``'s own released
    record (for a record suppressed as a whole: whether nothing else matches).
    """

    quasi_identifiers: list[str]
    risk: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)
    matchable: np.ndarray = field(repr=False)

    @property
    def average(self) -> float:
        """Expected share of records re-identified (DR; ``J/n`` for a plain global recoding)."""
        return float(self.risk.mean()) if len(self.risk) else 0.0

    @property
    def highest(self) -> float:
        """The highest record risk (ARX's "highest prosecutor risk" for a truthful release)."""
        return float(self.risk.max()) if len(self.risk) else 0.0

    @property
    def certain(self) -> float:
        """Share of records re-identified with certainty (risk 1: unique and matchable)."""
        return float(np.mean(self.risk >= 1.0)) if len(self.risk) else 0.0

    def at_risk(self, threshold: float = 0.2) -> float:
        """Share of records whose risk exceeds ``threshold`` (ARX's "records at risk")."""
        return float(np.mean(self.risk > threshold)) if len(self.risk) else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the averages and shares (shares in [0, 1])."""
        return {
            "qi": list(self.quasi_identifiers),  # JSON key kept (documents scripts read)
            "average_risk": self.average,
            "highest_risk": self.highest,
            "certain_share": self.certain,
            "records_at_risk_0.2": self.at_risk(0.2),
            "matchable_share": float(np.mean(self.matchable)) if len(self.matchable) else 0.0,
            "mean_candidates": float(np.mean(self.candidates)) if len(self.candidates) else 0.0,
        }


#: Candidate (pair, released value) rows expanded at once in the join (bounds peak memory).
_CHUNK = 4_000_000
#: Most (original value, interval) pairs listed for one column (about 16 bytes each).
_MAX_INTERVAL_PAIRS = 100_000_000


@dataclass
class _Column:
    """One QI: value codes and the compatibility relation between original and released values.

    The relation is stored per original value (CSR): ``targets[offsets[v]:offsets[v + 1]]``
    are the released value codes compatible with original value ``v``; ``keys`` holds the same
    pairs as sorted integers ``v * width + w`` for membership tests.
    """

    name: str
    o_codes: np.ndarray  # per record, into the original values
    p_codes: np.ndarray  # per record, into the released values
    n_values: int  # number of original values
    width: int  # number of released values
    wild: np.ndarray  # per released value: suppressed
    offsets: np.ndarray
    targets: np.ndarray
    keys: np.ndarray

    def compatible(self, v: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Whether released value codes ``w`` are compatible with original value codes ``v``."""
        key = v.astype(np.int64) * self.width + w
        pos = np.minimum(np.searchsorted(self.keys, key), max(len(self.keys) - 1, 0))
        return (self.keys[pos] == key) if len(self.keys) else np.zeros(len(key), dtype=bool)


def _parse_intervals(values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Which distinct released values are intervals ``[lo, hi]``/``(lo, hi)``, and their ends."""
    parts = pd.Series(values, dtype=object).astype(str).str.extract(_INTERVAL)
    lo = pd.to_numeric(parts[1], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(parts[2], errors="coerce").to_numpy(dtype=float)
    is_iv = parts[0].notna().to_numpy() & (lo <= hi)
    lo_c = (parts[0] == "[").to_numpy()
    hi_c = (parts[3] == "]").to_numpy()
    return is_iv, lo, hi, lo_c, hi_c


def _ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, index)`` for every index of the ranges ``[starts[i], stops[i])``."""
    cnt = np.maximum(stops - starts, 0)
    owner = np.repeat(np.arange(len(cnt)), cnt)
    index = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + starts[owner]
    return owner, index


def _chunks(sizes: np.ndarray):
    """Consecutive row ranges whose ``sizes`` add up to about :data:`_CHUNK` (at least 1 row)."""
    ends = np.cumsum(sizes)
    lo = 0
    while lo < len(sizes):
        base = ends[lo - 1] if lo else 0
        hi = max(int(np.searchsorted(ends, base + _CHUNK, side="right")), lo + 1)
        yield np.arange(lo, hi)
        lo = hi


def _column(
    name: str, original: pd.Series, protected: pd.Series, hierarchy: Hierarchy | None
) -> _Column:
    o_codes, o_vals = pd.factorize(as_text(original))
    p_codes, p_vals = pd.factorize(as_text(protected))
    o_vals = np.asarray(o_vals, dtype=object)
    p_vals = np.asarray(p_vals, dtype=object)
    n_v, width = len(o_vals), len(p_vals)
    p_index = pd.Index(p_vals)
    wild = np.isin(p_vals, list(WILDCARDS))
    pv: list[np.ndarray] = []  # compatible (original value, released value) pairs
    pw: list[np.ndarray] = []
    equal = p_index.get_indexer(o_vals).astype(np.int64)
    pv.append(np.arange(n_v))
    pw.append(equal)
    wild_codes = np.flatnonzero(wild)
    pv.append(np.repeat(np.arange(n_v), len(wild_codes)))
    pw.append(np.tile(wild_codes, n_v))
    is_label = np.zeros(width, dtype=bool)
    if hierarchy is not None:
        leaf = pd.Index(hierarchy.leaves).get_indexer(o_vals)
        known = np.flatnonzero(leaf >= 0)
        for level in range(hierarchy.height):
            pv.append(known)
            pw.append(p_index.get_indexer(hierarchy.table[leaf[known], level]))
        is_label = np.isin(p_vals, np.unique(hierarchy.table.ravel()))
    iv, lo, hi, lo_c, hi_c = _parse_intervals(p_vals)
    if iv.any():
        # the original numbers inside each interval: a contiguous run of the sorted numbers
        num = pd.to_numeric(pd.Series(o_vals), errors="coerce").to_numpy(dtype=float)
        ok = np.flatnonzero(~np.isnan(num))
        order = ok[np.argsort(num[ok], kind="stable")]
        xs = num[order]
        w_iv = np.flatnonzero(iv)
        start = np.where(
            lo_c[w_iv],
            np.searchsorted(xs, lo[w_iv], side="left"),
            np.searchsorted(xs, lo[w_iv], side="right"),
        )
        stop = np.where(
            hi_c[w_iv],
            np.searchsorted(xs, hi[w_iv], side="right"),
            np.searchsorted(xs, hi[w_iv], side="left"),
        )
        total = int(np.maximum(stop - start, 0).sum())
        if total > _MAX_INTERVAL_PAIRS:
            raise DataError(
                f"column {name!r}: its {len(w_iv):,} released intervals hold {total:,} "
                f"(value, interval) pairs in all, more than {_MAX_INTERVAL_PAIRS:,} this measure "
                "lists in memory; generalize the column with a hierarchy (labels instead of "
                "free intervals) or measure it on a sample of the records"
            )
        owner, index = _ranges(start, stop)
        pv.append(order[index])
        pw.append(w_iv[owner])
    in_domain = equal[equal >= 0]
    unknown = wild | is_label | iv
    unknown[in_domain] = True
    unknown = ~unknown
    if unknown.any():
        bad = p_vals[unknown]
        raise DataError(
            f"column {name!r} of the protected file has {int(unknown.sum()):,} released "
            f"value(s) that are neither original values, labels of its hierarchy, intervals "
            f"'[lo, hi]' nor suppressed ('*' or empty): {preview(list(bad))}. Matching "
            "re-identification compares released QI values with the original ones; give the "
            "column's hierarchy if these are generalized labels, or measure perturbed numbers "
            "with distance-based record linkage instead"
        )
    v_all = np.concatenate(pv).astype(np.int64)
    w_all = np.concatenate(pw).astype(np.int64)
    keys = np.unique(v_all[w_all >= 0] * width + w_all[w_all >= 0])
    v_sorted, w_sorted = keys // width, keys % width
    offsets = np.searchsorted(v_sorted, np.arange(n_v + 1), side="left")
    return _Column(
        name=name,
        o_codes=o_codes.astype(np.int64),
        p_codes=p_codes.astype(np.int64),
        n_values=n_v,
        width=width,
        wild=wild,
        offsets=offsets,
        targets=w_sorted,
        keys=keys,
    )


def matching_risk(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    quasi_identifiers: Sequence[str] | str,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> MatchingRisk:
    """Re-identification risk of every record for a prosecutor matching on ``quasi_identifiers``.

    ``original`` and ``protected`` hold the same records in the same order. ``hierarchies``
    (column -> :class:`~sdckit.core.hierarchy.Hierarchy`) tell which released labels stand
    for which original values; columns without one are matched on equal values, intervals and
    suppression. See the module docstring for the model and the compatibility rules. Raises
    :class:`DataError` for unaligned files, missing columns, and released values that are
    none of an original value, a hierarchy label, an interval or a suppression mark.
    """
    cols = check_aligned(original, protected, quasi_identifiers, "matching re-identification risk")
    hierarchies = dict(hierarchies or {})
    columns = [
        _column(
            c,
            original[c].reset_index(drop=True),
            protected[c].reset_index(drop=True),
            hierarchies.get(c),
        )
        for c in cols
    ]
    n = len(original)
    # distinct original tuples u and released tuples g
    u_of, n_u, u_rep = group_keys([c.o_codes for c in columns], [c.n_values for c in columns])
    g_of, n_g, g_rep = group_keys([c.p_codes for c in columns], [c.width for c in columns])
    f_g = np.bincount(g_of, minlength=n_g).astype(np.float64)
    # columns with few compatible released values per original value (and many released
    # values) first keep the candidate pairs few
    order = sorted(
        range(len(columns)),
        key=lambda j: (len(columns[j].keys) / max(columns[j].n_values, 1), -columns[j].width),
    )
    pair_u = np.arange(n_u, dtype=np.int64)
    pair_p = np.zeros(n_u, dtype=np.int64)
    g_prefix = np.zeros(n_g, dtype=np.int64)  # prefix id of each released tuple so far
    for j in order:
        col = columns[j]
        width = col.width
        child_key = g_prefix * width + col.p_codes[g_rep]
        child_of_g, uniq = pd.factorize(child_key)
        uniq = np.asarray(uniq, dtype=np.int64)
        keys = pd.Index(uniq)
        # children of each prefix, grouped by parent (for the walk over children)
        by_parent = np.argsort(uniq // width, kind="stable")
        n_parent = int(pair_p.max()) + 1 if len(pair_p) else 0
        child_start = np.searchsorted(uniq[by_parent] // width, np.arange(n_parent + 1))
        v = col.o_codes[u_rep][pair_u]  # each pair's original value in this column
        n_compat = col.offsets[v + 1] - col.offsets[v]
        n_child = child_start[pair_p + 1] - child_start[pair_p]
        # per pair, walk whichever is shorter: the compatible values of v (look each up as a
        # child) or the children of the prefix (test each for compatibility)
        via_child = n_child < n_compat
        new_u, new_c = [], []
        for rows in _chunks(np.where(via_child, n_child, n_compat)):
            vc = via_child[rows]
            r1 = rows[~vc]
            owner, index = _ranges(col.offsets[v[r1]], col.offsets[v[r1] + 1])
            owner = r1[owner]
            child = keys.get_indexer(pair_p[owner] * width + col.targets[index])
            hit = child >= 0
            new_u.append(pair_u[owner[hit]])
            new_c.append(child[hit])
            r2 = rows[vc]
            owner, index = _ranges(child_start[pair_p[r2]], child_start[pair_p[r2] + 1])
            owner = r2[owner]
            child = by_parent[index]
            hit = col.compatible(v[owner], uniq[child] % width)
            new_u.append(pair_u[owner[hit]])
            new_c.append(child[hit])
        pair_u = np.concatenate(new_u) if new_u else np.zeros(0, dtype=np.int64)
        pair_p = np.concatenate(new_c).astype(np.int64) if new_c else np.zeros(0, dtype=np.int64)
        g_prefix = child_of_g.astype(np.int64)
    # pair_p is now a distinct released tuple (its full prefix); g_prefix maps g -> that id
    n_final = int(g_prefix.max()) + 1
    size = np.zeros(n_final, dtype=np.float64)
    np.add.at(size, g_prefix, f_g)
    blank_g = np.ones(n_g, dtype=bool)  # released tuples suppressed in every QI
    for col in columns:
        blank_g &= col.wild[col.p_codes[g_rep]]
    blank = np.zeros(n_final, dtype=bool)
    blank[g_prefix[blank_g]] = True
    s = float(f_g[blank_g].sum())
    cand_u = np.bincount(pair_u, weights=np.where(blank[pair_p], 0.0, size[pair_p]), minlength=n_u)
    own = np.ones(n, dtype=bool)
    for col in columns:
        own &= col.compatible(col.o_codes, col.p_codes)
    cand = cand_u[u_of]
    suppressed = blank_g[g_of]
    # a record suppressed as a whole is found only when nothing else is compatible
    fallback = cand == 0
    cand = np.where(fallback, s, cand)
    hit = np.where(suppressed, fallback, own & ~fallback)
    risk = np.where(hit, 1.0 / np.maximum(cand, 1.0), 0.0)
    return MatchingRisk(quasi_identifiers=cols, risk=risk, candidates=cand, matchable=hit)


def reidentification_scale(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    quasi_identifiers: Sequence[str] | str,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> dict[str, Any]:
    """Both halves of the re-identification R-U scale of a release, on its quasi-identifiers.

    * ``disclosure_risk``: the expected share of records a prosecutor re-identifies by
      matching the QIs (:func:`matching_risk`; ``J/n`` -- ARX's prosecutor success rate -- for
      a global recoding without suppression);
    * ``information_loss``: the relative entropy-based information loss of the QIs
      (:func:`sdckit.utility.categorical.relative_entropy_loss`: Kooiman, Willenborg &
      Gouweleeuw 1998; de Waal & Willenborg 1999's non-uniform entropy for generalization);
    * ``score``: ``(100 information_loss + 100 disclosure_risk) / 2``, the R-U score of
      Domingo-Ferrer & Torra (2001) with both halves in percent.

    This scale compares generalization, suppression, recoding, PRAM and swapping of
    categorical QIs with one another (the 2001 score needs numeric, perturbed attributes).
    Returns a JSON-ready dict; raises :class:`DataError` as :func:`matching_risk` does.
    """
    from sdckit.utility.categorical import relative_entropy_loss

    m = matching_risk(original, protected, quasi_identifiers, hierarchies)
    il = relative_entropy_loss(original, protected, m.quasi_identifiers)
    return {
        "qi": m.quasi_identifiers,
        "disclosure_risk": m.average,
        "information_loss": il["relative_ebil"],
        "score": 50.0 * (il["relative_ebil"] + m.average),
        "matching": m.to_dict(),
        "information_loss_by_column": il["by_column"],
    }
