"""The server's SQL subset: what is accepted, what is refused (and why), the SQL executed;
the ledger's arithmetic."""

from __future__ import annotations

import pytest

pytest.importorskip("sqlglot")

from sdckit.server.ledger import UNITS, epsilon_units, query_key  # noqa: E402
from sdckit.server.modes import _select  # noqa: E402
from sdckit.server.sql import UnsupportedQuery, camouflage_condition, parse_query  # noqa: E402

COLUMNS = {"name": "text", "age": "numeric", "dept": "text", "salary": "numeric"}
KEYS = {"dept": None}


def parse(sql: str):
    return parse_query(sql, "people", COLUMNS, KEYS)


def test_accepts_the_subset():
    q = parse(
        "SELECT dept, COUNT(*), COUNT(age) AS n, SUM(salary), AVG(age), MEDIAN(age), "
        "QUANTILE(age, 0.9) FROM people WHERE (age BETWEEN 20 AND 60 AND NOT dept IN ('C')) "
        "OR name <> 'x' OR salary IS NULL OR 30 < age GROUP BY dept"
    )
    assert [a.func for a in q.aggregates] == [
        "count",
        "count",
        "sum",
        "avg",
        "quantile",
        "quantile",
    ]
    assert q.aggregates[1].label == "n" and q.aggregates[5].q == 0.9
    assert q.group_by == ("dept",)
    assert q.where_columns == {"age", "dept", "name", "salary"}
    q2 = parse("SELECT PERCENTILE_CONT(0.25) WITHIN GROUP (ORDER BY age) FROM PEOPLE")
    assert q2.aggregates[0].q == 0.25


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT * FROM people", "SELECT *"),
        ("SELECT name FROM people", "not in GROUP BY"),
        ("SELECT COUNT(*) FROM people p JOIN people q ON p.age = q.age", "JOIN"),
        ("SELECT COUNT(*) FROM (SELECT * FROM people)", "FROM must name"),
        ("SELECT COUNT(*) FROM people WHERE age IN (SELECT age FROM people)", "subquer"),
        ("SELECT COUNT(*) FROM other", "FROM names"),
        ("DROP TABLE people", "only SELECT"),
        ("DELETE FROM people", "only SELECT"),
        ("SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM people", "exactly one"),
        ("SELECT MAX(age) FROM people", "MAX is not supported"),
        ("SELECT COUNT(*) FROM people WHERE LENGTH(name) > 3", "one column with"),
        ("SELECT COUNT(*) FROM people WHERE name LIKE 'a%'", "not a supported condition"),
        ("SELECT COUNT(*) FROM people WHERE age > salary", "one column with"),
        ("SELECT COUNT(*) FROM people GROUP BY name", "only public keys"),
        ("SELECT COUNT(*) FROM people ORDER BY 1", "ORDER BY"),
        ("SELECT COUNT(*) FROM people LIMIT 1", "LIMIT"),
        ("SELECT COUNT(*) FROM people HAVING COUNT(*) > 1", "HAVING"),
        ("SELECT COUNT(DISTINCT name) FROM people", "DISTINCT"),
        ("SELECT SUM(name) FROM people", "numeric column"),
        ("SELECT COUNT(*) FROM people WHERE age = 'x'", "numeric"),
        ("SELECT COUNT(*) FROM people WHERE _sdc_id = 3", "unknown column"),
        ("SELECT dept FROM people GROUP BY dept", "at least one aggregate"),
        ("SELECT COUNT(*) FROM people WHERE", "cannot be parsed"),
        ("", "empty"),
    ],
)
def test_refusals_name_the_reason(sql, reason):
    with pytest.raises(UnsupportedQuery, match=reason):
        parse(sql)


def test_guard_sees_every_column_with_its_clause():
    seen: list[tuple[str, str]] = []
    parse_query(
        "SELECT dept, COUNT(*), COUNT(name), SUM(salary), AVG(age) FROM people "
        "WHERE age > 3 AND (dept IN ('A') OR NOT salary BETWEEN 1 AND 2) GROUP BY dept",
        "people",
        COLUMNS,
        KEYS,
        guard=lambda col, clause: seen.append((col, clause)),
    )
    assert seen == [
        ("dept", "GROUP BY"),
        ("name", "COUNT"),
        ("salary", "SUM"),
        ("age", "AVG"),
        ("age", "WHERE"),
        ("dept", "WHERE"),
        ("salary", "WHERE"),
    ]

    def refuse(col: str, clause: str) -> None:
        if col == "salary" and clause == "WHERE":
            raise UnsupportedQuery("salary selects no records")

    with pytest.raises(UnsupportedQuery, match="salary selects"):
        parse_query(
            "SELECT SUM(salary) FROM people WHERE salary > 1", "people", COLUMNS, guard=refuse
        )


def test_sql_is_generated_from_the_tree():
    import sqlglot

    hostile = "x'; DROP TABLE people; --"
    q = parse("SELECT COUNT(*) FROM people WHERE name = 'x''; DROP TABLE people; --'")
    sql = _select("people", (), [], q.where).sql(dialect="duckdb")
    assert "\"name\" = 'x''; DROP TABLE people; --'" in sql
    assert len(sqlglot.parse(sql, read="duckdb")) == 1  # the text stays inside a literal
    assert hostile not in sql
    # same query written differently -> same normalised text (cache identity)
    assert (
        parse("select count(*) from people where AGE>3").normalized
        == parse("SELECT COUNT(*) FROM people WHERE 3 < age").normalized
    )


def test_camouflage_condition_swaps_ends():
    q = parse("SELECT COUNT(*) FROM people WHERE age > 30 AND NOT age <= 50")

    def ends(col):
        from sqlglot import exp

        return exp.column("L"), exp.column("U")

    certain = camouflage_condition(q.where, frozenset({"age"}), ends, True).sql()
    possible = camouflage_condition(q.where, frozenset({"age"}), ends, False).sql()
    # every point: L > 30 and no point <= 50 (L > 50); some point: U > 30 and U > 50
    assert certain == "L > 30 AND NOT L <= 50"
    assert possible == "U > 30 AND NOT U <= 50"


def test_ledger_units_are_exact():
    units, exact = epsilon_units(0.1)
    assert units * 10 == UNITS and float(exact) == 0.1
    assert epsilon_units(1e-13)[0] == 1  # rounded up, never down
    assert query_key("d", "SELECT 1", 5) != query_key("d", "SELECT 1", 6)
