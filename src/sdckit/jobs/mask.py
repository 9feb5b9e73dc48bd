"""The mask job: apply a list of masking methods in order, report, write.

:func:`apply_methods` is the engine (also used by ``sdckit compare``): a registry maps the
method names of a job file's ``methods:`` list to the functions of :mod:`sdckit.masking`,
validates every parameter (a :class:`~sdckit.errors.ConfigError` naming
``methods[i].<method>.<param>`` and the allowed values), derives one seed per method from the
job seed and applies the methods one after another.

Method names and parameters (``columns`` is always a list of column names; a single name is
accepted too):

=======================  ======================================================================
``noise``                additive noise (Brand 2002; Kim 1986): ``columns``, ``alpha`` (> 0,
(``additive_noise``)     noise variance / attribute variance, default 0.1), ``method``
                         (``uncorrelated`` | ``correlated`` | ``kim``)
``multiplicative_noise`` ``columns``, ``sd`` (> 0, default 0.1)
``microaggregation``     ``columns``, ``k`` (default 3), ``method``: ``mdav`` (default; also
                         ``groups`` -- attribute groups aggregated separately, then
                         ``columns`` may be left out --, ``centroid`` (``mean`` |
                         ``median``), ``standardize``), ``vmdav`` (+ ``gamma``),
                         ``optimal_univariate`` and ``individual_ranking`` (each column on its
                         own), ``categorical`` (+ ``order``), ``kanonymity`` (the columns are
                         the quasi-identifiers), ``fuzzy`` (+ ``m``, ``max_iter``, ``tol``)
``rank_swapping``        ``columns``, ``p_percent`` (a percentage of n in (0, 100], default
                         5), ``variant`` (``standard`` | ``p_buckets`` | ``p_distribution``)
``data_swapping``        Dalenius-Reiss: ``columns`` (swapped), ``match_columns``, ``rate``
``record_swapping``      sdcMicro ``recordSwap``: ``household``, ``similar``, ``hierarchy``,
                         ``risk_variables``, ``swap_rate``, ``k_anonymity``, ``carry_along``
``pram``                 ``columns``, ``p_diagonal``, ``matrix``, ``invariant``, ``alpha``,
                         ``random_diagonal``
``randomized_response``  ``column``, ``p`` (in (0.5, 1]), ``categories``
``rounding``             ``columns``, ``base``
``resampling``           Heer (1993): ``columns``, ``t``
``sampling``             ``fraction`` or ``n``, ``strata``
``global_recoding``      ``columns``, ``method`` (``equal_width`` | ``equal_frequency`` |
                         ``log_equidistant`` | ``breaks``), ``bins``, ``breaks``, ``labels``;
                         or ``mapping`` for grouping categories
``top_bottom_coding``    ``columns``, ``top``, ``bottom``, ``top_quantile``,
                         ``bottom_quantile``, ``replace`` (``threshold`` | ``mean``)
``local_suppression``    sdcMicro ``localSuppression``: ``columns`` (the key variables), ``k``,
                         ``importance``, ``combinations_up_to``
=======================  ======================================================================

Seeds: with a job seed ``s`` method ``i`` gets the seed of the ``i``-th child of
``numpy.random.SeedSequence(s)``, so a method's randomness does not depend on which methods
come before it. The seeds are not published in the records (knowing them would let an
intruder undo the noise).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import ConfigError, DataError, ParameterError, SdcInputError
from sdckit.masking import microaggregation as ma
from sdckit.masking import noise, other, randomization, recoding, swapping
from sdckit.masking import suppression as ls
from sdckit.masking.base import MaskResult

# --------------------------------------------------------------------------------------------
# parameter specifications
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One parameter of a method: its kind, bounds or choices, default and meaning.

    ``kind``: ``columns`` (list of column names; one name accepted), ``column`` (one name),
    ``int``, ``float``, ``bool``, ``str`` (then ``choices``), ``list``, ``mapping``, ``any``.
    ``lo``/``hi`` bound numbers (``lo_open``/``hi_open``: excluded).
    """

    kind: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    help: str = ""

    def allowed(self) -> str:
        """The allowed values in words (for error messages)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.kind in ("int", "float"):
            what = "an integer" if self.kind == "int" else "a number"
            if self.lo is not None and self.hi is not None:
                left = "(" if self.lo_open else "["
                right = ")" if self.hi_open else "]"
                return f"{what} in {left}{self.lo:g}, {self.hi:g}{right}"
            if self.lo is not None:
                return f"{what} {'>' if self.lo_open else '>='} {self.lo:g}"
            return what
        return {
            "columns": "a list of column names, e.g. [a, b]",
            "column": "one column name",
            "bool": "true or false",
            "list": "a list",
            "mapping": "a mapping {key: value}",
            "str": "a text",
        }.get(self.kind, "any value")


@dataclass(frozen=True)
class MethodSpec:
    """A job-file method: its parameters and the function applying it.

    ``run(data, params, seed) -> list[MaskResult]`` receives validated parameters (defaults
    filled in) and a per-method integer seed.
    """

    name: str
    params: Mapping[str, Param]
    run: Callable[[pd.DataFrame, dict[str, Any], int], list[MaskResult]]
    summary: str
    aliases: tuple[str, ...] = ()
    # for "microaggregation": which parameters each sub-method accepts
    variants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    variant_key: str | None = None


def _key(i: int, method: str, param: str | None = None) -> str:
    return f"methods[{i}].{method}" + (f".{param}" if param else "")


def _check_value(i: int, method: str, name: str, spec: Param, value: Any) -> Any:
    """Validate and normalise one parameter value (ConfigError naming the key otherwise)."""
    key = _key(i, method, name)

    def bad(why: str) -> ParameterError:
        return ParameterError(f"{key}: {why}; allowed: {spec.allowed()}")

    if value is None:
        if spec.required:
            raise bad("is required")
        return None
    kind = spec.kind
    if kind == "columns":
        if isinstance(value, str):
            value = [value]
        if (
            not isinstance(value, (list, tuple))
            or not value
            or not all(isinstance(v, str) for v in value)
        ):
            raise bad(f"{value!r} is not a non-empty list of column names")
        return list(value)
    if kind == "column":
        if not isinstance(value, str) or not value:
            raise bad(f"{value!r} is not a column name")
        return value
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise bad(f"{value!r} is not true/false")
        return bool(value)
    if kind in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise bad(f"{value!r} is not a number")
        orig = value
        if kind == "int":
            if not float(value).is_integer():
                raise bad(f"{value!r} is not an integer")
            value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                raise bad(f"{value!r} is not finite")
        if spec.lo is not None and (value <= spec.lo if spec.lo_open else value < spec.lo):
            raise bad(f"{orig!r} is out of range")
        if spec.hi is not None and (value >= spec.hi if spec.hi_open else value > spec.hi):
            raise bad(f"{orig!r} is out of range")
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise bad(f"{value!r} is not a text")
        if spec.choices and value not in spec.choices:
            raise bad(f"unknown value {value!r}")
        return value
    if kind == "list":
        if not isinstance(value, (list, tuple)) or not value:
            raise bad(f"{value!r} is not a non-empty list")
        return list(value)
    if kind == "mapping":
        if not isinstance(value, Mapping) or not value:
            raise bad(f"{value!r} is not a non-empty mapping")
        return dict(value)
    return value


# --------------------------------------------------------------------------------------------
# the methods
# --------------------------------------------------------------------------------------------

_COLUMNS = Param("columns", required=True, help="the columns to mask")
_K = Param("int", default=3, lo=1, help="minimum group size")


def _per_column(
    fn: Callable[..., MaskResult], data: pd.DataFrame, columns: list[str], **kw: Any
) -> list[MaskResult]:
    """Apply a one-column function to each column in turn (each result feeds the next)."""
    results = []
    for c in columns:
        r = fn(data, c, **kw)
        results.append(r)
        data = r.data
    return results


def _run_noise(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [noise.additive_noise(data, p["columns"], p["alpha"], p["method"], seed=seed)]


def _run_mult(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [other.multiplicative_noise(data, p["columns"], p["sd"], seed=seed)]


def _run_microaggregation(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    m, cols, k = p["method"], p["columns"], p["k"]
    if m == "mdav":
        return [ma.mdav(data, cols, k, p["groups"], p["centroid"], p["standardize"])]
    if m == "vmdav":
        return [ma.vmdav(data, cols, k, p["gamma"], p["groups"], p["centroid"], p["standardize"])]
    if m == "optimal_univariate":
        return _per_column(ma.optimal_univariate, data, cols, k=k)
    if m == "individual_ranking":
        return [ma.individual_ranking(data, cols, k)]
    if m == "categorical":
        return [ma.categorical_microaggregation(data, cols, k, p["order"])]
    if m == "kanonymity":
        return [ma.kanonymity_microaggregation(data, cols, k)]
    return [
        ma.fuzzy_microaggregation(
            data, cols, k, p["m"], seed=seed, max_iter=p["max_iter"], tol=p["tol"]
        )
    ]


def _run_rank_swapping(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    v, cols, pp = p["variant"], p["columns"], p["p_percent"]
    if v == "standard":
        return [swapping.rank_swap(data, cols, pp, seed=seed)]
    if v == "p_buckets":
        return [swapping.rank_swap_p_buckets(data, cols, pp, seed=seed)]
    return [swapping.rank_swap_p_distribution(data, cols, pp, seed=seed)]


def _run_data_swapping(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [swapping.data_swap(data, p["columns"], p["match_columns"], p["rate"], seed=seed)]


def _run_record_swapping(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [
        swapping.record_swap(
            data,
            p["household"],
            p["similar"],
            p["hierarchy"],
            p["risk_variables"],
            swap_rate=p["swap_rate"],
            k_anonymity=p["k_anonymity"],
            carry_along=p["carry_along"],
            seed=seed,
        )
    ]


def _run_pram(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [
        randomization.pram(
            data,
            p["columns"],
            p_diagonal=p["p_diagonal"],
            matrix=p["matrix"],
            invariant=p["invariant"],
            alpha=p["alpha"],
            random_diagonal=p["random_diagonal"],
            seed=seed,
        )
    ]


def _run_rr(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [
        randomization.randomized_response(data, p["column"], p["p"], p["categories"], seed=seed)
    ]


def _run_rounding(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [other.round_to_base(data, p["columns"], p["base"])]


def _run_resampling(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [other.resample(data, p["columns"], p["t"], seed=seed)]


def _run_sampling(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    if (p["fraction"] is None) == (p["n"] is None):
        raise ConfigError("give exactly one of fraction (e.g. 0.1) and n (a number of records)")
    return [recoding.sample(data, p["fraction"], p["n"], p["strata"], seed=seed)]


def _run_global_recoding(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    if p["mapping"] is not None:
        return _per_column(recoding.group_categories, data, p["columns"], mapping=p["mapping"])
    return _per_column(
        recoding.global_recode,
        data,
        p["columns"],
        method=p["method"],
        bins=p["bins"],
        breaks=p["breaks"],
        labels=p["labels"],
    )


def _run_tbc(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return _per_column(
        recoding.top_bottom_code,
        data,
        p["columns"],
        top=p["top"],
        bottom=p["bottom"],
        top_quantile=p["top_quantile"],
        bottom_quantile=p["bottom_quantile"],
        replace=p["replace"],
    )


def _run_ls(data: pd.DataFrame, p: dict[str, Any], seed: int) -> list[MaskResult]:
    return [
        ls.local_suppression(data, p["columns"], p["k"], p["importance"], p["combinations_up_to"])
    ]


_PROB = {"lo": 0.0, "hi": 1.0}

METHODS: dict[str, MethodSpec] = {}


def _register(spec: MethodSpec) -> None:
    for name in (spec.name, *spec.aliases):
        METHODS[name] = spec


_register(
    MethodSpec(
        "noise",
        {
            "columns": _COLUMNS,
            "alpha": Param("float", default=0.1, lo=0.0, lo_open=True),
            "method": Param("str", default="uncorrelated", choices=noise._METHODS),
        },
        _run_noise,
        "additive noise (Brand 2002; Kim 1986)",
        aliases=("additive_noise",),
    )
)
_register(
    MethodSpec(
        "multiplicative_noise",
        {"columns": _COLUMNS, "sd": Param("float", default=0.1, lo=0.0, lo_open=True)},
        _run_mult,
        "multiplicative noise (Kim & Winkler 2003)",
    )
)
_MA_COMMON = ("columns", "k", "method")
_register(
    MethodSpec(
        "microaggregation",
        {
            "columns": Param("columns", help="the columns (may be omitted when groups are given)"),
            "k": _K,
            "method": Param(
                "str",
                default="mdav",
                choices=(
                    "mdav",
                    "vmdav",
                    "optimal_univariate",
                    "individual_ranking",
                    "categorical",
                    "kanonymity",
                    "fuzzy",
                ),
            ),
            "groups": Param("list"),
            "centroid": Param("str", default="mean", choices=("mean", "median")),
            "standardize": Param("bool", default=True),
            "gamma": Param("float", default=0.2, lo=0.0),
            "order": Param("mapping"),
            "m": Param("float", default=1.5, lo=1.0, lo_open=True),
            "max_iter": Param("int", default=100, lo=1),
            "tol": Param("float", default=1e-6, lo=0.0, lo_open=True),
        },
        _run_microaggregation,
        "microaggregation (Domingo-Ferrer & Torra 2005 and variants)",
        variants={
            "mdav": (*_MA_COMMON, "groups", "centroid", "standardize"),
            "vmdav": (*_MA_COMMON, "groups", "centroid", "standardize", "gamma"),
            "optimal_univariate": _MA_COMMON,
            "individual_ranking": _MA_COMMON,
            "categorical": (*_MA_COMMON, "order"),
            "kanonymity": _MA_COMMON,
            "fuzzy": (*_MA_COMMON, "m", "max_iter", "tol"),
        },
        variant_key="method",
    )
)
_register(
    MethodSpec(
        "rank_swapping",
        {
            "columns": _COLUMNS,
            "p_percent": Param("float", default=5.0, lo=0.0, hi=100.0, lo_open=True),
            "variant": Param(
                "str", default="standard", choices=("standard", "p_buckets", "p_distribution")
            ),
        },
        _run_rank_swapping,
        "rank swapping (Moore 1996; Nin, Herranz & Torra 2008)",
    )
)
_register(
    MethodSpec(
        "data_swapping",
        {
            "columns": _COLUMNS,
            "match_columns": Param("columns"),
            "rate": Param("float", default=0.05, **_PROB),
        },
        _run_data_swapping,
        "data swapping (Dalenius & Reiss 1982)",
    )
)
_register(
    MethodSpec(
        "record_swapping",
        {
            "household": Param("column", required=True),
            "similar": Param("list", required=True),
            "hierarchy": Param("columns", required=True),
            "risk_variables": Param("columns", required=True),
            "swap_rate": Param("float", default=0.05, **_PROB),
            "k_anonymity": Param("int", default=3, lo=1),
            "carry_along": Param("columns"),
        },
        _run_record_swapping,
        "targeted record swapping (sdcMicro recordSwap)",
    )
)
_register(
    MethodSpec(
        "pram",
        {
            "columns": _COLUMNS,
            "p_diagonal": Param("float", default=0.8, lo=0.0, hi=1.0, lo_open=True),
            "matrix": Param("mapping"),
            "invariant": Param("bool", default=False),
            "alpha": Param("float", default=0.5, **_PROB),
            "random_diagonal": Param("bool", default=False),
        },
        _run_pram,
        "post-randomization (Gouweleeuw et al. 1998)",
    )
)
_register(
    MethodSpec(
        "randomized_response",
        {
            "column": Param("column", required=True),
            "p": Param("float", default=0.75, lo=0.5, hi=1.0, lo_open=True),
            "categories": Param("list"),
        },
        _run_rr,
        "randomized response (Warner 1965)",
    )
)
_register(
    MethodSpec(
        "rounding",
        {"columns": _COLUMNS, "base": Param("float", required=True, lo=0.0, lo_open=True)},
        _run_rounding,
        "rounding to a base",
    )
)
_register(
    MethodSpec(
        "resampling",
        {"columns": _COLUMNS, "t": Param("int", default=10, lo=1)},
        _run_resampling,
        "resampling (Heer 1993)",
    )
)
_register(
    MethodSpec(
        "sampling",
        {
            "fraction": Param("float", lo=0.0, hi=1.0, lo_open=True),
            "n": Param("int", lo=1),
            "strata": Param("columns"),
        },
        _run_sampling,
        "simple or stratified random sampling",
    )
)
_register(
    MethodSpec(
        "global_recoding",
        {
            "columns": _COLUMNS,
            "method": Param(
                "str",
                default="equal_width",
                choices=("equal_width", "equal_frequency", "log_equidistant", "breaks"),
            ),
            "bins": Param("int", lo=1),
            "breaks": Param("list"),
            "labels": Param("list"),
            "mapping": Param("mapping"),
        },
        _run_global_recoding,
        "global recoding (intervals or category grouping)",
    )
)
_register(
    MethodSpec(
        "top_bottom_coding",
        {
            "columns": _COLUMNS,
            "top": Param("float"),
            "bottom": Param("float"),
            "top_quantile": Param("float", **_PROB),
            "bottom_quantile": Param("float", **_PROB),
            "replace": Param("str", default="threshold", choices=("threshold", "mean")),
        },
        _run_tbc,
        "top and bottom coding",
    )
)
_register(
    MethodSpec(
        "local_suppression",
        {
            "columns": _COLUMNS,
            "k": _K,
            "importance": Param("any"),
            "combinations_up_to": Param("int", lo=1),
        },
        _run_ls,
        "local suppression (sdcMicro localSuppression)",
    )
)


def method_names() -> list[str]:
    """Every accepted method name (aliases included), sorted."""
    return sorted(METHODS)


# --------------------------------------------------------------------------------------------
# validation and application
# --------------------------------------------------------------------------------------------


def _did_you_mean(word: Any, choices: Any) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def validate_method(i: int, name: Any, params: Any) -> tuple[MethodSpec, dict[str, Any]]:
    """Check one ``(name, params)`` entry; returns its spec and the parameters with defaults.

    ConfigError naming ``methods[i].<name>[.<param>]`` and the allowed values/names otherwise.
    """
    if not isinstance(name, str) or name not in METHODS:
        raise ConfigError(
            f"methods[{i}]: unknown method {name!r}{_did_you_mean(name, METHODS)}; allowed: "
            f"{', '.join(method_names())}"
        )
    spec = METHODS[name]
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigError(
            f"{_key(i, name)}: parameters must be a mapping, e.g. "
            f"{{columns: [a, b]}}, not {params!r}"
        )
    unknown = [p for p in params if p not in spec.params]
    if unknown:
        raise ConfigError(
            f"{_key(i, name, str(unknown[0]))}: unknown parameter"
            f"{_did_you_mean(unknown[0], spec.params)}; allowed: {', '.join(spec.params)}"
        )
    out: dict[str, Any] = {}
    for pname, pspec in spec.params.items():
        value = params.get(pname)
        checked = _check_value(i, name, pname, pspec, value)
        out[pname] = pspec.default if checked is None else checked
    if spec.name == "microaggregation" and out["columns"] is None and out["groups"] is None:
        raise ConfigError(
            f"{_key(i, name, 'columns')}: is required (or, for mdav/vmdav, groups); "
            "allowed: a list of column names, e.g. [a, b]"
        )
    if spec.variant_key:
        variant = out[spec.variant_key]
        allowed = spec.variants[variant]
        extra = [p for p in params if p not in allowed]
        if extra:
            raise ConfigError(
                f"{_key(i, name, extra[0])}: not a parameter of {spec.variant_key} "
                f"{variant!r}; allowed for it: {', '.join(allowed)}"
            )
    return spec, out


def _method_seeds(seed: int | None, n: int) -> list[int]:
    """One integer seed per method from ``SeedSequence(seed)`` (fresh entropy if None)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ConfigError(f"seed: {seed!r} must be an integer (or absent for a random run)")
    if seed is not None and seed < 0:
        raise ConfigError(f"seed: {seed!r} must be a non-negative integer")
    ss = np.random.SeedSequence(None if seed is None else int(seed))
    return [int(c.generate_state(1, dtype=np.uint64)[0]) for c in ss.spawn(n)]


