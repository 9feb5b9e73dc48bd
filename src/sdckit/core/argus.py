"""mu-Argus and tau-Argus files: ``.rda`` metadata, ``.asc`` data, ``.hrc`` hierarchies, ``.tab``
cell files.

The formats are those of the Argus manuals (mu-Argus 5 and tau-Argus 4 user manuals, Statistics
Netherlands, "the metadata file"; the readers of the open-source programs, ``MetadataMu`` and
``Metadata.readMicroMetadata``/``readTableMetadata``, EUPL, read the same grammar):

* A ``.rda`` file declares one variable per line, followed by indented keyword lines that
  apply to it. For fixed-width data (``.asc``) the line is ``NAME START LENGTH [MISSING1
  [MISSING2]]`` (``START`` 1-based); for free-format data the first line is ``<SEPARATOR>
  ","`` and the variable lines leave out ``START`` (``NAME LENGTH [MISSING...]``). The
  metadata of a table (a ``.tab`` cell file) has no positions or lengths: ``NAME [MISSING...]``
  (:func:`read_rda` with ``kind="table"``). Values may be quoted (``"Total"``).
* Keywords: ``<RECODEABLE>`` (also spelled ``<RECODABLE>``): a categorical (spanning)
  variable; ``<IDLEVEL> n`` (mu-Argus: 0 not identifying, 1 most identifying .. 5);
  ``<TOTCODE> c``; ``<CODELIST> f``; ``<HIERARCHICAL>`` with ``<HIERCODELIST> f`` (a ``.hrc``
  file) and ``<HIERLEADSTRING> s`` (``@`` by default) or ``<HIERLEVELS> n n ...`` (digits per
  level); ``<NUMERIC>`` (optionally followed by ``<SHADOW>``, ``<COST>``/``<COSTVAR>``,
  ``<LOWERPL>``, ``<UPPERPL>``); ``<DECIMALS> n``; ``<WEIGHT>``; ``<HOLDING>``; ``<REQUEST> c1
  c2``; ``<DISTANCE> n ...``; ``<TRUNCABLE>``; ``<SUPPRESSWEIGHT> n``; ``<HOUSE_ID>``,
  ``<HOUSEHOLD>``, ``<RELATED> v``; for tables ``<FREQUENCY>``, ``<MAXSCORE>``, ``<STATUS>``
  and, at the top, ``<SAFE> s``, ``<UNSAFE> s``, ``<PROTECT> s`` (the status codes of the
  cell file, ``S``/``U``/``P`` by default). ``<NAMESINFRONT>`` (free format): the data's first
  line holds the names.
* A ``.hrc`` file lists a hierarchy's codes, one a line, parents before their children, each
  code preceded by the lead string once per level below the top (``@`` by default)::

      North
      @01
      @02
      South
      @03

* A ``.tab`` file holds one cell a line, free format with the ``.rda``'s separator, the
  fields in the ``.rda``'s order (decimal commas are read as decimal points).

Codes are compared with the surrounding blanks removed (a fixed-width field ``" 1"``, a
``.hrc`` line ``@ 1`` and a cell ``" 1"`` are the code ``1``). A value equal to one of its
variable's missing codes is read as missing (an empty field).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import ConfigError, DataError, HierarchyError

__all__ = [
    "ArgusMetadata",
    "ArgusVariable",
    "TAB_STATUS",
    "apply_codelists",
    "hrc_hierarchy",
    "read_argus_data",
    "read_cdl",
    "read_hrc",
    "read_rda",
    "read_tab",
    "table_rda",
    "tree_hrc",
    "write_tab",
]

#: The status letter a protected table's cell gets in a written ``.tab`` file, by sdckit's
#: status: tau-Argus' cell-status categories as its intermediate (``.tab``) files write them
#: (``S`` safe, ``U`` primary unsafe, ``M`` secondary suppression, ``E`` empty; ``P``,
#: protected, for a cell a user marks so), tau-Argus 4 source, ``CellStatus`` and
#: ``Metadata`` (whose table metadata declares ``<SAFE> "S" <UNSAFE> "U" <PROTECT> "P"``).
TAB_STATUS = {"safe": "S", "primary": "U", "secondary": "M", "empty": "E"}

#: Keywords that take no argument (the rest of the line, if any, must be empty).
_FLAGS = {
    "<RECODEABLE>",
    "<RECODABLE>",
    "<HIERARCHICAL>",
    "<WEIGHT>",
    "<HOLDING>",
    "<TRUNCABLE>",
    "<HOUSE_ID>",
    "<HOUSEHOLD>",
    "<FREQUENCY>",
    "<MAXSCORE>",
    "<STATUS>",
    "<RECORDKEY>",
}
#: Keywords of a variable that take exactly one value.
_ONE_VALUE = {
    "<TOTCODE>",
    "<CODELIST>",
    "<HIERCODELIST>",
    "<HIERLEADSTRING>",
    "<IDLEVEL>",
    "<DECIMALS>",
    "<SUPPRESSWEIGHT>",
    "<RELATED>",
}
_NUMERIC_KINDS = {
    "<SHADOW>": "shadow",
    "<COST>": "cost",
    "<COSTVAR>": "cost",
    "<LOWERPL>": "lower_protection",
    "<UPPERPL>": "upper_protection",
}
_TOP_LEVEL = {"<SEPARATOR>", "<SPSS>", "<NAMESINFRONT>", "<SAFE>", "<UNSAFE>", "<PROTECT>"}
_KNOWN = sorted(
    _FLAGS | _ONE_VALUE | _TOP_LEVEL | {"<NUMERIC>", "<REQUEST>", "<DISTANCE>", "<HIERLEVELS>"}
)


@dataclass
class ArgusVariable:
    """One variable of a ``.rda`` file (``line``: where it is declared, 1-based).

    ``kind`` is what the keywords make it: ``categorical`` (``<RECODEABLE>``), ``numeric``,
    ``weight``, ``holding``, ``request``, ``frequency``, ``top`` (``<MAXSCORE>``), ``status``,
    ``shadow``, ``cost``, ``lower_protection``, ``upper_protection``, ``record_key``, or
    ``other`` (none of them). A variable both recodeable and numeric is categorical with
    ``numeric`` set.
    """

    name: str
    line: int
    start: int | None = None
    length: int | None = None
    missing: tuple[str, ...] = ()
    kind: str = "other"
    numeric: bool = False
    idlevel: int | None = None
    totcode: str | None = None
    codelist: str | None = None
    hierarchical: bool = False
    hiercodelist: str | None = None
    hierleadstring: str = "@"
    hierlevels: tuple[int, ...] = ()
    decimals: int = 0
    request_codes: tuple[str, ...] = ()
    distance: tuple[int, ...] = ()
    truncable: bool = False
    suppressweight: int | None = None
    household: bool = False
    related: str | None = None

    @property
    def categorical(self) -> bool:
        """Whether the variable is a recodeable (categorical, spanning) variable."""
        return self.kind == "categorical"


@dataclass
class ArgusMetadata:
    """A ``.rda`` file read: its variables in order and how the data file is laid out.

    ``separator`` is None for fixed-width data; ``names_in_front``: the free-format data's
    first line holds the names; ``status_codes``: the ``.tab`` status letters
    (``safe``/``unsafe``/``protect``).
    """

    path: Path
    variables: list[ArgusVariable] = field(default_factory=list)
    separator: str | None = None
    names_in_front: bool = False
    status_codes: dict[str, str] = field(
        default_factory=lambda: {"safe": "S", "unsafe": "U", "protect": "P"}
    )

    def variable(self, name: str) -> ArgusVariable | None:
        """The variable called ``name`` (case-insensitive, as the Argus programs match), or
        None."""
        for v in self.variables:
            if v.name.lower() == name.lower():
                return v
        return None

    def of_kind(self, kind: str) -> list[ArgusVariable]:
        """The variables of ``kind`` (:class:`ArgusVariable`), in file order."""
        return [v for v in self.variables if v.kind == kind]

    def file(self, name: str) -> Path:
        """A file the metadata names (a code list, a ``.hrc``): as given when it exists, else
        in the ``.rda``'s folder (the Argus programs look in the data's folder likewise; a
        Windows path keeps its file name only)."""
        given = Path(name.replace("\\", "/"))
        if given.is_absolute() and given.is_file():
            return given
        local = self.path.parent / given
        if local.is_file():
            return local
        return self.path.parent / given.name


def _read_text(p: Path, kind: str, encoding: str, error: type[Exception], hint: str) -> str:
    """The text of the ``kind`` file ``p`` (``metadata``, ``data``, ``codelist``,
    ``hierarchy``); ``error`` naming the file when it is missing or not ``encoding`` text,
    with ``hint`` on how to give the encoding."""
    try:
        return p.read_text(encoding=encoding)
    except (FileNotFoundError, IsADirectoryError):
        raise error(f"{kind} file {str(p)!r} does not exist; check the path") from None
    except UnicodeDecodeError as exc:
        raise error(
            f"{kind} file {str(p)!r} is not {encoding} text ({exc.reason} at byte "
            f"{exc.start}); {hint}"
        ) from None


def _tokens(line: str, where: str) -> list[str]:
    """The blank-separated tokens of ``line``; ``"..."`` is one token (quotes removed)."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if line[i].isspace():
            i += 1
            continue
        if line[i] == '"':
            end = line.find('"', i + 1)
            if end < 0:
                raise ConfigError(f"{where}: a quote is not closed; close it with '\"'")
            out.append(line[i + 1 : end])
            i = end + 1
        else:
            j = i
            while j < n and not line[j].isspace():
                j += 1
            out.append(line[i:j])
            i = j
    return out


