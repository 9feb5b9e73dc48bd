"""Typed, frozen parameter objects: the one way a setting enters sdckit.

Every privacy model, masking method, utility metric and job is a :class:`Spec`: a frozen
pydantic model whose fields declare each parameter once, with its type, bounds and default.
The same object is built from a Python call (``KAnonymity(5)``, ``Noise(columns=["a"],
alpha=0.2)``) and from a job file's entry (``- k_anonymity: {k: 5}``), is validated once there,
and is passed inward already parsed; :meth:`Spec.to_dict` gives back the job-file form, so a
job file is the serialization of these objects (the design of pandera's schema objects and of
Tumult Analytics' frozen query/budget objects; scikit-learn validates its estimators'
parameters against declared constraints in the same spirit).

Whatever the interface, a bad parameter raises :class:`~sdckit.errors.ParameterError`
naming the parameter (``k-anonymity: parameter 'k' must be >= 1, got 0``), or, for a job
file, the key path (``'job.yaml': models[0].k_anonymity.k must be >= 1, got 0``).

The numeric field types below are strict where pydantic's lax mode is too lax for SDC:
``True`` is not the integer 1, ``"5"`` is not a number, ``2.5`` is not an integer and
``NaN``/``inf`` are no parameter value.

Examples
--------
>>> from sdckit.models import KAnonymity
>>> KAnonymity(5).to_entry()
{'k_anonymity': {'k': 5}}
>>> KAnonymity.from_dict({"k": 5}) == KAnonymity(k=5)
True
>>> KAnonymity(0)
Traceback (most recent call last):
...
sdckit.errors.ParameterError: k-anonymity: parameter 'k' must be >= 1, got 0
"""

from __future__ import annotations

import difflib
import math
import re
import sys
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from pathlib import PurePath
from typing import Annotated, Any, ClassVar, Self

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from sdckit.errors import ConfigError, ParameterError, short_repr

__all__ = [
    "Spec",
    "Integer",
    "Number",
    "Boolean",
    "ColumnList",
    "ColumnName",
    "NonEmptyList",
    "NonEmptyMapping",
    "describe_validation_error",
    "parameter_error",
    "did_you_mean",
    "named_entry",
    "parse_entry",
    "json_ready",
]


def json_ready(value: Any, *, keep_nan: bool = False) -> Any:
    """Convert a result to plain JSON values: the one converter of every JSON sdckit writes.

    Mappings become dicts with text keys; lists, tuples, sets and numpy arrays become lists;
    a pandas DataFrame becomes its list of records; numpy scalars become ``bool``/``int``/
    ``float``; a path becomes its text; an enum its value. NaN and infinities become ``None``
    (JSON has neither) unless ``keep_nan`` is set: parsed specs and model results keep them as
    floats in memory, and are converted again, NaN to ``None``, when written.
    """
    if isinstance(value, Mapping):
        return {str(k): json_ready(v, keep_nan=keep_nan) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_ready(v, keep_nan=keep_nan) for v in value]
    if isinstance(value, np.ndarray):
        return [json_ready(v, keep_nan=keep_nan) for v in value.tolist()]
    pd = sys.modules.get("pandas")  # a DataFrame exists only once pandas is imported
    if pd is not None and isinstance(value, pd.DataFrame):
        return [json_ready(r, keep_nan=keep_nan) for r in value.to_dict(orient="records")]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return None if not keep_nan and (math.isnan(f) or math.isinf(f)) else f
    if isinstance(value, PurePath):
        return str(value)
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return value


