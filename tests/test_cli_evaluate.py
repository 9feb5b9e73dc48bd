"""Tests: ``sdckit evaluate`` from a user's side: bad input (exit 2, one clear line, nothing
written), output paths, the flags of every measure, and small hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app

runner = CliRunner()

from seed004_example import ORIGINAL, PROTECTED  # noqa: E402


def _squeeze(text: str) -> str:
    """Text without whitespace (Rich wraps long lines, even inside paths)."""
    return "".join(text.split())


def _pair(tmp_path: Path, original=ORIGINAL, protected=PROTECTED) -> tuple[str, str]:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    original.to_csv(a, index=False)
    protected.to_csv(b, index=False)
    return str(a), str(b)


def _run(*args: str):
    return runner.invoke(app, ["evaluate", *args])


def _assert_bad(res, *fragments: str, written: tuple[Path, ...] = ()) -> None:
    assert res.exit_code == 2, res.output
    text = _squeeze(res.output)
    for frag in fragments:
        assert _squeeze(frag) in text, (frag, res.output)
    assert "internalerror" not in text
    for path in written:
        assert not path.exists(), path


# --------------------------------------------------------------------------------------------
# files that cannot be read
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["--original", "--protected"])
def test_missing_file_names_it(tmp_path, which) -> None:
    a, b = _pair(tmp_path)
    missing = str(tmp_path / "nope.csv")
    args = {"--original": a, "--protected": b, which: missing}
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = _run(*[x for kv in args.items() for x in kv], "--json", str(out_json), "--html",
               str(out_html))  # fmt: skip
    _assert_bad(res, "nope.csv", "does not exist", written=(out_json, out_html))


@pytest.mark.parametrize("content", ["", "v1,v2,v3,v4\n"])
def test_empty_file_exit_2(tmp_path, content) -> None:
    a, _ = _pair(tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text(content)
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = _run("--original", a, "--protected", str(empty), "--json", str(out_json), "--html",
               str(out_html))  # fmt: skip
    _assert_bad(res, written=(out_json, out_html))
    assert "empty" in res.output or "rows" in res.output


# --------------------------------------------------------------------------------------------
# output paths: never overwrite an input, never two outputs on one file, nothing half-written
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flag", ["--json", "--html"])
def test_output_on_an_input_file_is_refused(tmp_path, flag) -> None:
    a, b = _pair(tmp_path)
    before = Path(a).read_text()
    res = _run("--original", a, "--protected", b, flag, a)
    _assert_bad(res, flag, "--original", "never overwritten")
    assert Path(a).read_text() == before


def test_json_and_html_on_one_path_is_refused(tmp_path) -> None:
    a, b = _pair(tmp_path)
    out = tmp_path / "ev.out"
    res = _run("--original", a, "--protected", b, "--json", str(out), "--html", str(out))
    _assert_bad(res, "--json", "--html", "same file", written=(out,))


def test_output_that_is_a_directory_writes_nothing(tmp_path) -> None:
    a, b = _pair(tmp_path)
    folder = tmp_path / "reports"
    folder.mkdir()
    out_json = tmp_path / "ev.json"
    res = _run("--original", a, "--protected", b, "--json", str(out_json), "--html", str(folder))
    _assert_bad(res, "--html", "is a directory", written=(out_json,))


def test_output_folder_that_is_a_file_writes_nothing(tmp_path) -> None:
    a, b = _pair(tmp_path)
    out_html = tmp_path / "ev.html"
    res = _run("--original", a, "--protected", b, "--html", str(out_html), "--json",
               str(Path(a) / "ev.json"))  # fmt: skip
    _assert_bad(res, "--json", "is a file", written=(out_html,))


# --------------------------------------------------------------------------------------------
# Mahalanobis and weighted distance-based linkage
# --------------------------------------------------------------------------------------------
def _collinear_pair(n: int = 300, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three income-like columns, the third almost the sum of the others (as in the Census
    file, where PEARNVAL, WSALVAL and ERNVAL nearly coincide), masked by independent noise."""
    rng = np.random.default_rng(seed)
    a = rng.normal(50, 10, n)
    b = rng.normal(30, 5, n)
    c = a + b + rng.normal(0, 0.01, n)
    o = pd.DataFrame({"a": a, "b": b, "c": c})
    p = o + rng.normal(0, 1, (n, 3)) * o.std().to_numpy() * 0.2
    return o, p