def _int(text: str, what: str, where: str, hint: str) -> int:
    """``text`` as a whole number, else ConfigError naming ``what`` and the line."""
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{where}: {what} must be a whole number, got {text!r}; {hint}") from None


def read_rda(
    path: str | Path, kind: Literal["micro", "table"] = "micro", encoding: str = "utf-8"
) -> ArgusMetadata:
    """Read a mu-Argus/tau-Argus ``.rda`` metadata file (the grammar of the module's
    docstring). ``kind``: ``micro`` for microdata (fixed-width ``.asc`` or free format),
    ``table`` for the metadata of a ``.tab`` cell file.

    Raises :class:`~sdckit.errors.ConfigError` naming the file, the line and the keyword or
    field at fault: an unknown keyword, a keyword before any variable, a position or length
    that is not a whole number, overlapping fixed-width fields, a missing code longer than
    its field, ``<HIERLEVELS>`` not adding up to the length, an ``<IDLEVEL>`` outside 0..5, a
    variable declared twice.
    """
    p = Path(path)
    text = _read_text(p, "metadata", encoding, ConfigError, "give its encoding (e.g. latin-1)")
    meta = ArgusMetadata(path=p)
    if kind == "table":
        meta.separator = ";"
    current: ArgusVariable | None = None
    layout = (
        "`NAME [MISSING1 [MISSING2]]`"
        if kind == "table"
        else "`NAME START LENGTH [MISSING1 [MISSING2]]` (fixed width) or `NAME LENGTH "
        "[MISSING...]` after `<SEPARATOR>`"
    )
    seen_variable = False
    for number, raw in enumerate(text.splitlines(), start=1):
        where = f"{p.name} line {number}"
        tokens = _tokens(raw, where)
        if not tokens:
            continue
        head = tokens[0]
        if not head.startswith("<"):
            current = _declare(meta, kind, tokens, number, where, layout)
            seen_variable = True
            continue
        keyword = head.upper()
        args = tokens[1:]
        if keyword in _TOP_LEVEL:
            if keyword in ("<SEPARATOR>", "<SPSS>", "<NAMESINFRONT>") and seen_variable:
                raise ConfigError(
                    f"{where}: {keyword} must come before the first variable; move it to the "
                    "top of the file"
                )
            if keyword == "<SPSS>":
                raise ConfigError(
                    f"{where}: <SPSS> metadata describes an SPSS file, which sdckit reads "
                    "directly: give the .sav file as the input (no metadata needed)"
                )
            if keyword == "<NAMESINFRONT>":
                meta.names_in_front = True
                continue
            value = _one(args, keyword, where)
            if keyword == "<SEPARATOR>":
                meta.separator = "\t" if value.upper() == "TAB" else value
            else:
                meta.status_codes[keyword.strip("<>").lower()] = value
            continue
        if current is None:
            raise ConfigError(
                f"{where}: keyword {keyword} comes before any variable; declare the variable "
                f"first ({layout})"
            )
        _apply(current, keyword, args, where)
    if not meta.variables:
        raise ConfigError(f"metadata file {str(p)!r} declares no variable ({layout})")
    _verify(meta, kind)
    return meta