def apply_methods(
    data: pd.DataFrame, methods: Sequence[tuple[str, dict]], seed: int | None = None
) -> tuple[pd.DataFrame, list[dict]]:
    """Apply masking ``methods`` to ``data`` in order; returns the masked frame and records.

    ``methods`` are ``(name, parameters)`` pairs (a job file's ``methods:`` list); the names
    and parameters are those of the module docstring. All entries are validated before any
    is applied (ConfigError naming ``methods[i].<name>.<param>``). Method ``i`` gets its own
    seed, derived from ``seed`` by ``numpy.random.SeedSequence(seed).spawn``: the same seed
    gives the same output. Errors raised by a method (a non-numeric column, k larger than the
    number of rows, a PRAM matrix not matching the data, ...) keep their type and are prefixed
    with ``methods[i].<name>``. The input is not modified.

    Each record is :meth:`MaskResult.record` plus ``step`` (the index ``i`` in ``methods``);
    a method applied column by column (``optimal_univariate``, ``global_recoding``,
    ``top_bottom_coding``) gives one record per column.
    """
    if not isinstance(data, pd.DataFrame):
        raise ConfigError("apply_methods: data must be a pandas DataFrame")
    if isinstance(methods, (str, Mapping)) or not isinstance(methods, Sequence):
        raise ConfigError("methods: must be a list of {method: {parameters}} entries")
    checked = []
    for i, entry in enumerate(methods):
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ConfigError(f"methods[{i}]: expected a (name, parameters) pair, got {entry!r}")
        given = entry[1]
        allow_unchanged = False
        if isinstance(given, Mapping) and ALLOW_UNCHANGED in given:
            allow_unchanged = given[ALLOW_UNCHANGED]
            if not isinstance(allow_unchanged, bool):
                raise ConfigError(
                    f"{_key(i, entry[0], ALLOW_UNCHANGED)}: must be true or false, got "
                    f"{allow_unchanged!r}"
                )
            given = {k: v for k, v in given.items() if k != ALLOW_UNCHANGED}
        spec, params = validate_method(i, entry[0], given)
        k = params.get("k")
        if isinstance(k, int) and spec.name == "microaggregation" and k > len(data):
            raise ConfigError(
                f"{_key(i, entry[0], 'k')}: k={k} is larger than the {len(data)} rows of the "
                "data; choose k <= the number of rows"
            )
        checked.append((i, entry[0], spec, params, allow_unchanged))
    seeds = _method_seeds(seed, len(checked))
    records: list[dict] = []
    current = data
    for (i, name, spec, params, allow_unchanged), s in zip(checked, seeds, strict=True):
        try:
            with np.errstate(all="ignore"):
                results = spec.run(current, params, s)
        except SdcInputError as exc:
            raise type(exc)(f"{_key(i, name)}: {exc}") from exc
        if spec.name in MUST_CHANGE and not allow_unchanged:
            _check_changed(current, results, params, _key(i, name))
        for r in results:
            rec = r.record()
            rec["step"] = i
            records.append(rec)
        current = results[-1].data
    return (current.copy() if current is data else current), records


