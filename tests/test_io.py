"""Reading and writing tables: sniffing, Parquet, missing values, atomic writes, permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.io import (
    atomic_write,
    read_table,
    sniff_delimiter,
    to_numeric,
    write_table,
    write_text,
)
from sdckit.errors import DataError

ROWS = [["id", "age", "city"], ["1", "34", "Graz"], ["2", "", "Linz"], ["3", "NA", ""]]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_delimiter_is_sniffed(tmp_path, sep):
    src = tmp_path / "in.csv"
    src.write_text("\n".join(sep.join(r) for r in ROWS) + "\n")
    df = read_table(src)
    assert list(df.columns) == ["id", "age", "city"]
    assert df.values.tolist() == [r for r in ROWS[1:]]
    assert sniff_delimiter(src.read_text()) == sep


def test_quoting_and_encoding(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes('name;note\n"Müller; Hans";"said ""hi"""\n'.encode("latin-1"))
    with pytest.raises(DataError, match=r"not valid utf-8.*--encoding"):
        read_table(src)
    df = read_table(src, encoding="latin-1")
    assert df.values.tolist() == [["Müller; Hans", 'said "hi"']]


def test_missing_values_round_trip_exactly(tmp_path):
    """Cells are read as written: '', 'NA', '?', '.' stay texts and are written back."""
    text = "a,b,c\n1,,NA\n2,?,.\n,x,NULL\n"
    src = tmp_path / "in.csv"
    src.write_text(text)
    df = read_table(src)
    assert df.values.tolist() == [["1", "", "NA"], ["2", "?", "."], ["", "x", "NULL"]]
    out = write_table(df, tmp_path / "out.csv")
    assert out.read_text() == text
    # numeric conversion treats the missing tokens as NaN, only where numbers are needed
    b = to_numeric(pd.Series(["1.5", "", "NA", "?", "2"]), "b")
    assert np.isnan(b[1:4]).all() and b[0] == 1.5 and b[4] == 2


def test_parquet_round_trip_with_missing_values(tmp_path):
    df = pd.DataFrame(
        {
            "s": pd.Series(["a", None, "", "d"], dtype=object),
            "f": [1.5, np.nan, 3.0, -0.0],
            "i": pd.array([1, None, 3, 4], dtype="Int64"),
        }
    )
    path = write_table(df, tmp_path / "t.parquet")
    back = read_table(path)
    # pandas may read text back as its string dtype; values and missingness are the same
    assert list(back.columns) == ["s", "f", "i"]
    assert back["s"].isna().tolist() == [False, True, False, False]
    assert back["s"][[0, 2, 3]].tolist() == ["a", "", "d"]
    pd.testing.assert_series_equal(back["f"], df["f"])
    pd.testing.assert_series_equal(back["i"], df["i"])
    # file -> read -> write -> file keeps nulls as nulls and "" as "" (Arrow level)
    again = write_table(back, tmp_path / "again.parquet")
    t1, t2 = pq.read_table(path), pq.read_table(again)
    for name in ("s", "f", "i"):
        assert str(t1.column(name).to_pylist()) == str(t2.column(name).to_pylist())
        assert t1.column(name).null_count == t2.column(name).null_count
    assert t2.column("s").to_pylist() == ["a", None, "", "d"]


def test_dataframe_input_is_copied_and_never_modified(tmp_path):
    df = pd.DataFrame({1: ["a"], "b": ["c"]})
    original = df.copy()
    got = read_table(df, columns=["1", "b"])
    got.iloc[0, 0] = "changed"
    pd.testing.assert_frame_equal(df, original)
    assert list(got.columns) == ["1", "b"]