def _one(args: list[str], keyword: str, where: str) -> str:
    """The single value of ``keyword``, else ConfigError."""
    if len(args) != 1:
        raise ConfigError(
            f"{where}: {keyword} takes one value, got {len(args)} ({' '.join(args) or 'none'}); "
            f'write e.g. `{keyword} "value"`'
        )
    return args[0]


def _declare(
    meta: ArgusMetadata, kind: str, tokens: list[str], number: int, where: str, layout: str
) -> ArgusVariable:
    """The variable a declaration line declares (appended to ``meta``)."""
    name, rest = tokens[0], tokens[1:]
    var = ArgusVariable(name=name, line=number)
    if kind == "micro":
        fixed = meta.separator is None
        need = 2 if fixed else 1
        if len(rest) < need:
            raise ConfigError(
                f"{where}: variable {name!r} needs its "
                f"{'start position and length' if fixed else 'length'}; write {layout}"
            )
        if fixed:
            var.start = _int(rest[0], f"the start position of {name!r}", where, layout)
            rest = rest[1:]
            if var.start < 1:
                raise ConfigError(f"{where}: the start position of {name!r} is 1 or more")
        var.length = _int(rest[0], f"the length of {name!r}", where, layout)
        if var.length < 1:
            raise ConfigError(f"{where}: the length of {name!r} must be 1 or more")
        rest = rest[1:]
    if len(rest) > 2:
        raise ConfigError(
            f"{where}: variable {name!r} has {len(rest)} missing codes ({' '.join(rest)}); "
            "the Argus metadata takes at most two"
        )
    var.missing = tuple(m.strip() for m in rest if m.strip())
    meta.variables.append(var)
    return var


