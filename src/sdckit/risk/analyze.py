"""Re-identification risk analysis of one data set: what ``sdckit analyze`` reports.

Everything is computed from one frequency set of the quasi-identifiers (plus, when asked,
sampling weights and household ids): prosecutor/journalist/marketer risk (El Emam & Dankar
2008), sample and population uniqueness (Pitman, Zayatz, SNB, Dankar et al. 2012), sdcMicro's
individual and household risk (Benedetti & Franconi 1998), SUDA2/DIS scores (Elliot et al.),
and the distinction/separation of every QI combination (Motwani & Xu 2007).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import EncodedColumn
from sdckit.core.frequency import (
    FrequencySet,
    build_frequency_set,
    encode_quasi_identifier,
    frequency_set,
    require_values,
    wildcard_frequencies,
)
from sdckit.errors import DataError
from sdckit.risk.distinction import attribute_combinations, distinction_separation
from sdckit.risk.reidentification import (
    class_size_distribution,
    journalist_risk,
    marketer_risk,
    prosecutor_risk,
    record_risk_summary,
    records_at_risk_share,
)

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.core.hierarchy import Hierarchy


@dataclass
class RiskAnalysis:
    """The result of :func:`analyze`: a JSON-ready ``summary`` plus the frequency set and the
    prosecutor risk ``1/f`` of every class (``f`` the wildcard frequency where missing values
    match any value).

    When the classes stay on a cluster (the Spark engine's distributed path) there is no
    frequency set here: ``class_risk`` then holds one risk per distinct class size and
    ``class_records`` the records having it."""

    summary: dict[str, Any]
    frequency_set: FrequencySet | None
    class_risk: np.ndarray  # per class prosecutor risk 1/f_j
    extras: dict[str, Any] = field(default_factory=dict)
    risk_records: np.ndarray | None = None  # records per class_risk entry, without classes

    def _repr_html_(self) -> str:
        """The risk analysis in a Jupyter notebook: the summary tables and charts of its HTML
        report, compact (:func:`sdckit.core.display.notebook_html`)."""
        from sdckit.core.display import notebook_html

        return notebook_html("risk_analysis", self)

    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    @property
    def class_records(self) -> np.ndarray:
        """The records each ``class_risk`` entry stands for (the class sizes)."""
        if self.risk_records is not None:
            return self.risk_records
        if self.frequency_set is None:  # pragma: no cover - one of the two is always set
            raise DataError("this analysis holds neither classes nor their record counts")
        return self.frequency_set.counts

    @property
    def record_risk(self) -> np.ndarray:
        """Per-record prosecutor risk (needs the rows: not on a frequency set counted
        elsewhere, e.g. by the Spark engine; use ``class_risk`` with the class sizes)."""
        if self.frequency_set is None:
            raise DataError(
                "per-record risk needs the records; this analysis kept its classes on Spark"
            )
        return self.class_risk[self.frequency_set.row_class()]

    def to_dict(self) -> dict[str, Any]:
        """The JSON summary (the keys scripts rely on)."""
        return self.summary


def population_class_sizes(
    fs: FrequencySet, population: pd.DataFrame, sample: pd.DataFrame
) -> np.ndarray:
    """Size of the population class matching each sample class (same QIs and levels).

    Sample and population rows are grouped together by the one engine, with a 0/1 "source"
    histogram, so values are matched by their text and no second group-by exists.
    """
    names = list(fs.names)
    missing = [c for c in names if c not in population.columns]
    if missing:
        raise DataError(f"population table lacks the quasi-identifier column(s) {missing}")
    both = pd.concat([sample[names], population[names]], ignore_index=True)
    qis = [encode_quasi_identifier(both[q.name], q.name, q.hierarchy) for q in fs.quasi_identifiers]
    source = EncodedColumn(
        "source",
        np.r_[np.zeros(len(sample), np.int32), np.ones(len(population), np.int32)],
        np.array(["sample", "population"], dtype=object),
    )
    joint = build_frequency_set(qis, fs.levels, {"source": source})
    population_per_joint_class = joint.histogram("source").toarray()[:, 1]
    sample_rows_joint_class = joint.row_class()[: len(sample)]
    out = np.zeros(fs.n_classes, dtype=np.int64)
    out[fs.row_class()] = population_per_joint_class[sample_rows_joint_class]
    return out


def analyze(
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    sampling_fraction: float | None = None,
    weight: str | None = None,
    household: str | None = None,
    threshold: float = 0.2,
    population: pd.DataFrame | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: Sequence[int] | None = None,
    max_combination_size: int | None = None,
    suda: bool = True,
    measures: Sequence[str] | str | None = None,
    suda_max_size: int | None = None,
    missing: str = "wildcard",
) -> RiskAnalysis:
    """Analyze the re-identification risk of ``data`` with the given quasi-identifiers.

    Returns a :class:`RiskAnalysis` whose ``summary`` has the keys documented for
    ``sdckit analyze --json``: ``records``, ``equivalence_classes``, ``sample_uniques``,
    ``sample_uniques_share``, ``prosecutor``, ``journalist``, ``marketer``,
    ``records_at_risk_share``, ``distinction``, ``separation``, ``suda``, and with the
    options ``population_uniques_share`` (``sampling_fraction``), ``individual_risk``
    (``weight``) and ``household_risk`` (``household``); with ``sensitive`` attributes,
    ``sensitive`` (per attribute: the smallest number of distinct values in a class, i.e.
    distinct l-diversity, its entropy form, and the classes with one value only -- the
    homogeneity attack of Machanavajjhala et al. 2007).

    ``quasi_identifiers`` and ``sensitive`` are lists of column names (one name may be given
    as a string). The per-record measures over QI subsets are the expensive ones:
    ``measures`` chooses among :data:`OPTIONAL_MEASURES` (``"distinction"``: distinction and
    separation of QI combinations; ``"suda"``: SUDA2/DIS). By default both run unless their
    estimated cost exceeds the budget (:data:`MAX_DISTINCTION_WORK`, the SUDA memory bound),
    in which case they are skipped and ``summary["skipped"]`` says why and how to force them;
    a measure named in ``measures`` always runs (SUDA still refuses what cannot fit in
    memory). ``suda_max_size`` limits the size of the minimal sample uniques searched.

    ``missing`` says what a missing key value (an empty cell, ``NA``, ``NaN``) is:
    ``"wildcard"`` (default, as sdcMicro's ``freqCalc``/``measure_risk`` and mu-Argus: it
    matches any value, so a locally suppressed record joins every class it could belong to;
    ``f_k``, ``F_k`` and all risks per record then come from
    :func:`sdckit.core.frequency.wildcard_frequencies`) or ``"category"`` (one more value, as
    ARX counts it). ``summary["missing_values"]`` states which was used and how many records
    have a missing key. Distinction/separation and SUDA2 work on the classes either way (SUDA2
    never lets a missing value be part of a minimal sample unique, as sdcMicro's ``suda2``).
    """
    t0 = time.perf_counter()
    if missing not in MISSING_SEMANTICS:
        raise DataError(
            f"missing must be one of {', '.join(MISSING_SEMANTICS)} (what a missing key value "
            f"matches), got {missing!r}"
        )
    qi = column_list(quasi_identifiers)
    sensitive = column_list(sensitive)
    _chosen_measures(measures, suda)  # a bad name fails before the data is read
    check_quasi_identifiers(qi, list(data.columns))
    if len(data) == 0:
        raise DataError("the data has no records")
    fs = frequency_set(
        data,
        qi,
        sensitive=list(sensitive),
        hierarchies=hierarchies,
        levels=levels,
        weights=weight,
    )
    require_values(fs)
    pop_counts = None
    if population is not None:
        pop_counts = population_class_sizes(fs, population, data)
    household_codes = None
    if household is not None and weight is not None:
        if household not in data.columns:
            raise DataError(
                f"household column {household!r} not found; available columns: "
                f"{', '.join(map(str, data.columns))}"
            )
        household_codes = encode_quasi_identifier(data[household], household).codes
    return analyze_frequency_set(
        fs,
        sensitive=sensitive,
        sampling_fraction=sampling_fraction,
        weighted=weight is not None,
        household_codes=household_codes,
        household=household,
        threshold=threshold,
        population_counts=pop_counts,
        population_records=None if population is None else len(population),
        max_combination_size=max_combination_size,
        suda=suda,
        measures=measures,
        suda_max_size=suda_max_size,
        missing=missing,
        started=t0,
    )


def analyze_frequency_set(
    fs: FrequencySet,
    sensitive: Sequence[str] = (),
    sampling_fraction: float | None = None,
    weighted: bool = False,
    household_codes: np.ndarray | None = None,
    household: str | None = None,
    threshold: float = 0.2,
    population_counts: np.ndarray | None = None,
    population_records: int | None = None,
    max_combination_size: int | None = None,
    suda: bool = True,
    measures: Sequence[str] | str | None = None,
    suda_max_size: int | None = None,
    missing: str = "wildcard",
    started: float | None = None,
) -> RiskAnalysis:
    """:func:`analyze` on a frequency set already built (from rows, or counted by the Spark
    engine): every measure reads the classes only, so both engines give the same numbers.

    ``weighted``: the frequency set carries summed sampling weights (individual risk);
    ``household_codes``: per-record household codes (household risk needs the rows, so only
    a frequency set built from rows has it); ``population_counts``: per class, the size of
    the matching population class; ``started``: ``perf_counter`` time the analysis began.
    Other parameters as :func:`analyze`.
    """
    t0 = time.perf_counter() if started is None else started
    if missing not in MISSING_SEMANTICS:
        raise DataError(
            f"missing must be one of {', '.join(MISSING_SEMANTICS)} (what a missing key value "
            f"matches), got {missing!r}"
        )
    sensitive = column_list(sensitive)
    chosen = _chosen_measures(measures, suda)
    qi = list(fs.names)
    population = population_counts
    counts = fs.counts
    n = fs.n_records
    pop_counts = population_counts
    missing_cells = _missing_cells(fs)
    records_missing = int(counts[missing_cells.any(axis=1)].sum())
    wildcard = missing == "wildcard" and records_missing > 0
    if wildcard and (population is not None or sampling_fraction is not None):
        raise DataError(
            f"{records_missing:,} record(s) have a missing quasi-identifier value; population "
            "risk (--population, --sampling-fraction) needs classes, which wildcard matching "
            'does not form: pass --missing category (missing="category") to count a '
            "missing value as a category of its own"
        )
    if household is not None and not weighted:
        raise DataError(
            "household risk needs sampling weights: give --weight COL together with --household"
        )
    if weighted and fs.weights is None:
        raise DataError("individual risk needs the sampling weights summed per class")
    fk_class = Fk_class = None
    if wildcard:
        class_weights = fs.weights if weighted else None
        fk_class, Fk_class = wildcard_frequencies(fs.keys, counts, missing_cells, class_weights)
        freq = fk_class
    else:
        freq = counts
    summary: dict[str, Any] = {
        "records": n,
        "quasi_identifiers": qi,
        "equivalence_classes": fs.n_classes,
        "missing_values": missing_summary(missing, records_missing),
    }
    if wildcard:
        summary.update(
            {
                "sample_uniques": (uniques := int(counts[freq == 1].sum())),
                "sample_uniques_share": uniques / n,
                "prosecutor": record_risk_summary(freq, counts).to_dict(),
                "journalist": record_risk_summary(freq, counts).to_dict(),
                "marketer": float((counts / freq).sum() / n),
                "threshold": threshold,
                "records_at_risk_share": records_at_risk_share(counts, threshold, freq),
                "class_size_distribution": class_size_distribution(counts, freq),
            }
        )
    else:
        summary.update(class_size_measures(counts, threshold, pop_counts))
    if population_records is not None:
        summary["population_records"] = population_records
    if sampling_fraction is not None:
        summary.update(sampling_measures(counts, sampling_fraction))
    if weighted:
        from sdckit.risk.individual import individual_risk_from_frequencies

        assert fs.weights is not None  # checked above
        fk, big_fk = (fk_class, Fk_class) if wildcard else (counts, fs.weights)
        assert fk is not None and big_fk is not None  # weights given: both computed
        ind = individual_risk_from_frequencies(fk, big_fk, counts)
        summary["individual_risk"] = ind.to_dict()
        if household is not None:
            from sdckit.risk.individual import household_risk

            if household_codes is None:
                raise DataError(
                    "household risk needs the records (each member's household); it is "
                    "computed by the local engine only"
                )
            summary["household_risk"] = household_risk(
                ind.risk[fs.row_class()], household_codes
            ).to_dict()
    if sensitive:
        summary["sensitive"] = {a: sensitive_measures(fs, a) for a in sensitive}
    skipped: dict[str, str] = {}
    forced = measures is not None
    if "distinction" in chosen:
        combos = len(attribute_combinations(qi, max_combination_size))
        work = combos * fs.n_classes
        if forced or work <= MAX_DISTINCTION_WORK:
            dist, sep = distinction_separation(fs, max_combination_size)
            summary["distinction"] = dist
            summary["separation"] = sep
        else:
            skipped["distinction"] = (
                f"distinction/separation of {combos:,} QI combinations over {fs.n_classes:,} "
                f"classes ({work:,} class visits) exceeds the default budget of "
                f"{MAX_DISTINCTION_WORK:,}; force it with --measures distinction (or "
                "measures=['distinction'])"
            )
    if "suda" in chosen:
        from sdckit.risk.suda import fits, largest_feasible_size, suda2

        size = suda_max_size if suda_max_size is not None else len(qi)
        if forced or fits(len(qi), fs.n_classes, min(size, len(qi))):
            # on the classes (distinct keys with their sizes): same scores, no regrouping
            missing_codes = [
                _missing_code(q.labels(lv))
                for q, lv in zip(fs.quasi_identifiers, fs.levels, strict=True)
            ]
            summary["suda"] = suda2(
                fs.keys, max_size=suda_max_size, missing_codes=missing_codes, counts=fs.counts
            ).to_dict()
        else:
            best = largest_feasible_size(len(qi), fs.n_classes)
            skipped["suda"] = (
                f"SUDA2 over {len(qi)} key variables up to MSU size {size} on "
                f"{fs.n_classes:,} distinct records exceeds the memory bound"
                + (
                    f"; --suda-max-size {best} (suda_max_size={best}) fits"
                    if best
                    else "; use fewer quasi-identifiers"
                )
            )
    if skipped:
        summary["skipped"] = skipped
    summary["elapsed_seconds"] = time.perf_counter() - t0
    return RiskAnalysis(summary=summary, frequency_set=fs, class_risk=1.0 / freq)


def missing_summary(missing: str, records_missing: int) -> dict[str, Any]:
    """The summary's ``missing_values`` entry: the semantics, the records with a missing
    key value and the tokens read as missing."""
    return {
        "semantics": missing,
        "records_with_missing_key": records_missing,
        "tokens": sorted(MISSING_KEY_TOKENS),
    }


def class_size_measures(
    counts: np.ndarray,
    threshold: float,
    population_counts: np.ndarray | None = None,
    classes: np.ndarray | None = None,
) -> dict[str, Any]:
    """The measures of the summary that read the class sizes only (each class its own key
    combination, no wildcard): sample uniques, prosecutor, journalist and marketer risk
    (El Emam & Dankar 2008), the records at risk above ``threshold`` and the class-size
    distribution. ``classes``: how many classes have each size in ``counts`` (a class-size
    histogram, what the Spark engine brings to the driver instead of the classes)."""
    counts = np.asarray(counts)
    mult = np.ones(len(counts), dtype=np.int64) if classes is None else np.asarray(classes)
    n = int((counts.astype(np.int64) * mult).sum())
    uniques = int((counts * mult)[counts == 1].sum())
    return {
        "sample_uniques": uniques,
        "sample_uniques_share": uniques / n,
        "prosecutor": prosecutor_risk(counts, classes).to_dict(),
        "journalist": journalist_risk(counts, population_counts, classes).to_dict(),
        "marketer": marketer_risk(counts, population_counts, classes),
        "threshold": threshold,
        "records_at_risk_share": records_at_risk_share(counts, threshold, None, classes),
        "class_size_distribution": class_size_distribution(counts, None, classes),
    }


def sampling_measures(
    counts: np.ndarray, sampling_fraction: float, classes: np.ndarray | None = None
) -> dict[str, Any]:
    """The summary's population-uniqueness estimates from the class sizes (``classes``: as
    :func:`class_size_measures`)."""
    from sdckit.models.population_estimators import population_uniqueness

    return {
        "sampling_fraction": sampling_fraction,
        "population_uniques_share": population_uniqueness(
            counts, sampling_fraction, classes=classes
        ),
    }


#: What a missing key value matches: any value (sdcMicro) or only itself (a category, ARX).
MISSING_SEMANTICS = ("wildcard", "category")
#: Key values that are missing: an empty cell, R's NA, NaN (read back as text). Narrower than
#: :data:`sdckit.core.io.MISSING_TOKENS` (the tokens a *number* column may hold for "missing"):
#: in a categorical key, "?" or "." are often codes of their own.
MISSING_KEY_TOKENS = frozenset({"", "NA", "NaN", "nan"})


def _missing_labels(labels: np.ndarray) -> np.ndarray:
    """Which of a key's labels are missing values (:data:`MISSING_KEY_TOKENS`, None, NaN)."""
    return np.array(
        [v is None or (isinstance(v, float) and v != v) or str(v) in MISSING_KEY_TOKENS
         for v in np.asarray(labels, dtype=object)],
        dtype=bool,
    )  # fmt: skip


def _missing_cells(fs: FrequencySet) -> np.ndarray:
    """(classes x keys) flags of the missing key values (:func:`_missing_labels`)."""
    out = np.zeros(fs.keys.shape, dtype=bool)
    for i, (q, lv) in enumerate(zip(fs.quasi_identifiers, fs.levels, strict=True)):
        is_missing = _missing_labels(q.labels(lv))
        if is_missing.any():
            out[:, i] = is_missing[fs.keys[:, i]]
    return out


#: The measures over QI subsets that ``measures`` selects (the others always run).
OPTIONAL_MEASURES = ("distinction", "suda")
#: Default budget of distinction/separation: QI combinations x classes visited (about 20 ns
#: each, so some 40 s on this budget's edge); beyond it the measure is skipped unless asked.
MAX_DISTINCTION_WORK = 2_000_000_000


def measured_models(summary: Mapping[str, Any]) -> list[str]:
    """The job-file names of the privacy models whose quantity an analysis ``summary``
    reports: ``k_anonymity`` (class sizes), ``average_risk`` (average prosecutor risk) and
    ``sample_uniqueness`` (sample uniques) always, ``k_map`` with a population table
    (``population_records``), ``population_uniqueness`` with a sampling fraction (the
    estimated ``population_uniques_share``), ``l_diversity`` and ``xy_privacy`` (the largest
    value share: (X,Y)-linkability with ``Y`` the attribute) with sensitive attributes
    (``sensitive``), and ``ke_anonymity`` when one of them is numeric (``min_range``).
    For :func:`sdckit.models.attacks.attack_coverage`."""
    names = ["k_anonymity", "average_risk", "sample_uniqueness"]
    if summary.get("population_records") is not None:
        names.append("k_map")
    if summary.get("population_uniques_share") is not None:
        names.append("population_uniqueness")
    sensitive = summary.get("sensitive") or {}
    if sensitive:
        names += ["l_diversity", "xy_privacy"]
    if any(v.get("min_range") is not None for v in sensitive.values()):
        names.append("ke_anonymity")
    return names


def check_quasi_identifiers(quasi_identifiers: Sequence[str], columns: Sequence[str]) -> None:
    """DataError unless ``quasi_identifiers`` names at least one column, each once, all among
    ``columns`` (the checks every engine's analysis makes before reading the data)."""
    if not quasi_identifiers:
        raise DataError("no quasi-identifiers given; name them with --qi A,B,C")
    if len(set(quasi_identifiers)) != len(quasi_identifiers):
        raise DataError(f"a quasi-identifier is listed twice: {list(quasi_identifiers)}")
    absent = [c for c in quasi_identifiers if c not in columns]
    if absent:
        raise DataError(
            f"quasi-identifier column(s) {', '.join(map(repr, absent))} not found; "
            f"available columns: {', '.join(map(str, columns))}"
        )


def column_list(value: Sequence[str] | str | None) -> list[str]:
    """A list of column names; one name may be given as a string (``"age"`` is ``["age"]``,
    never ``["a", "g", "e"]``)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _chosen_measures(measures: Sequence[str] | str | None, suda: bool) -> set[str]:
    if measures is None:
        return {m for m in OPTIONAL_MEASURES if suda or m != "suda"}
    chosen = set(column_list(measures))
    unknown = sorted(chosen - set(OPTIONAL_MEASURES))
    if unknown:
        raise DataError(
            f"unknown measure(s) {', '.join(map(repr, unknown))}; choose among "
            f"{', '.join(OPTIONAL_MEASURES)} (the risk measures on classes always run)"
        )
    return chosen


def _diversity(fs: FrequencySet, attribute: str) -> dict[str, Any]:
    """How diverse ``attribute`` is inside the classes: distinct l (the smallest number of
    distinct values in a class), entropy l (``exp`` of the smallest class entropy,
    Machanavajjhala et al. 2007), the classes / records whose class holds one value only, the
    largest share of one value in a class (``max_confidence``: the smallest ``h`` of
    (X,Y)-linkability with ``Y`` the attribute, Wang & Fung 2006) and, for a numeric attribute,
    the smallest range ``max - min`` in a class (``min_range``: the largest ``e`` of
    (k,e)-anonymity, Zhang et al. 2007; ``None`` for a non-numeric attribute)."""
    from sdckit.models.ke_anonymity import KEAnonymity
    from sdckit.models.xy_privacy import XYPrivacy

    hist = fs.histogram(attribute).tocsr()
    distinct = np.diff(hist.indptr)
    sizes = np.asarray(hist.sum(axis=1)).ravel()
    p = hist.data / np.repeat(sizes, distinct)
    row = np.repeat(np.arange(hist.shape[0]), distinct)
    entropy = np.bincount(row, weights=-p * np.log(p), minlength=hist.shape[0])
    homogeneous = distinct == 1
    top = XYPrivacy(y=[attribute], h=1).anonymity_and_confidence(fs)[1]
    try:
        spread = KEAnonymity(attribute=attribute, k=1, e=0).distinct_and_range(fs)[1]
        min_range: float | None = float(spread.min()) if len(spread) else 0.0
    except DataError:  # not numeric
        min_range = None
    return {
        "distinct_values": int(hist.shape[1]),
        "distinct_l": int(distinct.min()) if len(distinct) else 0,
        "entropy_l": float(np.exp(entropy.min())) if len(entropy) else 0.0,
        "homogeneous_classes": int(homogeneous.sum()),
        "homogeneous_records": int(sizes[homogeneous].sum()),
        "max_confidence": float(np.max(top / np.maximum(sizes, 1))) if len(sizes) else 0.0,
        "min_range": min_range,
    }


def sensitive_measures(
    fs: FrequencySet, attribute: str, overall: FrequencySet | None = None
) -> dict[str, Any]:
    """The summary's entry for sensitive ``attribute`` (diversity and disclosure inside the
    classes of ``fs``); ``overall``: a frequency set holding the whole data's distribution
    of the attribute, when ``fs`` holds only some of the classes (a Spark shard)."""
    return {**_diversity(fs, attribute), **_disclosure(fs, attribute, overall)}


#: How the entries of :func:`sensitive_measures` of disjoint sets of classes combine.
SENSITIVE_COMBINE: dict[str, Callable[[list[Any]], Any]] = {
    "distinct_values": max,
    "distinct_l": min,
    "entropy_l": min,
    "homogeneous_classes": sum,
    "homogeneous_records": sum,
    "max_confidence": max,
    "min_range": min,
    "max_relative_gain": max,
    "max_log2_ratio": max,
}


def combine_sensitive_measures(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`sensitive_measures` of the union of disjoint sets of classes from those of
    each set (non-empty sets only): smallest, largest or summed entry by entry."""
    out: dict[str, Any] = {}
    for key in parts[0]:
        values = [p[key] for p in parts]
        if any(v is None for v in values):
            out[key] = None
        else:
            out[key] = SENSITIVE_COMBINE[key](values)
    return out


