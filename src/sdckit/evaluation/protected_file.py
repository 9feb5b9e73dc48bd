"""Evaluate a protected file against its original: every applicable utility and risk measure.

:func:`evaluate` is what ``sdckit evaluate`` runs;
:func:`sdckit.report.evaluation_report.evaluation_report` turns its JSON document into the HTML
page a person reads. The measures themselves live in
:mod:`sdckit.utility` and :mod:`sdckit.risk` (each cites its source); this module only decides
which of them apply to which columns and assembles the document whose key names scripts rely
on:

* ``information_loss``: ``il1s`` (Yancey, Winkler & Creecy 2002), ``propensity_u`` (Woo et
  al. 2009), ``bounded_il`` (Mateo-Sanz, Domingo-Ferrer & Sebé 2005), ``score_il``
  (Domingo-Ferrer & Torra 2001, on its 0-100 scale) and the 24 matrix discrepancies
  ``mse_*``/``mae_*``/``mv_*`` of ``x, v, r, rf, c, f, mean, var`` (Domingo-Ferrer & Torra 2001).
* ``disclosure_risk`` (shares in [0, 1]): ``dbrl`` (distance-based record linkage, Euclidean
  on z-scores), ``prl`` (Fellegi-Sunter probabilistic linkage, EM m/u), ``interval_disclosure``
  (rank intervals, p = 1..10 %) and ``score_dr = 0.25 dbrl + 0.25 prl + 0.5 interval_disclosure``
  (Domingo-Ferrer, Mateo-Sanz & Torra 2001).
* ``score = (score_il + 100 score_dr) / 2``: the 2001 score, both halves in percent.
* ``transparency_attack`` ``{certain_matches, reidentified}`` (Nin, Herranz & Torra 2008) when
  the intruder is told the method (``known_method``).
* ``categorical`` (changed-value share, CTBIL, EBIL) when categorical columns are compared;
  ``reidentification`` when some intruder attributes are categorical: the share of records a
  prosecutor re-identifies by matching them (generalized labels, suppression, recoding, PRAM;
  :func:`sdckit.risk.matching.matching_risk`), the relative entropy-based information loss of
  the same attributes and their R-U score (:func:`sdckit.risk.matching.reidentification_scale`);
  ``use_specific`` (regression CI overlap, classifier accuracy) with a ``target``;
  ``worst_case_linkage`` (learned distances, Abril, Navarro-Arribas & Torra 2012) on request;
  ``isolation`` ((c, t)-isolation of Chawla et al. 2005 on the numeric intruder attributes:
  the shares of original records isolated by their own / by any released point;
  :func:`sdckit.risk.isolation.isolation_risk`);
  ``generalization`` (the generalization metrics of ``sdckit anonymize``: loss, precision,
  discernibility, ...) when hierarchies are given.

Column types. CSV cells arrive as text; a column is *numeric* when every cell of both files
parses as a number, *categorical* when the original column is not numeric or when the caller
names it in ``categorical`` (e.g. an age generalized to intervals). A column numeric in the
original but with non-numeric values in the protected file is an error (it names the value):
the numeric measures cannot use it, and silently treating it as categorical would change
which measures are reported.

Intruder attributes (``quasi_identifiers``, ``--qi`` on the command line; default: the numeric
compared columns): DBRL, interval disclosure
and the transparency attacks use the numeric ones; PRL compares all of them (categorical ones
by equality). Every intruder attribute must be in the protected file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from sdckit.core.io import MISSING_TOKENS, to_numeric
from sdckit.errors import DataError, SdcInputError, preview

__all__ = ["evaluate", "split_column_types", "MATRIX_KEYS"]

KnownMethod = Literal["rank_swapping", "microaggregation"]

#: The matrix-measure keys of ``information_loss`` (Domingo-Ferrer & Torra 2001).
MATRIX_KEYS = tuple(
    f"{d}_{m}" for m in ("x", "v", "r", "rf", "c", "f", "mean", "var") for d in ("mse", "mae", "mv")
)

#: Categorical columns with more categories are left out of the propensity model (a note says so).
MAX_PROPENSITY_LEVELS = 1000

#: Above this many candidate pairs (n^2) PRL uses sorted-neighbourhood blocking.
MAX_FULL_PAIRS = 2_000_000


# --------------------------------------------------------------------------------------------
# column types
# --------------------------------------------------------------------------------------------

#: The convention behind ``sdcmicro_drisk`` (stated in the JSON next to the value).
DRISK_RULE = (
    "sdcmicro_drisk: share of records with every attribute inside the interval "
    "[x' - 0.05 sd, x' + 0.05 sd] (sdcMicro dRisk since 5.5.2, rowSums(...) == 0); "
    "sdcmicro_drisk_at_most_one_outside: at most 1 attribute outside (sdcMicro dRisk before "
    "5.5.2, rowSums(...) %in% 0:1)"
)


def _is_number_column(s: pd.Series) -> bool:
    """Whether every cell of ``s`` parses as a number (missing tokens allowed)."""
    if pd.api.types.is_bool_dtype(s.dtype):
        return False
    if pd.api.types.is_numeric_dtype(s.dtype):
        return True
    text = s.astype(str).str.strip()
    filled = ~text.isin(MISSING_TOKENS) & s.notna()
    if not filled.any():
        return False
    conv = pd.to_numeric(text[filled], errors="coerce")
    return bool(conv.notna().all())


def split_column_types(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str],
    categorical: Sequence[str] = (),
) -> tuple[list[str], list[str], pd.DataFrame, pd.DataFrame]:
    """Split ``columns`` into numeric and categorical ones; convert the numeric ones to floats.

    Returns ``(numeric, categorical, original', protected')`` where the two frames hold
    ``columns`` with numeric columns as float64 (missing tokens -> NaN) and the others as they
    were. Raises :class:`DataError` when a column numeric in the original has a non-numeric
    value in the protected file (naming column, row and value, and the ``categorical`` fix).
    """
    cat_set = set(categorical)
    unknown = [c for c in cat_set if c not in columns]
    if unknown:
        raise DataError(
            f"categorical column(s) {preview(sorted(unknown))} are not among the compared "
            f"columns {preview(list(columns), 8)}; list them in columns too or drop them"
        )
    num: list[str] = []
    cat: list[str] = []
    o = original[list(columns)].copy()
    p = protected[list(columns)].copy()
    for c in columns:
        if c in cat_set or not _is_number_column(original[c]):
            cat.append(c)
            continue
        if not _is_number_column(protected[c]):
            try:
                to_numeric(protected[c], c, "the protected file")
            except DataError as exc:
                raise DataError(
                    f"{exc}. Column {c!r} is numeric in the original file, so the numeric "
                    "measures need numbers in the protected file too; if the column was "
                    f"recoded to categories, declare it categorical (categorical=[{c!r}], "
                    f"--categorical {c})"
                ) from None
        o[c] = to_numeric(original[c], c, "the original file")
        p[c] = to_numeric(protected[c], c, "the protected file")
        num.append(c)
    return num, cat, o, p


def _check_inputs(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str | None,
    quasi_identifiers: Sequence[str] | str | None,
) -> tuple[list[str], list[str] | None]:
    if not isinstance(original, pd.DataFrame) or not isinstance(protected, pd.DataFrame):
        raise SdcInputError(
            "evaluate needs two pandas DataFrames (original and protected), got "
            f"{type(original).__name__} and {type(protected).__name__}"
        )
    if columns is None:
        cols = [str(c) for c in original.columns]
    else:
        cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise DataError("evaluate: no columns to compare; name at least one with columns")
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise DataError(f"evaluate: column(s) {preview(dup)} listed twice; list each once")
    miss_o = [c for c in cols if c not in original.columns]
    if miss_o:
        raise DataError(
            f"column(s) {preview(miss_o)} not in the original file (its columns: "
            f"{preview(list(original.columns), 10)}); fix --columns"
        )
    miss_p = [c for c in cols if c not in protected.columns]
    if miss_p:
        raise DataError(
            f"column(s) {preview(miss_p)} of the original file are not in the protected file "
            f"(its columns: {preview(list(protected.columns), 10)}); the comparison needs the "
            "same columns in both files: rename them or restrict --columns"
        )
    if len(original) != len(protected):
        raise DataError(
            f"the original file has {len(original)} rows but the protected file has "
            f"{len(protected)}; evaluate compares records one by one (information loss, record "
            "linkage), so the protected file must hold the same respondents in the same order"
        )
    if len(original) < 2:
        raise DataError(f"evaluate needs at least 2 records; the files have {len(original)}")
    q: list[str] | None = None
    if quasi_identifiers is not None:
        q = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers)
        if not q:
            raise DataError(
                "evaluate: quasi_identifiers is empty; name the attributes the intruder knows"
            )
        notp = [c for c in q if c not in protected.columns]
        if notp:
            raise DataError(
                f"intruder column(s) {preview(notp)} are not in the protected file (its "
                f"columns: {preview(list(protected.columns), 10)}); the intruder links on "
                "released attributes only: fix --qi"
            )
        noto = [c for c in q if c not in original.columns]
        if noto:
            raise DataError(
                f"intruder column(s) {preview(noto)} are not in the original file; fix --qi"
            )
        extra = [c for c in q if c not in cols]
        if extra:
            raise DataError(
                f"intruder column(s) {preview(extra)} are not among the compared columns "
                f"{preview(cols, 8)}; add them to --columns or drop them from --qi"
            )
    return cols, q


# --------------------------------------------------------------------------------------------
# the evaluation
# --------------------------------------------------------------------------------------------
def evaluate(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    *,
    columns: Sequence[str] | str | None = None,
    quasi_identifiers: Sequence[str] | str | None = None,
    categorical: Sequence[str] = (),
    known_method: KnownMethod | None = None,
    p_percent: float | None = None,
    k: int | None = None,
    target: str | None = None,
    learned_distance: Sequence[str] = (),
    learned_time_limit: float = 60.0,
    intruder_rows: Sequence[int] | np.ndarray | None = None,
    intruder_share: float | None = None,
    dbrl_weights: Mapping[str, float] | None = None,
    hierarchies: Mapping[str, Any] | None = None,
    metric: str | Mapping[str, Any] = "loss",
    seed: int = 0,
    max_full_pairs: int = MAX_FULL_PAIRS,
    isolation_c: float = 2.0,
    isolation_t: int = 5,
) -> dict[str, Any]:
    """Every applicable information-loss and disclosure-risk measure of a protected file.

    ``original`` and ``protected`` must hold the same records in the same order (what every
    perturbative method produces). ``columns``: compared columns (default: all of the
    original's); ``quasi_identifiers``: the intruder's attributes (default: the numeric compared
    columns);
    ``categorical``: columns to treat as categories even if numeric. ``known_method`` with
    ``p_percent`` (rank swapping) or ``k`` (univariate microaggregation) adds the transparency
    attack. ``target`` adds the use-specific measures (regression on the other numeric columns
    if numeric, else a classifier on the other compared columns). ``learned_distance`` (any of
    ``"weighted_mean"``, ``"owa"``, ``"choquet"``) adds worst-case linkage by MILP (files of a
    few hundred records), each solved by HiGHS within ``learned_time_limit`` seconds (the best
    solution found is reported with ``optimal: false`` when the limit is hit). ``seed`` drives
    every random choice (propensity solver, PRL ties, the classifier's split). PRL compares all
    pairs up to ``max_full_pairs`` (``n^2``) with EM-estimated m and u (Jaro 1989), else uses
    sorted-neighbourhood blocking with u fixed at the agreement rates of random record pairs
    (EM's u on blocked pairs describes near neighbours and would make PRL collapse; on the
    Census file with 10 % noise full EM gives 0.445, blocking + EM 0.017, blocking + random-pair
    u 0.482).

    The intruder file B of distance-based linkage and of the transparency attack holds all
    records, or the positions ``intruder_rows``, or a random ``intruder_share`` of the records
    (drawn with ``seed``); PRL and interval disclosure always use all records. Beside the
    Euclidean DBRL, ``details`` holds Mahalanobis DBRL with the covariance of the differences
    ``x - x'`` (Torra, Abowd & Domingo-Ferrer 2006; the original file's covariance, with a
    note, when that one is singular because a column is unchanged) and, with
    ``dbrl_weights`` (numeric intruder attribute -> weight >= 0, every one of them),
    weighted-distance DBRL ``sqrt(sum_k w_k (z_k - z'_k)^2)``.

    ``isolation_c`` (>= 1) and ``isolation_t`` (integer >= 2) are the parameters of the
    (c, t)-isolation measure (``isolation``) on the numeric intruder attributes, z-scored as
    for DBRL (:mod:`sdckit.risk.isolation`).

    ``hierarchies`` (column -> :class:`~sdckit.core.hierarchy.Hierarchy`) adds the
    generalization metrics of ``sdckit anonymize`` (``generalization``: loss, precision,
    discernibility, AECS, non-uniform entropy, height; ``metric`` sets loss's aggregate and
    weights) computed on the pair by :func:`sdckit.utility.generalization_pair.
    generalization_metrics`; those columns are compared as categories.

    Returns the JSON-ready document described in the module docstring; measures that do not
    apply (e.g. numeric measures without numeric columns) are ``None`` and a line in ``notes``
    says why. Raises :class:`DataError` (an :class:`SdcInputError`) for unaligned files,
    missing columns, non-numeric values in numeric columns, missing values and zero-variance
    columns in numeric measures, intruder columns absent from the protected file.
    """
    from sdckit.risk.interval_disclosure import interval_disclosure, sdcmicro_drisk
    from sdckit.risk.isolation import check_isolation_parameters, isolation_risk
    from sdckit.risk.linkage import distance_linkage, score_disclosure_risk
    from sdckit.risk.probabilistic_linkage import probabilistic_linkage
    from sdckit.utility.numeric import (
        bounded_information_loss,
        il1s,
        matrix_measures,
        score_information_loss,
    )
    from sdckit.utility.propensity import propensity_score_utility

    cols, q = _check_inputs(original, protected, columns, quasi_identifiers)
    isolation_c, isolation_t = check_isolation_parameters(isolation_c, isolation_t)
    if known_method is not None:
        _check_known_method(known_method, p_percent, k)
    elif p_percent is not None or k is not None:
        raise SdcInputError(
            "p_percent / k describe the method the intruder knows: give known_method too "
            "(--known-method rank_swapping --p-percent P or microaggregation --k K)"
        )
    bad_ld = [f for f in learned_distance if f not in ("weighted_mean", "owa", "choquet")]
    if bad_ld:
        raise SdcInputError(
            f"learned_distance {preview(bad_ld)} unknown; use weighted_mean, owa or choquet"
        )
    rows = _intruder_rows(len(original), intruder_rows, intruder_share, seed)
    generalization = None
    if hierarchies:
        from sdckit.utility.generalization_pair import generalization_metrics

        outside = [c for c in hierarchies if c not in cols]
        if outside:
            raise DataError(
                f"hierarchies are given for {preview(outside)}, which are not among the "
                f"compared columns {preview(cols, 8)}; add them to columns or drop them"
            )
        generalization = generalization_metrics(
            original, protected, hierarchies, list(hierarchies), metric
        )
        categorical = [*categorical, *(c for c in hierarchies if c not in categorical)]
    num, cat, o, p = split_column_types(original, protected, cols, categorical)
    o = o.reset_index(drop=True)
    p = p.reset_index(drop=True)
    notes: list[str] = []
    q_all = list(q) if q is not None else list(num)
    q_num = [c for c in q_all if c in num]
    q_cat = [c for c in q_all if c in cat]
    if dbrl_weights is not None:
        _check_dbrl_weights(dbrl_weights, q_num)
    if known_method is not None:
        _need_numeric_qi(q_num, "the transparency attack")
    if learned_distance:
        _need_numeric_qi(q_num, "learned-distance linkage")

    # ---------------- information loss ----------------
    il: dict[str, Any] = {"il1s": None, "propensity_u": None, "bounded_il": None}
    il["score_il"] = None
    il.update(dict.fromkeys(MATRIX_KEYS))
    details: dict[str, Any] = {}
    if num:
        il["il1s"] = il1s(o, p, num)
        bil = bounded_information_loss(o, p, num)
        il["bounded_il"] = bil["bounded_il"]
        details["bounded_il"] = bil
        mm = matrix_measures(o, p, num)
        il.update({key: mm[key] for key in MATRIX_KEYS})
        try:
            sil = score_information_loss(o, p, num)
            il["score_il"] = sil["score_il"]
            details["score_il"] = sil
        except DataError as exc:
            notes.append(f"score_il is undefined: {exc}")
    else:
        notes.append(
            "no numeric columns: il1s, bounded_il, score_il and the matrix measures do not apply"
        )
    prop_cols = list(num)
    for c in cat:
        levels = pd.concat([o[c], p[c]], ignore_index=True).nunique(dropna=False)
        if levels <= MAX_PROPENSITY_LEVELS:
            prop_cols.append(c)
        else:
            notes.append(
                f"propensity_u leaves out categorical column {c!r}: {levels:,} categories "
                f"(more than {MAX_PROPENSITY_LEVELS:,}) would need as many indicator columns"
            )
    if prop_cols:
        il["propensity_u"] = propensity_score_utility(
            o, p, [c for c in cols if c in prop_cols], seed=seed
        )

    categorical_doc: dict[str, Any] | None = None
    if cat:
        categorical_doc = _categorical_measures(o, p, cat)

    # ---------------- disclosure risk ----------------
    dr: dict[str, Any] = {"dbrl": None, "prl": None, "interval_disclosure": None}
    dr["score_dr"] = None
    isolation: dict[str, Any] | None = None
    if q_num:
        link = distance_linkage(o, p, q_num, intruder_rows=rows, metric="euclidean")
        dr["dbrl"] = link.dbrl
        details["dbrl"] = link.to_dict()
        if len(q_num) > 1:
            why: list[str] = []
            for cov in ("difference", "original"):
                try:
                    details["dbrl_mahalanobis"] = distance_linkage(
                        o, p, q_num, intruder_rows=rows, metric="mahalanobis", covariance=cov
                    ).to_dict()
                    break
                except DataError as exc:
                    why.append(str(exc))
            if "dbrl_mahalanobis" not in details:
                notes.append(f"Mahalanobis linkage skipped: {'; '.join(why)}")
            elif why:
                notes.append(f"Mahalanobis linkage uses the original file's covariance: {why[0]}")
        if dbrl_weights is not None:
            details["dbrl_weighted"] = distance_linkage(
                o, p, q_num, intruder_rows=rows, metric="weighted", weights=dict(dbrl_weights)
            ).to_dict()
        idr = interval_disclosure(o, p, q_num)
        dr["interval_disclosure"] = idr.interval_disclosure
        details["interval_disclosure"] = idr.to_dict()
        # both rules, named: sdcMicro's current one (every attribute inside the interval,
        # dRisk.R since 5.5.2) and its earlier one (at most 1 attribute outside)
        details["sdcmicro_drisk"] = sdcmicro_drisk(o, p, q_num)
        details["sdcmicro_drisk_at_most_one_outside"] = sdcmicro_drisk(
            o, p, q_num, rule="at_most_one_outside"
        )
        details["sdcmicro_drisk_rule"] = DRISK_RULE
        isolation = isolation_risk(
            o, p, q_num, c=isolation_c, t=isolation_t, rows_correspond=True
        ).to_dict()
    else:
        notes.append(
            "no numeric intruder attributes: distance-based linkage and interval disclosure "
            "need numbers (name numeric columns in quasi_identifiers, --qi)"
        )
    if q_all:
        n = len(o)
        blocking = None if n * n <= max_full_pairs else "sorted_neighbourhood"
        if blocking is not None and not q_num:
            notes.append(
                f"PRL skipped: {n * n:,} record pairs need sorted-neighbourhood blocking, "
                "which needs a numeric intruder attribute"
            )
        else:
            if blocking is not None:
                notes.append(
                    f"PRL compares {n:,} x {n:,} records with sorted-neighbourhood blocking "
                    "(window 5) and u-probabilities from random record pairs"
                )
            prl = probabilistic_linkage(
                o,
                p,
                [*q_num, *q_cat],
                blocking=blocking,
                u_estimate="em" if blocking is None else "random_pairs",
                seed=seed,
                max_pairs=max(max_full_pairs, 10 * n * max(len(q_num), 1) + n),
            )
            dr["prl"] = prl.prl
            details["prl"] = prl.to_dict()
    if None not in (dr["dbrl"], dr["prl"], dr["interval_disclosure"]):
        dr["score_dr"] = score_disclosure_risk(dr["dbrl"], dr["prl"], dr["interval_disclosure"])
    reidentification = None
    if q_cat:
        from sdckit.risk.matching import reidentification_scale

        try:
            reidentification = reidentification_scale(
                original.reset_index(drop=True),
                protected.reset_index(drop=True),
                q_all,
                hierarchies,
            )
        except DataError as exc:
            notes.append(f"matching re-identification risk skipped: {exc}")
    score = None
    if il["score_il"] is not None and dr["score_dr"] is not None:
        score = (il["score_il"] + 100.0 * dr["score_dr"]) / 2.0

    doc: dict[str, Any] = {
        "n_records": len(o),
        "columns": {"compared": cols, "numeric": num, "categorical": cat, "qi": q_all},
        "information_loss": il,
        "disclosure_risk": dr,
        "score": score,
    }
    if known_method is not None:
        ta = _transparency(o, p, q_num, known_method, p_percent, k, rows)
        doc["transparency_attack"] = ta
        if ta["contains_true"] < 1.0:
            notes.append(
                f"transparency attack: {1.0 - ta['contains_true']:.1%} of the intruder's "
                f"records are not in their own candidate set ({ta['n_empty']:,} sets are "
                f"empty), so the protected file is not what {known_method} with "
                f"{ta['parameter']} produces; check --known-method and its parameter"
            )
    if isolation is not None:
        doc["isolation"] = isolation
    if categorical_doc is not None:
        doc["categorical"] = categorical_doc
    if reidentification is not None:
        doc["reidentification"] = reidentification
    if generalization is not None:
        doc["generalization"] = generalization
    if target is not None:
        doc["use_specific"] = _use_specific(o, p, target, num, cols, seed)
    if learned_distance:
        doc["worst_case_linkage"] = _worst_case(o, p, q_num, learned_distance, learned_time_limit)
    doc["details"] = details
    doc["notes"] = notes
    return doc


def _intruder_rows(
    n: int, rows: Sequence[int] | np.ndarray | None, share: float | None, seed: int
) -> np.ndarray | None:
    """Positions of the intruder's records (None = all); validated by the linkage module."""
    from sdckit.risk.linkage import rows_subset

    if rows is not None and share is not None:
        raise SdcInputError("give intruder_rows or intruder_share, not both")
    if share is not None:
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
            raise SdcInputError(
                f"intruder_share={share!r} must be a share of the records in (0, 1]"
            )
        size = max(1, int(round(share * n)))
        return np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))
    if rows is None:
        return None
    return rows_subset(rows, n)


def _check_known_method(method: str, p_percent: float | None, k: int | None) -> None:
    if method == "rank_swapping":
        if p_percent is None or k is not None:
            raise SdcInputError(
                "known_method='rank_swapping' needs p_percent (--p-percent P, the swap window "
                "in % of the records) and no k"
            )
        if not (isinstance(p_percent, int | float) and 0 < float(p_percent) <= 100):
            raise SdcInputError(f"p_percent={p_percent!r} must lie in (0, 100]")
    elif method == "microaggregation":
        if k is None or p_percent is not None:
            raise SdcInputError(
                "known_method='microaggregation' needs k (--k K, the minimum group size) and "
                "no p_percent"
            )
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise SdcInputError(f"k={k!r} must be an integer >= 1")
    else:
        raise SdcInputError(
            f"known_method={method!r} is unknown; use 'rank_swapping' or 'microaggregation'"
        )


def _need_numeric_qi(q_num: list[str], what: str) -> None:
    """DataError (before any measure is computed) when ``what`` has no numeric attribute."""
    if not q_num:
        raise DataError(
            f"{what} links on numeric intruder attributes; none of --qi is numeric: add the "
            "masked numeric columns to --qi (and --columns)"
        )


def _check_dbrl_weights(weights: Mapping[str, Any], q_num: list[str]) -> None:
    """DataError unless ``weights`` gives every numeric intruder attribute a weight >= 0."""
    flag = "dbrl_weights (--dbrl-weights)"
    if not isinstance(weights, Mapping):
        raise SdcInputError(f"{flag} must map column -> weight, got {type(weights).__name__}")
    unknown = [c for c in weights if c not in q_num]
    if unknown:
        raise DataError(
            f"{flag} name(s) {preview(unknown)}, which are not numeric intruder attributes "
            f"({preview(q_num, 8) if q_num else 'none'}); fix the names or add them to --qi"
        )
    missing = [c for c in q_num if c not in weights]
    if missing:
        raise DataError(
            f"{flag} give no weight for {preview(missing)}; give every numeric intruder "
            "attribute a weight (0 leaves it out), e.g. --dbrl-weights "
            + ",".join(f"{c}=1" for c in q_num[:4])
        )
    for c, w in weights.items():
        ok = isinstance(w, int | float | np.integer | np.floating) and not isinstance(w, bool)
        if not ok or not np.isfinite(w) or w < 0:
            raise DataError(f"{flag}: the weight of {c!r} is {w!r}; weights must be numbers >= 0")
    if not any(float(w) > 0 for w in weights.values()):
        raise DataError(f"{flag}: every weight is 0; give at least one attribute a weight > 0")


def _transparency(
    o: pd.DataFrame,
    p: pd.DataFrame,
    q_num: list[str],
    method: str,
    p_percent: float | None,
    k: int | None,
    rows: np.ndarray | None,
) -> dict[str, Any]:
    from sdckit.risk.transparency import microaggregation_attack, rank_swap_attack

    _need_numeric_qi(q_num, "the transparency attack")
    if method == "rank_swapping":
        res = rank_swap_attack(
            o,
            p,
            q_num,
            p_percent=float(p_percent),  # type: ignore[arg-type]
            intruder_rows=rows,
        )
    else:
        res = microaggregation_attack(o, p, q_num, k=int(k), intruder_rows=rows)  # type: ignore[arg-type]
    return res.to_dict()


def _categorical_measures(o: pd.DataFrame, p: pd.DataFrame, cat: list[str]) -> dict[str, Any]:
    from sdckit.utility.categorical import (
        changed_values_share,
        contingency_table_loss,
        entropy_loss,
    )

    ct = contingency_table_loss(o, p, cat, max_order=min(2, len(cat)))
    return {
        "changed_values_share": changed_values_share(o, p, cat),
        "changed_by_column": {c: changed_values_share(o, p, [c]) for c in cat},
        "ctbil": ct["ctbil"],
        "ctbil_share": ct["ctbil_share"],
        "ctbil_tables": ct["tables"],
        "ebil": {c: entropy_loss(o, p, c)["ebil"] for c in cat},
        "ebil_per_record": {c: entropy_loss(o, p, c)["ebil_per_record"] for c in cat},
    }


def _use_specific(
    o: pd.DataFrame, p: pd.DataFrame, target: str, num: list[str], cols: list[str], seed: int
) -> dict[str, Any]:
    from sdckit.utility.analysis import classifier_accuracy, regression_comparison

    if target not in cols:
        raise DataError(
            f"target {target!r} is not among the compared columns {preview(cols, 8)}; add it "
            "to columns (--columns) or fix --target"
        )
    out: dict[str, Any] = {"target": target}
    if target in num:
        preds = [c for c in num if c != target]
        if not preds:
            raise DataError(f"the regression of {target!r} needs at least one other numeric column")
        out["regression"] = regression_comparison(o, p, target, preds)
    else:
        feats = [c for c in cols if c != target]
        if not feats:
            raise DataError(f"the classifier for {target!r} needs at least one other column")
        out["classifier"] = classifier_accuracy(o, p, target, feats, seed=seed)
    return out


def _worst_case(
    o: pd.DataFrame,
    p: pd.DataFrame,
    q_num: list[str],
    families: Sequence[str],
    time_limit: float,
) -> dict[str, Any]:
    from sdckit.risk.learned_distance import learned_distance_linkage

    _need_numeric_qi(q_num, "learned-distance linkage")
    return {
        fam: learned_distance_linkage(
            o,
            p,
            q_num,
            family=fam,  # type: ignore[arg-type]
            time_limit=time_limit,
        ).to_dict()
        for fam in families
    }
