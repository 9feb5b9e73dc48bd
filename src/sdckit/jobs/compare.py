"""Compare masking configurations on one data set: evaluate each, draw the R-U map, rank them.

``sdckit compare --config GRID.yaml`` runs a grid of masking methods x parameters
(:func:`sdckit.jobs.mask.apply_methods`) on one input, evaluates every protected file against
the original with :func:`sdckit.jobs.evaluate.evaluate`, draws the **R-U map** (Duncan, Keller-
McNulty & Stokes 2001; disclosure risk on x, information loss on y, one labelled point per
configuration) and ranks the configurations by the **R-U score** ``(IL + DR) / 2`` with
``IL = score_il`` and ``DR = 100 score_dr`` (Domingo-Ferrer & Torra 2001; Domingo-Ferrer,
Mateo-Sanz & Torra 2001), both in percent -- i.e. the ``score`` of the evaluation. Lower is
better.

Grid file (YAML or TOML; read by :func:`sdckit.jobs.config.load_job`, paths relative to it)::

    input: {path: census.csv, delimiter: ","}
    columns: [AGI, FEDTAX, PTOTVAL]   # masked and compared (default `columns` of each method)
    qi: [AGI, FEDTAX]                 # intruder attributes (default: the numeric columns)
    seed: 1                           # one seed for every configuration (same seed, same run)
    grid:
      - microaggregation: {method: mdav, k: [3, 5, 10]}        # 3 configurations
      - noise: {alpha: [0.1, 0.5], method: [uncorrelated, correlated]}   # 4
      - rank_swapping: {p_percent: [5, 10, 15]}                # 3
      - label: mdav k=3 + noise                                # a pipeline: 1 configuration
        methods:
          - microaggregation: {k: 3}
          - noise: {alpha: 0.05}
      - protected: {path: census_arx.csv, label: ARX output}  # a file made by any tool
    options: {categorical: [], transparency: true}
    output: {report: compare.html, json: compare.json}

A grid entry ``{method: {param: value, ...}}`` expands to the cartesian product of every
parameter given as a list (in the order written), except parameters whose value is itself a
list or mapping (``columns``, ``groups``, PRAM ``matrix``, ...): those are taken as they are.
Method names and parameters are those of :mod:`sdckit.jobs.mask`; ``columns`` defaults to the
top-level ``columns``. An entry with ``methods:`` (and an optional ``label``) is one
configuration applying several methods in order (each method's lists are expanded too). A
``protected: {path, label, delimiter}`` entry adds a protected file made elsewhere (ARX,
sdcMicro, ``sdckit anonymize``...; same records in the same order), evaluated as it is.
``options``: ``categorical`` (columns to treat as categories), ``transparency`` (default
true: rank-swapping configurations also get the transparency attack with their ``p_percent``
and univariate microaggregation -- ``individual_ranking``/``optimal_univariate`` -- with its
``k``; Nin, Herranz & Torra 2008), ``prl_max_full_pairs``.

Every configuration must keep the records aligned (no ``sampling``): the measures compare
records one by one. Nothing is written unless every configuration ran and was evaluated.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import ConfigError, DataError, SdcInputError

__all__ = [
    "Configuration",
    "compare",
    "compare_frames",
    "compare_report",
    "expand_grid",
    "rank_configurations",
    "ru_map_figure",
    "run_compare_job",
]

#: Parameter kinds of :mod:`sdckit.jobs.mask` whose values are lists/mappings themselves.
_LIST_KINDS = ("columns", "list", "mapping", "any")
_OPTION_KEYS = ("categorical", "transparency", "prl_max_full_pairs")


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: a label and the masking steps ``(name, parameters)``."""

    label: str
    methods: tuple[tuple[str, dict[str, Any]], ...]
    source: str  # where in the grid it came from, e.g. "grid[1]"
    protected_path: Path | None = None  # a protected file given as is (no masking)
    delimiter: str | None = None


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_fmt_value(x) for x in v) + "]"
    return str(v)