def _apply(var: ArgusVariable, keyword: str, args: list[str], where: str) -> None:
    """Apply one keyword line to ``var``."""
    if keyword in _FLAGS:
        if args:
            raise ConfigError(
                f"{where}: {keyword} takes no value, got {' '.join(args)!r}; remove it"
            )
        if keyword in ("<RECODEABLE>", "<RECODABLE>"):
            var.numeric = var.numeric or var.kind == "numeric"
            var.kind = "categorical"
        elif keyword == "<HIERARCHICAL>":
            var.hierarchical = True
        elif keyword == "<TRUNCABLE>":
            var.truncable = True
        elif keyword in ("<HOUSE_ID>", "<HOUSEHOLD>"):
            var.household = True
        else:
            var.kind = {
                "<WEIGHT>": "weight",
                "<HOLDING>": "holding",
                "<FREQUENCY>": "frequency",
                "<MAXSCORE>": "top",
                "<STATUS>": "status",
                "<RECORDKEY>": "record_key",
            }[keyword]
        return
    if keyword in _ONE_VALUE:
        value = _one(args, keyword, where)
        hint = f"write e.g. `{keyword} 1`"
        if keyword == "<TOTCODE>":
            var.totcode = value.strip()
        elif keyword == "<CODELIST>":
            var.codelist = value
        elif keyword == "<HIERCODELIST>":
            var.hiercodelist = value
            var.hierarchical = True
        elif keyword == "<HIERLEADSTRING>":
            if not value:
                raise ConfigError(f'{where}: <HIERLEADSTRING> is empty; give e.g. "@"')
            var.hierleadstring = value
        elif keyword == "<IDLEVEL>":
            var.idlevel = _int(value, "<IDLEVEL>", where, hint)
            if not 0 <= var.idlevel <= 5:
                raise ConfigError(
                    f"{where}: <IDLEVEL> of {var.name!r} is {var.idlevel}; mu-Argus' levels are "
                    "0 (not identifying) to 5"
                )
        elif keyword == "<DECIMALS>":
            var.decimals = _int(value, "<DECIMALS>", where, hint)
        elif keyword == "<SUPPRESSWEIGHT>":
            var.suppressweight = _int(value, "<SUPPRESSWEIGHT>", where, hint)
        elif keyword == "<RELATED>":
            var.related = value
        return
    if keyword == "<NUMERIC>":
        if len(args) > 1 or (args and args[0].upper() not in _NUMERIC_KINDS):
            raise ConfigError(
                f"{where}: <NUMERIC> may be followed by one of "
                f"{', '.join(_NUMERIC_KINDS)} only, got {' '.join(args)!r}"
            )
        if args:
            var.kind = _NUMERIC_KINDS[args[0].upper()]
        elif var.kind == "categorical":
            var.numeric = True
        else:
            var.kind = "numeric"
        return
    if keyword == "<REQUEST>":
        if not 1 <= len(args) <= 2:
            raise ConfigError(f'{where}: <REQUEST> takes one or two codes, e.g. `<REQUEST> "1"`')
        var.kind = "request"
        var.request_codes = tuple(a.strip() for a in args)
        return
    if keyword in ("<DISTANCE>", "<HIERLEVELS>"):
        values = tuple(_int(a, keyword, where, f"write e.g. `{keyword} 1 2`") for a in args)
        if not values:
            raise ConfigError(f"{where}: {keyword} needs at least one number")
        if keyword == "<DISTANCE>":
            var.distance = values
        else:
            var.hierlevels = values
            var.hierarchical = True
        return
    if keyword in _TOP_LEVEL:
        raise ConfigError(
            f"{where}: {keyword} belongs at the top of the file, before the variables"
        )
    raise ConfigError(
        f"{where}: unknown keyword {keyword} (variable {var.name!r}); the Argus metadata "
        f"keywords are {', '.join(_KNOWN)}"
    )


