"""Tests: ``sdckit mask`` on Spark (``engine: spark``, :mod:`sdckit.spark.mask`).

The deterministic methods give the local engine's output record for record (rounding, coding
with fixed or quantile thresholds, recoding with breaks or quantiles, grouping, local
suppression, microaggregation within strata or blocks); the random ones have the statistical
properties the local tests assert, reproducibly for a seed on any partitioning. Spark runs in
local mode (the session-scoped ``spark`` fixture of conftest).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.io import read_table
from sdckit.errors import ConfigError, DataError
from sdckit.masking import Microaggregation, Pipeline
from sdckit.masking import microaggregation as ma
from sdckit.masking.suppression import wildcard_frequencies

N = 2000


class _NoSchema:
    attributes: dict = {}


def _frame(n: int = N, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.lognormal(8, 0.5, n).round(0).astype(int)
    return pd.DataFrame(
        {
            "name": [f"person {i}" for i in range(n)],
            "pid": [f"P{i:05d}" for i in range(n)],
            "income": income,
            "age": (age := rng.integers(18, 90, n)),
            "h": np.round(100 + 0.8 * age + rng.normal(0, 8, n), 1),
            "w": np.round(rng.normal(50, 10, n) + 0.002 * income, 3),
            "region": rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "sex": rng.choice(["f", "m"], n),
            "zip": [f"0{v}" for v in rng.integers(100, 160, n)],
        }
    )


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("spark_mask")
    data = _frame()
    data.loc[[5, 77], "w"] = np.nan  # missing values stay missing
    data.to_csv(folder / "in.csv", index=False)
    return folder / "in.csv"


@pytest.fixture(scope="module")
def local(csv) -> pd.DataFrame:
    from sdckit.jobs.mask import _typed

    return _typed(read_table(csv), _NoSchema())


#: Settings for a few thousand records: few shuffle tasks, and no code generation (compiling
#: every query plan costs more than it saves on small data). Restored after the module.
SMALL_DATA = {
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.adaptive.enabled": "false",
}


@pytest.fixture(scope="module")
def spark_small(spark):
    """The Spark session with :data:`SMALL_DATA` for this module's tests."""
    previous = {k: spark.conf.get(k) for k in SMALL_DATA}
    for k, v in SMALL_DATA.items():
        spark.conf.set(k, v)
    yield spark
    for k, v in previous.items():
        spark.conf.set(k, v)


@pytest.fixture(scope="module")
def prepared(spark_small, csv):
    """The input as a mask job prepares it: numbered in file order, typed (read in several
    splits, so the numbering crosses partitions)."""
    from sdckit.spark import frame as sf
    from sdckit.spark.io import read_spark

    spark = spark_small
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "48k")
    try:
        sdf = sf.typed_spark(sf.with_row_index(read_spark(spark, csv)), None).persist()
        sdf.count()
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    yield sdf
    sdf.unpersist()


def _spark(prepared, methods: list, seed: int | None = 3, block_rows: int = 500):
    from sdckit.spark import mask as sm

    res = sm.apply_pipeline_spark(
        prepared, Pipeline.from_entries(methods), seed, block_rows=block_rows
    )
    out = res.data.orderBy(sm.ROW).toPandas().drop(columns=[sm.ROW])
    res.release()
    return out, res


def _values(s: pd.Series) -> list:
    """A column as plain Python values (numbers as floats, missing as None)."""
    if pd.api.types.is_numeric_dtype(s.dtype):
        x = s.to_numpy(dtype=np.float64, na_value=np.nan)
        return [None if np.isnan(v) else float(v) for v in x]
    return [None if pd.isna(v) else str(v) for v in s.astype(object)]


def _assert_same_table(spark_out: pd.DataFrame, local_out: pd.DataFrame) -> None:
    assert list(spark_out.columns) == list(local_out.columns)
    for c in local_out.columns:
        assert _values(spark_out[c]) == _values(local_out[c]), c


# --------------------------------------------------------------------------------------------
# reading: row order, types
# --------------------------------------------------------------------------------------------


def test_row_numbers_are_the_file_order_on_any_split_and_types_match(prepared, local):
    from sdckit.spark import mask as sm

    assert prepared.rdd.getNumPartitions() > 1
    got = prepared.orderBy(sm.ROW).toPandas()
    assert got[sm.ROW].tolist() == list(range(N))
    kinds = {f.name: f.dataType.simpleString() for f in prepared.schema.fields}
    assert kinds["income"] == kinds["age"] == "bigint" and kinds["w"] == "double"
    assert kinds["zip"] == "string"  # leading zeros: a code, stays text
    _assert_same_table(got.drop(columns=[sm.ROW]), local)