#: Perturbative methods whose whole purpose is to change values: a step of one of these
#: that changed nothing (noise on a constant column, swapping one row, ...) released the
#: data unprotected, so it is an error unless the step says ``allow_unchanged: true``.
#: Non-perturbative methods (recoding, top/bottom coding, rounding, local suppression,
#: sampling) and microaggregation reach their target property by construction: data that
#: already has it may legitimately stay as it is.
MUST_CHANGE = frozenset(
    {
        "noise",
        "multiplicative_noise",
        "rank_swapping",
        "data_swapping",
        "record_swapping",
        "pram",
        "randomized_response",
        "resampling",
    }
)
#: The per-step key that accepts an unchanged release of a :data:`MUST_CHANGE` method.
ALLOW_UNCHANGED = "allow_unchanged"


def _same(before: pd.Series, after: pd.Series) -> bool:
    """True when two columns hold the same values row by row (missing equals missing)."""
    a, b = before.to_numpy(), after.to_numpy()
    if a.shape != b.shape:
        return False
    equal = pd.Series(a == b, dtype=bool).to_numpy() | (pd.isna(a) & pd.isna(b))
    return bool(equal.all())


def _check_changed(
    before: pd.DataFrame, results: Sequence[MaskResult], params: Mapping[str, Any], where: str
) -> None:
    """DataError when a perturbative step left every value of its columns as it was."""
    after = results[-1].data
    columns = [c for r in results for c in (r.parameters.get("columns") or [])]
    if not columns:  # the step's own parameters: columns, column, or swapped geography
        for key in ("columns", "column", "hierarchy", "carry_along"):
            value = params.get(key)
            columns += [value] if isinstance(value, str) else list(value or [])
    columns = [c for c in dict.fromkeys(columns) if c in before.columns and c in after.columns]
    if not columns or len(after) != len(before):
        return
    if all(_same(before[c], after[c]) for c in columns):
        raise DataError(
            f"{where} changed none of the {len(before):,} values of "
            f"{', '.join(map(repr, columns))}, so the release would be the original data: "
            "the method cannot protect this input (a constant column, a single row, too "
            "few records?). Choose another method, or set `allow_unchanged: true` on this "
            "step if an unchanged release is what you want"
        )


