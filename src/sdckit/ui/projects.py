"""Projects of the web app, kept on disk: one folder per project under ``DATA/projects``.

A project is a job file under construction. ``project.json`` holds the part every job of the
project shares -- the input (``input:``) and the classification (``attributes:``: role, type,
hierarchy per column) -- exactly as a job file writes them, so that a run is that document
plus the protection the user chose (``models:``/``methods:``/...), validated by the same
loader as ``sdckit anonymize --config`` (:func:`sdckit.jobs.config.job_from_dict`). Each run
lives in ``runs/<id>/`` with its ``job.yaml`` (the exported job file), its status and outputs.

Layout::

    DATA/projects/<id>/project.json     name, input, attributes (job-file keys)
    DATA/projects/<id>/data.csv         an uploaded file (a server-side path is used in place)
    DATA/projects/<id>/hierarchies/     imported ARX hierarchy CSVs, one per column
    DATA/projects/<id>/runs/<run>/      job.yaml, status.json, progress.json, outputs
"""

from __future__ import annotations

import csv
import json
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sdckit.core.formats import is_stat_file
from sdckit.core.io import read_table, write_text
from sdckit.errors import ConfigError, DataError

__all__ = [
    "ROLES",
    "TYPES",
    "Project",
    "ProjectStore",
    "infer_type",
]

#: The attribute roles a column can take (ARX's four attribute types).
ROLES = ("insensitive", "quasi_identifying", "sensitive", "identifying")
#: The attribute types the classification page offers (:class:`sdckit.core.schema.DataType`).
TYPES = ("nominal", "ordinal", "integer", "decimal", "date")
#: Rows of the data shown by the preview.
PREVIEW_ROWS = 20
#: The most columns a project may have: each page lists every column (a type to infer, a row of
#: the classification table), so a file of 20,000 columns would take minutes per page.
MAX_COLUMNS = 2000
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def infer_type(values: pd.Series) -> str:
    """The attribute type a column's text values suggest: ``integer`` when every non-empty
    value is a whole number, ``decimal`` when every one is a number, ``date`` for ISO dates
    (YYYY-MM-DD), else ``nominal``. Missing cells (empty text, NaN) are ignored; a column with
    no value is nominal. A Parquet column keeps its stored type."""
    if pd.api.types.is_integer_dtype(values) or pd.api.types.is_bool_dtype(values):
        return "integer"
    if pd.api.types.is_float_dtype(values):
        return "decimal"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "date"
    text = values.dropna().astype(str).str.strip()
    distinct = pd.Series(text[text != ""].unique())
    if distinct.empty:
        return "nominal"
    for name, pattern in (("integer", _INTEGER), ("decimal", _DECIMAL), ("date", _DATE)):
        if bool(distinct.str.match(pattern).all()):
            return name
    return "nominal"


@dataclass
class Project:
    """One project: its folder and its document (``project.json``)."""

    folder: Path
    doc: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The project's identifier (its folder name)."""
        return self.folder.name

    @property
    def name(self) -> str:
        """The name shown to the user."""
        return str(self.doc.get("name") or self.id)

    @property
    def input(self) -> dict[str, Any]:
        """The ``input:`` section of every job of the project (path absolute)."""
        return dict(self.doc["input"])

    @property
    def data_path(self) -> Path:
        """The data file."""
        return Path(self.doc["input"]["path"])

    @property
    def attributes(self) -> dict[str, dict[str, Any]]:
        """``attributes:`` as a job file writes them (column -> role/type/hierarchy)."""
        return self.doc.setdefault("attributes", {})

    @property
    def columns(self) -> list[str]:
        """The data's columns, in file order."""
        return list(self.doc.get("columns", []))

    def role(self, column: str) -> str:
        """The role of ``column`` (insensitive unless classified)."""
        return str(self.attributes.get(column, {}).get("role", "insensitive"))

    def columns_with_role(self, role: str) -> list[str]:
        """The columns of a role, in file order."""
        return [c for c in self.columns if self.role(c) == role]

    @property
    def hierarchy_folder(self) -> Path:
        """Where imported hierarchy files are kept."""
        return self.folder / "hierarchies"

    @property
    def runs_folder(self) -> Path:
        """Where the runs' folders are."""
        return self.folder / "runs"

    def job_base(self) -> dict[str, Any]:
        """The sections every job of the project starts from: ``input`` and the classified
        ``attributes`` (columns left insensitive with their inferred type are omitted)."""
        attributes = {}
        for column in self.columns:
            spec = {k: v for k, v in self.attributes.get(column, {}).items() if v is not None}
            if spec.get("role") == "insensitive":
                spec.pop("role")
            if spec.get("type") == "nominal":
                spec.pop("type")
            if spec:
                attributes[column] = spec
        return {"input": self.input, "attributes": attributes}

    def read_data(self) -> pd.DataFrame:
        """The whole data set (as every job reads it)."""
        return read_table(self.data_path, self.input.get("delimiter"))

    def run_ids(self) -> list[str]:
        """The project's runs, newest first."""
        if not self.runs_folder.is_dir():
            return []
        runs = [p for p in self.runs_folder.iterdir() if (p / "job.yaml").is_file()]
        runs.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        return [p.name for p in runs]


