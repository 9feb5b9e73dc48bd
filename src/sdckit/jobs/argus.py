"""Jobs from mu-Argus and tau-Argus metadata: what a job file's ``input: {path: data.asc,
metadata: data.rda}`` (or ``cells: {path: table.tab, metadata: table.rda}``) adds to the job.

The files are read by :mod:`sdckit.core.argus`; this module turns the metadata into the keys a
job would otherwise spell out, where the job leaves them out (a key the job gives wins):

* **microdata** (``sdckit anonymize``; a job without ``dimensions:`` or ``cells:``):
  ``attributes:`` from the variables. Mapping of mu-Argus' identification levels (mu-Argus
  manual, "identification level": 0 not identifying, 1 most identifying .. 5 least): a
  variable with ``<IDLEVEL>`` 1 to 5 is ``quasi_identifying`` (sdckit's privacy models treat
  every key variable alike; mu-Argus uses the levels only to choose which combinations of
  key variables it tabulates), ``<IDLEVEL> 0`` or none is ``insensitive``. A key variable's
  hierarchy: its ``<HIERCODELIST>`` (``.hrc``, the lead string of ``<HIERLEADSTRING>``),
  else the ``masking`` builder (truncation from the right, mu-Argus' ``<TRUNCABLE>``
  recoding; for a one-character code: suppression). ``<NUMERIC>`` and ``<WEIGHT>`` variables
  are ``decimal`` (the weight column is named in the derived job's comments, for ``sdckit
  analyze --weight``).
* **tables** (``sdckit table``): each dimension's ``hierarchy`` (its ``.hrc``) and ``total``
  (``<TOTCODE>``) where the dimension gives none; with ``cells:`` and no ``dimensions:``,
  every ``<RECODEABLE>`` variable of the ``.tab``'s metadata is a dimension; ``holding:`` from
  a ``<HOLDING>`` variable. ``method: audit`` on a ``.tab`` with a ``<STATUS>`` column reads
  tau-Argus' status letters: primary the ``<UNSAFE>`` code (``U``), secondary ``M``,
  published the ``<SAFE>`` and ``<PROTECT>`` codes and ``E`` (empty), unless the job's
  options name them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sdckit.core.argus import ArgusMetadata, ArgusVariable, read_rda
from sdckit.errors import ConfigError, DataError

__all__ = [
    "DEFAULT_FREQUENCY_RULES",
    "DEFAULT_MAGNITUDE_RULES",
    "derive_attributes",
    "expand_document",
    "import_argus_job",
    "import_argus_table_job",
    "metadata_of",
    "refuse_summed_missing_codes",
]


def _path(value: str, base_dir: Path) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else base_dir / p


def metadata_of(section: Any, base_dir: Path, kind: str, source: str, key: str) -> ArgusMetadata:
    """The ``.rda`` a job section's ``metadata:`` names, read (ConfigError naming the key)."""
    value = section.get("metadata") if isinstance(section, Mapping) else None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{source}: {key}.metadata must be the path of a .rda file")
    path = _path(value, base_dir)
    if not path.is_file():
        raise ConfigError(
            f"{source}: {key}.metadata: metadata file {str(path)!r} does not exist; check the "
            "path (relative to the job file)"
        )
    try:
        return read_rda(path, kind="table" if kind == "table" else "micro")
    except ConfigError as exc:
        raise ConfigError(f"{source}: {key}.metadata: {exc}") from None


def _hrc_file(meta: ArgusMetadata, var: ArgusVariable, base_dir: Path | None) -> str | None:
    """The variable's ``.hrc`` as a job path (relative to ``base_dir`` when given)."""
    if not var.hiercodelist:
        return None
    path = meta.file(var.hiercodelist)
    if not path.is_file():
        raise ConfigError(
            f"{meta.path.name} line {var.line}: <HIERCODELIST> of {var.name!r} names "
            f"{var.hiercodelist!r}, which exists neither as given nor beside the .rda"
        )
    if base_dir is None:
        return str(path.resolve())
    return os.path.relpath(path.resolve(), base_dir.resolve())


