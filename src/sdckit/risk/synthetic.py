"""Disclosure risk of synthetic data: distance to closest record against a holdout (DCR) and
the targeted correct attribution probability (TCAP).

Platzer & Reutterer (2021), "Holdout-based empirical assessment of mixed-type synthetic data",
*Frontiers in Big Data* 4:679939: split the original records into a training part (the
synthesizer sees it) and a holdout (it does not). For every synthetic record take its distance
to the closest training record and to the closest holdout record. A synthesizer that
generalizes places synthetic records no closer to the training records than to unseen records
of the same population: the share of synthetic records closer to the training part is then
about ``n_train / (n_train + n_holdout)`` (one half for equal parts); a share well above it
means training records are reproduced or approximated (memorized).

Distance: Gower's (1971) mixed-type distance, the mean over the columns of
``|x - y| / range`` for numeric columns (range of the training part; values beyond it are
clipped half a range outside it; a missing value is at least 1.5 from any number and 0 from
another missing one) and 0/1 mismatch for the others (missing a category), computed as a
Manhattan distance on scaled columns with scikit-learn's nearest neighbours (no n x n matrix).
Ties (equally close to both parts) count one half.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from sdckit.core.encoding import as_text, is_numeric
from sdckit.core.frequency import group_keys
from sdckit.utility.numeric import check_aligned

__all__ = ["HoldoutDCR", "TCAP", "dcr_holdout", "tcap"]


@dataclass(frozen=True)
class HoldoutDCR:
    """The DCR holdout comparison (module docstring)."""

    share_closer_to_training: float
    expected_share: float
    dcr_training_median: float
    dcr_holdout_median: float
    exact_copies: int

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready figures (``dcr_share_closer_than_holdout`` is the share)."""
        return {
            "dcr_share_closer_than_holdout": self.share_closer_to_training,
            "expected_share": self.expected_share,
            "dcr_training_median": self.dcr_training_median,
            "dcr_holdout_median": self.dcr_holdout_median,
            "exact_copies": self.exact_copies,
        }


def _gower_space(
    frames: Sequence[pd.DataFrame], columns: Sequence[str], reference: pd.DataFrame
) -> list[np.ndarray]:
    """Each frame as a matrix whose Manhattan distances are Gower distances times p."""
    blocks: list[list[np.ndarray]] = [[] for _ in frames]
    for c in columns:
        if all(is_numeric(f[c]) for f in frames):
            ref = reference[c].to_numpy(dtype=np.float64, na_value=np.nan)
            lo, hi = np.nanmin(ref), np.nanmax(ref)
            width = hi - lo if hi > lo else 1.0
            for out, f in zip(blocks, frames, strict=True):
                v = (f[c].to_numpy(dtype=np.float64, na_value=np.nan) - lo) / width
                # beyond the training range: at most a full range away; missing apart
                v = np.clip(v, -0.5, 1.5)
                out.append(np.where(np.isnan(v), 3.0, v)[:, None])
        else:
            texts = [as_text(f[c]) for f in frames]
            codes, uniques = pd.factorize(np.concatenate(texts))
            start = 0
            for out, t in zip(blocks, texts, strict=True):
                one_hot = np.zeros((len(t), len(uniques)))
                one_hot[np.arange(len(t)), codes[start : start + len(t)]] = 0.5
                start += len(t)
                out.append(one_hot)
    return [
        np.hstack(b) if b else np.zeros((len(f), 0)) for b, f in zip(blocks, frames, strict=True)
    ]


