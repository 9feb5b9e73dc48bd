"""Tests: the pandas <-> Arrow conversions of the Spark engine's workers, over the dtypes
pandas and pyarrow give a column.

A worker of :mod:`sdckit.spark.mask` receives Arrow batches as pandas frames, joins the
batches of a block (:func:`~sdckit.spark.frame._joined`), converts them to the local
engine's dtypes (:func:`~sdckit.spark.frame._local_frame`), releases them with the local
code and converts the result back (:func:`~sdckit.spark.frame._spark_frame`), which PySpark
turns into Arrow arrays. Text columns come as ``object``, pandas' ``str`` (pandas 3, or
``future.infer_string``), ``string[pyarrow]``, ``string[python]`` or ``ArrowDtype``; numbers
as NumPy, nullable ``Int64``/``Float64`` or Arrow-backed; categories as ``category``. The
conversions are tested directly (no Spark), then once through Spark; last, the installed
pandas, pyarrow and NumPy satisfy the lower bounds pyproject declares.
"""

from __future__ import annotations

import json
import tomllib
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sdckit.masking.blocks import changed, release_plan
from sdckit.masking.pipeline import Pipeline
from sdckit.masking.stats import PandasStats

#: Text dtypes a batch's column can have (name -> dtype).
TEXT_DTYPES = {
    "object": object,
    "str": "str",  # pandas' default: ``str`` (pandas 3, infer_string) or ``object``
    "string[pyarrow]": "string[pyarrow]",
    "string[python]": "string[python]",
    "arrow": pd.ArrowDtype(pa.string()),
    "category": "category",
}


def _text(values: list, dtype: object, index: range | None = None) -> pd.Series:
    return pd.Series(values, dtype=dtype, index=index)


def _arrow_array(series: pd.Series, spark_kind: str) -> pa.Array:
    """What PySpark makes of a column a worker returns (its own function where it has one;
    else the same steps: categories as their values, ``__arrow_array__`` without a mask)."""
    types = {
        "string": pa.string(),
        "long": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
    }
    try:
        from pyspark.sql import types as T
        from pyspark.sql.pandas.conversion import create_arrow_array_from_pandas
    except ImportError:
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(series.dtype.categories.dtype)
        mask = None if hasattr(series.array, "__arrow_array__") else series.isnull()
        return pa.Array.from_pandas(series, mask=mask, type=types[spark_kind])
    spark = {
        "string": T.StringType(),
        "long": T.LongType(),
        "double": T.DoubleType(),
        "boolean": T.BooleanType(),
    }
    return create_arrow_array_from_pandas(series, spark[spark_kind])


@pytest.mark.parametrize("name", list(TEXT_DTYPES))
def test_joined_batches_give_one_arrow_array_per_text_column(name):
    """Batches of pyarrow-backed strings concatenated hold a ChunkedArray, which PySpark
    cannot send back; the joined frame holds one array per column, values kept."""
    from sdckit.spark.frame import _joined

    dtype = TEXT_DTYPES[name]
    first = pd.DataFrame({"t": _text(["a", None, "c"], dtype), "x": [1.0, 2.0, np.nan]})
    second = pd.DataFrame(
        {"t": _text(["d", "a", None], dtype, range(3, 6)), "x": [4.0, 5.0, 6.0]}, index=range(3, 6)
    )
    joined = _joined([first, second])
    if name != "category":  # batches' own categories: pandas.concat gives their values' dtype
        assert joined["t"].dtype == first["t"].dtype
    for c, kind in (("t", "string"), ("x", "double")):
        array = _arrow_array(joined[c], kind)
        assert isinstance(array, pa.Array) and not isinstance(array, pa.ChunkedArray), c
    assert _arrow_array(joined["t"], "string").to_pylist() == ["a", None, "c", "d", "a", None]
    assert _joined([first]) is first  # one batch: as it came


def test_arrow_backed_columns_concatenated_are_chunked_which_joined_repairs():
    """The behaviour :func:`_joined` exists for (pyarrow-backed strings: ``pandas.concat``
    keeps the chunks)."""
    from sdckit.spark.frame import _joined

    batches = [pd.DataFrame({"t": _text([v], "string[pyarrow]")}) for v in ("a", "b")]
    assert isinstance(_arrow_array(pd.concat(batches)["t"], "string"), pa.ChunkedArray)
    joined = _arrow_array(_joined(batches)["t"], "string")
    assert not isinstance(joined, pa.ChunkedArray) and joined.to_pylist() == ["a", "b"]


