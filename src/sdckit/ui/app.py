"""The web app of ``sdckit ui``: a FastAPI application rendering server-side pages (Jinja2
templates, htmx for the parts that change) over the same engine and job files as the CLI.

Steps (one page each): **Data** (open a file, preview, column types), **Classify** (roles,
hierarchies, the risk each quasi-identifier adds), **Risk** (the ``analyze`` report), **Protect**
(anonymize / mask / synthesize / table jobs, run in a worker process with progress and
cancel), **Run** (outcome, solution space, before/after distributions, downloads including the
job file that reproduces the run) and **Compare** (R-U map of a project's runs, by the
``compare`` job). Bad input anywhere gives the command line's message and the server goes on.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile

from sdckit.core.formats import READERS
from sdckit.errors import ConfigError, SdcInputError
from sdckit.ui import MAX_HIERARCHY, MAX_UPLOAD, analysis
from sdckit.ui.figures import (
    class_size_figure,
    ru_map_figure,
    solution_space_figure,
    threshold_figure,
)
from sdckit.ui.guard import Access, Guard
from sdckit.ui.projects import ROLES, TYPES, Project, ProjectStore, preview
from sdckit.ui.runs import KINDS, RunManager, read_json, read_status, write_job

__all__ = ["create_app"]

#: The files of a run a user may download.
RUN_FILES = ("job.yaml", "release.csv", "cells.csv", "report.html", "report.json")
#: The addresses of a hierarchy upload (limited to MAX_HIERARCHY).
_HIERARCHY_PATH = re.compile(r"^/p/[^/]+/hierarchy/")


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("sdckit.ui", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tojson_attr"] = lambda value: json.dumps(value, default=str)
    env.filters["num"] = _num
    return env


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def _plotly_js() -> Path | None:
    try:
        import plotly
    except ImportError:
        return None
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return path if path.is_file() else None


class UI:
    """The app's state: where projects live, the run manager and the data cache."""

    def __init__(self, data_dir: Path, max_workers: int) -> None:
        self.store = ProjectStore(data_dir)
        self.runs = RunManager(max_workers)
        self.cache = analysis.DataCache()
        self.env = _templates()
        # (classification, data, (threshold, sampling fraction), analysis)
        self.risk_cache: tuple[str, Any, tuple[float, float | None], Any] | None = None

    def page(
        self, name: str, request: Request, http_status: int = 200, **context: Any
    ) -> HTMLResponse:
        """Render a template (``base.html`` pages and partials alike)."""
        html = self.env.get_template(name).render(
            request=request, roles=ROLES, types=TYPES, kinds=KINDS, **context
        )
        return HTMLResponse(html, status_code=http_status)

    def data(self, project: Project):
        """The project's data (cached)."""
        return self.cache.read(project.data_path, project.input.get("delimiter"))