def did_you_mean(word: Any, choices: Sequence[Any]) -> str:
    """``"; did you mean 'x'?"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


# -- strict scalar types ---------------------------------------------------------------------
def _integer(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError("must be an integer")
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        return int(float(value))
    raise ValueError("must be an integer")


def _number(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise ValueError("must be a number")
    if not math.isfinite(float(value)):
        raise ValueError("must be a finite number")
    return float(value) if not isinstance(value, Integral) else int(value)


def _columns(value: Any) -> Any:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and value and all(isinstance(c, str) for c in value):
        return list(value)
    raise ValueError("must be a list of column names, e.g. [a, b]")


def _column(value: Any) -> Any:
    if isinstance(value, str) and value:
        return value
    raise ValueError("must be one column name")


def _boolean(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError("must be true or false")


def _non_empty_list(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and value:
        return list(value)
    raise ValueError("must be a non-empty list")


def _non_empty_mapping(value: Any) -> Any:
    if isinstance(value, Mapping) and value:
        return dict(value)
    raise ValueError("must be a non-empty mapping {key: value}")


#: true or false (also a numpy bool); never 1, "yes" or "true".
Boolean = Annotated[bool, BeforeValidator(_boolean)]
#: A non-empty list (a tuple is taken as a list); its items are checked by the method.
NonEmptyList = Annotated[list[Any], BeforeValidator(_non_empty_list)]
#: A non-empty mapping ``{key: value}``; its entries are checked by the method.
NonEmptyMapping = Annotated[dict[Any, Any], BeforeValidator(_non_empty_mapping)]
#: An integer (also a numpy integer or an integral float such as ``5.0``); never a bool.
Integer = Annotated[int, BeforeValidator(_integer)]
#: A finite real number; never a bool or text.
Number = Annotated[float, BeforeValidator(_number)]
#: A non-empty list of column names (one name is taken as a list of one).
ColumnList = Annotated[list[str], BeforeValidator(_columns)]
#: One column name.
ColumnName = Annotated[str, BeforeValidator(_column)]


# -- messages ----------------------------------------------------------------------------------
_BOUND_WORDS = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}


def _path(loc: Sequence[str]) -> str:
    """``("models", "0", "k")`` -> ``models[0].k``."""
    return "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc).lstrip(".")


def _choices(err: Mapping[str, Any]) -> list[str]:
    """The allowed values named by a literal/enum error."""
    return re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))


def _error_text(err: Mapping[str, Any], allowed: Sequence[str]) -> tuple[str, bool]:
    """One pydantic error in words, and whether the offending value should be echoed."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return "is required", False
    if kind == "extra_forbidden":
        return "is not a parameter here; allowed: " + ", ".join(allowed), False
    if kind in _BOUND_WORDS:
        word, key = _BOUND_WORDS[kind]
        bound = ctx.get(key)
        return f"must be {word} {bound:g}" if isinstance(bound, Real) else err["msg"], True
    if kind in ("literal_error", "enum"):
        return f"must be one of {', '.join(_choices(err))}", True
    if kind == "value_error":  # a validator's own words; the value is echoed after "must"
        msg = str(ctx.get("error", err["msg"]))  # unless they already name it ("got ...")
        return msg, msg.startswith("must") and not re.search(r"\bgot\b", msg)
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "must be a mapping of keys", True
    if kind in ("too_short", "too_long"):
        return err["msg"].lower(), False
    if kind in ("bool_type", "bool_parsing"):
        return "must be true or false", True
    if kind.endswith("_type") or kind.endswith("_parsing"):
        msg = str(err["msg"]).split(",")[0]
        return msg.replace("Input should be", "must be"), True
    return err["msg"], True


#: A decimal number as text: sign, digits, fraction, exponent (what ``float()`` reads, less
#: ``inf``/``nan`` and digit separators).
_DECIMAL = re.compile(r"([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?)(\d+))?")
#: What YAML 1.1 reads as a decimal number (PyYAML's resolver patterns for int and float).
_YAML_NUMBER = re.compile(
    r"[-+]?(?:0|[1-9][0-9_]*)|[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?"
    r"|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
)
_NUMBER_ERRORS = ("float_type", "float_parsing", "int_type", "int_parsing", "int_from_float")
_NUMBER_WORDS = ("must be a number", "must be an integer")


def _yaml_float(text: str, number: float) -> str:
    """``number`` (read from ``text``) as YAML 1.1 reads a float: a dot in the mantissa and a
    signed exponent (the YAML 1.1 float tag's pattern, yaml.org/type/float.html, which PyYAML
    implements: ``1e-9`` is text there, ``1.0e-9`` a number)."""
    m = _DECIMAL.fullmatch(text) or _DECIMAL.fullmatch(repr(number))
    assert m is not None  # repr of a finite float always matches
    sign, whole, frac, exp_sign, exp = m.groups()
    out = f"{sign}{whole or '0'}.{frac or '0'}"
    return out + (f"e{exp_sign or '+'}{exp}" if exp else "")