class ProjectStore:
    """The projects under ``DATA/projects`` (created on first use)."""

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.root = self.data_dir / "projects"
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Project]:
        folders = [p for p in self.root.iterdir() if (p / "project.json").is_file()]
        folders.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for folder in folders:
            yield self._load(folder)

    def get(self, project_id: str) -> Project:
        """The project ``project_id``; an unknown id is a :class:`ConfigError`."""
        folder = self.root / project_id
        if not _ID.match(project_id) or not (folder / "project.json").is_file():
            raise ConfigError(f"there is no project {project_id!r}; open one from the start page")
        return self._load(folder)

    def save(self, project: Project) -> None:
        """Write the project's document (atomically)."""
        write_text(project.folder / "project.json", json.dumps(project.doc, indent=2))

    def update(self, project_id: str, change: Callable[[Project], None]) -> Project:
        """Apply ``change`` to the project as it is on disk now and save it, one change at a
        time (pages run in worker threads: two changes made at once both stay)."""
        with self._lock:
            project = self.get(project_id)
            change(project)
            self.save(project)
            return project

    def create(
        self,
        name: str,
        source: Path,
        *,
        delimiter: str | None = None,
        copy: bool = True,
        attributes: dict[str, dict[str, Any]] | None = None,
        shown_name: str | None = None,
    ) -> Project:
        """A new project on the data file ``source`` (copied into the project when ``copy``,
        else used where it is). The file is read here, so an unreadable file is refused with
        the reader's message (:class:`DataError`, naming the file ``shown_name``, by default
        ``source``'s name) and no project is left behind."""
        project_id = f"{_slug(name)}-{secrets.token_hex(3)}"
        folder = self.root / project_id
        folder.mkdir(parents=True)
        try:
            target = source
            if copy:
                target = folder / f"data{source.suffix.lower() or '.csv'}"
                shutil.copyfile(source, target)
            head = _head(target, delimiter, name=shown_name or source.name)
            types = {c: infer_type(head[c]) for c in head.columns}
            doc: dict[str, Any] = {
                "name": name,
                "created": time.strftime("%Y-%m-%d %H:%M:%S"),
                "input": {"path": str(target.resolve())}
                | ({"delimiter": delimiter} if delimiter else {}),
                "columns": [str(c) for c in head.columns],
                "attributes": {
                    c: {"role": "insensitive", "type": types[c]} for c in map(str, head.columns)
                },
            }
            for column, spec in (attributes or {}).items():
                doc["attributes"][column].update(spec)
            project = Project(folder, doc)
            self.save(project)
            return project
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    def _load(self, folder: Path) -> Project:
        return Project(folder, json.loads((folder / "project.json").read_text(encoding="utf-8")))


def preview(project: Project, rows: int = PREVIEW_ROWS) -> pd.DataFrame:
    """The first ``rows`` rows of the project's data (reads only the head of a CSV)."""
    return _head(project.data_path, project.input.get("delimiter"), rows)


def _head(
    path: Path, delimiter: str | None, rows: int = 2000, name: str | None = None
) -> pd.DataFrame:
    """The first ``rows`` rows of a data file, read as a job reads it (CSV as text, the
    delimiter sniffed unless given; Parquet by its first row group; an SPSS, Stata or SAS
    file whole, its labels applied). Its header is checked
    first: at most :data:`MAX_COLUMNS` columns, each name once (the check of
    :func:`sdckit.core.io.read_table`). Messages name the file ``name`` (default: its own)."""
    name = name or path.name
    if is_stat_file(path):  # read whole (pyreadstat), its labels applied as a job reads it
        try:
            data = read_table(path)
        except DataError as exc:
            raise DataError(str(exc).replace(repr(str(path)), repr(name))) from None
        _check_header(list(data.columns), name)
        return data.head(rows)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            file = pq.ParquetFile(path)
            _check_header(file.schema_arrow.names, name)
            return (
                file.read_row_group(0).to_pandas().head(rows)
                if file.num_row_groups
                else (file.schema_arrow.empty_table().to_pandas())
            )
        except DataError:
            raise
        except Exception as exc:  # noqa: BLE001 - any pyarrow failure is a bad file
            raise DataError(f"{name!r} is not a readable Parquet file ({exc})") from None
    from sdckit.core.io import read_header, sniff_delimiter

    try:
        with path.open(encoding="utf-8", newline="") as handle:
            sample = handle.read(65536)
    except UnicodeDecodeError:
        raise DataError(
            f"{name!r} is not a UTF-8 text file; upload a CSV (or Parquet) file"
        ) from None
    if not sample.strip():
        raise DataError(f"{name!r} is empty; upload a CSV file with a header row")
    if "\x00" in sample:
        raise DataError(f"{name!r} is a binary file, not a CSV; upload a CSV or Parquet file")
    sep = delimiter or sniff_delimiter(sample)
    try:
        header = read_header(path, sep)
    except csv.Error as exc:
        raise DataError(f"{name!r} could not be read as a CSV file: {exc}") from None
    _check_header(header, name)
    try:
        head = pd.read_csv(
            path, sep=sep, dtype=str, keep_default_na=False, nrows=rows, encoding="utf-8"
        )
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(f"{name!r} could not be read as a CSV file: {exc}") from None
    if not len(head):
        raise DataError(f"{name!r} has a header but no rows; upload a file with data")
    return head


def _check_header(columns: list[str], name: str) -> None:
    """DataError when a file has more than :data:`MAX_COLUMNS` columns or a name twice."""
    from sdckit.core.io import check_column_names

    if len(columns) > MAX_COLUMNS:
        raise DataError(
            f"{name!r} has {len(columns):,} columns; the workbench takes at most "
            f"{MAX_COLUMNS:,} (every page lists each column): keep the columns you need, or "
            "run the job with the command line, which has no such limit"
        )
    check_column_names([str(c) for c in columns], name)


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    return slug or "project"