def create_app(
    data_dir: str | Path,
    *,
    token: str,
    host: str = "127.0.0.1",
    allow_hosts: Sequence[str] = (),
    max_workers: int = 2,
    max_upload: int = MAX_UPLOAD,
    max_hierarchy: int = MAX_HIERARCHY,
) -> FastAPI:
    """The web app over the projects in ``data_dir``, listening on ``host``. Every request
    must carry ``token`` (``?token=`` once, then a cookie), name this server as its ``Host``
    (``localhost``, a loopback address, ``host``, ``allow_hosts``) and, when it changes state,
    come from one of its pages (:mod:`sdckit.ui.guard`). Request bodies are at most
    ``max_upload`` bytes, hierarchy uploads ``max_hierarchy``. Pages that parse or check a
    file run in a worker thread: the server answers other requests meanwhile."""
    access = Access.for_listen(token, host, allow_hosts)
    for value, option in ((max_upload, "--max-upload-mb"), (max_hierarchy, "--max-hierarchy-mb")):
        if value <= 0:
            raise ConfigError(f"{option} must be positive, got {value / 1e6:g}")
    ui = UI(Path(data_dir), max_workers)

    def limit(path: str) -> tuple[int, str]:
        if _HIERARCHY_PATH.match(path):
            return min(max_hierarchy, max_upload), "--max-hierarchy-mb"
        return max_upload, "--max-upload-mb"

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        ui.runs.shutdown()  # the server stops: so do its workers

    app = FastAPI(
        title="sdckit ui", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.ui = ui
    app.mount("/static", StaticFiles(packages=[("sdckit.ui", "static")]), name="static")

    app.add_middleware(Guard, access=access, limit=limit)

    @app.exception_handler(SdcInputError)
    async def _input_error(request: Request, exc: SdcInputError):
        status = getattr(exc, "http_status", 400)
        if request.headers.get("HX-Request"):
            response = ui.page("_error.html", request, http_status=status, message=str(exc))
            response.headers["HX-Retarget"] = "#messages"
            response.headers["HX-Reswap"] = "innerHTML"
            return response
        return ui.page(
            "error.html",
            request,
            http_status=status,
            message=str(exc),
            back=request.headers.get("referer", "/"),
        )

    @app.exception_handler(Exception)
    async def _internal_error(request: Request, exc: Exception):
        import traceback

        text = "".join(traceback.format_exception(exc))
        return ui.page(
            "error.html",
            request,
            http_status=500,
            message=f"internal error: {type(exc).__name__}: {exc}",
            detail=text,
            back="/",
        )

    # -- static assets ----------------------------------------------------------------------
    @app.get("/assets/plotly.min.js")
    def plotly_js() -> Response:
        path = _plotly_js()
        if path is None:
            return Response(
                "/* plotly is not installed: pip install -e '.[ui]' */",
                media_type="text/javascript",
            )
        return FileResponse(
            path, media_type="text/javascript", headers={"Cache-Control": "public, max-age=86400"}
        )

    # -- projects -----------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def index(request: Request):
        return ui.page("index.html", request, projects=list(ui.store))

    @app.post("/projects/upload")
    async def upload(request: Request):
        form = await request.form()
        file = form.get("file")
        if not isinstance(file, UploadFile) or not file.filename:
            raise ConfigError("choose a CSV, Parquet, SPSS, Stata or SAS file to upload")
        suffix = Path(file.filename).suffix.lower()
        if suffix not in (".csv", ".txt", ".tsv", ".parquet", ".pq", *READERS):
            raise ConfigError(
                f"{file.filename!r} is not a CSV or Parquet file, nor an SPSS, Stata or SAS "
                f"file (its name ends in {suffix or 'nothing'}); upload a .csv, .parquet, "
                ".sav, .dta, .sas7bdat or .xpt file"
            )
        filename = file.filename

        def create() -> Project:  # in a worker thread: reading and type inference take time
            with tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / f"upload{suffix}"
                with target.open("wb") as handle:
                    file.file.seek(0)
                    shutil.copyfileobj(file.file, handle, 1 << 20)
                return ui.store.create(
                    _text(form, "name") or Path(filename).stem,
                    target,
                    delimiter=_text(form, "delimiter") or None,
                    shown_name=Path(filename).name,
                )

        project = await run_in_threadpool(create)
        return RedirectResponse(f"/p/{project.id}/data", status_code=303)

    @app.post("/projects/path")
    async def from_path(request: Request):
        form = await request.form()
        raw = _text(form, "path")
        if not raw:
            raise ConfigError("give the path of a CSV or Parquet file on the server")
        path = Path(raw).expanduser()
        if not path.is_file():
            raise ConfigError(f"{raw!r} is not a file on the server; check the path")
        project = await run_in_threadpool(
            lambda: ui.store.create(
                _text(form, "name") or path.stem,
                path.resolve(),
                delimiter=_text(form, "delimiter") or None,
                copy=False,
            )
        )
        return RedirectResponse(f"/p/{project.id}/data", status_code=303)

    @app.post("/projects/demo")
    def demo():
        from sdckit.datasets import load_adult

        adult = load_adult()
        project = ui.store.create("Adult demo", adult.path, delimiter=";")
        project.hierarchy_folder.mkdir(exist_ok=True)
        for column, source in adult.hierarchy_paths.items():
            target = project.hierarchy_folder / f"{column}.csv"
            shutil.copyfile(source, target)
            project.attributes[column]["hierarchy"] = str(target)
        ui.store.save(project)
        return RedirectResponse(f"/p/{project.id}/data", status_code=303)

    # -- step 1: data ---------------------------------------------------------------------------
    @app.get("/p/{pid}/data", response_class=HTMLResponse)
    def data_page(request: Request, pid: str):
        project = ui.store.get(pid)
        t0 = time.perf_counter()
        head = preview(project)
        return ui.page(
            "data.html",
            request,
            project=project,
            step="data",
            head=head,
            elapsed=time.perf_counter() - t0,
        )

    @app.post("/p/{pid}/types")
    async def set_types(request: Request, pid: str):
        return await run_in_threadpool(types_set, pid, await request.form())

    def types_set(pid: str, form: FormData) -> Response:
        def change(project: Project) -> None:
            for column in project.columns:
                value = _text(form, f"type:{column}")
                if value:
                    if value not in TYPES:
                        raise ConfigError(f"type of {column!r} must be one of {', '.join(TYPES)}")
                    project.attributes.setdefault(column, {})["type"] = value

        ui.store.update(pid, change)
        return RedirectResponse(f"/p/{pid}/classify", status_code=303)

    # -- step 2: classify ----------------------------------------------------------------------
    @app.get("/p/{pid}/classify", response_class=HTMLResponse)
    def classify_page(request: Request, pid: str):
        project = ui.store.get(pid)
        return ui.page(
            "classify.html",
            request,
            project=project,
            step="classify",
            levels=_hierarchy_levels(project),
        )

    @app.post("/p/{pid}/role/{column}", response_class=HTMLResponse)
    async def set_role(request: Request, pid: str, column: str):
        return await run_in_threadpool(role_set, request, pid, column, await request.form())

    def role_set(request: Request, pid: str, column: str, form: FormData) -> Response:
        project = ui.store.get(pid)
        role = _text(form, "role")
        if column not in project.columns:
            raise ConfigError(f"column {column!r} is not in the data")
        if role not in ROLES:
            raise ConfigError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        project = ui.store.update(
            pid, lambda p: p.attributes.setdefault(column, {}).update(role=role)
        )
        response = ui.page(
            "_classify_table.html", request, project=project, levels=_hierarchy_levels(project)
        )
        response.headers["HX-Trigger"] = "roles-changed"
        return response

    @app.get("/p/{pid}/classify/risk", response_class=HTMLResponse)
    def classify_risk(request: Request, pid: str):
        project = ui.store.get(pid)
        qis = project.columns_with_role("quasi_identifying")
        t0 = time.perf_counter()
        contributions = analysis.qi_contributions(ui.data(project), qis)
        return ui.page(
            "_qi_risk.html",
            request,
            project=project,
            risk=contributions,
            elapsed=time.perf_counter() - t0,
        )

    @app.post("/p/{pid}/hierarchy/{column}", response_class=HTMLResponse)
    async def set_hierarchy(request: Request, pid: str, column: str):
        # the form (the file spooled to disk, its size limited by the guard), then the
        # check against the data in a worker thread
        return await run_in_threadpool(hierarchy_set, request, pid, column, await request.form())

    def hierarchy_set(request: Request, pid: str, column: str, form: FormData) -> Response:
        project = ui.store.get(pid)
        if column not in project.columns:
            raise ConfigError(f"column {column!r} is not in the data")
        spec: str | dict[str, Any] | None
        file = form.get("file")
        builder = _text(form, "builder")
        if builder == "none":
            spec = None
        elif builder:  # a builder chosen wins over a file still selected in the form
            params = _builder_params(form, builder)
            spec = {builder: params}
            _validate_hierarchy(project, ui, column, spec, f"the {builder} builder")
        elif isinstance(file, UploadFile) and file.filename:
            project.hierarchy_folder.mkdir(exist_ok=True)
            name = Path(file.filename).name  # messages name the user's file
            with tempfile.TemporaryDirectory(dir=project.hierarchy_folder) as tmp:
                staged = Path(tmp) / name
                with staged.open("wb") as handle:
                    file.file.seek(0)
                    shutil.copyfileobj(file.file, handle, 1 << 20)
                _validate_hierarchy(project, ui, column, str(staged), name)
                target = project.hierarchy_folder / f"{column}.csv"
                staged.replace(target)
            spec = str(target)
        else:
            raise ConfigError("choose an ARX hierarchy file to import or a builder")
        project = ui.store.update(
            pid, lambda p: p.attributes.setdefault(column, {}).update(hierarchy=spec)
        )
        table = ui.page(
            "_classify_table.html", request, project=project, levels=_hierarchy_levels(project)
        )
        if spec is None:
            return table
        preview = _hierarchy_page(ui, project, request, column, oob=True)  # its levels, shown
        return HTMLResponse(bytes(table.body).decode() + bytes(preview.body).decode())

    @app.get("/p/{pid}/hierarchy/{column}", response_class=HTMLResponse)
    def hierarchy_preview(request: Request, pid: str, column: str):
        return _hierarchy_page(ui, ui.store.get(pid), request, column)

    # -- step 3: risk ---------------------------------------------------------------------------
    @app.get("/p/{pid}/risk", response_class=HTMLResponse)
    def risk_page(request: Request, pid: str, threshold: float = 0.2, sampling_fraction: str = ""):
        project = ui.store.get(pid)
        qis = project.columns_with_role("quasi_identifying")
        if not qis:
            return ui.page("risk.html", request, project=project, step="risk", analysis=None)
        fraction = _number(sampling_fraction, "sampling fraction") if sampling_fraction else None
        result = _risk(ui, project, threshold, fraction)
        sizes = result.class_records
        distinct, per = _size_histogram(sizes)
        figures = {
            "sizes": class_size_figure(distinct, per),
            "threshold": threshold_figure(result.class_risk, sizes),
        }
        return ui.page(
            "risk.html",
            request,
            project=project,
            step="risk",
            analysis=result.summary,
            figures=figures,
            threshold=threshold,
            sampling_fraction=sampling_fraction,
        )

    @app.get("/p/{pid}/risk/records", response_class=HTMLResponse)
    def risk_records(
        request: Request,
        pid: str,
        sort: str = "risk",
        order: str = "desc",
        min_risk: float = 0.0,
        search: str = "",
        page: int = 1,
    ):
        project = ui.store.get(pid)
        result = _risk(ui, project)
        table = analysis.record_risk_table(
            ui.data(project)[project.columns],
            result.record_risk,
            sort=sort,
            descending=order != "asc",
            min_risk=min_risk,
            search=search,
            page=page,
        )
        return ui.page(
            "_records.html",
            request,
            project=project,
            table=table,
            sort=sort,
            order=order,
            min_risk=min_risk,
            search=search,
        )

    # -- step 4: protect ------------------------------------------------------------------------
    @app.get("/p/{pid}/protect", response_class=HTMLResponse)
    def protect_page(request: Request, pid: str, kind: str = "anonymize"):
        project = ui.store.get(pid)
        from sdckit.masking.pipeline import method_names
        from sdckit.synthesis.api import METHODS as SYNTH
        from sdckit.utility.generalization import METRICS

        return ui.page(
            "protect.html",
            request,
            project=project,
            step="protect",
            kind=kind,
            metrics=METRICS,
            mask_methods=method_names(),
            synth_methods=list(SYNTH),
            yaml_text=_job_yaml(project, kind),
            algorithms=_algorithms(),
        )

    @app.post("/p/{pid}/runs")
    async def start_run(request: Request, pid: str):
        return await run_in_threadpool(run_start, pid, await request.form())

    def run_start(pid: str, form: FormData) -> Response:
        project = ui.store.get(pid)
        kind = _text(form, "kind") or "anonymize"
        if kind not in KINDS:
            raise ConfigError(f"kind must be one of {', '.join(KINDS)}")
        doc = _job_document(project, kind, form)
        run_id = _start(ui, project, kind, doc, _text(form, "label"))
        return RedirectResponse(f"/p/{pid}/runs/{run_id}", status_code=303)

    @app.get("/p/{pid}/runs", response_class=HTMLResponse)
    def runs_page(request: Request, pid: str):
        project = ui.store.get(pid)
        return ui.page("runs.html", request, project=project, step="runs", runs=_run_rows(project))

    @app.get("/p/{pid}/runs/{rid}", response_class=HTMLResponse)
    def run_page(request: Request, pid: str, rid: str):
        project = ui.store.get(pid)
        folder = _run_folder(project, rid)
        status = read_status(folder)
        meta = read_json(folder / "meta.json") or {}
        job_text = (folder / "job.yaml").read_text(encoding="utf-8")
        return ui.page(
            "run.html",
            request,
            project=project,
            step="runs",
            rid=rid,
            status=status,
            meta=meta,
            files=_files(folder),
            figures=_run_figures(folder, status),
            job_text=job_text,
            steward_only=_steward_only(meta.get("kind"), job_text),
            columns=project.columns,
            nodes=_best_nodes(folder),
        )

    @app.get("/p/{pid}/runs/{rid}/status", response_class=HTMLResponse)
    def run_status(request: Request, pid: str, rid: str):
        project = ui.store.get(pid)
        folder = _run_folder(project, rid)
        status = read_status(folder)
        response = ui.page("_run_status.html", request, project=project, rid=rid, status=status)
        if status.get("state") in ("done", "failed", "cancelled"):
            response.headers["HX-Refresh"] = "true"  # the finished page has the outcome
        return response

    @app.post("/p/{pid}/runs/{rid}/cancel")
    def cancel_run(pid: str, rid: str):
        project = ui.store.get(pid)
        ui.runs.cancel(_run_folder(project, rid))
        return RedirectResponse(f"/p/{pid}/runs/{rid}", status_code=303)

    @app.get("/p/{pid}/runs/{rid}/files/{name}")
    def run_file(pid: str, rid: str, name: str):
        project = ui.store.get(pid)
        folder = _run_folder(project, rid)
        if name not in RUN_FILES or not (folder / name).is_file():
            raise ConfigError(f"run {rid} has no file {name!r}")
        media = {"html": "text/html", "json": "application/json", "yaml": "text/yaml"}
        return FileResponse(
            folder / name,
            media_type=media.get(name.rsplit(".", 1)[1], "text/csv"),
            filename=None if name.endswith(".html") else name,
        )

    @app.get("/p/{pid}/runs/{rid}/node", response_class=HTMLResponse)
    def run_node(request: Request, pid: str, rid: str, levels: str):
        from sdckit.jobs.config import load_job

        project = ui.store.get(pid)
        folder = _run_folder(project, rid)
        try:
            chosen = [int(v) for v in levels.split(",")]
        except ValueError:
            raise ConfigError(
                f"levels must be integers separated by commas, got {levels!r}"
            ) from None
        job = load_job(folder / "job.yaml")
        result, head = analysis.node_release(job, ui.data(project), chosen)
        space = read_json(folder / "solution_space.json") or {}
        node = next((n for n in space.get("nodes", []) if n["levels"] == chosen), None)
        return ui.page(
            "_node.html",
            request,
            levels=chosen,
            check=result.to_dict(),
            node=node,
            head=head,
            qis=list(job.schema.quasi_identifiers),
        )

    @app.get("/p/{pid}/runs/{rid}/distribution", response_class=HTMLResponse)
    def run_distribution(request: Request, pid: str, rid: str, column: str):
        project = ui.store.get(pid)
        folder = _run_folder(project, rid)
        release = folder / "release.csv"
        if not release.is_file():
            raise ConfigError("this run has no released data to compare")
        from sdckit.core.io import read_table

        released = read_table(release, project.input.get("delimiter"))
        # a generalized column is compared on the released categories (the run's level)
        summary = read_json(folder / "report.json") or {}
        level = int((summary.get("transformation") or {}).get(column) or 0)
        hierarchy = None
        if level > 0:
            from sdckit.jobs.config import load_job

            hierarchy = load_job(folder / "job.yaml").schema.hierarchy(column)
        figure = analysis.distribution(
            ui.data(project), released, column, hierarchy=hierarchy, level=level
        )
        return ui.page("_figure.html", request, figure=figure)

    # -- step 5: compare ------------------------------------------------------------------------
    @app.get("/p/{pid}/compare", response_class=HTMLResponse)
    def compare_page(request: Request, pid: str):
        project = ui.store.get(pid)
        rows = [
            r
            for r in _run_rows(project)
            if r["state"] == "done" and r["kind"] in ("anonymize", "mask")
        ]
        return ui.page("compare.html", request, project=project, step="compare", runs=rows)

    @app.post("/p/{pid}/compare")
    async def start_compare(request: Request, pid: str):
        return await run_in_threadpool(compare_start, pid, await request.form())

    def compare_start(pid: str, form: FormData) -> Response:
        project = ui.store.get(pid)
        chosen = [str(v) for v in form.getlist("run")]
        if len(chosen) < 2:
            raise ConfigError("tick at least two finished runs to compare")
        doc = project.job_base()
        grid = []
        labels: dict[str, int] = {}
        for rid in chosen:
            folder = _run_folder(project, rid)
            meta = read_json(folder / "meta.json") or {}
            if not (folder / "release.csv").is_file():
                raise ConfigError(f"run {rid} has no release to compare")
            label = str(meta.get("label") or rid)
            labels[label] = labels.get(label, 0) + 1
            if labels[label] > 1:  # the same settings run twice: tell them apart
                label = f"{label} (run {rid})"
            entry: dict[str, Any] = {"path": str(folder / "release.csv"), "label": label}
            if project.input.get("delimiter"):
                entry["delimiter"] = project.input["delimiter"]
            grid.append({"protected": entry})
        doc["grid"] = grid
        # generalized labels ('35-39', '*') are categories: every quasi-identifier is compared
        # as a category, on the re-identification scale (matching risk, entropy loss)
        doc["options"] = {
            "scale": "reidentification",
            "categorical": project.columns_with_role("quasi_identifying"),
        }
        # the steward's ceilings: releases within them are ranked first (the score stays)
        for key, name in (("max_risk", "maximum disclosure risk"),
                          ("max_loss", "maximum information loss")):  # fmt: skip
            text = _text(form, key)
            if not text:
                continue
            try:
                value = float(text)
            except ValueError:
                raise ConfigError(f"{name} must be a number from 0 to 100, got {text!r}") from None
            if not 0 <= value <= 100:
                raise ConfigError(f"{name} must be a number from 0 to 100, got {text!r}")
            doc["options"][key] = value
        run_id = _start(ui, project, "compare", doc, _text(form, "label") or "comparison")
        return RedirectResponse(f"/p/{pid}/runs/{run_id}", status_code=303)

    return app


# -- helpers ------------------------------------------------------------------------------------
def _text(form: FormData, key: str) -> str:
    value = form.get(key)
    return value.strip() if isinstance(value, str) else ""


def _algorithms() -> list[str]:
    from sdckit.algorithms.registry import ALGORITHMS

    return list(ALGORITHMS)


def _build_hierarchy(project: Project, ui: UI, column: str, spec: Any, source: str):
    """The hierarchy ``spec`` (an ARX file or a builder) gives ``column``, built as the job
    loader builds it (:meth:`sdckit.jobs.config.Job.resolve_hierarchy`)."""
    from sdckit.jobs.config import job_from_dict

    job = job_from_dict(
        {"input": project.input, "attributes": {column: {"hierarchy": spec}}},
        project.folder,
        source=source,
    )
    return job.resolve_hierarchy(
        spec, ui.data(project)[column], column, f"attributes.{column}.hierarchy"
    )


def _hierarchy_of(project: Project, ui: UI, column: str):
    spec = project.attributes.get(column, {}).get("hierarchy")
    if spec is None:
        return None
    return _build_hierarchy(project, ui, column, spec, "the classification")


def _hierarchy_page(
    ui: UI, project: Project, request: Request, column: str, oob: bool = False
) -> HTMLResponse:
    """The first levels of a column's hierarchy (``oob``: as an out-of-band htmx swap into
    the preview area, sent along with the classification table)."""
    hierarchy = _hierarchy_of(project, ui, column)
    if hierarchy is None:
        raise ConfigError(f"{column!r} has no hierarchy yet")
    rows = [list(map(str, r)) for r in hierarchy.table[:25]]
    return ui.page(
        "_hierarchy.html",
        request,
        column=column,
        rows=rows,
        n_levels=hierarchy.height,
        n_leaves=len(hierarchy),
        oob=oob,
    )


def _validate_hierarchy(project: Project, ui: UI, column: str, spec: Any, what: str) -> None:
    """Build the hierarchy and check that it covers every value of the column (the check the
    job runner does), so that a bad hierarchy is refused when imported, not at run time."""
    hierarchy = _build_hierarchy(project, ui, column, spec, what)
    hierarchy.leaf_index(ui.data(project)[column].astype(str).to_numpy(), column=column)


def _hierarchy_levels(project: Project) -> dict[str, str]:
    """A short description of each column's hierarchy for the classification table."""
    out = {}
    for column in project.columns:
        spec = project.attributes.get(column, {}).get("hierarchy")
        if spec is None:
            continue
        if isinstance(spec, str):
            out[column] = f"ARX file {Path(spec).name}"
        else:
            ((name, params),) = spec.items()
            out[column] = f"{name} builder {json.dumps(params)}"
    return out


def _builder_params(form: FormData, builder: str) -> dict[str, Any]:
    """A builder's parameters from the form (``params`` as YAML/JSON mapping text)."""
    text = _text(form, "params")
    if not text:
        return {}
    try:
        params = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"the {builder} builder's parameters are not valid YAML: {exc}") from None
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ConfigError(
            f"the {builder} builder's parameters must be a mapping, e.g. `widths: [10, 20]`"
        )
    return params