def number_text_hint(value: Any, *, integer: bool) -> str:
    """For a number field given text that reads as a number (``'1e-9'``, a quoted ``'0.5'``),
    how to write it so a job file's YAML reads a number; ``""`` for any other value.

    YAML 1.1 (PyYAML) reads ``1e-9`` as text: its floats need a dot and a signed exponent,
    so the hint gives that form (``1.0e-9``); an integer field gets the integer (``1e1``:
    ``10``); text that YAML reads as a number was quoted.
    """
    if not isinstance(value, str):
        return ""
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    if integer and not number.is_integer():
        return ""
    if _YAML_NUMBER.fullmatch(text):  # YAML reads it as a number: it was quoted
        return f" (text, not a number: write {text} without quotes)"
    written = str(int(number)) if integer else _yaml_float(text, number)
    return (
        f" (text, not a number: YAML 1.1 reads a number without a dot, or with an unsigned "
        f"exponent, as text; write {written})"
    )


def describe_validation_error(exc: ValidationError, where: str, *, key_style: bool) -> str:
    """The first error of ``exc`` as one sdckit message.

    ``key_style``: name the parameter as a key path under ``where`` (a job file:
    ``'job.yaml': models[0].k_anonymity.k must be >= 1``), otherwise as a parameter of
    ``where`` (Python: ``k-anonymity: parameter 'k' must be >= 1``). An unknown name reads
    ``<where>: unknown parameter 'kk'; allowed: k; did you mean 'k'?`` either way.
    """
    return _describe(exc, where, key_style=key_style)[0]


def parameter_error(exc: ValidationError, where: str, *, key_style: bool) -> ParameterError:
    """The :class:`ParameterError` of ``exc``'s first error: the message of
    :func:`describe_validation_error`, with ``parameter`` (the field's name) and, for a key
    path (``key_style``), ``key``: the path below the file (``models[0].k_anonymity.k``;
    ``where`` is ``"<source>: <key path>"`` or ``"<source>: "``, as the job loader words it).
    """
    message, loc = _describe(exc, where, key_style=key_style)
    parameter = loc[-1] if loc and not loc[-1].isdigit() else None
    key = None
    if key_style:
        prefix = where.rsplit(": ", 1)[-1] if ": " in where else where
        below = _path(loc)
        if prefix and below and not below.startswith("["):
            below = "." + below
        key = (prefix + below) or None
    return ParameterError(message, key=key, parameter=parameter)


def _describe(exc: ValidationError, where: str, *, key_style: bool) -> tuple[str, list[str]]:
    """The message of :func:`describe_validation_error` and the location below ``where``
    of the error it words (field names and list indices)."""
    errors = exc.errors(include_url=False)
    # an unknown name is reported first: it is usually why a required one is missing
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    fields, noun, notes = _SPEC_FIELDS.get(exc.title, ((), "parameter", {}))
    allowed = list(fields)
    loc = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
    if loc and loc[-1] == "[key]":
        loc = loc[:-1]
    path = _path(loc)
    if not (key_style and where.endswith(": ")) and path:  # "'job.yaml': seed" at the top
        path = "." + path
    if key_style and where.endswith(": ") and not path:
        where = where[:-2]
    if err["type"] == "extra_forbidden" and loc:
        parent = _path(loc[:-1]) if key_style else ""
        if parent and not where.endswith(": "):
            parent = "." + parent
        if not parent and where.endswith(": "):
            where = where[:-2]
        return (
            f"{where}{parent}: unknown {noun} {loc[-1]!r}; allowed: "
            f"{', '.join(allowed) or 'none'}{did_you_mean(loc[-1], allowed)}"
        ), loc
    inner = _validation_error((err.get("ctx") or {}).get("error"))
    if inner is not None and path:  # a nested spec's own error
        if key_style:
            message, below = _describe(inner, where + path, key_style=True)
        else:
            message, below = _describe(inner, f"{where}: {path.lstrip('.')}", key_style=True)
        return message, loc + below
    text, echo = _error_text(err, allowed)
    if text.startswith("Value error, "):
        text = text[len("Value error, ") :]
    got = f", got {short_repr(err.get('input'))}" if echo and loc else ""
    if err["type"] in ("literal_error", "enum") and isinstance(err.get("input"), str):
        got += did_you_mean(err["input"], _choices(err))
    if got and (err["type"] in _NUMBER_ERRORS or text.startswith(_NUMBER_WORDS)):
        integer = err["type"].startswith("int") or text.startswith("must be an integer")
        got += number_text_hint(err.get("input"), integer=integer)
    note = notes.get(loc[0]) if len(loc) == 1 else None
    if note and err["type"] != "missing":
        got += f" ({note})"
    if key_style:
        if not path:
            return f"{where}: {text}{got}", loc
        sep = " " if text.startswith(("must", "is ", "needs")) else ": "
        return f"{where}{path}{sep}{text}{got}", loc
    if path:
        return f"{where}: {noun} {path.lstrip('.')!r} {text}{got}", loc
    return f"{where}: {text}{got}", loc


