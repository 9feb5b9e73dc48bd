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
* ``_sdc_audit (dataset, n_records, version)`` and ``_sdc_audit_sets (dataset, version,
  query_sets)`` -- the restriction-mode audit trail of each dataset: every answered batch of
  query sets, numbered ``1 .. version`` (one compressed bitmap of the records per query set);
* ``_sdc_auditor (dataset, state)`` -- the auditor snapshot (:meth:`QuerySetAuditor.state`)
  earlier versions stored; read once, when a dataset's audit trail is created, and never
  written.

:meth:`Ledger.release` makes the charge and stores the answer in **one transaction**: the
conditional ``UPDATE ... SET spent = spent + e WHERE spent + e <= budget RETURNING`` either
finds the row (and the answer is stored and returned) or not (nothing changes: budget
exhausted). Under concurrency the row lock (PostgreSQL) or the writer lock (DuckDB) serialises
the charges, so the budget can never be overspent.

:meth:`Ledger.audit_release` does the same for restriction mode: one transaction locks the
dataset's ``_sdc_audit`` row (``SELECT ... FOR UPDATE``, :attr:`Backend.row_lock`), brings this
process's :class:`AuditCopy` up to the row's version by replaying the batches it has not seen
(any number of server processes may answer from one database), checks the new batch, and on
success computes the answer, appends the batch and the log row and bumps the version; only
after the commit is the answer returned. Every server process thus audits against every
answer any of them gave (Chin & Özsoyoğlu 1982's audit needs the complete answered history).
Replaying a batch is what recording it did, so every process's auditor holds the same
floating-point state and makes the same decisions.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from sdckit.errors import ConfigError
from sdckit.server.backends import Backend
from sdckit.server.restriction import Decision, QuerySetAuditor

__all__ = ["AuditCopy", "Ledger", "UNITS", "epsilon_units", "units_epsilon"]

T = TypeVar("T")

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
    "CREATE TABLE IF NOT EXISTS _sdc_audit (dataset TEXT PRIMARY KEY, "
    "n_records BIGINT NOT NULL, version BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS _sdc_audit_sets (dataset TEXT NOT NULL, version BIGINT NOT NULL, "
    "query_sets TEXT NOT NULL, PRIMARY KEY (dataset, version))",
)
_LOG_ROW = "INSERT INTO _sdc_log VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


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
    ) -> None:
        """Record a query's outcome."""
        with self.backend.transaction() as run:
            run(
                _LOG_ROW,
                [analyst, dataset, mode, outcome, units, noise_variance, interval_width, cells],
            )

    # -- restriction mode: the audit trail ----------------------------------------------------
    def open_audit(self, dataset: str, n_records: int, min_query_set: int) -> AuditCopy:
        """This process's copy of ``dataset``'s audit, up to date with the database.

        Creates the dataset's ``_sdc_audit`` row when absent (taking over the audit trail of a
        snapshot an earlier version stored in ``_sdc_auditor``); refuses a table whose record
        count differs from the one the trail was recorded on (record ids would not match).
        """
        copy = AuditCopy(dataset, n_records, min_query_set)
        with copy.lock, self.backend.transaction() as run:
            created = run(
                "INSERT INTO _sdc_audit VALUES (?, ?, 0) ON CONFLICT DO NOTHING RETURNING dataset",
                [dataset, n_records],
            )
            if created:
                self._adopt_snapshot(run, dataset, n_records)
            self._synced(run, copy)
        return copy

    def _adopt_snapshot(self, run: Callable[..., list[tuple]], dataset: str, n: int) -> None:
        """Append the batches of an earlier version's auditor snapshot to the new trail."""
        rows = run("SELECT state FROM _sdc_auditor WHERE dataset = ?", [dataset])
        if not rows:
            return
        try:
            state = json.loads(rows[0][0])
        except ValueError:
            raise ConfigError(
                f"the stored auditor state of dataset {dataset!r} (table _sdc_auditor) is not "
                "JSON; restore the database from a backup"
            ) from None
        if isinstance(state, dict) and state.get("n_records") != n:
            raise ConfigError(_count_changed(dataset, state.get("n_records"), n))
        batches = QuerySetAuditor.recorded_batches(state)
        for version, sets in enumerate(batches, start=1):
            run("INSERT INTO _sdc_audit_sets VALUES (?, ?, ?)", [dataset, version, _pack(sets, n)])
        run("UPDATE _sdc_audit SET version = ? WHERE dataset = ?", [len(batches), dataset])

    def _synced(self, run: Callable[..., list[tuple]], copy: AuditCopy) -> QuerySetAuditor:
        """Lock the dataset's audit row and bring ``copy`` up to its version (inside a
        transaction, ``copy.lock`` held)."""
        rows = run(
            f"SELECT n_records, version FROM _sdc_audit WHERE dataset = ?{self.backend.row_lock}",
            [copy.dataset],
        )
        if not rows:
            raise ConfigError(f"the audit trail of dataset {copy.dataset!r} is missing")
        n_records, version = int(rows[0][0]), int(rows[0][1])
        if n_records != copy.n_records:
            raise ConfigError(_count_changed(copy.dataset, n_records, copy.n_records))
        if copy.auditor is None or copy.version > version:
            copy.auditor = QuerySetAuditor(copy.n_records, copy.min_query_set, audit=True)
            copy.version = 0
        if copy.version < version:
            for seen, text in run(
                "SELECT version, query_sets FROM _sdc_audit_sets WHERE dataset = ? "
                "AND version > ? ORDER BY version",
                [copy.dataset, copy.version],
            ):
                if int(seen) != copy.version + 1:
                    raise ConfigError(f"the audit trail of dataset {copy.dataset!r} has a gap")
                copy.auditor.record(_unpack(str(text), copy.n_records, copy.dataset))
                copy.version += 1
            if copy.version != version:
                raise ConfigError(f"the audit trail of dataset {copy.dataset!r} is incomplete")
        return copy.auditor

    def audit_release(
        self,
        analyst: str,
        copy: AuditCopy,
        query_sets: Sequence[np.ndarray],
        answer: Callable[[], tuple[T, int]],
    ) -> tuple[Decision, T | None]:
        """Audit a batch of query sets against every answer given on the dataset (by any
        server process) and, when allowed, compute ``answer() -> (result, cells)``, record
        the batch and log it, in one transaction under the dataset's audit row lock.

        Returns the decision and the result (``None`` when refused: nothing is recorded).
        An exception (from ``answer`` or the database) rolls everything back and makes the
        copy reload from the database on the next call.
        """
        with copy.lock:  # the threads of this process; the row lock orders the processes
            try:
                with self.backend.transaction() as run:
                    auditor = self._synced(run, copy)
                    before = (auditor.n_atoms, auditor.rank)
                    decision = auditor.check_and_record(query_sets)
                    if not decision.allowed:
                        return decision, None
                    result, cells = answer()
                    version = copy.version
                    if (auditor.n_atoms, auditor.rank) != before:
                        # a batch that splits no atom and adds no rank (a repeat, or a sum
                        # of answered sets) changes no later decision: not stored
                        version += 1
                        run(
                            "INSERT INTO _sdc_audit_sets VALUES (?, ?, ?)",
                            [copy.dataset, version, _pack(query_sets, copy.n_records)],
                        )
                        run(
                            "UPDATE _sdc_audit SET version = ? WHERE dataset = ?",
                            [version, copy.dataset],
                        )
                    run(
                        _LOG_ROW,
                        [analyst, copy.dataset, "restriction", "answered", 0, None, None, cells],
                    )
            except BaseException:
                copy.auditor = None  # it may hold a batch the database does not
                raise
            copy.version = version
            return decision, result

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