def test_declared_numeric_column_that_does_not_parse_names_row_and_value(spark_small):
    from sdckit.spark import frame as sf

    class Attr:
        class type:
            numeric = True

    class Schema:
        attributes = {"x": Attr()}

    sdf = sf.with_row_index(spark_small.createDataFrame([("1",), ("2",), ("zwei",)], "x string"))
    with pytest.raises(DataError, match=r"column 'x' in the input must be numeric, but row 3 has"):
        sf.typed_spark(sdf, Schema())


#: A text column with infinities (as a CSV holds them) and a huge finite number.
INFINITE = {
    "x": ["1.5", "inf", "2.5", "-Infinity", "4.5", "5.5"],
    "big": ["1", "1e300", "2", "3", "4", "5"],
    "g": ["a", "a", "a", "a", "b", "b"],
}

NUMERIC_STEPS = [
    {"noise": {"columns": ["x"], "alpha": 0.1}},
    {"multiplicative_noise": {"columns": ["x"], "sd": 0.1}},
    {"rounding": {"columns": ["x"], "base": 2}},
    {"global_recoding": {"columns": ["x"], "method": "equal_width", "bins": 2}},
    {"global_recoding": {"columns": ["x"], "method": "breaks", "breaks": [0, 3, 10]}},
    {"top_bottom_coding": {"columns": ["x"], "top_quantile": 0.8}},
    {"top_bottom_coding": {"columns": ["x"], "top": 3}},
    {"microaggregation": {"columns": ["x"], "k": 2, "strata": ["g"]}},
]


@pytest.fixture(scope="module")
def infinite(spark_small):
    from sdckit.spark import frame as sf

    rows = list(zip(*INFINITE.values(), strict=True))
    sdf = spark_small.createDataFrame(rows, ", ".join(f"{c} string" for c in INFINITE))
    return sf.typed_spark(sf.with_row_index(sdf), None)


def test_infinite_and_huge_numbers_are_typed_as_doubles_without_overflow(infinite):
    from sdckit.spark import mask as sm
    from sdckit.spark.stats import count_and_finite

    kinds = {f.name: f.dataType.simpleString() for f in infinite.schema.fields}
    assert kinds["x"] == kinds["big"] == "double"  # not whole below 2**53: not a long
    got = infinite.orderBy(sm.ROW).toPandas()
    assert got["x"].tolist() == [1.5, np.inf, 2.5, -np.inf, 4.5, 5.5]
    assert got["big"].tolist() == [1.0, 1e300, 2.0, 3.0, 4.0, 5.0]
    assert count_and_finite(infinite) == (6, {"big"})  # the counting pass finds them


@pytest.mark.parametrize("entry", NUMERIC_STEPS, ids=lambda e: json.dumps(e)[:60])
def test_infinite_values_are_refused_with_the_local_engines_message(infinite, entry):
    from sdckit.jobs.mask import _typed
    from sdckit.spark import mask as sm

    local = _typed(pd.DataFrame(INFINITE), _NoSchema())
    with pytest.raises(DataError) as want:
        Pipeline.from_entries([entry]).apply(local, seed=1)
    with pytest.raises(DataError) as got:
        sm.apply_pipeline_spark(infinite, Pipeline.from_entries([entry]), 1)
    assert str(got.value) == str(want.value)
    assert "needs finite numbers, but column 'x' has 'inf' (row 2; 2 infinite" in str(got.value)


# --------------------------------------------------------------------------------------------
# deterministic methods: equal to the local engine
# --------------------------------------------------------------------------------------------


DETERMINISTIC = [
    {"rounding": {"columns": ["income"], "base": 100}},
    {"top_bottom_coding": {"columns": ["age"], "top": 80, "bottom": 20}},
    {"top_bottom_coding": {"columns": ["income"], "top_quantile": 0.95}},
    {"global_recoding": {"columns": ["w"], "method": "equal_frequency", "bins": 5}},
    {"global_recoding": {"columns": ["h"], "method": "breaks", "breaks": [0, 150, 200, 300]}},
    {
        "global_recoding": {
            "columns": ["region"],
            "mapping": {"north": "N", "south": "S", "east": "EW", "west": "EW"},
        }
    },
    {"microaggregation": {"columns": ["income", "age"], "k": 4, "strata": ["sex"]}},
    {
        "microaggregation": {
            "columns": ["age"],
            "k": 3,
            "method": "individual_ranking",
            "block_by": ["income"],
            "block_size": 300,
        }
    },
    {"local_suppression": {"columns": ["region", "sex", "zip"], "k": 3}},
]


