"""The frequency-set engine: published Adult facts, roll-up, and the mixed-radix overflow path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.core import frequency as freq
from sdckit.core.frequency import frequency_set, group_keys
from sdckit.datasets import ADULT_COLUMNS, load_adult
from sdckit.errors import DataError
from sdckit.risk.reidentification import marketer_risk

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def adult():
    return load_adult()


@pytest.fixture(scope="module")
def adult_base(adult):
    """Ungeneralized frequency set of Adult, all 9 QIs, with occupation histograms too."""
    df, hier = adult
    qis = [c for c in ADULT_COLUMNS if c != "occupation"]
    return frequency_set(df, qis, sensitive=["occupation"], hierarchies=hier)


# ------------------------------------------------------------------ published facts


def test_adult_nine_qis_classes_uniques_and_marketer(adult):
    """Adult, 9 QIs ungeneralized: 19,502 classes, 15,512 sample uniques, J/n = 0.646575.

    The figures ARX shows for Adult in its risk view (sample uniques 51.43%); checked here
    against an independent pandas group-by as well.
    """
    df, _ = adult
    fs = frequency_set(df, list(ADULT_COLUMNS))
    assert fs.n_records == 30162
    assert fs.n_classes == 19502
    assert int((fs.counts == 1).sum()) == 15512
    assert round(15512 / 30162 * 100, 2) == 51.43
    assert round(marketer_risk(fs.counts), 6) == 0.646575
    assert marketer_risk(fs.counts) == 19502 / 30162
    sizes = df.groupby(list(ADULT_COLUMNS), sort=True).size().to_numpy()
    assert np.array_equal(fs.counts, sizes)  # same classes in the same (lexicographic) order
    assert int(fs.counts.max()) == 45  # prosecutor min risk 1/45 (ARX: 2.22222%)


def test_classes_carry_sensitive_histograms_and_weights():
    df = pd.DataFrame(
        {
            "a": ["x", "x", "y", "x", "y", None],
            "s": ["p", "q", "p", "p", "p", "q"],
            "w": ["1.5", "2", "3", "4", "5", "6"],
        }
    )
    fs = frequency_set(df, ["a"], sensitive=["s"], weights="w")
    # missing is its own value "" and sorts first: classes "", "x", "y"
    assert fs.labels()["a"].tolist() == ["", "x", "y"]
    assert fs.counts.tolist() == [1, 3, 2]
    assert fs.histogram("s").toarray().tolist() == [[0, 1], [2, 1], [2, 0]]
    assert fs.weights.tolist() == [6.0, 7.5, 8.0]
    assert fs.row_class().tolist() == [1, 1, 2, 1, 2, 0]
    with pytest.raises(DataError, match="'t' is not a sensitive attribute"):
        fs.histogram("t")
    with pytest.raises(DataError, match=r"'zz'.*not found"):
        frequency_set(df, ["zz"])
    bad = df.assign(w=["1", "2", "x", "4", "5", "6"])
    with pytest.raises(DataError, match=r"weight column 'w'.*row 3 has 'x'"):
        frequency_set(bad, ["a"], weights="w")


def test_rollup_errors_name_the_column(adult_base):
    with pytest.raises(DataError, match=r"level 9 does not exist for 'sex'"):
        adult_base.rollup([9, 0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(DataError, match="expected 8 levels"):
        adult_base.rollup([0, 0])
    up = adult_base.rollup([1, 0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(DataError, match=r"cannot roll up 'sex' from level 1 down to level 0"):
        up.rollup([0] * 8)


# ------------------------------------------------------------------ roll-up == direct build


def _assert_same(a, b) -> None:
    assert a.levels == b.levels
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.counts, b.counts)
    assert np.array_equal(a.row_class(), b.row_class())
    for name in b.sensitive:
        assert (a.histogram(name) != b.histogram(name)).nnz == 0


def _levels(draw, fs, low=None):
    low = low or (0,) * len(fs.quasi_identifiers)
    return tuple(
        draw(st.integers(lo, q.height - 1)) for q, lo in zip(fs.quasi_identifiers, low, strict=True)
    )


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rollup_equals_direct_build_at_random_levels(adult, adult_base, data):
    """Rolling a finer frequency set up gives exactly the set built from the rows (Flash)."""
    df, hier = adult
    mid = _levels(data.draw, adult_base)
    top = _levels(data.draw, adult_base, mid)
    qis = list(adult_base.names)
    direct_mid = frequency_set(df, qis, ["occupation"], hierarchies=hier, levels=mid)
    direct_top = frequency_set(df, qis, ["occupation"], hierarchies=hier, levels=top)
    _assert_same(adult_base.rollup(mid), direct_mid)
    _assert_same(adult_base.rollup(mid).rollup(top), direct_top)
    _assert_same(direct_mid.rollup(top), direct_top)


@SETTINGS
@given(data=st.data())
def test_project_equals_direct_build(data):
    n = data.draw(st.integers(1, 40))
    cols = {c: data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)) for c in "abcd"}
    df = pd.DataFrame(cols)
    full = frequency_set(df, list("abcd"))
    subset = data.draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True))
    subset = sorted(subset, key="abcd".index)
    _assert_same(full.project(subset), frequency_set(df, subset))


# ------------------------------------------------------------------ mixed radix and overflow


def _pandas_groups(codes: list[np.ndarray]) -> np.ndarray:
    frame = pd.DataFrame({f"c{i}": c for i, c in enumerate(codes)})
    return frame.groupby(list(frame.columns), sort=True).ngroup().to_numpy()


def test_overflow_path_many_high_cardinality_columns():
    """9 columns of cardinality 200,000: radix 5e47 overflows 62 bits several times."""
    rng = np.random.default_rng(0)
    n = 20000
    cards = [200_000] * 9
    # few distinct values per column, so rows collide and classes have several rows
    codes = [rng.choice(rng.integers(0, c, 3), n).astype(np.int32) for c in cards]
    group, n_groups, rep = group_keys(codes, cards)
    expected = _pandas_groups(codes)
    assert np.array_equal(group, expected)
    assert n_groups == expected.max() + 1
    assert np.array_equal(group[rep], np.arange(n_groups))


@SETTINGS
@given(data=st.data())
def test_group_keys_equals_pandas_groupby(data):
    """Dense table, sort path and overflow compaction all give pandas' lexicographic groups."""
    n = data.draw(st.integers(1, 60))
    ncol = data.draw(st.integers(1, 6))
    cards = data.draw(
        st.lists(st.sampled_from([1, 2, 7, 1000, 2**20, 2**31 - 1]), min_size=ncol, max_size=ncol)
    )
    codes = [
        np.asarray(data.draw(st.lists(st.integers(0, min(c - 1, 5)), min_size=n, max_size=n)))
        * (c // 6 or 1)
        for c in cards
    ]
    codes = [np.minimum(c, card - 1).astype(np.int32) for c, card in zip(codes, cards, strict=True)]
    group, n_groups, rep = group_keys(codes, cards)
    assert np.array_equal(group, _pandas_groups(codes))
    assert n_groups == len(rep) and np.array_equal(group[rep], np.arange(n_groups))


def test_dense_table_is_only_used_for_small_key_spaces(monkeypatch):
    """Both grouping paths agree; the bincount table is used only below its size bound."""
    rng = np.random.default_rng(1)
    codes = [rng.integers(0, 50, 500).astype(np.int32) for _ in range(2)]
    dense = group_keys(codes, [50, 50])  # radix 2,500 <= floor: table
    monkeypatch.setattr(freq, "_DENSE_FLOOR", 0)
    monkeypatch.setattr(freq, "_DENSE_FACTOR", 0)
    sorted_path = group_keys(codes, [50, 50])
    assert np.array_equal(dense[0], sorted_path[0]) and dense[1] == sorted_path[1]


# the encoding fast paths (Arrow dictionary, categorical codes, dict lookup of leaves) must
# give exactly what the general path gives: pd.factorize of the column, as_text of its
# uniques, get_indexer on the leaves
def _encode_via_factorize(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    from sdckit.core.encoding import as_text

    raw, uniques = pd.factorize(s, use_na_sentinel=True)
    texts = as_text(pd.Series(uniques, dtype=s.dtype if len(uniques) else None))
    if (raw < 0).any():
        texts = np.append(texts, "")
        raw = np.where(raw < 0, len(texts) - 1, raw)
    sub, values = pd.factorize(texts, sort=True, use_na_sentinel=False)
    return sub.astype(np.int32)[raw], np.asarray(values, dtype=object)


@pytest.mark.parametrize(
    "values",
    [
        pd.Categorical.from_codes([4, 0, 0, 2, 4], categories=["e", "d", "c", "b", "a", "*"]),
        pd.Categorical.from_codes([-1, 2, 1, 2, -1], categories=[3.0, 1.0, 2.5, 7.0]),
        pd.Categorical.from_codes([0, 2, 2], categories=[10, 2, 33]),
        pd.Categorical(["x", None, "y", "x"]),
        pd.Categorical.from_codes([1, 0, 1], categories=["", "a", "b"]),
        pd.Categorical([True, False, True]),
    ],
)
def test_encode_categorical_equals_factorize_path(values):
    from sdckit.core.encoding import encode

    s = pd.Series(values)
    enc = encode(s, "c")
    codes, texts = _encode_via_factorize(s)
    assert enc.codes.dtype == np.int32
    assert np.array_equal(enc.codes, codes)
    assert enc.values.tolist() == texts.tolist()


def test_encode_quasi_identifier_arrow_path_equals_object_path():
    # Adult's columns are Arrow-backed text; the same values as plain objects take the
    # factorize + get_indexer path; a missing value matches the hierarchy's "" leaf
    from sdckit.core.hierarchy import Hierarchy

    df, h = load_adult()
    for c in ADULT_COLUMNS:
        s = df[c]
        assert s.dtype.storage == "pyarrow"
        fast = freq.encode_quasi_identifier(s, c, h[c])
        slow = freq.encode_quasi_identifier(s.astype(object), c, h[c])
        assert np.array_equal(fast.codes, slow.codes) and fast.codes.dtype == np.int32
    hier = Hierarchy([["a", "*"], ["", "*"], ["b", "*"]], name="x")
    s = pd.Series(["b", None, "a", "b"], dtype="str")
    assert freq.encode_quasi_identifier(s, "x", hier).codes.tolist() == [2, 1, 0, 2]
    with pytest.raises(Exception, match="not in"):
        freq.encode_quasi_identifier(pd.Series(["a", "zz"], dtype="str"), "x", hier)


_CELLS = st.one_of(
    st.sampled_from(["a", "b", "", "1", "1.5"]), st.none(), st.sampled_from([1.0, 1.5, 2.0])
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(_CELLS, min_size=0, max_size=12), min_size=1, max_size=3),
    st.sampled_from(["object", "str", "float"]),
)
def test_text_codes_equal_factorizing_the_stacked_texts(columns, kind) -> None:
    """One code space over several columns, each encoded on its own storage: the codes of
    factorizing all their canonical texts together (sorted: the same numbers; unsorted: the
    same grouping)."""
    from sdckit.core.encoding import as_text, text_codes

    if kind == "float":
        series = [pd.Series([v if isinstance(v, float) else np.nan for v in c]) for c in columns]
    elif kind == "str":
        series = [
            pd.Series([None if v is None else str(v) for v in c], dtype="str") for c in columns
        ]
    else:
        series = [pd.Series(c, dtype=object) for c in columns]
    texts = np.concatenate([as_text(s) for s in series]) if series else np.zeros(0)
    expected, uniques = pd.factorize(texts, sort=True)
    got, distinct = text_codes(*series, sort=True)
    assert distinct == len(uniques)
    assert np.array_equal(np.concatenate(got) if got else np.zeros(0), expected)
    unsorted, _ = text_codes(*series)
    flat = np.concatenate(unsorted)
    # the same partition: equal codes exactly where equal texts
    assert np.array_equal(flat[:, None] == flat[None, :], expected[:, None] == expected[None, :])
