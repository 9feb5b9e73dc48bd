"""The SQL subset the server answers, parsed with sqlglot, and the SQL it executes.

Accepted (one statement)::

    SELECT [key, ...] agg [AS name], ...
    FROM <the dataset's table>
    [WHERE predicate]
    [GROUP BY key, ...]

* ``agg``: ``COUNT(*)``, ``COUNT(col)``, ``SUM(col)``, ``AVG(col)``, ``MEDIAN(col)``,
  ``QUANTILE(col, q)`` or ``PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY col)`` (the last three in
  dp mode only);
* ``key``: a public key of the dataset (GROUP BY keys only; a selected key must be grouped);
* ``predicate``: comparisons (``= <> < <= > >=``) of a column with a literal, ``IN`` (literal
  lists), ``BETWEEN`` literals, ``IS [NOT] NULL``, combined with ``AND``, ``OR``, ``NOT``;
* in restriction and camouflage modes, every column is also checked against its role
  (:mod:`sdckit.server.roles`, through the ``guard`` of :func:`parse_query`).

Everything else -- joins, subqueries, ``SELECT *``, ``DISTINCT``, ``HAVING``, ``ORDER BY``,
``LIMIT``, other functions, DDL or DML, several statements -- raises
:class:`UnsupportedQuery` with the reason. The executed SQL is generated from the checked tree
(sqlglot's generator, every identifier quoted, every literal re-created from its parsed value):
no text of the user's query is pasted into it (the standard defence against SQL injection,
OWASP "Query Parameterization Cheat Sheet").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from sdckit.errors import SdcInputError, short_repr

try:  # the server extra; the error tells how to install it
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError
except ImportError as _missing:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "sdckit's query server needs its extra packages: pip install -e '.[server]'"
    ) from _missing

__all__ = [
    "Aggregate",
    "ParsedQuery",
    "UnsupportedQuery",
    "parse_query",
    "column",
    "literal",
    "clamp",
    "camouflage_condition",
]

#: The longest SQL text accepted.
MAX_SQL_CHARS = 20_000

_CLAUSES = {
    "joins": "JOIN",
    "with": "WITH (common table expressions)",
    "with_": "WITH (common table expressions)",
    "having": "HAVING",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "distinct": "SELECT DISTINCT",
    "windows": "WINDOW",
    "qualify": "QUALIFY",
    "laterals": "LATERAL",
    "into": "SELECT INTO",
    "locks": "FOR UPDATE",
    "sample": "TABLESAMPLE",
    "settings": "SETTINGS",
    "kind": "SELECT modifiers",
    "hint": "hints",
    "pivots": "PIVOT",
    "prewhere": "PREWHERE",
    "connect": "CONNECT BY",
    "match": "MATCH_RECOGNIZE",
    "cluster": "CLUSTER BY",
    "distribute": "DISTRIBUTE BY",
    "sort": "SORT BY",
    "options": "OPTION",
}
_ALLOWED_ARGS = {"expressions", "from", "from_", "where", "group"}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_FLIPPED: dict[type, type] = {
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
}


class UnsupportedQuery(SdcInputError):
    """The query is outside the subset the server answers (HTTP 403 ``unsupported_query``)."""

    code = "unsupported_query"


@dataclass(frozen=True)
class Aggregate:
    """One aggregate of the SELECT list: ``func`` in count/sum/avg/quantile, its column (None
    for ``COUNT(*)``), the quantile ``q`` (0.5 for MEDIAN) and the label of its output column."""

    func: str
    column: str | None
    q: float | None
    label: str


@dataclass(frozen=True)
class ParsedQuery:
    """A checked query: aggregates, GROUP BY keys, the WHERE tree (columns canonical and
    quoted, literals re-created), the columns it reads, and its normalised SQL text (the
    identity of the query in the ledger's answer cache)."""

    aggregates: tuple[Aggregate, ...]
    group_by: tuple[str, ...]
    where: exp.Expression | None
    where_columns: frozenset[str]
    normalized: str


def column(name: str) -> exp.Column:
    """A quoted column reference (never the user's spelling)."""
    return exp.Column(this=exp.Identifier(this=name, quoted=True))


def literal(value: float | int | str | Fraction) -> exp.Expression:
    """A SQL literal re-created from a Python value (numbers exactly as ``repr`` writes them)."""
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, Fraction):
        value = float(value)
    if isinstance(value, float):
        text = repr(value)
        return (
            exp.Neg(this=exp.Literal.number(text[1:]))
            if text.startswith("-")
            else (exp.Literal.number(text))
        )
    text = str(int(value))
    return (
        exp.Neg(this=exp.Literal.number(text[1:]))
        if text.startswith("-")
        else (exp.Literal.number(text))
    )