def _expand_method(
    name: Any, params: Any, where: str, columns: Sequence[str] | None
) -> list[tuple[str, dict[str, Any]]]:
    from sdckit.jobs.mask import METHODS, method_names

    if not isinstance(name, str) or name not in METHODS:
        raise ConfigError(f"{where}: unknown method {name!r}; allowed: {', '.join(method_names())}")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"{where}.{name}: parameters must be a mapping, got {params!r}")
    spec = METHODS[name]
    params = dict(params)
    if "columns" in spec.params and "columns" not in params and columns:
        params["columns"] = list(columns)
    keys, choices = [], []
    for key, value in params.items():
        kind = spec.params[key].kind if key in spec.params else "any"
        if isinstance(value, list) and kind not in _LIST_KINDS:
            if not value:
                raise ConfigError(f"{where}.{name}.{key}: an empty list expands to nothing")
            keys.append(key)
            choices.append(value)
    out = []
    for combo in itertools.product(*choices):
        p = dict(params)
        p.update(zip(keys, combo, strict=True))
        out.append((name, p))
    return out


def _label(steps: Sequence[tuple[str, dict[str, Any]]], shown: Sequence[set[str]]) -> str:
    """``name(k=v, ...)`` per step, showing the scalar parameters written in the grid."""
    parts = []
    for (name, p), keys in zip(steps, shown, strict=True):
        items = [f"{k}={_fmt_value(v)}" for k, v in p.items() if k in keys]
        parts.append(f"{name}({', '.join(items)})" if items else name)
    return " + ".join(parts)


def _shown(name: str, params: Any) -> set[str]:
    """Parameters written in a grid entry whose values are scalars (or lists to expand)."""
    from sdckit.jobs.mask import METHODS

    spec = METHODS[name]
    return {
        k
        for k in (params or {})
        if (spec.params[k].kind if k in spec.params else "any") not in _LIST_KINDS
    }


def expand_grid(
    grid: Any, columns: Sequence[str] | None = None, base_dir: str | Path = "."
) -> list[Configuration]:
    """The configurations of a grid (see the module docstring for the format).

    Labels name the method and the parameters that vary (lists) plus ``method``, e.g.
    ``microaggregation(method=mdav, k=5)``. Raises :class:`ConfigError` naming ``grid[i]...``
    for unknown methods, bad shapes and duplicate labels; the parameters themselves are
    validated by :func:`sdckit.jobs.mask.validate_method` (also a ConfigError). A
    ``protected: {path, label, delimiter}`` entry is a protected file given as it is (made by
    any tool); its path is relative to ``base_dir``.
    """
    from sdckit.jobs.mask import validate_method

    if not isinstance(grid, list) or not grid:
        raise ConfigError(
            "grid: must be a non-empty list of entries like `- noise: {alpha: [0.1, 0.5]}`"
        )
    configs: list[Configuration] = []
    for i, entry in enumerate(grid):
        where = f"grid[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: expected `method: {{parameters}}`, got {entry!r}")
        if "protected" in entry:
            spec = entry["protected"]
            if len(entry) != 1 or not isinstance(spec, Mapping) or "path" not in spec:
                raise ConfigError(
                    f"{where}: a protected-file entry is `protected: {{path: file.csv, label: "
                    "name}` and nothing else"
                )
            extra = [k for k in spec if k not in ("path", "label", "delimiter")]
            if extra:
                raise ConfigError(
                    f"{where}.protected.{extra[0]}: unknown key (known: path, label, delimiter)"
                )
            path = Path(str(spec["path"])).expanduser()
            path = path if path.is_absolute() else Path(base_dir) / path
            label = spec.get("label", path.stem)
            if not isinstance(label, str) or not label:
                raise ConfigError(f"{where}.protected.label: must be a non-empty text")
            configs.append(Configuration(label, (), where, path, spec.get("delimiter")))
            continue
        if "methods" in entry:
            extra = [k for k in entry if k not in ("methods", "label")]
            if extra:
                raise ConfigError(
                    f"{where}.{extra[0]}: unknown key (a pipeline has methods, label)"
                )
            steps_spec = entry["methods"]
            if not isinstance(steps_spec, list) or not steps_spec:
                raise ConfigError(f"{where}.methods: must be a non-empty list of methods")
            per_step = []
            for j, step in enumerate(steps_spec):
                if not isinstance(step, Mapping) or len(step) != 1:
                    raise ConfigError(
                        f"{where}.methods[{j}]: expected one `method: {{parameters}}` entry"
                    )
                ((name, params),) = step.items()
                per_step.append(_expand_method(name, params, f"{where}.methods[{j}]", columns))
            combos = list(itertools.product(*per_step))
            base = entry.get("label")
            if base is not None and not isinstance(base, str):
                raise ConfigError(f"{where}.label: must be a text, got {base!r}")
            for c, steps in enumerate(combos):
                label = (base if len(combos) == 1 else f"{base} #{c + 1}") if base else None
                shown = [
                    _shown(n, next(iter(st.values())))
                    for st, (n, _) in zip(steps_spec, steps, strict=True)
                ]
                configs.append(Configuration(label or _label(steps, shown), tuple(steps), where))
        else:
            body = {k: v for k, v in entry.items() if k != "label"}
            if len(body) != 1:
                raise ConfigError(
                    f"{where}: one method per entry (got {', '.join(map(str, body))}); use "
                    "`methods: [...]` for a pipeline"
                )
            ((name, params),) = body.items()
            expanded = _expand_method(name, params, where, columns)
            base = entry.get("label")
            if base is not None and not isinstance(base, str):
                raise ConfigError(f"{where}.label: must be a text, got {base!r}")
            shown = [_shown(name, params)]
            for steps in expanded:
                label = _label([steps], shown)
                if base:
                    label = base if len(expanded) == 1 else f"{base}: {label}"
                configs.append(Configuration(label, (steps,), where))
    for c in configs:
        for j, (name, params) in enumerate(c.methods):
            validate_method(j, name, params)  # ConfigError naming the parameter
    seen: dict[str, str] = {}
    for c in configs:
        if c.label in seen:
            raise ConfigError(
                f"{c.source}: configuration {c.label!r} also comes from {seen[c.label]}; "
                "remove the duplicate or give the entries distinct `label:`s"
            )
        seen[c.label] = c.source
    return configs


