"""Run a table job: job file -> table -> :func:`sdckit.tables.protect` -> verified outputs.

A table job reads microdata (``input:``) or a table given cell by cell (``cells:``), builds
the table over ``dimensions:`` (each with an optional hierarchy), applies the sensitivity
``rules:``, protects the table with ``method:`` (parameters under ``options:``) and writes
the released cells, the HTML report and the JSON summary together (or nothing)::

    input: {path: microdata.csv}            # or cells: {path: cells.csv}
    dimensions:
      region: {}                            # flat: the total's code is "Total"
      nace: {hierarchy: nace_hierarchy.csv} # or a builder: {order: {groups: [...]}}
    response: turnover                      # omit for a frequency table
    holding: enterprise_group               # optional
    rules:
      - frequency: {threshold: 3, safety_range: 30}
      - dominance: {n: 1, k: 85}
      - p_percent: {p: 20}
      - request: {column: asked, codes: [R], percentages: [70], min_frequency: 3,
                  safety_margin: 10}          # tau-Argus' request rule (microdata only)
    method: optimal                         # optimal | simple | hypercube | modular |
                                            # rounding | cta | cell_key | audit
    cost: value                             # value | frequency | unity | a column name
    options: {time_limit: 60}               # base (rounding), ptable + key (cell_key), ...
    output: {cells: cells.csv, report: table.html, json: table.json}

Linked tables (several tables of the same microdata sharing dimensions, protected
consistently: a common cell is suppressed in all of them or in none;
:mod:`sdckit.tables.linked`) are declared with ``tables:`` beside ``dimensions:``, as a list
of dimension lists (each table named ``region x gender``) or a mapping name -> dimensions::

    tables: [[region, gender], [region, age]]

The cells file then has a ``table`` column and one column per dimension (a dimension the
table does not span holds its total's code); the JSON summary gives the figures over the
distinct cells and, under ``tables``, each table's own.

Cells given directly (``cells:``) have one column per dimension with the codes, ``value``
and optionally ``freq`` and the largest contributions ``top1``, ``top2``, ... (options
``value``, ``freq``, ``top`` name other columns).

With ``engine: spark`` (``spark: {master, conf}``) the pass over the microdata runs on Spark
(:mod:`sdckit.spark.tables`: per leaf cell sums, counts and largest contributions, and the
cell key method's key sums); the table, the rules, the protection, the audit and the outputs
are the local engine's on the driver, so the job's results are the local job's. ``cells:``
input is read on the driver with either engine. The JSON summary names the ``engine``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.io import read_table, write_table
from sdckit.core.uri import Target
from sdckit.errors import ConfigError
from sdckit.jobs.config import Job
from sdckit.report.writer import write_json

__all__ = [
    "TableJobOutcome",
    "build_linked_tables",
    "build_rules",
    "build_table",
    "check_table_job",
    "run_table_job",
]

#: Option keys of a table job (``options:``) that build the table, beside those the method
#: reads (:data:`sdckit.tables.options.OPTIONS`: ``time_limit``, ``base``, ``ptable``, ...).
_BUILD_OPTIONS = ("value", "freq", "top", "top_n", "min_protection")


@dataclass
class TableJobOutcome:
    """The protection, the JSON summary and the files written."""

    protection: Any  # sdckit.tables.protect.Protection
    summary: dict[str, Any]
    written: dict[str, Target] = field(default_factory=dict)


def build_rules(job: Job) -> list:
    """The job's sensitivity rules (ParameterError naming ``rules[i].<rule>.<param>``)."""
    from sdckit.tables.rules import RULES

    return [
        RULES[name].from_dict(params, job.key(f"rules[{i}].{name}"))
        for i, (name, params) in enumerate(job.spec.rules)
    ]


