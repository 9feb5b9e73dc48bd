"""mu-Argus / tau-Argus files: .rda metadata, .asc and free-format data, .hrc hierarchies, .tab
cell files, and the jobs built from them (``input.metadata``, ``sdckit import-argus``,
``output.tab``). Every file is written here from the format the Argus manuals document."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.argus import (
    TAB_STATUS,
    apply_codelists,
    hrc_hierarchy,
    read_argus_data,
    read_cdl,
    read_hrc,
    read_rda,
    read_tab,
    tree_hrc,
)
from sdckit.core.frequency import frequency_set
from sdckit.errors import ConfigError, DataError, HierarchyError
from sdckit.jobs.argus import derive_attributes
from sdckit.jobs.config import job_from_dict, load_job

runner = CliRunner()

FIXED_RDA = """\
REGION 1 2 99
  <RECODEABLE>
  <IDLEVEL> 1
  <HIERARCHICAL>
  <HIERCODELIST> "region.hrc"
  <HIERLEADSTRING> "@"
  <TOTCODE> "Total"
SEX 3 1 9
  <RECODABLE>
  <IDLEVEL> 2
AGE 4 2 99 98
  <RECODEABLE>
  <IDLEVEL> 3
  <TRUNCABLE>
JOB 6 1
  <RECODEABLE>
  <IDLEVEL> 0
INCOME 7 6
  <NUMERIC>
WEIGHT 13 5
  <NUMERIC>
  <DECIMALS> 1
  <WEIGHT>
