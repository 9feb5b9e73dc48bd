"""Reading and writing tables: CSV (delimiter given or sniffed), Parquet, DataFrames, and
SPSS/Stata/SAS files (:mod:`sdckit.core.formats`, with their labels).

Rules (docs/architecture.md): cells are read exactly as written (no NA guessing, so a missing
value is written back as it was read); outputs are written to a temporary file in the target
directory and renamed into place, so a reader never sees a half-written file and a failed job
leaves nothing behind; the input is never modified.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol, overload

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric
from sdckit.core.folder_lock import folder_locks
from sdckit.core.formats import FileMeta, is_stat_file, read_stat_file, write_stat_file
from sdckit.core.uri import Target, is_remote, output_target, uri_scheme
from sdckit.errors import DataError

#: Texts treated as missing when a column is converted to numbers.
MISSING_TOKENS = frozenset({"", "NA", "N/A", "NaN", "nan", "NULL", "null", "None", ".", "?"})
_DELIMITERS = ",;\t|"


def sniff_delimiter(sample: str) -> str:
    """Guess the delimiter of a CSV sample among ``, ; TAB |``.

    Uses :class:`csv.Sniffer`; when it cannot decide, picks the candidate that occurs the same
    non-zero number of times on the most lines.
    """
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        lines = [ln for ln in sample.splitlines()[:50] if ln.strip()]
        best, score = ",", -1
        for d in _DELIMITERS:
            counts = [ln.count(d) for ln in lines]
            if not counts or counts[0] == 0:
                continue
            s = sum(c == counts[0] for c in counts)
            if s > score:
                best, score = d, s
        return best


def read_table(
    source: str | Path | pd.DataFrame,
    delimiter: str | None = None,
    encoding: str = "utf-8",
    quotechar: str = '"',
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """Read a data set: a DataFrame (copied), a ``.parquet`` file, an SPSS, Stata or SAS file
    (``.sav .zsav .por .dta .sas7bdat .xpt``: value labels as the values, user-defined
    missing values missing, the file's labels in ``attrs["file_meta"]``, see
    :mod:`sdckit.core.formats`), or a CSV file.

    CSV cells are read as text exactly as written (``keep_default_na=False``); numeric
    conversion happens where a method needs numbers (:func:`to_numeric`). The delimiter is
    sniffed when not given. Errors name the file and say how to fix it.
    """
    if isinstance(source, pd.DataFrame):
        df = source.copy()
    else:
        path = Path(source)
        if not path.exists():
            raise DataError(f"input file {str(path)!r} does not exist; check the path")
        parts = path.is_dir() and is_parquet_folder(path)  # a Parquet dataset (Spark)
        if path.is_dir() and not parts:
            raise DataError(
                f"input {str(path)!r} is a directory; give a CSV or Parquet file (or a folder "
                "of Parquet part files)"
            )
        if parts:
            df = _read_parquet_folder(path)
        elif is_stat_file(path):
            df = read_stat_file(path)
        elif path.suffix.lower() in (".parquet", ".pq"):
            try:
                df = pd.read_parquet(path)
            except Exception as exc:  # pyarrow raises many types
                raise DataError(f"cannot read Parquet file {str(path)!r}: {exc}") from exc
        else:
            df = _read_csv(path, delimiter, encoding, quotechar)
    df.columns = [str(c) for c in df.columns]
    if columns is not None:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            hint = ""
            if df.shape[1] == 1:
                guess = sniff_delimiter(str(df.columns[0]))
                hint = (
                    f"; the file was read as one column, so the delimiter is probably wrong: "
                    f"try --delimiter {guess!r}"
                )
            raise DataError(
                f"column(s) {', '.join(map(repr, missing))} not found in "
                f"{_name(source)}; available columns: {', '.join(df.columns)}{hint}"
            )
    return df


def is_parquet_folder(path: Path) -> bool:
    """True for a folder holding Parquet part files (``*.parquet``), at its top or at any
    depth of Hive partition folders (``sex=Female/part-0.parquet``); files and folders whose
    names start with ``.`` or ``_`` (``_SUCCESS``, checksums, staging) are not parts."""
    return any(
        not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
        for p in path.rglob("*.parquet")
    )


def _read_parquet_folder(path: Path) -> pd.DataFrame:
    """A folder of Parquet part files as one table: pyarrow's dataset with Hive partition
    discovery, so a ``key=value/`` folder level gives the column ``key`` (typed as pyarrow
    infers it: integers as int32, else text), after the files' own columns, in the order of
    the folder levels -- as Spark's partition discovery gives them."""
    import pyarrow.dataset as ds

    try:
        table = ds.dataset(path, format="parquet", partitioning="hive").to_table()
    except Exception as exc:  # pyarrow raises many types
        raise DataError(f"cannot read the Parquet folder {str(path)!r}: {exc}") from exc
    return table.to_pandas()