# --------------------------------------------------------------------------------------------
# the whole job: read, drop/pseudonymize identifiers, mask, report, write
# --------------------------------------------------------------------------------------------


@dataclass
class MaskJobResult:
    """What :func:`run_mask_job` produced.

    ``data`` is the released table; ``records`` the published method records (as
    :func:`apply_methods` returns them); ``summary`` the JSON document (also written to the
    job's ``output.json``); ``report`` the HTML report; ``written`` the files written, by kind
    (``data``, ``report``, ``json``).
    """

    data: pd.DataFrame
    records: list[dict]
    summary: dict[str, Any]
    report: Any
    written: dict[str, Path] = field(default_factory=dict)


def _prepare_identifiers(
    data: pd.DataFrame, schema: Any, base_dir: Path | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Drop the identifying attributes, or replace them by keyed tokens where configured.

    The rule is :func:`sdckit.core.pseudonymize.protect_identifiers`; this adds which columns
    were dropped and which pseudonymized, for the report.
    """
    from sdckit.core.pseudonymize import protect_identifiers

    out, _ = protect_identifiers(data, schema, base_dir)
    ids = [n for n in schema.identifying if n in data.columns]
    return out, {
        "dropped": [n for n in ids if n not in out.columns],
        "pseudonymized": [n for n in ids if n in out.columns],
    }


def _typed(data: pd.DataFrame, schema: Any) -> pd.DataFrame:
    """Give text columns (CSV input is read as text) their numeric type where they are numbers.

    A column declared ``integer``/``decimal`` in the schema must parse (DataError naming the
    row and value otherwise); a column declared with another type stays text; an undeclared
    text column becomes numeric when every non-missing value parses as a number and none has
    a leading zero (codes such as ZIP ``01234`` stay text). Integral columns become ``int64``
    (``Int64`` with missing values), the others ``float64``. In text columns an empty cell
    becomes a missing value (what PRAM leaves alone and local suppression writes); other
    tokens such as ``NA`` stay values of a text column (``NA`` may be Namibia).
    """
    from sdckit.core.io import MISSING_TOKENS, to_numeric

    out = data.copy()
    for c in data.columns:
        s = data[c]
        if s.dtype != object and not pd.api.types.is_string_dtype(s.dtype):
            continue
        attr = schema.attributes.get(c)
        if attr is not None and not attr.type.numeric:
            out[c] = s.mask(s.astype(str).str.strip() == "")  # empty cell = missing
            continue
        if attr is None:  # numeric when every value parses (parsed once, reused)
            text = s.astype(str).str.strip()
            absent = text.isin(MISSING_TOKENS) | s.isna()
            present = text[~absent]
            if present.empty or present.str.match(r"^[+-]?0\d").any():
                out[c] = s.mask(text == "")  # empty cell = missing
                continue
            parsed = pd.to_numeric(text.where(~absent), errors="coerce")
            if parsed[~absent].isna().any():
                out[c] = s.mask(text == "")  # empty cell = missing
                continue
            x = parsed.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            x = to_numeric(s, c, "the input")
        ok = ~np.isnan(x)
        if np.all(x[ok] == np.round(x[ok])) and np.all(np.abs(x[ok]) < 2**53):
            if ok.all():
                out[c] = x.astype(np.int64)
            else:
                out[c] = pd.array(np.where(ok, x, 0).astype(np.int64), dtype="Int64")
                out.loc[~ok, c] = pd.NA
        else:
            out[c] = x
    return out


def _touched_columns(records: Sequence[dict], columns: Sequence[str]) -> list[str]:
    """Columns named in the methods' parameters, in data order."""
    named: set[str] = set()

    def collect(v: Any) -> None:
        if isinstance(v, str):
            named.add(v)
        elif isinstance(v, (list, tuple)):
            for item in v:
                collect(item)

    for r in records:
        for key, v in r["parameters"].items():
            if key in (
                "columns",
                "column",
                "quasi_identifiers",
                "swap_columns",
                "risk_variables",
                "carry_along",
            ):
                collect(v)
    return [c for c in columns if c in named]


def _check_identifiers_unused(methods: Sequence[tuple[str, dict]], dropped: list[str]) -> None:
    """ConfigError when a method names an identifying attribute (dropped before masking)."""
    if not dropped:
        return

    def names(v: Any) -> list[str]:
        if isinstance(v, str):
            return [v]
        if isinstance(v, (list, tuple)):
            return [x for item in v for x in names(item)]
        return []

    for i, (name, params) in enumerate(methods):
        for pname, v in params.items():
            hit = [c for c in names(v) if c in dropped]
            if hit:
                raise ConfigError(
                    f"{_key(i, name, pname)}: column {hit[0]!r} is an identifying attribute; "
                    "identifying attributes are dropped before masking -- remove it from the "
                    "method or give it another role (or `pseudonymize:` to keep it as tokens)"
                )


def _source_name(src: Any) -> str:
    return str(src) if isinstance(src, (str, Path)) else f"a {type(src).__name__} in memory"


def run_mask_job(job: Any, json_path: str | Path | None = None) -> MaskJobResult:
    """Run a mask job (a :class:`sdckit.jobs.config.Job`, a job-file path or a dict).

    Steps: read the input; drop the identifying attributes (or pseudonymize them with a keyed
    HMAC where the schema says so); :func:`apply_methods` with the job's ``methods`` and
    ``seed``; summarize every masked column before/after and evaluate the numeric ones
    (:func:`numeric_evaluation`); build the HTML report. Only when all of that succeeded are
    the outputs written (``output.path`` CSV/Parquet, ``output.report`` HTML,
    ``output.json`` or ``json_path``), each atomically. Errors are :class:`SdcInputError`
    subclasses naming the key, column or value.
    """
    from sdckit.core.io import output_set, write_table, write_text
    from sdckit.jobs.config import Job, job_from_dict, load_job
    from sdckit.report.writer import write_json

    if isinstance(job, (str, Path)):
        job = load_job(job)
    elif isinstance(job, Mapping):
        job = job_from_dict(job)
    if not isinstance(job, Job):
        raise ConfigError(f"run_mask_job: expected a job, a job-file path or a dict, got {job!r}")
    methods = job.methods
    if not methods:
        raise ConfigError(
            f"{job.key('methods')}: a mask job needs at least one method, e.g. "
            "`methods: [{microaggregation: {columns: [a, b], k: 3}}]`"
        )
    try:
        for i, (name, params) in enumerate(methods):  # fail on the config before reading data
            validate_method(i, name, params)
        job.check_outputs({"--json": json_path})
        data = job.read_input()
        prepared, ids = _prepare_identifiers(data, job.schema, job.base_dir)
        prepared = _typed(prepared, job.schema)
        _check_identifiers_unused(methods, ids["dropped"])
        masked, records = apply_methods(prepared, methods, seed=job.seed)
    except ConfigError as exc:
        if str(exc).startswith("methods["):
            raise ConfigError(job.key(str(exc))) from exc
        raise
    from sdckit.evaluation.masking_summary import column_changes, numeric_evaluation

    touched = [c for c in _touched_columns(records, list(masked.columns))]
    changes, categories = column_changes(prepared, masked, touched)
    spec = job.output
    json_target = Path(json_path) if json_path is not None else spec.json
    summary: dict[str, Any] = {
        "command": "mask",
        "input": _source_name(job.input["path"]),
        "records_in": len(data),
        "records_out": len(masked),
        "seed_given": job.seed is not None,
        "job_methods": [{"method": n, "parameters": p} for n, p in methods],
        "identifiers": ids,
        "methods": records,
        "columns": changes,
        "category_changes": categories,
        "numeric_evaluation": numeric_evaluation(
            prepared, masked, touched, seed=0 if job.seed is None else job.seed
        ),
        "outputs": {
            "data": spec.path,
            "report": spec.report,
            "json": json_target,
        },
    }
    from sdckit.report.mask_report import mask_report

    report = mask_report(summary)
    written: dict[str, Path] = {}
    with output_set() as outputs:  # one release: renamed into place together, or not at all
        summary["run_id"] = outputs.run_id
        html = report.render_html()
        if spec.path is not None:
            written["data"] = write_table(
                masked, spec.path, spec.delimiter, neutralize=spec.neutralize_formulas
            )
        if spec.report is not None:
            written["report"] = write_text(spec.report, html)
        if json_target is not None:
            written["json"] = write_json(json_target, summary)
    return MaskJobResult(masked, records, summary, report, written)