def _size_histogram(sizes) -> tuple[Any, Any]:
    import numpy as np

    distinct, per = np.unique(np.asarray(sizes), return_counts=True)
    return distinct, per


def _risk(
    ui: UI,
    project: Project,
    threshold: float | None = None,
    sampling_fraction: float | None = None,
):
    """The ``analyze`` result of the project's classification, cached: ``threshold=None`` (the
    record table, whose per-record risk does not depend on the options) takes the cached
    analysis of the same classification whatever its options, else analyzes at 0.2."""
    from sdckit.risk.analyze import analyze

    qis = project.columns_with_role("quasi_identifying")
    if not qis:
        raise ConfigError("mark at least one column as quasi-identifying on the Classify page")
    sensitive = project.columns_with_role("sensitive")
    classification = json.dumps([str(project.data_path), qis, sensitive])
    data = ui.data(project)
    cached = ui.risk_cache
    if cached is not None and cached[0] == classification and cached[1] is data:
        if threshold is None or cached[2] == (threshold, sampling_fraction):
            return cached[3]
    if threshold is None:
        threshold = 0.2
    result = analyze(data, qis, sensitive, threshold=threshold, sampling_fraction=sampling_fraction)
    ui.risk_cache = (classification, data, (threshold, sampling_fraction), result)
    return result