def clamp(expr: exp.Expression, lo: float, hi: float) -> exp.Expression:
    """``LEAST(GREATEST(CAST(expr AS DOUBLE), lo), hi)``: the value clamped to ``[lo, hi]``."""
    value = exp.Cast(this=expr, to=exp.DataType.build("double"))
    return exp.Least(
        this=exp.Greatest(this=value, expressions=[literal(lo)]), expressions=[literal(hi)]
    )


def _refuse(reason: str) -> UnsupportedQuery:
    return UnsupportedQuery(reason)


def _resolve_column(node: exp.Expression, table: str, columns: Mapping[str, str]) -> str:
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        raise _refuse(f"expected a column, got {short_repr(node.sql(), 80)}")
    qualifier = node.table
    if qualifier and qualifier.lower() != table.lower():
        raise _refuse(f"column {node.sql()!r} names another table; only {table!r} is queried")
    if node.args.get("db") or node.args.get("catalog"):
        raise _refuse(f"column {node.sql()!r}: qualified names are not supported")
    name = node.name
    if name in columns:
        return name
    folded = {c.lower(): c for c in columns}
    if not node.this.args.get("quoted") and name.lower() in folded:
        return folded[name.lower()]
    raise _refuse(
        f"unknown column {name!r} of {table!r}; the columns are listed by GET /v1/datasets"
    )