def _options(job: Job, method: str) -> dict[str, Any]:
    """The job's ``options:``, checked before the data is read: those building the table
    (:data:`_BUILD_OPTIONS`) and those of the method (or ``audit``), validated by its spec
    (:func:`sdckit.tables.options.parse_table_options`, a ParameterError naming
    ``options.<key>``). An option neither reads is refused with the allowed ones."""
    from sdckit.core.spec import did_you_mean
    from sdckit.tables.options import OPTIONS, AuditOptions, parse_table_options

    opts = job.algorithm_options
    own = OPTIONS.get(method, AuditOptions).model_fields
    allowed = [*_BUILD_OPTIONS, *own]
    unknown = [k for k in opts if k not in allowed]
    if unknown:
        raise ConfigError(
            f"{job.key('options')}: unknown option {unknown[0]!r}; method {method!r} takes "
            f"{', '.join(allowed)}{did_you_mean(str(unknown[0]), allowed)}"
        )
    parse_table_options(method, {k: v for k, v in opts.items() if k in own}, job.key("options"))
    return opts


def _read_cells(job: Job) -> pd.DataFrame:
    """The job's table given cell by cell (``cells:``)."""
    src = job.spec.cells
    assert src is not None
    if src.metadata is not None:  # a tau-Argus .tab and its .rda
        from sdckit.core.argus import read_tab

        tab = job._path(src.path) if isinstance(src.path, str) else None
        if tab is None:
            raise ConfigError(f"{job.key('cells.path')}: a .tab cell file is read from a path")
        return read_tab(job.argus_metadata(), tab, encoding=src.encoding)
    return read_table(
        job._path(src.path) if isinstance(src.path, str) else src.path,
        delimiter=src.delimiter,
        encoding=src.encoding,
    )


def _request_rule(job: Job, rules: list) -> tuple[int, Any] | None:
    """The job's request rule and its position in ``rules:`` (None without one); ConfigError
    for a second one (tau-Argus takes one per level, and sdckit has the records' level)."""
    from sdckit.tables.rules import RequestRule

    found = [(i, r) for i, r in enumerate(rules) if isinstance(r, RequestRule)]
    if len(found) > 1:
        raise ConfigError(
            f"{job.key(f'rules[{found[1][0]}].request')}: a table takes one request rule; give "
            "both request codes and their percentages in one entry"
        )
    return found[0] if found else None


def build_table(job: Job, opts: dict[str, Any], names: list[str] | None = None):
    """The job's table, from its microdata (``input``) or its cells (``cells``); ``names``:
    only these of the job's dimensions (one of linked ``tables:``). A request rule's column
    and codes go into the microdata's pass (ConfigError for a table given cell by cell).

    With ``engine: spark`` the microdata's pass (the per-leaf-cell sums, counts and largest
    contributions) runs on Spark (:func:`sdckit.spark.tables.spark_table`) and the table is
    rolled up on the driver, equal to the local engine's (sums up to the order of floating
    additions); a hierarchy builder reads the column's distinct values. A table given cell by
    cell (``cells:``) is small and is read on the driver with either engine."""
    table, rules, _ = _build_table(job, opts, names)
    return table, rules


def check_table_job(job: Job) -> None:
    """The job's table built as :func:`run_table_job` builds it, without protecting it: its
    options checked, the data (or cells) read, every hierarchy built with every code of the
    data in it, every rule's parameters checked (how ``sdckit import-argus --table`` checks
    the job it writes)."""
    build_table(job, _options(job, job.spec.method or "optimal"))


