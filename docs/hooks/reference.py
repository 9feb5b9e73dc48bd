"""mkdocs hook: the job-file and command-line references, generated from the code at build time.

``reference/job-file.md`` is written from the pydantic specs of :mod:`sdckit.jobs.spec` and the
registries of named methods (privacy models, algorithms and their options, the metric, masking
methods, hierarchy builders, sensitivity rules, table methods, synthesis methods, engines):
every key with its type, default, constraints and the message sdckit gives for an example of a
bad value (obtained by validating that value, not written by hand). ``reference/cli.md`` is
written by walking the click commands of the Typer application (:func:`sdckit.cli.build_app`).

Both pages are added to the site as generated files (``on_files``), so they can never disagree
with the code they describe. The docstrings mkdocstrings renders keep their reST roles
(``:func:`~sdckit.x.f```); ``on_page_content`` shows them as code. :func:`job_file_reference`,
:func:`cli_reference` and :func:`rst_roles_to_code` are also called by ``tests/test_docs.py``.
"""

from __future__ import annotations

import enum
import html
import inspect
import re
import sys
import types
import typing
from collections import abc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

_SRC = Path(__file__).resolve().parents[2] / "src"
if str(_SRC) not in sys.path:  # document this checkout's sdckit, not another installed one
    sys.path.insert(0, str(_SRC))

#: Values tried, in order, to show the message a field gives for a bad value.
_BAD_VALUES: tuple[Any, ...] = ("not-a-value", -1, 0.5, [], {"unknown": 1})


# --------------------------------------------------------------------------- types and values


def _constraints(metadata: Iterable[Any]) -> list[str]:
    """``>= 1``, ``< 1`` ... from pydantic/annotated-types metadata."""
    out = []
    for item in metadata:
        for attr, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                out.append(f"{word} {value:g}" if isinstance(value, float) else f"{word} {value}")
        for sub in getattr(item, "metadata", ()) or ():  # a FieldInfo inside Annotated
            out.extend(_constraints([sub]))
    return out


def type_text(annotation: Any) -> str:
    """A job-file reader's name for a type annotation (``integer (>= 1)``, ``list of text``)."""
    import numpy as np
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        base = type_text(args[0])
        bounds = _constraints(args[1:])
        return f"{base} ({', '.join(bounds)})" if bounds else base
    if origin in (typing.Union, types.UnionType):
        parts = [type_text(a) for a in args if a is not type(None)]
        text = " or ".join(dict.fromkeys(parts))
        return f"{text} or null" if type(None) in args else text
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin is tuple and len(args) == 2 and args[0] is str:
        return "`name: {parameters}` entry"
    if origin is np.ndarray or annotation is np.ndarray:
        return "list"
    if origin in (list, tuple, set, frozenset, abc.Sequence) or annotation in (list, tuple):
        inner = type_text(args[0]) if args else "values"
        if inner.endswith(" entry"):
            return f"list of {inner[: -len(' entry')]} entries"
        return f"list of {inner}"
    if origin in (dict, abc.Mapping) or annotation is dict:
        return f"mapping of {type_text(args[1])}" if len(args) == 2 else "mapping"
    if annotation is typing.Any:
        return "any"
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return "one of " + ", ".join(f"`{m.value}`" for m in annotation)
        if issubclass(annotation, BaseModel):
            return "mapping"
        names = {bool: "true/false", int: "integer", float: "number", str: "text"}
        if annotation in names:
            return names[annotation]
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _default_text(field: Any) -> str:
    from pydantic_core import PydanticUndefined

    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "—"
    if isinstance(value, enum.Enum):
        value = value.value
    if hasattr(value, "model_dump"):
        return "its keys' defaults"
    if value == {} or value == []:
        return "empty"
    return f"`{value}`".replace("True", "true").replace("False", "false")