@dataclass
class AuditCopy:
    """A server process's copy of a restriction dataset's auditor (:class:`QuerySetAuditor`)
    and the audit-trail version it reflects; :meth:`Ledger.audit_release` keeps it current."""

    dataset: str
    n_records: int
    min_query_set: int
    auditor: QuerySetAuditor | None = None
    version: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _count_changed(dataset: str, stored: Any, n: int) -> str:
    return (
        f"dataset {dataset!r}: the restriction audit trail in the database was recorded on "
        f"{stored} records but the table has {n}; the record ids of the answered queries no "
        "longer match. Serve the table the trail was recorded on, or start a new database"
    )


def _pack(query_sets: Sequence[np.ndarray], n: int) -> str:
    """Query sets as JSON text: per set, the base64 of the zlib-compressed bitmap of its
    records (``n / 8`` bytes before compression, whatever the set's size)."""
    out = []
    for ids in query_sets:
        member = np.zeros(n, dtype=np.bool_)
        member[np.asarray(ids, dtype=np.int64)] = True
        out.append(base64.b64encode(zlib.compress(np.packbits(member).tobytes())).decode())
    return json.dumps(out)


def _unpack(text: str, n: int, dataset: str) -> list[np.ndarray]:
    """The record ids of :func:`_pack`'s query sets."""
    try:
        packed = json.loads(text)
        if not isinstance(packed, list) or not packed:
            raise ValueError("not a list of query sets")
        sets = []
        for item in packed:
            bits = np.frombuffer(zlib.decompress(base64.b64decode(item, validate=True)), np.uint8)
            if bits.size != (n + 7) // 8:
                raise ValueError("bitmap length")
            member = np.unpackbits(bits)
            if member[n:].any():
                raise ValueError("bits beyond the last record")
            sets.append(np.flatnonzero(member[:n]))
    except (ValueError, TypeError, zlib.error, binascii.Error):
        raise ConfigError(
            f"the audit trail of dataset {dataset!r} (table _sdc_audit_sets) is malformed; "
            "restore the database from a backup"
        ) from None
    return sets
