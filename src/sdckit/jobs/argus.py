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
from sdckit.errors import ConfigError

__all__ = ["derive_attributes", "expand_document", "import_argus_job", "metadata_of"]


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
    weights = meta.of_kind("weight")
    if weights:
        notes.append(
            f"Weight variable (<WEIGHT>): {weights[0].name}; for the risk of the release use "
            f"`sdckit analyze ... --weight {weights[0].name}`."
        )
    if not any(a.get("role") == "quasi_identifying" for a in attrs.values()):
        notes.append("No variable has an <IDLEVEL> of 1 to 5: mark the key variables yourself.")
    return doc, notes
