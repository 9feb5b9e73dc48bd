"""The outputs of a job form one release and never replace what is not ours.

Rules (each tested over every command that writes):

* the files of one job form one release: staged, then renamed into place together under a
  folder lock; a failed or interrupted job replaces nothing and leaves no temporary file;
* outputs may only replace regular files that are not inputs of the job (the job file,
  hierarchies, the grid's protected files count as inputs);
* a device, FIFO or terminal is written, never renamed over; a symlink is followed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.io import (
    output_set,
    remove_stale_temporaries,
    write_table,
    write_text,
)
from sdckit.errors import ConfigError
from sdckit.report.writer import write_json

runner = CliRunner()

AGE_HIERARCHY = "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(20, 60)) + "\n"
SEX_HIERARCHY = "M;*\nF;*\n"


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*.tmp"))


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    """A 200-record data set with two QIs, their hierarchies, and a numeric column."""
    rows = [(20 + i % 40, "MF"[i % 2], (i * 37) % 101) for i in range(200)]
    pd.DataFrame(rows, columns=["age", "sex", "income"]).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "h_age.csv").write_text(AGE_HIERARCHY)
    (tmp_path / "h_sex.csv").write_text(SEX_HIERARCHY)
    return tmp_path


def _anonymize_job(folder: Path, name: str = "job.yaml", k: int = 2, **output: str) -> Path:
    out = output or {"path": "out.csv", "report": "out.html", "json": "out.json"}
    lines = "\n".join(f"  {key}: {value}" for key, value in out.items())
    text = textwrap.dedent(
        f"""\
        input: {{path: in.csv}}
        attributes:
          age: {{role: quasi_identifying, hierarchy: h_age.csv}}
          sex: {{role: quasi_identifying, hierarchy: h_sex.csv}}
        models: [{{k_anonymity: {{k: {k}}}}}]
        output:
        """
    )
    path = folder / name
    path.write_text(text + lines + "\n")
    return path


def _mask_job(folder: Path, **output: str) -> Path:
    out = output or {"path": "masked.csv", "report": "mask.html", "json": "mask.json"}
    lines = "\n".join(f"  {key}: {value}" for key, value in out.items())
    path = folder / "mask.yaml"
    path.write_text(
        "input: {path: in.csv}\nseed: 1\n"
        "methods: [{noise: {columns: [income], alpha: 0.5}}]\noutput:\n" + lines + "\n"
    )
    return path


def _compare_job(folder: Path, **output: str) -> Path:
    out = output or {"report": "cmp.html", "json": "cmp.json"}
    lines = "\n".join(f"  {key}: {value}" for key, value in out.items())
    path = folder / "grid.yaml"
    path.write_text(
        "input: {path: in.csv}\ncolumns: [income]\nseed: 1\n"
        "grid: [{noise: {alpha: [0.5]}}]\noutput:\n" + lines + "\n"
    )
    return path


# ---------------------------------------------------------------------------------------------
# one release
# ---------------------------------------------------------------------------------------------
def test_output_set_renames_nothing_until_the_block_ends(tmp_path: Path) -> None:
    with output_set() as outputs:
        write_text(tmp_path / "a.txt", "A")
        write_json(tmp_path / "a.json", {"x": 1})
        assert not (tmp_path / "a.txt").exists() and not (tmp_path / "a.json").exists()
    assert (tmp_path / "a.txt").read_text() == "A"
    assert json.loads((tmp_path / "a.json").read_text())["run_id"] == outputs.run_id
    assert _temporaries(tmp_path) == []


def test_a_failed_job_replaces_nothing_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError), output_set():
        write_text(tmp_path / "a.txt", "new")
        write_text(tmp_path / "b.txt", "new")
        raise RuntimeError("the report failed")
    assert (tmp_path / "a.txt").read_text() == "old"
    assert not (tmp_path / "b.txt").exists()
    assert _temporaries(tmp_path) == []


def test_two_sets_never_mix(tmp_path: Path) -> None:
    """Two runs staging the same outputs: whichever commits last owns the whole set."""
    staged, release = threading.Event(), threading.Event()
    ids: dict[str, str] = {}

    def first_run() -> None:  # threads start with their own context: their own output set
        with output_set() as outputs:
            ids["first"] = outputs.run_id
            write_text(tmp_path / "data.csv", "k=2")
            write_json(tmp_path / "summary.json", {"k": 2})
            staged.set()
            release.wait(10)

    thread = threading.Thread(target=first_run)
    thread.start()
    staged.wait(10)
    with output_set() as outputs:  # the second run commits while the first is still staging
        write_text(tmp_path / "data.csv", "k=10")
        write_json(tmp_path / "summary.json", {"k": 10})
    assert (tmp_path / "data.csv").read_text() == "k=10"
    release.set()
    thread.join(10)
    assert (tmp_path / "data.csv").read_text() == "k=2"
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc == {"k": 2, "run_id": ids["first"]} and ids["first"] != outputs.run_id
    assert _temporaries(tmp_path) == []


def _min_class(csv: Path) -> int:
    df = pd.read_csv(csv, dtype=str)
    released = df[(df["age"] != "*") | (df["sex"] != "*")]
    return int(released.groupby(["age", "sex"]).size().min())


def test_concurrent_jobs_leave_one_consistent_release(small: Path) -> None:
    """Two processes write the same outputs (k=2 and k=20): the CSV, JSON and HTML on disk
    are always those of one run (same run id; the CSV's smallest class meets the JSON's k)."""
    jobs = [_anonymize_job(small, "k2.yaml", k=2), _anonymize_job(small, "k20.yaml", k=20)]
    exe = [sys.executable, "-m", "sdckit.cli"]
    for _ in range(3):
        procs = [
            subprocess.Popen([*exe, "anonymize", "--config", str(j), "--quiet"], cwd=small)
            for j in jobs
        ]
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
        doc = json.loads((small / "out.json").read_text())
        k = int(doc["models_satisfied"][0].split("-")[0])
        assert k in (2, 20)
        assert doc["run_id"] in (small / "out.html").read_text()
        assert _min_class(small / "out.csv") >= k
        assert _temporaries(small) == []


# ---------------------------------------------------------------------------------------------
# inputs are never outputs
# ---------------------------------------------------------------------------------------------
def _invoke(*args: str) -> object:
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("victim", ["h_age.csv", "job.yaml", "in.csv"])
def test_anonymize_refuses_outputs_on_its_inputs(small: Path, victim: str) -> None:
    job = _anonymize_job(small, path=victim)
    before = (small / victim).read_bytes()
    res = _invoke("anonymize", "--config", job)
    assert res.exit_code == 2, res.output
    assert "is the file the job reads" in " ".join(res.output.split())
    assert (small / victim).read_bytes() == before


def test_json_flag_on_the_job_file_is_refused_for_every_job_command(small: Path) -> None:
    for command, job in (
        ("anonymize", _anonymize_job(small)),
        ("mask", _mask_job(small)),
        ("compare", _compare_job(small)),
    ):
        before = job.read_bytes()
        res = _invoke(command, "--config", job, "--json", job)
        assert res.exit_code == 2, (command, res.output)
        assert "the job file" in " ".join(res.output.split()), (command, res.output)
        assert job.read_bytes() == before


def test_hard_link_to_an_input_is_refused(small: Path) -> None:
    os.link(small / "h_sex.csv", small / "alias.csv")
    job = _anonymize_job(small, path="alias.csv")
    res = _invoke("anonymize", "--config", job)
    assert res.exit_code == 2 and (small / "h_sex.csv").read_text() == SEX_HIERARCHY


def test_mask_and_compare_refuse_outputs_on_inputs(small: Path) -> None:
    before = (small / "in.csv").read_bytes()
    res = _invoke("mask", "--config", _mask_job(small, path="in.csv"))
    assert res.exit_code == 2, res.output
    res = _invoke("compare", "--config", _compare_job(small, report="in.csv"))
    assert res.exit_code == 2, res.output
    assert (small / "in.csv").read_bytes() == before


def test_analyze_and_evaluate_refuse_outputs_on_inputs(small: Path) -> None:
    before = (small / "in.csv").read_bytes()
    res = _invoke("analyze", small / "in.csv", "--qi", "age,sex", "--html", small / "in.csv")
    assert res.exit_code == 2, res.output
    res = _invoke(
        "evaluate", "--original", small / "in.csv", "--protected", small / "in.csv",
        "--columns", "income", "--json", small / "in.csv",
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert (small / "in.csv").read_bytes() == before


# ---------------------------------------------------------------------------------------------
# special files and symlinks
# ---------------------------------------------------------------------------------------------
def test_a_fifo_output_is_written_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_table(pd.DataFrame({"a": [1, 2]}), fifo)
    reader.join(timeout=10)
    assert got == [b"a\n1\n2\n"]
    assert fifo.is_fifo()


def test_a_symlink_output_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "releases").mkdir()
    target = tmp_path / "releases" / "v1.csv"
    target.write_text("old\n")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    write_text(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"


def test_json_to_dev_stdout(small: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", "analyze", str(small / "in.csv"), "--qi", "age,sex",
         "--json", "/dev/stdout", "--quiet"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["records"] == 200
    assert Path("/dev/stdout").exists()


@pytest.mark.parametrize("command", ["anonymize", "mask"])
def test_job_outputs_on_a_fifo_stream_into_it(small: Path, command: str) -> None:
    fifo = small / "sink"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    job = (
        _anonymize_job(small, path="sink")
        if command == "anonymize"
        else _mask_job(small, path="sink")
    )
    res = _invoke(command, "--config", job, "--quiet")
    reader.join(timeout=30)
    assert res.exit_code == 0, res.output
    assert fifo.is_fifo() and got and got[0].startswith(b"age,sex,income")


def test_a_socket_output_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        res = _invoke("analyze", tmp_path / "nope.csv", "--qi", "a", "--json", path)
    assert res.exit_code == 2 and "socket" in res.output


# ---------------------------------------------------------------------------------------------
# killed runs
# ---------------------------------------------------------------------------------------------
def test_sigterm_discards_the_staged_outputs(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, signal, time
        from sdckit.cli import _terminated
        from sdckit.core.io import output_set, write_text
        signal.signal(signal.SIGTERM, _terminated)
        with output_set():
            write_text({str(tmp_path / "a.csv")!r}, "a")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
        """
    )
    res = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert res.returncode == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_cli_installs_the_sigterm_handler(small: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import signal, sys; import sdckit.cli as c; c.app = lambda: print(signal.getsignal("
         "signal.SIGTERM) is c._terminated); c.main()"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, _ = proc.communicate(timeout=60)
    assert out.strip() == "True"


def test_stale_temporaries_of_dead_runs_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.csv.{dead.pid}.abcd1234.tmp"
    stale.write_text("half")
    alive = tmp_path / f".out.csv.{os.getpid()}.efgh5678.tmp"
    alive.write_text("in progress")
    write_text(tmp_path / "out.csv", "x")
    assert not stale.exists() and alive.exists()
    assert remove_stale_temporaries(tmp_path / "out.csv") == []


def test_config_error_type_for_output_refusals(tmp_path: Path) -> None:
    from sdckit.core.io import check_output_paths

    with pytest.raises(ConfigError, match="both name the same file"):
        check_output_paths({"--json": tmp_path / "x", "--html": tmp_path / "x"}, {})


# ---------------------------------------------------------------------------------------------
# CSV handling, one output policy, formulas
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("a,b,c\n1,,3\n4,5\n6,7,8\n", "line 3 has 2 field(s) where the header has 3"),
        ("a,b\n1,2,3\n", "more fields than the header"),
        ("a,b\n1,2\n1,2,3\n", "Expected 2 fields in line 3"),
        ("a,b,a\n1,2,3\n", "'a' more than once"),
    ],
)
def test_malformed_csv_is_an_error_naming_the_line(tmp_path: Path, content, fragment) -> None:
    (tmp_path / "in.csv").write_text(content)
    res = _invoke("analyze", tmp_path / "in.csv", "--qi", "a")
    assert res.exit_code == 2, res.output
    assert fragment in " ".join(res.output.split())


def test_empty_last_fields_are_not_short_rows(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text('a,b,c\n1,2,\n"x\ny",5,\n')
    res = _invoke("analyze", tmp_path / "in.csv", "--qi", "a", "--quiet")
    assert res.exit_code == 0, res.output


def test_unknown_encoding_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("a\n1\n")
    res = _invoke("analyze", tmp_path / "in.csv", "--qi", "a", "--encoding", "nonsense")
    assert res.exit_code == 2 and "unknown encoding 'nonsense'" in res.output


@pytest.mark.parametrize("command", ["anonymize", "mask", "compare"])
def test_a_job_without_outputs_is_refused(small: Path, command: str) -> None:
    job = {"anonymize": _anonymize_job, "mask": _mask_job, "compare": _compare_job}[command](small)
    text = job.read_text()
    job.write_text(text[: text.index("output:")])
    res = _invoke(command, "--config", job)
    assert res.exit_code == 2 and "writes nothing" in " ".join(res.output.split())


def test_outputs_follow_the_input_delimiter_unless_set(small: Path) -> None:
    pd.read_csv(small / "in.csv").to_csv(small / "in.csv", sep=";", index=False)
    res = _invoke("mask", "--config", _mask_job(small), "--quiet")
    assert res.exit_code == 0, res.output
    assert (small / "masked.csv").read_text().splitlines()[0] == "age;sex;income"
    job = _mask_job(small, path="masked.csv", delimiter='","')
    res = _invoke("mask", "--config", job, "--quiet")
    assert (small / "masked.csv").read_text().splitlines()[0] == "age,sex,income"


def test_every_command_help_states_the_overwrite_policy() -> None:
    for command in ("analyze", "anonymize", "mask", "compare", "evaluate", "demo"):
        res = _invoke(command, "--help")
        assert "never a file the command reads" in " ".join(res.output.split()), command


def test_messages_are_not_read_as_markup(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("a\n1\n")
    res = _invoke("analyze", tmp_path / "in.csv", "--qi", "[bold]x[/bold]")
    assert res.exit_code == 2 and "[bold]x[/bold]" in res.output


def test_neutralize_formulas_is_opt_in(small: Path) -> None:
    df = pd.read_csv(small / "in.csv")
    df["sex"] = ["=cmd|' /C calc'!A0", '=HYPERLINK("http://x")', "@SUM(1)", "-3", "M"] * 40
    df.to_csv(small / "in.csv", index=False)
    job = _mask_job(small, path="plain.csv")
    assert _invoke("mask", "--config", job, "--quiet").exit_code == 0
    plain = pd.read_csv(small / "plain.csv", dtype=str)
    assert plain["sex"].iloc[0] == "=cmd|' /C calc'!A0"
    job = _mask_job(small, path="safe.csv", neutralize_formulas="true")
    res = _invoke("mask", "--config", job, "--quiet")
    assert res.exit_code == 0, res.output
    safe = pd.read_csv(small / "safe.csv", dtype=str)
    assert safe["sex"].iloc[:5].tolist() == [
        "'=cmd|' /C calc'!A0", "'=HYPERLINK(\"http://x\")", "'@SUM(1)", "-3", "M",
    ]  # fmt: skip
    job = _mask_job(small, path="x.csv", neutralize_formulas="maybe")
    assert _invoke("mask", "--config", job).exit_code == 2


def test_quiet_silences_library_warnings(tmp_path: Path) -> None:
    script = (
        "import sys, warnings; import sdckit.cli as c; "
        "c.app = lambda: warnings.warn('numpy says hi', RuntimeWarning); "
        "sys.argv = ['sdckit', 'analyze', '--quiet']; c.main()"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert res.returncode == 0 and res.stderr == ""
    loud = script.replace("'--quiet'", "'-v'")
    res = subprocess.run([sys.executable, "-c", loud], capture_output=True, text=True)
    assert "numpy says hi" in res.stderr
