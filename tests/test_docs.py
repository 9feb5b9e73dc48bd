"""The documentation site (``docs/``, ``mkdocs.yml``): every code block runs, the site builds.

Each page's fenced blocks run in order in a fresh temporary folder: ```` ```python ```` blocks
are executed (one namespace per page); in ```` ```console ```` blocks every line starting with
``$ `` is a shell command (continued by a trailing ``\\``) that must exit 0, with ``sdckit``
and ``python`` being this interpreter (``python -m sdckit.cli``) and this checkout's source
first on the path; a ```` ```yaml title="job.yaml" ```` block is written to that file first.
Other fences (``text``, ``yaml`` without a title, ...) are shown, not run; a fence in another
language is refused, so a shell example cannot slip in unrun as ``bash``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SRC = ROOT / "src"

#: Fence languages a page may use: the first three run (yaml only with a title).
LANGUAGES = {"python", "console", "yaml", "text", "toml", "json", "sql"}

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    language: str
    title: str | None
    code: str


def pages() -> list[Path]:
    """The site's markdown pages (generated reference pages are not files)."""
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order (nested fences are not used in the docs)."""
    out: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        language = info.split()[0] if info else ""
        title = re.search(r'title="([^"]+)"', info)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        if j == len(lines):
            raise AssertionError(f"{page.relative_to(ROOT)}:{i + 1}: unclosed code fence")
        rel = str(page.relative_to(ROOT))
        out.append(Block(rel, i + 1, language, title.group(1) if title else None, "\n".join(body)))
        i = j + 1
    return out


def commands(console: str) -> list[str]:
    """The shell commands of a console block: ``$ `` lines, joined over trailing ``\\``."""
    out: list[str] = []
    current: str | None = None
    for line in console.splitlines():
        if current is not None:
            current += "\n" + line
        elif line.startswith("$ "):
            current = line[2:]
        else:
            continue  # the command's output, shown for the reader
        if not current.endswith("\\"):
            out.append(current)
            current = None
    if current is not None:
        out.append(current)
    return out


def _shims(folder: Path) -> dict[str, str]:
    """An environment whose ``sdckit`` and ``python`` are this interpreter and checkout."""
    folder.mkdir()
    for name, line in (
        ("sdckit", f'exec {shlex.quote(sys.executable)} -m sdckit.cli "$@"'),
        ("python", f'exec {shlex.quote(sys.executable)} "$@"'),
    ):
        script = folder / name
        script.write_text(f"#!/bin/sh\n{line}\n")
        script.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{folder}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    return env


#: Pages whose examples need an extra: the modules it installs (the page is skipped without).
EXTRAS = {"getting-started/serve.md": ("fastapi", "uvicorn", "duckdb", "sqlglot", "httpx")}
#: Pages run on one Spark session (the ``spark`` fixture of conftest.py: local[2], skipped
#: without PySpark or Java): their ``sdckit`` commands run in this process, through the Typer
#: application, so that they join that session instead of starting a JVM each.
SPARK_PAGES = {"getting-started/spark.md"}

RUNNABLE = [p for p in pages() if any(b.language in ("python", "console") for b in blocks(p))]


def test_fences_are_known() -> None:
    """Every block is in a known language, so nothing meant to run is skipped silently."""
    bad = [
        f"{b.page}:{b.line}: ```{b.language}"
        for p in pages()
        for b in blocks(p)
        if b.language not in LANGUAGES
    ]
    assert not bad, "use python/console (run) or text (shown only): " + ", ".join(bad)


def test_collector_reads_console_commands() -> None:
    """Output lines are skipped and continued commands joined."""
    text = "$ sdckit a \\\n    --b 1\nout put\n$ echo x\n"
    assert commands(text) == ["sdckit a \\\n    --b 1", "echo x"]


def test_collector_runs_blocks_in_order_and_reports_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A titled yaml block is written before the code after it reads it; one namespace per
    page; a failing command or block fails, naming the page and line."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    env = _shims(tmp_path / "bin")
    page = tmp_path / "page.md"
    page.write_text(
        '```yaml title="job.yaml"\nk: 5\n```\n\n'
        "```python\nimport yaml\nk = yaml.safe_load(open('job.yaml'))['k']\n```\n\n"
        "```python\nassert k == 5\nopen('seen.txt', 'w').write(str(k))\n```\n\n"
        "```console\n$ python -c \"assert open('seen.txt').read() == '5'\"\n```\n\n"
        "```text\n$ false\n```\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    _run_blocks(page, work, env, {})
    page.write_text("```console\n$ sdckit --version\n$ false\n```\n")
    with pytest.raises(AssertionError, match=r"page.md:1: `false` exited 1"):
        _run_blocks(page, work, env, {})
    page.write_text("text\n\n```python\n1 / 0\n```\n")
    with pytest.raises(AssertionError, match=r"page.md:3: ZeroDivisionError"):
        _run_blocks(page, work, env, {})


@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(DOCS)) for p in RUNNABLE])
def test_page_code_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The page's python and console blocks run in order in a fresh folder."""
    name = str(page.relative_to(DOCS))
    for module in EXTRAS.get(name, ()):
        pytest.importorskip(module)
    in_process = name in SPARK_PAGES
    if in_process:
        request.getfixturevalue("spark")  # started once, or the test skipped with the reason
    work = tmp_path / "work"
    work.mkdir()
    env = _shims(tmp_path / "bin")
    monkeypatch.chdir(work)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict[str, object] = {"__name__": "__docs__"}
    environ = dict(os.environ)  # a page may set variables (the server's keys): undone after
    try:
        _run_blocks(page, work, env, namespace, in_process=in_process)
    finally:
        os.environ.clear()
        os.environ.update(environ)


