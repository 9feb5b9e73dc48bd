"""Top-down specialization (TDS / HDTDS) for LKC-privacy and the other models.

B. C. M. Fung, K. Wang, P. S. Yu, "Top-down specialization for information and privacy
preservation", ICDE 2005 (TDS); N. Mohammed, B. C. M. Fung, P. C. K. Hung, C. Lee,
"Anonymizing healthcare data: a case study on the blood transfusion service", KDD 2009
(HDTDS, the same search for LKC-privacy).

Every QI starts at its most general value (the hierarchy's top, ``"*"``; for a numeric QI the
whole range of its values). Each iteration performs the *valid* specialization with the best
``Score``; a specialization is valid when the table, after it, still satisfies every privacy
model (records of violating classes may be suppressed within ``suppression_limit``, see
:func:`~sdckit.algorithms._heuristics.suppress_violations`). The search stops when no
specialization is valid.

* Categorical QIs with a hierarchy specialize a node ``v`` of the current cut into its
  children (top-down along the hierarchy). A hierarchy whose top level has several labels gets
  a virtual root ``"*"`` above them.
* Numeric QIs (schema type integer/decimal) specialize an interval by a binary split chosen at
  run time: the threshold ``t`` (a data value; ``x <= t`` | ``x > t``) maximizing InfoGain
  (Fung et al. 2005, Section 4.1: the split point of a continuous attribute is the one with
  the highest information gain). Intervals are released as ``"[min, max]"`` of the domain
  values they hold (a single value as is); share ``(max - min) / (global max - global min)``,
  or, when the QI also has a hierarchy, its leaves inside the interval over all leaves.
* Categorical QIs without hierarchy stay ``"*"``.

Score: ``InfoGain(v) = E(T[v]) - sum_c |T[c]| / |T[v]| E(T[c])`` with ``E`` the Shannon entropy
(bits) of the class attribute over the records generalized to ``v`` and ``c`` the children of
``v`` (Fung et al. 2005, eq. 2). HDTDS for classification analysis uses ``Score(v) =
InfoGain(v)`` (Mohammed et al. 2009, Section 4.1): privacy is enforced by the validity check,
not by a privacy-loss term. InfoGain(v) depends only on the records under ``v``, so it is
computed once per node. Ties go to the QI first in the schema, then to the node first in
hierarchy order (numeric: lower interval).

A specialization that is invalid stays invalid: later specializations only make classes finer,
which cannot repair a violated LKC/k/l bound (Mohammed et al. 2009, Section 4.2 -- strictly so
without suppression; with suppression this is the heuristic's simplification). Invalid
candidates are therefore never re-checked.

The class attribute is the option ``class_attribute``; by default the first sensitive
attribute of the schema, else the first insensitive one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import encode
from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError
from sdckit.models.base import PrivacyModel

from ._heuristics import (
    Prepared,
    Progress,
    is_numeric,
    leaf_shares,
    no_solution,
    numeric_values,
    prepare,
    qi_frequency_set,
    range_labels,
    range_shares,
    refuse_metric,
    release,
    report_progress,
    suppress_violations,
)
from .options import TdsOptions, parse_options

__all__ = ["tds", "entropy_bits", "info_gain"]


def entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits of each row of a (groups x classes) count matrix."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total > 0, counts / np.where(total > 0, total, 1), 0.0)
        terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=-1)


def info_gain(parent: np.ndarray, children: np.ndarray) -> float:
    """InfoGain of splitting class counts ``parent`` into the rows of ``children``.

    ``E(parent) - sum_c |c| / |parent| E(c)`` (Fung, Wang & Yu 2005, eq. 2), in bits.
    """
    parent = np.asarray(parent, dtype=float)
    n = parent.sum()
    if n <= 0:
        return 0.0
    children = np.asarray(children, dtype=float)
    return float(entropy_bits(parent) - (children.sum(axis=1) * entropy_bits(children)).sum() / n)


@dataclass
class _Attr:
    """One QI's cut: the current node of every record and the candidate specializations."""

    name: str
    index: int
    kind: str  # "hierarchy", "numeric" or "fixed"
    # hierarchy
    stack: np.ndarray | None = None  # (levels, n) codes per level (virtual root appended)
    level_labels: list = field(default_factory=list)
    level_shares: list = field(default_factory=list)
    offsets: np.ndarray | None = None
    gains: list = field(default_factory=list)  # per level: InfoGain per code
    rec_level: np.ndarray | None = None
    # numeric
    dom: np.ndarray | None = None
    vidx: np.ndarray | None = None
    bounds: list = field(default_factory=list)  # sorted split points (dom index, left side)
    counts: np.ndarray | None = None  # (len(dom), classes) class counts per value
    span: float = 0.0
    prep: Prepared | None = None

    # -- the per-kind fields, narrowed -------------------------------------------------
    def _unset(self, fields: str) -> RuntimeError:
        return RuntimeError(
            f"tds: {self.kind} attribute {self.name!r} lacks {fields}, which _attrs sets for "
            "its kind. This is a bug in sdckit."
        )

    def _hierarchy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``stack``, ``offsets`` and ``rec_level`` of a "hierarchy" attribute."""
        if self.stack is None or self.offsets is None or self.rec_level is None:
            raise self._unset("stack, offsets or rec_level")
        return self.stack, self.offsets, self.rec_level

    def _numeric(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``dom``, ``vidx`` and ``counts`` of a "numeric" attribute."""
        if self.dom is None or self.vidx is None or self.counts is None:
            raise self._unset("dom, vidx or counts")
        return self.dom, self.vidx, self.counts

    # -- current codes and labels ------------------------------------------------------
    def codes(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-record code of the current cut node, and the label of every code."""
        if self.kind == "hierarchy":
            stack, offsets, rec_level = self._hierarchy()
            rec_code = stack[rec_level, np.arange(n)]
            node = offsets[rec_level] + rec_code
            return node, np.concatenate(self.level_labels)
        if self.kind == "numeric":
            dom, vidx, _ = self._numeric()
            iid = np.searchsorted(np.asarray(self.bounds, dtype=np.int64), vidx, "left")
            lo, hi = self._intervals()
            return iid, range_labels(dom[lo], dom[hi])
        return np.zeros(n, dtype=np.int64), np.array(["*"], dtype=object)

    def _intervals(self) -> tuple[np.ndarray, np.ndarray]:
        dom, _, _ = self._numeric()
        b = np.asarray(self.bounds, dtype=np.int64)
        lo = np.concatenate([[0], b + 1])
        hi = np.concatenate([b, [len(dom) - 1]])
        return lo, hi

    def shares(self, n: int) -> np.ndarray:
        """Per-record share of the domain covered by its current node."""
        if self.kind == "hierarchy":
            stack, offsets, rec_level = self._hierarchy()
            rec_code = stack[rec_level, np.arange(n)]
            flat = np.concatenate(self.level_shares)
            return flat[offsets[rec_level] + rec_code]
        if self.kind == "numeric":
            dom, _, _ = self._numeric()
            if self.prep is None:
                raise self._unset("prep")
            iid, _ = self.codes(n)
            lo, hi = self._intervals()
            return range_shares(self.prep, self.name, dom[lo], dom[hi])[iid]
        return np.ones(n)

    # -- candidates ---------------------------------------------------------------------
    def candidates(self, n: int) -> list[tuple[float, tuple[int, int], int | None]]:
        """``(gain, key, payload)`` for every specializable node that holds records.

        ``key`` is ``(level, code)`` of a hierarchy node (payload None) or the dom index range
        ``(lo, hi)`` of a numeric interval (payload: the split threshold's dom index).
        """
        out: list[tuple[float, tuple[int, int], int | None]] = []
        if self.kind == "hierarchy":
            stack, offsets, rec_level = self._hierarchy()
            rec_code = stack[rec_level, np.arange(n)]
            pairs = np.unique(offsets[rec_level] + rec_code)
            for node in pairs.tolist():
                lv = int(np.searchsorted(offsets, node, "right") - 1)
                if lv == 0:
                    continue
                code = node - int(offsets[lv])
                out.append((float(self.gains[lv][code]), (lv, code), None))
        elif self.kind == "numeric":
            lo, hi = self._intervals()
            for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
                if b > a:
                    gain, t = self._best_split(a, b)
                    out.append((gain, (a, b), t))
        return out

    def _best_split(self, lo: int, hi: int) -> tuple[float, int]:
        """Threshold (dom index, ``x <= dom[t]`` goes left) maximizing InfoGain in [lo, hi]."""
        _, _, counts = self._numeric()
        block = counts[lo : hi + 1].astype(float)
        parent = block.sum(axis=0)
        left = np.cumsum(block, axis=0)[:-1]
        right = parent[None, :] - left
        n = parent.sum()
        nl, nr = left.sum(axis=1), right.sum(axis=1)
        gains = entropy_bits(parent) - (nl * entropy_bits(left) + nr * entropy_bits(right)) / n
        best = int(np.argmax(gains))  # first maximum: lowest threshold on ties
        return float(gains[best]), lo + best

    def apply(self, key: tuple, payload, n: int) -> None:
        """Perform the specialization ``key`` on every record under it."""
        if self.kind == "hierarchy":
            lv, code = key
            stack, _, rec_level = self._hierarchy()
            on = (rec_level == lv) & (stack[lv] == code)
            rec_level[on] = lv - 1
        else:
            self.bounds = sorted([*self.bounds, int(payload)])

    def undo(self, key: tuple, payload, n: int) -> None:
        """Revert :meth:`apply` (used when the specialization turns out invalid)."""
        if self.kind == "hierarchy":
            lv, code = key
            stack, _, rec_level = self._hierarchy()
            on = (rec_level == lv - 1) & (stack[lv] == code)
            rec_level[on] = lv
        else:
            self.bounds = [b for b in self.bounds if b != int(payload)]

    def describe(self, key: tuple, payload) -> dict:
        """JSON-ready description of a specialization."""
        if self.kind == "hierarchy":
            lv, code = key
            stack, _, _ = self._hierarchy()
            parent = self.level_labels[lv][code]
            kids = np.unique(stack[lv - 1][stack[lv] == code])
            return {
                "attribute": self.name,
                "from": str(parent),
                "to": [str(x) for x in self.level_labels[lv - 1][kids]],
            }
        a, b = key
        t = int(payload)
        dom, _, _ = self._numeric()
        labels = range_labels(dom[[a, t + 1]], dom[[t, b]])
        return {
            "attribute": self.name,
            "from": str(range_labels(dom[[a]], dom[[b]])[0]),
            "to": [str(x) for x in labels],
            "threshold": float(dom[t]),
        }


def _class_codes(prep: Prepared, class_attribute) -> tuple[str, np.ndarray, int]:
    """The class attribute (option or default) as codes."""
    schema = prep.schema
    if class_attribute is None:
        candidates = schema.sensitive or schema.names("insensitive")
        if not candidates:
            raise ConfigError(
                "tds: no class attribute: the schema has no sensitive or insensitive "
                "attribute; give option class_attribute (the column whose entropy the "
                "specializations should reduce)"
            )
        class_attribute = candidates[0]
    if not isinstance(class_attribute, str) or class_attribute not in prep.data.columns:
        raise ConfigError(
            f"tds: option class_attribute={class_attribute!r} is not a column of the data "
            f"(columns: {', '.join(map(str, prep.data.columns))})"
        )
    if class_attribute in prep.qis:
        raise ConfigError(
            f"tds: class_attribute {class_attribute!r} is a quasi-identifier; choose a "
            "sensitive or insensitive column"
        )
    enc = encode(prep.data[class_attribute], class_attribute)
    return class_attribute, enc.codes.astype(np.int64), max(enc.cardinality, 1)


def _attrs(prep: Prepared, cls: np.ndarray, n_cls: int) -> list[_Attr]:
    n = prep.n
    out = []
    for i, q in enumerate(prep.qis):
        if is_numeric(prep, q):
            v = numeric_values(prep, q)
            dom, vidx = np.unique(v, return_inverse=True)
            counts = np.bincount(vidx * n_cls + cls, minlength=len(dom) * n_cls)
            out.append(
                _Attr(
                    q,
                    i,
                    "numeric",
                    dom=dom,
                    vidx=vidx.astype(np.int64),
                    counts=counts.reshape(len(dom), n_cls),
                    span=float(dom[-1] - dom[0]),
                    prep=prep,
                )
            )
            continue
        h = prep.schema.hierarchy(q)
        if h is None:
            out.append(_Attr(q, i, "fixed"))
            continue
        enc = prep.base.quasi_identifiers[i]
        stack = [enc.codes_at(lv).astype(np.int64) for lv in range(h.height)]
        labels = [np.asarray(h.labels[lv], dtype=object) for lv in range(h.height)]
        shares = [leaf_shares(h, lv) for lv in range(h.height)]
        if len(labels[-1]) > 1:  # several top labels: add a virtual root
            stack.append(np.zeros(n, dtype=np.int64))
            labels.append(np.array(["*"], dtype=object))
            shares.append(np.ones(1))
        gains = [np.zeros(len(labels[0]))]
        for lv in range(1, len(stack)):
            k_par, k_ch = len(labels[lv]), len(labels[lv - 1])
            par = np.bincount(stack[lv] * n_cls + cls, minlength=k_par * n_cls)
            ch = np.bincount(stack[lv - 1] * n_cls + cls, minlength=k_ch * n_cls)
            par, ch = par.reshape(k_par, n_cls), ch.reshape(k_ch, n_cls)
            # parent of every child code (tree): any record's pair gives it
            parent_of = np.zeros(k_ch, dtype=np.int64)
            parent_of[stack[lv - 1]] = stack[lv]
            weighted = ch.sum(axis=1) * entropy_bits(ch)
            child_sum = np.bincount(parent_of, weights=weighted, minlength=k_par)
            size = par.sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                g = entropy_bits(par) - np.where(size > 0, child_sum / np.maximum(size, 1), 0.0)
            gains.append(np.maximum(g, 0.0))
        offsets = np.concatenate([[0], np.cumsum([len(x) for x in labels])[:-1]])
        out.append(
            _Attr(
                q,
                i,
                "hierarchy",
                stack=np.stack(stack),
                level_labels=labels,
                level_shares=shares,
                offsets=offsets.astype(np.int64),
                gains=gains,
                rec_level=np.full(n, len(stack) - 1, dtype=np.int64),
            )
        )
    return out


def tds(
    data: pd.DataFrame,
    schema: Schema,
    models: list[PrivacyModel],
    *,
    suppression_limit: float = 0.0,
    metric: Any = None,
    seed: int | None = None,
    progress: Progress = None,
    **options,
) -> AlgorithmOutput:
    """Anonymize by top-down specialization with InfoGain scores (see the module docstring).

    Options: ``class_attribute`` (default: first sensitive, else first insensitive column).
    The performed specializations, in order, are in ``details["specializations"]``.
    ``metric`` and ``seed`` do not influence the (deterministic) search.
    """
    refuse_metric(
        metric, "tds", "it specializes by information gain per anonymity loss, Fung et al. 2005"
    )
    opts = parse_options("tds", options)
    assert isinstance(opts, TdsOptions)
    prep = prepare(data, schema, models, suppression_limit, "tds")
    cls_name, cls, n_cls = _class_codes(prep, opts.class_attribute)
    attrs = _attrs(prep, cls, n_cls)
    n = prep.n

    def evaluate():
        codes, labels = {}, {}
        for a in attrs:
            codes[a.name], labels[a.name] = a.codes(n)
        fs = qi_frequency_set(prep, codes, labels)
        return fs, suppress_violations(fs, prep.models, prep.max_suppressed)

    fs, res = evaluate()
    nodes = 1
    if not res.ok:
        raise no_solution(prep, res.suppressed_records, "Even the most general table fails.")
    invalid: set = set()
    performed: list[dict] = []
    while True:
        cands = []
        for a in attrs:
            for gain, key, payload in a.candidates(n):
                if (a.index, key) not in invalid:
                    cands.append((-gain, a.index, key, payload))
        cands.sort(key=lambda c: (c[0], c[1], c[2]))
        report_progress(progress, len(performed), len(performed) + len(cands))
        chosen = None
        for neg_gain, idx, key, payload in cands:
            a = attrs[idx]
            a.apply(key, payload, n)
            new_fs, new_res = evaluate()
            nodes += 1
            if new_res.ok:
                chosen = (neg_gain, a, key, payload)
                fs, res = new_fs, new_res
                break
            a.undo(key, payload, n)
            invalid.add((idx, key))
        if chosen is None:
            break
        neg_gain, a, key, payload = chosen
        step = a.describe(key, payload)
        step["info_gain"] = -neg_gain
        step["score"] = -neg_gain
        performed.append(step)
    report_progress(progress, len(performed), len(performed))
    suppressed = res.suppressed_classes[fs.row_class()]
    labels, share = {}, {}
    for a in attrs:
        codes, lab = a.codes(n)
        labels[a.name] = lab[codes]
        share[a.name] = a.shares(n)
    out, shares = release(prep, labels, share, suppressed)
    details = {
        "algorithm": "tds",
        "class_attribute": cls_name,
        "score": "InfoGain (bits), Mohammed et al. 2009 / Fung et al. 2005",
        "specializations": performed,
        "invalid_candidates": len(invalid),
        "suppressed_records": int(np.count_nonzero(suppressed)),
        "classes": int(fs.n_classes - np.count_nonzero(res.suppressed_classes)),
    }
    return AlgorithmOutput(
        data=out,
        share=shares,
        suppressed=suppressed,
        transformation=None,
        nodes_checked=nodes,
        details=details,
    )
