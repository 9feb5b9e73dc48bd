"""Matching re-identification risk (sdckit.risk.matching) against hand values and brute force."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.hierarchy import Hierarchy, read_hierarchy
from sdckit.errors import DataError
from sdckit.risk.matching import matching_risk

ARX = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arx"


# -- an independent, pairwise reference (O(n^2), plain Python) --------------------------------
def _compatible(v: str, w: str, h: Hierarchy | None) -> bool:
    if w in ("*", "") or w == v:
        return True
    if h is not None and v in set(h.leaves):
        row = list(h.leaves).index(v)
        if w in set(h.table[row]):
            return True
    m = re.fullmatch(r"([\[\(])([-\d.]+), ([-\d.]+)([\]\)])", w)
    if m:
        x = float(v)
        lo, hi = float(m.group(2)), float(m.group(3))
        ok_lo = x >= lo if m.group(1) == "[" else x > lo
        ok_hi = x <= hi if m.group(4) == "]" else x < hi
        return ok_lo and ok_hi
    return False


def _reference(orig: list[tuple], prot: list[tuple], hs: list[Hierarchy | None]) -> np.ndarray:
    n = len(orig)
    blank = [all(w in ("*", "") for w in g) for g in prot]
    s = sum(blank)
    out = np.zeros(n)
    for i in range(n):
        comp = [
            j
            for j in range(n)
            if not blank[j]
            and all(_compatible(v, w, h) for v, w, h in zip(orig[i], prot[j], hs, strict=True))
        ]
        if comp:
            out[i] = (1.0 / len(comp)) if (i in comp and not blank[i]) else 0.0
        else:
            out[i] = 1.0 / s if blank[i] else 0.0
    return out


def _frames(orig, prot, names):
    return (
        pd.DataFrame(orig, columns=names),
        pd.DataFrame(prot, columns=names),
    )


# -- hand-computed example ------------------------------------------------------------------
AGE = Hierarchy(
    [
        ["20", "[20, 30)", "*"],
        ["25", "[20, 30)", "*"],
        ["30", "[30, 40)", "*"],
        ["35", "[30, 40)", "*"],
    ],
    name="age",
)


def test_hand_example_generalization_and_suppression():
    # originals:   (20,m) (25,m) (30,f) (35,f) (30,m) (35,m)
    # released:    ([20,30),m) ([20,30),m) ([30,40),f) ([30,40),f) (*,*) ([30,40),m)
    orig = [("20", "m"), ("25", "m"), ("30", "f"), ("35", "f"), ("30", "m"), ("35", "m")]
    prot = [
        ("[20, 30)", "m"),
        ("[20, 30)", "m"),
        ("[30, 40)", "f"),
        ("[30, 40)", "f"),
        ("*", "*"),
        ("[30, 40)", "m"),
    ]
    o, p = _frames(orig, prot, ["age", "sex"])
    m = matching_risk(o, p, ["age", "sex"], {"age": AGE})
    # records 0,1: class of 2 -> 1/2 each; 2,3: 1/2 each; record 5: its class {5} -> 1;
    # record 4 (suppressed): (30, m) still matches record 5's released tuple -> not found (0)
    np.testing.assert_allclose(m.risk, [0.5, 0.5, 0.5, 0.5, 0.0, 1.0])
    assert m.average == pytest.approx(3.0 / 6.0)
    assert m.highest == 1.0
    assert m.certain == pytest.approx(1 / 6)
    np.testing.assert_array_equal(m.candidates, [2, 2, 2, 2, 1, 1])


def test_suppressed_record_found_among_suppressed_when_nothing_else_matches():
    orig = [("20", "m"), ("25", "m"), ("35", "f"), ("30", "f")]
    prot = [("[20, 30)", "m"), ("[20, 30)", "m"), ("*", "*"), ("*", "*")]
    o, p = _frames(orig, prot, ["age", "sex"])
    m = matching_risk(o, p, ["age", "sex"], {"age": AGE})
    np.testing.assert_allclose(m.risk, [0.5, 0.5, 0.5, 0.5])


def test_local_suppression_is_a_wildcard_for_every_value():
    # sdcMicro counts a missing key value as matching every category
    orig = [("a", "x"), ("a", "y"), ("b", "x"), ("b", "x")]
    prot = [("a", ""), ("a", "y"), ("b", "x"), ("b", "x")]
    o, p = _frames(orig, prot, ["k1", "k2"])
    m = matching_risk(o, p, ["k1", "k2"])
    # record 0 (a,x): compatible with (a,"") only -> 1; record 1 (a,y): (a,"") and (a,y) -> 1/2
    np.testing.assert_allclose(m.risk, [1.0, 0.5, 0.5, 0.5])


def test_pram_changed_value_is_not_matched():
    orig = [("a",), ("a",), ("b",)]
    prot = [("b",), ("a",), ("b",)]
    o, p = _frames(orig, prot, ["k"])
    m = matching_risk(o, p, ["k"])
    # record 0 (a): candidates {1} but its own record says b -> 0; record 1: {1} -> 1;
    # record 2 (b): candidates {0, 2} -> 1/2
    np.testing.assert_allclose(m.risk, [0.0, 1.0, 0.5])
    np.testing.assert_array_equal(m.matchable, [False, True, True])


def test_intervals_closed_and_half_open():
    orig = [("10",), ("20",), ("20",), ("30",)]
    prot = [("[10, 20)",), ("[20, 30]",), ("[20, 30]",), ("[20, 30]",)]
    o, p = _frames(orig, prot, ["x"])
    m = matching_risk(o, p, ["x"])
    np.testing.assert_allclose(m.risk, [1.0, 1 / 3, 1 / 3, 1 / 3])


def test_perturbed_numbers_are_an_error_naming_column_and_value():
    o = pd.DataFrame({"age": [30, 40, 50]})
    p = pd.DataFrame({"age": [31.7, 40, 50]})
    with pytest.raises(DataError, match=r"column 'age'.*31\.7.*distance-based"):
        matching_risk(o, p, ["age"])


def test_unaligned_files_are_an_error():
    with pytest.raises(DataError, match="records"):
        matching_risk(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1]}), ["a"])


# -- brute force on random releases -----------------------------------------------------------
@st.composite
def _releases(draw):
    n = draw(st.integers(1, 25))
    ages = draw(st.lists(st.sampled_from(["20", "25", "30", "35"]), min_size=n, max_size=n))
    sexes = draw(st.lists(st.sampled_from(["m", "f"]), min_size=n, max_size=n))
    orig, prot = [], []
    for a, s in zip(ages, sexes, strict=True):
        kind = draw(st.sampled_from(["keep", "gen", "top", "iv", "pram", "blank", "cell"]))
        pa, ps = a, s
        if kind == "gen":
            pa = AGE.generalize([a], 1)[0]
        elif kind == "top":
            pa = "*"
        elif kind == "iv":
            lo = draw(st.sampled_from([15, 20, 25, 30]))
            pa = f"[{lo}, {lo + 10}{draw(st.sampled_from([')', ']']))}"
        elif kind == "pram":
            # PRAM draws from the categories of the data (a released category the original
            # lacks is an error: see test_perturbed_numbers_are_an_error...)
            pa = draw(st.sampled_from(ages))
            ps = draw(st.sampled_from(sexes))
        elif kind == "blank":
            pa, ps = "*", "*"
        elif kind == "cell":
            ps = ""
        orig.append((a, s))
        prot.append((pa, ps))
    return orig, prot


@settings(max_examples=300, deadline=None)
@given(_releases())
def test_equals_pairwise_reference(release):
    orig, prot = release
    o, p = _frames(orig, prot, ["age", "sex"])
    m = matching_risk(o, p, ["age", "sex"], {"age": AGE})
    np.testing.assert_allclose(m.risk, _reference(orig, prot, [AGE, None]), atol=1e-12)


@pytest.mark.skipif(not ARX.is_dir(), reason="shared ARX data absent")
def test_global_recoding_of_adult_gives_one_over_class_size():
    d = pd.read_csv(ARX / "adult_subset.csv", sep=";")
    qi = ["sex", "age", "race", "marital-status", "education", "native-country"]
    hs = {c: read_hierarchy(ARX / f"adult_hierarchy_{c}.csv", name=c) for c in qi}
    levels = {
        "sex": 0,
        "age": 2,
        "race": 1,
        "marital-status": 1,
        "education": 1,
        "native-country": 1,
    }
    p = d.copy()
    for c in qi:
        p[c] = hs[c].generalize(d[c], levels[c])
    m = matching_risk(d, p, qi, hs)
    sizes = p.groupby(qi)[qi[0]].transform("size").to_numpy()
    np.testing.assert_allclose(m.risk, 1.0 / sizes)
    assert m.average == pytest.approx(p.groupby(qi).ngroups / len(p))


# -- the information-loss half of the re-identification scale --------------------------------
def test_relative_entropy_loss_hand_values():
    from sdckit.utility.categorical import relative_entropy_loss

    o = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "u", "u", "u"]})
    # a generalized to one label: everything lost; b constant: carries nothing
    p = pd.DataFrame({"a": ["*", "*", "*", "*"], "b": ["u", "u", "u", "u"]})
    r = relative_entropy_loss(o, p, ["a", "b"])
    assert r["relative_ebil"] == pytest.approx(1.0)
    assert r["by_column"] == {"a": pytest.approx(1.0), "b": None}
    # half the records suppressed: H(a | a') = (2/4) * 1 bit (the '*' pair is x or y) -> 0.5
    p2 = pd.DataFrame({"a": ["x", "*", "y", "*"], "b": ["u"] * 4})
    assert relative_entropy_loss(o, p2, ["a"])["relative_ebil"] == pytest.approx(0.5)
    assert relative_entropy_loss(o, o, ["a", "b"])["relative_ebil"] == 0.0


def test_evaluate_reports_the_reidentification_scale_for_categorical_qis():
    from sdckit.evaluation.protected_file import evaluate
    from sdckit.risk.matching import reidentification_scale

    rng = np.random.default_rng(5)
    o = pd.DataFrame(
        {
            "region": rng.choice(["n", "s", "e", "w"], 200),
            "sex": rng.choice(["m", "f"], 200),
            "income": rng.normal(100, 15, 200),
        }
    )
    p = o.copy()
    flip = rng.random(200) < 0.2
    p.loc[flip, "region"] = rng.choice(["n", "s", "e", "w"], int(flip.sum()))
    doc = evaluate(o, p, quasi_identifiers=["region", "sex"])
    expected = reidentification_scale(o, p, ["region", "sex"])
    assert doc["reidentification"]["disclosure_risk"] == pytest.approx(expected["disclosure_risk"])
    assert doc["reidentification"]["information_loss"] == pytest.approx(
        expected["information_loss"]
    )
    # numeric-only intruder attributes: the matching scale is not reported
    assert "reidentification" not in evaluate(
        o, p, quasi_identifiers=["income"], columns=["income"]
    )


def test_mondrian_boxes_on_two_numeric_qis_equal_pairwise_reference():
    """Many overlapping intervals per column: both join directions are used and must agree."""
    import sdckit
    from sdckit.core.schema import Schema
    from sdckit.models import KAnonymity

    rng = np.random.default_rng(11)
    d = pd.DataFrame({"a": rng.integers(0, 60, 300), "b": rng.integers(0, 40, 300)})
    schema = Schema.from_roles(quasi_identifying=["a", "b"], types={"a": "integer", "b": "integer"})
    p = sdckit.anonymize(d, schema, [KAnonymity(3)], algorithm="mondrian", risk=False).data
    orig = [tuple(map(str, r)) for r in d.itertuples(index=False)]
    prot = [tuple(map(str, r)) for r in p.itertuples(index=False)]
    m = matching_risk(d, p, ["a", "b"])
    np.testing.assert_allclose(m.risk, _reference(orig, prot, [None, None]), atol=1e-12)
    assert m.highest <= 1 / 3 + 1e-12


def test_too_many_interval_pairs_is_a_clear_error(monkeypatch):
    import sdckit.risk.matching as mr

    monkeypatch.setattr(mr, "_MAX_INTERVAL_PAIRS", 3)
    o = pd.DataFrame({"x": [1, 2, 3, 4]})
    p = pd.DataFrame({"x": ["[1, 4]", "[1, 4]", "[1, 4]", "[1, 4]"]})
    with pytest.raises(DataError, match=r"column 'x'.*4 \(value, interval\) pairs"):
        mr.matching_risk(o, p, ["x"])
