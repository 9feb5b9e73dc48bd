"""Tests: ``sdckit compare`` -- grid expansion, R-U ranking, the R-U map and the command."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import sdckit
from sdckit.cli import app
from sdckit.errors import ConfigError, DataError
from sdckit.evaluation.comparison import compare, compare_frames, rank_configurations
from sdckit.jobs.compare import expand_grid
from sdckit.jobs.config import job_from_dict
from sdckit.report.compare_report import compare_report

runner = CliRunner()


def _data(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)) @ np.array([[1.0, 0.6, 0.3], [0, 1, 0.4], [0, 0, 1]]) + 20.0
    return pd.DataFrame(x, columns=["a", "b", "c"])


def test_expand_grid_cartesian_product_and_labels() -> None:
    grid = [
        {"microaggregation": {"method": "mdav", "k": [3, 5, 10]}},
        {"noise": {"alpha": [0.1, 0.5], "method": ["uncorrelated", "correlated"]}},
        {"rank_swapping": {"p_percent": 5, "columns": ["a"]}},
        {"label": "mdav + noise", "methods": [{"microaggregation": {"k": 3}}, {"noise": {}}]},
    ]
    configs = expand_grid(grid, columns=["a", "b"])
    assert len(configs) == 3 + 4 + 1 + 1
    labels = [c.label for c in configs]
    assert labels[:3] == [f"microaggregation(method=mdav, k={k})" for k in (3, 5, 10)]
    assert labels[3] == "noise(alpha=0.1, method=uncorrelated)"
    assert labels[4] == "noise(alpha=0.1, method=correlated)"
    assert labels[5] == "noise(alpha=0.5, method=uncorrelated)"
    assert labels[7] == "rank_swapping(p_percent=5)" and labels[8] == "mdav + noise"
    # top-level columns fill in the default; a method's own columns (a list) are kept as is
    assert configs[0].methods[0][1]["columns"] == ["a", "b"]
    assert configs[7].methods[0][1]["columns"] == ["a"]
    assert [m for m, _ in configs[8].methods] == ["microaggregation", "noise"]
    assert configs[4].source == "grid[1]"


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        ([], "non-empty"),
        ([{"blur": {"k": 3}}], r"grid\[0\].*unknown method 'blur'"),
        ([{"noise": {"alpha": []}}], r"grid\[0\].noise.alpha.*empty"),
        ([{"noise": {"alpha": 0.1}, "pram": {}}], "one method per entry"),
        ([{"noise": {"alpha": -1}}], r"noise.alpha"),
        ([{"noise": {"alpha": 0.1}}, {"noise": {"alpha": 0.1}}], "also comes from grid"),
        ([{"noise": {"alpha": 0.1}, "label": 3}], "label"),
        ([{"methods": [{"noise": {}}], "extra": 1}], "unknown key"),
    ],
)
def test_expand_grid_errors_name_the_key(grid, match) -> None:
    with pytest.raises(ConfigError, match=match):
        expand_grid(grid, columns=["a"])


def test_single_entry_label() -> None:
    configs = expand_grid(
        [
            {"label": "swap a", "rank_swapping": {"p_percent": 5, "columns": ["a"]}},
            {"label": "swap b", "rank_swapping": {"p_percent": [5, 9], "columns": ["b"]}},
        ]
    )
    assert [c.label for c in configs] == [
        "swap a",
        "swap b: rank_swapping(p_percent=5)",
        "swap b: rank_swapping(p_percent=9)",
    ]


def test_rank_by_ru_score_hand_values() -> None:
    rows = [
        {"label": "A", "ru_score": 12.0},
        {"label": "B", "ru_score": None},
        {"label": "C", "ru_score": 3.5},
        {"label": "D", "ru_score": 7.0},
    ]
    ranked = rank_configurations(rows)
    assert [(r["rank"], r["label"]) for r in ranked] == [(1, "C"), (2, "D"), (3, "A"), (None, "B")]


def test_a_risk_ceiling_ranks_the_releases_under_it_first() -> None:
    # the case: local suppression, DR 18.8, has the best score; under a risk
    # ceiling of 5 the k = 10 release (DR 0.65) comes first, the score stays a column
    rows = [
        {"label": "local suppression", "information_loss": 1.0, "disclosure_risk": 18.8,
         "ru_score": 9.9},
        {"label": "k=10", "information_loss": 30.0, "disclosure_risk": 0.65, "ru_score": 15.325},
        {"label": "k=5", "information_loss": 22.0, "disclosure_risk": 2.0, "ru_score": 12.0},
        {"label": "noise", "information_loss": None, "disclosure_risk": 1.0, "ru_score": None},
    ]  # fmt: skip
    plain = rank_configurations(rows)
    assert [r["label"] for r in plain][:3] == ["local suppression", "k=5", "k=10"]
    assert "within_limits" not in plain[0]
    ranked = rank_configurations(rows, max_risk=5.0)
    assert [(r["rank"], r["label"], r["within_limits"]) for r in ranked] == [
        (1, "k=5", True),
        (2, "k=10", True),
        (3, "local suppression", False),
        (None, "noise", True),
    ]
    assert ranked[0]["ru_score"] == 12.0
    # both ceilings: the loss ceiling drops k=10 below; an undefined IL is not within
    both = rank_configurations(rows, max_risk=5.0, max_loss=25.0)
    assert [r["label"] for r in both] == ["k=5", "local suppression", "k=10", "noise"]
    assert [r["within_limits"] for r in both] == [True, False, False, False]


def test_compare_frames_ru_score_is_the_mean_of_il_and_dr() -> None:
    x = _data()
    rng = np.random.default_rng(1)
    frames = {
        "identical": x.copy(),
        "small noise": x + rng.normal(scale=0.05, size=x.shape),
        "big noise": x + rng.normal(scale=2.0, size=x.shape),
    }
    res = compare_frames(x, frames)
    by = {r["label"]: r for r in res["ranking"]}
    for label, row in by.items():
        doc = res["evaluations"][label]
        il = doc["information_loss"]["score_il"]
        dr = 100 * doc["disclosure_risk"]["score_dr"]
        assert row["information_loss"] == pytest.approx(il)
        assert row["disclosure_risk"] == pytest.approx(dr)
        assert row["ru_score"] == pytest.approx((il + dr) / 2)
        assert row["ru_score"] == pytest.approx(doc["score"])
    # identical data: IL 0, DR 100 -> 50
    assert by["identical"]["ru_score"] == pytest.approx(50.0)
    scores = [r["ru_score"] for r in res["ranking"]]
    assert scores == sorted(scores) and [r["rank"] for r in res["ranking"]] == [1, 2, 3]
    json.dumps(res)


def test_compare_runs_the_mask_runner_and_adds_transparency() -> None:
    x = _data(80, 2)
    configs = expand_grid(
        [
            {"rank_swapping": {"p_percent": [5, 20]}},
            {"microaggregation": {"method": "individual_ranking", "k": 4}},
            {"microaggregation": {"method": "mdav", "k": 4}},
        ],
        columns=["a", "b", "c"],
    )
    res = compare(x, configs, seed=3)
    assert len(res["ranking"]) == 4 and set(res["masking"]) == {c.label for c in configs}
    docs = res["evaluations"]
    swap = docs["rank_swapping(p_percent=5)"]["transparency_attack"]
    assert swap["method"] == "rank_swap" and swap["parameter"]["window"] == 4
    # knowing the method and its parameter, the true record is always in the candidate set
    assert swap["contains_true"] == 1.0
    ir = docs["microaggregation(method=individual_ranking, k=4)"]["transparency_attack"]
    assert ir["contains_true"] == 1.0
    assert "transparency_attack" not in docs["microaggregation(method=mdav, k=4)"]
    # same seed, same result
    again = compare(x, configs, seed=3)
    assert [r["ru_score"] for r in again["ranking"]] == [r["ru_score"] for r in res["ranking"]]
    html = compare_report(res).render_html()
    assert "R-U map" in html and "Ranking" in html and html.count("base64,") == 1


def test_compare_refuses_methods_that_drop_records() -> None:
    configs = expand_grid([{"sampling": {"fraction": 0.5}}])
    with pytest.raises(DataError, match=r"grid\[0\].*sampling"):
        compare(_data(), configs, seed=1)


def test_python_reidentification_scale_takes_quasi_identifiers() -> None:
    people = pd.DataFrame({"a": list("xxyyzz") * 5, "b": list("pqpqpq") * 5})
    configs = expand_grid([{"pram": {"columns": ["a"], "p_diagonal": 0.8}}])
    with pytest.raises(ConfigError, match="pass quasi_identifiers="):
        compare(people, configs, seed=1, scale="reidentification")
    res = compare(people, configs, quasi_identifiers=["a", "b"], seed=1, scale="reidentification")
    (doc,) = res["evaluations"].values()
    assert res["scale"] == "reidentification" and doc["qi"] == ["a", "b"]


def test_job_grid_and_cli(tmp_path) -> None:
    x = _data(70, 4)
    x.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "grid.yaml").write_text(
        "input: {path: in.csv}\n"
        "columns: [a, b, c]\n"
        "qi: [a, b]\n"
        "seed: 1\n"
        "grid:\n"
        "  - microaggregation: {k: [3, 6]}\n"
        "  - noise: {alpha: 0.2}\n"
        "output: {report: out/compare.html, json: out/compare.json}\n"
    )
    res = runner.invoke(app, ["compare", "--config", str(tmp_path / "grid.yaml")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert [r["rank"] for r in doc["ranking"]] == [1, 2, 3]
    assert {r["label"] for r in doc["ranking"]} == {
        "microaggregation(k=3)",
        "microaggregation(k=6)",
        "noise(alpha=0.2)",
    }
    assert all(d["columns"]["qi"] == ["a", "b"] for d in doc["evaluations"].values())
    assert "R-U map" in (tmp_path / "out" / "compare.html").read_text()
    # the Python API on the same job gives the same ranking
    from sdckit.jobs.compare import run_compare_job
    from sdckit.jobs.config import load_job

    again = run_compare_job(load_job(tmp_path / "grid.yaml"), json_out=tmp_path / "j2.json")
    assert [r["ru_score"] for r in again["ranking"]] == [r["ru_score"] for r in doc["ranking"]]
    assert sdckit.evaluate  # exported
    # a ceiling on the disclosure risk: the JSON states it and ranks the releases under it
    # first, the report draws it
    (tmp_path / "limited.yaml").write_text(
        (tmp_path / "grid.yaml").read_text()
        .replace("out/compare", "lim/compare")
        + "options: {max_risk: 0}\n"
    )  # fmt: skip
    res = runner.invoke(app, ["compare", "--config", str(tmp_path / "limited.yaml")])
    assert res.exit_code == 0, res.output
    limited = json.loads((tmp_path / "lim" / "compare.json").read_text())
    assert limited["limits"] == {"max_risk": 0.0}
    assert all(r["within_limits"] is (r["disclosure_risk"] <= 0) for r in limited["ranking"])
    assert "within the ceilings" in (tmp_path / "lim" / "compare.html").read_text()
    (tmp_path / "bad.yaml").write_text(
        (tmp_path / "grid.yaml").read_text() + "options: {max_risk: -1}\n"
    )
    res = runner.invoke(app, ["compare", "--config", str(tmp_path / "bad.yaml")])
    assert res.exit_code == 2 and "options.max_risk" in res.output


def test_given_protected_files_join_the_grid(tmp_path) -> None:
    x = _data(50, 9)
    x.to_csv(tmp_path / "in.csv", index=False)
    noisy = x + np.random.default_rng(2).normal(scale=0.3, size=x.shape)
    noisy.to_csv(tmp_path / "made_elsewhere.csv", sep=";", index=False)
    x.iloc[:10].to_csv(tmp_path / "short.csv", index=False)
    job = job_from_dict(
        {
            "input": {"path": "in.csv"},
            "seed": 1,
            "grid": [
                {"noise": {"alpha": 0.1, "columns": ["a", "b", "c"]}},
                {
                    "protected": {
                        "path": "made_elsewhere.csv",
                        "label": "other tool",
                        "delimiter": ";",
                    }
                },
                {"protected": {"path": "in.csv"}},
            ],
        },
        base_dir=tmp_path,
    )
    from sdckit.jobs.compare import run_compare_job

    res = run_compare_job(job)
    by = {r["label"]: r for r in res["ranking"]}
    assert set(by) == {"noise(alpha=0.1)", "other tool", "in"}
    assert by["in"]["ru_score"] == pytest.approx(50.0)  # the original itself: IL 0, DR 100
    expected = sdckit.evaluate(x, noisy)["score"]
    assert by["other tool"]["ru_score"] == pytest.approx(expected)
    bad = job_from_dict(
        {"input": {"path": "in.csv"}, "grid": [{"protected": {"path": "short.csv"}}]},
        base_dir=tmp_path,
    )
    with pytest.raises(DataError, match=r"grid\[0\] \(short\).*10 records"):
        run_compare_job(bad)
    with pytest.raises(ConfigError, match="protected.colour"):
        expand_grid([{"protected": {"path": "x.csv", "colour": 1}}])


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("grid:\n  - noise: {alpha: [0.1, x]}\n", "alpha"),
        ("grid:\n  - blur: {}\n", "unknown method"),
        ("methods:\n  - noise: {}\ngrid:\n  - noise: {}\n", "grid"),
        ("grid:\n  - noise: {alpha: 0.1}\noptions: {colour: 1}\n", "options.colour"),
        ("grid:\n  - noise: {alpha: 0.1, columns: [a, zz]}\n", "zz"),
        ("grid:\n  - sampling: {fraction: 0.5}\n", "sampling"),
    ],
)
def test_cli_bad_grid_exit_2_nothing_written(tmp_path, body, match) -> None:
    _data(30).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "grid.yaml").write_text(
        "input: {path: in.csv}\ncolumns: [a, b, c]\nseed: 1\n"
        + body
        + "output: {report: r.html, json: r.json}\n"
    )
    res = runner.invoke(app, ["compare", "--config", str(tmp_path / "grid.yaml")])
    assert res.exit_code == 2, res.output
    assert match in " ".join(res.output.split())
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.json").exists()


def test_job_from_dict_with_dataframe_input() -> None:
    from sdckit.jobs.compare import run_compare_job

    job = job_from_dict(
        {"input": {"path": _data(40)}, "columns": ["a", "b"], "seed": 2,
         "grid": [{"noise": {"alpha": [0.05, 1.0]}}]}
    )  # fmt: skip
    res = run_compare_job(job)
    assert res["written"] == []
    first, second = res["ranking"]
    assert first["label"] == "noise(alpha=0.05)" and first["ru_score"] < second["ru_score"]


# -- anonymize entries and the re-identification scale ----------------------------------------
def _people(n: int = 120, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["m", "f"], n),
            "zip": rng.choice(["1011", "1012", "1021", "1022"], n),
            "disease": rng.choice(["flu", "cold", "asthma", "none"], n),
        }
    )


_ATTRS = {
    "age": {
        "role": "quasi_identifying",
        "type": "integer",
        "hierarchy": {"interval": {"widths": [10, 20]}},
    },
    "sex": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
    "zip": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
    "disease": {"role": "sensitive"},
}


def _anon_job(grid, tmp_path=None, **extra):
    doc = {"input": {"path": _people()}, "attributes": _ATTRS, "seed": 1, "grid": grid}
    doc.update(extra)
    return job_from_dict(doc, base_dir=tmp_path or ".")


def test_anonymize_entries_expand_like_masking_entries() -> None:
    job = _anon_job([])
    configs = expand_grid(
        [
            {
                "anonymize": {
                    "models": [{"k_anonymity": {"k": [2, 5]}}],
                    "suppression_limit": [0, 0.1],
                }
            },
            {
                "anonymize": {"models": [{"k_anonymity": {"k": 3}}], "algorithm": "mondrian"},
                "label": "M",
            },
        ],
        job=job,
    )
    assert [c.label for c in configs] == [
        "anonymize(optimal, suppression_limit=0, k=2)",
        "anonymize(optimal, suppression_limit=0, k=5)",
        "anonymize(optimal, suppression_limit=0.1, k=2)",
        "anonymize(optimal, suppression_limit=0.1, k=5)",
        "M",
    ]
    assert configs[3].anonymize["suppression_limit"] == 0.1
    assert configs[3].anonymize["models"][0].k == 5
    assert configs[4].anonymize["algorithm"] == "mondrian"


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ({"anonymize": {"k": 5}}, r"grid\[0\]\.anonymize\.k: unknown key"),
        ({"anonymize": {"suppression_limit": 0.1}}, r"anonymize\.models is missing"),
        ({"anonymize": {"models": [{"k_anonymity": {"kk": 5}}]}}, "unknown parameter 'kk'"),
        (
            {"anonymize": {"models": [{"k_anonymity": {"k": 5}}], "algorithm": "flash"}},
            "unknown algorithm 'flash'",
        ),
        (
            {"anonymize": {"models": [{"k_anonymity": {"k": 5}}], "suppression_limit": 2}},
            r"suppression_limit must be a share",
        ),
        ({"anonymize": {"models": [{"k_anonymity": {"k": []}}]}}, "empty list"),
        ({"anonymize": {"models": [{"k_anonymity": {"k": 2}}]}, "colour": 1}, r"grid\[0\]\.colour"),
    ],
)
def test_anonymize_entry_errors_name_the_key(entry, match) -> None:
    with pytest.raises(ConfigError, match=match):
        expand_grid([entry], job=_anon_job([]))


def test_reidentification_scale_ranks_anonymizations_and_masking() -> None:
    from sdckit.jobs.compare import run_compare_job
    from sdckit.risk.matching import matching_risk
    from sdckit.utility.categorical import relative_entropy_loss

    job = _anon_job(
        [
            {"anonymize": {"models": [{"k_anonymity": {"k": [2, 5]}}]}},
            {"pram": {"columns": ["sex", "zip"], "p_diagonal": 0.8}},
            {"anonymize": {"models": [{"l_diversity": {"attribute": "disease", "l": 9}}]}},
        ]
    )
    res = run_compare_job(job)
    assert res["scale"] == "reidentification"
    by = {r["label"]: r for r in res["ranking"]}
    k5 = by["anonymize(optimal, k=5)"]
    # the ranked numbers are the measures computed directly on the released file
    from sdckit.models import KAnonymity

    released = sdckit.anonymize(_people(), job.schema, [KAnonymity(5)], seed=1).data
    qi = ["age", "sex", "zip"]
    hs = {q: job.schema.hierarchy(q) for q in qi}
    dr = matching_risk(_people(), released, qi, hs).average
    assert dr == pytest.approx(released.groupby(qi).ngroups / len(released))  # J/n
    il = relative_entropy_loss(_people(), released, qi)["relative_ebil"]
    assert k5["disclosure_risk"] == pytest.approx(100 * dr)
    assert k5["information_loss"] == pytest.approx(100 * il)
    assert k5["ru_score"] == pytest.approx(50 * (il + dr))
    assert k5["highest_risk"] <= 1 / 5 + 1e-12
    assert k5["transformation"] is not None and k5["suppressed_records"] == 0
    # k = 5 generalizes at least as much as k = 2: less risk, more loss
    k2 = by["anonymize(optimal, k=2)"]
    assert k5["disclosure_risk"] <= k2["disclosure_risk"]
    assert k5["information_loss"] >= k2["information_loss"]
    # 9-diversity of a 4-value attribute has no solution: ranked last, with a note
    none = by["anonymize(optimal, attribute=disease, l=9)"]
    assert none["rank"] is None and none["ru_score"] is None
    assert res["ranking"][-1]["label"] == "anonymize(optimal, attribute=disease, l=9)"
    assert (
        "no solution"
        in res["evaluations"]["anonymize(optimal, attribute=disease, l=9)"]["notes"][0]
    )
    scores = [r["ru_score"] for r in res["ranking"] if r["ru_score"] is not None]
    assert scores == sorted(scores)
    html = compare_report(res).render_html()
    assert "re-identifies by matching" in html and "transformation" in html


def test_reidentification_scale_errors() -> None:
    from sdckit.jobs.compare import run_compare_job

    grid = [{"anonymize": {"models": [{"k_anonymity": {"k": 2}}]}}]
    with pytest.raises(ConfigError, match=r"options\.scale: anonymize entries"):
        run_compare_job(_anon_job(grid, options={"scale": "score"}))
    with pytest.raises(ConfigError, match=r"options\.scale: unknown scale 'risk'"):
        run_compare_job(_anon_job(grid, options={"scale": "risk"}))
    no_attrs = job_from_dict({"input": {"path": _people()}, "grid": grid})
    with pytest.raises(ConfigError, match=r"attributes: anonymize entries need"):
        run_compare_job(no_attrs)
    # perturbed numbers of a quasi-identifier cannot be matched: the message says what to use
    noisy = _anon_job(grid + [{"noise": {"columns": ["age"], "alpha": 0.5}}])
    with pytest.raises(DataError, match=r"noise\(alpha=0.5\).*column 'age'.*distance-based"):
        run_compare_job(noisy)


def test_cli_anonymize_grid_writes_map_and_ranking(tmp_path) -> None:
    _people().to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "grid.yaml").write_text(
        "input: {path: people.csv}\n"
        "attributes:\n"
        "  age: {role: quasi_identifying, type: integer,\n"
        "        hierarchy: {interval: {widths: [10, 20]}}}\n"
        "  sex: {role: quasi_identifying, hierarchy: {masking: {}}}\n"
        "  zip: {role: quasi_identifying, hierarchy: {masking: {}}}\n"
        "  disease: {role: sensitive}\n"
        "seed: 1\n"
        "grid:\n"
        "  - anonymize: {models: [{k_anonymity: {k: [2, 4]}}], algorithm: [optimal, mondrian]}\n"
        "  - pram: {columns: [sex], p_diagonal: 0.9}\n"
        "output: {report: out/c.html, json: out/c.json}\n"
    )
    res = runner.invoke(app, ["compare", "--config", str(tmp_path / "grid.yaml")])
    assert res.exit_code == 0, res.output
    assert "reidentification scale" in res.output
    doc = json.loads((tmp_path / "out" / "c.json").read_text())
    assert doc["scale"] == "reidentification"
    assert len(doc["ranking"]) == 5 and [r["rank"] for r in doc["ranking"]] == [1, 2, 3, 4, 5]
    html = (tmp_path / "out" / "c.html").read_text()
    assert "R-U map" in html and "re-identifies by matching" in html
    # anonymize entries without attributes: exit 2, nothing written
    (tmp_path / "bad.yaml").write_text(
        "input: {path: people.csv}\ngrid:\n  - anonymize: {models: [{k_anonymity: {k: 2}}]}\n"
        "output: {report: b.html, json: b.json}\n"
    )
    res = runner.invoke(app, ["compare", "--config", str(tmp_path / "bad.yaml")])
    assert res.exit_code == 2, res.output
    assert "attributes" in res.output
    assert not (tmp_path / "b.html").exists() and not (tmp_path / "b.json").exists()


def test_masking_grid_on_the_reidentification_scale(tmp_path) -> None:
    """Recoding to intervals, PRAM and local suppression of categorical QIs, no anonymize."""
    from sdckit.jobs.compare import run_compare_job
    from sdckit.masking import GlobalRecoding
    from sdckit.risk.matching import matching_risk

    people = _people()
    people.to_csv(tmp_path / "p.csv", index=False)
    (tmp_path / "g.toml").write_text(
        'input = "p.csv"\nqi = ["age", "sex", "zip"]\nseed = 2\n'
        "grid = [\n"
        '  { global_recoding = { columns = ["age"], method = "equal_width", bins = [2, 4] } },\n'
        '  { pram = { columns = ["zip"], p_diagonal = 0.8 } },\n'
        '  { local_suppression = { columns = ["age", "sex", "zip"], k = 2 } },\n'
        "]\n"
        'options = { scale = "reidentification" }\n'
    )
    from sdckit.jobs.config import load_job

    res = run_compare_job(load_job(tmp_path / "g.toml"))
    by = {r["label"]: r for r in res["ranking"]}
    assert len(by) == 4 and res["scale"] == "reidentification"
    recoded = GlobalRecoding(["age"], method="equal_width", bins=4).apply(people, 2)[-1].data
    assert recoded["age"].astype(str).str.startswith("[").all()  # released as intervals
    dr = matching_risk(people, recoded, ["age", "sex", "zip"]).average
    row = by["global_recoding(method=equal_width, bins=4)"]
    assert row["disclosure_risk"] == pytest.approx(100 * dr)
    # coarser recoding: no more risk
    assert (
        row["disclosure_risk"]
        >= by["global_recoding(method=equal_width, bins=2)"]["disclosure_risk"]
    )
    assert all(r["suppressed_records"] is None for r in res["ranking"])