#: Class title -> (field names, what a field is called, field descriptions), for "allowed:
#: ..." and the meaning of a parameter in messages; filled as specs are defined.
_SPEC_FIELDS: dict[str, tuple[tuple[str, ...], str, dict[str, str]]] = {}


def _invalid(err: ParameterError, validation_error: ValidationError) -> ParameterError:
    """The ParameterError of a spec's failed validation (keeps pydantic's error, so that a
    caller naming key paths -- :meth:`Spec.from_dict`, an enclosing spec -- can word it)."""
    err.validation_error = validation_error  # type: ignore[attr-defined]
    return err


def _validation_error(exc: BaseException | None) -> ValidationError | None:
    return getattr(exc, "validation_error", None) if isinstance(exc, ParameterError) else None


class Spec(BaseModel):
    """A frozen, validated parameter object (privacy model, masking method, metric, job part).

    Subclasses declare their parameters as annotated fields. Positional arguments fill the
    fields in declaration order (``KAnonymity(5)``); keywords work as usual. A bad value
    raises :class:`~sdckit.errors.ParameterError`. ``spec_name`` is the name of the entry in
    a job file (``k_anonymity``) and ``label`` the name used in messages (``k-anonymity``).
    Engine state a spec computes later (e.g. a prepared privacy model's overall
    distribution) lives in private attributes (``_name``), never in fields.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        arbitrary_types_allowed=True,
        defer_build=True,
        validate_default=False,
        hide_input_in_errors=False,
    )

    #: The name of the job-file entry (``k_anonymity``); "" for parts that are no entry.
    spec_name: ClassVar[str] = ""
    #: Other names a job file may use for the entry.
    spec_aliases: ClassVar[tuple[str, ...]] = ()
    #: The name used in messages; defaults to ``spec_name``.
    spec_label: ClassVar[str] = ""
    #: What one field is called in messages (``parameter``; algorithm options: ``option``).
    spec_noun: ClassVar[str] = "parameter"

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        notes = {n: f.description for n, f in cls.model_fields.items() if f.description}
        inherited = {n for base in cls.__bases__ for n in getattr(base, "model_fields", {})}
        own = [n for n in cls.model_fields if n not in inherited]
        names = tuple(own + [n for n in cls.model_fields if n in inherited])
        _SPEC_FIELDS[cls.__name__] = (names, cls.spec_noun, notes)

    @classmethod
    def positional_names(cls) -> tuple[str, ...]:
        """The parameters positional arguments fill, in order (default: every field)."""
        return tuple(cls.model_fields)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = type(self).positional_names()
        if len(args) > len(names):
            raise ParameterError(
                f"{self._label()}: takes at most {len(names)} positional parameters "
                f"({', '.join(names)}), got {len(args)}"
            )
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise ParameterError(f"{self._label()}: parameter {name!r} given twice")
            kwargs[name] = value
        try:
            super().__init__(**kwargs)
        except ValidationError as exc:
            raise _invalid(parameter_error(exc, self._label(), key_style=False), exc) from None

    @classmethod
    def _label(cls) -> str:
        return cls.spec_label or cls.spec_name or cls.__name__

    @classmethod
    def from_dict(cls, params: Mapping[str, Any] | None, where: str | None = None) -> Self:
        """Build from a job-file mapping; errors name ``where`` + the key (``models[0].k``).

        ``where`` is the key path of the mapping (e.g. ``"'job.yaml': models[0].k_anonymity"``);
        without it messages name the spec as a Python call would.
        """
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise ParameterError(
                f"{where or cls._label()} must be a mapping of parameters, got {short_repr(params)}"
            )
        bad_keys = [k for k in params if not isinstance(k, str)]
        if bad_keys:
            raise ParameterError(
                f"{where or cls._label()}: parameter names are text, got {short_repr(bad_keys[0])}"
            )
        try:
            return cls(**params)
        except ParameterError as exc:
            inner = _validation_error(exc)
            if where is None or inner is None:
                raise
            raise parameter_error(inner, where, key_style=True) from None

    def to_dict(self) -> dict[str, Any]:
        """The parameters as plain JSON-ready values (the job-file form of the entry's body).

        Fields holding data rather than settings (a population table, a hierarchy object)
        are given by a short description, since they are not settings one can write down.
        """
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            out[name] = _plain(getattr(self, name))
        return json_ready(out, keep_nan=True)

    def to_entry(self) -> dict[str, Any]:
        """``{spec_name: to_dict()}``: the entry as a job file lists it."""
        return {self.spec_name: self.to_dict()}

    def with_params(self, **changes: Any) -> Self:
        """A copy with some parameters changed (validated like a new object)."""
        params = {name: getattr(self, name) for name in type(self).model_fields}
        params.update(changes)
        return type(self)(**params)


def _plain(value: Any) -> Any:
    """A field value as something JSON can hold."""
    if isinstance(value, Spec):
        return value.to_dict()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (np.generic, np.ndarray)):
        return json_ready(value, keep_nan=True)
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"<{type(value).__name__} {' x '.join(map(str, shape))}>"
    return f"<{type(value).__name__}>"


class EntryError(ValueError):
    """A malformed named entry; ``suffix`` is the key below the entry that is at fault."""

    def __init__(self, text: str, suffix: str = "") -> None:
        super().__init__(f"{suffix} {text}".strip() if suffix else text)
        self.text = text
        self.suffix = suffix


def parse_entry(item: Any, known: Sequence[str] | None, example: str) -> tuple[str, Any]:
    """``{name: {params}}`` (or a bare ``name``, or a ``(name, params)`` pair) ->
    ``(name, params)``; :class:`EntryError` (a ValueError) with the fix otherwise (``known``:
    the allowed names, or None for any). ``params`` is a dict (``{}`` for a bare name or
    ``null``)."""
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
        item = {item[0]: item[1]}
    if isinstance(item, str):
        item = {item: {}}
    if not isinstance(item, Mapping) or len(item) != 1:
        raise EntryError(
            f"must be a mapping with exactly one key, the name, e.g. `{example}`; got "
            f"{short_repr(item)}"
        )
    ((name, params),) = item.items()
    if known is not None and name not in known:
        raise EntryError(
            f"unknown name {short_repr(name)}; use one of {', '.join(known)}"
            f"{did_you_mean(name, known)}"
        )
    if not isinstance(name, str):
        raise EntryError(f"the name must be text, got {short_repr(name)}")
    params = {} if params is None else params
    if not isinstance(params, Mapping):
        raise EntryError(f"must be a mapping of parameters, got {short_repr(params)}", name)
    return name, dict(params)


def named_entry(item: Any, where: str, known: Sequence[str], example: str) -> tuple[str, Any]:
    """:func:`parse_entry` with a ConfigError naming ``where`` (the entry's key path):
    ``methods[0] must be a mapping ...``, ``methods[0]: unknown name ...``."""
    try:
        return parse_entry(item, known, example)
    except EntryError as exc:
        path = f"{where}.{exc.suffix}" if exc.suffix else where
        sep = " " if exc.text.startswith("must") else ": "
        raise ConfigError(f"{path}{sep}{exc.text}") from None