@pytest.mark.parametrize(
    "column, want",
    [
        (pd.Series([1.0, np.nan, 3.0]), "Int64"),  # Arrow gives floats where a long is null
        (pd.Series([1.0, 2.0, 3.0]), "int64"),
        (pd.Series([1, None, 3], dtype="Int64"), "Int64"),
        (pd.Series([1, 2, 3], dtype="Int64"), "int64"),
        (pd.Series([1, None, 3], dtype=pd.ArrowDtype(pa.int64())), "Int64"),
        (pd.Series([1, 2, 3], dtype=np.int32), "int64"),
    ],
)
def test_local_frame_gives_integer_columns_the_local_engines_dtype(column, want):
    from sdckit.spark.frame import _local_frame

    got = _local_frame(pd.DataFrame({"i": column, "t": ["a", "b", "c"]}), {"i": "long"})
    assert str(got["i"].dtype) == want
    assert got["i"].isna().tolist() == column.isna().tolist()
    assert got["i"].dropna().astype(int).tolist() == column.dropna().astype(int).tolist()
    assert got["t"].tolist() == ["a", "b", "c"]  # the other columns as they came


@pytest.mark.parametrize(
    "column, kind, values",
    [
        (pd.Series([1.5, None], dtype="Float64"), "double", [1.5, None]),
        (pd.Series([1.5, np.nan]), "double", [1.5, None]),
        (pd.Series([2, None], dtype="Int64"), "long", [2, None]),
        (pd.Series([2.0, np.nan]), "long", [2, None]),
        (pd.Series(["3", None], dtype="string[pyarrow]"), "long", [3, None]),
        (pd.Series(["3", None], dtype=object), "double", [3.0, None]),
        (pd.Categorical(["a", None]), "string", ["a", None]),
        (pd.Series(["a", None], dtype="string[pyarrow]"), "string", ["a", None]),
        (pd.Series(["a", None], dtype=pd.ArrowDtype(pa.string())), "string", ["a", None]),
        (pd.Series(["a", np.nan], dtype=object), "string", ["a", None]),
        (pd.Series([True, None], dtype="boolean"), "boolean", [True, None]),
        (pd.Series([True, False], dtype=bool), "boolean", [True, False]),
    ],
)
def test_spark_frame_gives_the_spark_type_with_missing_as_null(column, kind, values):
    """What a worker returns goes to Arrow as the step's output kind, missing values as
    nulls, whatever dtype the local method produced."""
    from sdckit.spark.frame import _spark_frame

    out = _spark_frame(pd.DataFrame({"c": column}), {"c": kind})
    array = _arrow_array(out["c"], kind)
    assert isinstance(array, pa.Array) and not isinstance(array, pa.ChunkedArray)
    assert array.to_pylist() == values


@pytest.mark.parametrize("name", list(TEXT_DTYPES))
def test_changed_compares_values_not_dtypes(name):
    """The per-record change flags (both engines' counts) do not depend on how a column is
    held: text by canonical text, numbers as numbers, missing equal to missing."""
    dtype = TEXT_DTYPES[name]
    before = _text(["a", "b", None, "c"], dtype)
    after = pd.Series(["a", "x", None, None], dtype=object)
    assert changed(before, after).tolist() == [False, True, False, True]
    ints = pd.Series([1, None, 3], dtype="Int64")
    assert changed(ints, pd.Series([1.0, np.nan, 3.5])).tolist() == [False, False, True]
    floats = pd.Series([1.0, None], dtype="Float64")
    assert changed(floats, pd.Series([1.0, 2.0], dtype=pd.ArrowDtype(pa.float64()))).tolist() == [
        False,
        True,
    ]


def test_a_release_does_not_depend_on_the_text_dtype():
    """PRAM and randomized response released on the same records held in every text dtype
    (one plan, the same generators) give the same texts: a block's dtype on a Spark worker
    (Arrow strings) does not change the draws."""
    rng = np.random.default_rng(4)
    values = rng.choice(["north", "south", "east"], 500).astype(object)
    values[[3, 99]] = None
    sexes = rng.choice(["f", "m"], 500)
    base = pd.DataFrame({"region": values, "sex": sexes.astype(object)})
    steps = Pipeline.from_entries(
        [
            {"pram": {"columns": ["region"], "p_diagonal": 0.7}},
            {"randomized_response": {"column": "sex", "insecure_reproducible_noise": True}},
        ]
    ).steps
    plans = [step.plan(PandasStats(base), 9) for step in steps]
    releases: dict[str, list] = {}
    for name, dtype in TEXT_DTYPES.items():
        data = base.astype({"region": dtype, "sex": dtype})
        texts = []
        for plan in plans:
            out, counts = release_plan(plan, data, 9, block_rows=128)
            texts.append([None if pd.isna(v) else str(v) for v in out[plan.columns[0]]])
            texts.append(counts)
        releases[name] = texts
    first = next(iter(releases.values()))
    for name, texts in releases.items():
        assert texts == first, name