def derive_attributes(meta: ArgusMetadata, base_dir: Path | None = None) -> dict[str, Any]:
    """The ``attributes:`` of a microdata job from mu-Argus metadata (the mapping of the
    module's docstring); hierarchy paths relative to ``base_dir`` (absolute without)."""
    attrs: dict[str, Any] = {}
    for v in meta.variables:
        if v.idlevel is not None and v.idlevel >= 1:
            entry: dict[str, Any] = {"role": "quasi_identifying"}
            hrc = _hrc_file(meta, v, base_dir)
            entry["hierarchy"] = hrc if hrc is not None else {"masking": {}}
            attrs[v.name] = entry
        elif v.kind in ("numeric", "weight") or (v.categorical and v.numeric):
            attrs[v.name] = {"role": "insensitive", "type": "decimal"}
        else:
            attrs[v.name] = {"role": "insensitive"}
    return attrs


def _table_dimensions(
    doc: dict[str, Any], meta: ArgusMetadata, base_dir: Path | None, fill_all: bool
) -> None:
    """``dimensions:`` completed from the metadata (all recodeables when ``fill_all`` and
    the job names none)."""
    given = doc.get("dimensions")
    if given is None and fill_all:
        given = {v.name: {} for v in meta.of_kind("categorical")}
    if not isinstance(given, Mapping):
        return
    dims: dict[str, Any] = {}
    for name, spec in given.items():
        spec = dict(spec) if isinstance(spec, Mapping) else spec
        var = meta.variable(str(name))
        if isinstance(spec, dict) and var is not None and var.categorical:
            if "hierarchy" not in spec:
                if var.hierlevels:
                    raise ConfigError(
                        f"{meta.path.name} line {var.line}: {var.name!r} is hierarchical by "
                        "<HIERLEVELS>, which sdckit does not read for tables; give the "
                        "hierarchy as a .hrc file (<HIERCODELIST>) or under "
                        f"dimensions.{name}.hierarchy"
                    )
                hrc = _hrc_file(meta, var, base_dir)
                if hrc is not None:
                    spec["hierarchy"] = hrc
            if "total" not in spec and var.totcode:
                spec["total"] = var.totcode
        dims[str(name)] = spec if spec is not None else {}
    doc["dimensions"] = dims


def expand_document(document: Mapping[str, Any], base_dir: Path, source: str) -> dict[str, Any]:
    """``document`` with the keys its Argus metadata implies added (see the module's
    docstring); the document itself when it names no ``metadata:``."""
    inp, cells = document.get("input"), document.get("cells")
    has_input_meta = isinstance(inp, Mapping) and "metadata" in inp
    has_cells_meta = isinstance(cells, Mapping) and "metadata" in cells
    if not (has_input_meta or has_cells_meta):
        return dict(document)
    doc = dict(document)
    if has_cells_meta:
        meta = metadata_of(cells, base_dir, "table", source, "cells")
        _table_dimensions(doc, meta, None, fill_all=True)
        if doc.get("method") == "audit" and meta.of_kind("status"):
            options = dict(doc.get("options") or {})
            codes = meta.status_codes
            options.setdefault("primary_statuses", [codes["unsafe"]])
            options.setdefault("secondary_statuses", ["M"])
            options.setdefault("published_statuses", [codes["safe"], codes["protect"], "E"])
            doc["options"] = options
        return doc
    meta = metadata_of(inp, base_dir, "micro", source, "input")
    if "dimensions" in doc or "tables" in doc:
        _table_dimensions(doc, meta, None, fill_all=False)
        holding = meta.of_kind("holding")
        if holding and "holding" not in doc:
            doc["holding"] = holding[0].name
    elif "attributes" not in doc:
        doc["attributes"] = derive_attributes(meta)
    return doc