# --------------------------------------------------------------------------------------------
# evaluation and ranking
# --------------------------------------------------------------------------------------------
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


def rank_configurations(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sort by R-U score (ascending; undefined scores last, in input order) and add ``rank``."""
    defined = sorted((r for r in rows if r["ru_score"] is not None), key=lambda r: r["ru_score"])
    undefined = [r for r in rows if r["ru_score"] is None]
    out = []
    for i, r in enumerate(defined + undefined, start=1):
        out.append({"rank": i if r["ru_score"] is not None else None, **r})
    return out


def _row(label: str, doc: dict[str, Any], methods, seconds: float) -> dict[str, Any]:
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    il_pct = il["score_il"]
    dr_pct = None if dr["score_dr"] is None else 100.0 * dr["score_dr"]
    score = None if il_pct is None or dr_pct is None else (il_pct + dr_pct) / 2.0
    row = {
        "label": label,
        "methods": [{name: params} for name, params in methods],
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
    qi: Sequence[str] | None = None,
    categorical: Sequence[str] = (),
    known_methods: Mapping[str, dict[str, Any]] | None = None,
    methods: Mapping[str, Any] | None = None,
    seed: int = 0,
    max_full_pairs: int | None = None,
) -> dict[str, Any]:
    """Evaluate each ``label -> protected frame`` against ``original`` and rank them.

    ``known_methods[label]`` may give transparency-attack arguments for a label
    (``{"known_method": ..., "p_percent"/"k": ...}``). Returns ``{"ranking": [rows sorted by
    R-U score], "evaluations": {label: evaluate document}, "ru_score": "(IL + DR) / 2 ..."}``;
    each row holds ``rank, label, information_loss (score_il), disclosure_risk (100 score_dr),
    ru_score`` and the underlying measures.
    """
    from sdckit.jobs.evaluate import MAX_FULL_PAIRS, evaluate

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
                qi=qi,
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
    qi: Sequence[str] | None = None,
    categorical: Sequence[str] = (),
    seed: int | None = None,
    transparency: bool = True,
    max_full_pairs: int | None = None,
) -> dict[str, Any]:
    """Mask ``original`` with every configuration, evaluate and rank (see :func:`compare_frames`).

    Each configuration is applied by :func:`sdckit.jobs.mask.apply_methods` with the same
    ``seed``; the ``masking`` records of each are added to the result.
    """
    from sdckit.jobs.mask import apply_methods

    frames, records, known, steps = {}, {}, {}, {}
    for c in configurations:
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
            masked, recs = apply_methods(original, list(c.methods), seed=seed)
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
        steps[c.label] = list(c.methods)
        if transparency:
            known[c.label] = _known_method(c.methods)
    result = compare_frames(
        original,
        frames,
        columns=columns,
        qi=qi,
        categorical=categorical,
        known_methods=known,
        methods=steps,
        seed=0 if seed is None else int(seed),
        max_full_pairs=max_full_pairs,
    )
    result["masking"] = records
    return result


# --------------------------------------------------------------------------------------------
# R-U map and report
# --------------------------------------------------------------------------------------------
def ru_map_figure(ranking: Sequence[Mapping[str, Any]]):
    """The R-U map: disclosure risk (x, %) vs information loss (y, %), labelled points.

    Dashed lines are iso-score lines ``(IL + DR) / 2 = s``; the best configuration (lowest
    R-U score) is circled. Points are coloured by the first masking method.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [r for r in ranking if r["ru_score"] is not None]
    fig, (ax, key) = plt.subplots(1, 2, figsize=(11, 5.6), gridspec_kw={"width_ratios": [2.2, 1]})
    key.axis("off")
    if not pts:
        ax.text(0.5, 0.5, "no configuration has both IL and DR", ha="center", va="center")
        return fig
    x = np.array([r["disclosure_risk"] for r in pts], dtype=float)
    y = np.array([r["information_loss"] for r in pts], dtype=float)
    first = [next(iter(r["methods"][0])) if r["methods"] else "given file" for r in pts]
    kinds = list(dict.fromkeys(first))
    cmap = plt.get_cmap("tab10")
    for i, kind in enumerate(kinds):
        sel = np.array([f == kind for f in first])
        ax.scatter(x[sel], y[sel], s=46, color=cmap(i % 10), label=kind, zorder=3)
    for xi, yi, r in zip(x, y, pts, strict=True):
        ax.annotate(
            str(r["rank"]),
            (xi, yi),
            textcoords="offset points",
            xytext=(4, 3),
            fontsize=8,
            fontweight="bold",
        )
    # the key: rank -> configuration (the map itself only carries the rank numbers)
    shown = pts[:40]
    lines = [f"{r['rank']:>2}. {r['label'][:48]}  ({r['ru_score']:.3g})" for r in shown]
    if len(pts) > len(shown):
        lines.append(f"... {len(pts) - len(shown)} more in the ranking table")
    key.text(
        0.0,
        1.0,
        "rank. configuration (R-U score)\n" + "\n".join(lines),
        va="top",
        ha="left",
        family="monospace",
        fontsize=7 if len(lines) < 25 else 6,
        transform=key.transAxes,
    )
    best = pts[0]
    ax.scatter(
        [best["disclosure_risk"]],
        [best["information_loss"]],
        s=260,
        facecolors="none",
        edgecolors="k",
        linewidths=1.2,
        zorder=4,
    )
    xmax = max(float(x.max()) * 1.15, 1.0)
    ymax = max(float(y.max()) * 1.15, 1.0)
    s_vals = np.array([r["ru_score"] for r in pts], dtype=float)
    for s in np.unique(np.round(np.quantile(s_vals, [0.0, 0.5, 1.0]), 3)):
        xs = np.linspace(0, xmax, 50)
        ax.plot(xs, 2 * s - xs, ls="--", lw=0.7, color="0.6", zorder=1)
        if 2 * s <= ymax:
            ax.text(0.5, 2 * s, f"score {s:g}", fontsize=6, color="0.45", va="bottom")
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.set_xlabel("disclosure risk DR = 100 × score_dr (%)")
    ax.set_ylabel("information loss IL = score_il (%)")
    ax.set_title("R-U map (lower left is better; dashed: equal R-U score)")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def compare_report(result: Mapping[str, Any], title: str = "Comparison of masking configurations"):
    """The HTML :class:`~sdckit.report.writer.Report`: R-U map, ranking, configurations."""
    from sdckit.report.writer import Report, Section, na

    ranking = result["ranking"]
    rep = Report(title, result.get("input"))
    best = next((r for r in ranking if r["ru_score"] is not None), None)
    rep.add(
        Section(
            "R-U map",
            text=(
                "Each point is one masking configuration: disclosure risk on x (DR = 100 × "
                "(0.25 DBRL + 0.25 PRL + 0.5 interval disclosure)), information loss on y "
                "(IL = score_il, Domingo-Ferrer & Torra 2001). The R-U score (IL + DR) / 2 "
                "ranks them; lower is better."
            ),
            facts={
                "configurations": len(ranking),
                "best configuration": best["label"] if best else "–",
                "best R-U score": best["ru_score"] if best else "–",
            },
            figures=[ru_map_figure(ranking)],
        )
    )
    table = [
        {
            "rank": r["rank"] if r["rank"] is not None else "–",
            "configuration": r["label"],
            "R-U score": na(r["ru_score"]),
            "IL (score_il)": na(r["information_loss"]),
            "DR (%)": na(r["disclosure_risk"]),
            "DBRL": na(r["dbrl"]),
            "PRL": na(r["prl"]),
            "ID": na(r["interval_disclosure"]),
            "IL1s": na(r["il1s"]),
            "bounded IL": na(r["bounded_il"]),
            "propensity U": na(r["propensity_u"]),
            "transparency: certain / re-identified": (
                "–"
                if r["certain_matches"] is None
                else f"{r['certain_matches']:.3f} / {r['reidentified']:.3f}"
            ),
        }
        for r in ranking
    ]
    rep.add(Section("Ranking", table=table))
    if result.get("masking"):
        rows = []
        for label, recs in result["masking"].items():
            for rec in recs:
                params = {k: v for k, v in rec.get("parameters", {}).items() if k != "groups"}
                rows.append(
                    {"configuration": label, "method": rec.get("method"), "parameters": params}
                )
        rep.add(
            Section(
                "Configurations (methods and parameters applied)",
                text="Published so that users can judge the protection (transparency principle).",
                table=rows,
            )
        )
    notes = [
        {"configuration": label, "note": n}
        for label, doc in result["evaluations"].items()
        for n in doc["notes"]
    ]
    if notes:
        rep.add(Section("Notes", table=notes))
    return rep


def run_compare_job(job, json_out=None, html_out=None) -> dict[str, Any]:
    """Run a grid job (:class:`sdckit.jobs.config.Job` with a ``grid``) and write its outputs.

    Output paths: ``json_out``/``html_out`` override the job's ``output.json``/``output.report``.
    Everything is computed before anything is written (atomic writes).
    """
    from sdckit.report.writer import write_json

    raw = job.raw
    if "grid" not in raw:
        raise ConfigError(
            f"{job.key('grid')} is missing; list the masking configurations to compare"
        )
    for key in ("models", "methods"):
        if key in raw:
            raise ConfigError(
                f"{job.key(key)}: a compare job lists its configurations under grid:, not "
                f"{key}:; move them into grid"
            )
    options = dict(raw.get("options", {}))
    for k in options:
        if k not in _OPTION_KEYS:
            raise ConfigError(
                f"{job.key(f'options.{k}')}: unknown option (known: {', '.join(_OPTION_KEYS)})"
            )
    categorical = options.get("categorical", []) or []
    if not isinstance(categorical, list):
        raise ConfigError(f"{job.key('options.categorical')} must be a list of column names")
    transparency = options.get("transparency", True)
    if not isinstance(transparency, bool):
        raise ConfigError(f"{job.key('options.transparency')} must be true or false")
    mfp = options.get("prl_max_full_pairs")
    if mfp is not None and (isinstance(mfp, bool) or not isinstance(mfp, int) or mfp < 1):
        raise ConfigError(f"{job.key('options.prl_max_full_pairs')} must be a positive integer")
    columns = raw.get("columns")
    configs = expand_grid(raw["grid"], columns, job.base_dir)
    data = job.read_input()
    if columns is None:
        columns_used = None
    else:
        missing = [c for c in columns if c not in data.columns]
        if missing:
            raise ConfigError(
                f"{job.key('columns')}: {', '.join(map(repr, missing))} not in the input "
                f"(its columns: {', '.join(map(str, data.columns))})"
            )
        columns_used = list(columns)
    try:
        result = compare(
            data,
            configs,
            columns=columns_used,
            qi=raw.get("qi"),
            categorical=categorical,
            seed=job.seed,
            transparency=transparency,
            max_full_pairs=mfp,
        )
    except ConfigError:
        raise
    except SdcInputError as exc:
        raise type(exc)(f"{job.source}: {exc}") from exc
    src = raw["input"]["path"]
    result["input"] = f"input: {src}" if isinstance(src, str) else None
    result["seed"] = job.seed
    out = job.output
    json_path = Path(json_out) if json_out else out.json
    html_path = Path(html_out) if html_out else out.report
    html = compare_report(result).render_html() if html_path else None
    if json_path:
        write_json(json_path, result)
    if html_path and html is not None:
        from sdckit.core.io import write_text

        write_text(html_path, html)
    result["written"] = [str(p) for p in (json_path, html_path) if p]
    return result