def _build_table(
    job: Job, opts: dict[str, Any], names: list[str] | None = None
) -> tuple[Any, list, pd.DataFrame | None]:
    """:func:`build_table` and the cells file it read (None for microdata), which the audit
    reads its statuses from (one read of the file)."""
    from sdckit.tables.table import Table

    spec = job.spec
    if not spec.dimensions:
        raise ConfigError(
            f"{job.key('dimensions')} is missing: name the spanning variables, e.g. "
            "`dimensions: {region: {}, nace: {hierarchy: nace.csv}}`"
        )
    if (spec.input is None) == (spec.cells is None):
        raise ConfigError(
            f"{job.key('input')}: give exactly one of `input:` (microdata) and `cells:` (a "
            "table given cell by cell)"
        )
    frame = None
    source = job.open()
    if spec.cells is not None:
        frame = _read_cells(job)
        known: list[str] | None = list(frame.columns)
    elif source.distributed:  # checked on the header first: Spark starts only after
        known = source.columns()
    else:
        frame = source.frame()
        known = list(frame.columns)
        meta = job.argus_metadata() if spec.input is not None else None
        if meta is not None:  # a missing code is no amount: refused before it is summed
            from sdckit.jobs.argus import refuse_summed_missing_codes

            summed = {"response": spec.response, "shadow": spec.shadow, "cost": spec.cost}
            refuse_summed_missing_codes(meta, frame, summed, job.source)
    if known is not None:
        _check_dimensions(job, known)
    rules = build_rules(job)
    request = _request_rule(job, rules)
    if known is not None:
        _check_request_rule(job, request, known)
    if source.distributed and spec.cells is None:
        if known is not None:  # the columns the records' pass reads (checked there again)
            from sdckit.tables.table import check_columns

            custom_cost = spec.cost if spec.cost not in ("value", "frequency", "unity") else None
            check_columns(known, [spec.response, spec.shadow, custom_cost, spec.holding])
        for name, dim in spec.dimensions.items():  # files read, builders' parameters checked
            if dim.hierarchy is not None:
                job.check_hierarchy(dim.hierarchy, name, f"dimensions.{name}.hierarchy")
        if known is None:  # a URI: only Spark reads its columns
            known = source.frame_columns()
            _check_dimensions(job, known)
            _check_request_rule(job, request, known)
    hierarchies = {}
    for name, dim in spec.dimensions.items():
        h = None
        if dim.hierarchy is not None:
            h = job.resolve_hierarchy(
                dim.hierarchy,
                _hierarchy_values(dim.hierarchy, name, frame, source),
                name,
                f"dimensions.{name}.hierarchy",
            )
        hierarchies[name] = h
    if names is not None:
        hierarchies = {name: hierarchies[name] for name in names}
    top_n = int(opts.get("top_n", max([2, *[r.top_needed() for r in rules]])))
    if spec.cells is not None:
        assert frame is not None
        tops = opts.get("top") or [c for c in frame.columns if str(c).lower().startswith("top")]
        totals = {d.total for d in spec.dimensions.values() if d.total}
        if len(totals) > 1:
            raise ConfigError(f"{job.key('dimensions')}: give all flat dimensions one total code")
        table = Table.from_cells(
            frame,
            hierarchies,
            value=opts.get("value", "value"),
            freq=opts.get("freq", "freq"),
            top=list(tops),
            cost=spec.cost if spec.cost in frame.columns else None,
            total=totals.pop() if totals else "Total",
        )
    else:
        custom_cost = spec.cost if spec.cost not in ("value", "frequency", "unity") else None
        options: dict[str, Any] = {
            "shadow": spec.shadow,
            "cost": custom_cost,
            "holding": spec.holding,
            "top_n": top_n,
            "request": request[1].column if request is not None else None,
            "request_codes": request[1].codes if request is not None else (),
        }
        flat_totals = {
            n: d.total for n, d in spec.dimensions.items() if d.total and hierarchies.get(n) is None
        }
        if flat_totals:  # a flat dimension's total code (a hierarchy names its own root)
            options["totals"] = flat_totals
        table = source.microdata_table(hierarchies, spec.response, **options)
    if spec.cost == "frequency":
        table.cost = table.freq.astype(float)
    elif spec.cost == "unity":
        table.cost = np.ones(table.n_cells)
    return table, rules, frame if spec.cells is not None else None


def _check_dimensions(job: Job, columns: list[str]) -> None:
    """ConfigError for a dimension that is not a column of the input (or cells file)."""
    for name in job.spec.dimensions:
        if name not in columns:
            raise ConfigError(
                f"{job.key(f'dimensions.{name}')}: column {name!r} is not in the "
                f"{'cells file' if job.spec.cells is not None else 'input'} (columns: "
                f"{', '.join(map(str, columns))})"
            )