def test_deterministic_methods_equal_the_local_engine(prepared, local):
    got, res = _spark(prepared, DETERMINISTIC)
    want, records = Pipeline.from_entries(DETERMINISTIC).apply(local, seed=3)
    _assert_same_table(got.drop(columns=["name", "pid"]), want.drop(columns=["name", "pid"]))
    assert json.loads(json.dumps(res.records)) == json.loads(json.dumps(records, default=str))
    # the proof the local tests ask for: rounding gives multiples of the base, coding caps,
    # local suppression reaches k-anonymity (a missing value matching any value)
    assert got["age"].between(20, 80).all()
    assert wildcard_frequencies(got, ["region", "sex", "zip"]).min() >= 3
    assert records[-1]["details"]["total_suppressions"] > 0
    assert [s["columns" if "columns" in s else "block_by"] for s in res.strata] == [
        ["sex"],
        ["income"],
    ]
    assert res.strata[0]["n_strata"] == 2 and res.strata[1]["min_stratum_size"] >= 300


def test_microaggregation_within_strata_groups_at_least_k_and_keep_stratum_means(prepared):
    methods = [{"microaggregation": {"columns": ["income", "w"], "k": 5, "strata": ["region"]}}]
    src = prepared.orderBy("__sdc_row").toPandas()
    src = src[src["w"].notna()]
    got, res = _spark(prepared.where("w IS NOT NULL"), methods)
    groups = got.groupby(["region", "income", "w"]).size()
    assert groups.min() >= 5
    for col in ("income", "w"):
        before = src.groupby("region")[col].mean()
        after = got.groupby("region")[col].mean()
        np.testing.assert_allclose(after.loc[before.index], before, rtol=1e-12)
    (rec,) = res.records
    strata = rec["details"]["strata"]
    assert strata["columns"] == ["region"] and strata["n_strata"] == 4
    assert strata["min_stratum_size"] == src["region"].value_counts().min()
    assert rec["details"]["groups"][0]["min_group_size"] >= 5
    assert rec["parameters"]["strata"] == ["region"]


# --------------------------------------------------------------------------------------------
# random methods: the local tests' statistical properties, reproducible
# --------------------------------------------------------------------------------------------


RANDOM = [
    {"noise": {"columns": ["w"], "alpha": 0.25}},
    {"pram": {"columns": ["region"], "p_diagonal": 0.8, "invariant": True}},
    {"randomized_response": {"column": "sex", "p": 0.8}},
    {"multiplicative_noise": {"columns": ["income"], "sd": 0.1}},
    {"noise": {"columns": ["age", "h"], "alpha": 0.3, "method": "correlated"}},
]


@pytest.fixture(scope="module")
def randomized(prepared):
    return _spark(prepared, RANDOM)


def test_random_methods_keep_their_statistical_properties(randomized, local):
    got, res = randomized
    # additive noise: mean ~ 0, variance alpha * variance, missing stays missing
    e = (got["w"] - local["w"]).dropna()
    assert got["w"].isna().sum() == local["w"].isna().sum() == 2
    sd = local["w"].std(ddof=1)
    assert abs(e.mean()) < 4 * 0.5 * sd / np.sqrt(len(e))
    assert e.var(ddof=1) / (0.25 * sd**2) == pytest.approx(1, abs=0.12)
    assert res.records[0]["details"]["noise_sd"]["w"] == pytest.approx(0.5 * sd, rel=1e-12)
    # invariant PRAM: the categories kept, released counts close to the original ones
    pram = res.records[1]["details"]["region"]
    assert set(got["region"]) <= set(local["region"])
    counts = local["region"].value_counts()
    assert pram["original_counts"] == [int(counts[c]) for c in pram["categories"]]
    released = got["region"].value_counts()
    assert pram["released_counts"] == [int(released[c]) for c in pram["categories"]]
    m = np.array(pram["matrix"])
    np.testing.assert_allclose(np.array(pram["original_counts"]) @ m, pram["original_counts"])
    for c in pram["categories"]:
        assert abs(released[c] - counts[c]) < 5 * np.sqrt(counts[c])
    assert pram["n_changed"] == int((got["region"] != local["region"]).sum()) > 0
    # randomized response: the two categories, about 1 - p changed, Warner's estimate
    rr = res.records[2]["details"]
    assert set(got["sex"]) == {"f", "m"} and rr["epsilon"] == pytest.approx(np.log(4))
    assert rr["n_changed"] == int((got["sex"] != local["sex"]).sum())
    assert abs(rr["n_changed"] / N - 0.2) < 0.04
    assert abs(rr["estimated_positive_proportion"] - (local["sex"] == "m").mean()) < 0.08
    # multiplicative noise: ratio mean one, sd 0.1
    ratio = got["income"] / local["income"]
    assert abs(ratio.mean() - 1) < 0.01 and abs(ratio.std() - 0.1) < 0.01


