"""The privacy-budget ledger, kept in the served database itself.

Tables (created when absent; they survive restarts):

* ``_sdc_budget (analyst, dataset, budget_units, spent_units)`` -- one row per analyst and dp
  dataset. Amounts are integers in units of ``10**-12`` epsilon: exact arithmetic, no float
  drift (ten charges of 0.1 spend exactly 1.0). A charge is rounded *up* to a unit and the
  noise uses the charged value or less, so the ledger never under-counts;
* ``_sdc_answers (analyst, dataset, query_key, sql_text, epsilon_units, answer)`` -- every
  released dp answer. The same query (analyst, dataset, normalised SQL, epsilon) asked again
  gets this answer back, free: repeating a query cannot average its noise away (the cache of
  Gaboardi et al. 2016, "PSI: a private data sharing interface", and of Google's DP libraries);
* ``_sdc_log`` -- one row per answered or refused query: the utility and risk record of each
  analyst (noise variance, refusals, interval widths);
* ``_sdc_auditor (dataset, state)`` -- the restriction-mode auditor's state (JSON).

:meth:`Ledger.release` makes the charge and stores the answer in **one transaction**: the
conditional ``UPDATE ... SET spent = spent + e WHERE spent + e <= budget RETURNING`` either
finds the row (and the answer is stored and returned) or not (nothing changes: budget
exhausted). Under concurrency the row lock (PostgreSQL) or the writer lock (DuckDB) serialises
the charges, so the budget can never be overspent.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from sdckit.server.backends import Backend

__all__ = ["Ledger", "UNITS", "epsilon_units", "units_epsilon"]

#: Ledger units per 1 epsilon.
UNITS = 10**12

_TABLES = (
    "CREATE TABLE IF NOT EXISTS _sdc_budget (analyst TEXT NOT NULL, dataset TEXT NOT NULL, "
    "budget_units BIGINT NOT NULL, spent_units BIGINT NOT NULL, PRIMARY KEY (analyst, dataset))",
    "CREATE TABLE IF NOT EXISTS _sdc_answers (analyst TEXT NOT NULL, dataset TEXT NOT NULL, "
    "query_key TEXT NOT NULL, sql_text TEXT NOT NULL, epsilon_units BIGINT NOT NULL, "
    "answer TEXT NOT NULL, PRIMARY KEY (analyst, dataset, query_key))",
    "CREATE TABLE IF NOT EXISTS _sdc_log (analyst TEXT NOT NULL, dataset TEXT NOT NULL, "
    "mode TEXT NOT NULL, outcome TEXT NOT NULL, epsilon_units BIGINT NOT NULL, "
    "noise_variance DOUBLE PRECISION, interval_width DOUBLE PRECISION, cells BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS _sdc_auditor (dataset TEXT PRIMARY KEY, state TEXT NOT NULL)",
)


def epsilon_units(epsilon: float) -> tuple[int, Fraction]:
    """``epsilon`` as ledger units (rounded up) and the exact epsilon the noise may use.

    The number is read as the decimal it was written as (``0.1`` is one tenth, through its
    shortest ``repr``), so decimal budgets add up exactly.
    """
    exact = Fraction(Decimal(repr(float(epsilon))))
    units = math.ceil(exact * UNITS)
    return units, min(exact, Fraction(units, UNITS))


def units_epsilon(units: int) -> float:
    """Ledger units as epsilon."""
    return units / UNITS


def query_key(dataset: str, normalized_sql: str, units: int) -> str:
    """The identity of a dp query in the answer cache (SHA-256 of its parts)."""
    text = json.dumps([dataset, normalized_sql, units])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Ledger:
    """Budgets, released answers, the query log and auditor states in the database."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        with backend.transaction() as run:
            for statement in _TABLES:
                run(statement)

    def ensure_budgets(self, budgets: dict[tuple[str, str], float]) -> None:
        """Create the missing budget rows; set each row's budget to the configured one (the
        spent amount is kept: lowering a budget below it leaves the analyst nothing)."""
        with self.backend.transaction() as run:
            for (analyst, dataset), epsilon in budgets.items():
                units = math.floor(Fraction(Decimal(repr(float(epsilon)))) * UNITS)
                found = run(
                    "UPDATE _sdc_budget SET budget_units = ? WHERE analyst = ? AND dataset = ? "
                    "RETURNING spent_units",
                    [units, analyst, dataset],
                )
                if not found:
                    run(
                        "INSERT INTO _sdc_budget VALUES (?, ?, ?, 0)",
                        [analyst, dataset, units],
                    )

    def balance(self, analyst: str, dataset: str) -> tuple[int, int]:
        """``(budget_units, spent_units)`` of an analyst on a dataset."""
        rows = self.backend.execute(
            "SELECT budget_units, spent_units FROM _sdc_budget WHERE analyst = ? AND dataset = ?",
            [analyst, dataset],
        )
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def balances(self, analyst: str) -> dict[str, tuple[int, int]]:
        """Every dp dataset's ``(budget_units, spent_units)`` of an analyst."""
        rows = self.backend.execute(
            "SELECT dataset, budget_units, spent_units FROM _sdc_budget WHERE analyst = ? "
            "ORDER BY dataset",
            [analyst],
        )
        return {str(d): (int(b), int(s)) for d, b, s in rows}

    def cached(self, analyst: str, dataset: str, key: str) -> dict[str, Any] | None:
        """The stored answer of a query, or None."""
        rows = self.backend.execute(
            "SELECT answer FROM _sdc_answers WHERE analyst = ? AND dataset = ? AND query_key = ?",
            [analyst, dataset, key],
        )
        return json.loads(rows[0][0]) if rows else None

    def release(
        self,
        analyst: str,
        dataset: str,
        key: str,
        sql_text: str,
        units: int,
        answer: dict[str, Any],
        noise_variance: float | None,
        cells: int,
    ) -> tuple[str, dict[str, Any] | None]:
        """Charge ``units`` and store ``answer``, in one transaction.

        Returns ``("released", None)``, ``("cached", stored answer)`` when the same query was
        released meanwhile (nothing charged), or ``("exhausted", None)`` (nothing changed).
        """
        with self.backend.transaction() as run:
            stored = run(
                "SELECT answer FROM _sdc_answers WHERE analyst = ? AND dataset = ? "
                "AND query_key = ?",
                [analyst, dataset, key],
            )
            if stored:
                return "cached", json.loads(stored[0][0])
            inserted = run(
                "INSERT INTO _sdc_answers VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING "
                "RETURNING query_key",
                [analyst, dataset, key, sql_text, units, json.dumps(answer)],
            )
            if not inserted:
                raise _Race()
            charged = run(
                "UPDATE _sdc_budget SET spent_units = spent_units + ? WHERE analyst = ? AND "
                "dataset = ? AND spent_units + ? <= budget_units RETURNING spent_units",
                [units, analyst, dataset, units],
            )
            if not charged:
                raise _Exhausted()
            run(
                "INSERT INTO _sdc_log VALUES (?, ?, 'dp', 'answered', ?, ?, NULL, ?)",
                [analyst, dataset, units, noise_variance, cells],
            )
        return "released", None

    def release_or_refuse(self, *args: Any, **kwargs: Any) -> tuple[str, dict[str, Any] | None]:
        """:meth:`release`, with a lost race or an exhausted budget as an outcome."""
        try:
            return self.release(*args, **kwargs)
        except _Race:
            stored = self.cached(args[0], args[1], args[2])
            return ("cached", stored) if stored is not None else ("exhausted", None)
        except _Exhausted:
            return "exhausted", None

    def log(
        self,
        analyst: str,
        dataset: str,
        mode: str,
        outcome: str,
        *,
        units: int = 0,
        noise_variance: float | None = None,
        interval_width: float | None = None,
        cells: int = 0,
        auditor_state: dict[str, Any] | None = None,
    ) -> None:
        """Record a query's outcome (and the auditor's new state, in the same transaction)."""
        with self.backend.transaction() as run:
            if auditor_state is not None:
                text = json.dumps(auditor_state)
                found = run(
                    "UPDATE _sdc_auditor SET state = ? WHERE dataset = ? RETURNING dataset",
                    [text, dataset],
                )
                if not found:
                    run("INSERT INTO _sdc_auditor VALUES (?, ?)", [dataset, text])
            run(
                "INSERT INTO _sdc_log VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [analyst, dataset, mode, outcome, units, noise_variance, interval_width, cells],
            )

    def auditor_state(self, dataset: str) -> dict[str, Any] | None:
        """The stored auditor state of a restriction dataset, or None."""
        rows = self.backend.execute("SELECT state FROM _sdc_auditor WHERE dataset = ?", [dataset])
        return json.loads(rows[0][0]) if rows else None

    def usage(self, analyst: str) -> dict[str, dict[str, Any]]:
        """Per dataset: answered and refused counts (by code), epsilon spent, the noise
        variance of the dp answers and the interval widths of the camouflage answers."""
        rows = self.backend.execute(
            "SELECT dataset, mode, outcome, count(*), sum(epsilon_units), "
            "sum(noise_variance), count(noise_variance), avg(interval_width), "
            "max(interval_width), sum(cells) FROM _sdc_log WHERE analyst = ? "
            "GROUP BY dataset, mode, outcome ORDER BY dataset, outcome",
            [analyst],
        )
        usage: dict[str, dict[str, Any]] = {}
        for dataset, mode, outcome, n, units, var, nvar, width, wmax, cells in rows:
            entry = usage.setdefault(
                str(dataset), {"mode": str(mode), "answered": 0, "refused": {}}
            )
            if outcome == "answered":
                entry["answered"] = int(n)
                entry["cells"] = int(cells or 0)
                if mode == "dp":
                    entry["epsilon_spent"] = units_epsilon(int(units or 0))
                    entry["noise_variance_total"] = float(var) if var is not None else 0.0
                    entry["answers_with_additive_noise"] = int(nvar)
                if mode == "camouflage" and width is not None:
                    entry["interval_width_mean"] = float(width)
                    entry["interval_width_max"] = float(wmax)
            else:
                entry["refused"][str(outcome)] = int(n)
        return usage


class _Race(Exception):
    """The same query's answer was stored by a concurrent request."""


class _Exhausted(Exception):
    """The conditional charge found no budget left."""
