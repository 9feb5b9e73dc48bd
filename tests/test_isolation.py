"""(c, t)-isolation (Chawla, Dwork, McSherry, Smith & Wee 2005): hand-computed 2-D points, a
brute-force check of the vectorized computation, parameter errors, ``evaluate`` and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.errors import DataError, ParameterError
from sdckit.risk.isolation import isolation_risk

# Original points A(0,0), B(3,0), C(10,0), D(10,10); released q_A(1.5,0), q_B(1,0),
# q_C(0,-1), q_D(10,9) (q_i is the released version of original record i).
ORIGINAL = pd.DataFrame({"a": [0.0, 3.0, 10.0, 10.0], "b": [0.0, 0.0, 0.0, 10.0]})
RELEASED = pd.DataFrame({"a": [1.5, 1.0, 0.0, 10.0], "b": [0.0, 0.0, -1.0, 9.0]})


def test_hand_computed_c2_t2() -> None:
    # c = 2, t = 2 (isolated when the ball holds only the record itself), raw units.
    # q_A: ||q_A - A|| = 1.5, r = 3: A (1.5), B (1.5) inside -> 2 points: not isolated.
    #      Its nearest originals A, B are both at 1.5 -> r = 3 -> 2 points: isolates nobody.
    # q_B: ||q_B - B|| = 2, r = 4: A (1), B (2) -> 2: not isolated. Nearest A at 1 -> r = 2:
    #      A (1) and B (2, on the boundary: inside the closed ball) -> 2: isolates nobody.
    # q_C: ||q_C - C|| = sqrt(101) = 10.05, r = 20.1: all 4 points -> not isolated. Nearest
    #      A at 1 -> r = 2: A only (B at sqrt(10) = 3.16) -> 1 < 2: q_C isolates A.
    # q_D: ||q_D - D|| = 1, r = 2: D only (C at 9) -> 1 < 2: isolated by its own record.
    r = isolation_risk(ORIGINAL, RELEASED, c=2, t=2, standardize=False)
    assert r.own_mask.tolist() == [False, False, False, True]
    assert r.any_mask.tolist() == [True, False, False, True]
    assert r.isolated_by_own == 0.25  # {D}
    assert r.isolated_by_any == 0.5  # {A, D}
    assert r.isolating_released == 0.5  # {q_C, q_D}
    assert r.counts == {"isolated_by_own": 1, "isolated_by_any": 2, "isolating_released": 2}


def test_hand_computed_c2_t3() -> None:
    # t = 3: fewer than 3 points in the ball.
    # own: q_A r = 3 holds A, B (2 < 3) -> isolated; q_B r = 4 holds A, B -> isolated;
    #      q_C r = 20.1 holds 4 -> not; q_D r = 2 holds D -> isolated.       own = 3/4
    # any: q_A isolates A and B (its third nearest, C, is at 8.5 > 3); q_C isolates A and
    #      B (third nearest C at 10.05 > 2 sqrt(10) = 6.32); q_D isolates D; C is never
    #      isolated (from q_C: r = 20.1 holds 4; from q_D: r = 18 holds C, D, B).  any = 3/4
    # every released point isolates someone (q_B: A at 1, r = 2 holds A, B -> 2 < 3).
    r = isolation_risk(ORIGINAL, RELEASED, c=2, t=3, standardize=False)
    assert r.own_mask.tolist() == [True, True, False, True]
    assert r.any_mask.tolist() == [True, True, False, True]
    assert (r.isolated_by_own, r.isolated_by_any, r.isolating_released) == (0.75, 0.75, 1.0)


def test_exact_copy_isolates_unique_points_and_duplicates_protect() -> None:
    # q = x: delta = 0, the ball of radius 0 holds the copies of x. A point present twice
    # in the original has 2 copies (not < 2): not isolated at t = 2; the unique one is.
    x = pd.DataFrame({"a": [0.0, 0.0, 5.0], "b": [1.0, 1.0, 2.0]})
    r = isolation_risk(x, x, c=3, t=2, standardize=False)
    assert r.own_mask.tolist() == [False, False, True]
    assert r.isolated_by_any == pytest.approx(1 / 3)


def test_without_row_correspondence_own_is_none() -> None:
    released = RELEASED.iloc[[2, 3]]  # q_C, q_D only: a synthetic-style release
    r = isolation_risk(ORIGINAL, released, c=2, t=2, standardize=False)
    assert r.isolated_by_own is None and r.own_mask is None
    assert r.any_mask.tolist() == [True, False, False, True]
    assert r.isolating_released == 1.0
    with pytest.raises(DataError, match="rows_correspond"):
        isolation_risk(ORIGINAL, released, rows_correspond=True)


def test_standardization_uses_original_sd() -> None:
    # z-scores divide each column by the original's sd: scaling one column of both files by
    # 1000 changes nothing after standardization.
    scaled_o, scaled_r = ORIGINAL.copy(), RELEASED.copy()
    scaled_o["b"] *= 1000.0
    scaled_r["b"] *= 1000.0
    a = isolation_risk(ORIGINAL, RELEASED, c=2, t=2)
    b = isolation_risk(scaled_o, scaled_r, c=2, t=2)
    assert a.own_mask.tolist() == b.own_mask.tolist()
    assert a.any_mask.tolist() == b.any_mask.tolist()


def _brute_force(x: np.ndarray, q: np.ndarray, c: float, t: int):
    """Every (released, original) pair: count the originals in the closed ball directly."""
    from sdckit.risk.linkage import TIE_RTOL

    d = np.sqrt(((q[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))  # (m, n)
    radius = c * d  # radius[j, i]: ball around q_j through x_i, scaled by c
    limit = radius + TIE_RTOL * (1.0 + radius)
    counts = (d[:, None, :] <= limit[:, :, None]).sum(axis=2)  # (m, n) originals in the ball
    isolates = counts < t
    own = np.diag(isolates) if len(x) == len(q) else None
    return own, isolates.any(axis=0), isolates.any(axis=1)


_coord = st.integers(-4, 4).map(float)
_points = st.lists(st.tuples(_coord, _coord), min_size=1, max_size=12)


@settings(max_examples=120, deadline=None)
@given(
    original=_points,
    released=_points,
    c=st.sampled_from([1.0, 1.5, 2.0, 3.0]),
    t=st.integers(2, 5),
)
def test_matches_brute_force(original, released, c, t) -> None:
    """Integer coordinates make many exact ties and points on ball boundaries."""
    x = np.array(original)
    q = np.array(released)
    frame_o = pd.DataFrame(x, columns=["a", "b"])
    frame_q = pd.DataFrame(q, columns=["a", "b"])
    r = isolation_risk(frame_o, frame_q, c=c, t=t, standardize=False)
    own, any_mask, isolating = _brute_force(x, q, c, t)
    assert r.any_mask.tolist() == any_mask.tolist()
    assert r.isolating_released == pytest.approx(isolating.mean())
    if own is None:
        assert r.own_mask is None
    else:
        assert r.own_mask.tolist() == own.tolist()


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"c": 0.5}, "'c' must be >= 1"),
        ({"c": "2"}, "'c' must be a number"),
        ({"t": 1}, "'t' must be an integer >= 2"),
        ({"t": 2.5}, "'t' must be an integer >= 2"),
    ],
)
def test_bad_parameters(kwargs, fragment) -> None:
    with pytest.raises(ParameterError, match=fragment):
        isolation_risk(ORIGINAL, RELEASED, **kwargs)


def test_missing_values_and_columns_are_named() -> None:
    bad = RELEASED.copy()
    bad.loc[1, "a"] = np.nan
    with pytest.raises(DataError, match="'a'.*missing"):
        isolation_risk(ORIGINAL, bad)
    with pytest.raises(DataError, match="zz"):
        isolation_risk(ORIGINAL, RELEASED, ["a", "zz"])


def test_evaluate_reports_isolation() -> None:
    import sdckit

    doc = sdckit.evaluate(ORIGINAL, RELEASED, isolation_c=2, isolation_t=3)
    iso = doc["isolation"]
    expected = isolation_risk(ORIGINAL, RELEASED, c=2, t=3)  # z-scores, as DBRL
    assert iso["isolated_by_own"] == expected.isolated_by_own
    assert iso["isolated_by_any"] == expected.isolated_by_any
    assert (iso["c"], iso["t"], iso["standardized"]) == (2.0, 3, True)
    with pytest.raises(ParameterError, match="'t'"):
        sdckit.evaluate(ORIGINAL, RELEASED, isolation_t=1)


def test_cli_json_html_and_bad_option(tmp_path) -> None:
    runner = CliRunner()
    a, b = tmp_path / "o.csv", tmp_path / "p.csv"
    ORIGINAL.to_csv(a, index=False)
    RELEASED.to_csv(b, index=False)
    js, html = tmp_path / "ev.json", tmp_path / "ev.html"
    args = ["evaluate", "--original", str(a), "--protected", str(b), "--json", str(js)]
    res = runner.invoke(app, [*args, "--html", str(html), "--isolation-t", "3", "--quiet"])
    assert res.exit_code == 0, res.output
    iso = json.loads(js.read_text())["isolation"]
    assert iso["t"] == 3 and iso["c"] == 2.0
    assert iso["isolated_by_own"] == isolation_risk(ORIGINAL, RELEASED, t=3).isolated_by_own
    page = html.read_text()
    assert "(c, t)-isolation (c = 2, t = 3)" in page
    assert "isolated by their own released record" in page
    js.unlink()
    res = runner.invoke(app, [*args, "--isolation-c", "0.5"])
    assert res.exit_code == 2, res.output
    assert "'c' must be >= 1" in res.output and not js.exists()