def test_mahalanobis_dbrl_uses_the_covariance_of_the_differences() -> None:
    """Torra, Abowd & Domingo-Ferrer (2006): d(a, b)^2 = (a-b)' [Var(X) + Var(X') - 2 Cov(X,
    X')]^-1 (a-b). With the original file's covariance a near-singular direction (c = a + b)
    dominates and hardly anything links (the bug: 0.0009 on the Census file against 0.88
    Euclidean); with the covariance of the differences the attack is at least as strong as
    the Euclidean one here (independent noise, so Sigma is close to a scaled identity)."""
    from sdckit.evaluation.protected_file import evaluate
    from sdckit.risk.linkage import distance_linkage

    o, p = _collinear_pair()
    doc = evaluate(o, p)
    mah = doc["details"]["dbrl_mahalanobis"]
    assert mah["covariance"] == "difference"
    expected = distance_linkage(o, p, metric="mahalanobis", covariance="difference").dbrl
    assert mah["dbrl"] == pytest.approx(expected)
    assert distance_linkage(o, p, metric="mahalanobis", covariance="original").dbrl < 0.1
    assert mah["dbrl"] >= 0.5 * doc["disclosure_risk"]["dbrl"] > 0.1


def test_learned_distance_compares_with_the_same_mahalanobis() -> None:
    from sdckit.risk.learned_distance import learned_distance_linkage
    from sdckit.risk.linkage import distance_linkage

    o, p = _collinear_pair(n=40)
    res = learned_distance_linkage(o, p, family="weighted_mean", time_limit=20)
    diff = distance_linkage(o, p, metric="mahalanobis", covariance="difference").dbrl
    assert res.mahalanobis_share == pytest.approx(diff)


def test_weighted_dbrl_from_the_cli(tmp_path) -> None:
    """``--dbrl-weights v1=1,v2=4,v3=0,v4=0``: sqrt(sum_k w_k (z_k - z'_k)^2). Every column of
    the seed-004 file is a permutation of 1..10, so the z-scores share one sd and the nearest
    record is that of the brute-force weighted distance on the raw values (ties count 1/t)."""
    a, b = _pair(tmp_path)
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = _run("--original", a, "--protected", b, "--dbrl-weights", "v1=1,v2=4,v3=0,v4=0",
               "--json", str(out_json), "--html", str(out_html))  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(out_json.read_text())
    w = doc["details"]["dbrl_weighted"]
    assert w["weights"] == {"v1": 1.0, "v2": 4.0, "v3": 0.0, "v4": 0.0}
    x, y = ORIGINAL.to_numpy(float), PROTECTED.to_numpy(float)
    d = ((x[:, None, :] - y[None, :, :]) ** 2 * np.array([1.0, 4.0, 0.0, 0.0])).sum(axis=2)
    at_min = np.isclose(d, d.min(axis=1, keepdims=True))
    expected = float(np.mean(np.diag(at_min) / at_min.sum(axis=1)))
    assert 0 < expected < 1
    assert w["dbrl"] == pytest.approx(expected)
    html = out_html.read_text()
    assert "DBRL weighted" in html and "DBRL Mahalanobis" in html
    assert "DBRL weighted" in _squeeze(res.output).replace("DBRLweighted", "DBRL weighted")


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        ("v1=1,zz=2", "'zz'"),
        ("v1=1,v2=1", "'v3'"),
        ("v1=x,v2=1,v3=1,v4=1", "'x'"),
        ("v1=-1,v2=1,v3=1,v4=1", ">= 0"),
        ("v1", "COLUMN=WEIGHT"),
    ],
)
def test_bad_dbrl_weights_exit_2(tmp_path, weights, match) -> None:
    a, b = _pair(tmp_path)
    out_json = tmp_path / "ev.json"
    res = _run("--original", a, "--protected", b, "--dbrl-weights", weights, "--json",
               str(out_json))  # fmt: skip
    _assert_bad(res, match, "--dbrl-weights", written=(out_json,))


def test_mahalanobis_falls_back_to_the_original_covariance_when_a_column_is_unchanged() -> None:
    from sdckit.evaluation.protected_file import evaluate
    from sdckit.risk.linkage import distance_linkage

    o, p = _collinear_pair()
    o["d"] = np.arange(len(o)) % 7 + 1.0
    p["d"] = o["d"]  # unchanged: x - x' has no variance in d
    with pytest.raises(Exception, match="'d' are unchanged"):
        distance_linkage(o, p, metric="mahalanobis", covariance="difference")
    doc = evaluate(o, p)
    mah = doc["details"]["dbrl_mahalanobis"]
    assert mah["covariance"] == "original"
    assert mah["dbrl"] == pytest.approx(
        distance_linkage(o, p, metric="mahalanobis", covariance="original").dbrl
    )
    assert any("original file's covariance" in n and "'d'" in n for n in doc["notes"])