def _name(source) -> str:
    return "the DataFrame" if isinstance(source, pd.DataFrame) else repr(str(source))


def _check_encoding(encoding: str) -> None:
    """DataError unless Python knows ``encoding``."""
    import codecs

    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise DataError(
            f"unknown encoding {encoding!r}; give a text encoding Python knows, e.g. utf-8, "
            "latin-1 or cp1252"
        ) from None


def _short_row(path: Path, sep: str, encoding: str, quotechar: str, width: int) -> str | None:
    """The first line of ``path`` with fewer than ``width`` fields, described, or None.

    pandas pads short rows with empty cells silently; this exact scan (the csv module, which
    knows quoting) runs only when the last column has empty cells, the one symptom of padding.
    """
    with open(path, encoding=encoding, newline="") as fh:
        reader = csv.reader(fh, delimiter=sep, quotechar=quotechar)
        next(reader, None)  # the header
        for row in reader:
            if row and len(row) < width:
                return (
                    f"line {reader.line_num} has {len(row)} field(s) where the header has {width}"
                )
    return None


def _read_csv(path: Path, delimiter: str | None, encoding: str, quotechar: str) -> pd.DataFrame:
    _check_encoding(encoding)
    try:
        with open(path, encoding=encoding, newline="") as fh:
            sample = fh.read(65536)
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{str(path)!r} is not valid {encoding} text ({exc.reason} at byte {exc.start}); "
            "give the right --encoding (e.g. latin-1)"
        ) from exc
    if not sample.strip():
        raise DataError(f"input file {str(path)!r} is empty; it needs a header line and rows")
    sep = delimiter or sniff_delimiter(sample)
    header = read_header(path, sep, encoding, quotechar)
    df = _read_csv_arrow(path, sep, encoding, quotechar, header)
    if df is None:
        df = _read_csv_pandas(path, sep, encoding, quotechar, header)
    df.attrs["delimiter"] = sep  # what a job writes its CSV outputs with, unless told
    if df.shape[1] == 1 and delimiter is None and any(d in df.columns[0] for d in ";\t|,"):
        raise DataError(
            f"{str(path)!r} was read as a single column {df.columns[0]!r}; the delimiter "
            "could not be detected: pass it with --delimiter"
        )
    return df


def _read_csv_pandas(
    path: Path, sep: str, encoding: str, quotechar: str, header: list[str]
) -> pd.DataFrame:
    """The CSV read by pandas (every file :func:`_read_csv_arrow` leaves), with the checks
    that name what is wrong with a file pandas reads in its own way (extra or missing fields,
    repeated column names)."""
    try:
        df = pd.read_csv(
            path,
            sep=sep,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            encoding=encoding,
            quotechar=quotechar,
            skipinitialspace=False,
        )
    except pd.errors.ParserError as exc:
        raise DataError(
            f"cannot parse {str(path)!r} with delimiter {sep!r}: "
            f"{' '.join(str(exc).split())}; check the delimiter "
            "(--delimiter) and the quoting"
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"input file {str(path)!r} is empty; it needs a header line") from exc
    if not isinstance(df.index, pd.RangeIndex):  # pandas took the extra fields as an index
        raise DataError(
            f"cannot parse {str(path)!r}: line 2 has more fields than the header's "
            f"{len(header)}; fix the rows (one field per column) or check the delimiter "
            "(--delimiter)"
        )
    check_column_names(header, str(path))
    if df.shape[1] > 1 and len(df) and (df.iloc[:, -1] == "").any():
        short = _short_row(path, sep, encoding, quotechar, df.shape[1])
        if short is not None:
            raise DataError(
                f"cannot parse {str(path)!r}: {short}; fix that line (every row needs one "
                f"field per column, {sep!r}-separated) or check the delimiter (--delimiter)"
            )
    return df


#: a carriage return that does not end a CRLF line end (one scan; counting CR and CRLF took two)
_LONE_CR = re.compile(rb"\r(?!\n)")


