"""Reading and writing tables: CSV (delimiter given or sniffed), Parquet, DataFrames.

Rules (DESIGN.md): cells are read exactly as written (no NA guessing, so a missing value is
written back as it was read); outputs are written to a temporary file in the target directory
and renamed into place, so a reader never sees a half-written file and a failed job leaves
nothing behind; the input is never modified.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

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
    """Read a data set: a DataFrame (copied), a ``.parquet`` file, or a CSV file.

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
        if path.is_dir():
            raise DataError(f"input {str(path)!r} is a directory; give a CSV or Parquet file")
        if path.suffix.lower() in (".parquet", ".pq"):
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


def _name(source) -> str:
    return "the DataFrame" if isinstance(source, pd.DataFrame) else repr(str(source))


def _read_csv(path: Path, delimiter: str | None, encoding: str, quotechar: str) -> pd.DataFrame:
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
    if df.shape[1] == 1 and delimiter is None and any(d in df.columns[0] for d in ";\t|,"):
        raise DataError(
            f"{str(path)!r} was read as a single column {df.columns[0]!r}; the delimiter "
            "could not be detected: pass it with --delimiter"
        )
    return df


def to_numeric(values: pd.Series, column: str, source: str = "the data") -> np.ndarray:
    """Convert a column to float64; :data:`MISSING_TOKENS` become NaN.

    Any other unparsable value is a :class:`DataError` naming the column, the row (1-based,
    header excluded) and the value.
    """
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
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


def atomic_write(path: str | Path, writer: Callable[[Path], None]) -> Path:
    """Write ``path`` atomically: ``writer(tmp)`` writes a temporary file, then it is renamed.

    The temporary file lives in the target directory (same file system, so the rename is
    atomic) and is removed if ``writer`` fails. The result gets the permissions any newly
    written file gets (``0o666 & ~umask``), or keeps those of the file it replaces;
    ``mkstemp``'s private ``0o600`` is not left on the output.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        writer(tmp_path)
        os.chmod(tmp_path, _output_mode(path))
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Atomically write a text file."""
    return atomic_write(path, lambda p: p.write_text(text, encoding=encoding))


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Atomically write a binary file."""
    return atomic_write(path, lambda p: p.write_bytes(data))


def write_table(
    df: pd.DataFrame, path: str | Path, delimiter: str = ",", encoding: str = "utf-8"
) -> Path:
    """Atomically write ``df`` as CSV (any suffix but ``.parquet``) or Parquet."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        return atomic_write(path, lambda p: df.to_parquet(p, index=False))

    def _csv(p: Path) -> None:
        buf = io.StringIO()
        df.to_csv(buf, sep=delimiter, index=False)
        p.write_text(buf.getvalue(), encoding=encoding)

    return atomic_write(path, _csv)


def check_output_paths(
    outputs: Mapping[str, str | Path | None], inputs: Mapping[str, str | Path | None]
) -> None:
    """Refuse output paths that would destroy input or leave half the outputs written.

    ``outputs`` and ``inputs`` map a flag (``"--json"``, ``"--original"``) to its path (``None``
    = not given). Raises :class:`~sdckit.errors.ConfigError` naming the flag and the path when
    an output is an input file, two outputs are the same file, an output is an existing
    directory, a parent of an output is a file, or its folder cannot be written (probed by
    creating and removing a temporary file). Commands call this before any work, so a
    bad output path costs nothing and writes nothing.
    """
    from sdckit.errors import ConfigError

    given_in = {flag: Path(p).resolve() for flag, p in inputs.items() if p is not None}
    seen: dict[Path, str] = {}
    for flag, raw in outputs.items():
        if raw is None:
            continue
        path = Path(raw)
        resolved = path.resolve()
        for in_flag, in_path in given_in.items():
            if resolved == in_path:
                raise ConfigError(
                    f"{flag} {str(raw)!r} is the {in_flag} file; the input is never "
                    "overwritten: choose another output path"
                )
        if resolved in seen:
            raise ConfigError(
                f"{seen[resolved]} and {flag} are the same file {str(raw)!r}; give each output "
                "its own path"
            )
        seen[resolved] = flag
        if path.is_dir():
            raise ConfigError(
                f"{flag} {str(raw)!r} is a directory; give a file path inside it, e.g. "
                f"{str(path / ('out.' + flag.lstrip('-')))!r}"
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