def _check_request_rule(job: Job, request: tuple[int, Any] | None, columns: list[str]) -> None:
    """ConfigError for a request rule the table cannot apply: on cells, on a column that is
    not in the input, or without a response."""
    if request is None:
        return
    where = job.key(f"rules[{request[0]}].request")
    if job.spec.cells is not None:
        raise ConfigError(
            f"{where}: the request rule reads which records asked for protection from the "
            "microdata (`input:`); a table given cell by cell (`cells:`) does not say it"
        )
    if request[1].column not in columns:
        raise ConfigError(
            f"{where}.column: column {request[1].column!r} is not in the input (columns: "
            f"{', '.join(map(str, columns))}); name the column flagging the records that "
            "asked for protection"
        )
    if job.spec.response is None:
        raise ConfigError(
            f"{where}: the request rule compares a contribution with the cell total; give "
            "`response:` (a frequency table has no contributions)"
        )


def _hierarchy_values(
    hierarchy: Any, name: str, frame: pd.DataFrame | None, source: Any
) -> pd.Series:
    """What a dimension's hierarchy builder reads: the column of the table read here (the
    cells file, the local input), else its values on the job's engine (Spark: the distinct
    values, all a builder needs, and no pass over the data for a hierarchy file)."""
    if frame is not None:
        return frame[name]
    if isinstance(hierarchy, str):  # a file: the values are not read
        return pd.Series([], dtype=object, name=name)
    return source.column_values(name)


def _method_options(job: Job, opts: dict[str, Any]) -> dict[str, Any]:
    """The options the protection method reads, the p-table's path resolved."""
    from sdckit.tables.options import OPTIONS

    method = job.spec.method or "optimal"
    reads = [k for k in OPTIONS[method].model_fields if k != "key"] if method in OPTIONS else []
    method_opts = {k: opts[k] for k in reads if k in opts}
    if "ptable" in method_opts:
        method_opts["ptable"] = job._path(str(method_opts["ptable"]))
    return method_opts


def _cell_keys(job: Job, table: Any, opts: dict[str, Any]) -> np.ndarray | None:
    """Per-cell keys (cell key method): the exact sums, modulo 1, of the record keys in the
    ``key`` column of the microdata (:func:`sdckit.tables.cell_key.cell_keys`)."""
    key = opts.get("key")
    if key is None:
        return None
    if job.spec.input is None:
        raise ConfigError(
            f"{job.key('options.key')}: the cell key method needs the microdata (`input:`), "
            "whose record keys make the cell keys"
        )
    return _keys_of(job, table, str(key))


def _keys_of(job: Job, table: Any, key: str) -> np.ndarray:
    """The cell keys of ``table`` from the microdata's record keys in column ``key``, summed on
    the job's engine (:meth:`~sdckit.jobs.source.Source.cell_keys`: the same keys, bit for
    bit)."""
    return np.asarray(job.open().cell_keys(table, key))


def run_table_job(job: Job, *, json_out: Target | None = None) -> TableJobOutcome:
    """Protect the job's table as the job says and write its outputs (only on success)."""
    from sdckit.tables.protect import protect
    from sdckit.tables.registry import TABLE_METHODS

    method = job.spec.method or "optimal"
    without_rules = (*TABLE_METHODS.where(lambda t: not t.needs_rules), "audit")
    if not job.spec.rules and job.spec.method not in without_rules:
        raise ConfigError(
            f"{job.key('rules')} is missing: name at least one sensitivity rule, e.g. "
            "`rules: [{frequency: {threshold: 3}}]`"
        )
    job.check_outputs({"--json": json_out})
    if job.output.excel is not None:  # before any work: the workbook needs openpyxl
        import importlib.util

        if importlib.util.find_spec("openpyxl") is None:
            raise ConfigError(
                f"{job.key('output.excel')}: writing an Excel workbook needs openpyxl: "
                "pip install 'sdckit[formats]'"
            )
    if method not in TABLE_METHODS and method != "audit":  # before the data is read
        raise ConfigError(
            f"{job.key('method')}: unknown table method {method!r}; use one of "
            f"{', '.join(TABLE_METHODS.names())} (or audit)"
        )
    opts = _options(job, method)
    if job.spec.tables is not None:
        if job.output.tab is not None:
            raise ConfigError(
                f"{job.key('output.tab')}: a tau-Argus cell file holds one table; linked "
                "`tables:` are written to `output.cells` (or run one job per table)"
            )
        return _run_linked(job, opts, json_out)
    table, rules, cells = _build_table(job, opts)
    method_opts = _method_options(job, opts)
    if method == "cell_key":
        method_opts["cell_keys"] = _cell_keys(job, table, opts)
    if method == "audit":
        protection = _audit(job, table, rules, opts, cells)
    else:
        protection = protect(
            table,
            rules,
            method,
            options=method_opts,
            min_protection=float(opts.get("min_protection", 1.0)),
        )
    from sdckit.report.table_report import table_report

    return _write(job, json_out, protection, rules, table.dimensions, table, table_report)