def _literal_value(node: exp.Expression) -> float | int | str | None:
    """The Python value of a literal (``-`` numbers included); None for NULL."""
    if isinstance(node, exp.Null):
        return None
    negative = False
    if isinstance(node, exp.Neg):
        negative, node = True, node.this
    if isinstance(node, exp.Paren):
        return _literal_value(node.this) if not negative else _negate(_literal_value(node.this))
    if isinstance(node, exp.Literal):
        if node.is_string:
            if negative:
                raise _refuse("a minus sign before a text literal")
            return str(node.this)
        text = str(node.this)
        try:
            number: float | int = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise _refuse(f"cannot read the number {short_repr(text, 40)}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _refuse("numbers must be finite")
        return -number if negative else number
    raise _refuse(
        f"expected a literal (a number or 'text'), got {short_repr(node.sql(), 80)}; "
        "comparisons are between a column and a literal"
    )


def _negate(value: float | int | str | None) -> float | int:
    if not isinstance(value, (int, float)):
        raise _refuse("a minus sign before a non-number")
    return -value


def _check_literal(value: float | int | str | None, col: str, kinds: Mapping[str, str]) -> None:
    if value is None:
        raise _refuse(f"compare {col!r} with NULL using IS NULL / IS NOT NULL")
    kind = kinds[col]
    if kind == "numeric" and isinstance(value, str):
        raise _refuse(f"column {col!r} is numeric; compare it with a number, not text")
    if kind == "text" and not isinstance(value, str):
        raise _refuse(f"column {col!r} is text; compare it with a quoted 'text' literal")


#: ``guard(column, clause)`` raises when ``column`` may not be used in ``clause`` (``WHERE``,
#: ``GROUP BY``, ``COUNT``, ``SUM``, ``AVG``, ``QUANTILE``): the column roles of
#: :class:`sdckit.server.roles.ColumnRoles`.
Guard = Callable[[str, str], None]


class _WhereBuilder:
    """Checks a WHERE tree and rebuilds it from the parsed values."""

    def __init__(self, table: str, columns: Mapping[str, str], guard: Guard | None) -> None:
        self.table, self.columns, self.guard = table, columns, guard
        self.used: set[str] = set()

    def col(self, node: exp.Expression) -> str:
        name = _resolve_column(node, self.table, self.columns)
        if self.guard is not None:
            self.guard(name, "WHERE")
        self.used.add(name)
        return name

    def lit(self, node: exp.Expression, col: str) -> exp.Expression:
        value = _literal_value(node)
        _check_literal(value, col, self.columns)
        assert value is not None
        return literal(value)

    def build(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Paren):
            return exp.Paren(this=self.build(node.this))
        if isinstance(node, (exp.And, exp.Or)):
            return type(node)(this=self.build(node.this), expression=self.build(node.expression))
        if isinstance(node, exp.Not):
            return exp.Not(this=self.build(node.this))
        if isinstance(node, _COMPARISONS):
            left, right = node.this, node.expression
            kind: type = type(node)
            if not isinstance(left, exp.Column):
                left, right, kind = right, left, _FLIPPED[kind]
            if not isinstance(left, exp.Column) or isinstance(right, exp.Column):
                raise _refuse(
                    f"the comparison {short_repr(node.sql(), 80)} must compare one column with "
                    "a literal"
                )
            name = self.col(left)
            return kind(this=column(name), expression=self.lit(right, name))
        if isinstance(node, exp.Between):
            name = self.col(node.this)
            return exp.Between(
                this=column(name),
                low=self.lit(node.args["low"], name),
                high=self.lit(node.args["high"], name),
            )
        if isinstance(node, exp.In):
            if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
                raise _refuse("IN takes a list of literals, not a subquery")
            name = self.col(node.this)
            values = node.expressions
            if not values:
                raise _refuse("IN needs at least one value")
            return exp.In(this=column(name), expressions=[self.lit(v, name) for v in values])
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise _refuse("IS is supported with NULL only (IS NULL, IS NOT NULL)")
            return exp.Is(this=column(self.col(node.this)), expression=exp.Null())
        if isinstance(node, (exp.Subquery, exp.Select, exp.Exists)):
            raise _refuse("subqueries are not supported")
        raise _refuse(
            f"{short_repr(node.sql(), 80)} is not a supported condition: use comparisons of a "
            "column with literals, IN, BETWEEN, IS NULL, AND, OR, NOT"
        )


def _aggregate(
    node: exp.Expression, table: str, columns: Mapping[str, str]
) -> tuple[str, str | None, float | None]:
    if isinstance(node, exp.Count):
        target = node.this
        if isinstance(target, exp.Star):
            return "count", None, None
        if isinstance(target, exp.Distinct):
            raise _refuse("COUNT(DISTINCT ...) is not supported")
        return "count", _resolve_column(target, table, columns), None
    if isinstance(node, (exp.Sum, exp.Avg, exp.Median)):
        if isinstance(node.this, exp.Distinct):
            raise _refuse(f"{type(node).__name__.upper()}(DISTINCT ...) is not supported")
        name = _resolve_column(node.this, table, columns)
        func = {exp.Sum: "sum", exp.Avg: "avg", exp.Median: "quantile"}[type(node)]
        return func, name, 0.5 if func == "quantile" else None
    if isinstance(node, exp.Quantile):
        name = _resolve_column(node.this, table, columns)
        return "quantile", name, _quantile(node.args.get("quantile"))
    if isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont):
        order = node.expression
        if not isinstance(order, exp.Order) or len(order.expressions) != 1:
            raise _refuse("PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY column) takes one column")
        ordered = order.expressions[0]
        target = ordered.this if isinstance(ordered, exp.Ordered) else ordered
        if isinstance(ordered, exp.Ordered) and ordered.args.get("desc"):
            raise _refuse("PERCENTILE_CONT ... ORDER BY column DESC is not supported; use 1 - q")
        return "quantile", _resolve_column(target, table, columns), _quantile(node.this.this)
    name = type(node).__name__.upper()
    if isinstance(node, exp.Func):
        raise _refuse(
            f"the function {name} is not supported; use COUNT, SUM, AVG, MEDIAN, QUANTILE"
        )
    raise _refuse(
        f"{short_repr(node.sql(), 80)} cannot be selected: select aggregates (COUNT, SUM, AVG, "
        "MEDIAN, QUANTILE) and GROUP BY keys"
    )


def _quantile(node: exp.Expression | None) -> float:
    value = _literal_value(node) if node is not None else None
    if not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise _refuse("the quantile q must be a number between 0 and 1")
    return float(value)