def test_correlated_noise_keeps_the_correlation(randomized, local):
    got, res = randomized
    cov = local[["age", "h"]].cov().to_numpy()
    np.testing.assert_allclose(res.records[4]["details"]["noise_covariance"], 0.3 * cov, rtol=1e-9)
    masked = got[["age", "h"]].cov().to_numpy()
    np.testing.assert_allclose(np.diag(masked), 1.3 * np.diag(cov), rtol=0.12)
    corr = local[["age", "h"]].corr().to_numpy()[0, 1]
    assert corr > 0.5 and abs(got[["age", "h"]].corr().to_numpy()[0, 1] - corr) < 0.05


def test_same_seed_same_output_on_any_partitioning_other_seed_differs(prepared):
    methods = [RANDOM[0], RANDOM[1]]
    first, _ = _spark(prepared, methods, seed=11)
    again, _ = _spark(prepared.repartition(5), methods, seed=11)  # other partitions, order
    pd.testing.assert_frame_equal(first, again)
    other, _ = _spark(prepared, methods[:1], seed=12)
    assert not first["w"].equals(other["w"])


def test_randomized_response_flips_come_from_the_csprng_unless_the_insecure_switch(prepared):
    """The job's seed does not reproduce the flips (whoever holds the job file cannot rerun
    it to undo them); insecure_reproducible_noise: true does, and the record says NOT
    PRIVATE."""
    from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE

    rr = {"randomized_response": {"column": "sex", "p": 0.6}}
    first, res = _spark(prepared, [rr], seed=11)
    again, _ = _spark(prepared, [rr], seed=11)
    assert not first["sex"].equals(again["sex"])
    assert "privacy" not in res.records[0]["details"]
    insecure = {
        "randomized_response": {**rr["randomized_response"], "insecure_reproducible_noise": True}
    }
    first, res = _spark(prepared, [insecure], seed=11)
    again, _ = _spark(prepared.repartition(5), [insecure], seed=11)
    pd.testing.assert_frame_equal(first, again)
    assert res.records[0]["details"]["privacy"] == NOT_PRIVATE
    assert res.records[0]["details"]["randomness"] == INSECURE_KIND


def test_unchanged_perturbative_step_is_refused(spark_small):
    from sdckit.spark import frame as sf
    from sdckit.spark import mask as sm

    rows = spark_small.createDataFrame([("5",)] * 4, "c string")
    sdf = sf.typed_spark(sf.with_row_index(rows), None)
    with pytest.raises(DataError, match=r"methods\[0\]\.noise changed none of the 4 values"):
        sm.apply_pipeline_spark(sdf, Pipeline.from_entries([{"noise": {"columns": ["c"]}}]), 1)


def test_formula_cells_are_neutralized_as_the_local_writer_does(spark_small):
    from sdckit.core.io import neutralize_formulas
    from sdckit.spark.frame import neutralize_formulas_spark

    cells = ["=HYPERLINK(1)", "+1", "-2.5", "@x", "plain", "-", None]
    sdf = spark_small.createDataFrame([(v, i) for i, v in enumerate(cells)], "t string, i long")
    got = neutralize_formulas_spark(sdf).orderBy("i").toPandas()
    want = neutralize_formulas(pd.DataFrame({"t": cells, "i": range(len(cells))}))
    assert _values(got["t"]) == _values(want["t"])
    assert got["t"][0] == "'=HYPERLINK(1)" and got["t"][2] == "-2.5"


def test_errors_name_column_row_and_value_as_the_local_engine(prepared):
    from sdckit.spark import mask as sm

    step = Pipeline.from_entries([{"noise": {"columns": ["zip", "region"]}}])
    with pytest.raises(DataError) as ei:
        sm.apply_pipeline_spark(prepared, step, 1)
    assert str(ei.value).startswith("methods[0].noise: additive_noise needs numeric columns")
    assert "column 'region' has the non-numeric value" in str(ei.value)
    assert "(row 1)" in str(ei.value)


# --------------------------------------------------------------------------------------------
# what the Spark engine refuses
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"rank_swapping": {"columns": ["a"]}}, "does not run rank_swapping"),
        ({"data_swapping": {"columns": ["a"]}}, "does not run data_swapping"),
        ({"resampling": {"columns": ["a"]}}, "does not run resampling"),
        ({"sampling": {"fraction": 0.5}}, "does not run sampling"),
        ({"microaggregation": {"columns": ["a"]}}, "give `strata: [column, ...]`"),
    ],
)
def test_global_methods_and_unstratified_microaggregation_are_refused(entry, fragment):
    from sdckit.spark.mask import check_spark_pipeline

    with pytest.raises(ConfigError) as ei:
        check_spark_pipeline(
            Pipeline.from_entries([{"rounding": {"columns": ["a"], "base": 1}}, entry])
        )
    assert str(ei.value).startswith("methods[1].")
    assert fragment in str(ei.value)
    assert "pram" in str(ei.value) or "strata" in str(ei.value)