def _verify(meta: ArgusMetadata, kind: str) -> None:
    """The checks of the whole file (duplicate names, overlaps, lengths)."""
    name = meta.path.name
    seen: dict[str, ArgusVariable] = {}
    for v in meta.variables:
        other = seen.get(v.name.lower())
        if other is not None:
            raise ConfigError(
                f"{name} line {v.line}: variable {v.name!r} is already declared on line "
                f"{other.line}; rename one"
            )
        seen[v.name.lower()] = v
        where = f"{name} line {v.line}"
        if v.length is not None:
            for m in v.missing:
                if len(m) > v.length:
                    raise ConfigError(
                        f"{where}: missing code {m!r} of {v.name!r} is longer than its length "
                        f"{v.length}"
                    )
            if v.hierlevels and sum(v.hierlevels) != v.length:
                raise ConfigError(
                    f"{where}: <HIERLEVELS> {' '.join(map(str, v.hierlevels))} of {v.name!r} "
                    f"add up to {sum(v.hierlevels)}, not its length {v.length}"
                )
    fixed = [v for v in meta.variables if v.start is not None]
    fixed.sort(key=lambda v: v.start or 0)
    for a, b in zip(fixed, fixed[1:], strict=False):
        assert a.start is not None and a.length is not None and b.start is not None
        if b.start < a.start + a.length:
            raise ConfigError(
                f"{name} line {b.line}: variable {b.name!r} (columns {b.start}-"
                f"{b.start + (b.length or 1) - 1}) overlaps {a.name!r} (columns {a.start}-"
                f"{a.start + a.length - 1}, line {a.line}); fix the start positions"
            )
    if kind == "micro" and meta.separator is None and not fixed:
        raise ConfigError(f"{name}: no variable has a start position")


# -- data ----------------------------------------------------------------------------------------
def read_argus_data(
    meta: ArgusMetadata, path: str | Path, encoding: str = "utf-8", *, blank_missing: bool = True
) -> pd.DataFrame:
    """The microdata file ``path`` laid out as ``meta`` says: fixed-width (``.asc``) or free
    format with ``meta.separator``. One text column per variable, blanks around the values
    removed; a value equal to one of the variable's missing codes becomes missing (``""``,
    as an empty CSV field) unless ``blank_missing`` is false.

    DataError naming the file and the line for a line shorter than the last fixed-width field
    or a free-format line with another number of fields than the metadata declares.
    """
    p = Path(path)
    text = _read_text(p, "data", encoding, DataError, "give its encoding (input.encoding)")
    names = [v.name for v in meta.variables]
    if meta.separator is None:
        frame = _read_fixed(text, meta, p)
    else:
        frame = _read_delimited(text, meta, p, names)
    if blank_missing:
        for v in meta.variables:
            if v.missing:
                frame[v.name] = frame[v.name].mask(frame[v.name].isin(v.missing), "")
    return frame.reset_index(drop=True)


def _read_fixed(text: str, meta: ArgusMetadata, p: Path) -> pd.DataFrame:
    """The fields of a fixed-width file, sliced and trimmed by Arrow's string kernels (a
    million lines of ten fields in about a second, the speed of the CSV reader)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lines = pa.array([line for line in text.splitlines() if line.strip()], type=pa.large_string())
    end = max((v.start or 1) + (v.length or 1) - 1 for v in meta.variables)
    lengths = pc.utf8_length(lines).to_numpy(zero_copy_only=False)
    short = np.flatnonzero(lengths < end)
    if short.size:
        i = int(short[0])
        raise DataError(
            f"{p.name} line {_line_number(text, i)}: the line has {int(lengths[i])} "
            f"characters, but {meta.path.name} puts variables up to column {end} "
            f"({short.size} short line(s) in all); check the start positions and lengths"
        )
    ascii_only = text.isascii()  # (then bytes are characters: the faster byte slicing)
    raw = lines.cast(pa.large_binary()) if ascii_only else lines
    columns = {}
    for v in meta.variables:
        first = (v.start or 1) - 1
        stop = first + (v.length or 1)
        if ascii_only:
            field_text = pc.binary_slice(raw, first, stop).cast(pa.large_string())
        else:
            field_text = pc.utf8_slice_codeunits(raw, first, stop)
        columns[v.name] = pc.utf8_trim_whitespace(field_text)
    return pa.table(columns).to_pandas()


def _line_number(text: str, index: int) -> int:
    """The 1-based line number of the ``index``-th non-blank line of ``text``."""
    seen = -1
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            seen += 1
            if seen == index:
                return number
    return index + 1


def _read_delimited(text: str, meta: ArgusMetadata, p: Path, names: list[str]) -> pd.DataFrame:
    """A free-format file's fields (``"..."`` quoting, blanks around a field removed): by the
    metadata's variable order, or by the first line's names with ``<NAMESINFRONT>``. Read
    by Arrow's CSV parser; a file it refuses (a line with another number of fields, a line
    of blanks) is read again by Python's, whose message names the line."""
    sep = meta.separator or ","
    header: list[str] | None = None
    if meta.names_in_front:
        for row in csv.reader(io.StringIO(text), delimiter=sep, quotechar='"'):
            if any(f.strip() for f in row):
                header = [f.strip() for f in row]
                break
        unknown = [n for n in names if n not in (header or [])]
        if unknown:
            raise DataError(
                f"{p.name}: the first line names {', '.join(header or [])}, not "
                f"{', '.join(unknown)}; <NAMESINFRONT> reads the variables by these names"
            )
    width = len(header) if header is not None else len(names)
    frame = _read_delimited_arrow(text, sep, width, header is not None)
    if frame is None:
        reader = csv.reader(io.StringIO(text), delimiter=sep, quotechar='"')
        rows: list[list[str]] = []
        past_header = header is None
        for row in reader:
            if not any(f.strip() for f in row):
                continue
            if not past_header:
                past_header = True
                continue
            if len(row) != width:
                raise DataError(
                    f"{p.name} line {reader.line_num}: {len(row)} field(s) separated by "
                    f"{sep!r}, but {meta.path.name} declares {width} variable(s) "
                    f"({', '.join(header or names)}); check the separator and the variables"
                )
            rows.append([f.strip() for f in row])
        frame = pd.DataFrame(rows, columns=[str(i) for i in range(width)], dtype=object)
    frame.columns = header if header is not None else names
    return frame[names].reset_index(drop=True)