def _disclosure(
    fs: FrequencySet, attribute: str, overall: FrequencySet | None = None
) -> dict[str, float]:
    """How far the classes' distributions of ``attribute`` stray from the whole data's:
    ``max_relative_gain``, the largest ``(p_s - q_s) / q_s`` of a value in a class (the
    smallest beta of basic beta-likeness the classes satisfy, Cao & Karras 2012), and
    ``max_log2_ratio``, the largest ``|log2(p_s / q_s)|`` of a value present in a class
    (delta-disclosure privacy, Brickell & Shmatikov 2008, as ARX checks it, holds for every
    delta above it); ``q`` is the distribution over all analysed records."""
    from sdckit.models.beta_likeness import BetaLikeness
    from sdckit.models.delta_disclosure import DeltaDisclosure

    if fs.n_classes == 0:
        return {"max_relative_gain": 0.0, "max_log2_ratio": 0.0}
    beta = BetaLikeness(attribute=attribute, beta=1.0)
    beta.prepare(fs if overall is None else overall)
    delta = DeltaDisclosure(attribute=attribute, delta=1.0)
    delta.prepare(fs if overall is None else overall)
    return {
        "max_relative_gain": float(beta.gains(fs).max()),
        "max_log2_ratio": float(delta.log_ratios(fs).max()),
    }


def _missing_code(labels: np.ndarray) -> int | None:
    """Code of the missing value among ``labels`` for SUDA2 (the same tokens as the risk
    measures, :func:`_missing_labels`; the first one when a key holds several), or None."""
    hit = np.flatnonzero(_missing_labels(labels))
    return int(hit[0]) if len(hit) else None
