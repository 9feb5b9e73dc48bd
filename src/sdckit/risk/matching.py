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

Computation: the compatible released tuples of every distinct original tuple are found by a
join that walks the released tuples' prefix tree one QI at a time (hash look-ups for equal
values, hierarchy ancestors and suppression; a range test for intervals), never by comparing
all n x n pairs.
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

    qi: list[str]
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
            "qi": list(self.qi),
            "average_risk": self.average,
            "highest_risk": self.highest,
            "certain_share": self.certain,
            "records_at_risk_0.2": self.at_risk(0.2),
            "matchable_share": float(np.mean(self.matchable)) if len(self.matchable) else 0.0,
            "mean_candidates": float(np.mean(self.candidates)) if len(self.candidates) else 0.0,
        }


@dataclass
class _Column:
    """One QI: original/released value codes and the compatibility test between them."""

    name: str
    o_codes: np.ndarray  # per record, into o_vals
    p_codes: np.ndarray  # per record, into p_vals
    o_vals: np.ndarray
    p_vals: np.ndarray
    equal: np.ndarray  # per original value: code of the same released text, or -1
    ancestors: np.ndarray  # (original values, levels): released codes of its ancestors, or -1
    wild: np.ndarray  # per released value: suppressed
    wild_codes: np.ndarray
    interval: np.ndarray  # per released value: is an interval
    lo: np.ndarray
    hi: np.ndarray
    lo_closed: np.ndarray
    hi_closed: np.ndarray
    o_num: np.ndarray  # per original value: its number (NaN if not a number)

    def compatible(self, v: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Whether released value codes ``w`` are compatible with original value codes ``v``."""
        ok = self.wild[w] | (self.equal[v] == w)
        if self.ancestors.shape[1]:
            ok |= (self.ancestors[v] == w[:, None]).any(axis=1)
        iv = self.interval[w] & ~ok
        if iv.any():
            x, ww = self.o_num[v[iv]], w[iv]
            above = np.where(self.lo_closed[ww], x >= self.lo[ww], x > self.lo[ww])
            below = np.where(self.hi_closed[ww], x <= self.hi[ww], x < self.hi[ww])
            ok[np.flatnonzero(iv)] = above & below
        return ok


def _parse_intervals(values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Which distinct released values are intervals ``[lo, hi]``/``(lo, hi)``, and their ends."""
    parts = pd.Series(values, dtype=object).astype(str).str.extract(_INTERVAL)
    lo = pd.to_numeric(parts[1], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(parts[2], errors="coerce").to_numpy(dtype=float)
    is_iv = parts[0].notna().to_numpy() & (lo <= hi)
    lo_c = (parts[0] == "[").to_numpy()
    hi_c = (parts[3] == "]").to_numpy()
    return is_iv, lo, hi, lo_c, hi_c


def _column(
    name: str, original: pd.Series, protected: pd.Series, hierarchy: Hierarchy | None
) -> _Column:
    o_codes, o_vals = pd.factorize(as_text(original))
    p_codes, p_vals = pd.factorize(as_text(protected))
    o_vals = np.asarray(o_vals, dtype=object)
    p_vals = np.asarray(p_vals, dtype=object)
    p_index = pd.Index(p_vals)
    equal = p_index.get_indexer(o_vals).astype(np.int64)
    wild = np.isin(p_vals, list(WILDCARDS))
    if hierarchy is not None:
        leaf = pd.Index(hierarchy.leaves).get_indexer(o_vals)
        anc = np.full((len(o_vals), hierarchy.height), -1, dtype=np.int64)
        known = leaf >= 0
        for level in range(hierarchy.height):
            anc[known, level] = p_index.get_indexer(hierarchy.table[leaf[known], level])
        labels = np.unique(hierarchy.table.ravel())
        is_label = np.isin(p_vals, labels)
    else:
        anc = np.zeros((len(o_vals), 0), dtype=np.int64)
        is_label = np.zeros(len(p_vals), dtype=bool)
    iv, lo, hi, lo_c, hi_c = _parse_intervals(p_vals)
    in_domain = np.isin(p_vals, o_vals)
    unknown = ~(wild | is_label | iv | in_domain)
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
    o_num = pd.to_numeric(pd.Series(o_vals), errors="coerce").to_numpy(dtype=float)
    return _Column(
        name=name,
        o_codes=o_codes.astype(np.int64),
        p_codes=p_codes.astype(np.int64),
        o_vals=o_vals,
        p_vals=p_vals,
        equal=equal,
        ancestors=anc,
        wild=wild,
        wild_codes=np.flatnonzero(wild),
        interval=iv,
        lo=lo,
        hi=hi,
        lo_closed=lo_c,
        hi_closed=hi_c,
        o_num=o_num,
    )


def _lookup(keys: pd.Index, parent: np.ndarray, w: np.ndarray, width: int) -> np.ndarray:
    """Child prefix ids for ``(parent, released code)`` pairs (-1 where there is none)."""
    ok = w >= 0
    out = np.full(len(parent), -1, dtype=np.int64)
    if ok.any():
        out[ok] = keys.get_indexer(parent[ok] * width + w[ok])
    return out


def matching_risk(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    qi: Sequence[str] | str,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> MatchingRisk:
    """Re-identification risk of every record for a prosecutor matching on ``qi``.

    ``original`` and ``protected`` hold the same records in the same order. ``hierarchies``
    (column -> :class:`~sdckit.core.hierarchy.Hierarchy`) tell which released labels stand
    for which original values; columns without one are matched on equal values, intervals and
    suppression. See the module docstring for the model and the compatibility rules. Raises
    :class:`DataError` for unaligned files, missing columns, and released values that are
    none of an original value, a hierarchy label, an interval or a suppression mark.
    """
    cols = check_aligned(original, protected, qi, "matching re-identification risk")
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
    u_of, n_u, u_rep = group_keys([c.o_codes for c in columns], [len(c.o_vals) for c in columns])
    g_of, n_g, g_rep = group_keys([c.p_codes for c in columns], [len(c.p_vals) for c in columns])
    f_g = np.bincount(g_of, minlength=n_g).astype(np.float64)
    # most selective columns first keeps the candidate pairs few
    order = sorted(range(len(columns)), key=lambda j: -len(columns[j].p_vals))
    pair_u = np.arange(n_u, dtype=np.int64)
    pair_p = np.zeros(n_u, dtype=np.int64)
    g_prefix = np.zeros(n_g, dtype=np.int64)  # prefix id of each released tuple so far
    for j in order:
        col = columns[j]
        width = len(col.p_vals)
        w_g = col.p_codes[g_rep]
        child_key = g_prefix * width + w_g
        child_of_g, uniq = pd.factorize(child_key)
        keys = pd.Index(uniq)
        child_parent = np.asarray(uniq) // width
        child_w = np.asarray(uniq) % width
        v = col.o_codes[u_rep][pair_u]  # each pair's original value in this column
        rows = np.arange(len(pair_u), dtype=np.int64)
        # (pair, child) candidates; child -1 = no such released prefix
        found = [(rows, _lookup(keys, pair_p, col.equal[v], width))]
        for level in range(col.ancestors.shape[1]):
            found.append((rows, _lookup(keys, pair_p, col.ancestors[v, level], width)))
        for wc in col.wild_codes:
            found.append((rows, _lookup(keys, pair_p, np.full(len(v), wc, dtype=np.int64), width)))
        if col.interval.any():
            # intervals need a range test: expand each pair over its parent's interval children
            iv_child = np.flatnonzero(col.interval[child_w])
            if len(iv_child):
                by_parent = iv_child[np.argsort(child_parent[iv_child], kind="stable")]
                parents = child_parent[by_parent]
                start = np.searchsorted(parents, pair_p, side="left")
                stop = np.searchsorted(parents, pair_p, side="right")
                cnt = stop - start
                tot = int(cnt.sum())
                if tot:
                    rep = np.repeat(rows, cnt)
                    offs = np.arange(tot) - np.repeat(np.cumsum(cnt) - cnt, cnt)
                    child = by_parent[np.repeat(start, cnt) + offs]
                    ok = col.compatible(v[rep], child_w[child])
                    found.append((rep[ok], child[ok]))
        idx = np.concatenate([f[0] for f in found])
        child = np.concatenate([f[1] for f in found])
        idx, child = idx[child >= 0], child[child >= 0]
        # one child can be reached by several rules (equal value and level-0 ancestor)
        key = np.unique(idx * len(uniq) + child)
        pair_u = pair_u[key // len(uniq)]
        pair_p = key % len(uniq)
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
    return MatchingRisk(qi=cols, risk=risk, candidates=cand, matchable=hit)


def reidentification_scale(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    qi: Sequence[str] | str,
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

    m = matching_risk(original, protected, qi, hierarchies)
    il = relative_entropy_loss(original, protected, m.qi)
    return {
        "qi": m.qi,
        "disclosure_risk": m.average,
        "information_loss": il["relative_ebil"],
        "score": 50.0 * (il["relative_ebil"] + m.average),
        "matching": m.to_dict(),
        "information_loss_by_column": il["by_column"],
    }