def dcr_holdout(
    training: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
) -> HoldoutDCR:
    """Distance-to-closest-record shares of ``synthetic`` against ``training`` (seen by the
    synthesizer) and ``holdout`` (not seen), over ``columns`` (default: every column of
    ``training``); see the module docstring. Raises :class:`~sdckit.errors.DataError` for a
    missing column or an empty file."""
    cols = check_aligned(training, synthetic, columns, "DCR", aligned=False)
    check_aligned(training, holdout, cols, "DCR", aligned=False)
    train_x, hold_x, syn_x = _gower_space([training, holdout, synthetic], cols, training)
    p = max(len(cols), 1)

    def nearest(reference: np.ndarray) -> np.ndarray:
        nn = NearestNeighbors(n_neighbors=1, metric="manhattan").fit(reference)
        return nn.kneighbors(syn_x, return_distance=True)[0][:, 0] / p

    d_train, d_hold = nearest(train_x), nearest(hold_x)
    tol = 1e-12
    closer = (d_train < d_hold - tol).sum() + 0.5 * (np.abs(d_train - d_hold) <= tol).sum()
    return HoldoutDCR(
        share_closer_to_training=float(closer / len(syn_x)),
        expected_share=len(training) / (len(training) + len(holdout)),
        dcr_training_median=float(np.median(d_train)),
        dcr_holdout_median=float(np.median(d_hold)),
        exact_copies=int((d_train <= tol).sum()),
    )


@dataclass(frozen=True)
class TCAP:
    """Targeted correct attribution probability (see :func:`tcap`)."""

    tcap: float
    baseline: float
    matched_share: float
    matched_records: int

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready figures."""
        return {
            "tcap": self.tcap,
            "baseline": self.baseline,
            "matched_share": self.matched_share,
            "matched_records": self.matched_records,
        }


def tcap(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    quasi_identifiers: Sequence[str] | str,
    target: str,
) -> TCAP:
    """Targeted correct attribution probability of ``target`` from ``quasi_identifiers`` (the
    intruder's key variables; Taub, Elliot, Pampaka & Smith 2018, "Differential correct
    attribution probability for synthetic data: an exploration", *Privacy in Statistical
    Databases*, LNCS 11126, 122-137).

    The intruder knows a person's key values and looks them up in the synthetic data. Where
    every synthetic record with those key values has the same target value ``t`` (the synthetic
    key class is *target-homogeneous*: within-equivalence-class attribution probability 1),
    the intruder attributes ``t``. TCAP is the share of the original records whose key class
    is attributed that way and whose own target is ``t`` (the mean correct attribution
    probability over those records); ``matched_share`` is the share of original records
    attributed at all, ``baseline`` the probability of a correct guess from the target's
    marginal alone (``sum_t p_t^2`` over the original). Values are compared as text; a
    missing value is a value of its own. Computed on frequency sets of the stacked key codes.
    """
    key_cols = (
        [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers)
    )
    cols = check_aligned(original, synthetic, [*key_cols, target], "TCAP", aligned=False)
    key_cols = cols[:-1]
    n = len(original)
    codes, cards = [], []
    for c in key_cols:
        k, u = pd.factorize(np.concatenate([as_text(original[c]), as_text(synthetic[c])]))
        codes.append(k.astype(np.int64))
        cards.append(len(u))
    t, tu = pd.factorize(np.concatenate([as_text(original[target]), as_text(synthetic[target])]))
    t = t.astype(np.int64)
    group, n_groups, _ = group_keys(codes, cards, ordered=False)
    g_orig, g_syn = group[:n], group[n:]
    t_orig, t_syn = t[:n], t[n:]
    # per synthetic key class: its size and the size of its most common target
    pair, n_pairs, rep = group_keys([g_syn, t_syn], [n_groups, len(tu)], ordered=False)
    pair_count = np.bincount(pair, minlength=n_pairs)
    class_size = np.bincount(g_syn, minlength=n_groups)
    pair_group = g_syn[rep]
    homogeneous = class_size[pair_group] == pair_count  # one target value fills the class
    attributed = np.full(n_groups, -1, dtype=np.int64)
    attributed[pair_group[homogeneous]] = t_syn[rep][homogeneous]
    guess = attributed[g_orig]
    matched = guess >= 0
    correct = matched & (guess == t_orig)
    p = np.bincount(t_orig, minlength=len(tu)) / n
    return TCAP(
        tcap=float(correct.sum() / matched.sum()) if matched.any() else 0.0,
        baseline=float((p**2).sum()),
        matched_share=float(matched.mean()),
        matched_records=int(matched.sum()),
    )