def bad_value_message(cls: type, name: str, where: str) -> str:
    """The message sdckit gives when ``name`` of spec ``cls`` has a bad value: the first of
    :data:`_BAD_VALUES` (after a value just past the field's bound) that the field refuses,
    validated by pydantic and worded by :func:`sdckit.core.spec.describe_validation_error`
    as the job loader words it; "" when the field takes every value tried."""
    from pydantic import ValidationError

    from sdckit.core.spec import _validation_error, describe_validation_error
    from sdckit.errors import ParameterError

    field = cls.model_fields[name]
    candidates: list[Any] = []
    for bound in _constraints(field.metadata) + _constraints(_nested_metadata(field.annotation)):
        word, value = bound.split(" ", 1)
        number = float(value)
        step = 1 if number.is_integer() else 0.5
        below = {">=": number - step, ">": number, "<=": number + step, "<": number}[word]
        candidates.append(int(below) if float(below).is_integer() else below)
    for bad in [*candidates, *_BAD_VALUES]:
        try:
            cls(**{name: bad})
            continue
        except ParameterError as exc:
            caught = _validation_error(exc)
        except Exception:  # noqa: BLE001 - a check that needs the other fields
            continue
        if caught is None:
            continue
        mine = [e for e in caught.errors(include_url=False) if e["loc"][:1] == (name,)]
        if not mine:
            continue
        details = [_error_details(err) for err in mine]
        rebuilt = ValidationError.from_exception_data(caught.title, details)  # type: ignore[arg-type]
        return describe_validation_error(rebuilt, where, key_style=True)
    return ""


def _error_details(err: dict[str, Any]) -> dict[str, Any]:
    """One pydantic error as the details that rebuild it (its own type where pydantic knows
    it, else a custom error with the same type name and message)."""
    from pydantic import ValidationError
    from pydantic_core import PydanticCustomError

    details = {"type": err["type"], "loc": err["loc"], "input": err.get("input")}
    if err.get("ctx"):
        details["ctx"] = err["ctx"]
    try:
        ValidationError.from_exception_data("check", [details])  # type: ignore[list-item]
    except Exception:  # noqa: BLE001 - not a type pydantic knows: keep its words
        template = str(err["msg"]).replace("{", "{{").replace("}", "}}")
        details["type"] = PydanticCustomError(err["type"], template)
        details.pop("ctx", None)
    return details


def _nested_metadata(annotation: Any) -> list[Any]:
    out: list[Any] = []
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Annotated:
            out.extend(typing.get_args(arg)[1:])
        out.extend(_nested_metadata(arg))
    return out


# --------------------------------------------------------------------------- docstrings


def _summary(obj: Any) -> str:
    """The first paragraph of ``obj``'s docstring, on one line."""
    doc = inspect.getdoc(obj) or ""
    return _md(doc.split("\n\n", 1)[0])


def _parameter_notes(cls: type) -> dict[str, str]:
    """Descriptions of parameters from a numpydoc ``Parameters`` section of the docstring."""
    doc = inspect.getdoc(cls) or ""
    m = re.search(r"^Parameters\n-+\n(.*?)(?:\n\n[A-Z][a-z ]+\n-+\n|\Z)", doc, re.S | re.M)
    if not m:
        return {}
    notes: dict[str, str] = {}
    keys: list[str] = []
    for line in m.group(1).splitlines():
        head = re.fullmatch(r"\**(\w+(?:, \w+)*)(?: ?:.*)?", line)
        if head:  # "name : type", "a, b : type", "name:", "**options" or a bare "name"
            keys = re.findall(r"\w+", head.group(1))
            notes.update({key: "" for key in keys})
        elif line.strip() and not line.startswith(" "):
            break  # the section's end: text after it, not indented
        elif line.strip():
            for key in keys:
                notes[key] = (notes[key] + " " + line.strip()).strip()
    return notes


def _md(text: str) -> str:
    """Docstring text on one line, its reST roles and literals made markdown."""
    text = re.sub(r":\w+:`~?(?:[\w.]*\.)?([^`]+)`", r"`\1`", str(text))
    return " ".join(text.replace("``", "`").split())


def _cell(text: str) -> str:
    """Docstring text safe in a markdown table cell."""
    return _md(text).replace("|", "\\|")