def import_argus_job(
    rda: Path, data: Path, job_path: Path, k: int = 5, output_prefix: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The anonymize job of a mu-Argus ``.rda`` + data pair as a job file at ``job_path``
    would hold it (paths relative to its folder): ``input`` with ``metadata``, the derived
    ``attributes``, ``k``-anonymity (``k``) with no suppression, ``output`` beside the job;
    and the notes to write as the file's comments (the mapping used, the weight variable)."""
    base = job_path.resolve().parent
    meta = read_rda(rda, kind="micro")
    attrs = derive_attributes(meta, base)
    stem = output_prefix or data.stem
    doc: dict[str, Any] = {
        "input": {
            "path": os.path.relpath(data.resolve(), base),
            "metadata": os.path.relpath(rda.resolve(), base),
        },
        "attributes": attrs,
        "models": [{"k_anonymity": {"k": k}}],
        "suppression_limit": 0.0,
        "output": {
            "path": f"{stem}_anonymized.csv",
            "report": f"{stem}_report.html",
            "json": f"{stem}_report.json",
        },
    }
    notes = [
        f"Derived by `sdckit import-argus` from {rda.name}: <IDLEVEL> 1-5 -> quasi_identifying,",
        "<IDLEVEL> 0 or none -> insensitive; a key variable's hierarchy is its .hrc",
        "(<HIERCODELIST>), else truncation from the right ({masking: {}}).",
        "Missing codes of the .rda are read as missing values.",
    ]
    labelled = [v.name for v in meta.variables if v.codelist]
    if labelled:
        notes.append(
            f"<CODELIST>: {', '.join(labelled)} are shown by their labels (the codes kept for a "
            ".sav/.dta release);"
        )
        truncated = [n for n in labelled if attrs[n].get("hierarchy") == {"masking": {}}]
        if truncated:
            notes.append(
                f"the truncation of {', '.join(truncated)} acts on the labels: give a .hrc "
                "(or another hierarchy) for a meaningful grouping."
            )
    weights = meta.of_kind("weight")
    if weights:
        notes.append(
            f"Weight variable (<WEIGHT>): {weights[0].name}; for the risk of the release use "
            f"`sdckit analyze ... --weight {weights[0].name}`."
        )
    if not any(a.get("role") == "quasi_identifying" for a in attrs.values()):
        notes.append("No variable has an <IDLEVEL> of 1 to 5: mark the key variables yourself.")
    return doc, notes


#: The sensitivity rules of a derived table job when ``--rule`` names none (tau-Argus'
#: metadata holds no rules: they are chosen per table, in its table specification): a
#: magnitude table's p% rule with p = 10 and a frequency rule with threshold 3 (the usual
#: combination of the tau-Argus manual's examples and of national practice); a frequency
#: table's frequency rule with threshold 3.
DEFAULT_MAGNITUDE_RULES: list[dict[str, Any]] = [
    {"p_percent": {"p": 10}},
    {"frequency": {"threshold": 3}},
]
DEFAULT_FREQUENCY_RULES: list[dict[str, Any]] = [{"frequency": {"threshold": 3}}]


def _rules_text(rules: list[dict[str, Any]]) -> str:
    """Rules as a job file writes them inline: ``p_percent: {p: 10}``."""
    out = []
    for entry in rules:
        ((name, params),) = entry.items()
        inner = ", ".join(f"{k}: {v}" for k, v in params.items())
        out.append(f"{name}: {{{inner}}}")
    return "; ".join(out)


def _chosen(meta: ArgusMetadata, names: list[str], flag: str, kinds: tuple[str, ...]) -> list[str]:
    """``names`` as the metadata spells them, each a variable of one of ``kinds`` (ConfigError
    naming ``flag``, the name and the variables that are)."""
    out = []
    for name in names:
        var = meta.variable(name)
        if var is None or var.kind not in kinds:
            fitting = [v.name for v in meta.variables if v.kind in kinds]
            raise ConfigError(
                f"{flag} {name!r}: {meta.path.name} declares no such "
                f"{'<RECODEABLE>' if 'categorical' in kinds else '<NUMERIC>'} variable; "
                f"those it declares: {', '.join(fitting) or 'none'}"
            )
        out.append(var.name)
    return out


def import_argus_table_job(
    rda: Path,
    job_path: Path,
    *,
    data: Path | None = None,
    cells: Path | None = None,
    dimensions: list[str] | None = None,
    response: str | None = None,
    frequency: bool = False,
    rules: list[dict[str, Any]] | None = None,
    method: str = "optimal",
    output_prefix: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The table job (``sdckit table``) of a tau-Argus ``.rda`` with its microdata (``data``)
    or its ``.tab`` cell file (``cells``), as a job file at ``job_path`` would hold it (paths
    relative to its folder), and the notes to write as the file's comments.

    The tau-Argus metadata keywords (tau-Argus 4 manual, "metadata file"; module
    :mod:`sdckit.core.argus`) give: the explanatory variables (``<RECODEABLE>``/
    ``<RECODABLE>``) -> ``dimensions`` (all of them, or ``dimensions``), each with its
    ``<TOTCODE>`` as ``total`` and its ``.hrc`` (``<HIERARCHICAL>`` + ``<HIERCODELIST>``) as
    ``hierarchy``; the response (the first ``<NUMERIC>`` variable, or ``response``; none
    with ``frequency``: a frequency table); ``<HOLDING>`` -> ``holding``; a
    ``<NUMERIC> <SHADOW>`` variable -> ``shadow``; ``<NUMERIC> <COST>`` -> ``cost``. The
    sensitivity ``rules`` (default :data:`DEFAULT_MAGNITUDE_RULES` or
    :data:`DEFAULT_FREQUENCY_RULES`) and the ``method`` are not in the metadata; the notes
    say which were chosen. ``<WEIGHT>`` is named in the notes: sdckit's tables count and sum
    unweighted records."""
    if (data is None) == (cells is None):
        raise ConfigError("give exactly one of --data (microdata) and --cells (a .tab cell file)")
    given_rules = rules is not None
    base = job_path.resolve().parent
    meta = read_rda(rda, kind="table" if cells is not None else "micro")
    recodeable = [v.name for v in meta.of_kind("categorical")]
    if not recodeable:
        raise ConfigError(
            f"{rda.name}: no variable is <RECODEABLE>; a table's explanatory variables are "
            "marked <RECODEABLE> (or <RECODABLE>)"
        )
    stem = output_prefix or (cells or data or rda).stem
    notes = [f"Derived by `sdckit import-argus --table` from {rda.name} (tau-Argus metadata):"]
    doc: dict[str, Any] = {}
    if cells is not None:
        if dimensions is not None or response is not None or frequency:
            raise ConfigError(
                "--dimensions, --response and --frequency choose a table of microdata; a .tab "
                "cell file (--cells) is one table already: remove them"
            )
        names = recodeable
        doc["cells"] = {
            "path": os.path.relpath(cells.resolve(), base),
            "metadata": os.path.relpath(rda.resolve(), base),
        }
        magnitude = bool(meta.of_kind("numeric"))
        has_freq = bool(meta.of_kind("frequency"))
        has_tops = len(meta.of_kind("top")) >= 2
        if rules is None:
            if not has_freq:
                raise ConfigError(
                    f"{rda.name}: the cell file has no <FREQUENCY> variable, which the default "
                    "frequency rule reads; name the rules with --rule (e.g. --rule "
                    "'{dominance: {n: 1, k: 80}}' with <MAXSCORE> variables)"
                )
            rules = DEFAULT_MAGNITUDE_RULES if magnitude and has_tops else DEFAULT_FREQUENCY_RULES
        notes.append(
            "the table is the .tab's cells: <RECODEABLE> -> dimensions, <NUMERIC> -> value,"
        )
        notes.append("<FREQUENCY> -> freq, <MAXSCORE> -> top1, top2, ... (the rules read them).")
    else:
        names = (
            _chosen(meta, dimensions, "--dimensions", ("categorical",))
            if dimensions
            else recodeable
        )
        doc["input"] = {
            "path": os.path.relpath(data.resolve(), base),  # type: ignore[union-attr]
            "metadata": os.path.relpath(rda.resolve(), base),
        }
        numeric = [v.name for v in meta.of_kind("numeric")]
        if frequency and response is not None:
            raise ConfigError("give --response (a magnitude table) or --frequency, not both")
        chosen: str | None
        if response is not None:
            chosen = _chosen(meta, [response], "--response", ("numeric",))[0]
        else:
            chosen = None if frequency or not numeric else numeric[0]
        magnitude = chosen is not None
        if rules is None:
            rules = DEFAULT_MAGNITUDE_RULES if magnitude else DEFAULT_FREQUENCY_RULES
        notes.append(
            "<RECODEABLE> -> dimensions ("
            + ", ".join(names)
            + "), <NUMERIC> -> response"
            + (f" ({chosen})" if chosen else ": none, a frequency table")
            + ", <TOTCODE> -> total, <HIERCODELIST> (.hrc) -> hierarchy."
        )
    dims: dict[str, Any] = {}
    for name in names:
        var = meta.variable(name)
        assert var is not None
        spec: dict[str, Any] = {}
        if var.hierlevels and not var.hiercodelist:
            raise ConfigError(
                f"{rda.name} line {var.line}: {var.name!r} is hierarchical by <HIERLEVELS>, "
                "which sdckit does not read for tables; give the hierarchy as a .hrc file "
                "(<HIERCODELIST>)"
            )
        hrc = _hrc_file(meta, var, base)
        if hrc is not None:
            spec["hierarchy"] = hrc
        if var.totcode:
            spec["total"] = var.totcode
        dims[name] = spec
    doc["dimensions"] = dims
    if cells is None and magnitude:
        doc["response"] = chosen
    for key, of in (("shadow", "shadow"), ("cost", "cost"), ("holding", "holding")):
        found = meta.of_kind(of)
        if found and cells is None:
            doc[key] = found[0].name
    if cells is not None and meta.of_kind("cost"):
        doc["cost"] = "cost"
    doc["rules"] = [dict(r) for r in rules]
    doc["method"] = method
    doc["output"] = {
        "cells": f"{stem}_cells.csv",
        "tab": f"{stem}_protected.tab",
        "report": f"{stem}_table.html",
        "json": f"{stem}_table.json",
    }
    origin = "given with --rule" if given_rules else "a default: tau-Argus metadata holds none"
    notes.append(f"Sensitivity rules ({origin}): {_rules_text(doc['rules'])}; set with --rule.")
    notes.append(f"Method: {method} (--method); output.tab writes the result for tau-Argus.")
    weights = meta.of_kind("weight")
    if weights:
        notes.append(
            f"Weight variable (<WEIGHT>): {weights[0].name} is not applied: sdckit's tables "
            "count and sum the records unweighted."
        )
    if cells is None:
        notes.append("Missing codes of the dimensions are kept as categories (as tau-Argus does).")
    return doc, notes


def refuse_summed_missing_codes(
    meta: ArgusMetadata, frame: Any, summed: Mapping[str, str | None], source: str
) -> None:
    """DataError when a column a table sums (``summed``: job key -> column; the response,
    shadow and cost) holds one of its variable's missing codes: a table job reads the
    microdata with the missing codes kept (its dimensions keep them as categories, as
    tau-Argus does), and a code such as ``999999`` is no amount. The message names the key,
    the column, the code, how many records hold it and the ``.rda`` line declaring it."""
    for key, column in summed.items():
        var = meta.variable(column) if column else None
        if var is None or var.categorical or not var.missing or var.name not in frame:
            continue
        held = frame[var.name].isin(var.missing)
        if held.any():
            first = int(held.to_numpy().argmax())
            raise DataError(
                f"{source}: {key}: column {var.name!r} holds its missing code "
                f"{frame[var.name].iloc[first]!r} ({meta.path.name} line {var.line}) in "
                f"{int(held.sum())} record(s), the first record {first + 1}; a table sums "
                "this column and a missing code is no amount: give these records a value or "
                "leave them out of the data"
            )