def _steward_only(kind: Any, job_text: str) -> bool:
    """Whether a run's ``job.yaml`` is for the data steward only: a mask or synthesize job
    with a ``seed`` (the seed regenerates every random choice of perturbative masking, so
    the job file must not travel with the release; Hundepool et al. 2012, sec. 3.4)."""
    if kind not in ("mask", "synthesize"):
        return False
    try:
        doc = yaml.safe_load(job_text)
    except yaml.YAMLError:
        return True
    return not isinstance(doc, dict) or doc.get("seed") is not None


def _job_yaml(project: Project, kind: str) -> str:
    """A starting job file for ``kind`` from the classification (edited on the page)."""
    doc = project.job_base()
    qis = project.columns_with_role("quasi_identifying")
    sensitive = project.columns_with_role("sensitive")
    if kind == "anonymize":
        models: list[dict[str, Any]] = [{"k_anonymity": {"k": 5}}]
        if sensitive:
            models.append(
                {"l_diversity": {"attribute": sensitive[0], "l": 2, "variant": "distinct"}}
            )
        doc.update(
            models=models, suppression_limit=0.05, metric={"name": "loss"}, algorithm="optimal"
        )
    elif kind == "mask":
        doc["methods"] = [{"local_suppression": {"columns": qis, "k": 3}}] if qis else []
        doc["seed"] = 1
    elif kind == "synthesize":
        doc.update(method="cart", seed=1)
    elif kind == "table":
        doc = {
            "input": project.input,
            "dimensions": {c: {} for c in qis[:2]},
            "rules": [{"frequency": {"threshold": 3}}],
            "method": "optimal",
        }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def _job_document(project: Project, kind: str, form: FormData) -> dict[str, Any]:
    """The job a Protect form describes: the edited job file (``job_yaml``) when given, else
    the form's fields over the project's classification."""
    text = _text(form, "job_yaml")
    if text:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"the job file is not valid YAML: {exc}") from None
        if not isinstance(doc, dict):
            raise ConfigError("the job file must be a mapping of keys (input, attributes, ...)")
        doc.setdefault("input", project.input)
        if kind != "table":
            doc.setdefault("attributes", project.job_base()["attributes"])
        return doc
    if kind != "anonymize":
        raise ConfigError(f"a {kind} run is described by its job file; fill in the job file box")
    doc = project.job_base()
    models: list[dict[str, Any]] = []
    k = _text(form, "k")
    if k:
        models.append({"k_anonymity": {"k": _int(k, "k")}})
    for model, bound, option, default in (
        ("l_diversity", "l", "variant", "distinct"),
        ("t_closeness", "t", "distance", "equal"),
    ):
        value = _text(form, bound)
        if value:  # the model of a sensitive attribute, with its bound and its variant
            params = {
                "attribute": _text(form, f"{bound}_attribute"),
                bound: _number(value, bound),
                option: _text(form, f"{bound}_{option}") or default,
            }
            models.append({model: params})
    if not models:
        raise ConfigError("choose at least one privacy model (k, l or t)")
    doc["models"] = models
    doc["suppression_limit"] = _number(_text(form, "suppression") or "0", "suppression") / 100
    from sdckit.algorithms.registry import ALGORITHMS

    doc["algorithm"] = algorithm = _text(form, "algorithm") or "optimal"
    if algorithm in ALGORITHMS and ALGORITHMS.traits(algorithm).metric:  # the others refuse one
        doc["metric"] = {"name": _text(form, "metric") or "loss"}
    doc["seed"] = 1
    return doc


