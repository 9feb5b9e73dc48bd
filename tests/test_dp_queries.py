"""Bounded queries: sensitivity from declared bounds, clamping, contribution bounds, releases."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sdckit import dp
from sdckit.dp import Accountant, BoundedQuery
from sdckit.errors import DataError, ParameterError


def test_seed003_real_estates_sum(shared_data):
    """PPDP course, "DP practical example": f(D) = 14, removing one record gives 10, 12, 7, 13,
    sensitivity 7, Laplace mechanism Lap(0, 7/eps)."""
    data = pd.read_csv(shared_data / "seeds" / "seed003_dp_real_estates.csv")
    values = data["real_estates"]
    query = dp.sum_query(values, lower=0, upper=7)
    assert query.exact_value == 14
    assert query.sensitivity_value == 7
    neighbours = [dp.sum_query(values.drop(i), 0, 7).exact_value for i in values.index]
    assert neighbours == [10, 12, 7, 13]
    assert max(abs(query.exact_value - v) for v in neighbours) <= query.sensitivity_value
    eps = 0.5
    res = dp.release(query, epsilon=eps, seed=1)
    assert res.parameters["scale"] == 14.0  # 7 / 0.5, exactly
    assert res.parameters["sensitivity"] == 7.0
    # the released answers follow 14 + Lap(0, 7/eps): a vector of 20000 copies of the query
    copies = BoundedQuery(
        "sum", np.full(20_000, query.grid_value[0]), query.granularity, query.sensitivity,
        query.l2_sensitivity,
    )  # fmt: skip
    answers = dp.release(copies, epsilon=eps, seed=2).value
    assert stats.kstest(answers - 14, stats.laplace(scale=7 / eps).cdf).pvalue > 1e-3


def test_sum_clamps_to_the_declared_bounds():
    query = dp.sum_query([-5.0, 3.0, 100.0, 2.5], lower=0, upper=10)
    assert query.exact_value == 15.5  # 0 + 3 + 10 + 2.5
    assert query.sensitivity_value == 10
    assert dp.sum_query([-5.0, -1.0], lower=-2, upper=1).sensitivity_value == 2


def test_sum_with_integer_data_uses_a_fine_power_of_two_grid():
    query = dp.sum_query([1, 2, 3], 0, 1000)
    assert query.granularity == Fraction(1, 2048)  # largest 2^j <= 1000 / 2^20 = 0.00095
    assert query.exact_value == 6


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=30),
    lo=st.floats(-100, 0),
    width=st.floats(0.5, 200),
)
def test_sum_sensitivity_bounds_every_neighbour(values, lo, width):
    hi = lo + width
    query = dp.sum_query(values, lo, hi)
    step = float(query.granularity)
    clipped = np.clip(values, lo, hi)
    # clamped into [lo, hi] (up to half a grid step of rounding per value)
    assert abs(float(query.exact_value) - clipped.sum()) <= len(values) * step / 2 + 1e-9
    for i in range(len(values)):  # remove each record in turn: never beyond the sensitivity
        rest = values[:i] + values[i + 1 :]
        other = dp.sum_query(rest, lo, hi) if rest else None
        other_grid = 0 if other is None else int(other.grid_value[0])
        assert abs(int(query.grid_value[0]) - other_grid) <= query.sensitivity


@settings(max_examples=40, deadline=None)
@given(
    persons=st.lists(st.integers(0, 5), min_size=1, max_size=25),
    m=st.integers(1, 3),
    data=st.data(),
)
def test_contribution_bound_limits_what_one_person_changes(persons, m, data):
    values = data.draw(st.lists(st.floats(0, 10), min_size=len(persons), max_size=len(persons)))
    full = dp.sum_query(values, 0, 10, persons=persons, max_contributions=m)
    count = dp.count_query(values, persons=persons, max_contributions=m)
    assert full.sensitivity_value == 10 * m and count.sensitivity == m
    for person in set(persons):  # remove one person, all of their records
        keep = [i for i, p in enumerate(persons) if p != person]
        rest_values = [values[i] for i in keep]
        rest_persons = [persons[i] for i in keep]
        if keep:
            rest = dp.sum_query(rest_values, 0, 10, persons=rest_persons, max_contributions=m)
            rest_count = dp.count_query(rest_values, persons=rest_persons, max_contributions=m)
            rest_grid, rest_n = int(rest.grid_value[0]), int(rest_count.grid_value[0])
        else:
            rest_grid, rest_n = 0, 0
        assert abs(int(full.grid_value[0]) - rest_grid) <= full.sensitivity
        assert abs(int(count.grid_value[0]) - rest_n) <= count.sensitivity


def test_count_truncates_each_person_to_max_contributions():
    query = dp.count_query(["r1", "r2", "r3", "r4"], persons=[1, 1, 1, 2], max_contributions=2)
    assert query.exact_value == 3 and query.sensitivity == 2
    assert dp.count_query(pd.DataFrame({"a": range(7)})).exact_value == 7


def test_histogram_categories_and_bins():
    query = dp.histogram_query(["x", "y", "x", "w"], categories=["x", "y", "z"])
    assert query.grid_value.tolist() == [2, 1, 0]  # "w" is outside the declared domain
    assert query.labels == ("x", "y", "z") and query.sensitivity == 1
    query = dp.histogram_query([0.5, 1.5, 2.0, 9.0], bins=[0, 1, 2])
    assert query.grid_value.tolist() == [1, 2]  # the last bin includes 2.0; 9.0 is outside
    res = dp.release(query, epsilon=1.0, seed=1)
    assert list(res.value.index) == ["[0, 1)", "[1, 2]"]


def test_histogram_categories_match_by_text_and_skip_missing_values():
    values = pd.Series(["1", "2", None, "2", "x"], dtype="str")
    query = dp.histogram_query(values, categories=[1, 2, ""])
    assert query.grid_value.tolist() == [1, 2, 0]  # None is in no category, "" included
    query = dp.histogram_query([1.0, 2.0, 2.0, float("nan")], categories=[2, 1])
    assert query.grid_value.tolist() == [2, 1]
    query = dp.histogram_query(pd.Categorical(["b", "a", "b"]), categories=["a", "b"])
    assert query.grid_value.tolist() == [1, 2]
    with pytest.raises(ParameterError, match="distinct as text"):
        dp.histogram_query(["1"], categories=[1, "1"])


def test_histogram_release_distribution():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 20_000, size=50_000)
    query = dp.histogram_query(values, categories=list(range(20_000)))
    res = dp.release(query, epsilon=0.5, seed=7)
    noise = res.value.to_numpy() - query.grid_value
    # discrete Laplace of scale 1 / 0.5 = 2: P(z) = (1 - p) / (1 + p) p^|z|, p = e^-1/2
    p = np.exp(-0.5)
    support = np.arange(-12, 13)
    pmf = (1 - p) / (1 + p) * p ** np.abs(support)
    observed = np.append([np.sum(noise == z) for z in support], np.sum(np.abs(noise) > 12))
    expected = np.append(pmf, 1 - pmf.sum()) * noise.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_release_gaussian_and_costs():
    query = dp.count_query(range(100))
    acct = Accountant(1.0, 1e-6, composition="zcdp")
    res = dp.release(query, rho=0.005, mechanism="gaussian", accountant=acct, seed=1)
    assert res.parameters["sigma"] == pytest.approx(10.0)  # 1 / sqrt(2 * 0.005)
    assert isinstance(res.value, int) and acct.spent().rho == pytest.approx(0.005)


def test_dp_mean_charges_once_and_stays_in_bounds():
    acct = Accountant(2.0)
    values = np.linspace(0, 10, 1000)
    res = dp.dp_mean(values, 0, 10, 1.0, accountant=acct, seed=3)
    assert len(acct.ledger) == 1 and acct.spent().epsilon == 1.0
    assert 0 <= res.value <= 10
    assert res.value == pytest.approx(5.0, abs=0.2)  # sum noise ~ 20, count noise ~ 2
    assert res.parameters["sum"]["scale"] == 20.0 and res.parameters["count"]["scale"] == 2.0
    tiny = dp.dp_mean([1.0], 0, 10, 0.01, seed=4)
    assert 0 <= tiny.value <= 10


def test_dp_count_sum_histogram_wrappers():
    assert isinstance(dp.dp_count([1, 2, 3], 1.0, seed=1).value, int)
    assert isinstance(dp.dp_sum([1.0, 2.0], 0, 5, 1.0, seed=1).value, float)
    res = dp.dp_histogram(["a", "b"], 1.0, categories=["a", "b"], seed=1)
    assert list(res.value.index) == ["a", "b"]
    res = dp.dp_sum([1.0, 2.0], 0, 5, mechanism="gaussian", epsilon=1.0, delta=1e-6, seed=1)
    assert res.cost.delta == 1e-6


def test_dp_quantile_finds_the_median_with_a_large_epsilon():
    values = np.arange(101.0)  # median 50: the interval [50, 51)
    res = dp.dp_quantile(values, 0.5, 0, 100, epsilon=20.0, seed=5)
    assert abs(res.value - 50.0) <= 2.0
    assert res.parameters["sensitivity"] == 1  # q = 1/2: m * max(a, b - a) = 1
    low = dp.dp_quantile(values, 0.1, 0, 100, epsilon=20.0, seed=6)
    assert abs(low.value - 10.0) <= 2.0


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: dp.sum_query([1.0], 5, 5), ParameterError),
        (lambda: dp.sum_query([1.0, float("nan")], 0, 5), DataError),
        (lambda: dp.sum_query(["a"], 0, 5), DataError),
        (lambda: dp.sum_query([1.0], 0, 5, granularity=0.1), ParameterError),
        (lambda: dp.count_query(5), DataError),
        (lambda: dp.count_query([1, 2], persons=[1]), DataError),
        (lambda: dp.count_query([1, 2], persons=[1, None]), DataError),
        (lambda: dp.count_query([1], max_contributions=0), ParameterError),
        (lambda: dp.histogram_query(["a"]), ParameterError),
        (lambda: dp.histogram_query(["a"], ["a"], bins=[0, 1]), ParameterError),
        (lambda: dp.histogram_query([1.0], bins=[1, 0]), ParameterError),
        (lambda: dp.release(dp.count_query([1]), epsilon=1.0, mechanism="cauchy"), ParameterError),
        (lambda: dp.release(dp.count_query([1]), epsilon=1.0, rho=0.1), ParameterError),
        (lambda: dp.release(dp.count_query([1])), ParameterError),
        (lambda: dp.release("count", epsilon=1.0), ParameterError),
        (lambda: dp.dp_quantile([1.0], 1.5, 0, 1, 1.0), ParameterError),
        (lambda: dp.dp_quantile([1.0], 0.5, 0, 1, 1.0, granularity=3), ParameterError),
    ],
)
def test_bad_query_input(call, error):
    with pytest.raises(error):
        call()
