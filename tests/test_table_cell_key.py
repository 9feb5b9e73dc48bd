"""Tests: the cell key method -- p-tables in tau-Argus's format, cell keys, noise looked up by
hand on tau-Argus's demo data, consistency between tables, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import Table
from sdckit.tables.cell_key import cell_key, cell_keys, read_ptable, record_keys


@pytest.fixture(scope="module")
def argus(shared_data: Path) -> Path:
    folder = shared_data / "argus"
    if not (folder / "tauargus_cellkey_microdata.csv").is_file():
        pytest.skip("tau-Argus demo data not present")
    return folder


@pytest.fixture(scope="module")
def micro(argus: Path) -> pd.DataFrame:
    return pd.read_csv(argus / "tauargus_cellkey_microdata.csv")


def _by_hand(df: pd.DataFrame, codes: dict[str, str]) -> tuple[int, float]:
    """Count and cell key (sum of the Key column modulo 1) of the records in a cell."""
    m = np.ones(len(df), dtype=bool)
    for col, code in codes.items():
        if code != "Total":
            m &= df[col].astype(str).to_numpy() == code
    return int(m.sum()), math.fsum(df["Key"][m]) % 1.0


def _write(tmp_path: Path, text: str, name: str = "pt.txt") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# -- p-tables --------------------------------------------------------------------------------
def test_read_tau_argus_frequency_ptable(argus: Path) -> None:
    pt = read_ptable(argus / "ptab_freq.txt")
    assert len(pt.i) == 66 and pt.max_i == 8 and pt.is_frequency
    one = pt.i == 1
    # i = 1: v = -1, 2, 3, 4, 5 on [0, .73446954), [.73446954, .87118973), ...
    assert pt.v[one].tolist() == [-1, 2, 3, 4, 5]
    assert pt.lower[one].tolist() == [0, 0.73446954, 0.87118973, 0.94398604, 0.9814156]
    assert pt.upper[one][-1] == 1.0
    assert pt.line[one].tolist() == [3, 4, 5, 6, 7]
    assert pt.max_noise == 5


def test_read_older_ptable_with_quoted_header(argus: Path) -> None:
    pt = read_ptable(argus / "tau_testW_ptable.txt")  # "i";"j";"p";"v";"p_ij_ub"
    assert pt.max_i == 10 and pt.is_frequency and len(pt.i) == 113
    # counts above 10 use the rows of i = 10
    noise, row = pt.noise(np.array([10, 500]), np.array([0.5, 0.5]))
    assert noise[0] == noise[1] and row[0] == row[1] and pt.i[row[0]] == 10


def test_read_magnitude_ptables_but_refuse_them_for_counts(argus: Path) -> None:
    for name in ("ptab_savings_all.txt", "ptab_savings_smallcells.txt"):
        pt = read_ptable(argus / name)
        assert not pt.is_frequency and set(pt.type) == {"all"}
        assert 0.5 in np.abs(pt.v)  # steps of 0.5
        with pytest.raises(DataError, match="magnitude tables.*frequency tables only"):
            pt.noise(np.array([3]), np.array([0.2]))


def test_lookup_intervals_are_closed_below_open_above(tmp_path: Path) -> None:
    pt = read_ptable(
        _write(tmp_path, "i;j;p;v;p_int_ub\n1;0;0.5;-1;0.5\n1;1;0;0;0.5\n1;2;0.5;1;1\n")
    )
    noise, row = pt.noise(np.array([1, 1, 1, 1]), np.array([0.0, 0.4999, 0.5, 0.9999]))
    # the zero-width row (p = 0) is never hit
    assert noise.tolist() == [-1, -1, 1, 1] and row.tolist() == [0, 0, 2, 2]
    # no rows for i = 0: an empty cell stays 0 (row -1)
    noise, row = pt.noise(np.array([0]), np.array([0.3]))
    assert noise.tolist() == [0] and row.tolist() == [-1]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("i;j;p;v\n1;0;1;-1\n", "line 1: the header lacks column.*p_int_ub"),
        ("i;j;p;v;p_int_ub\n1;0;1;x;1\n", "line 2: v = 'x' is not a number"),
        ("i;j;p;v;p_int_ub\n1;0;1;-1\n", "line 2: 4 field"),
        ("i;j;p;v;p_int_ub\n1;0;0.5;-1;0.5\n1;2;0.4;1;0.9\n", "line 3: the rows of i = 1 end at"),
        ("i;j;p;v;p_int_ub\n1;3;1;-1;1\n", "line 2: j = 3 is not i \\+ v = 0"),
        ("i;j;p;v;p_int_ub\n1;0;0.5;-1;0.6\n1;2;0.4;1;1\n", "line 2: p_int_ub = 0.6 is not"),
        ("i;j;p;v;p_int_ub\n1.5;0;1;-1.5;1\n", "line 2: i = 1.5 is not a count"),
        (
            "i;j;p;v;p_int_ub\n1;0;0.5;-1;0.5\n2;2;1;0;1\n1;2;0.5;1;1\n",
            "line 4: the rows of i = 1 .* are not together",
        ),
        ("i;j;p;v;p_int_ub\n", "no rows after the header"),
        ("", "the file is empty"),
    ],
)
def test_malformed_ptable_names_file_and_line(tmp_path: Path, text: str, match: str) -> None:
    path = _write(tmp_path, text, "bad_ptable.txt")
    with pytest.raises(DataError, match=match) as err:
        read_ptable(path)
    assert "bad_ptable.txt" in str(err.value)


def test_missing_ptable_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        read_ptable(tmp_path / "nope.txt")


# -- the method on tau-Argus's demo data -----------------------------------------------------
def test_noise_hand_checked_on_demo_data(micro: pd.DataFrame, argus: Path) -> None:
    r = cell_key(micro, argus / "ptab_freq.txt", dimensions=["Sex", "Age"], key="Key")
    t = r.table
    # (codes, p-table line hit, its v): looked up by hand in ptab_freq.txt
    expected = [
        ({"Sex": "1", "Age": "6"}, 6, 38, -3),  # 6;3;0.09063278;-3;0.09063278, ck 0.0721
        ({"Sex": "2", "Age": "6"}, 7, 49, -2),  # 7;5;0.0760716;-2;0.16459858, ck 0.1585
        ({"Sex": "2", "Age": "Total"}, 2296, 60, -2),  # i = 8's rows; 8;6;...;0.15605737, ck 0.1043
        ({"Sex": "Total", "Age": "Total"}, 4580, 64, 2),  # 8;10;...;0.91625981, ck 0.8890
    ]
    for codes, count, line, v in expected:
        k = t.cell_index(codes)
        n, ck = _by_hand(micro, codes)
        assert r.count[k] == n == count
        assert r.cell_key[k] == pytest.approx(ck, abs=1e-9)
        assert r.ptable.line[r.row[k]] == line
        assert r.noise[k] == v and r.perturbed[k] == count + v
        lo, hi = r.ptable.lower[r.row[k]], r.ptable.upper[r.row[k]]
        assert lo <= r.cell_key[k] < hi
    assert r.cell_key[t.cell_index({"Sex": "1", "Age": "6"})] == pytest.approx(0.07207875)
    # every perturbed count is its count plus the noise; the noise within the p-table's
    assert np.array_equal(r.perturbed, r.count + r.noise)
    assert np.abs(r.noise).max() <= 5
    d = r.to_dict()
    assert d["max_abs_noise"] == np.abs(r.noise).max()
    assert d["sum_abs_noise"] == np.abs(r.noise).sum()
    # not additive: the method perturbs totals independently of their parts
    assert d["relations_broken"] > 0
    frame = r.to_frame()
    assert list(frame.columns) == ["Sex", "Age", "count", "cell_key", "noise", "perturbed"]


def test_same_records_same_noise_in_every_table(micro: pd.DataFrame, argus: Path) -> None:
    pt = read_ptable(argus / "ptab_freq.txt")
    both = cell_key(micro, pt, dimensions=["Sex", "Age"], key="Key")
    sex = cell_key(micro, pt, dimensions=["Sex"], key="Key")
    three = cell_key(micro, pt, dimensions=["Sex", "Age", "HighIncome"], key="Key")
    for s in ("1", "2", "Total"):
        a = both.table.cell_index({"Sex": s, "Age": "Total"})
        b = sex.table.cell_index({"Sex": s})
        c = three.table.cell_index({"Sex": s, "Age": "Total", "HighIncome": "Total"})
        assert both.cell_key[a] == sex.cell_key[b] == three.cell_key[c]
        assert both.noise[a] == sex.noise[b] == three.noise[c]


def test_cell_keys_do_not_depend_on_record_order(micro: pd.DataFrame) -> None:
    t = Table.from_microdata(micro, ["Sex", "Age"])
    shuffled = micro.sample(frac=1.0, random_state=3)
    t2 = Table.from_microdata(shuffled, ["Sex", "Age"])
    assert np.array_equal(cell_keys(micro, t, key="Key"), cell_keys(shuffled, t2, key="Key"))


def test_table_with_cell_keys_equals_microdata_route(micro: pd.DataFrame, argus: Path) -> None:
    t = Table.from_microdata(micro, ["Sex", "Age"])
    keys = cell_keys(micro, t, key="Key")
    via_table = cell_key(t, argus / "ptab_freq.txt", keys)
    via_micro = cell_key(micro, argus / "ptab_freq.txt", dimensions=["Sex", "Age"], key="Key")
    assert np.array_equal(via_table.perturbed, via_micro.perturbed)
    assert np.array_equal(via_table.cell_key, via_micro.cell_key)


def test_count_variable_counts_only_its_records(micro: pd.DataFrame, argus: Path) -> None:
    r = cell_key(
        micro, argus / "ptab_freq.txt", dimensions=["Sex", "Age"], key="Key", count="HighIncome"
    )
    sub = micro[micro["HighIncome"] == 1]
    for codes in ({"Sex": "1", "Age": "5"}, {"Sex": "Total", "Age": "Total"}):
        k = r.table.cell_index(codes)
        n, ck = _by_hand(sub, codes)
        assert r.count[k] == n and r.cell_key[k] == pytest.approx(ck, abs=1e-9)
    # Age 6 has no high incomes: empty cells, p-table row i = 0 (0;0;1;0;1), no noise
    k = r.table.cell_index({"Sex": "Total", "Age": "6"})
    assert r.count[k] == 0 and r.noise[k] == 0 and r.row[k] == 0


def test_seeded_record_keys_are_deterministic(micro: pd.DataFrame, argus: Path) -> None:
    pt = argus / "ptab_freq.txt"
    a = cell_key(micro, pt, dimensions=["Sex", "Age"], seed=11)
    b = cell_key(micro, pt, dimensions=["Sex", "Age"], seed=np.random.default_rng(11))
    assert np.array_equal(a.perturbed, b.perturbed) and np.array_equal(a.cell_key, b.cell_key)
    keys = record_keys(micro, 11)
    assert keys.shape == (len(micro),) and keys.min() >= 0 and keys.max() < 1
    c = cell_key(micro.assign(K=keys), pt, dimensions=["Sex", "Age"], key="K")
    assert np.array_equal(a.cell_key, c.cell_key)


def test_argument_errors(micro: pd.DataFrame, argus: Path) -> None:
    pt = argus / "ptab_freq.txt"
    with pytest.raises(ParameterError, match="give `key`"):
        cell_key(micro, pt, dimensions=["Sex"])
    with pytest.raises(ParameterError, match="not both"):
        cell_key(micro, pt, dimensions=["Sex"], key="Key", seed=1)
    with pytest.raises(ParameterError, match="needs `dimensions`"):
        cell_key(micro, pt, key="Key")
    with pytest.raises(DataError, match="'Nokey' is not in the data"):
        cell_key(micro, pt, dimensions=["Sex"], key="Nokey")
    with pytest.raises(DataError, match="row 1.*not a number in"):
        cell_key(micro.assign(Key=micro["Key"] + 1), pt, dimensions=["Sex"], key="Key")
    with pytest.raises(DataError, match="not 0 or 1"):
        cell_key(micro, pt, dimensions=["Sex"], key="Key", count="Age")
    t = Table.from_microdata(micro, ["Sex"])
    with pytest.raises(ParameterError, match="needs each cell's key"):
        cell_key(t, pt)
    with pytest.raises(ParameterError, match="one entry per cell"):
        cell_key(t, pt, np.zeros(2))
    with pytest.raises(ParameterError, match=r"in \[0, 1\)"):
        cell_key(t, pt, np.ones(3))
    with pytest.raises(ParameterError, match="apply to microdata"):
        cell_key(t, pt, np.zeros(3), key="Key")
    mag = Table.from_microdata(micro, ["Sex"], "Savings")
    with pytest.raises(ParameterError, match="magnitude table"):
        cell_key(mag, pt, np.zeros(3))


def test_small_synthetic_table_by_hand(tmp_path: Path) -> None:
    # 3 records: keys .5, .75, .1; table over g with codes a (2 records), b (1 record)
    df = pd.DataFrame({"g": ["a", "a", "b"], "k": [0.5, 0.75, 0.1]})
    pt = _write(
        tmp_path,
        "i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;0.3;-1;0.3\n1;1;0.7;0;1\n"
        "2;0;0.2;-2;0.2\n2;2;0.5;0;0.7\n2;3;0.3;1;1\n",
    )
    r = cell_key(df, pt, dimensions=["g"], key="k")
    # Total: 3 records, ck (.5 + .75 + .1) mod 1 = .35 -> i = 2's rows (max i): [.2, .7) -> 0
    # a: 2 records, ck 1.25 mod 1 = .25 -> [.2, .7) -> 0;  b: 1 record, ck .1 -> [0, .3) -> -1
    assert r.count.tolist() == [3, 2, 1]
    assert r.cell_key == pytest.approx([0.35, 0.25, 0.1])
    assert r.noise.tolist() == [0, 0, -1]
    assert r.perturbed.tolist() == [3, 2, 0]
    assert r.details["relations_broken"] == 1 and r.details["cells_perturbed"] == 1


_PTABLE = "i;j;p;v;p_int_ub\n1;0;0.3;-1;0.3\n1;1;0.7;0;1\n2;1;0.2;-1;0.2\n2;2;0.8;0;1\n"


def test_a_constant_record_key_column_is_refused(tmp_path: Path) -> None:
    """Keys equal in every record make each cell's key a function of its count (c * i mod 1):
    every cell of one count gets the same noise, so the key column is refused, by name."""
    pt = _write(tmp_path, _PTABLE)
    df = pd.DataFrame({"g": ["a", "a", "b", "c"], "k": [0.25] * 4})
    with pytest.raises(DataError) as err:
        cell_key(df, pt, dimensions=["g"], key="k")
    assert str(err.value).startswith(
        "record key column 'k' has the same value (0.25) in all 4 records: the cell key method "
        "needs a key that varies per record"
    )
    with pytest.raises(DataError, match="'k' has the same value"):
        cell_keys(df, Table.from_microdata(df, ["g"]), key="k")
    assert cell_key(df.assign(k=[0.25, 0.5, 0.25, 0.25]), pt, dimensions=["g"], key="k")
    assert cell_key(df.head(1), pt, dimensions=["g"], key="k")  # one record: one key


def test_a_table_job_with_a_constant_key_exits_2_naming_the_column(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sdckit.cli import app

    _write(tmp_path, _PTABLE)
    pd.DataFrame({"g": ["a", "a", "b", "c"], "RecKey": ["0.5"] * 4}).to_csv(
        tmp_path / "micro.csv", index=False
    )
    _write(
        tmp_path,
        "input: micro.csv\ndimensions: {g: {}}\nmethod: cell_key\n"
        "options: {ptable: pt.txt, key: RecKey}\noutput: {cells: out.csv}\n",
        "ck.yaml",
    )
    res = CliRunner().invoke(app, ["table", "--config", str(tmp_path / "ck.yaml")])
    assert res.exit_code == 2, res.output
    assert "record key column 'RecKey' has the same value (0.5) in all 4 records" in " ".join(
        res.output.split()
    )
    assert not (tmp_path / "out.csv").exists()