def parse_query(
    sql: str,
    table: str,
    columns: Mapping[str, str],
    public_keys: Mapping[str, object] | None = None,
    guard: Guard | None = None,
) -> ParsedQuery:
    """Parse and check ``sql`` against the subset (module docstring).

    ``columns``: the table's columns and their kind (``numeric``, ``text`` or ``other``; the
    server's id column is not among them); ``public_keys``: the columns GROUP BY may use;
    ``guard``: called with every column of GROUP BY, of an aggregate and of WHERE and the
    clause (:data:`Guard`), before anything is executed. Raises :class:`UnsupportedQuery`
    with the reason.
    """
    if not isinstance(sql, str) or not sql.strip():
        raise _refuse("the query is empty; send a SELECT statement")
    if len(sql) > MAX_SQL_CHARS:
        raise _refuse(f"the query is longer than {MAX_SQL_CHARS:,} characters")
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except SqlglotError as exc:
        raise _refuse(f"the SQL cannot be parsed: {short_repr(str(exc), 200)[1:-1]}") from None
    except RecursionError:
        raise _refuse("the SQL is nested too deeply") from None
    if len(statements) != 1:
        raise _refuse(f"send exactly one SELECT statement (got {len(statements)})")
    tree = statements[0]
    if not isinstance(tree, exp.Select):
        raise _refuse(
            f"only SELECT queries are answered (got {type(tree).__name__.upper()}); data "
            "definition and modification statements are refused"
        )
    for arg, value in tree.args.items():
        if value and arg not in _ALLOWED_ARGS:
            raise _refuse(f"{_CLAUSES.get(arg, arg.upper())} is not supported")
    source = tree.args.get("from_") or tree.args.get("from")
    target = source.this if source is not None else None
    if (
        not isinstance(target, exp.Table)
        or not isinstance(target.this, exp.Identifier)
        or target.args.get("db")
        or target.args.get("catalog")
        or target.args.get("alias")
        or target.args.get("joins")
    ):
        raise _refuse(f"FROM must name the dataset's table {table!r} (no alias, join or subquery)")
    if target.name.lower() != table.lower():
        raise _refuse(f"FROM names {target.name!r}; this dataset's table is {table!r}")
    keys = public_keys or {}
    group: list[str] = []
    grouped = tree.args.get("group")
    if grouped is not None:
        if (
            grouped.args.get("rollup")
            or grouped.args.get("cube")
            or grouped.args.get("grouping_sets")
        ):
            raise _refuse("ROLLUP, CUBE and GROUPING SETS are not supported")
        for node in grouped.expressions:
            name = _resolve_column(node, table, columns)
            if guard is not None:
                guard(name, "GROUP BY")
            if name not in keys:
                raise _refuse(
                    f"GROUP BY {name!r}: only public keys may be grouped by "
                    f"({', '.join(map(repr, keys)) or 'none declared'})"
                )
            if name not in group:
                group.append(name)
    aggregates: list[Aggregate] = []
    labels: set[str] = set()
    for item in tree.expressions:
        alias = None
        node = item
        if isinstance(item, exp.Alias):
            alias, node = item.alias, item.this
        if isinstance(node, exp.Star):
            raise _refuse("SELECT * is not supported; select aggregates such as COUNT(*)")
        if isinstance(node, exp.Column):
            name = _resolve_column(node, table, columns)
            if name not in group:
                raise _refuse(f"the column {name!r} is selected but not in GROUP BY")
            continue
        func, col, q = _aggregate(node, table, columns)
        if col is not None and guard is not None:
            guard(col, func.upper())
        if col is not None and func != "count" and columns[col] != "numeric":
            raise _refuse(f"{func.upper()}({col}) needs a numeric column; {col!r} is not")
        default = {
            "count": f"COUNT({col or '*'})",
            "sum": f"SUM({col})",
            "avg": f"AVG({col})",
            "quantile": f"MEDIAN({col})" if q == 0.5 else f"QUANTILE({col}, {q!r})",
        }[func]
        label = alias or default
        if label in labels or label in group:
            raise _refuse(f"two output columns are named {label!r}; give them distinct aliases")
        labels.add(label)
        aggregates.append(Aggregate(func, col, q, label))
    if not aggregates:
        raise _refuse("select at least one aggregate (COUNT, SUM, AVG, MEDIAN, QUANTILE)")
    where = None
    used: frozenset[str] = frozenset()
    condition = tree.args.get("where")
    if condition is not None:
        builder = _WhereBuilder(table, columns, guard)
        where = builder.build(condition.this)
        used = frozenset(builder.used)
    normalized = _normalized(aggregates, group, where, table)
    return ParsedQuery(tuple(aggregates), tuple(group), where, used, normalized)


