"""Compare protections of one data set: evaluate each, rank them on one R-U scale.

The measurement engine of ``sdckit compare`` (the job -- the grid language and its outputs --
is :mod:`sdckit.jobs.compare`; the R-U map and the HTML page are
:mod:`sdckit.report.compare_report`). Each :class:`Configuration` -- a masking pipeline
(:class:`sdckit.masking.pipeline.Pipeline`), an anonymization (:func:`sdckit.anonymize`) or a
protected file made elsewhere -- is applied to the original, evaluated against it, and the
configurations are ranked by the **R-U score** ``(IL + DR) / 2`` (Domingo-Ferrer & Torra 2001),
both halves in percent, the coordinates of the **R-U map** (Duncan, Keller-McNulty & Stokes
2001; disclosure risk on x, information loss on y). Lower is better. Two scales
(:data:`SCALES`):

* ``score`` (the default for masking-only comparisons): the 2001 score of
  :func:`sdckit.evaluation.protected_file.evaluate` on the numeric attributes, ``IL = score_il`` and
  ``DR = 100 score_dr = 100 (0.25 DBRL + 0.25 PRL + 0.5 interval disclosure)`` (Domingo-Ferrer,
  Mateo-Sanz & Torra 2001);
* ``reidentification`` (the default as soon as a configuration anonymizes): measured on the
  quasi-identifiers, which generalization turns into labels the 2001 measures cannot compare.
  ``DR`` = 100 x the expected share of records a prosecutor re-identifies by matching their
  original QI values against the released ones (:func:`sdckit.risk.matching.matching_risk`;
  ``J/n``, ARX's prosecutor success rate, for a global recoding without suppression), ``IL`` =
  100 x the relative entropy-based loss of the QIs (Kooiman et al. 1998; ARX's non-uniform
  entropy for generalization). Generalization, suppression, recoding, PRAM and swapping of the
  QIs share this scale; noise on a QI does not (its released numbers match nothing exactly --
  an error says so).

Every configuration must keep the records aligned (no ``sampling``): the measures compare
records one by one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sdckit.errors import ConfigError, DataError, MissingHierarchyError, SdcInputError

__all__ = [
    "SCALES",
    "Configuration",
    "compare",
    "compare_frames",
    "compare_reidentification",
    "compare_synthetic",
    "rank_configurations",
]

#: The R-U scales a comparison can use (see the module docstring).
SCALES = ("score", "reidentification", "synthetic")


@dataclass(frozen=True)
class Configuration:
    """One protection to compare: a label and how it is made.

    ``methods``: the masking steps ``(name, parameters)`` of a pipeline; ``protected_path``
    (and ``delimiter``): a protected file given as it is; ``anonymize``: the settings of an
    anonymization (``algorithm``, ``suppression_limit``, ``metric``, ``options``,
    ``models_spec`` and the built ``models``). ``source`` says where it came from (e.g. a job
    file's ``grid[1]``) in error messages. :func:`sdckit.jobs.compare.expand_grid` makes them
    from a job file's ``grid:``.
    """

    label: str
    methods: tuple[tuple[str, dict[str, Any]], ...]
    source: str  # where in the grid it came from, e.g. "grid[1]"
    protected_path: Path | None = None  # a protected file given as is (no masking)
    delimiter: str | None = None
    anonymize: Mapping[str, Any] | None = None  # an `anonymize:` entry: models and settings
    synthesize: Mapping[str, Any] | None = None  # a `synthesize:` entry: method and parameters


def _known_method(methods: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Transparency-attack arguments when the configuration is one attackable method."""
    if len(methods) != 1:
        return {}
    name, p = methods[0]
    if name == "rank_swapping" and p.get("variant", "standard") in (None, "standard"):
        return {"known_method": "rank_swapping", "p_percent": p.get("p_percent", 5)}
    if name == "microaggregation" and p.get("method") in (
        "individual_ranking",
        "optimal_univariate",
    ):
        return {"known_method": "microaggregation", "k": p.get("k", 3)}
    return {}


def rank_configurations(
    rows: list[dict[str, Any]],
    max_risk: float | None = None,
    max_loss: float | None = None,
) -> list[dict[str, Any]]:
    """Sort by R-U score (ascending; undefined scores last, in input order) and add ``rank``.

    With a ceiling on the disclosure risk (``max_risk``) and/or the information loss
    (``max_loss``), on the rows' own scale (0-100), the releases within every ceiling come
    first, each group by score: a steward decides with a maximum acceptable risk (the R-U
    confidentiality map of Duncan, Keller-McNulty & Stokes 2001 read with a risk threshold),
    and the average of loss and risk alone ranks a low-loss, high-risk release first. Each
    row then says ``within_limits`` (false when a measure it needs is undefined)."""
    limited = max_risk is not None or max_loss is not None

    def within(r: Mapping[str, Any]) -> bool:
        dr, il = r.get("disclosure_risk"), r.get("information_loss")
        if max_risk is not None and (dr is None or dr > max_risk):
            return False
        return not (max_loss is not None and (il is None or il > max_loss))

    rows = [{**r, "within_limits": within(r)} if limited else dict(r) for r in rows]
    groups = [[r for r in rows if r.get("within_limits", True)]]
    if limited:
        groups.append([r for r in rows if not r["within_limits"]])
    ordered: list[dict[str, Any]] = []
    for group in groups:
        scored = [r for r in group if r["ru_score"] is not None]
        ordered += sorted(scored, key=lambda r: r["ru_score"])
    ordered += [r for r in rows if r["ru_score"] is None]
    out = []
    rank = 0
    for r in ordered:
        r = {k: v for k, v in r.items() if k != "rank"}
        if r["ru_score"] is not None:
            rank += 1
        out.append({"rank": rank if r["ru_score"] is not None else None, **r})
    return out


def _row(label: str, doc: dict[str, Any], methods, seconds: float) -> dict[str, Any]:
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    il_pct = il["score_il"]
    dr_pct = None if dr["score_dr"] is None else 100.0 * dr["score_dr"]
    score = None if il_pct is None or dr_pct is None else (il_pct + dr_pct) / 2.0
    row = {
        "label": label,
        "methods": list(methods),
        "information_loss": il_pct,
        "disclosure_risk": dr_pct,
        "ru_score": score,
        "il1s": il["il1s"],
        "bounded_il": il["bounded_il"],
        "propensity_u": il["propensity_u"],
        "dbrl": dr["dbrl"],
        "prl": dr["prl"],
        "interval_disclosure": dr["interval_disclosure"],
        "seconds": seconds,
    }
    ta = doc.get("transparency_attack")
    row["certain_matches"] = None if ta is None else ta["certain_matches"]
    row["reidentified"] = None if ta is None else ta["reidentified"]
    return row


def compare_frames(
    original: pd.DataFrame,
    protected: Mapping[str, pd.DataFrame],
    *,
    columns: Sequence[str] | None = None,
    quasi_identifiers: Sequence[str] | None = None,
    categorical: Sequence[str] = (),
    known_methods: Mapping[str, dict[str, Any]] | None = None,
    methods: Mapping[str, Any] | None = None,
    seed: int = 0,
    max_full_pairs: int | None = None,
) -> dict[str, Any]:
    """Evaluate each ``label -> protected frame`` against ``original`` and rank them.

    ``columns``, ``quasi_identifiers`` (the intruder's attributes), ``categorical``, ``seed`` and
    ``max_full_pairs`` are those of :func:`sdckit.evaluation.protected_file.evaluate`.
    ``known_methods[label]`` may give transparency-attack arguments for a label
    (``{"known_method": ..., "p_percent"/"k": ...}``). Returns ``{"ranking": [rows sorted by
    R-U score], "evaluations": {label: evaluate document}, "ru_score": "(IL + DR) / 2 ..."}``;
    each row holds ``rank, label, information_loss (score_il), disclosure_risk (100 score_dr),
    ru_score`` and the underlying measures.
    """
    from sdckit.evaluation.protected_file import MAX_FULL_PAIRS, evaluate

    if not protected:
        raise DataError("compare: no protected files to compare")
    rows, docs = [], {}
    for label, frame in protected.items():
        t0 = time.perf_counter()
        try:
            doc = evaluate(
                original,
                frame,
                columns=columns,
                quasi_identifiers=quasi_identifiers,
                categorical=categorical,
                seed=seed,
                max_full_pairs=max_full_pairs or MAX_FULL_PAIRS,
                **(known_methods or {}).get(label, {}),
            )
        except SdcInputError as exc:
            raise type(exc)(f"configuration {label!r}: {exc}") from exc
        docs[label] = doc
        steps = (methods or {}).get(label, ())
        rows.append(_row(label, doc, steps, time.perf_counter() - t0))
    return {
        "ru_score": "(information_loss + disclosure_risk) / 2 with information_loss = score_il "
        "and disclosure_risk = 100 * score_dr (percent); lower is better",
        "ranking": rank_configurations(rows),
        "evaluations": docs,
    }


def compare(
    original: pd.DataFrame,
    configurations: Sequence[Configuration],
    *,
    columns: Sequence[str] | None = None,
    quasi_identifiers: Sequence[str] | None = None,
    categorical: Sequence[str] = (),
    seed: int | None = None,
    transparency: bool = True,
    max_full_pairs: int | None = None,
    scale: str | None = None,
    schema=None,
    key: Callable[[str], str] | None = None,
    target: str | None = None,
) -> dict[str, Any]:
    """Protect ``original`` with every configuration, evaluate each and rank them.

    Masking configurations are applied by :meth:`sdckit.masking.pipeline.Pipeline.apply`,
    anonymize configurations by :func:`sdckit.anonymize` with ``schema`` (roles and
    hierarchies), all with the same ``seed``; the ``masking`` records of each are added to the
    result. ``scale`` is the R-U scale (:data:`SCALES`; default ``"reidentification"`` when a
    configuration anonymizes, else ``"score"``): ``"score"`` evaluates with
    :func:`compare_frames` (the 2001 score on numeric attributes), ``"reidentification"``
    with :func:`compare_reidentification` on ``quasi_identifiers`` (default: the schema's).
    An anonymize configuration without a solution is ranked last with a note. Synthesize
    configurations (:func:`sdckit.synthesize`, all with ``seed``) need the ``"synthetic"``
    scale (their default; :func:`compare_synthetic`), which every other configuration can
    share; ``target`` is its attributed attribute (default: the schema's first sensitive one).
    ``key`` formats the job keys named in errors (e.g. ``Job.key``: the file name first).
    """
    from sdckit.masking.pipeline import Pipeline

    in_job = key is not None
    key = key or str
    has_anonymize = any(c.anonymize is not None for c in configurations)
    has_synthesize = any(c.synthesize is not None for c in configurations)
    scale = scale or (
        "synthetic" if has_synthesize else "reidentification" if has_anonymize else "score"
    )
    if scale not in SCALES:
        raise ConfigError(
            f"{key('options.scale')}: unknown scale {scale!r}; use one of {', '.join(SCALES)}"
        )
    if has_anonymize and scale == "score":
        raise ConfigError(
            f"{key('options.scale')}: anonymize entries generalize the quasi-identifiers, "
            "which the 2001 score's numeric measures (DBRL, PRL, interval disclosure, "
            "score_il) cannot compare; use `scale: reidentification` (the default with "
            "anonymize entries)"
        )
    if has_synthesize and scale != "synthetic":
        raise ConfigError(
            f"{key('options.scale')}: synthetic releases do not keep the original records, "
            "which the record-by-record scales compare; use `scale: synthetic` (the default "
            "with synthesize entries)"
        )
    if has_anonymize and schema is None:
        raise ConfigError(
            f"{key('attributes')}: anonymize entries need the quasi-identifiers and their "
            "hierarchies; add `attributes:` as in an anonymize job"
        )
    frames, records, known, steps = {}, {}, {}, {}
    anonymizations: dict[str, dict[str, Any]] = {}
    for c in configurations:
        if c.synthesize is not None:
            t0 = time.perf_counter()
            frames[c.label] = _run_synthesize(original, schema, c, seed)
            spec = dict(c.synthesize)
            records[c.label] = [{"method": f"synthesize: {spec['method']}", "parameters": spec}]
            steps[c.label] = [{"synthesize": spec}]
            anonymizations[c.label] = {"seconds": time.perf_counter() - t0}
            continue
        if c.anonymize is not None:
            try:
                anonymizations[c.label] = _run_anonymize(original, schema, c, seed)
            except MissingHierarchyError as exc:  # say it as the job file would
                raise exc.for_job_file(key(f"attributes.{exc.attribute}")) from None
            records[c.label] = [anonymizations[c.label]["record"]]
            steps[c.label] = [{"anonymize": anonymizations[c.label]["record"]["parameters"]}]
            if anonymizations[c.label]["data"] is not None:
                frames[c.label] = anonymizations[c.label]["data"]
            continue
        if c.protected_path is not None:
            from sdckit.core.io import read_table

            try:
                frames[c.label] = read_table(c.protected_path, delimiter=c.delimiter)
            except SdcInputError as exc:
                raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
            records[c.label] = [
                {"method": "given file", "parameters": {"path": str(c.protected_path)}}
            ]
            steps[c.label] = []
            if len(frames[c.label]) != len(original):
                raise DataError(
                    f"{c.source} ({c.label}): the protected file has {len(frames[c.label])} "
                    f"records but the input {len(original)}; it must hold the same records in "
                    "the same order"
                )
            continue
        try:
            masked, recs = Pipeline.from_entries(c.methods).apply(original, seed=seed)
        except SdcInputError as exc:
            raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
        if len(masked) != len(original):
            raise DataError(
                f"{c.source} ({c.label}): the masked file has {len(masked)} records but the "
                f"input {len(original)}; compare evaluates record by record, so methods that "
                "drop records (sampling) cannot be compared -- remove them from the grid"
            )
        frames[c.label] = masked
        records[c.label] = recs
        steps[c.label] = [{name: params} for name, params in c.methods]
        if transparency:
            known[c.label] = _known_method(c.methods)
    if scale in ("reidentification", "synthetic"):
        qis = (
            list(quasi_identifiers)
            if quasi_identifiers
            else (list(schema.quasi_identifiers) if schema is not None else [])
        )
        if not qis and in_job:
            raise ConfigError(
                f"{key('qi')}: the re-identification scale needs the quasi-identifiers; list "
                "them under qi: or give them role quasi_identifying under attributes:"
            )
        if not qis:
            raise ConfigError(
                "quasi_identifiers: the re-identification scale needs the quasi-identifiers; "
                "pass quasi_identifiers= or a schema with quasi-identifying attributes"
            )
        if scale == "synthetic":
            result = compare_synthetic(
                original,
                frames,
                quasi_identifiers=qis,
                target=target or _first_sensitive(schema, key),
                methods=steps,
                seconds={k: v.get("seconds") for k, v in anonymizations.items()},
                order=[c.label for c in configurations],
            )
            result["masking"] = records
            result["scale"] = scale
            return result
        hierarchies = {}
        if schema is not None:
            hierarchies = {
                q: schema.hierarchy(q)
                for q in qis
                if q in schema.attributes and schema.hierarchy(q) is not None
            }
        result = compare_reidentification(
            original,
            frames,
            quasi_identifiers=qis,
            hierarchies=hierarchies,
            methods=steps,
            anonymizations=anonymizations,
            order=[c.label for c in configurations],
        )
        result["masking"] = records
        result["scale"] = scale
        return result
    result = compare_frames(
        original,
        frames,
        columns=columns,
        quasi_identifiers=quasi_identifiers,
        categorical=categorical,
        known_methods=known,
        methods=steps,
        seed=0 if seed is None else int(seed),
        max_full_pairs=max_full_pairs,
    )
    result["masking"] = records
    result["scale"] = scale
    return result


def _first_sensitive(schema, key: Callable[[str], str]) -> str:
    sens = list(schema.sensitive) if schema is not None else []
    if not sens:
        raise ConfigError(
            f"{key('attributes')}: the synthetic scale measures attribute disclosure (TCAP) of "
            "a sensitive attribute; give one attribute `role: sensitive`"
        )
    return sens[0]


def _run_synthesize(original: pd.DataFrame, schema, c: Configuration, seed) -> pd.DataFrame:
    """One synthesize configuration: its first copy (fitted on every record, no holdout)."""
    from sdckit.synthesis.api import synthesize

    spec = dict(c.synthesize or {})
    method = spec.pop("method")
    params = dict(spec.pop("options", {}) or {})
    try:
        result = synthesize(
            original,
            method,
            seed=seed,
            holdout=0.0,
            evaluate=False,
            schema=schema,
            options=params,  # a method's own `method` (cart's per-variable) included
            **spec,
        )
    except SdcInputError as exc:
        raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
    return result.data


def compare_synthetic(
    original: pd.DataFrame,
    protected: Mapping[str, pd.DataFrame],
    *,
    quasi_identifiers: Sequence[str],
    target: str,
    methods: Mapping[str, Any] | None = None,
    seconds: Mapping[str, Any] | None = None,
    order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Rank releases that need not keep the original records (synthetic data beside masked and
    anonymized files) on the *synthetic* R-U scale.

    Information loss = 100 x pMSE / (c (1 - c)): the propensity score mean squared error as a
    share of its maximum, reached when a classifier separates the files completely (Woo,
    Reiter, Oganian & Karr 2009; :func:`sdckit.utility.propensity.propensity_mse`); disclosure
    risk = 100 x TCAP, the share of original records whose ``target`` an intruder attributes
    correctly from ``quasi_identifiers`` in the release (Taub et al. 2018;
    :func:`sdckit.risk.synthetic.tcap`). R-U score = their mean. Both read any release,
    whatever its size and record order.
    """
    from sdckit.risk.synthetic import tcap
    from sdckit.utility.propensity import propensity_mse

    labels = list(order) if order is not None else list(protected)
    rows: list[dict[str, Any]] = []
    docs: dict[str, dict[str, Any]] = {}
    for label in labels:
        t0 = time.perf_counter()
        if label not in protected:  # an anonymization without a solution: ranked last
            rows.append(
                {
                    "label": label,
                    "methods": (methods or {}).get(label, []),
                    "information_loss": None,
                    "disclosure_risk": None,
                    "ru_score": None,
                    "pmse": None,
                    "s_pmse": None,
                    "tcap": None,
                    "tcap_baseline": None,
                    "records": None,
                    "seconds": (seconds or {}).get(label),
                }
            )
            docs[label] = {"notes": ["not evaluated: no release"]}
            continue
        frame = protected[label]
        cols = [c for c in original.columns if c in frame.columns]
        try:
            p = propensity_mse(original[cols], frame[cols])
            t = tcap(original, frame, list(quasi_identifiers), target)
        except SdcInputError as exc:
            raise type(exc)(f"configuration {label!r}: {exc}") from exc
        il = 100.0 * p.pmse / (p.c * (1 - p.c))
        dr = 100.0 * t.tcap
        rows.append(
            {
                "label": label,
                "methods": (methods or {}).get(label, []),
                "information_loss": il,
                "disclosure_risk": dr,
                "ru_score": (il + dr) / 2,
                "pmse": p.pmse,
                "s_pmse": p.s_pmse,
                "tcap": t.tcap,
                "tcap_baseline": t.baseline,
                "records": len(frame),
                "seconds": ((seconds or {}).get(label) or 0.0) + time.perf_counter() - t0,
            }
        )
        docs[label] = {"propensity": p.to_dict(), "tcap": t.to_dict(), "notes": []}
    return {
        "ru_score": "(information_loss + disclosure_risk) / 2 with information_loss = 100 * "
        "pMSE / (c (1 - c)) and disclosure_risk = 100 * TCAP of the target from the "
        "quasi-identifiers (percent); lower is better",
        "ranking": rank_configurations(rows),
        "evaluations": docs,
    }


def _run_anonymize(original: pd.DataFrame, schema, c: Configuration, seed) -> dict[str, Any]:
    """Run one anonymize configuration; ``data`` is None (with ``error``) without a solution."""
    from sdckit.algorithms.anonymize import anonymize
    from sdckit.errors import NoSolutionError

    a = c.anonymize
    if a is None:
        raise ValueError(f"{c.source} ({c.label}): not an anonymize configuration")
    params = {
        "algorithm": a["algorithm"],
        "models": [{name: p} for name, p in a["models_spec"]],
        "suppression_limit": a["suppression_limit"],
        "metric": a["metric"],
        "options": a["options"],
    }
    info: dict[str, Any] = {
        "record": {"method": "anonymize", "parameters": params},
        "data": None,
        "error": None,
    }
    t0 = time.perf_counter()
    try:
        res = anonymize(
            original,
            schema,
            a["models"],
            suppression_limit=a["suppression_limit"],
            metric=a["metric"],
            algorithm=a["algorithm"],
            seed=seed,
            risk=False,
            **a["options"],
        )
    except NoSolutionError as exc:
        info["error"] = f"no solution: {exc}"
        return info
    except SdcInputError as exc:
        raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
    info.update(
        data=res.data,
        seconds=time.perf_counter() - t0,
        transformation=res.transformation,
        suppressed_records=res.suppressed_records,
        metrics=res.metrics,
        models_satisfied=res.models_satisfied,
        verified=res.verified,
    )
    return info


def compare_reidentification(
    original: pd.DataFrame,
    protected: Mapping[str, pd.DataFrame],
    *,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, Any] | None = None,
    methods: Mapping[str, Any] | None = None,
    anonymizations: Mapping[str, Mapping[str, Any]] | None = None,
    order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Rank protected files on the re-identification R-U scale of their quasi-identifiers.

    For each ``label -> protected frame``: disclosure risk = 100 x the expected share of
    records a prosecutor re-identifies by matching ``quasi_identifiers``
    (:func:`sdckit.risk.matching.matching_risk`), information loss = 100 x the relative
    entropy-based loss of ``quasi_identifiers``, R-U score = their mean
    (:func:`sdckit.risk.matching.reidentification_scale`). ``anonymizations`` (label -> what
    the anonymize run returned) adds each anonymize configuration's transformation,
    suppressed records and ARX metrics to its row; one whose ``data`` is None (no solution) is
    ranked last with its ``error``.
    Returns ``{"ranking", "evaluations", "ru_score"}`` like :func:`compare_frames`.
    """
    from sdckit.risk.matching import reidentification_scale

    anonymizations = anonymizations or {}
    labels = list(order) if order is not None else list(protected)
    rows, docs = [], {}
    for label in labels:
        a = anonymizations.get(label, {})
        steps = (methods or {}).get(label, [])
        row: dict[str, Any] = {
            "label": label,
            "methods": steps,
            "information_loss": None,
            "disclosure_risk": None,
            "ru_score": None,
            "highest_risk": None,
            "certain_share": None,
            "records_at_risk": None,
            "algorithm": a["record"]["parameters"]["algorithm"] if a else None,
            "transformation": a.get("transformation"),
            "suppressed_records": a.get("suppressed_records"),
            "loss": (a.get("metrics") or {}).get("loss"),
            "seconds": a.get("seconds"),
        }
        if label not in protected:
            docs[label] = {"notes": [a.get("error") or "not evaluated"]}
            rows.append(row)
            continue
        t0 = time.perf_counter()
        try:
            doc = reidentification_scale(
                original.reset_index(drop=True),
                protected[label].reset_index(drop=True),
                quasi_identifiers,
                hierarchies,
            )
        except SdcInputError as exc:
            raise type(exc)(f"configuration {label!r}: {exc}") from exc
        m = doc["matching"]
        row.update(
            information_loss=100.0 * doc["information_loss"],
            disclosure_risk=100.0 * doc["disclosure_risk"],
            ru_score=doc["score"],
            highest_risk=m["highest_risk"],
            certain_share=m["certain_share"],
            records_at_risk=m["records_at_risk_0.2"],
        )
        row["seconds"] = (row["seconds"] or 0.0) + time.perf_counter() - t0
        doc["notes"] = []
        docs[label] = doc
        rows.append(row)
    return {
        "ru_score": "(information_loss + disclosure_risk) / 2 with information_loss = 100 * "
        "relative entropy loss of the quasi-identifiers and disclosure_risk = 100 * expected "
        "share of records re-identified by matching them (percent); lower is better",
        "ranking": rank_configurations(rows),
        "evaluations": docs,
    }