def _read_csv_arrow(
    path: Path, sep: str, encoding: str, quotechar: str, header: list[str]
) -> pd.DataFrame | None:
    """The CSV read by pyarrow's parser (3-4x faster than pandas' on text cells, and already
    in the Arrow-backed strings pandas 3 keeps text in), or None to let pandas read it.

    This path takes UTF-8 files without the quote character whose two or more header names
    are non-empty and distinct and whose rows all have the header's number of fields; every
    cell is text exactly as written (an empty cell is ``""``; ``NA`` stays ``NA``), as
    :func:`read_table` promises. Any other file -- quoted cells, a short or long row, a
    whitespace-only line (pandas skips it), a carriage return not followed by a line feed, a
    byte order mark, another encoding -- goes to pandas, whose reading and messages stay the
    rule (a test compares the two readers on random files).
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if encoding.lower().replace("-", "").replace("_", "") != "utf8":
        return None
    if len(header) < 2 or "" in header or len(set(header)) != len(header):
        return None  # (one column: pandas skips a line of blanks, a value to pyarrow)
    data = path.read_bytes()
    if quotechar.encode("utf-8") in data:  # quoting: pandas' rules (e.g. an unclosed quote)
        return None
    if _LONE_CR.search(data):  # a carriage return not followed by a line feed: ditto
        return None
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            parse_options=pa_csv.ParseOptions(
                delimiter=sep,
                quote_char=quotechar,
                double_quote=True,
                escape_char=False,
                newlines_in_values=True,
                ignore_empty_lines=True,
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.large_string() for name in header},  # as pandas keeps it
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None
    if table.column_names != header:
        return None
    return table.to_pandas()


def read_header(
    path: Path, sep: str, encoding: str = "utf-8", quotechar: str = '"', errors: str = "strict"
) -> list[str]:
    """The header line's fields, as the csv module reads them (``errors``: how undecodable
    bytes are read, as :func:`open` takes it)."""
    with open(path, encoding=encoding, errors=errors, newline="") as fh:
        return next(csv.reader(fh, delimiter=sep, quotechar=quotechar), [])


def check_column_names(names: list[str], source: str) -> None:
    """DataError naming the columns of ``source`` (a file name) that appear more than once: a
    column is addressed by its name, so every name must be its own (pandas would rename the
    second ``a`` to ``a.1`` silently)."""
    if len(set(names)) != len(names):
        from collections import Counter

        twice = sorted(c for c, n in Counter(names).items() if n > 1)
        raise DataError(
            f"{source!r} has the column name(s) {', '.join(map(repr, twice))} more than "
            "once; give every column its own name"
        )


def to_numeric(values: pd.Series, column: str, source: str = "the data") -> np.ndarray:
    """Convert a column to float64; :data:`MISSING_TOKENS` become NaN.

    Any other unparsable value is a :class:`DataError` naming the column, the row (1-based,
    header excluded) and the value.
    """
    if is_numeric(values):
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    text = values.astype(str).str.strip()
    conv = pd.to_numeric(text.where(~text.isin(MISSING_TOKENS)), errors="coerce")
    bad = conv.isna() & ~text.isin(MISSING_TOKENS) & values.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            f"column {column!r} in {source} must be numeric, but row {row + 1} has "
            f"{values.iloc[row]!r} ({int(bad.sum())} unparsable value(s) in all); fix the "
            "value or declare the column as nominal"
        )
    return conv.to_numpy(dtype=np.float64, na_value=np.nan)


def _current_umask() -> int:
    """The process umask (read by setting it and restoring it at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _output_mode(path: Path) -> int:
    """Mode for ``path``: that of the file being replaced, else ``0o666 & ~umask``."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_current_umask()


#: The output set a job is writing (see :func:`output_set`); ``None`` outside one.
_ACTIVE_SET: ContextVar[OutputSet | None] = ContextVar("sdckit_output_set", default=None)


class RemoteFiles(Protocol):
    """A file system reached by URI (``hdfs://``, ``s3a://``, ``gs://``), as an engine gives it
    (the Spark engine: Hadoop's ``FileSystem`` of its session). Outputs at such URIs are
    staged beside their targets (:func:`staging_uri`) and renamed into place at the output
    set's commit; see :func:`register_remote_files`."""

    def check(self, uri: str, where: str) -> None:
        """ConfigError naming ``where`` (the key or flag) when no file system writes ``uri``."""

    def upload(self, local: Path, uri: str) -> None:
        """Copy the local file ``local`` to ``uri`` (replacing what is there)."""

    def commit(self, staged: Sequence[tuple[str, str]]) -> None:
        """Rename each staged ``(temporary, target)`` into place, replacing the target."""

    def discard(self, uris: Sequence[str]) -> None:
        """Delete ``uris`` (files or folders; missing ones are no error)."""


#: The remote file system of the engine running the job (see :func:`register_remote_files`).
_REMOTE_FILES: ContextVar[RemoteFiles | None] = ContextVar("sdckit_remote_files", default=None)


@contextmanager
def register_remote_files(handler: RemoteFiles) -> Iterator[RemoteFiles]:
    """Within the block, outputs at a URI of another scheme than ``file``
    (:func:`sdckit.core.uri.is_remote`) are written through ``handler``: each file is
    written locally as any output is, copied beside its target (:func:`staging_uri`) and,
    inside :func:`output_set`, renamed into place with the set's other outputs; a folder
    (:func:`atomic_write_dir`) is written straight to its staging URI. Outside such a block a
    remote output is a ConfigError. The engine registers its handler (the core never imports
    an engine)."""
    token = _REMOTE_FILES.set(handler)
    try:
        yield handler
    finally:
        _REMOTE_FILES.reset(token)


def staging_uri(uri: str, run_id: str) -> str:
    """Where the output at ``uri`` is staged: beside it, on the same file system,
    ``<uri>.sdckit-tmp-<run_id>`` (a trailing ``/`` of a folder dropped)."""
    return f"{uri.rstrip('/')}.sdckit-tmp-{run_id}"


def _remote_files(uri: str) -> RemoteFiles:
    """The registered remote file system, or ConfigError saying which engine writes ``uri``."""
    from sdckit.errors import ConfigError

    handler = _REMOTE_FILES.get()
    if handler is None:
        raise ConfigError(
            f"{uri!r} is a {uri_scheme(uri)}:// URI, which only the Spark engine writes "
            "(through Hadoop's file systems); use `engine: spark` (or --engine spark) or a "
            "local path"
        )
    return handler


def _write_remote(uri: str, writer: Callable[[Any], None], folder: bool) -> str:
    """:func:`atomic_write` (``folder``: :func:`atomic_write_dir`) of a remote ``uri``: a
    file is written locally by ``writer`` and uploaded to its staging URI, a folder is
    written by ``writer`` straight to its staging URI; then it is staged in the active
    output set, or renamed into place at once outside one. A failure deletes what was
    staged."""
    handler = _remote_files(uri)
    active = _ACTIVE_SET.get()
    tmp = staging_uri(uri, active.run_id if active is not None else uuid.uuid4().hex[:12])
    try:
        if folder:
            writer(tmp)
        else:
            with tempfile.TemporaryDirectory(prefix="sdckit-upload-") as local:
                name = Path(local) / uri.rstrip("/").rsplit("/", 1)[-1]
                writer(name)
                handler.upload(name, tmp)
        if active is not None:
            active.add_remote(handler, tmp, uri)
        else:
            handler.commit([(tmp, uri)])
    except BaseException:
        handler.discard([tmp])
        raise
    return uri


def _is_special(path: Path) -> bool:
    """True when ``path`` exists (symlinks followed) and is not a regular file or directory:
    a device (``/dev/null``), a FIFO, a socket, or ``/dev/stdout`` (a terminal or a pipe)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _destination(path: Path) -> Path:
    """Where a write to ``path`` lands: a symlink is followed to the file it names (the link
    itself is never replaced, so writing through ``out.csv -> releases/v3.csv`` updates
    ``releases/v3.csv``); special files are kept as named (they are written in place)."""
    if _is_special(path):
        return path
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporary files a killed run left beside ``target``; return them.

    Temporary files are named ``.NAME.PID.XXXX.tmp``; one whose process no longer runs is
    stale (a run killed by SIGKILL or a power cut). Files of running processes are left.
    """
    removed: list[Path] = []
    folder = target.parent
    if not folder.is_dir():
        return removed
    prefix = f".{target.name}."
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return removed
    for name in names:
        parts = name[len(prefix) :].split(".")
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        if not _pid_alive(int(parts[0])):
            stale = folder / name
            try:
                if stale.is_dir() and not stale.is_symlink():
                    shutil.rmtree(stale)
                else:
                    stale.unlink()
                removed.append(stale)
            except OSError:
                pass
    return removed


def _stage(path: Path, writer: Callable[[Path], None]) -> tuple[Path, Path]:
    """Write ``writer``'s output to a temporary file for ``path``; return (temp, destination).

    The temporary file lives beside the destination (same file system, so the final rename
    is atomic) and is named ``.NAME.PID.XXXX.tmp``; for a special destination it lives in the
    system's temporary folder. It is removed if ``writer`` fails or the run is interrupted.
    """
    dest = _destination(path)
    special = _is_special(dest)
    if not special:
        dest.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(dest)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{dest.name}.{os.getpid()}.",
        suffix=".tmp",
        dir=None if special else dest.parent,
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        writer(tmp_path)
        if not special:
            os.chmod(tmp_path, _output_mode(dest))
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return tmp_path, dest


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Defer SIGINT and SIGTERM while an output set is renamed into place (main thread only),
    so an interrupted run never leaves half of a release."""
    blockable = threading.current_thread() is threading.main_thread()
    sigs = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs) if blockable else None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _commit(staged: list[tuple[Path, Path]]) -> None:
    """Move staged temporaries onto their destinations, all under the folders' locks.

    A regular destination is replaced by an atomic rename; a special one (device, FIFO,
    terminal) is opened and written, never renamed over.
    """
    folders = [dest.parent for _, dest in staged if not _is_special(dest)]
    # The lock is waited for with signals live (a waiting run ends at once on SIGTERM, its
    # temporaries removed); only the renames themselves run with signals deferred.
    with folder_locks(folders), _signals_deferred():
        for tmp, dest in staged:
            if _is_special(dest):
                try:
                    with open(tmp, "rb") as src, open(dest, "wb") as sink:
                        shutil.copyfileobj(src, sink)
                finally:
                    tmp.unlink(missing_ok=True)
            elif tmp.is_dir():
                _replace_dir(tmp, dest)
            else:
                os.replace(tmp, dest)


def _replace_dir(tmp: Path, dest: Path) -> None:
    """Move the staged folder ``tmp`` onto ``dest``: an existing folder is first renamed
    aside (one rename each, so ``dest`` is always either the old or the new release) and then
    removed; an existing file is replaced."""
    old = None
    if dest.is_dir() and not dest.is_symlink():
        old = Path(
            tempfile.mkdtemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=".tmp", dir=dest.parent)
        )
        os.rename(dest, old / dest.name)
    elif dest.exists():
        dest.unlink()
    os.rename(tmp, dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _remove_staged(tmp: Path) -> None:
    """Remove a staged temporary file or folder."""
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.unlink(missing_ok=True)


class OutputSet:
    """The outputs of one job, written as one release (use :func:`output_set`).

    Inside ``with output_set():`` every :func:`atomic_write` (and so :func:`write_table`,
    :func:`write_text`, the JSON and HTML writers) only stages its file; when the block ends
    without error all staged files are renamed into place together, under an exclusive lock
    on their folders (:func:`sdckit.core.folder_lock.folder_locks`: each folder locked once
    however it is named, another run's lock waited for with signals live and for a bounded
    time), with SIGINT/SIGTERM deferred during the renames. A failed or interrupted job removes its
    temporaries and replaces nothing. ``run_id`` stamps the JSON summary and the HTML report
    of the set, so a report can be matched with the data it describes.
    """

    def __init__(self) -> None:
        self.run_id = uuid.uuid4().hex[:12]
        self._staged: list[tuple[Path, Path]] = []
        self._remote: list[tuple[RemoteFiles, str, str]] = []

    def add(self, tmp: Path, dest: Path) -> None:
        """Stage ``tmp`` to replace ``dest`` at commit."""
        self._staged.append((tmp, dest))

    def add_remote(self, handler: RemoteFiles, tmp: str, dest: str) -> None:
        """Stage the remote ``tmp`` (already written through ``handler``, see
        :func:`register_remote_files`) to replace the URI ``dest`` at commit."""
        self._remote.append((handler, tmp, dest))

    def commit(self) -> None:
        """Rename every staged file into place (once): the remote ones first (each file
        system's rename, see :class:`RemoteFiles`), then the local ones."""
        staged, self._staged = self._staged, []
        remote, self._remote = self._remote, []
        try:
            for handler in _handlers(remote):
                handler.commit([(tmp, dest) for h, tmp, dest in remote if h is handler])
            _commit(staged)
        except BaseException:
            _discard_remote(remote)
            for tmp, _ in staged:
                _remove_staged(tmp)
            raise

    def discard(self) -> None:
        """Remove every staged temporary file (remote ones too)."""
        for tmp, _ in self._staged:
            _remove_staged(tmp)
        self._staged = []
        remote, self._remote = self._remote, []
        _discard_remote(remote)


def _handlers(remote: Sequence[tuple[RemoteFiles, str, str]]) -> list[RemoteFiles]:
    """The distinct handlers of staged remote outputs, in the order first staged."""
    found: list[RemoteFiles] = []
    for handler, _, _ in remote:
        if not any(handler is h for h in found):
            found.append(handler)
    return found


def _discard_remote(remote: Sequence[tuple[RemoteFiles, str, str]]) -> None:
    """Delete the staged remote temporaries (those already renamed into place are gone)."""
    for handler in _handlers(remote):
        handler.discard([tmp for h, tmp, _ in remote if h is handler])


@contextmanager
def output_set() -> Iterator[OutputSet]:
    """Write every output of the block as one release (see :class:`OutputSet`).

    Nested use joins the enclosing set.
    """
    active = _ACTIVE_SET.get()
    if active is not None:
        yield active
        return
    outputs = OutputSet()
    token = _ACTIVE_SET.set(outputs)
    try:
        yield outputs
    except BaseException:
        outputs.discard()
        raise
    finally:
        _ACTIVE_SET.reset(token)
    outputs.commit()


def current_run_id() -> str | None:
    """The run id of the output set being written, or ``None`` outside one."""
    active = _ACTIVE_SET.get()
    return active.run_id if active is not None else None


@overload
def atomic_write(path: Path, writer: Callable[[Path], None]) -> Path: ...
@overload
def atomic_write(path: Target, writer: Callable[[Path], None]) -> Target: ...
def atomic_write(path: Target, writer: Callable[[Path], None]) -> Target:
    """Write ``path`` atomically: ``writer(tmp)`` writes a temporary file, then it is renamed.

    The temporary file lives in the target directory (same file system, so the rename is
    atomic) and is removed if ``writer`` fails or the run is interrupted (SIGINT, SIGTERM);
    temporaries that a killed run left are removed first. The result gets the permissions any
    newly written file gets (``0o666 & ~umask``), or keeps those of the file it replaces;
    ``mkstemp``'s private ``0o600`` is not left on the output. A symlink is followed (its
    target is replaced, the link stays); a device, FIFO or terminal (``/dev/null``,
    ``/dev/stdout``) is opened and written, never renamed over. Inside :func:`output_set` the
    file is only staged and renamed with the rest of the set. A URI of another scheme than
    ``file`` is written through the registered remote file system
    (:func:`register_remote_files`).
    """
    if is_remote(path):
        return _write_remote(str(path), writer, folder=False)
    path = Path(path)
    tmp, dest = _stage(path, writer)
    active = _ACTIVE_SET.get()
    if active is not None:
        active.add(tmp, dest)
    else:
        try:
            _commit([(tmp, dest)])
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return path


def atomic_write_dir(path: Target, writer: Callable[[Any], None]) -> Target:
    """Write the folder ``path`` atomically (e.g. Spark's part files): ``writer(tmp)`` fills a
    temporary folder beside it (``.NAME.PID.XXXX.tmp``), which then replaces ``path`` as
    :func:`atomic_write` replaces a file (staged inside :func:`output_set`). A failed or
    interrupted writer leaves nothing behind. For a remote URI (:func:`register_remote_files`)
    ``tmp`` is the URI :func:`staging_uri` beside it, on the same file system."""
    if is_remote(path):
        return _write_remote(str(path), writer, folder=True)
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(dest)
    tmp = Path(
        tempfile.mkdtemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=".tmp", dir=dest.parent)
    )
    try:
        writer(tmp)
    except BaseException:
        _remove_staged(tmp)
        raise
    active = _ACTIVE_SET.get()
    if active is not None:
        active.add(tmp, dest)
    else:
        try:
            _commit([(tmp, dest)])
        except BaseException:
            _remove_staged(tmp)
            raise
    return dest


@overload
def write_text(path: Path, text: str, encoding: str = ...) -> Path: ...
@overload
def write_text(path: Target, text: str, encoding: str = ...) -> Target: ...
def write_text(path: Target, text: str, encoding: str = "utf-8") -> Target:
    """Atomically write a text file."""
    return atomic_write(path, lambda p: _discard(p.write_text(text, encoding=encoding)))


def write_bytes(path: Target, data: bytes) -> Target:
    """Atomically write a binary file."""
    return atomic_write(path, lambda p: _discard(p.write_bytes(data)))


def _discard(_: object) -> None:
    """Drop a writer's return value (the byte count) where a writer returns nothing."""


_FORMULA_START = r"^[=+\-@\t\r]"
_PLAIN_NUMBER = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"


def neutralize_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells cannot be run as spreadsheet formulas.

    A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and is not
    a plain number, gets a leading single quote (``=HYPERLINK(...)`` -> ``'=HYPERLINK(...)``):
    the defence OWASP recommends against CSV injection. It changes data, so it is opt-in
    (``output: {neutralize_formulas: true}``).
    """
    out = df.copy()
    for c in out.columns:
        s = out[c]
        if pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            continue
        text = s.astype("string")
        risky = text.str.contains(_FORMULA_START, regex=True, na=False) & ~text.str.fullmatch(
            _PLAIN_NUMBER, na=False
        )
        if risky.any():
            s = s.astype(object).copy()
            s[risky.to_numpy()] = "'" + text[risky].astype(str)
            out[c] = s
    return out


def write_table(
    df: pd.DataFrame,
    path: Target,
    delimiter: str = ",",
    encoding: str = "utf-8",
    neutralize: bool = False,
    meta: FileMeta | None = None,
) -> Target:
    """Atomically write ``df`` as CSV (any other suffix), Parquet (``.parquet``), or an SPSS,
    Stata or SAS transport file (``.sav .zsav .por .dta .xpt``, with ``meta``'s labels -- by
    default those ``df`` carries from its input: :func:`sdckit.core.formats.write_stat_file`).

    ``neutralize=True`` writes :func:`neutralize_formulas` of ``df`` (CSV injection defence).
    """
    if not is_remote(path):
        path = Path(path)
    if neutralize:
        df = neutralize_formulas(df)
    if is_stat_file(str(path)):  # (.sas7bdat: refused, pyreadstat cannot write it)
        suffix = "." + str(path).rsplit(".", 1)[-1].lower()
        return atomic_write(path, lambda p: write_stat_file(df, p, meta, suffix=suffix))
    if str(path).lower().endswith((".parquet", ".pq")):
        return atomic_write(path, lambda p: _without_attrs(df).to_parquet(p, index=False))

    def _csv(p: Path) -> None:
        if encoding.lower().replace("-", "").replace("_", "") == "utf8" and _write_csv_arrow(
            df, p, delimiter
        ):
            return
        buf = io.StringIO()
        df.to_csv(buf, sep=delimiter, index=False)
        p.write_text(buf.getvalue(), encoding=encoding)

    return atomic_write(path, _csv)


def _without_attrs(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its ``attrs`` (a shallow copy; the data is not copied): what pyarrow
    converts, which would try to store the attrs -- an input file's labels
    (:class:`~sdckit.core.formats.FileMeta`), not JSON -- in the file's metadata and warn."""
    if not df.attrs:
        return df
    plain = df.copy(deep=False)
    plain.attrs = {}
    return plain


def _write_csv_arrow(df: pd.DataFrame, path: Path, delimiter: str) -> bool:
    """Write ``df`` as UTF-8 CSV with pyarrow's writer (about 9x faster than pandas on
    numbers); False, writing nothing, when a column is not plain numbers or text.

    Only integer, float and text columns (missing values written empty), and categoricals
    of text (a released table's generalized columns, written as their labels) take this path,
    so the output is what pandas would have written: the header quoted where needed; no cell
    quoted (a text cell with a delimiter, quote or line break sends the whole frame to
    pandas' writer); floats keep every digit (shortest round-trip form; an integral float is
    written without ``.0``, a tiny one as ``1e-7`` rather than ``1e-07``).
    Booleans, dates, categoricals of numbers, mixed-type columns and one-column frames
    (pandas quotes an empty cell there, ``""``, so the line is not blank) go to pandas'
    writer.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if df.shape[1] < 2 or len(set(map(str, df.columns))) != len(df.columns):
        return False
    for dtype in df.dtypes:  # numbers (no booleans: True/true), text/object, text categories
        if isinstance(dtype, pd.CategoricalDtype):
            if dtype.categories.inferred_type not in ("string", "empty"):
                return False
        elif dtype.kind not in "iufO" and not isinstance(dtype, pd.StringDtype):
            return False
    try:
        table = pa.Table.from_pandas(_without_attrs(df), preserve_index=False)
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # e.g. numbers and text in one column
        return False
    table = pa.table(
        [c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c for c in table.columns],
        names=table.column_names,
    )
    if any(
        not (
            pa.types.is_integer(t)
            or pa.types.is_floating(t)
            or pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_null(t)
        )
        for t in table.schema.types
    ):
        return False
    header = io.StringIO()
    csv.writer(header, delimiter=delimiter, lineterminator="\n").writerow(map(str, df.columns))
    with open(path, "wb") as fh:
        fh.write(header.getvalue().encode("utf-8"))
        try:  # cells are never quoted: a text cell that would need quotes fails over to pandas
            pa_csv.write_csv(
                table,
                fh,
                pa_csv.WriteOptions(
                    include_header=False, delimiter=delimiter, quoting_style="none"
                ),
            )
        except pa.ArrowInvalid:
            return False
    return True


def _same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file (symlinks and hard links included)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.realpath(a)) == Path(os.path.realpath(b))


#: How the files of a Spark release folder start (part files, markers, their checksums).
RELEASE_FILE_PREFIXES = ("part-", "_SUCCESS", "._SUCCESS", ".part-", "_committed", "_started")


def _is_release_folder(path: Path) -> bool:
    """True for an empty folder or one holding only a Spark release's files (``part-*``,
    ``_SUCCESS``, checksums: :data:`RELEASE_FILE_PREFIXES`), at its top or in Hive partition
    folders (``sex=Female/``): what a folder output may replace."""
    for n in os.listdir(path):
        if n.startswith(RELEASE_FILE_PREFIXES):
            continue
        sub = path / n
        if "=" in n and sub.is_dir() and not sub.is_symlink() and _is_release_folder(sub):
            continue
        return False
    return True


def check_output_paths(
    outputs: Mapping[str, str | Path | None],
    inputs: Mapping[str, str | Path | None],
    folders: Collection[str] = (),
) -> None:
    """Refuse output paths that would destroy input or leave half the outputs written.

    ``outputs`` and ``inputs`` map a flag or key (``"--json"``, ``"--original"``) to its path
    (``None`` = not given). Raises :class:`~sdckit.errors.ConfigError` naming the flag and the
    path when an output is a URI of another scheme than ``file`` (callers that write such URIs,
    the Spark engine's jobs, leave them out), an output is a file the job reads (compared by
    identity: symlinks and hard links count), two outputs are the same file, an output is an
    existing directory or a socket, a parent of an output is a file, or its folder cannot be
    written (probed by creating and removing a temporary file). A device, FIFO or terminal
    (``/dev/null``, ``/dev/stdout``) is a valid output: it is written, never replaced. Existing
    regular files that are not inputs are replaced (the documented overwrite policy). Commands
    call this before any work, so a bad output path costs nothing and writes nothing.

    The outputs named in ``folders`` are folders of part files (the Spark engine's
    releases): an existing folder is replaced only when it is empty or holds nothing but a
    previous release's part files, never another folder.
    """
    from sdckit.errors import ConfigError

    given_in = {flag: Path(p) for flag, p in inputs.items() if p is not None}
    seen: dict[Path, str] = {}
    for flag, raw in outputs.items():
        if raw is None:
            continue
        if is_remote(raw):
            raise ConfigError(
                f"{flag} {str(raw)!r} is a {uri_scheme(raw)}:// URI: only a Spark job writes to "
                "other URIs than file:// (through Hadoop's file systems); use `engine: spark` "
                "(or --engine spark) where the command takes it, or a local path"
            )
        path = output_target(str(raw), flag) if isinstance(raw, str) else raw
        assert isinstance(path, Path)
        for in_flag, in_path in given_in.items():
            if _same_file(path, in_path):
                raise ConfigError(
                    f"{flag} {str(raw)!r} is the file the job reads as {in_flag}; an input is "
                    "never overwritten: choose another output path"
                )
        if _is_special(path):
            if stat.S_ISSOCK(os.stat(path).st_mode):
                raise ConfigError(
                    f"{flag} {str(raw)!r} is a socket; give a file path (or a device such as "
                    "/dev/stdout)"
                )
            if not os.access(path, os.W_OK):
                raise ConfigError(f"{flag} {str(raw)!r} cannot be written; choose another path")
            continue
        resolved = Path(os.path.realpath(path))
        if resolved in seen:
            raise ConfigError(
                f"{seen[resolved]} and {flag} both name the same file {str(raw)!r}; give each "
                "output its own path"
            )
        seen[resolved] = flag
        if path.is_dir() and flag in folders:
            if not _is_release_folder(path):
                raise ConfigError(
                    f"{flag} {str(raw)!r} is a folder with other files than a release's part "
                    "files; a release folder replaces only a previous release: choose a new "
                    "or empty folder"
                )
        elif path.is_dir():
            raise ConfigError(
                f"{flag} {str(raw)!r} is a directory; give a file path inside it, e.g. "
                f"{str(path / ('out.' + _suffix_hint(flag)))!r}"
            )
        for parent in resolved.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(
                        f"{flag} {str(raw)!r}: {str(parent)!r} is a file, not a folder; "
                        "choose another output path"
                    )
                _probe_writable(flag, raw, parent)
                break


def _suffix_hint(flag: str) -> str:
    """A file suffix that suits an output flag or key (for messages)."""
    name = flag.rsplit(".", 1)[-1].lstrip("-")
    return {"json": "json", "html": "html", "report": "html"}.get(name, "csv")


def _probe_writable(flag: str, raw: str | Path, folder: Path) -> None:
    """ConfigError unless a file can be created in ``folder`` (a probe, removed at once)."""
    from sdckit.errors import ConfigError

    try:
        fd, tmp = tempfile.mkstemp(prefix=".sdckit-probe.", dir=folder)
    except OSError as exc:
        raise ConfigError(
            f"{flag} {str(raw)!r}: cannot write in {str(folder)!r} "
            f"({exc.strerror or exc}); choose a folder you can write to"
        ) from None
    os.close(fd)
    os.unlink(tmp)