def _int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {text!r}") from None


def _number(text: str, name: str) -> float | int:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {text!r}") from None
    return int(value) if value.is_integer() and "." not in text else value


def _start(ui: UI, project: Project, kind: str, doc: dict[str, Any], label: str) -> str:
    """Validate ``doc`` as the command line would, write the run's folder and queue it."""
    from sdckit.jobs.config import job_from_dict

    run_id = ui.runs.new_id()
    folder = project.runs_folder / run_id
    folder.mkdir(parents=True)
    try:
        write_job(folder, doc, kind)
        job_from_dict(
            yaml.safe_load((folder / "job.yaml").read_text(encoding="utf-8")),
            folder,
            source="job.yaml",
        )
        if kind == "anonymize" and not doc.get("models"):
            raise ConfigError("job.yaml: models is missing: name at least one privacy model")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    (folder / "meta.json").write_text(
        json.dumps(
            {"kind": kind, "label": label or _default_label(kind, doc), "created": time.time()}
        )
    )
    ui.runs.submit(folder, kind)
    return run_id


def _default_label(kind: str, doc: dict[str, Any]) -> str:
    if kind == "anonymize":
        parts = [
            f"{name} {params}" for entry in doc.get("models", []) for name, params in entry.items()
        ]
        models = ", ".join(p.replace("'", "") for p in parts)
        share = 100 * doc.get("suppression_limit", 0)
        return f"{doc.get('algorithm', 'optimal')}: {models}; {share:g}%"
    if kind == "mask":
        return "mask: " + " + ".join(name for entry in doc.get("methods", []) for name in entry)
    if kind == "synthesize":
        return f"synthesize: {doc.get('method', 'cart')}"
    return kind