# --------------------------------------------------------------------------------------------
# strata in the local engine (the same code runs in every Spark stratum)
# --------------------------------------------------------------------------------------------


def test_stratum_smaller_than_k_is_an_error_naming_it():
    data = pd.DataFrame({"x": np.arange(10.0), "s": ["a"] * 8 + ["b"] * 2})
    with pytest.raises(DataError, match=r"stratum \{'s': 'b'\} has 2 record\(s\), fewer than k=3"):
        Microaggregation(["x"], k=3, strata=["s"]).apply(data)


def test_strata_and_blocks_parameters_are_checked():
    with pytest.raises(ConfigError, match="block_by and block_size together"):
        Pipeline.from_entries([{"microaggregation": {"columns": ["x"], "block_by": ["x"]}}])
    with pytest.raises(ConfigError, match="block_size=2 must be at least k=3"):
        Pipeline.from_entries(
            [{"microaggregation": {"columns": ["x"], "block_by": ["x"], "block_size": 2}}]
        )
    step = Microaggregation(["x"], k=3, strata=["s"])
    assert step.to_entry() == {
        "microaggregation": {
            "columns": ["x"],
            "k": 3,
            "method": "mdav",
            "groups": None,
            "centroid": "mean",
            "standardize": True,
            "strata": ["s"],
        }
    }


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(12, 80),
    k=st.integers(2, 4),
    strata=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    method=st.sampled_from(["mdav", "individual_ranking", "optimal_univariate"]),
)
def test_property_every_group_within_a_stratum_holds_k(n, k, strata, seed, method):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % strata
    data = pd.DataFrame({"x": rng.normal(size=n).round(2), "s": labels})
    step = Microaggregation(["x"], k=k, method=method, strata=["s"])
    if np.bincount(labels).min() < k:
        with pytest.raises(DataError, match="fewer than k"):
            step.apply(data)
        return
    (res,) = step.apply(data)
    assert res.data.groupby(["s", "x"]).size().min() >= k
    np.testing.assert_allclose(
        res.data.groupby("s")["x"].mean(), data.groupby("s")["x"].mean(), atol=1e-9
    )
    assert res.details["strata"]["n_strata"] == strata


@settings(max_examples=25, deadline=None)
@given(n=st.integers(6, 60), block=st.integers(3, 10), seed=st.integers(0, 2**16))
def test_property_blocks_along_a_sort_key(n, block, seed):
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"key": rng.integers(0, 5, n), "x": rng.normal(size=n)})
    labels, keys = ma.strata_labels(data, block_by=["key"], block_size=block)
    sizes = np.bincount(labels)
    assert len(sizes) == len(keys) == max(1, n // block)
    assert sizes.min() >= min(block, n) and (len(sizes) == 1 or sizes.max() < 2 * block)
    order = np.lexsort((np.arange(n), data["key"].to_numpy()))
    assert np.all(np.diff(labels[order]) >= 0)  # consecutive along the key, ties by row


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), min_size=1, max_size=40
    ),
    q=st.lists(st.floats(0, 1), min_size=1, max_size=5),
)
def test_property_quantiles_from_order_statistics_are_numpys(values, q):
    from sdckit.spark.frame import linear_quantiles

    x = np.sort(np.asarray(values))
    got = linear_quantiles(lambda ranks: {r: float(x[r]) for r in ranks}, len(x), q)
    np.testing.assert_array_equal(got, np.quantile(np.asarray(values), q))


# --------------------------------------------------------------------------------------------
# summary and the job file end to end
# --------------------------------------------------------------------------------------------


def test_numeric_evaluation_on_many_records_exact_aggregates_and_a_sampled_linkage(prepared, local):
    from sdckit.evaluation.masking_summary import numeric_evaluation
    from sdckit.spark.mask_summary import numeric_evaluation_spark

    masked = prepared.withColumn("income", prepared["income"] + (prepared["age"] % 7) * 10.0)
    got = numeric_evaluation_spark(prepared, masked, ["income", "age"], linkage_records=300)
    after = local.assign(income=local["income"] + (local["age"] % 7) * 10.0)
    want = numeric_evaluation(local, after, ["income", "age"], linkage_records=None)
    assert got["records"] == want["records"] == N
    assert got["il1s"] == pytest.approx(want["il1s"], rel=1e-9)
    assert got["il_sse_sst"] == pytest.approx(want["il_sse_sst"], rel=1e-9)
    assert got["dbrl_sample"]["records"] == got["dbrl_intruder_records"] == 300
    assert 0 <= got["dbrl"] <= 1