def _write(
    job: Job,
    json_out: Target | None,
    protection: Any,
    rules: list,
    dimensions: Any,
    tables: Any,
    page: Any,
) -> TableJobOutcome:
    """The job's outputs, together or not at all: the cells file, the HTML page
    (``page(summary, cells, tables)``) and the JSON summary."""
    out = job.output
    json_path = json_out or out.json
    summary = protection.summary()
    source = job.spec.cells if job.spec.cells is not None else job.spec.input
    summary["input"] = str(source.path) if source is not None else None
    summary["engine"] = job.open().name
    summary["dimensions"] = {d.name: len(d) for d in dimensions}
    summary["response"] = job.spec.response
    summary["rules"] = [r.to_entry() for r in rules]
    cells = protection.cells()
    written: dict[str, Target] = {}
    with job.open().outputs() as outputs:
        summary["run_id"] = outputs.run_id
        cells_path = out.cells or out.path
        if cells_path is not None:
            written["cells"] = write_table(_for_csv(cells), cells_path, out.delimiter)
            summary["cells_file"] = str(cells_path)
        if out.report is not None:
            written["report"] = page(summary, cells, tables).write_html(out.report)
        if out.excel is not None:
            from sdckit.report.table_workbook import write_table_workbook

            if hasattr(tables, "labels"):  # linked tables: one sheet each
                names = {
                    str(label): [d.name for d in t.dimensions]
                    for t, label in zip(tables.tables, tables.labels, strict=True)
                }
            else:
                names = {"table": [d.name for d in tables.dimensions]}
            written["excel"] = write_table_workbook(out.excel, summary, cells, names, out.mark)
        if out.tab is not None:
            written["tab"], written["tab_rda"] = _write_tab(job, out.tab, cells, dimensions)
        if json_path is not None:
            summary["outputs"] = {k: str(v) for k, v in written.items()}
            written["json"] = write_json(json_path, summary)
    return TableJobOutcome(protection, summary, written)


def _audit(job: Job, table: Any, rules: list, opts: dict[str, Any], frame: pd.DataFrame | None):
    """``method: audit``: the suppressions of a table protected by another tool, read from
    the status column of the cells file ``frame`` (the one the table was built from; option
    ``status``, default ``status``; codes as
    :func:`sdckit.tables.audit.audit_cells` reads them, or the lists
    ``primary_statuses``/``secondary_statuses``/``published_statuses``), audited against the
    job's rules (or, without rules, the cells with a primary status)."""
    from sdckit.tables.protect import audit_table

    if job.spec.cells is None:
        raise ConfigError(
            f"{job.key('method')}: `audit` reads a protected table given cell by cell "
            "(`cells:` with a status column), not microdata"
        )
    from sdckit.tables.options import AuditOptions

    assert frame is not None
    own = {k: v for k, v in opts.items() if k not in _BUILD_OPTIONS}
    audit = AuditOptions.from_dict(own, job.key("options"))
    column = audit.status
    if column not in frame.columns:
        raise ConfigError(
            f"{job.key('options.status')}: the cells file has no column {column!r} "
            f"(columns: {', '.join(map(str, frame.columns))}); name the column that holds "
            "each cell's suppression status"
        )
    return audit_table(
        table,
        frame,
        rules,
        min_protection=float(opts.get("min_protection", 1.0)),
        status_column=column,
        primary_statuses=audit.primary_statuses,
        secondary_statuses=audit.secondary_statuses,
        published_statuses=audit.published_statuses,
    )