"""

REGION_HRC = "N\n@01\n@02\nS\n@03\n@04\n"

#: 12 records: REGION(2) SEX(1) AGE(2) JOB(1) INCOME(6) WEIGHT(5); row 3 has REGION 99
#: (missing), row 5 SEX 9 (missing), row 6 AGE 98 (the second missing code).
ROWS = [
    ("01", "1", "34", "a", "  1200", " 10.5"),
    ("01", "1", "36", "b", "  1300", " 11.0"),
    ("99", "2", "41", "a", "   900", " 12.5"),
    ("02", "2", "45", "a", "  5000", "  9.0"),
    ("02", "9", "47", "b", "   700", " 10.0"),
    ("03", "1", "98", "b", "  2500", " 10.0"),
    ("03", "1", "52", "a", "  2600", " 10.0"),
    ("04", "2", "55", "a", " 12000", " 10.0"),
    ("04", "2", "58", "b", "   100", " 10.0"),
    ("01", "2", "33", "a", "   450", " 10.0"),
    ("02", "1", "49", "b", "   600", " 10.0"),
    ("03", "2", "51", "a", "   800", " 10.0"),
]


def _write_fixed(folder: Path) -> tuple[Path, Path]:
    (folder / "demo.rda").write_text(FIXED_RDA)
    (folder / "region.hrc").write_text(REGION_HRC)
    (folder / "demo.asc").write_text("".join("".join(r) + "\n" for r in ROWS))
    return folder / "demo.rda", folder / "demo.asc"


# -- .rda ----------------------------------------------------------------------------------------
def test_fixed_width_metadata(tmp_path):
    rda, _ = _write_fixed(tmp_path)
    meta = read_rda(rda)
    assert meta.separator is None
    assert [v.name for v in meta.variables] == ["REGION", "SEX", "AGE", "JOB", "INCOME", "WEIGHT"]
    region, sex, age, job, income, weight = meta.variables
    assert (region.start, region.length, region.missing) == (1, 2, ("99",))
    assert (age.start, age.length, age.missing) == (4, 2, ("99", "98"))
    assert region.categorical and sex.categorical  # both spellings of RECODEABLE
    assert (region.idlevel, sex.idlevel, age.idlevel, job.idlevel) == (1, 2, 3, 0)
    assert region.hiercodelist == "region.hrc" and region.totcode == "Total"
    assert age.truncable and not sex.truncable
    assert income.kind == "numeric" and weight.kind == "weight" and weight.decimals == 1
    assert meta.file("region.hrc") == tmp_path / "region.hrc"


def test_free_format_metadata_and_data(tmp_path):
    (tmp_path / "free.rda").write_text(
        '<SEPARATOR> ","\nREGION 2 99\n  <RECODEABLE>\n  <IDLEVEL> 1\nNAME 20\n'
        "  <RECODEABLE>\nINCOME 6\n  <NUMERIC>\n"
    )
    (tmp_path / "free.csv").write_text('01,"Smith, J",1200\n99,Jones,800\n\n02, Doe ,5\n')
    meta = read_rda(tmp_path / "free.rda")
    assert meta.separator == ","
    assert [(v.start, v.length) for v in meta.variables] == [(None, 2), (None, 20), (None, 6)]
    data = read_argus_data(meta, tmp_path / "free.csv")
    assert data.to_dict("list") == {
        "REGION": ["01", "", "02"],  # 99 is REGION's missing code
        "NAME": ["Smith, J", "Jones", "Doe"],
        "INCOME": ["1200", "800", "5"],
    }


def test_table_metadata(tmp_path):
    (tmp_path / "t.rda").write_text(
        '   <SEPARATOR> ";"\n<SAFE> "s"\nSize "99"\n    <RECODEABLE>\n    <TOTCODE> "Total"\n'
        "Var2\n    <NUMERIC>\n    <DECIMALS> 2\nFreqVar\n    <FREQUENCY>\n"
        "Var2_Shadow\n    <NUMERIC> <SHADOW>\nVar2_Cost\n    <NUMERIC> <COSTVAR>\n"
        "Top1\n    <MAXSCORE>\nTop2\n    <MAXSCORE>\nStatusVar\n    <STATUS>\n"
    )
    meta = read_rda(tmp_path / "t.rda", kind="table")
    kinds = [v.kind for v in meta.variables]
    assert kinds == [
        "categorical",
        "numeric",
        "frequency",
        "shadow",
        "cost",
        "top",
        "top",
        "status",
    ]
    assert meta.variables[0].missing == ("99",) and meta.variables[0].totcode == "Total"
    assert meta.status_codes == {"safe": "s", "unsafe": "U", "protect": "P"}
    (tmp_path / "t.tab").write_text(
        '"Total";16847646,84;42723;1;1;175677,00;141482,00;S\n" 2";20,00;9;1;1;5,00;5,00;U\n'
    )
    cells = read_tab(meta, tmp_path / "t.tab")
    assert list(cells.columns) == [
        "Size", "value", "freq", "shadow", "cost", "top1", "top2", "status"
    ]  # fmt: skip
    assert cells["Size"].tolist() == ["Total", "2"]  # blanks around a code removed
    assert cells["value"].astype(float).tolist() == [16847646.84, 20.0]  # decimal comma
    assert cells["top1"].astype(float).tolist() == [175677.0, 5.0]
    assert cells["status"].tolist() == ["S", "U"]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("A 1 2\n  <RECODEABLE>\n  <FOO>\n", 3, "unknown keyword <FOO>"),
        ("  <RECODEABLE>\nA 1 2\n", 1, "before any variable"),
        ("A x 2\n", 1, "start position of 'A' must be a whole number"),
        ("A 1\n", 1, "needs its start position and length"),
        ("A 1 2\nB 2 2\n", 2, "overlaps 'A'"),
        ("A 1 2 999\n", 1, "longer than its length"),
        ("A 1 3\n  <HIERLEVELS> 1 1\n", 1, "add up to 2"),
        ("A 1 2\n  <IDLEVEL> 7\n", 2, "<IDLEVEL> of 'A' is 7"),
        ('A 1 2\n  <TOTCODE> "Total\n', 2, "quote is not closed"),
        ("A 1 2\nB 3 1\na 5 1\n", 3, "already declared on line 1"),
        ("A 1 2\n  <IDLEVEL>\n", 2, "<IDLEVEL> takes one value"),
        ('A 1 2\n<SEPARATOR> ","\n', 2, "must come before the first variable"),
    ],
)
def test_malformed_rda_names_line_and_keyword(tmp_path, text, line, fragment):
    path = tmp_path / "bad.rda"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_rda(path)
    assert f"bad.rda line {line}" in str(err.value)
    assert fragment in str(err.value)


# -- data ----------------------------------------------------------------------------------------
def test_fixed_width_data_and_missing_codes(tmp_path):
    rda, asc = _write_fixed(tmp_path)
    data = read_argus_data(read_rda(rda), asc)
    assert list(data.columns) == ["REGION", "SEX", "AGE", "JOB", "INCOME", "WEIGHT"]
    assert data.iloc[0].tolist() == ["01", "1", "34", "a", "1200", "10.5"]
    assert data.loc[2, "REGION"] == "" and data.loc[4, "SEX"] == "" and data.loc[5, "AGE"] == ""
    assert (data == "").sum().tolist() == [1, 1, 1, 0, 0, 0]
    kept = read_argus_data(read_rda(rda), asc, blank_missing=False)
    assert kept.loc[2, "REGION"] == "99" and kept.loc[5, "AGE"] == "98"


def test_short_fixed_width_line_names_the_line(tmp_path):
    rda, asc = _write_fixed(tmp_path)
    lines = asc.read_text().splitlines()
    lines[4] = lines[4][:10]
    asc.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"demo.asc line 5: the line has 10 characters.*17"):
        read_argus_data(read_rda(rda), asc)


def test_free_format_field_count_names_the_line(tmp_path):
    (tmp_path / "f.rda").write_text('<SEPARATOR> ";"\nA 2\nB 2\n')
    (tmp_path / "f.txt").write_text("1;2\n3\n")
    with pytest.raises(DataError, match=r"f.txt line 2: 1 field\(s\).*declares 2"):
        read_argus_data(read_rda(tmp_path / "f.rda"), tmp_path / "f.txt")


# -- .hrc ----------------------------------------------------------------------------------------
def _rows(h) -> list[list[str]]:
    """A hierarchy's rows (leaf, then each level's label)."""
    leaves = list(h.labels[0])
    return [[str(h.generalize([v], lv)[0]) for lv in range(h.height)] for v in leaves]


def test_hrc_to_generalization_hierarchy(tmp_path):
    (tmp_path / "r.hrc").write_text("N\n@01\n@02\nS\n@03\n@@031\n@@032\nW\n")
    entries = read_hrc(tmp_path / "r.hrc")
    assert [(e.depth, e.code) for e in entries] == [
        (1, "N"), (2, "01"), (2, "02"), (1, "S"), (2, "03"), (3, "031"), (3, "032"), (1, "W")
    ]  # fmt: skip
    h = hrc_hierarchy(entries, name="region")
    assert sorted(_rows(h)) == sorted(
        [
            ["01", "01", "N", "*"],  # a leaf above the deepest level keeps its code
            ["02", "02", "N", "*"],
            ["031", "03", "S", "*"],
            ["032", "03", "S", "*"],
            ["W", "W", "W", "*"],
        ]
    )


def test_hrc_with_other_lead_string_and_blanks(tmp_path):
    (tmp_path / "r.hrc").write_text("Nr\n## 1\n## 2\nOs \n## 4\n")
    entries = read_hrc(tmp_path / "r.hrc", lead="##")
    assert [(e.depth, e.code) for e in entries] == [
        (1, "Nr"),
        (2, "1"),
        (2, "2"),
        (1, "Os"),
        (2, "4"),
    ]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("N\n@@01\n", r"line 2: code '01' is 2 level\(s\) below the top"),
        ("N\n@01\nS\n@01\n", "line 4: code '01' is already on line 2"),
        ("N\n@\n", "line 2: the line has lead strings"),
    ],
)
def test_malformed_hrc(tmp_path, text, fragment):
    (tmp_path / "bad.hrc").write_text(text)
    with pytest.raises(HierarchyError, match=fragment):
        read_hrc(tmp_path / "bad.hrc")


def test_tree_hrc_round_trip(tmp_path):
    codes = ["Total", "N", "S", "01", "02", "03", "99"]
    parent = [-1, 0, 0, 1, 1, 2, 0]
    text = tree_hrc(codes, parent)
    assert text == "N\n@01\n@02\nS\n@03\n99\n"
    assert tree_hrc(["Total", "a", "b"], [-1, 0, 0]) is None  # flat: no .hrc
    (tmp_path / "t.hrc").write_text(text)
    assert [e.code for e in read_hrc(tmp_path / "t.hrc")] == ["N", "01", "02", "S", "03", "99"]


# -- microdata jobs ------------------------------------------------------------------------------
def test_idlevel_mapping(tmp_path):
    rda, _ = _write_fixed(tmp_path)
    attrs = derive_attributes(read_rda(rda), tmp_path)
    assert attrs == {
        "REGION": {"role": "quasi_identifying", "hierarchy": "region.hrc"},
        "SEX": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
        "AGE": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
        "JOB": {"role": "insensitive"},  # IDLEVEL 0
        "INCOME": {"role": "insensitive", "type": "decimal"},
        "WEIGHT": {"role": "insensitive", "type": "decimal"},
    }


def test_job_with_metadata_derives_attributes_and_hierarchies(tmp_path):
    _write_fixed(tmp_path)
    job = job_from_dict(
        {
            "input": {"path": "demo.asc", "metadata": "demo.rda"},
            "models": [{"k_anonymity": {"k": 2}}],
        },
        base_dir=tmp_path,
    )
    schema = job.schema
    assert set(job.spec.attributes) == {"REGION", "SEX", "AGE", "JOB", "INCOME", "WEIGHT"}
    leaves = {row[0]: row for row in _rows(schema.hierarchy("REGION"))}
    assert leaves["01"] == ["01", "N", "*"] and leaves["04"] == ["04", "S", "*"]
    assert leaves[""] == ["", "", "*"]  # REGION has a missing value: it gets a leaf
    table = job.read_input()
    assert table.loc[2, "REGION"] == ""


def test_import_argus_writes_a_job_that_round_trips_and_runs(tmp_path):
    rda, asc = _write_fixed(tmp_path)
    job_path = tmp_path / "job.yaml"
    result = runner.invoke(
        app, ["import-argus", str(rda), "--data", str(asc), "--out", str(job_path), "--k", "2"]
    )
    assert result.exit_code == 0, result.output
    text = job_path.read_text()
    assert text.startswith("# Derived by `sdckit import-argus`")
    assert "WEIGHT" in text.split("input:")[0]  # the weight variable named in the comments
    doc = yaml.safe_load(text)
    assert doc["input"] == {"path": "demo.asc", "metadata": "demo.rda"}
    assert doc["attributes"]["REGION"] == {"role": "quasi_identifying", "hierarchy": "region.hrc"}
    job = load_job(job_path)
    assert job.to_dict() == doc  # the file is the job, nothing added on loading
    assert job_from_dict(job.to_dict(), tmp_path).to_dict() == doc

    result = runner.invoke(app, ["anonymize", "--config", str(job_path), "--quiet"])
    assert result.exit_code == 0, result.output
    released = pd.read_csv(tmp_path / "demo_anonymized.csv", dtype=str, keep_default_na=False)
    assert len(released) == len(ROWS)
    qis = ["REGION", "SEX", "AGE"]
    kept = released[~(released[qis] == "*").all(axis=1)]
    assert min(frequency_set(kept, qis).counts) >= 2
    assert released["INCOME"].tolist() == [r[4].strip() for r in ROWS]  # insensitive: as read


def test_import_argus_bad_rda_exits_2_naming_the_line(tmp_path):
    rda, asc = _write_fixed(tmp_path)
    rda.write_text(FIXED_RDA.replace("  <TRUNCABLE>", "  <TRUNCATE>"))
    result = runner.invoke(
        app, ["import-argus", str(rda), "--data", str(asc), "--out", str(tmp_path / "j.yaml")]
    )
    assert result.exit_code == 2
    assert "demo.rda line 14: unknown keyword <TRUNCATE>" in result.output
    assert not (tmp_path / "j.yaml").exists()


def test_anonymize_job_with_missing_metadata_file(tmp_path):
    _, asc = _write_fixed(tmp_path)
    (tmp_path / "job.yaml").write_text(
        "input: {path: demo.asc, metadata: nowhere.rda}\nmodels: [{k_anonymity: {k: 2}}]\n"
        "output: {path: out.csv}\n"
    )
    result = runner.invoke(app, ["anonymize", "--config", str(tmp_path / "job.yaml")])
    assert result.exit_code == 2
    assert "input.metadata" in result.output and "nowhere.rda" in result.output


# -- tau-Argus table jobs ------------------------------------------------------------------------
def test_table_job_writes_tab_and_xlsx_and_reads_them_back(tmp_path):
    pytest.importorskip("openpyxl")
    _write_fixed(tmp_path)
    (tmp_path / "table.yaml").write_text(
        "input: {path: demo.asc, metadata: demo.rda}\n"
        "dimensions: {REGION: {}, SEX: {}}\n"
        "response: INCOME\n"
        "rules: [{frequency: {threshold: 3}}]\n"
        "method: optimal\n"
        "output: {cells: cells.csv, excel: protected.xlsx, tab: protected.tab}\n"
    )
    result = runner.invoke(app, ["table", "--config", str(tmp_path / "table.yaml"), "-q"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "protected.xlsx").stat().st_size > 0
    cells = pd.read_csv(tmp_path / "cells.csv", dtype={"REGION": str, "SEX": str})
    tab = (tmp_path / "protected.tab").read_text().splitlines()
    assert len(tab) == len(cells)
    by_codes = {
        (r.REGION, r.SEX): (r.value, r.freq, TAB_STATUS[r.status]) for r in cells.itertuples()
    }
    for line in tab:
        region, sex, value, freq, status = line.split(";")
        expected = by_codes[(region.strip('"'), sex.strip('"'))]
        assert (float(value), int(freq), status) == (expected[0], expected[1], expected[2])
    # REGION keeps its .hrc (N: 01 02, S: 03 04) and the missing code 99 as a category;
    # SEX's missing code 9 too: hand count of the records of region 01 = 3 (rows 1, 2, 10)
    assert by_codes[("01", "Total")][1] == 3
    assert by_codes[("N", "Total")][1] == 3 + 3  # 01 + 02 (rows 4, 5, 11)
    assert by_codes[("99", "Total")][1] == 1 and by_codes[("Total", "9")][1] == 1
    assert by_codes[("Total", "Total")][0] == sum(int(r[4]) for r in ROWS)
    rda = (tmp_path / "protected.rda").read_text()
    assert '<HIERCODELIST> "protected.REGION.hrc"' in rda and "<STATUS>" in rda
    assert (tmp_path / "protected.REGION.hrc").read_text() == "N\n@01\n@02\nS\n@03\n@04\n99\n"

    # the written cell file, audited as a tau-Argus table: the same pattern, safe
    (tmp_path / "audit.yaml").write_text(
        "cells: {path: protected.tab, metadata: protected.rda}\n"
        "rules: [{frequency: {threshold: 3}}]\nmethod: audit\noutput: {json: audit.json}\n"
    )
    result = runner.invoke(app, ["table", "--config", str(tmp_path / "audit.yaml"), "-q"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "audit.json").read_text())
    assert summary["safe"] is True
    assert summary["primary"] == int((cells["status"] == "primary").sum())
    assert summary["secondary"] == int((cells["status"] == "secondary").sum())


def test_tab_output_refused_for_linked_tables(tmp_path):
    _write_fixed(tmp_path)
    (tmp_path / "t.yaml").write_text(
        "input: {path: demo.asc, metadata: demo.rda}\n"
        "dimensions: {REGION: {}, SEX: {}, JOB: {}}\ntables: [[REGION, SEX], [REGION, JOB]]\n"
        "rules: [{frequency: {threshold: 3}}]\noutput: {tab: t.tab}\n"
    )
    result = runner.invoke(app, ["table", "--config", str(tmp_path / "t.yaml")])
    assert result.exit_code == 2
    assert "output.tab" in result.output and "one table" in result.output


# -- the mu-Argus demo data (skips without ../shared/data) -----------------------------------------
def test_demo_data_as_fixed_width(tmp_path, shared_data):
    """500 records of mu-Argus' demo survey written as a fixed-width .asc with a .rda in
    mu-Argus' style (REGION with a codelist): read back exactly, imported and anonymized
    (3-anonymity verified)."""
    csv = shared_data / "argus" / "muargus_Demodata.csv"
    if not csv.is_file():
        pytest.skip("muargus_Demodata.csv not present")
    demo = pd.read_csv(csv, dtype=str, keep_default_na=False).head(500)
    layout = [("REGION", 4), ("SEX", 1), ("AGE", 2), ("MARSTAT", 1), ("WEIGHT", 7), ("INCOME", 8)]
    keywords = {
        "REGION": '  <RECODABLE>\n  <CODELIST> "Regio.cdl"\n  <IDLEVEL>  1 \n'
        "  <SUPPRESSWEIGHT>  50 \n  <TRUNCABLE>",
        "SEX": "  <RECODABLE>\n  <IDLEVEL>  2 \n  <SUPPRESSWEIGHT>  50 ",
        "AGE": "  <RECODABLE>\n  <IDLEVEL>  3 \n  <TRUNCABLE>",
        "MARSTAT": "  <RECODABLE>\n  <IDLEVEL>  3 ",
        "WEIGHT": "  <NUMERIC>\n  <DECIMALS>  2 \n  <WEIGHT>",
        "INCOME": "  <NUMERIC>",
    }
    rda, start = [], 1
    for name, width in layout:
        rda += [f"{name} {start}  {width}        ", keywords[name]]
        start += width
    (tmp_path / "d.rda").write_text("\n".join(rda) + "\n")
    codes = sorted(set(demo["REGION"].str.strip()))  # the codelist the .rda names
    (tmp_path / "Regio.cdl").write_text("".join(f"{c};Region {c}\n" for c in codes))
    lines = demo[layout[0][0]].str.rjust(layout[0][1])
    for name, width in layout[1:]:
        lines = lines + demo[name].str.rjust(width)
    (tmp_path / "d.asc").write_text("\n".join(lines) + "\n")
    data = read_argus_data(read_rda(tmp_path / "d.rda"), tmp_path / "d.asc")
    expected = demo[[n for n, _ in layout]].apply(lambda s: s.str.strip())
    pd.testing.assert_frame_equal(data, expected.reset_index(drop=True))

    job = tmp_path / "job.yaml"
    args = ["import-argus", str(tmp_path / "d.rda"), "-d", str(tmp_path / "d.asc"), "-o", str(job)]
    result = runner.invoke(app, [*args, "--k", "3", "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["anonymize", "--config", str(job), "--quiet"])
    assert result.exit_code == 0, result.output
    released = pd.read_csv(tmp_path / "d_anonymized.csv", dtype=str, keep_default_na=False)
    qis = ["REGION", "SEX", "AGE", "MARSTAT"]
    assert min(frequency_set(released, qis).counts) >= 3
    assert released["WEIGHT"].tolist() == data["WEIGHT"].tolist()
    assert "<CODELIST>: REGION are shown by their labels" in job.read_text()


def test_metadata_input_refused_on_spark_before_spark_starts(tmp_path):
    _write_fixed(tmp_path)
    job = job_from_dict(
        {"input": {"path": "demo.asc", "metadata": "demo.rda"}, "engine": "spark"},
        base_dir=tmp_path,
        source="'job.yaml'",
    )
    with pytest.raises(ConfigError, match=r"input.metadata: .*engine: local.*spark engine"):
        job.open()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=25))
def test_tree_hrc_read_hrc_round_trip(tmp_path_factory, picks):
    """Any tree written as a .hrc reads back as the same codes and depths."""
    codes, parent, depth = ["Total"], [-1], [0]
    for i, pick in enumerate(picks):  # node i + 1 hangs under one of the earlier nodes
        p = pick % len(codes)
        codes.append(f"c{i}")
        parent.append(p)
        depth.append(depth[p] + 1)
    text = tree_hrc(codes, parent)
    if text is None:
        assert max(depth) == 1
        return
    path = tmp_path_factory.mktemp("hrc") / "t.hrc"
    path.write_text(text)
    read = {e.code: e.depth for e in read_hrc(path)}
    assert read == {c: d for c, d in zip(codes[1:], depth[1:], strict=True)}


def test_import_argus_refuses_a_code_missing_from_the_hrc(tmp_path):
    rda, asc = _write_fixed(tmp_path)
    (tmp_path / "region.hrc").write_text("N\n@01\n@02\nS\n@03\n")  # 04 left out
    out = tmp_path / "job.yaml"
    result = runner.invoke(app, ["import-argus", str(rda), "--data", str(asc), "--out", str(out)])
    assert result.exit_code == 2
    assert "'REGION'" in result.output and "'04'" in result.output
    assert not out.exists()


def test_tab_cells_protected_by_p_percent(tmp_path):
    """A tau-Argus .tab (decimal commas, top contributions, no status) protected by sdckit.

    Hand check, p = 10: region 1 has 100 - 90 - 5 = 5 < 10% of 90 = 9, so it is primary;
    2, 3, 4 are safe (200 - 30 - 20 = 150 >= 3, ...). Region 1 is the only unsafe cell under
    N = 1 + 2, so N's other child 2 is the secondary suppression (the cheapest cover)."""
    (tmp_path / "r.rda").write_text(
        '<SEPARATOR> ";"\nRegion\n  <RECODEABLE>\n  <TOTCODE> "Total"\n  <HIERARCHICAL>\n'
        '  <HIERCODELIST> "r.hrc"\n  <HIERLEADSTRING> "@"\nTurnover\n  <NUMERIC>\n'
        "  <DECIMALS> 2\nN\n  <FREQUENCY>\nTop1\n  <MAXSCORE>\nTop2\n  <MAXSCORE>\n"
    )
    (tmp_path / "r.hrc").write_text("N\n@ 1\n@ 2\nS\n@ 3\n@ 4\n")
    (tmp_path / "r.tab").write_text(
        '"Total";1000,00;33;90,00;50,00\n"N";300,00;13;90,00;30,00\n'
        '" 1";100,00;3;90,00;5,00\n" 2";200,00;10;30,00;20,00\n'
        '"S";700,00;20;50,00;40,00\n" 3";300,00;10;40,00;30,00\n" 4";400,00;10;50,00;40,00\n'
    )
    (tmp_path / "job.yaml").write_text(
        "cells: {path: r.tab, metadata: r.rda}\nrules: [{p_percent: {p: 10}}]\n"
        "method: optimal\noutput: {cells: cells.csv, tab: out.tab}\n"
    )
    result = runner.invoke(app, ["table", "--config", str(tmp_path / "job.yaml"), "-q"])
    assert result.exit_code == 0, result.output
    status = {line.split(";")[0].strip('"'): line.split(";")[-1] for line in
              (tmp_path / "out.tab").read_text().splitlines()}  # fmt: skip
    assert status == {"Total": "S", "N": "S", "1": "U", "2": "M", "S": "S", "3": "S", "4": "S"}