def _run_blocks(
    page: Path,
    work: Path,
    env: dict[str, str],
    namespace: dict[str, object],
    *,
    in_process: bool = False,
) -> None:
    """Run the page's blocks in order in ``work`` (see the module docstring); with
    ``in_process``, a plain ``sdckit ...`` command (no shell syntax) runs in this process
    (:func:`_run_in_process`)."""
    for block in blocks(page):
        where = f"{block.page}:{block.line}"
        if block.language == "yaml" and block.title:
            (work / block.title).write_text(block.code + "\n", encoding="utf-8")
        elif block.language == "python":
            try:
                exec(compile(block.code, where, "exec"), namespace)  # noqa: S102
            except Exception as exc:  # noqa: BLE001 - reported with the block's place
                raise AssertionError(f"{where}: {type(exc).__name__}: {exc}") from exc
        elif block.language == "console":
            for command in commands(block.code):
                if in_process and _run_in_process(command, work, where):
                    continue
                done = subprocess.run(
                    command,
                    shell=True,
                    cwd=work,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert done.returncode == 0, (
                    f"{where}: `{command}` exited {done.returncode}\n{done.stdout[-2000:]}"
                    f"\n{done.stderr[-2000:]}"
                )


def _run_in_process(command: str, work: Path, where: str) -> bool:
    """Run ``sdckit ...`` through the Typer application in this process (in ``work``), the
    exit code checked; False (not run) for another program or a command with shell syntax."""
    words = shlex.split(command, comments=True)
    if not words or words[0] != "sdckit" or re.search(r"[|&;<>$`]", command):
        return False
    from typer.testing import CliRunner

    from sdckit.cli import build_app

    assert Path.cwd() == work
    done = CliRunner().invoke(build_app(), words[1:])
    assert done.exit_code == 0, (
        f"{where}: `{command}` exited {done.exit_code}\n{done.output[-3000:]}"
    )
    return True


def _reference_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_job_file_reference_lists_every_key_and_name() -> None:
    """The generated job-file reference names every key of every section and every entry of
    every registry, and each bad-value message is sdckit's, naming the job file."""
    from sdckit.algorithms.registry import ALGORITHMS
    from sdckit.core.hierarchy_registry import HIERARCHY_BUILDERS
    from sdckit.jobs import spec
    from sdckit.masking.pipeline import METHODS
    from sdckit.models import MODELS
    from sdckit.synthesis.api import METHODS as SYNTHESIS
    from sdckit.tables.registry import TABLE_METHODS

    text = _reference_module().job_file_reference()
    headings = set(re.findall(r"^### `([^`]+)`", text, re.M))
    for registry in (MODELS, ALGORITHMS, METHODS, HIERARCHY_BUILDERS, TABLE_METHODS, SYNTHESIS):
        assert set(registry.names()) <= headings, registry.family
    for name in spec.RULE_NAMES:
        assert f"`{name}`" in text
    from sdckit.jobs import mask, synthesize, table

    options = text.split("## `options:` by job kind", 1)[1].split("\n## ", 1)[0]
    for key in (*mask._OPTIONS, *synthesize._JOB_OPTIONS, *table._BUILD_OPTIONS):
        assert f"`{key}`" in options, key
    rows = re.findall(r"^\| `(\w+)` \|", text, re.M)
    for section in (spec.JobSpec, spec.InputSection, spec.OutputSection, spec.AttributeSection):
        assert set(section.model_fields) <= set(rows), section.__name__
    sections = (
        spec.JobSpec,
        spec.InputSection,
        spec.OutputSection,
        spec.AttributeSection,
        spec.PseudonymizeSection,
        spec.SparkSection,
        spec.DimensionSection,
    )
    for section in sections:  # each docstring says what every key is for
        notes = _reference_module()._parameter_notes(section)
        assert set(notes) == set(section.model_fields), section.__name__
        assert all(notes.values()), section.__name__
    k_row = next(line for line in text.splitlines() if "models[0].k_anonymity.k " in line)
    _assert_method_parameters(text)
    assert "must be &gt;= 1, got 0" in k_row and "| integer (&gt;= 1) |" not in k_row
    assert "| `k` | integer (>= 1) | required |" in text
    rows = [r for r in text.splitlines() if r.startswith("| `") and r.count(" | ") >= 4]
    no_meaning = [r[:60] for r in rows if not r.strip("|").split(" | ")[3].strip()]
    assert len(rows) > 300 and not no_meaning, no_meaning  # each key says what it is for
    messages = re.findall(r"<code>([^<]*)</code>", text)
    assert len(messages) > 100 and all(m.startswith("&#x27;job.yaml&#x27;") for m in messages)


def _section(text: str, title: str, name: str) -> str:
    """The ``### `name``` entry under the ``## title...`` section of the reference."""
    part = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return part.split(f"### `{name}`", 1)[1].split("\n### ", 1)[0]


def _assert_method_parameters(text: str) -> None:
    """Every table method's options and every synthesis method's parameters have a row with
    a meaning and the message a bad value gets (each naming the key)."""
    from sdckit.synthesis.api import METHODS as SYNTHESIS
    from sdckit.synthesis.api import method_parameters
    from sdckit.tables.options import OPTIONS, AuditOptions
    from sdckit.tables.registry import TABLE_METHODS

    wanted = [("Table methods", n, list(OPTIONS[n].model_fields)) for n in TABLE_METHODS.names()]
    wanted.append(("Table methods", "audit", list(AuditOptions.model_fields)))
    wanted += [("Synthesis methods", n, list(method_parameters(n))) for n in SYNTHESIS.names()]
    counted = 0
    for title, name, keys in wanted:
        section = _section(text, title, name)
        for key in keys:
            row = next(r for r in section.splitlines() if r.startswith(f"| `{key}` |"))
            cells = [c.strip() for c in row.strip("|").split(" | ")]
            assert len(cells) == 5 and cells[3], (name, key, row)  # a meaning
            assert re.search(rf"\b{key}\b", cells[4]), (name, key, row)  # its message
            counted += 1
    assert counted >= 60, counted
    cta = _section(text, "Table methods", "cta")
    assert "options.time_limit must be &gt; 0, got 0" in cta
    assert "| `base` |" not in _section(text, "Table methods", "optimal")


def test_cli_reference_lists_every_command_and_option() -> None:
    """The generated command-line reference has every command and each of its options."""
    import typer.main

    from sdckit.cli import build_app

    text = _reference_module().cli_reference()
    root = typer.main.get_command(build_app())
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        assert f"## `sdckit {name}`" in text
        section = text.split(f"## `sdckit {name}`", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-"):
                    assert opt in section, (name, opt)


def test_rst_roles_become_code() -> None:
    """A docstring's reST role reaches the page as code, the last name where ``~`` asks."""
    convert = _reference_module().rst_roles_to_code
    assert convert("see :func:<code>~sdckit.risk.suda.suda2</code>.") == "see <code>suda2</code>."
    assert convert(":class:<code>sdckit.errors.DataError</code>") == (
        "<code>sdckit.errors.DataError</code>"
    )
    assert convert("ratio 1:<code>x</code>") == "ratio 1:<code>x</code>"


#: Names the facade ``sdckit`` exports that the Python API page leaves out, with the reason.
API_PAGE_EXCLUDED = {"__version__": "a version string (`sdckit --version` prints it)"}


def _api_page_objects() -> list[object]:
    """The objects the API page renders: each ``::: dotted.path`` target, and for a module
    target its public members (mkdocstrings renders them with it)."""
    import importlib

    out: list[object] = []
    text = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    for path in re.findall(r"^::: ([\w.]+)\s*$", text, re.M):
        try:
            out.append(importlib.import_module(path))
        except ModuleNotFoundError:
            module, _, name = path.rpartition(".")
            out.append(getattr(importlib.import_module(module), name))
            continue
        module = out[-1]
        names = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
        out.extend(getattr(module, n) for n in names)
    return out


def test_api_page_documents_every_facade_export_and_method_class() -> None:
    """Every name ``sdckit`` exports (``__all__``, lazy ones included) is on the Python API
    page, but for :data:`API_PAGE_EXCLUDED`; so is every privacy model and masking method a
    job file can name (the classes behind ``- k_anonymity: {k: 5}``)."""
    import sdckit
    from sdckit.masking.pipeline import METHODS
    from sdckit.models import MODELS

    documented = _api_page_objects()
    missing = [
        name
        for name in sdckit.__all__
        if name not in API_PAGE_EXCLUDED
        and not any(getattr(sdckit, name) is obj for obj in documented)
    ]
    assert not missing, f"add to docs/reference/api.md: {missing}"
    assert set(API_PAGE_EXCLUDED) <= set(sdckit.__all__)  # the list only names real exports
    for registry in (MODELS, METHODS):
        for name in registry.names():
            cls = registry.load(name)
            assert any(cls is obj for obj in documented), (registry.family, name)


def _have_mkdocs() -> bool:
    return all(
        importlib.util.find_spec(m) is not None
        for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
    )


def test_site_builds_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict`` passes (skipped without the docs extra, unless
    ``SDCKIT_REQUIRE_DOCS=1``, as CI sets it): no warning -- a broken link or anchor, a page
    outside the navigation, a docstring mkdocstrings cannot read. (Not ``-q``: it hides the
    warnings from strict mode too.)"""
    if not _have_mkdocs():
        if os.environ.get("SDCKIT_REQUIRE_DOCS") == "1":
            pytest.fail("SDCKIT_REQUIRE_DOCS=1 but the docs extra is not installed")
        pytest.skip("the docs extra (mkdocs-material, mkdocstrings[python]) is not installed")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env["NO_MKDOCS_2_WARNING"] = "1"  # mkdocs-material's notice about its successor
    site = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (site / "reference" / "job-file" / "index.html").is_file()
    assert (site / "reference" / "cli" / "index.html").is_file()
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="sdckit.algorithms.anonymize.anonymize"' in api  # rendered by mkdocstrings
    assert 'id="sdckit.masking.microaggregation.Microaggregation"' in api  # griffe read it
    for page in site.rglob("*.html"):
        assert ":func:<code>" not in page.read_text(encoding="utf-8"), page
    job = (site / "reference" / "job-file" / "index.html").read_text(encoding="utf-8")
    assert "models[0].k_anonymity.k must be &gt;= 1, got 0" in job