def _job(folder: Path, csv: Path, methods: list, engine: str, out: str) -> Path:
    doc = {
        "input": str(csv),
        "engine": engine,
        "attributes": {
            "name": {"role": "identifying"},
            "pid": {"role": "identifying", "pseudonymize": {"key_env": "SDCKIT_SPARK_KEY"}},
        },
        "methods": methods,
        "output": {
            "path": f"{out}/masked.csv",
            "report": f"{out}/report.html",
            "json": f"{out}/summary.json",
        },
        "seed": 7,
    }
    if engine == "spark":
        doc["spark"] = {"master": "local[2]", "conf": {"spark.sql.shuffle.partitions": 2}}
    path = folder / f"{out}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _read_parts(folder: Path) -> pd.DataFrame:
    """A folder of CSV part files as one table, typed as a mask job types its input (numbers
    compare as numbers: Spark writes ``3150.0`` where the local writer writes ``3150``)."""
    from sdckit.jobs.mask import _typed

    parts = sorted(folder.glob("part-*.csv"))
    return _typed(pd.concat([read_table(p) for p in parts], ignore_index=True), _NoSchema())


def test_mask_job_file_on_spark_equals_the_local_job(spark_small, csv, tmp_path, monkeypatch):
    from sdckit.jobs.mask import _typed, run_mask_job

    monkeypatch.setenv("SDCKIT_SPARK_KEY", "s" * 32)
    methods = [
        {"rounding": {"columns": ["income"], "base": 50}},
        {"microaggregation": {"columns": ["age", "income"], "k": 3, "strata": ["region"]}},
        {"local_suppression": {"columns": ["region", "sex", "zip"], "k": 2}},
    ]
    spark_job = _job(tmp_path, csv, methods, "spark", "spark")
    local_job = _job(tmp_path, csv, methods, "local", "local")
    res = run_mask_job(spark_job)
    want = run_mask_job(local_job)
    assert (tmp_path / "spark/masked.csv").is_dir()  # a folder of part files
    got = _read_parts(tmp_path / "spark/masked.csv")
    expected = _typed(read_table(tmp_path / "local/masked.csv"), _NoSchema())
    assert "name" not in got.columns and got["pid"].str.fullmatch(r"[0-9a-f]{16}").all()
    _assert_same_table(got, expected)  # tokens included: the same keyed HMAC
    summary = json.loads((tmp_path / "spark/summary.json").read_text())
    local_summary = json.loads((tmp_path / "local/summary.json").read_text())
    assert summary["engine"] == "spark" and summary["records_in"] == N
    assert summary["identifiers"] == local_summary["identifiers"]
    assert summary["methods"] == local_summary["methods"]
    assert summary["strata"] == local_summary["strata"]
    assert summary["strata"] == [{"step": 1, **local_summary["methods"][1]["details"]["strata"]}]
    for a, b in zip(summary["columns"], local_summary["columns"], strict=True):
        assert a.keys() == b.keys()
        for key, value in a.items():
            assert value == (
                pytest.approx(b[key], rel=1e-9) if isinstance(value, float) else b[key]
            )
    assert summary["category_changes"] == local_summary["category_changes"]
    for key in ("il1s", "il_sse_sst", "dbrl", "records"):
        assert summary["numeric_evaluation"][key] == pytest.approx(
            local_summary["numeric_evaluation"][key], rel=1e-9
        )
    # the share of released records equal to an input record: the same count on both engines
    assert summary["original_records"] == local_summary["original_records"]
    html = (tmp_path / "spark/report.html").read_text()
    for text in ("Strata", "engine", "spark", "Step 2: mdav", "n_strata"):
        assert text in html
    assert set(res.written) == {"data", "report", "json"} == set(want.written)