def test_analyze_an_argus_job_with_its_weight(tmp_path):
    """`sdckit analyze --config` reads the .asc through its .rda: the key variables from
    <IDLEVEL>, missing codes counted as missing, the <WEIGHT> column usable."""
    _write_fixed(tmp_path)
    (tmp_path / "job.yaml").write_text(
        "input: {path: demo.asc, metadata: demo.rda}\nmodels: [{k_anonymity: {k: 2}}]\n"
    )
    out = tmp_path / "risk.json"
    result = runner.invoke(
        app,
        ["analyze", "--config", str(tmp_path / "job.yaml"), "--weight", "WEIGHT", "--json",
         str(out), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())
    assert summary["records"] == len(ROWS)
    assert summary["quasi_identifiers"] == ["REGION", "SEX", "AGE"]
    assert "individual_risk" in summary


def test_fixed_width_positions_are_characters(tmp_path):
    """A non-ASCII file is sliced by characters (``é`` is one position), an ASCII one by
    bytes: the same fields either way."""
    (tmp_path / "u.rda").write_text("CITY 1 5\nCODE 6 2 99\n")
    (tmp_path / "u.asc").write_text("Liège01\nGent 99\n", encoding="utf-8")
    data = read_argus_data(read_rda(tmp_path / "u.rda"), tmp_path / "u.asc")
    assert data.to_dict("list") == {"CITY": ["Liège", "Gent"], "CODE": ["01", ""]}
    (tmp_path / "a.asc").write_text("Liege01\nGent 99\n")
    data = read_argus_data(read_rda(tmp_path / "u.rda"), tmp_path / "a.asc")
    assert data.to_dict("list") == {"CITY": ["Liege", "Gent"], "CODE": ["01", ""]}


@pytest.mark.parametrize("blank_line", ["", "   \n"])
def test_free_format_names_in_front_reads_by_name(tmp_path, blank_line):
    """<NAMESINFRONT>: the first line names the fields, in any order (a line of blanks sends
    the file to the slower reader, which gives the same table)."""
    (tmp_path / "n.rda").write_text('<SEPARATOR> ";"\n<NAMESINFRONT>\nA 2 99\nB 3\n')
    (tmp_path / "n.txt").write_text(f"B;A;C\nx; 01;u\n{blank_line}y;99;v\n")
    data = read_argus_data(read_rda(tmp_path / "n.rda"), tmp_path / "n.txt")
    assert data.to_dict("list") == {"A": ["01", ""], "B": ["x", "y"]}
    (tmp_path / "m.txt").write_text("B;C\nx;u\n")
    with pytest.raises(DataError, match=r"first line names B, C, not A"):
        read_argus_data(read_rda(tmp_path / "n.rda"), tmp_path / "m.txt")


def test_hrc_hierarchy_in_a_plain_csv_job(tmp_path):
    """Any job's `hierarchy:` may name a .hrc (lead string @); an empty value gets a leaf."""
    (tmp_path / "d.csv").write_text("region,x\n01,a\n03,b\n,c\n")
    (tmp_path / "r.hrc").write_text("N\n@01\n@02\nS\n@03\n")
    job = job_from_dict(
        {"input": "d.csv", "attributes": {"region": {"role": "quasi_identifying",
                                                     "hierarchy": "r.hrc"}}},
        base_dir=tmp_path,
    )  # fmt: skip
    rows = sorted(_rows(job.schema.hierarchy("region")))
    assert rows == [["", "", "*"], ["01", "N", "*"], ["02", "N", "*"], ["03", "S", "*"]]


def test_weight_column_survives_an_anonymize_job_unchanged(tmp_path):
    """The <WEIGHT> variable of a derived job is written back as read, record by record,
    whatever its spelling (leading zeros, trailing zeros, an exponent): generalized and
    suppressed records included (k = 3 with a suppression limit suppresses some)."""
    weights = ["01.50", "123.2", "0.125", "99999", "  1e3", "  7.0", "1.000", " 10.5"] + [
        " 10.0"
    ] * 4
    _write_fixed(tmp_path)
    (tmp_path / "demo.asc").write_text(
        "".join("".join(r[:5]) + w + "\n" for r, w in zip(ROWS, weights, strict=True))
    )
    job_path = tmp_path / "job.yaml"
    result = runner.invoke(
        app,
        ["import-argus", str(tmp_path / "demo.rda"), "--data", str(tmp_path / "demo.asc"),
         "--out", str(job_path), "--k", "3"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(job_path.read_text())
    doc["suppression_limit"] = 0.5
    job_path.write_text(yaml.safe_dump(doc))
    result = runner.invoke(app, ["anonymize", "--config", str(job_path), "--quiet"])
    assert result.exit_code == 0, result.output
    released = pd.read_csv(tmp_path / "demo_anonymized.csv", dtype=str, keep_default_na=False)
    assert released["WEIGHT"].tolist() == [w.strip() for w in weights]
    report = json.loads((tmp_path / "demo_report.json").read_text())
    assert report["suppressed_records"] > 0  # suppressed records keep their weight too
    suppressed = (released[["REGION", "SEX", "AGE"]] == "*").all(axis=1)
    assert released.loc[suppressed, "WEIGHT"].tolist() == [
        w.strip() for w, s in zip(weights, suppressed, strict=True) if s
    ]


# -- import-argus --table: tau-Argus metadata -> a table job -------------------------------------
TAU_RDA = """\
<SEPARATOR> ","
Region 2
  <RECODEABLE>
  <TOTCODE> "Total"
  <HIERARCHICAL>
  <HIERCODELIST> "region.hrc"
  <HIERLEADSTRING> "@"
Size 1
  <RECODABLE>
  <TOTCODE> "T"
Turnover 8
  <NUMERIC>
  <DECIMALS> 0
Weight 4
  <NUMERIC>
  <WEIGHT>
"""
#: Region x Size, turnover: (01,1) 3 x 100 (safe); (01,2) 500, 20, 10 (p% with p = 10:
#: 10 < 10% of 500, primary); (02,1) 50..80 (safe); (02,2) one record (frequency < 3,
#: primary); (03,1) 200, 300, 400 (safe); (04,2) 90, 95, 99 (safe).
TAU_ROWS = [
    ("01", "1", 100), ("01", "1", 100), ("01", "1", 100),
    ("01", "2", 500), ("01", "2", 20), ("01", "2", 10),
    ("02", "1", 50), ("02", "1", 60), ("02", "1", 70), ("02", "1", 80),
    ("02", "2", 40),
    ("03", "1", 200), ("03", "1", 300), ("03", "1", 400),
    ("04", "2", 90), ("04", "2", 95), ("04", "2", 99),
]  # fmt: skip


def _write_tau(folder: Path) -> tuple[Path, Path]:
    (folder / "tau.rda").write_text(TAU_RDA)
    (folder / "region.hrc").write_text(REGION_HRC)
    (folder / "tau.csv").write_text("".join(f"{r},{s},{t},1.5\n" for r, s, t in TAU_ROWS))
    return folder / "tau.rda", folder / "tau.csv"


def test_import_argus_table_job_from_microdata_runs(tmp_path):
    rda, data = _write_tau(tmp_path)
    job_path = tmp_path / "job.yaml"
    args = ["import-argus", str(rda), "--data", str(data), "--table", "--out", str(job_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    text = job_path.read_text()
    comments = text.split("input:")[0]
    assert "p_percent: {p: 10}; frequency: {threshold: 3}" in comments  # the default, stated
    assert "Weight" in comments and "unweighted" in comments
    doc = yaml.safe_load(text)
    assert doc == {
        "input": {"path": "tau.csv", "metadata": "tau.rda"},
        "dimensions": {
            "Region": {"hierarchy": "region.hrc", "total": "Total"},
            "Size": {"total": "T"},
        },
        "response": "Turnover",
        "rules": [{"p_percent": {"p": 10}}, {"frequency": {"threshold": 3}}],
        "method": "optimal",
        "output": {
            "cells": "tau_cells.csv",
            "tab": "tau_protected.tab",
            "report": "tau_table.html",
            "json": "tau_table.json",
        },
    }
    assert load_job(job_path).to_dict() == doc  # the file is the job, nothing added on loading

    result = runner.invoke(app, ["table", "--config", str(job_path), "-q"])
    assert result.exit_code == 0, result.output
    cells = pd.read_csv(tmp_path / "tau_cells.csv", dtype={"Region": str, "Size": str})
    by = {(r.Region, r.Size): r for r in cells.itertuples()}
    assert by[("Total", "T")].value == sum(t for _, _, t in TAU_ROWS)
    assert by[("N", "T")].value == 100 * 3 + 530 + 260 + 40  # 01 and 02 (the .hrc's N)
    assert by[("N", "2")].freq == 4
    assert by[("01", "2")].status == "primary" and by[("02", "2")].status == "primary"
    assert by[("01", "1")].status != "primary" and by[("03", "1")].status != "primary"
    assert json.loads((tmp_path / "tau_table.json").read_text())["safe"] is True
    assert len((tmp_path / "tau_protected.tab").read_text().splitlines()) == len(cells)


def test_import_argus_table_job_options(tmp_path):
    """--dimensions, --frequency, --rule and --method are written into the job as given."""
    rda, data = _write_tau(tmp_path)
    job_path = tmp_path / "job.yaml"
    args = ["import-argus", str(rda), "-d", str(data), "--table", "-o", str(job_path),
            "--dimensions", "Size", "--frequency", "--rule", "frequency: {threshold: 4}",
            "--method", "hypercube"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(job_path.read_text())
    assert doc["dimensions"] == {"Size": {"total": "T"}} and "response" not in doc
    assert doc["rules"] == [{"frequency": {"threshold": 4}}] and doc["method"] == "hypercube"
    assert "given with --rule" in job_path.read_text()


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--table", "--k", "3"], "remove --k"),
        (["--rule", "frequency: {threshold: 3}"], "--rule sets up a table job: add --table"),
        (["--table", "--rule", "frequency 3"], "--rule 'frequency 3'"),
        (["--table", "--rule", "often: {n: 3}"], "rules[0]"),
        (["--table", "--dimensions", "Region,Colour"], "--dimensions 'Colour'"),
        (["--table", "--response", "Size"], "--response 'Size'"),
        (["--table", "--cells", "tau.csv"], "not both"),
    ],
)
def test_import_argus_table_bad_options(tmp_path, extra, fragment):
    rda, data = _write_tau(tmp_path)
    job_path = tmp_path / "job.yaml"
    args = ["import-argus", str(rda), "--data", str(data), "--out", str(job_path), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert fragment in " ".join(result.output.split())
    assert not job_path.exists()


def test_import_argus_table_job_from_a_cell_file(tmp_path):
    """--cells: the table job of a tau-Argus .tab (the cells of
    test_tab_cells_protected_by_p_percent): the default rules (the .tab has <MAXSCORE>
    variables: p% with p = 10 and frequency 3) give the hand-checked pattern there."""
    (tmp_path / "r.rda").write_text(
        '<SEPARATOR> ";"\nRegion\n  <RECODEABLE>\n  <TOTCODE> "Total"\n  <HIERARCHICAL>\n'
        '  <HIERCODELIST> "r.hrc"\n  <HIERLEADSTRING> "@"\nTurnover\n  <NUMERIC>\n'
        "N\n  <FREQUENCY>\nTop1\n  <MAXSCORE>\nTop2\n  <MAXSCORE>\n"
    )
    (tmp_path / "r.hrc").write_text("N\n@ 1\n@ 2\nS\n@ 3\n@ 4\n")
    (tmp_path / "r.tab").write_text(
        '"Total";1000;33;90;50\n"N";300;13;90;30\n" 1";100;3;90;5\n" 2";200;10;30;20\n'
        '"S";700;20;50;40\n" 3";300;10;40;30\n" 4";400;10;50;40\n'
    )
    job_path = tmp_path / "job.yaml"
    args = ["import-argus", str(tmp_path / "r.rda"), "--cells", str(tmp_path / "r.tab"), "-o",
            str(job_path)]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(job_path.read_text())
    assert doc["cells"] == {"path": "r.tab", "metadata": "r.rda"}
    assert doc["dimensions"] == {"Region": {"hierarchy": "r.hrc", "total": "Total"}}
    assert doc["rules"] == [{"p_percent": {"p": 10}}, {"frequency": {"threshold": 3}}]
    result = runner.invoke(app, ["table", "--config", str(job_path), "-q"])
    assert result.exit_code == 0, result.output
    status = {line.split(";")[0].strip('"'): line.split(";")[-1] for line in
              (tmp_path / "r_protected.tab").read_text().splitlines()}  # fmt: skip
    assert status == {"Total": "S", "N": "S", "1": "U", "2": "M", "S": "S", "3": "S", "4": "S"}


# -- <CODELIST>: value labels --------------------------------------------------------------------
REGION_CDL = '01;Amsterdam\n02,Rotterdam\n03;"Den Haag, \'s-Gravenhage"\n'  # 04: no label
SEX_CDL = "1;Male\n2;Female\n9;Unknown\n"


def _write_labelled(folder: Path) -> None:
    _write_fixed(folder)
    rda = FIXED_RDA.replace(
        '  <TOTCODE> "Total"\n', '  <TOTCODE> "Total"\n  <CODELIST> "region.cdl"\n'
    ).replace("  <IDLEVEL> 2\n", '  <IDLEVEL> 2\n  <CODELIST> "sex.cdl"\n')
    (folder / "demo.rda").write_text(rda)
    (folder / "region.cdl").write_text(REGION_CDL)
    (folder / "sex.cdl").write_text(SEX_CDL)


def test_read_cdl_separators_quotes_and_blanks(tmp_path):
    (tmp_path / "c.cdl").write_text(REGION_CDL + "\n 5 ; Utrecht \n")
    assert read_cdl(tmp_path / "c.cdl") == {
        "01": "Amsterdam",
        "02": "Rotterdam",
        "03": "Den Haag, 's-Gravenhage",
        "5": "Utrecht",
    }


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("1;A\n2\n", "c.cdl line 2: '2' has no separator"),
        ("1;A\n1;B\n", "c.cdl line 2: code '1' is already on line 1"),
        ("1;A\n2;A\n", "codes '1' (line 1) and '2' have the same label 'A'"),
        ("1;\n", "c.cdl line 1: a codelist line is `code;label`"),
    ],
)
def test_malformed_cdl(tmp_path, text, fragment):
    (tmp_path / "c.cdl").write_text(text)
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        read_cdl(tmp_path / "c.cdl")


def test_codelist_labels_the_categories_and_their_hierarchy(tmp_path):
    """A microdata job shows a <CODELIST> variable by its labels (a code without one, and a
    missing value, kept), its .hrc too; a table job keeps the codes (tau-Argus' .hrc and
    .tab name codes)."""
    _write_labelled(tmp_path)
    job = job_from_dict(
        {
            "input": {"path": "demo.asc", "metadata": "demo.rda"},
            "models": [{"k_anonymity": {"k": 2}}],
        },
        base_dir=tmp_path,
    )
    table = job.read_input()
    assert table["REGION"].tolist()[:4] == ["Amsterdam", "Amsterdam", "", "Rotterdam"]
    assert table["REGION"].tolist()[5] == "Den Haag, 's-Gravenhage" and table["REGION"][7] == "04"
    assert table["SEX"].tolist()[:5] == ["Male", "Male", "Female", "Female", ""]  # 9: missing
    leaves = {row[0]: row for row in _rows(job.schema.hierarchy("REGION"))}
    assert leaves["Amsterdam"] == ["Amsterdam", "N", "*"] and leaves["04"] == ["04", "S", "*"]
    table_job = job_from_dict(
        {"input": {"path": "demo.asc", "metadata": "demo.rda"}, "dimensions": {"REGION": {}}},
        base_dir=tmp_path,
    )
    assert table_job.read_input()["REGION"].tolist()[:2] == ["01", "01"]


def test_codelist_release_keeps_the_codes_in_spss(tmp_path):
    """The release of a labelled Argus input written as .sav holds the original codes with
    their labels (the SPSS value-label mechanism): SEX (insensitive) keeps its codes 1, 2
    labelled Male, Female, its missing code 9 system missing; REGION (k = 2) keeps its
    labelled codes, its new values get codes after the largest labelled one; WEIGHT stays
    a number."""
    pyreadstat = pytest.importorskip("pyreadstat")
    _write_labelled(tmp_path)
    (tmp_path / "job.yaml").write_text(
        "input: {path: demo.asc, metadata: demo.rda}\n"
        "attributes: {REGION: {role: quasi_identifying, hierarchy: region.hrc},"
        " SEX: insensitive,"
        " WEIGHT: {type: decimal}}\n"
        "models: [{k_anonymity: {k: 2}}]\nsuppression_limit: 0.5\n"
        "output: {path: out.sav, json: out.json}\n"
    )
    result = runner.invoke(app, ["anonymize", "--config", str(tmp_path / "job.yaml"), "-q"])
    assert result.exit_code == 0, result.output
    back, meta = pyreadstat.read_sav(str(tmp_path / "out.sav"))
    labels = meta.variable_value_labels
    assert labels["SEX"] == {1: "Male", 2: "Female"}  # the labels of the codes that remain
    assert [labels["SEX"].get(c) for c in back["SEX"]] == [
        {"1": "Male", "2": "Female"}.get(r[1]) for r in ROWS
    ]  # the codes as read: SEX's missing code 9 is system missing
    assert back["SEX"].tolist()[:2] == [1.0, 1.0]
    # REGION: labelled codes keep their codes, 04 (no label) and the suppressed record's
    # `*` (row 3: its missing code 99 made it unique) get codes after the largest, 3
    assert {k: v for k, v in labels["REGION"].items() if k <= 3} == {
        1: "Amsterdam",
        2: "Rotterdam",
        3: "Den Haag, 's-Gravenhage",
    }
    star = next(k for k, v in labels["REGION"].items() if v == "*")
    codes = {"01": 1.0, "02": 2.0, "03": 3.0, "99": star}
    assert back["REGION"].tolist() == [codes.get(r[0], 4.0) for r in ROWS]
    assert labels["REGION"][4] == "04"
    assert back["WEIGHT"].tolist() == [float(r[5]) for r in ROWS]  # a number: as it was


def test_table_refuses_a_missing_code_in_the_response(tmp_path):
    """A table job keeps missing codes as categories of its dimensions, but a response's
    missing code is no amount: the job is refused (naming the key, column, code, count and
    the .rda line) rather than summing 999999 into the table."""
    _write_fixed(tmp_path)
    (tmp_path / "demo.rda").write_text(FIXED_RDA.replace("INCOME 7 6\n", "INCOME 7 6 999999\n"))
    rows = [r if i not in (4, 8) else (*r[:4], "999999", r[5]) for i, r in enumerate(ROWS)]
    (tmp_path / "demo.asc").write_text("".join("".join(r) + "\n" for r in rows))
    (tmp_path / "t.yaml").write_text(
        "input: {path: demo.asc, metadata: demo.rda}\ndimensions: {SEX: {}}\nresponse: INCOME\n"
        "rules: [{frequency: {threshold: 3}}]\noutput: {cells: c.csv}\n"
    )
    result = runner.invoke(app, ["table", "--config", str(tmp_path / "t.yaml")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "response: column 'INCOME' holds its missing code '999999' (demo.rda line 18)" in message
    assert "in 2 record(s), the first record 5" in message
    assert not (tmp_path / "c.csv").exists()


_CDL_TEXT = (
    st.text(
        alphabet=st.characters(
            whitelist_categories=("L", "N", "Zs", "Pd", "Po"), blacklist_characters=';,"\r\n\x85'
        ),
        min_size=1,
        max_size=12,
    )
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(_CDL_TEXT, _CDL_TEXT, min_size=1, max_size=15).filter(
        lambda d: len(set(d.values())) == len(d)
    ),
    st.sampled_from([";", ",", " ; "]),
)
def test_cdl_round_trip_and_labels_applied(tmp_path_factory, labels, sep):
    """Any codelist (distinct codes and labels, either separator) reads back as written, and
    applying it labels exactly the codes it lists, keeping the others, missing included."""
    folder = tmp_path_factory.mktemp("cdl")
    (folder / "c.cdl").write_text("".join(f"{c}{sep}{lab}\n" for c, lab in labels.items()))
    assert read_cdl(folder / "c.cdl") == labels
    codes = [*labels, "unlisted-code", ""]
    frame = pd.DataFrame({"v": codes * 2, "w": ["x"] * (2 * len(codes))})
    out = apply_codelists(frame, {"v": labels})
    assert out["v"].tolist() == [labels.get(c, c) for c in codes] * 2
    assert out["w"].tolist() == frame["w"].tolist()
    meta = out.attrs["file_meta"]
    whole = all(c.removeprefix("-").isascii() and c.removeprefix("-").isdigit() for c in labels)
    if whole and len({int(c) for c in labels}) == len(labels):  # codes kept as numbers
        assert meta.value_labels["v"] == {int(c): lab for c, lab in labels.items()}
        assert meta.numeric == {"v"}
    else:  # codes kept as text
        assert meta.value_labels["v"] == labels and meta.numeric == set()