def _code_cell(text: str) -> str:
    """A message as code in a table cell (it may hold backticks and bars)."""
    if not text:
        return ""
    return "<code>" + html.escape(" ".join(text.split())).replace("|", "&#124;") + "</code>"


# --------------------------------------------------------------------------- the job file


def _fields_table(cls: type, where: str, skip: Iterable[str] = ()) -> list[str]:
    notes = _parameter_notes(cls)
    rows = [
        "| key | type | default | meaning | a bad value gives |",
        "|---|---|---|---|---|",
    ]
    for name, field in cls.model_fields.items():
        if name in skip:
            continue
        meaning = field.description or notes.get(name, "")
        message = bad_value_message(cls, name, where)
        rows.append(
            f"| `{name}` | {_cell(type_text(_annotation(field)))} | {_cell(_default_text(field))}"
            f" | {_cell(meaning)} | {_code_cell(message)} |"
        )
    if len(rows) == 2:
        return ["No parameters."]
    return rows


def _annotation(field: Any) -> Any:
    if field.metadata:
        return typing.Annotated[(field.annotation, *field.metadata)]  # type: ignore[misc]
    return field.annotation


def _entry_section(
    title: str,
    names: Iterable[str],
    spec_of: Callable[[str], type],
    where: Callable[[str], str],
    traits: Callable[[str], str] | None = None,
) -> list[str]:
    lines = [f"## {title}", ""]
    for name in names:
        cls = spec_of(name)
        lines += [f"### `{name}`", "", _summary(cls), ""]
        if traits is not None and traits(name):
            lines += [traits(name), ""]
        lines += _fields_table(cls, where(name)) + [""]
    return lines


def _traits_text(traits: Any, skip: Iterable[str] = ()) -> str:
    import dataclasses

    if not dataclasses.is_dataclass(traits):
        return ""
    parts = []
    for f in dataclasses.fields(traits):
        if f.name in skip:
            continue
        value = getattr(traits, f.name)
        if isinstance(value, (frozenset, set)):
            value = sorted(value)
        if isinstance(value, (tuple, list)):
            value = ", ".join(str(v) for v in value) or "none"
        if isinstance(value, bool) or value is None:
            value = {True: "yes", False: "no", None: "—"}[value]
        parts.append(f"{f.name}: {value}")
    return "Traits — " + "; ".join(parts) + "."


