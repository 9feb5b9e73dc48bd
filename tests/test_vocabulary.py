"""One vocabulary in the Python API: ``quasi_identifiers``, ``columns``,
``original``/``protected``, ``seed``.

The same idea once had six parameter names; this test inspects the signatures of every public
function and class of ``sdckit`` (its lazy export table), :mod:`sdckit.risk`,
:mod:`sdckit.utility`, :mod:`sdckit.evaluation` and :mod:`sdckit.masking` and fails when a
parameter (or a field of a public dataclass or spec) takes one of the retired names again.
Command-line flags (``--qi``) and job-file keys (a compare job's ``qi:``) are another vocabulary
and are not checked here.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import sdckit

#: Parameter names the Python API no longer uses, and the one to use instead.
RETIRED = {
    "qi": "quasi_identifiers",
    "keys": "quasi_identifiers or columns",
    "key_variables": "quasi_identifiers",
    "risk_variables": "quasi_identifiers",
    "masked": "protected",
    "anonymized": "protected",
}

#: (owner, name) pairs allowed to keep a retired name, and why.
ALLOWED = {
    # the codes of the distinct key combinations (an int array), not column names
    ("sdckit.core.frequency.FrequencySet", "keys"),
}

PACKAGES = ("sdckit.risk", "sdckit.utility", "sdckit.evaluation", "sdckit.masking")


def _public(module: Any) -> Iterator[tuple[str, Any]]:
    """The public names of ``module``: its ``__all__``, else what it defines without ``_``."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
        ]
    for name in names:
        yield name, getattr(module, name)


def _modules() -> Iterator[Any]:
    yield sdckit
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        yield pkg
        for info in pkgutil.iter_modules(pkg.__path__):
            yield importlib.import_module(f"{pkg_name}.{info.name}")


def _parameters(obj: Any) -> Iterator[str]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return
    for p in sig.parameters.values():
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            yield p.name


def _api() -> dict[str, set[str]]:
    """``owner -> parameter and field names`` of every public function, class and method."""
    out: dict[str, set[str]] = {}
    seen: set[int] = set()
    for module in _modules():
        for name, obj in _public(module):
            if id(obj) in seen or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not getattr(obj, "__module__", "").startswith("sdckit"):
                continue
            seen.add(id(obj))
            owner = f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"
            names = set(_parameters(obj))
            if inspect.isclass(obj):
                if dataclasses.is_dataclass(obj):
                    names |= {f.name for f in dataclasses.fields(obj)}
                fields = getattr(obj, "model_fields", None)
                if isinstance(fields, dict):
                    names |= set(fields)
                    names |= {f.alias for f in fields.values() if getattr(f, "alias", None)}
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    func = (
                        member.__func__
                        if isinstance(member, classmethod | staticmethod)
                        else member
                    )
                    if inspect.isfunction(func):
                        out[f"{owner}.{attr}"] = set(_parameters(func)) - {"self", "cls"}
            out[owner] = names - {"self", "cls"}
    return out


def test_the_api_is_found() -> None:
    api = _api()
    # a sample of what must be inspected (guards against the walk silently finding nothing)
    for owner in (
        "sdckit.evaluation.protected_file.evaluate",
        "sdckit.evaluation.comparison.compare",
        "sdckit.risk.matching.matching_risk",
        "sdckit.risk.matching.MatchingRisk",
        "sdckit.utility.generalization_pair.generalization_metrics",
        "sdckit.masking.swapping.record_swapping",
        "sdckit.masking.swapping.RecordSwapping",
        "sdckit.masking.microaggregation.information_loss",
    ):
        assert owner in api, owner
    assert "quasi_identifiers" in api["sdckit.evaluation.protected_file.evaluate"]
    assert "protected" in api["sdckit.masking.microaggregation.information_loss"]


def test_no_retired_parameter_names() -> None:
    bad = sorted(
        f"{owner}: {name!r} (use {RETIRED[name]})"
        for owner, names in _api().items()
        for name in names & set(RETIRED)
        if (owner, name) not in ALLOWED
    )
    assert not bad, "retired parameter names in the public API:\n" + "\n".join(bad)


# --- record swapping: `quasi_identifiers`, formerly `risk_variables` ----------------------------
def _households() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "hid": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6],
            "region": ["R1"] * 6 + ["R2"] * 6,
            "size": [2] * 12,
            "age": [1, 2, 1, 3, 2, 2, 1, 2, 3, 3, 1, 1],
        }
    )


STEP = {"household": "hid", "similar": ["size"], "hierarchy": ["region"], "swap_rate": 0.5}


@pytest.mark.parametrize("name", ["quasi_identifiers", "risk_variables"])
def test_record_swapping_reads_both_spellings(name: str) -> None:
    from sdckit.masking import Pipeline, RecordSwapping

    from_python = RecordSwapping(**STEP, **{name: ["age"]})
    from_file = RecordSwapping.from_dict({**STEP, name: ["age"]}, "methods[0].record_swapping")
    assert from_python == from_file == RecordSwapping("hid", ["size"], ["region"], ["age"], 0.5)
    assert from_file.quasi_identifiers == ["age"]
    # written back under the new name only
    assert from_file.to_dict()["quasi_identifiers"] == ["age"]
    assert "risk_variables" not in from_file.to_dict()
    data, records = Pipeline.from_entries([{"record_swapping": {**STEP, name: ["age"]}}]).apply(
        _households(), seed=3
    )
    expected, _ = Pipeline([RecordSwapping(**STEP, quasi_identifiers=["age"])]).apply(
        _households(), seed=3
    )
    pd.testing.assert_frame_equal(data, expected)
    assert records[0]["parameters"]["quasi_identifiers"] == ["age"]


def test_record_swapping_refuses_both_spellings_at_once() -> None:
    from sdckit.errors import ParameterError
    from sdckit.masking import RecordSwapping

    both = {**STEP, "quasi_identifiers": ["age"], "risk_variables": ["age"]}
    with pytest.raises(ParameterError, match="give quasi_identifiers only"):
        RecordSwapping.from_dict(both, "methods[0].record_swapping")
    with pytest.raises(ParameterError, match=r"risk_variables must be a list"):
        RecordSwapping.from_dict({**STEP, "risk_variables": 5}, "methods[0].record_swapping")


def test_record_swap_function_takes_quasi_identifiers() -> None:
    from sdckit.masking.swapping import record_swapping

    res = record_swapping(
        _households(), "hid", ["size"], ["region"], quasi_identifiers=["age"], seed=1
    )
    assert res.parameters["quasi_identifiers"] == ["age"]