def test_input_file_is_never_modified(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a;b\n1;2\n")
    before = (src.read_bytes(), src.stat().st_mtime_ns)
    df = read_table(src)
    write_table(df.assign(a="9"), tmp_path / "out.csv", delimiter=";")
    assert (src.read_bytes(), src.stat().st_mtime_ns) == before


def test_read_errors_name_the_file_and_fix(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a directory"):
        read_table(tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(DataError, match="is empty"):
        read_table(empty)
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(DataError, match="cannot read Parquet file"):
        read_table(bad)
    semi = tmp_path / "semi.csv"
    semi.write_text("a;b\n1;2\n")
    with pytest.raises(DataError, match=r"'x' not found.*available columns: a, b"):
        read_table(semi, columns=["x"])
    with pytest.raises(DataError, match="try --delimiter ';'"):
        read_table(semi, delimiter=",", columns=["a"])


def test_to_numeric_names_column_row_and_value():
    with pytest.raises(
        DataError, match=r"column 'w' in the data must be numeric, but row 2 has '1,5'"
    ):
        to_numeric(pd.Series(["1", "1,5", "x"]), "w")
    with pytest.raises(DataError, match=r"\(2 unparsable value\(s\) in all\)"):
        to_numeric(pd.Series(["1", "1,5", "x"]), "w")


# ------------------------------------------------------------------ atomic writes


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_get_normal_permissions(tmp_path, umask):
    """Not mkstemp's private 0600: 0666 & ~umask, as open() would give."""
    old = os.umask(umask)
    try:
        p = write_text(tmp_path / "sub" / "out.txt", "x")
        q = write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet")
    finally:
        os.umask(old)
    assert mode(p) == 0o666 & ~umask
    assert mode(q) == 0o666 & ~umask


def test_replacing_a_file_keeps_its_permissions(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old")
    p.chmod(0o640)
    write_text(p, "new")
    assert p.read_text() == "new" and mode(p) == 0o640


def test_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path):
    p = tmp_path / "out.txt"

    def boom(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(p, boom)
    assert list(tmp_path.iterdir()) == []
    p.write_text("old")
    with pytest.raises(RuntimeError):
        atomic_write(p, boom)
    assert [x.name for x in tmp_path.iterdir()] == ["out.txt"] and p.read_text() == "old"


@settings(max_examples=30, deadline=None)
@given(
    cells=st.lists(
        st.lists(
            st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=6),
            min_size=2,
            max_size=2,
        ),
        min_size=1,
        max_size=8,
    )
)
def test_any_text_table_round_trips_through_csv(tmp_path_factory, cells):
    d = tmp_path_factory.mktemp("rt")
    df = pd.DataFrame(cells, columns=["a", "b"])
    for sep in (",", ";"):
        path = write_table(df, d / "t.csv", delimiter=sep)
        back = read_table(path, delimiter=sep)
        pd.testing.assert_frame_equal(back, df, check_dtype=False)


_CELL = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=5)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(_CELL, _CELL, st.integers(-5, 5)), min_size=1, max_size=8),
    width=st.sampled_from([1, 2, 3]),
    categorical=st.booleans(),
)
def test_fast_csv_writer_writes_what_pandas_writes(tmp_path_factory, rows, width, categorical):
    # write_table's pyarrow path (text, numbers, categoricals of text such as a release's
    # generalized columns) must give the bytes pandas' writer gives, or hand over to it
    d = tmp_path_factory.mktemp("fast")
    df = pd.DataFrame(rows, columns=["a", "b", "n"]).iloc[:, :width]
    if categorical:
        df = df.astype({c: "category" for c in df.columns if c != "n"})
    expected = df.to_csv(sep=";", index=False, lineterminator="\n")
    assert write_table(df, d / "t.csv", delimiter=";").read_text() == expected


@settings(max_examples=1000, deadline=None)
@given(pieces=st.lists(st.sampled_from(list('ab1 ;,"\n\r\t') + ["NA", "é", "''"]), max_size=30))
def test_fast_csv_reader_reads_what_pandas_reads(tmp_path_factory, pieces):
    # read_table's pyarrow path either reads a file exactly as pandas' reader does (cells,
    # column names, dtypes) or leaves the file to it
    from sdckit.core.io import _read_csv_arrow, _read_csv_pandas, read_header

    path = tmp_path_factory.mktemp("fastread") / "t.csv"
    path.write_bytes(("a;b\n" + "".join(pieces)).encode("utf-8"))
    header = read_header(path, ";", "utf-8", '"')
    fast = _read_csv_arrow(path, ";", "utf-8", '"', header)
    if fast is None:
        return
    slow = _read_csv_pandas(path, ";", "utf-8", '"', header)
    pd.testing.assert_frame_equal(fast, slow)


def test_fast_csv_reader_takes_plain_files_and_leaves_the_rest(tmp_path):
    from sdckit.core.io import _read_csv_arrow, read_header

    def fast(content: str, encoding: str = "utf-8") -> bool:
        path = tmp_path / "t.csv"
        path.write_bytes(content.encode(encoding))
        return _read_csv_arrow(path, ";", encoding, '"', read_header(path, ";", encoding, '"'))

    assert fast("a;b\n1;x y\n;NA\n\n3;4") is not None
    leftovers = ['a;b\n1;"x"\n', "a;b\n1\n", "a;b\n1;2;3\n", "a;;c\n1;2;3\n", "a;a\n1;2\n"]
    for leftover in [*leftovers, "a;b\n \n1;2\n", "a;b\n1;2\r3;4\n", "a\n1\n"]:
        assert fast(leftover) is None, leftover
    assert fast("a;b\né;2\n", encoding="latin-1") is None
    df = read_table(tmp_path / "t.csv", delimiter=";", encoding="latin-1")
    assert df.to_dict("records") == [{"a": "é", "b": "2"}]


def test_spark_input_columns_refuse_a_name_twice_as_read_table_does(tmp_path):
    """The columns a Spark job is checked against before Spark starts come from the same
    header reader and duplicate-name rule as the local engine's (one message)."""
    from sdckit.spark.io import input_columns

    path = tmp_path / "twice.csv"
    path.write_text("a;b;a\n1;2;3\n")
    with pytest.raises(DataError) as spark_err:
        input_columns(path)
    with pytest.raises(DataError) as local_err:
        read_table(path)
    assert str(spark_err.value) == str(local_err.value)
    assert "'a' more than once" in str(spark_err.value)
