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
Manhattan distance on scaled columns, exactly, by blocks (no n x n matrix in memory).
Ties (equally close to both parts) count one half. The nearest-neighbour distance ratio
(NNDR: distance to the closest over distance to the second-closest record of a part; Platzer
& Reutterer 2021) tells whether synthetic records sit unusually close to one particular
record: its median against the training part well below that against the holdout signals
memorized outliers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text, is_numeric, text_codes
from sdckit.core.frequency import group_keys
from sdckit.errors import ParameterError
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
    nndr_training_median: float = float("nan")
    nndr_holdout_median: float = float("nan")
    synthetic_records: int = 0  # in the synthetic file
    measured_records: int = 0  # of them measured (a seeded random sample when fewer)

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready figures (``dcr_share_closer_than_holdout`` is the share;
        ``measured_records`` of the ``synthetic_records`` were measured)."""
        return {
            "dcr_share_closer_than_holdout": self.share_closer_to_training,
            "expected_share": self.expected_share,
            "dcr_training_median": self.dcr_training_median,
            "dcr_holdout_median": self.dcr_holdout_median,
            "exact_copies": self.exact_copies,
            "nndr_training_median": self.nndr_training_median,
            "nndr_holdout_median": self.nndr_holdout_median,
            "synthetic_records": self.synthetic_records,
            "measured_records": self.measured_records,
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


#: Distances per block of :func:`_nearest_gower` (query rows x reference records; 8 MiB of
#: float64): a block's buffers stay in the processor's cache instead of being streamed
#: through memory (on Adult's 20,000 distinct training records, 1,024 query rows a block took
#: 2.5 times as long).
_BLOCK_ENTRIES = 2**20


def _nearest_gower(
    reference: pd.DataFrame, query: pd.DataFrame, columns: Sequence[str], scale: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """Per query record, the Gower distances (times p) to its nearest and second-nearest
    ``reference`` records (records counted with their multiplicity: a duplicated nearest
    record is also the second nearest).

    The same distance as :func:`_gower_space` with Manhattan distance: a categorical column
    adds 1 when the values differ, a numeric one ``|a - b| / range`` (range of ``scale``,
    clipped to half a range beyond it; missing values 3 apart from any number). Computed
    exactly on the distinct records (every column coded once, records grouped by their
    codes). A query record equal to a reference record that occurs twice or more is at
    distance 0 from both (no distance computed). With categorical and numeric columns, the
    reference records of the query's class (its categorical values) come first
    (:func:`_nearest_in_class`): every other record is at least one mismatch, 1, away, so
    where the second nearest of the class is at most 1 away the two are the nearest overall.
    The other query records are measured against every reference record by blocks of query
    rows: categorical mismatches are ``p_cat - matches``, with the matches one matrix product
    of the one-hot codes (no tree search, which degrades in the one-hot space's many
    dimensions)."""
    numeric = [c for c in columns if is_numeric(reference[c]) and is_numeric(query[c])]
    categorical = [c for c in columns if c not in numeric]

    n_ref = len(reference)
    codes, cards = [], []  # per column, one code space over the reference and query rows
    for c in columns:
        if c in numeric:  # numbers compared as numbers; missing equals missing
            pair = [f[c].to_numpy(dtype=np.float64, na_value=np.nan) for f in (reference, query)]
            k, uniques = pd.factorize(np.concatenate(pair), use_na_sentinel=False)
            card = len(uniques)
        else:
            parts, card = text_codes(reference[c], query[c])
            k = np.concatenate(parts)
        codes.append(k)
        cards.append(card)
    record = group_keys(codes, cards, ordered=False)[0]  # equal records, equal ids
    ref_record, q_record = record[:n_ref], record[n_ref:]
    occurs = np.bincount(ref_record, minlength=int(record.max()) + 1)
    ref_ids, ref_first = np.unique(ref_record, return_index=True)  # the distinct references
    multiplicity = occurs[ref_ids]
    q_ids, q_first, q_codes = np.unique(q_record, return_index=True, return_inverse=True)
    repeated = occurs[q_ids] >= 2  # nearest and second nearest both at distance 0
    first = np.zeros(len(q_ids))
    second = np.zeros(len(q_ids))
    rest = np.flatnonzero(~repeated)
    q_rows = n_ref + q_first[rest]  # the distinct query records measured, as rows of codes
    n_query = len(rest)
    ref_num = q_num = None
    if numeric:
        frames = [
            pd.DataFrame(
                {c: f[c].to_numpy(dtype=np.float64, na_value=np.nan)[rows] for c in numeric}
            )
            for f, rows in ((reference, ref_first), (query, q_first[rest]))
        ]
        ref_num, q_num = _gower_space(frames, numeric, scale)
    ref_oh = q_oh = None
    cat_codes, cat_cards = [], []
    if categorical:
        blocks_r, blocks_q = [], []
        coded = dict(zip(columns, zip(codes, cards, strict=True), strict=True))
        for c in categorical:
            k, card = coded[c]
            cat_codes.append(np.concatenate([k[ref_first], k[q_rows]]))
            cat_cards.append(card)
            eye = np.eye(card, dtype=np.float32)
            blocks_r.append(eye[k[ref_first]])
            blocks_q.append(eye[k[q_rows]])
        ref_oh, q_oh = np.hstack(blocks_r), np.hstack(blocks_q)
    n_distinct = len(ref_ids)
    if cat_codes and q_num is not None and ref_num is not None and n_query:
        # first within the query's class (its categorical values): enough where the second
        # nearest there is at most 1 away, for any other record is a mismatch (1) away
        classes = group_keys(cat_codes, cat_cards, ordered=False)[0]
        found_in = _nearest_in_class(
            classes[:n_distinct], classes[n_distinct:], ref_num, q_num, multiplicity
        )
        if found_in is not None:
            d1, d2 = found_in
            done = d2 <= 1.0
            first[rest[done]] = d1[done]
            second[rest[done]] = d2[done]
            pending = np.flatnonzero(~done)
            rest, q_num = rest[pending], q_num[pending]
            q_oh = None if q_oh is None else q_oh[pending]
            n_query = len(pending)
    once = multiplicity == 1
    block = min(max(_BLOCK_ENTRIES // n_distinct, 1), max(n_query, 1))
    d = np.empty((block, n_distinct), dtype=np.float64)  # one buffer for every block
    spread = np.empty_like(d)
    matches = np.empty((block, n_distinct), dtype=np.float32)
    ref_oh_t = None if ref_oh is None else np.ascontiguousarray(ref_oh.T)
    for start in range(0, n_query, block):
        stop = min(start + block, n_query)
        rows = np.arange(stop - start)
        dist = d[: stop - start]
        if q_oh is not None and ref_oh_t is not None:
            # exact: sums of 0/1 products, whole numbers far below float32's 2**24
            same = np.matmul(q_oh[start:stop], ref_oh_t, out=matches[: stop - start])
            np.subtract(len(categorical), same, out=dist)
        else:
            dist.fill(0.0)
        if q_num is not None and ref_num is not None:
            tmp = spread[: stop - start]
            for j in range(q_num.shape[1]):
                np.subtract(q_num[start:stop, j, None], ref_num[None, :, j], out=tmp)
                np.abs(tmp, out=tmp)
                dist += tmp
        nearest = dist.argmin(axis=1)
        d1 = dist[rows, nearest]
        if n_distinct > 1:
            dist[rows, nearest] = np.inf  # the nearest once; its duplicates stay as the second
            d2 = np.where(once[nearest], dist.min(axis=1), d1)
        else:
            d2 = np.where(once[nearest], np.inf, d1)
        first[rest[start:stop]] = d1
        second[rest[start:stop]] = d2
    return first[q_codes], second[q_codes]


#: Most (query, reference) pairs of one class that :func:`_nearest_in_class` compares.
_CLASS_PAIRS = 2**20


def _nearest_in_class(
    ref_class: np.ndarray,
    query_class: np.ndarray,
    ref_num: np.ndarray,
    q_num: np.ndarray,
    multiplicity: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Per query record, the distances (Gower times p: the numeric columns' alone, the
    categorical ones being equal) to its nearest and second-nearest reference records of the
    same class (``inf`` where there are fewer; a reference record counted ``multiplicity``
    times), summed in the order of :func:`_nearest_gower`'s blocks (the same floats); None
    when the pairs to compare are more than :data:`_CLASS_PAIRS`."""
    size = np.bincount(ref_class, minlength=int(max(ref_class.max(), query_class.max())) + 1)
    counts = size[query_class]
    total = int(counts.sum())
    if total > _CLASS_PAIRS:
        return None
    begins = np.cumsum(counts) - counts  # each query's first pair
    owner = np.repeat(np.arange(len(query_class)), counts)
    starts = (np.cumsum(size) - size)[query_class]
    rows = np.argsort(ref_class, kind="stable")[
        np.repeat(starts, counts) + np.arange(total) - np.repeat(begins, counts)
    ]
    dist = np.zeros(total)
    for j in range(q_num.shape[1]):
        dist += np.abs(q_num[owner, j] - ref_num[rows, j])
    by = np.lexsort((dist, owner))  # by query, then distance
    dist, rows = dist[by], rows[by]
    d1 = np.full(len(query_class), np.inf)
    d2 = np.full(len(query_class), np.inf)
    has = np.flatnonzero(counts >= 1)
    head = begins[has]
    d1[has] = dist[head]
    twice = multiplicity[rows[head]] >= 2  # the nearest record occurs twice or more
    more = counts[has] >= 2
    d2[has] = np.where(
        twice, dist[head], np.where(more, dist[np.minimum(head + 1, total - 1)], np.inf)
    )
    return d1, d2