def job_file_reference() -> str:
    """The markdown of ``reference/job-file.md``."""
    from sdckit.algorithms.options import _OPTIONS
    from sdckit.algorithms.registry import ALGORITHMS
    from sdckit.core.hierarchy_registry import HIERARCHY_BUILDERS
    from sdckit.jobs import spec
    from sdckit.jobs.source import ENGINES
    from sdckit.masking.pipeline import METHODS
    from sdckit.models import MODELS
    from sdckit.tables.options import OPTIONS as TABLE_OPTIONS
    from sdckit.tables.registry import TABLE_METHODS
    from sdckit.tables.rules import RULES
    from sdckit.utility.generalization import MetricSpec

    top = "'job.yaml': "
    lines = [
        "# Job-file reference",
        "",
        "Generated from the code when the site is built (`docs/hooks/reference.py`): the "
        "sections are the pydantic specs of `sdckit.jobs.spec`, the entries the registries "
        "of named methods. A job file is YAML (or TOML). Every value is checked when the "
        "file is read; a bad one stops the command with exit code 2 and a message naming "
        "the file and the key path, as in the last column (the message sdckit gives for an "
        "example of a bad value). Unknown keys are refused the same way, with the allowed "
        "keys and the closest one.",
        "",
        "## Top-level keys",
        "",
        _summary(spec.JobSpec),
        "",
        *_fields_table(spec.JobSpec, top),
        "",
    ]
    sections = [
        ("`input:` (and `cells:` of a table job)", spec.InputSection, "'job.yaml': input"),
        ("`output:`", spec.OutputSection, "'job.yaml': output"),
        (
            "`attributes:` — one entry per column",
            spec.AttributeSection,
            "'job.yaml': attributes.age",
        ),
        (
            "`pseudonymize:` of an identifying attribute",
            spec.PseudonymizeSection,
            "'job.yaml': attributes.name.pseudonymize",
        ),
        ("`spark:`", spec.SparkSection, "'job.yaml': spark"),
        (
            "`dimensions:` — one entry per spanning variable of a table job",
            spec.DimensionSection,
            "'job.yaml': dimensions.region",
        ),
        ("`metric:`", MetricSpec, "'job.yaml': metric"),
    ]
    for title, cls, where in sections:
        lines += [f"## {title}", "", _summary(cls), "", *_fields_table(cls, where), ""]

    lines += _entry_section(
        "Privacy models (`models:` entries)",
        MODELS.names(),
        MODELS.load,
        lambda n: f"'job.yaml': models[0].{n}",
        lambda n: _traits_text(MODELS.traits(n)),
    )
    lines += [
        "## Algorithms (`algorithm:`, with their `options:`)",
        "",
    ]
    for name in ALGORITHMS.names():
        lines += [
            f"### `{name}`",
            "",
            _summary(ALGORITHMS.load(name)),
            "",
            _traits_text(ALGORITHMS.traits(name)),
            "",
        ]
        if name in _OPTIONS:
            lines += [_summary(_OPTIONS[name]), ""]
            lines += _fields_table(_OPTIONS[name], "'job.yaml': options") + [""]
    lines += _entry_section(
        "Masking methods (`methods:` entries of a mask job)",
        METHODS.names(),
        METHODS.load,
        lambda n: f"'job.yaml': methods[0].{n}",
        lambda n: (
            _traits_text(METHODS.traits(n))
            + (
                f" Former names: {', '.join(METHODS.entry(n).aliases)}."
                if METHODS.entry(n).aliases
                else ""
            )
        ),
    )
    lines += _entry_section(
        "Hierarchy builders (`hierarchy: {name: {...}}`)",
        HIERARCHY_BUILDERS.names(),
        HIERARCHY_BUILDERS.load,
        lambda n: f"'job.yaml': attributes.age.hierarchy.{n}",
    )
    lines += _entry_section(
        "Sensitivity rules (`rules:` entries of a table job)",
        [n for n in spec.RULE_NAMES if n in RULES],
        RULES.__getitem__,
        lambda n: f"'job.yaml': rules[0].{n}",
    )
    lines += [
        "## Table methods (`method:` of a table job, with their `options:`)",
        "",
        "Each method reads the `options:` below (validated by its spec in "
        "`sdckit.tables.options`), beside those building the table (`options:` by job kind, "
        "below); an option the method does not read is refused with the ones it takes.",
        "",
    ]
    from sdckit.tables.options import AuditOptions

    for name in (*TABLE_METHODS.names(), "audit"):
        options = TABLE_OPTIONS.get(name, AuditOptions)
        traits = _traits_text(TABLE_METHODS.traits(name)) if name in TABLE_METHODS else ""
        lines += [
            f"### `{name}`",
            "",
            _summary(options),
            "",
            traits,
            "",
            *_fields_table(options, "'job.yaml': options"),
            "",
        ]
    lines += ["", *_synthesis_methods()]
    lines += ["", *_job_options()]
    lines += ["", "## Engines (`engine:`)", "", "| engine | traits |", "|---|---|"]
    for name in ENGINES.names():
        lines.append(f"| `{name}` | {_cell(_traits_text(ENGINES.traits(name)))} |")
    return "\n".join(lines) + "\n"


#: Parameters a synthesis method needs beside the one tried with a bad value (so that the
#: message is about that one): the budget of the DP methods, partial's classes, alpha_beta's
#: probabilities.
_SYNTHESIS_CONTEXT: dict[str, dict[str, Any]] = {
    "partial": {"quasi_identifiers": ["age"]},
    "alpha_beta": {"alpha": 0.5, "beta": 0.01},
}