def test_mask_command_runs_a_spark_job(spark_small, csv, local, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from sdckit.cli import app

    monkeypatch.setenv("SDCKIT_SPARK_KEY", "s" * 32)
    methods = [
        {"global_recoding": {"columns": ["h"], "method": "breaks", "breaks": [0, 150, 200, 300]}},
        {"pram": {"columns": ["h", "region"], "p_diagonal": 0.9, "invariant": True}},
    ]
    job = _job(tmp_path, csv, methods, "spark", "cli")
    res = CliRunner().invoke(app, ["mask", "--config", str(job), "-q"])
    assert res.exit_code == 0, res.output
    got = _read_parts(tmp_path / "cli/masked.csv")
    assert len(got) == N and set(got["region"]) <= {"north", "south", "east", "west"}
    summary = json.loads((tmp_path / "cli/summary.json").read_text())
    assert summary["engine"] == "spark"
    # the PRAM matrices are the local engine's: built from the counts of all records (the
    # recoded column's empty interval [200, 300] included, as the ordered categorical keeps it)
    _, records = Pipeline.from_entries(methods).apply(local, seed=7)
    for c in ("h", "region"):
        spark_plan = summary["methods"][1]["details"][c]
        local_plan = records[1]["details"][c]
        for key in ("categories", "construction", "original_counts"):
            assert spark_plan[key] == local_plan[key]
        np.testing.assert_allclose(spark_plan["matrix"], local_plan["matrix"], rtol=1e-12)
        assert sum(spark_plan["released_counts"]) == sum(local_plan["original_counts"])
    assert summary["methods"][1]["details"]["h"]["categories"][-1] == "[200, 300]"
    bad = _job(tmp_path, csv, [{"rank_swapping": {"columns": ["income"]}}], "spark", "bad")
    res = CliRunner().invoke(app, ["mask", "--config", str(bad)])
    assert res.exit_code == 2 and "doesnotrunrank_swapping" in "".join(res.output.split())
    assert not (tmp_path / "bad").exists()


def test_mask_command_on_spark_refuses_infinite_values_with_exit_2(spark_small, tmp_path):
    from typer.testing import CliRunner

    from sdckit.cli import app

    pd.DataFrame(INFINITE).to_csv(tmp_path / "in.csv", index=False)
    job = {
        "input": "in.csv",
        "engine": "spark",
        "methods": [{"noise": {"columns": ["x"], "alpha": 0.1}}],
        "output": {"path": "out.csv", "json": "s.json"},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job), encoding="utf-8")
    res = CliRunner().invoke(app, ["mask", "--config", str(tmp_path / "job.yaml"), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "methods[0].noise: additive_noise needs finite numbers, but column 'x' has 'inf'" in text
    assert "Traceback" not in text and "ARITHMETIC_OVERFLOW" not in text
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "s.json").exists()


def test_original_records_on_spark_equal_the_local_count(spark_small):
    from sdckit.risk.original_records import original_records
    from sdckit.spark.mask_summary import original_records_spark

    before = pd.DataFrame(
        {"age": [39, 40, 41, 39], "sex": ["m", "f", None, "f"], "w": [1.5, 2.0, 2.0, 1.5]}
    )
    after = pd.DataFrame(
        {
            "age": [39.0, 40.0, 41.0, 39.0, 42.0],
            "sex": ["m", "f", None, "m", "m"],
            "w": [1.5, 2.0, 2.0, 1.5000001, 1.5],
        }
    )
    got = original_records_spark(
        spark_small.createDataFrame(before), spark_small.createDataFrame(after), list(after), 0.5
    )
    want = original_records(before, after, threshold=0.5).to_dict()
    assert got == want and got["equal_to_original"] == 3  # by hand: rows 0, 1, 2


# --------------------------------------------------------------------------------------------
# the contract: every method the Spark engine runs plans and releases as the local engine
# --------------------------------------------------------------------------------------------

#: One job-file entry per method the Spark engine runs (a method added to the engine needs one).
CONTRACT_EXAMPLES = {
    "noise": {"columns": ["h", "w"], "method": "kim", "alpha": 0.2},
    "multiplicative_noise": {"columns": ["w"], "sd": 0.1},
    "pram": {"columns": ["region"], "invariant": True, "random_diagonal": True},
    "randomized_response": {"column": "sex"},
    "rounding": {"columns": ["income", "h"], "base": 50},
    "global_recoding": {"columns": ["age"], "method": "equal_frequency", "bins": 4},
    "top_bottom_coding": {
        "columns": ["income"],
        "top_quantile": 0.9,
        "bottom_quantile": 0.05,
        "replace": "mean",
    },
    "local_suppression": {"columns": ["region", "sex", "zip"], "k": 2},
    "microaggregation": {"columns": ["age", "income"], "k": 3, "strata": ["region"]},
}


def _spark_engine_methods() -> list[str]:
    """The methods whose class lists ``"spark"`` in ``engines`` (each class once)."""
    from sdckit.masking.pipeline import Pipeline
    from sdckit.spark.mask import spark_methods

    seen: dict[type, str] = {}
    for name in spark_methods():
        entry = CONTRACT_EXAMPLES.get(name)
        if entry is None:  # an alias, or a method without an example (caught below)
            continue
        cls = type(Pipeline.from_entries([{name: entry}]).steps[0])
        seen.setdefault(cls, name)
    return sorted(seen.values())


def test_every_spark_method_has_a_contract_example():
    from sdckit.masking.pipeline import Pipeline
    from sdckit.spark.mask import spark_methods

    covered = {
        type(Pipeline.from_entries([{n: CONTRACT_EXAMPLES[n]}]).steps[0])
        for n in _spark_engine_methods()
    }
    for name in spark_methods():
        step_cls = next((c for c in covered if name in (c.spec_name, *c.spec_aliases)), None)
        assert step_cls is not None, f"{name}: add an example to CONTRACT_EXAMPLES"


def _same_plan(a, b, where: str = "plan") -> None:
    """Plans equal field by field (but where a block keeps its record numbers);
    floating-point numbers up to the order of summation (Spark's aggregates against
    NumPy's)."""
    import dataclasses

    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            if f.name == "row_column":  # how a block carries its record numbers
                continue
            _same_plan(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same_plan(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same_plan(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=where)
    elif isinstance(a, np.ndarray):
        assert a.tolist() == np.asarray(b).tolist(), where
    elif isinstance(a, float) and not isinstance(b, str):
        assert a == pytest.approx(b, rel=1e-12), where
    else:
        assert a == b, where


@pytest.mark.parametrize("name", _spark_engine_methods())
def test_local_and_spark_plans_and_releases_agree(prepared, local, name):
    """The plan from Spark aggregates equals the plan from the pandas table, and a
    deterministic method's Spark release equals the local release value for value."""
    from sdckit.masking.stats import PandasStats
    from sdckit.spark import mask as sm

    pipeline = Pipeline.from_entries([{name: CONTRACT_EXAMPLES[name]}])
    step = pipeline.steps[0]
    random = True
    if type(step).spark_hook is None:
        from sdckit.spark.stats import SparkStats

        here = step.plan(PandasStats(local), 5)
        there = step.plan(SparkStats(prepared, N), 5)
        _same_plan(here, there)
        random = here.random
    else:  # a method with a Spark step of its own (microaggregation within strata)
        from sdckit.spark.stats import SparkStats

        assert step.plan(PandasStats(local), 5) == step.plan(SparkStats(prepared, N), 5)
        random = False
    if random:
        return  # the seeded reproducibility of the random ones: the tests above
    res = sm.apply_pipeline_spark(prepared, pipeline, 1, block_rows=500)
    got = res.data.orderBy(sm.ROW).toPandas().drop(columns=[sm.ROW])
    res.release()
    want = step.apply(local, 1)[-1].data
    assert list(got.columns) == list(want.columns)
    for c in want.columns:
        a, b = _values(got[c]), _values(want[c])
        if all(isinstance(v, float) or v is None for v in a + b):
            assert np.allclose(
                np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-12, equal_nan=True
            ), c
        else:
            assert a == b, c


def test_a_block_spanning_several_arrow_batches_is_released(spark_small, prepared):
    """A block of records arrives in several Arrow batches (here 100 records each, blocks of
    500): the text columns of the joined batches go back to Spark as one array each."""
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    previous = spark_small.conf.get(key)
    spark_small.conf.set(key, "100")
    try:
        methods = [
            {"noise": {"columns": ["h"]}},
            {"microaggregation": {"columns": ["age"], "k": 3, "strata": ["region"]}},
        ]
        out, _ = _spark(prepared, methods, seed=3)
    finally:
        spark_small.conf.set(key, previous)
    assert len(out) == N and out["region"].notna().all()


def test_bounded_questions_agree_with_the_local_engine(prepared, local):
    """What a plan asks of an unbounded column reaches the driver bounded, with the local
    answers: the first unmapped texts and their number, the first missing value."""
    from sdckit.masking.stats import PandasStats
    from sdckit.spark.stats import SparkStats

    here, there = PandasStats(local), SparkStats(prepared, N)
    for allowed, limit in [({"P00001", "P00003"}, 11), (set(local["pid"]), 11), ({"x"}, 0)]:
        assert there.values_outside("pid", allowed, limit) == here.values_outside(
            "pid", allowed, limit
        )
    for numbers in (False, True):
        assert there.missing(["w", "income"], numbers) == here.missing(["w", "income"], numbers)
        assert repr(there.first_missing("w", numbers)) == repr(here.first_missing("w", numbers))
    assert there.first_missing("income") == (-1, None)


def test_microaggregation_refuses_missing_numbers_with_the_local_message(prepared, local):
    from sdckit.masking.microaggregation import Microaggregation

    with pytest.raises(DataError) as want:
        Microaggregation(["income", "w"], k=3).apply(local)
    with pytest.raises(DataError) as got:
        _spark(prepared, [{"microaggregation": {"columns": ["income", "w"], "strata": ["sex"]}}])
    assert str(got.value) == f"methods[0].microaggregation: {want.value}"