def _normalized(
    aggregates: list[Aggregate], group: list[str], where: exp.Expression | None, table: str
) -> str:
    parts = [
        f"{a.func}({a.column or '*'}{'' if a.q is None else f', {a.q!r}'}) AS {a.label!r}"
        for a in aggregates
    ]
    text = f"SELECT {', '.join(parts)} FROM {table}"
    if where is not None:
        text += f" WHERE {where.sql(dialect='duckdb')}"
    if group:
        text += f" GROUP BY {', '.join(map(repr, group))}"
    return text


Bounds = Callable[[str], tuple[exp.Expression, exp.Expression]]


def camouflage_condition(
    node: exp.Expression, camouflaged: frozenset[str], ends: Bounds, certain: bool
) -> exp.Expression:
    """The condition for "``node`` holds for every point" (``certain``) or "for some point"
    (not ``certain``) of the camouflage intervals of the ``camouflaged`` columns.

    ``ends(col)`` gives the SQL of the interval's lower and upper ends. A comparison on a
    camouflaged column becomes a comparison of an end (``x > c`` holds for every point of
    ``[L, U]`` iff ``L > c``, for some point iff ``U > c``); ``NOT`` swaps the two readings
    (``every point satisfies NOT p`` iff ``no point satisfies p``); ``AND``/``OR`` combine them.
    For one comparison (or BETWEEN) the result is exact; for combinations it is a bound: the
    "every" condition implies the truth for every point, which implies the "some" condition,
    so the counts always bracket the true count (Gopal, Garfinkel & Goes 2002, sec. 3).
    """
    if isinstance(node, exp.Paren):
        return exp.Paren(this=camouflage_condition(node.this, camouflaged, ends, certain))
    if isinstance(node, (exp.And, exp.Or)):
        return type(node)(
            this=camouflage_condition(node.this, camouflaged, ends, certain),
            expression=camouflage_condition(node.expression, camouflaged, ends, certain),
        )
    if isinstance(node, exp.Not):
        return exp.Not(this=camouflage_condition(node.this, camouflaged, ends, not certain))
    target = node.this if isinstance(node, (*_COMPARISONS, exp.Between, exp.In)) else None
    if not isinstance(target, exp.Column) or target.name not in camouflaged:
        return node.copy()
    lo, hi = ends(target.name)

    def both(a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return exp.Paren(this=exp.And(this=a, expression=b))

    if isinstance(node, exp.In):
        equalities = [exp.EQ(this=target.copy(), expression=v.copy()) for v in node.expressions]
        combined: exp.Expression = equalities[0]
        for eq in equalities[1:]:
            combined = exp.Or(this=combined, expression=eq)
        return camouflage_condition(exp.Paren(this=combined), camouflaged, ends, certain)
    if isinstance(node, exp.Between):
        a, b = node.args["low"], node.args["high"]
        if certain:
            return both(
                exp.GTE(this=lo.copy(), expression=a.copy()),
                exp.LTE(this=hi.copy(), expression=b.copy()),
            )
        return both(
            exp.GTE(this=hi.copy(), expression=a.copy()),
            exp.LTE(this=lo.copy(), expression=b.copy()),
        )
    c = node.expression
    kind = type(node)
    if kind is exp.EQ:
        if certain:
            return both(
                exp.EQ(this=lo.copy(), expression=c.copy()),
                exp.EQ(this=hi.copy(), expression=c.copy()),
            )
        return both(
            exp.LTE(this=lo.copy(), expression=c.copy()),
            exp.GTE(this=hi.copy(), expression=c.copy()),
        )
    if kind is exp.NEQ:
        if certain:  # no point equals c
            return exp.Paren(
                this=exp.Or(
                    this=exp.LT(this=hi.copy(), expression=c.copy()),
                    expression=exp.GT(this=lo.copy(), expression=c.copy()),
                )
            )
        return exp.Not(
            this=both(
                exp.EQ(this=lo.copy(), expression=c.copy()),
                exp.EQ(this=hi.copy(), expression=c.copy()),
            )
        )
    upward = kind in (exp.GT, exp.GTE)  # x > c: every point iff lo > c; some point iff hi > c
    end = (lo if certain else hi) if upward else (hi if certain else lo)
    return kind(this=end.copy(), expression=c.copy())