def build_linked_tables(job: Job, opts: dict[str, Any]):
    """The job's linked tables (``tables:``, each over some of ``dimensions:``) as a
    :class:`~sdckit.tables.linked.LinkedTables`, and the rules. ConfigError for a table
    naming an undeclared dimension or for linked tables from ``cells:``."""
    from sdckit.tables.linked import LinkedTables

    spec = job.spec
    if not spec.tables:
        raise ConfigError(
            f"{job.key('tables')} is missing: list the linked tables' dimensions, e.g. "
            "`tables: [[region, gender], [region, age]]`"
        )
    for label, names in spec.tables.items():
        undeclared = [n for n in names if n not in spec.dimensions]
        if undeclared:
            raise ConfigError(
                f"{job.key(f'tables.{label}')}: dimension {undeclared[0]!r} is not declared "
                f"under `dimensions:` (declared: {', '.join(spec.dimensions) or 'none'}); add "
                f"it there (e.g. `{undeclared[0]}: {{}}`) or fix the table's dimensions"
            )
    if spec.cells is not None:
        raise ConfigError(
            f"{job.key('tables')}: linked tables are built from microdata (`input:`), which "
            "gives their common cells one value; `cells:` gives a single table"
        )
    tables = []
    rules: list = []
    for names in spec.tables.values():
        table, rules = build_table(job, opts, names)
        tables.append(table)
    return LinkedTables(tables, list(spec.tables)), rules


def _run_linked(job: Job, opts: dict[str, Any], json_out: Target | None) -> TableJobOutcome:
    """Protect the job's linked tables (``tables:``) consistently and write one cells file
    (a ``table`` column, then every dimension: a dimension the table does not span holds its
    total's code), the report and the JSON summary (the combined figures plus ``tables``,
    one summary per table)."""
    from sdckit.tables.linked import protect_linked

    linked, rules = build_linked_tables(job, opts)
    method = job.spec.method or "optimal"
    method_opts = _method_options(job, opts)
    if method == "cell_key":
        if opts.get("key") is None:
            raise ConfigError(
                f"{job.key('options.key')} is missing: the cell key method needs the record "
                "keys' column of the microdata (e.g. `options: {ptable: p.txt, key: rkey}`)"
            )
        method_opts["cell_keys"] = [_keys_of(job, t, str(opts["key"])) for t in linked.tables]
    protection = protect_linked(
        linked,
        rules,
        method,
        options=method_opts,
        min_protection=float(opts.get("min_protection", 1.0)),
    )
    from sdckit.report.table_report import linked_table_report

    return _write(job, json_out, protection, rules, linked.dimensions, linked, linked_table_report)


def _write_tab(job: Job, path: Any, cells: pd.DataFrame, dimensions: Any) -> tuple[Any, Any]:
    """``output.tab``: the protected table as a tau-Argus cell file, its ``.rda`` beside it
    and a ``.hrc`` per hierarchical dimension (``<stem>.<dimension>.hrc``)
    (:func:`sdckit.core.argus.write_tab`; one table: linked tables are refused before)."""
    from pathlib import Path

    from sdckit.core.argus import table_rda, tree_hrc, write_tab
    from sdckit.core.io import atomic_write, write_text
    from sdckit.jobs.config import _rda_beside

    names = [d.name for d in dimensions]
    totals = {d.name: str(d.codes[0]) for d in dimensions}
    hrc_files: dict[str, str] = {}
    for d in dimensions:
        text = tree_hrc([str(c) for c in d.codes], [int(p) for p in d.parent])
        if text is not None:
            hrc = Path(str(path)).with_name(f"{Path(str(path)).stem}.{d.name}.hrc")
            write_text(hrc, text)
            hrc_files[d.name] = hrc.name
    tab = atomic_write(path, lambda p: write_tab(cells, names, p))
    rda = write_text(_rda_beside(path), table_rda(names, totals, hrc_files))
    return tab, rda


def _for_csv(cells: pd.DataFrame) -> pd.DataFrame:
    """Suppressed values and missing audit bounds as empty fields."""
    return cells.astype(
        {"published": "float64", "audit_lower": "float64", "audit_upper": "float64"}
    )
