"""A method that cannot do its job fails; it never passes data through.

Rule test over every registered perturbative method (``MUST_CHANGE``): on an input it cannot
protect (a constant column, a single row) the step raises a DataError naming the step and
the columns, unless the step says ``allow_unchanged: true``; an infinite value is refused by
every numeric method, naming the column, row and value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.errors import DataError
from sdckit.jobs.mask import METHODS, MUST_CHANGE, apply_methods

#: One step per perturbative method, on the column ``x`` (numeric) or ``g`` (categorical).
STEPS = {
    "noise": {"columns": ["x"], "alpha": 0.5},
    "multiplicative_noise": {"columns": ["x"], "sd": 0.1},
    "rank_swapping": {"columns": ["x"], "p_percent": 20},
    "data_swapping": {"columns": ["g"], "match_columns": ["s"], "rate": 1.0},
    "record_swapping": {
        "household": "h",
        "similar": [["s"]],
        "hierarchy": ["g"],
        "risk_variables": ["s"],
        "swap_rate": 1.0,
    },
    "pram": {"columns": ["g"], "p_diagonal": 0.5},
    "randomized_response": {"column": "g", "p": 0.6},
    "resampling": {"columns": ["x"], "t": 3},
}


def test_every_perturbative_method_has_a_rule_case() -> None:
    assert set(STEPS) == set(MUST_CHANGE)
    assert all(name in METHODS for name in MUST_CHANGE)


def _constant(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"x": np.full(n, 7.0), "g": ["a"] * n, "h": np.arange(n) // 2, "s": ["k"] * n}
    )


@pytest.mark.parametrize("name", sorted(MUST_CHANGE))
@pytest.mark.parametrize("n", [1, 40])
def test_unchanged_release_is_an_error(name: str, n: int) -> None:
    data = _constant(n)
    params = dict(STEPS[name])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy warning may leak either
            out, _ = apply_methods(data, [(name, params)], seed=1)
    except DataError as exc:
        text = str(exc)
        assert text.startswith(f"methods[0].{name}")
        return
    # a method that returned must have changed something
    changed = any(not out[c].equals(data[c]) for c in ("x", "g"))
    assert changed, f"{name} released unchanged data on {n} row(s)"


def test_allow_unchanged_makes_the_no_op_legitimate() -> None:
    data = _constant(10)
    out, _ = apply_methods(
        data, [("noise", {"columns": ["x"], "alpha": 0.5, "allow_unchanged": True})], seed=1
    )
    pd.testing.assert_frame_equal(out, data)


def test_allow_unchanged_must_be_a_boolean() -> None:
    from sdckit.errors import ConfigError

    with pytest.raises(ConfigError, match="allow_unchanged"):
        apply_methods(_constant(3), [("noise", {"columns": ["x"], "allow_unchanged": "yes"})])


NUMERIC_STEPS = [
    ("noise", {"columns": ["y"], "alpha": 0.5}),
    ("noise", {"columns": ["y", "z"], "alpha": 0.5, "method": "correlated"}),
    ("multiplicative_noise", {"columns": ["y"], "sd": 0.1}),
    ("microaggregation", {"columns": ["y", "z"], "k": 3}),
    ("microaggregation", {"columns": ["y"], "k": 3, "method": "individual_ranking"}),
    ("rank_swapping", {"columns": ["y"], "p_percent": 10}),
    ("resampling", {"columns": ["y"], "t": 3}),
    ("rounding", {"columns": ["y"], "base": 5}),
]


@pytest.mark.parametrize(("name", "params"), NUMERIC_STEPS)
def test_an_infinite_value_is_refused(name: str, params: dict) -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=1001)
    y[500] = np.inf
    data = pd.DataFrame({"y": y, "z": rng.normal(size=1001)})
    with pytest.raises(DataError) as info:
        apply_methods(data, [(name, params)], seed=1)
    text = str(info.value)
    assert "'y'" in text and "inf" in text and "row 501" in text


def test_the_cli_writes_nothing_for_noise_on_inf(tmp_path) -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=1001)
    y[1000] = np.inf
    pd.DataFrame({"y": y}).to_csv(tmp_path / "in.csv", index=False)
    job = tmp_path / "job.yaml"
    job.write_text(
        "input: {path: in.csv}\nseed: 1\nmethods: [{noise: {columns: [y], alpha: 0.5}}]\n"
        "output: {path: out.csv, report: out.html, json: out.json}\n"
    )
    res = CliRunner().invoke(app, ["mask", "--config", str(job)])
    assert res.exit_code == 2, res.output
    assert "row 1001" in " ".join(res.output.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]