# --------------------------------------------------------------------------------------------
# bad data and bad flags not covered by tests/test_evaluate.py: exit 2, one line, no output
# --------------------------------------------------------------------------------------------
def _gap() -> pd.DataFrame:
    p = PROTECTED.astype(float)
    p.loc[4, "v3"] = np.nan
    return p


@pytest.mark.parametrize(
    ("original", "protected", "extra", "fragments"),
    [
        # a missing value in a numeric column: names the column and the row
        (ORIGINAL, _gap(), [], ["'v3'", "row 5", "missing"]),
        # zero variance in the protected file only (e.g. a column top-coded to one value)
        (ORIGINAL, PROTECTED.assign(v2=3), [], ["'v2'", "zero variance", "--columns"]),
        # zero variance in the original file only
        (ORIGINAL.assign(v4=1), PROTECTED, [], ["'v4'", "zero variance", "--columns"]),
        # a number with a thousands separator in the protected file
        (ORIGINAL, PROTECTED.astype(str).assign(v1=["1,5"] + ["2"] * 9), [], ["'v1'", "'1,5'"]),
        # columns that differ only in case
        (ORIGINAL, PROTECTED.rename(columns=str.upper), [], ["'v1'", "not in the protected"]),
        # an intruder attribute in the original file only
        (ORIGINAL.assign(zz=1.0), PROTECTED, ["--qi", "v1,zz"], ["'zz'", "protected file"]),
        (ORIGINAL, PROTECTED, ["--target", "nope"], ["'nope'", "--columns"]),
        (ORIGINAL, PROTECTED, ["--hierarchy", "v1"], ["COLUMN=FILE"]),
        (ORIGINAL, PROTECTED, ["--hierarchy", "v1=nope.csv"], ["'nope.csv'", "does not exist"]),
        (ORIGINAL, PROTECTED, ["--k", "3"], ["--known-method"]),
        (ORIGINAL, PROTECTED, ["--known-method", "rank_swapping", "--p-percent", "150"], ["150"]),
        (ORIGINAL, PROTECTED, ["--intruder-share", "0"], ["intruder_share"]),
        (ORIGINAL, PROTECTED, ["--learned-time-limit", "0", "--learned-distance", "owa"], ["0"]),
        # numeric-only measures with only categorical intruder attributes
        (
            ORIGINAL,
            PROTECTED,
            ["--categorical", "v1", "--qi", "v1", "--known-method", "microaggregation", "--k", "1"],
            ["none of --qi is numeric"],
        ),
        (
            ORIGINAL,
            PROTECTED,
            ["--categorical", "v1", "--qi", "v1", "--learned-distance", "owa"],
            ["none of --qi is numeric"],
        ),
        (
            ORIGINAL,
            PROTECTED,
            ["--categorical", "v1", "--qi", "v1", "--dbrl-weights", "v1=1"],
            ["not numeric intruder attributes"],
        ),
    ],
)
def test_bad_input_exit_2_and_nothing_written(tmp_path, original, protected, extra, fragments):
    a, b = _pair(tmp_path, original, protected)
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = _run("--original", a, "--protected", b, "--json", str(out_json), "--html",
               str(out_html), *extra)  # fmt: skip
    _assert_bad(res, *fragments, written=(out_json, out_html))
    assert len(res.output.strip().splitlines()) <= 3, res.output  # one message (wrapped)


# --------------------------------------------------------------------------------------------
# worst-case linkage: HiGHS must not write to the terminal
# --------------------------------------------------------------------------------------------
def test_learned_distance_keeps_stdout_clean(shared_data, capfd) -> None:
    """HiGHS 1.12 (SciPy 1.17) prints a stray debug line to the C-level stdout even with
    ``disp=False`` (ERGO-Code/HiGHS#2783): 3 lines on this 40-record Tarragona pair, which
    broke ``sdckit evaluate --quiet`` and anything reading the command's output."""
    from sdckit.masking.noise_addition import noise
    from sdckit.risk.learned_distance import learned_distance_linkage

    cols = ["FIXED.ASSETS", "CURRENT.ASSETS", "TREASURY", "SALES"]
    path = shared_data / "sdcmicro" / "sdcMicro_Tarragona.csv"
    o = pd.read_csv(path).iloc[:150][cols].reset_index(drop=True)
    p = noise(o, cols, 0.05, seed=3).data
    capfd.readouterr()
    res = learned_distance_linkage(o.iloc[:40], p.iloc[:40], family="owa", time_limit=20)
    assert res.optimal
    captured = capfd.readouterr()
    assert "Highs" not in captured.out and "Highs" not in captured.err