def _synthesis_methods() -> list[str]:
    """One section per synthesis method: its parameters (the signature of its synthesizer
    class, :func:`sdckit.synthesis.api.method_parameters`) with their type, default, the
    class docstring's description and the message a bad value gets from the job's check
    (:func:`sdckit.jobs.synthesize.check_parameters`)."""
    from sdckit.synthesis.api import METHODS, method_parameters

    lines = [
        "## Synthesis methods (`method:` of a synthesize job, with their `options:`)",
        "",
        "A method's parameters are the keyword parameters of its synthesizer class (the "
        "signature and the class docstring, read when the site is built), given under "
        "`options:` beside the job's own (`options:` by job kind, below); an unknown one is "
        "refused with the ones the method takes. The budget of a differentially private "
        "method is the job's `epsilon:` and `delta:`.",
        "",
    ]
    for name in METHODS.names():
        traits = METHODS.traits(name)
        cls = _load(traits.synthesizer)
        notes = _parameter_notes(cls)
        spec = _load(cls.OPTIONS_SPEC) if hasattr(cls, "OPTIONS_SPEC") else None
        spec_notes = _parameter_notes(spec) if spec is not None else {}
        hints = _hints(cls)
        lines += [
            f"### `{name}`",
            "",
            f"{_cell(traits.description)}: `{traits.synthesizer.replace(':', '.')}`.",
            "",
            _traits_text(traits, skip=("description", "synthesizer")),
            "",
            "| key | type | default | meaning | a bad value gives |",
            "|---|---|---|---|---|",
        ]
        for key, param in method_parameters(name).items():
            annotation = hints.get(key, param.annotation)
            kind = annotation if isinstance(annotation, str) else type_text(annotation)
            default = param.default
            shown = (
                "required"
                if default is inspect.Parameter.empty
                else "—"
                if default is None
                else "empty"
                if default in ((), [], {})
                else f"`{default}`".replace("True", "true").replace("False", "false")
            )
            meaning = notes.get(key) or spec_notes.get(key, "")
            if _python_only(annotation):
                meaning = f"Python only (an object a job file cannot write). {meaning}"
            lines.append(
                f"| `{key}` | {_cell(kind)} | {_cell(shown)} | {_cell(meaning)} | "
                f"{_code_cell(synthesis_bad_value_message(name, key))} |"
            )
        lines.append("")
    return lines


def _python_only(annotation: Any) -> bool:
    """Whether a parameter takes only sdckit objects (an accountant), never YAML values."""
    args = (
        typing.get_args(annotation)
        if typing.get_origin(annotation)
        in (
            typing.Union,
            types.UnionType,
        )
        else (annotation,)
    )
    kinds = [a for a in args if a is not type(None)]
    return bool(kinds) and all(
        isinstance(a, type) and a.__module__.startswith("sdckit.") for a in kinds
    )