def _nndr(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Nearest-neighbour distance ratio ``d1 / d2`` (1 where both are 0: the record sits among
    identical records and is not closer to any one of them)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(second > 0, first / second, 1.0)


def dcr_holdout(
    training: pd.DataFrame,
    holdout: pd.DataFrame,
    synthetic: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    *,
    sample: int | None = None,
    seed: int | np.random.Generator | None = 0,
) -> HoldoutDCR:
    """Distance-to-closest-record shares of ``synthetic`` against ``training`` (seen by the
    synthesizer) and ``holdout`` (not seen), over ``columns`` (default: every column of
    ``training``); see the module docstring. Raises :class:`~sdckit.errors.DataError` for a
    missing column or an empty file.

    ``sample``: measure at most this many synthetic records, drawn without replacement by
    ``seed`` (each costs a pass over the training and holdout records, so the whole file
    costs ``n_synthetic x (n_training + n_holdout)`` distances; the shares and medians are
    then estimates from the sample, the result states how many were measured). ``None``:
    every synthetic record."""
    cols = check_aligned(training, synthetic, columns, "DCR", aligned=False)
    check_aligned(training, holdout, cols, "DCR", aligned=False)
    total = len(synthetic)
    if sample is not None:
        if isinstance(sample, bool) or not isinstance(sample, int | np.integer) or sample < 1:
            raise ParameterError(
                f"DCR: sample must be a number of synthetic records >= 1 (or None for all), "
                f"got {sample!r}"
            )
        if total > sample:
            picked = np.sort(np.random.default_rng(seed).choice(total, int(sample), replace=False))
            synthetic = synthetic.iloc[picked].reset_index(drop=True)
    p = max(len(cols), 1)
    d_train, d2_train = _nearest_gower(training, synthetic, cols, training)
    d_hold, d2_hold = _nearest_gower(holdout, synthetic, cols, training)
    nndr_train, nndr_hold = _nndr(d_train, d2_train), _nndr(d_hold, d2_hold)
    d_train, d_hold = d_train / p, d_hold / p
    tol = 1e-12
    closer = (d_train < d_hold - tol).sum() + 0.5 * (np.abs(d_train - d_hold) <= tol).sum()
    return HoldoutDCR(
        share_closer_to_training=float(closer / len(synthetic)),
        expected_share=len(training) / (len(training) + len(holdout)),
        dcr_training_median=float(np.median(d_train)),
        dcr_holdout_median=float(np.median(d_hold)),
        exact_copies=int((d_train <= tol).sum()),
        nndr_training_median=float(np.median(nndr_train)),
        nndr_holdout_median=float(np.median(nndr_hold)),
        synthetic_records=total,
        measured_records=len(synthetic),
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