@pytest.mark.parametrize("infer", [False, True])
def test_the_conversions_with_and_without_inferred_string_dtype(infer):
    """``future.infer_string`` decides whether pandas holds text as ``object`` or ``str``
    (default from pandas 3, where the option is deprecated): the conversions give the same
    values either way."""
    from sdckit.spark.frame import _joined, _local_frame, _spark_frame

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas 3 deprecates the option
        try:
            context = pd.option_context("future.infer_string", infer)
        except (KeyError, pd.errors.OptionError):
            pytest.skip("this pandas has no future.infer_string")
        with context:
            batches = [
                pd.DataFrame({"t": ["a", None], "i": [1.0, np.nan]}),
                pd.DataFrame({"t": ["b", "c"], "i": [2.0, 3.0]}, index=[2, 3]),
            ]
            local = _local_frame(_joined(batches), {"i": "long"})
            back = _spark_frame(local, {"t": "string", "i": "long"})
    assert _arrow_array(back["t"], "string").to_pylist() == ["a", None, "b", "c"]
    assert _arrow_array(back["i"], "long").to_pylist() == [1, None, 2, 3]


def test_a_spark_round_trip_of_every_dtype_equals_the_local_pipeline(spark):
    """A table holding nullable Int64/Float64, pyarrow and object strings and a categorical
    column, masked on Spark (blocks spanning several Arrow batches) and locally: the same
    values, bit for bit."""
    from sdckit.spark import frame as sf
    from sdckit.spark import mask as sm

    n = 900
    rng = np.random.default_rng(12)
    data = pd.DataFrame(
        {
            "i": pd.array(rng.integers(0, 90, n), dtype="Int64"),
            "f": pd.array(rng.normal(10, 2, n), dtype="Float64"),
            "s": pd.Series(rng.choice(["a", "b", "c"], n), dtype="string[pyarrow]"),
            "o": pd.Series(rng.choice(["x", "y"], n), dtype=object),
            "g": pd.Categorical(rng.choice(["p", "q", "r"], n)),
        }
    )
    data.loc[[5, 400], "i"] = pd.NA
    data.loc[[7, 401], "f"] = pd.NA
    data.loc[[9], "s"] = pd.NA
    methods = [
        {"noise": {"columns": ["f", "i"], "alpha": 0.2}},
        {"pram": {"columns": ["s", "g"], "p_diagonal": 0.7}},
        {"randomized_response": {"column": "o", "insecure_reproducible_noise": True}},
        {"rounding": {"columns": ["i"], "base": 5}},
    ]
    want, records = Pipeline.from_entries(methods).apply(data, seed=5, block_rows=256)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    previous = spark.conf.get(key)
    spark.conf.set(key, "100")
    try:
        sdf = sf.with_row_index(spark.createDataFrame(data))
        res = sm.apply_pipeline_spark(
            sdf.repartition(3), Pipeline.from_entries(methods), 5, block_rows=256
        )
        got = res.data.orderBy(sm.ROW).toPandas().drop(columns=[sm.ROW])
        res.release()
    finally:
        spark.conf.set(key, previous)
    for c in want.columns:
        a, b = got[c], want[c]
        if pd.api.types.is_numeric_dtype(b.dtype):
            x = a.to_numpy(dtype=np.float64, na_value=np.nan)
            y = b.to_numpy(dtype=np.float64, na_value=np.nan)
            assert np.array_equal(np.isnan(x), np.isnan(y)), c
            assert x[~np.isnan(x)].tobytes() == y[~np.isnan(y)].tobytes(), c
        else:
            assert [None if pd.isna(v) else str(v) for v in a] == [
                None if pd.isna(v) else str(v) for v in b
            ], c
    assert json.loads(json.dumps(res.records)) == json.loads(json.dumps(records, default=str))


def test_installed_versions_satisfy_the_lower_bounds_of_pyproject():
    """numpy, pandas and pyarrow (and pyspark, when installed) are at least the versions
    pyproject.toml requires: what the conversions above were written against."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text("utf-8"))
    declared = [
        Requirement(r)
        for r in [
            *project["project"]["dependencies"],
            *project["project"]["optional-dependencies"]["spark"],
        ]
    ]
    wanted = {r.name: r for r in declared if r.name in ("numpy", "pandas", "pyarrow", "pyspark")}
    assert set(wanted) == {"numpy", "pandas", "pyarrow", "pyspark"}
    for name, requirement in wanted.items():
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            assert name == "pyspark", f"{name} is a dependency but not installed"
            continue
        assert requirement.specifier.contains(installed, prereleases=True), (
            f"{name} {installed} does not satisfy {requirement}"
        )