def _run_folder(project: Project, rid: str) -> Path:
    folder = project.runs_folder / rid
    if "/" in rid or rid.startswith(".") or not (folder / "job.yaml").is_file():
        raise ConfigError(f"project {project.name!r} has no run {rid!r}")
    return folder


def _files(folder: Path) -> list[str]:
    return [n for n in RUN_FILES if (folder / n).is_file()]


def _run_rows(project: Project) -> list[dict[str, Any]]:
    rows = []
    for rid in project.run_ids():
        folder = project.runs_folder / rid
        status = read_status(folder)
        meta = read_json(folder / "meta.json") or {}
        rows.append(
            {
                "id": rid,
                "kind": meta.get("kind", status.get("kind", "?")),
                "label": meta.get("label", rid),
                "state": status.get("state"),
                "seconds": status.get("elapsed_seconds"),
                "message": status.get("message"),
            }
        )
    return rows


def _run_figures(folder: Path, status: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    space = read_json(folder / "solution_space.json")
    if space and space.get("nodes"):
        figures["space"] = solution_space_figure(space)
    summary = status.get("summary") or {}
    if status.get("kind") == "compare" and summary.get("ranking"):
        rows = [
            {
                "label": r.get("label"),
                "il": r.get("information_loss"),
                "dr": r.get("disclosure_risk"),
            }
            for r in summary["ranking"]
        ]
        figures["ru"] = ru_map_figure(rows, summary.get("limits"))
    return figures


def _best_nodes(folder: Path, limit: int = 12) -> list[dict[str, Any]]:
    space = read_json(folder / "solution_space.json")
    if not space:
        return []
    ok = [n for n in space["nodes"] if n["satisfied"] and n["metric"] is not None]
    ok.sort(key=lambda n: (n["metric"], n["levels"]))
    return ok[:limit]