def test_terminal_summary_shows_every_requested_measure(tmp_path) -> None:
    a, b = _pair(tmp_path)
    res = _run("--original", a, "--protected", b, "--target", "v1", "--learned-distance", "owa",
               "--learned-time-limit", "5")  # fmt: skip
    assert res.exit_code == 0, res.output
    for label in ("DBRL Mahalanobis", "sdcMicro dRisk", "worst-case linkage (owa)",
                  "regression of v1: mean CI overlap"):  # fmt: skip
        assert _squeeze(label) in _squeeze(res.output), label


def test_wrong_known_method_is_flagged() -> None:
    """Noise is not rank swapping: some records fall outside their own candidate set, and
    the document says so instead of silently reporting a low re-identification share."""
    from sdckit.evaluation.protected_file import evaluate
    from sdckit.report.evaluation_report import evaluation_report

    o, p = _collinear_pair(n=100)
    doc = evaluate(o, p, known_method="rank_swapping", p_percent=2)
    assert doc["transparency_attack"]["contains_true"] < 1
    assert any("not in their own candidate set" in n for n in doc["notes"])
    html = evaluation_report(doc).render_html()
    assert "own record in its set" in html
    ok = evaluate(ORIGINAL, PROTECTED, known_method="rank_swapping", p_percent=20)
    assert ok["transparency_attack"]["contains_true"] == 1.0
    assert not any("candidate set" in n for n in ok["notes"])


# --------------------------------------------------------------------------------------------
# hand-computed values through the command line (CSV text -> numbers -> JSON)
# --------------------------------------------------------------------------------------------
def test_three_by_two_hand_values_through_the_cli(tmp_path) -> None:
    """a = 1, 2, 3 -> 1, 2, 4 and b = 2, 4, 9 -> 2, 5, 9 (sd_a = 1, sd_b = sqrt(13)).

    IL1s = (1/6) (1 / (sqrt2 * 1) + 1 / (sqrt2 * sqrt13)) (Yancey, Winkler & Creecy 2002).
    Interval disclosure: n = 3, so for p = 1..10 % the half-width p*3/200 < 0.5 holds no rank
    but the protected value's own: 4 (between ranks 2 and 3 of a) and 5 (between ranks 1 and
    2 of b) get the empty interval [4, 4] and [5, 5], which miss 3 and 4; records 1 and 2 are
    safe, record 0 (unchanged) disclosed: 1/3 at every p. DBRL: every record's nearest
    protected record (z-scores) is its own: 1."""
    o = pd.DataFrame({"a": [1, 2, 3], "b": [2, 4, 9]})
    p = pd.DataFrame({"a": [1, 2, 4], "b": [2, 5, 9]})
    a, b = _pair(tmp_path, o, p)
    out_json = tmp_path / "ev.json"
    res = _run("--original", a, "--protected", b, "--json", str(out_json), "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(out_json.read_text())
    il1s = (1 / np.sqrt(2) + 1 / (np.sqrt(2) * np.sqrt(13))) / 6
    assert doc["information_loss"]["il1s"] == pytest.approx(il1s)
    assert doc["disclosure_risk"]["interval_disclosure"] == pytest.approx(1 / 3)
    assert list(doc["details"]["interval_disclosure"]["by_percent"].values()) == pytest.approx(
        [1 / 3] * 10
    )
    assert doc["disclosure_risk"]["dbrl"] == 1.0


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc (not writable)")
def test_output_in_an_unwritable_folder_writes_nothing(tmp_path) -> None:
    a, b = _pair(tmp_path)
    out_json = tmp_path / "ev.json"
    res = _run("--original", a, "--protected", b, "--json", str(out_json), "--html",
               "/proc/ev.html")  # fmt: skip
    _assert_bad(res, "--html", "/proc", "cannot write", written=(out_json,))


def test_ragged_csv_is_one_line(tmp_path) -> None:
    """pandas' tokenizer message ends in a newline; the error must stay one line."""
    a, _ = _pair(tmp_path)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("v1,v2,v3,v4\n1,2,3,4\n5,6,7,8,9\n")
    res = _run("--original", a, "--protected", str(ragged))
    _assert_bad(res, "ragged.csv", "--delimiter")
    assert "\n;" not in res.output and "saw 5;" in res.output.replace("\n", " ").replace("  ", " ")