def _read_delimited_arrow(
    text: str, sep: str, width: int, skip_header: bool
) -> pd.DataFrame | None:
    """The ``width`` fields of every line of a delimited text as trimmed text, by pyarrow's
    CSV parser (columns ``"0"``, ``"1"``, ...), or None when it refuses the text (a row of
    another width, a line of blanks) or the header is not on the first line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    if skip_header and not text.split("\n", 1)[0].strip():
        return None
    labels = [str(i) for i in range(width)]
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(text.encode("utf-8")),
            read_options=pa_csv.ReadOptions(column_names=labels, skip_rows=int(skip_header)),
            parse_options=pa_csv.ParseOptions(
                delimiter=sep, quote_char='"', double_quote=True, ignore_empty_lines=True
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.large_string() for name in labels},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    columns = [pc.utf8_trim_whitespace(c) for c in table.columns]
    return pa.table(columns, names=labels).to_pandas()


def read_tab(meta: ArgusMetadata, path: str | Path, encoding: str = "utf-8") -> pd.DataFrame:
    """A tau-Argus ``.tab`` cell file as sdckit's cells table: one column per spanning
    variable (``<RECODEABLE>``, codes as text), ``value`` (the ``<NUMERIC>`` response, else
    the frequency), ``freq`` (``<FREQUENCY>``), ``top1``, ``top2``, ... (``<MAXSCORE>``),
    ``status`` (``<STATUS>``), ``shadow``, ``cost`` (a job's ``cost: cost`` uses it),
    ``lower_protection``, ``upper_protection``, and any other variable by its name. Numbers
    with a decimal comma are read with a decimal point."""
    raw = read_argus_data(meta, path, encoding, blank_missing=False)
    out: dict[str, pd.Series] = {}
    response = [v for v in meta.variables if v.kind == "numeric"]
    tops = 0
    for v in meta.variables:
        col = raw[v.name]
        if v.categorical:
            out[v.name] = col
            continue
        values = _decimal_points(col)
        if v.kind == "frequency":
            out["freq"] = values
        elif v.kind == "top":
            tops += 1
            out[f"top{tops}"] = values
        elif v.kind == "status":
            out["status"] = col
        elif response and v is response[0]:
            out["value"] = values
        elif v.kind in ("shadow", "cost", "lower_protection", "upper_protection"):
            out[v.kind] = values
        else:
            out[v.name] = values
    if not meta.of_kind("categorical"):
        raise ConfigError(f"{meta.path.name}: no <RECODEABLE> variable; a table needs one")
    if "value" not in out:
        if "freq" not in out:
            raise ConfigError(
                f"{meta.path.name}: neither a <NUMERIC> response nor a <FREQUENCY> variable; "
                "a cell file needs one of them"
            )
        out["value"] = out["freq"]
    if "freq" not in out:
        out["freq"] = pd.Series("", index=raw.index, dtype=object)
    return pd.DataFrame(out)


def _decimal_points(values: pd.Series) -> pd.Series:
    """Numbers written with a decimal comma (``1234,50``) with a decimal point."""
    text = values.astype(str)
    comma = text.str.contains(",", regex=False) & ~text.str.contains(".", regex=False)
    return text.where(~comma, text.str.replace(",", ".", regex=False))


# -- codelists -----------------------------------------------------------------------------------
def read_cdl(path: str | Path, encoding: str = "utf-8") -> dict[str, str]:
    """A codelist file (``<CODELIST>``, ``.cdl``): one code a line with its label after a
    separator, ``;`` or ``,`` (whichever comes first on the line: mu-Argus and tau-Argus
    write ``1;Groningen``, tau-Argus' codelists are also written ``1,Groningen``; a label
    may be quoted, ``"Noord-Holland, West"``). Codes and labels are compared with the
    surrounding blanks removed. Returns code -> label.

    ConfigError naming the file and the line for a line without a separator or a label, a
    code given twice, or two codes with one label (the labels become the values: the two
    categories would silently merge)."""
    p = Path(path)
    text = _read_text(p, "codelist", encoding, ConfigError, "give its encoding (e.g. latin-1)")
    labels: dict[str, str] = {}
    code_line: dict[str, int] = {}
    label_line: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{p.name} line {number}"
        cuts = [i for i in (raw.find(";"), raw.find(",")) if i >= 0]
        if not cuts:
            raise ConfigError(
                f"{where}: {raw.strip()!r} has no separator; a codelist line is `code;label`"
            )
        sep = raw[min(cuts)]
        fields = next(csv.reader([raw], delimiter=sep, quotechar='"', skipinitialspace=True))
        code, label = fields[0].strip(), sep.join(fields[1:]).strip()
        if not code or not label:
            raise ConfigError(f"{where}: a codelist line is `code;label`, got {raw.strip()!r}")
        if code in code_line:
            raise ConfigError(
                f"{where}: code {code!r} is already on line {code_line[code]}; give each code once"
            )
        if label in label_line:
            other, line = label_line[label]
            raise ConfigError(
                f"{where}: codes {other!r} (line {line}) and {code!r} have the same label "
                f"{label!r}; the labels become the values, so the two categories would merge: "
                "give them distinct labels"
            )
        labels[code] = label
        code_line[code] = number
        label_line[label] = (code, number)
    return labels


def apply_codelists(frame: pd.DataFrame, codelists: dict[str, dict[str, str]]) -> pd.DataFrame:
    """``frame`` (text columns, as :func:`read_argus_data` reads them) with each column of
    ``codelists`` shown by its labels (a code without a label, or missing, kept), the codes
    and labels kept as the value labels of a :class:`~sdckit.core.formats.FileMeta` in
    ``attrs["file_meta"]`` -- the mechanism of SPSS's value labels
    (:func:`~sdckit.core.formats.apply_value_labels`), so that a release written as ``.sav``
    or ``.dta`` holds the original codes with their labels. A column whose codes are all
    whole numbers is labelled numeric there (``1 = Groningen``), else a string column."""
    from sdckit.core.formats import FileMeta, apply_value_labels

    out = frame.copy(deep=False)  # (the columns replaced, not modified: the input is kept)
    value_labels: dict[str, dict[Any, str]] = {}
    numeric: set[str] = set()
    for name, labels in codelists.items():
        out[name] = apply_value_labels(out[name], labels)
        whole = [code for code in labels if re.fullmatch(r"-?[0-9]+", code)]  # ASCII digits
        if len(whole) == len(labels) and len({int(c) for c in whole}) == len(whole):
            value_labels[name] = {int(code): label for code, label in labels.items()}
            numeric.add(name)
        else:
            value_labels[name] = dict(labels)
    out.attrs["file_meta"] = FileMeta(format="asc", value_labels=value_labels, numeric=numeric)
    return out


# -- hierarchies ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class HrcEntry:
    """One code of a ``.hrc`` file: its ``depth`` (1 = below the total), ``code``, ``line``."""

    depth: int
    code: str
    line: int


def read_hrc(path: str | Path, lead: str = "@", encoding: str = "utf-8") -> list[HrcEntry]:
    """The codes of a ``.hrc`` file in order, each with its depth (the number of lead strings
    before it, plus one). HierarchyError naming the file and the line for an indentation that
    skips a level, a line that is only lead strings, or a code given twice."""
    p = Path(path)
    if not lead:
        raise HierarchyError(f"{p.name}: the lead string is empty; give e.g. '@'")
    text = _read_text(p, "hierarchy", encoding, HierarchyError, "give its encoding (e.g. latin-1)")
    entries: list[HrcEntry] = []
    where_of: dict[str, int] = {}
    previous = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        depth = 1
        rest = line if lead.isspace() else line.lstrip(" \t")
        while rest.startswith(lead):
            rest = rest[len(lead) :]
            depth += 1
        code = rest.strip()
        where = f"{p.name} line {number}"
        if not code:
            raise HierarchyError(f"{where}: the line has lead strings {lead!r} but no code")
        if depth > previous + 1:
            raise HierarchyError(
                f"{where}: code {code!r} is {depth - 1} level(s) below the top, but the line "
                f"before is {max(previous - 1, 0)} below; a code is at most one level deeper "
                f"than the one before (one more {lead!r})"
            )
        if code in where_of:
            raise HierarchyError(
                f"{where}: code {code!r} is already on line {where_of[code]}; a code appears once"
            )
        where_of[code] = number
        entries.append(HrcEntry(depth, code, number))
        previous = depth
    if not entries:
        raise HierarchyError(f"hierarchy file {p.name} lists no code")
    return entries


def hrc_hierarchy(
    entries: list[HrcEntry], name: str = "", total: str = "*", source: str | Path | None = None
) -> Hierarchy:
    """The generalization hierarchy of a ``.hrc`` tree (:func:`read_hrc`) in ARX's form:
    one row per leaf (a code without children), level 0 the leaf, then its ancestors, the
    last level ``total`` (``*`` for microdata; a table's total code for a table). A leaf
    above the deepest level keeps its code in the levels below its depth (``B`` directly
    under the total in a tree of depth 2: ``B, B, *``), so every row has the same length; a
    table merges such a chain into one cell (:class:`sdckit.tables.dimension.Dimension`)."""
    deepest = max(e.depth for e in entries)
    rows: list[list[str]] = []
    path: list[str] = []
    for i, e in enumerate(entries):
        del path[e.depth - 1 :]
        path.append(e.code)
        is_leaf = i + 1 == len(entries) or entries[i + 1].depth <= e.depth
        if is_leaf:
            row = [e.code] * (deepest - e.depth + 1) + path[-2::-1] + [total]
            rows.append(row)
    return Hierarchy(rows, name=name, source=source)


# -- writing -------------------------------------------------------------------------------------
def write_tab(
    cells: pd.DataFrame,
    dimensions: list[str],
    path: Path,
    separator: str = ";",
) -> None:
    """Write a protected table as a tau-Argus cell file (``path``; its metadata:
    :func:`table_rda`): one line per cell, the spanning variables' codes
    quoted, then the cell value, the frequency and the status letter (:data:`TAB_STATUS`).

    The cell file holds every cell's value, suppressed or not, as tau-Argus' own table files
    do: it is the protected table for tau-Argus (or a re-audit), not a publication; publish
    the ``published`` column of the cells file or the Excel workbook. A plain write: callers
    write through :func:`sdckit.core.io.atomic_write`."""
    status = cells["status"].astype(str)
    unknown = sorted(set(status) - set(TAB_STATUS))
    if unknown:
        raise DataError(f"cannot write {path.name}: unknown cell status(es) {unknown}")
    lines = []
    values = pd.to_numeric(cells["value"], errors="coerce").to_numpy(dtype=float)
    freqs = pd.to_numeric(cells["freq"], errors="coerce").to_numpy(dtype=float)
    letters = status.map(TAB_STATUS).to_numpy()
    codes = [cells[d].astype(str).to_numpy() for d in dimensions]
    for i in range(len(cells)):
        fields = [f'"{c[i]}"' for c in codes]
        fields.append(_number(values[i]))
        fields.append(_number(freqs[i]))
        fields.append(str(letters[i]))
        lines.append(separator.join(fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def table_rda(
    dimensions: list[str],
    totals: dict[str, str],
    hrc_files: dict[str, str] | None = None,
    separator: str = ";",
) -> str:
    """The tau-Argus table metadata of a cell file :func:`write_tab` writes (status codes as
    :data:`TAB_STATUS` and tau-Argus' defaults declare them); ``hrc_files``: the ``.hrc`` of
    each hierarchical dimension (lead string ``@``)."""
    out = [f'<SEPARATOR> "{separator}"', '<SAFE> "S"', '<UNSAFE> "U"', '<PROTECT> "P"']
    for d in dimensions:
        out += [d, "  <RECODEABLE>", f'  <TOTCODE> "{totals.get(d, "Total")}"']
        hrc = (hrc_files or {}).get(d)
        if hrc is not None:
            out += ["  <HIERARCHICAL>", f'  <HIERCODELIST> "{hrc}"', '  <HIERLEADSTRING> "@"']
    out += ["value", "  <NUMERIC>", "freq", "  <FREQUENCY>", "status", "  <STATUS>"]
    return "\n".join(out) + "\n"


def tree_hrc(codes: list[str], parent: list[int], lead: str = "@") -> str | None:
    """The ``.hrc`` text of a tree of codes (node 0 the total, ``parent[i]`` the parent of
    node ``i``), each node after its parent, depth first; None for a flat tree (every code
    directly under the total), which needs no ``.hrc``."""
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parent):
        if i:
            children.setdefault(int(p), []).append(i)
    if all(not children.get(c) for c in children.get(0, [])):
        return None
    lines: list[str] = []
    stack = [(c, 0) for c in reversed(children.get(0, []))]
    while stack:
        node, depth = stack.pop()
        lines.append(lead * depth + str(codes[node]))
        stack.extend((c, depth + 1) for c in reversed(children.get(node, [])))
    return "\n".join(lines) + "\n"


def _number(x: float) -> str:
    """A cell value as tau-Argus reads it: an integer without decimals, else ``repr``."""
    if np.isnan(x):
        return "0"
    return str(int(x)) if float(x).is_integer() else repr(float(x))