def _load(path: str) -> Any:
    import importlib

    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of ``cls.__init__`` ({} where a name does not resolve: the
    signature's text is shown then)."""
    try:
        return typing.get_type_hints(cls.__init__)  # type: ignore[misc]
    except Exception:  # noqa: BLE001 - a name imported only for type checking
        return {}


def synthesis_bad_value_message(method: str, name: str) -> str:
    """The message a synthesize job gives when parameter ``name`` of ``method`` has a bad
    value: the first of :data:`_BAD_VALUES` that the job's check refuses with a message
    naming the parameter; "" when it takes every value tried."""
    from sdckit.errors import ParameterError
    from sdckit.jobs.synthesize import check_parameters
    from sdckit.synthesis.api import METHODS

    dp = METHODS.traits(method).dp
    budget = {"epsilon": None if name == "rho" else 1.0, "delta": 1e-6} if dp else {}
    for bad in _BAD_VALUES:
        parameters = {**_SYNTHESIS_CONTEXT.get(method, {}), name: bad}
        try:
            check_parameters(method, parameters, "'job.yaml': options", **budget)
        except ParameterError as exc:
            if re.search(rf"\b{re.escape(name)}\b", str(exc)):
                return str(exc)
        except Exception:  # noqa: BLE001 - not a check of this value
            continue
    return ""


def _job_options() -> list[str]:
    """``options:`` by job kind, from the option keys each job runner accepts."""
    from sdckit.jobs import mask, synthesize, table

    def keys(names: Iterable[str]) -> str:
        return ", ".join(f"`{n}`" for n in names)

    return [
        "## `options:` by job kind",
        "",
        "| job | keys |",
        "|---|---|",
        "| anonymize | the options of its `algorithm:` (above) |",
        f"| mask | {keys(mask._OPTIONS)} |",
        f"| synthesize | {keys(synthesize._JOB_OPTIONS)}; any other key is a parameter of "
        "the `method:` |",
        f"| table | building the table: {keys(table._BUILD_OPTIONS)}; the method's (above) |",
    ]


# --------------------------------------------------------------------------- the command line


def cli_reference() -> str:
    """The markdown of ``reference/cli.md``: every command of :func:`sdckit.cli.build_app`,
    its usage, help text and parameters, read from the click commands Typer builds."""
    import typer.main

    from sdckit.cli import build_app

    root = typer.main.get_command(build_app())
    root_ctx = root.make_context("sdckit", ["--help"], resilient_parsing=True)
    lines = [
        "# Command-line reference",
        "",
        "Generated from the Typer application when the site is built "
        "(`docs/hooks/reference.py`). Exit codes: 0 success; 2 bad input or usage (the "
        "message names the file, column, value or key and how to fix it; nothing is "
        "written); 1 internal error (a bug).",
        "",
        "```text",
        root.get_usage(root_ctx),
        "```",
        "",
        root.help or "",
        "",
        *_params_table(root, root_ctx),
        "",
    ]
    for name in sorted(root.commands):  # type: ignore[attr-defined]
        command = root.commands[name]  # type: ignore[attr-defined]
        ctx = command.make_context(name, [], parent=root_ctx, resilient_parsing=True)
        lines += [
            f"## `sdckit {name}`",
            "",
            "```text",
            command.get_usage(ctx),
            "```",
            "",
            (command.help or "").replace("\b\n", ""),
            "",
            *_params_table(command, ctx),
            "",
        ]
        if command.epilog:
            lines += [command.epilog, ""]
    return "\n".join(lines) + "\n"


def _params_table(command: Any, ctx: Any) -> list[str]:
    rows = ["| parameter | meaning |", "|---|---|"]
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            if param.param_type_name != "argument":
                continue
            record = (param.human_readable_name, "")
        names, text = record
        kind = "argument, required" if param.param_type_name == "argument" else ""
        text = f"({kind}) {text}" if kind else text
        rows.append(f"| `{_cell(names)}` | {_cell(text)} |")
    return rows if len(rows) > 2 else []


# --------------------------------------------------------------------------- mkdocs hook

#: Generated page -> the function writing it.
PAGES: dict[str, Callable[[], str]] = {
    "reference/job-file.md": job_file_reference,
    "reference/cli.md": cli_reference,
}


#: A reST cross-reference role as it reaches the page's HTML (``:func:`~a.b``` -> the
#: role's name and its code span).
_ROLE = re.compile(
    r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):<code>(~?)([^<]+)</code>"
)


def rst_roles_to_code(html_text: str) -> str:
    """``:func:`~sdckit.x.f``` in a docstring, rendered by mkdocstrings as
    ``:func:<code>~sdckit.x.f</code>``, becomes ``<code>f</code>`` (the last name, as reST's
    ``~`` asks) or ``<code>sdckit.x.f</code>``."""

    def code(m: re.Match[str]) -> str:
        target = m.group(2)
        return f"<code>{target.rsplit('.', 1)[-1] if m.group(1) else target}</code>"

    return _ROLE.sub(code, html_text)


def on_page_content(html_text: str, page: Any, config: Any, files: Any) -> str:
    """The docstrings' reST roles shown as code (mkdocs ``on_page_content`` event)."""
    return rst_roles_to_code(html_text)


def on_files(files: Any, config: Any) -> Any:
    """Add the generated reference pages to the site (mkdocs ``on_files`` event)."""
    from mkdocs.structure.files import File

    for uri, make in PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files
