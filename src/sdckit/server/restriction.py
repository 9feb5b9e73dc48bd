"""Query restriction for a protected statistical database: query-set-size control and an audit.

A server answers SUM / COUNT / AVG queries over a table of ``n`` records (record ids
``0 .. n-1``). Each query is identified with its *query set*, the ids of the records its
predicate selects. In restriction mode the server refuses a query when

1. ``query_set_too_small`` -- the query set has fewer than ``k`` or more than ``n - k``
   records (query-set-size control, Denning & Schlörer 1983, "Inference controls for
   statistical databases", IEEE Computer 16(7); Adam & Wortmann 1989, ACM Computing Surveys
   21(4), §4.1). The upper bound stops the complement attack (``SUM(all) - SUM(not C)``). An
   *empty* query set is refused as too small whatever ``k`` is: answering it would tell that a
   predicate selects nobody;
2. ``audit_refused`` -- its answer, together with the SUM answers already given over the same
   confidential column, would determine one record's value exactly (Chin & Özsoyoğlu 1982,
   "Auditing and inference control in statistical databases", IEEE TSE 8(6)): the unit vector
   ``e_i`` lies in the row space of the matrix whose rows are the 0/1 indicator vectors of the
   answered query sets and the new one. This catches differencing and tracker attacks, which
   size control alone lets through. A GROUP BY answer is a batch of query sets; the batch is
   audited as a whole and refused entirely when any record would be determined.

Audit on atoms
--------------
Records that belong to exactly the same answered query sets form an *atom* (Chin &
Özsoyoğlu's elementary sets); every answered query vector is constant on each atom, so the
row space lives in the atom space. Records are never tracked one by one: the auditor keeps

* ``atom_of`` -- the atom of each record (an int array of length ``n``), and atom sizes ``w``;
* an orthonormal basis ``v_1 .. v_r`` of the row space, orthonormal in *record* space
  (``<x, y> = sum_i x_i y_i``), stored by its value on each atom: ``B[a, j] = v_j(record in a)``.
  In atom coordinates that is the weighted inner product ``<x, y>_w = sum_a w_a x_a y_a``.

Storing the basis in record space makes atom splits free of numerical work: a new query set
that cuts atom ``a`` in two does not change any ``v_j`` as a vector over records, so the child
atom simply inherits row ``a`` of ``B`` (the basis stays exactly orthonormal; no rebuild, cost
``O(r)`` per new atom). The new query's indicator ``x`` is then orthogonalised against the basis
by classical Gram--Schmidt in the weighted inner product, with a second pass when the first one
kept less than half of the norm (the criterion of Daniel, Gragg, Kaufman & Stewart 1976,
Math. Comp. 30(136), there with ``1/sqrt(2)``: a 0/1 query set's projection on the first
answered ones routinely removes about that much, and the orthogonality one pass loses is
only about machine epsilon over the kept fraction); a residual below ``1e-10`` of ``|x|``
means the query is a linear combination of earlier ones (its answer is already known) and
adds no basis vector.

Record ``i`` is determined iff ``e_i`` lies in the span, i.e. the diagonal of the projector
``P_ii = sum_j v_j(i)^2 = sum_j B[a, j]^2`` equals 1 (``>= 1 - tolerance``). ``P_ii <= 1 / |a|``
for a record of an atom of ``|a|`` records, so only singleton atoms can be determined; the
auditor keeps the leverage ``p_a = sum_j B[a, j]^2`` of every atom and adds ``u_a^2`` for each
new basis vector ``u``. A check costs ``O(|S| + r A)`` for a query set ``S`` over ``A`` atoms
and ``r`` independent answered queries; memory is ``O(n + r A)``. Predicate queries keep ``A``
far below ``n``; arbitrary record sets (the worst case) drive it to ``n``.

The tolerance errs towards refusing: a record whose ``P_ii`` comes within ``tolerance`` of 1
counts as determined (for 0/1 query matrices an undetermined record's ``P_ii`` is a rational
number below 1 whose denominator divides a Gram determinant of the query sets, so it stays
far from 1 unless that determinant is astronomically large).

What the auditor reads
----------------------
Only record ids: the query sets of this query and of the queries answered before, and the
table's size ``n``. It never sees a value of the table, so every decision (size rule and audit)
is a function of the query sets alone. The server lets only public columns select records
(:mod:`sdckit.server.roles`), so the query sets are functions of public values, and a decision
could be computed by the analyst without the confidential values: the auditor is *simulatable*
(Kenthapadi, Mishra & Nissim 2005, "Simulatable auditing", PODS), and neither a refusal nor the
presence of an answer tells anything about a confidential value. (Were a query set chosen by a
confidential predicate, its size alone, through the size rule, would disclose the predicate.)

The server audits every query set it answers, COUNT included: a COUNT over a public query set
reveals only public facts, but ``COUNT(col)`` counts the records of the set where a possibly
confidential column is not missing, i.e. it is a SUM of a confidential 0/1 value, and
auditing all query sets alike covers it. :meth:`QuerySetAuditor.check_size` (the size rule
alone, nothing recorded) remains for callers that do not need the audit. AVG with a known
count is a SUM and is audited as one. One auditor audits every confidential column at once:
the audit depends on the query sets only, and every aggregate of a query is taken over the
same sets.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit.errors import ConfigError, ParameterError

__all__ = ["Decision", "QuerySetAuditor", "TOO_SMALL", "AUDIT_REFUSED"]

#: refusal codes of :class:`Decision`
TOO_SMALL = "query_set_too_small"
AUDIT_REFUSED = "audit_refused"

#: a residual below this fraction of the query vector's norm makes the query dependent
_DEPENDENT = 1e-10
#: re-orthogonalise when a Gram-Schmidt pass keeps less than this fraction of the norm (the
#: orthogonality lost in one pass is about machine epsilon / this fraction)
_REORTH = 0.5
_STATE_VERSION = 1
_MAX_RECORDS = 2**31 - 1


@dataclass(frozen=True)
class Decision:
    """The verdict on a query (or a GROUP BY batch of query sets).

    ``code`` is ``None`` when the query is allowed, else ``"query_set_too_small"`` or
    ``"audit_refused"``; ``message`` says why in words and never contains a record value or a
    record id.
    """

    allowed: bool
    code: str | None
    message: str


_ALLOWED = Decision(True, None, "allowed")


@dataclass
class _Trial:
    """A batch applied to a copy of the atom partition, not yet committed."""

    atom_of: np.ndarray  # new atom of every record
    sizes: np.ndarray  # size of every atom (after the batch)
    parent: np.ndarray  # atom -> atom it came from at the start of the batch
    immediate: np.ndarray  # new atoms (ids >= A0) -> the atom they were split from
    new_rows: np.ndarray  # (A, m) new orthonormal basis vectors over the new atoms
    steps: list[tuple[np.ndarray, int]]  # per query set: its atoms, number of atoms after it


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParameterError(f"{name} must be an integer, got {type(value).__name__}")
    return int(value)


class QuerySetAuditor:
    """Query-set-size control and an exact audit of SUM queries (Denning & Schlörer 1983;
    Chin & Özsoyoğlu 1982; Adam & Wortmann 1989, §4.1-4.2).

    ``QuerySetAuditor(n_records, min_query_set)`` starts with nothing answered. :meth:`check`
    judges a batch of query sets (int arrays of distinct record ids) without changing anything;
    :meth:`record` remembers a batch that was answered; :meth:`check_and_record` does both
    atomically and is what a server calls. With ``audit=False`` only the size rule applies.
    ``tolerance`` is how close to 1 a record's projector diagonal must come to count as
    determined. All public methods are thread-safe.

    The auditor reads record ids only, never a value of the data: its decisions are functions
    of the query sets (module docstring, "What the auditor reads"), simulatable when those
    sets are selected by public columns (Kenthapadi, Mishra & Nissim 2005).
    """

    def __init__(
        self, n_records: int, min_query_set: int, *, audit: bool = True, tolerance: float = 1e-9
    ) -> None:
        n = _integer(n_records, "n_records")
        k = _integer(min_query_set, "min_query_set")
        if not 1 <= n <= _MAX_RECORDS:
            raise ParameterError(f"n_records must be between 1 and {_MAX_RECORDS}, got {n}")
        if not 1 <= k or 2 * k > n:
            raise ParameterError(
                f"min_query_set must be between 1 and n_records / 2 = {n // 2} (a larger one "
                f"refuses every query), got {k}"
            )
        if not isinstance(audit, bool):
            raise ParameterError(f"audit must be True or False, got {type(audit).__name__}")
        try:
            tol = float(tolerance)
        except (TypeError, ValueError):
            raise ParameterError("tolerance must be a number") from None
        if not 0.0 < tol < 1e-3:
            raise ParameterError(f"tolerance must be in (0, 1e-3), got {tol!r}")
        self._n = n
        self._k = k
        self._audit = audit
        self._tol = tol
        self._lock = threading.RLock()
        self._answered = 0
        self._refused = {TOO_SMALL: 0, AUDIT_REFUSED: 0}
        # the atom partition and the basis; capacities grow by doubling
        self._atom_of = np.zeros(n if audit else 0, dtype=np.int64)
        self._n_atoms = 1 if audit else 0
        self._n_rows = 0
        self._sizes = np.array([n], dtype=np.int64)
        self._parent = np.array([-1], dtype=np.int64)  # atom -> the atom it was split from
        self._basis = np.zeros((1, 4), dtype=np.float64)  # (atom capacity, row capacity)
        self._leverage = np.zeros(1, dtype=np.float64)
        self._history: list[list[tuple[np.ndarray, int]]] = []

    # ----------------------------------------------------------------- properties
    @property
    def n_records(self) -> int:
        """The number of records of the table."""
        return self._n

    @property
    def min_query_set(self) -> int:
        """``k``: the smallest query set answered (the largest is ``n - k``)."""
        return self._k

    @property
    def answered(self) -> int:
        """The number of query sets recorded (a GROUP BY batch counts each of its sets)."""
        with self._lock:
            return self._answered

    @property
    def refused(self) -> dict[str, int]:
        """Refusals counted by :meth:`check_and_record`, by code (:meth:`check` counts none)."""
        with self._lock:
            return dict(self._refused)

    @property
    def n_atoms(self) -> int:
        """The number of atoms (classes of records alike in every answered query set)."""
        with self._lock:
            return self._n_atoms

    @property
    def rank(self) -> int:
        """The rank of the answered query sets' indicator matrix (audited queries)."""
        with self._lock:
            return self._n_rows

    # ----------------------------------------------------------------- validation
    def _validate(self, query_sets: Sequence[np.ndarray]) -> list[np.ndarray]:
        if isinstance(query_sets, np.ndarray) or not isinstance(query_sets, Sequence):
            raise ParameterError(
                "query_sets must be a sequence (list or tuple) of record-id arrays, one per "
                "query set; wrap a single query set in a list"
            )
        if len(query_sets) == 0:
            raise ParameterError("query_sets is empty: give at least one query set")
        out = []
        for number, ids in enumerate(query_sets):
            where = f"query set {number}"
            arr = np.asarray(ids)
            if arr.ndim != 1:
                raise ParameterError(f"{where} must be a 1-D array of record ids")
            if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
                raise ParameterError(
                    f"{where} must hold integer record ids (dtype {arr.dtype} given; for a "
                    "boolean mask use numpy.flatnonzero)"
                )
            arr = arr.astype(np.int64, copy=False)
            if arr.size:
                if int(arr.min()) < 0 or int(arr.max()) >= self._n:
                    raise ParameterError(
                        f"{where} holds record ids outside 0 .. n_records - 1 = {self._n - 1}"
                    )
                seen = np.zeros(self._n, dtype=np.bool_)
                seen[arr] = True
                if int(np.count_nonzero(seen)) != arr.size:
                    raise ParameterError(f"{where} repeats record ids; give each id once")
            out.append(arr)
        return out

    def _size_decision(self, sets: list[np.ndarray]) -> Decision | None:
        k, n = self._k, self._n
        for ids in sets:
            if ids.size == 0 or ids.size < k or ids.size > n - k:
                return Decision(
                    False,
                    TOO_SMALL,
                    f"refused: a query set is empty, has fewer than {k} records or more than "
                    f"n - {k} = {n - k} (query-set-size control)",
                )
        return None

    # ----------------------------------------------------------------- the audit
    def _trial(self, sets: list[np.ndarray]) -> _Trial:
        """Apply ``sets`` in order to a copy of the partition and extend the basis."""
        a0, r = self._n_atoms, self._n_rows
        basis = self._basis[:a0, :r]
        atom_of = self._atom_of.copy()
        sizes = self._sizes[:a0].copy()
        parent = np.arange(a0, dtype=np.int64)
        immediate = np.zeros(0, dtype=np.int64)
        new_rows = np.zeros((a0, 0), dtype=np.float64)
        steps: list[tuple[np.ndarray, int]] = []
        for ids in sets:
            n_atoms = sizes.size
            labels = atom_of[ids]
            counts = np.bincount(labels, minlength=n_atoms)
            full = (counts > 0) & (counts == sizes)
            split = (counts > 0) & (counts < sizes)
            cut = np.flatnonzero(split)
            if cut.size:
                new_id = np.full(n_atoms, -1, dtype=np.int64)
                new_id[cut] = n_atoms + np.arange(cut.size)
                moved = split[labels]
                atom_of[ids[moved]] = new_id[labels[moved]]
                sizes[cut] -= counts[cut]
                sizes = np.concatenate([sizes, counts[cut]])
                parent = np.concatenate([parent, parent[cut]])
                immediate = np.concatenate([immediate, cut])
                new_rows = np.concatenate([new_rows, new_rows[cut]], axis=0)
            inside = np.concatenate([np.flatnonzero(full), n_atoms + np.arange(cut.size)])
            steps.append((inside.astype(np.int32), int(sizes.size)))
            # classical Gram-Schmidt in the weighted inner product, DGKS re-orthogonalisation
            y = np.zeros(sizes.size, dtype=np.float64)
            y[inside] = 1.0
            norm0 = np.sqrt(float(ids.size))
            norm = norm0
            for _ in range(2):  # "twice is enough"
                wy = sizes * y
                coef = _weighted_rows(basis, np.bincount(parent, weights=wy, minlength=a0))
                coef_new = new_rows.T @ wy
                y = y - (basis @ coef)[parent] - new_rows @ coef_new
                previous, norm = norm, float(np.sqrt(sizes @ (y * y)))
                if norm >= _REORTH * previous or norm <= _DEPENDENT * norm0:
                    break
            if cut.size == 0 and norm <= _DEPENDENT * norm0:
                continue  # a combination of earlier query sets: its answer is known
            new_rows = np.concatenate([new_rows, (y / norm)[:, None]], axis=1)
        return _Trial(atom_of, sizes, parent, immediate, new_rows, steps)

    def _newly_determined(self, trial: _Trial) -> bool:
        lev_old = self._leverage[: self._n_atoms]
        leverage = lev_old[trial.parent] + np.einsum("ij,ij->i", trial.new_rows, trial.new_rows)
        single = trial.sizes == 1
        threshold = 1.0 - self._tol
        determined = single & (leverage >= threshold)
        if not determined.any():
            return False
        before = (self._sizes[: self._n_atoms] == 1) & (lev_old >= threshold)
        return bool((determined & ~before[trial.parent]).any())

    def _commit(self, trial: _Trial) -> None:
        a0, r = self._n_atoms, self._n_rows
        a1, m = trial.sizes.size, trial.new_rows.shape[1]
        cap_a, cap_r = self._basis.shape
        if a1 > cap_a or r + m > cap_r:
            new_a = min(max(a1, 2 * cap_a), self._n) if a1 > cap_a else cap_a
            new_r = min(max(r + m, 2 * cap_r), self._n) if r + m > cap_r else cap_r
            grown = np.zeros((new_a, new_r), dtype=np.float64)
            grown[:a0, :r] = self._basis[:a0, :r]
            self._basis = grown
        if a1 > self._leverage.size:
            cap = min(max(a1, 2 * self._leverage.size), self._n)
            self._leverage = np.concatenate([self._leverage, np.zeros(cap - self._leverage.size)])
        basis = self._basis
        basis[a0:a1, :r] = basis[trial.parent[a0:], :r]
        basis[:a1, r : r + m] = trial.new_rows
        lev = self._leverage
        lev[a0:a1] = lev[trial.parent[a0:]]
        lev[:a1] += np.einsum("ij,ij->i", trial.new_rows, trial.new_rows)
        self._atom_of = trial.atom_of
        self._sizes = trial.sizes
        self._parent = np.concatenate([self._parent, trial.immediate])
        self._n_atoms, self._n_rows = a1, r + m
        self._history.append(trial.steps)

    # ----------------------------------------------------------------- public API
    def check(self, query_sets: Sequence[np.ndarray]) -> Decision:
        """Judge a batch of query sets (one for a plain query, one per group for GROUP BY)
        as if all of them were answered now; nothing is recorded.

        The size rule (Denning & Schlörer 1983) is applied to every set, then the audit
        (Chin & Özsoyoğlu 1982) to the batch as a whole. Each query set is a 1-D integer array
        of distinct record ids in ``0 .. n_records - 1``, in any order.
        """
        sets = self._validate(query_sets)
        with self._lock:
            return self._check(sets)[0]

    def _check(self, sets: list[np.ndarray]) -> tuple[Decision, _Trial | None]:
        refusal = self._size_decision(sets)
        if refusal is not None:
            return refusal, None
        if not self._audit:
            return _ALLOWED, None
        trial = self._trial(sets)
        if self._newly_determined(trial):
            return (
                Decision(
                    False,
                    AUDIT_REFUSED,
                    "refused by the audit: together with the answers already given, this "
                    "answer would reveal an individual record's value exactly",
                ),
                None,
            )
        return _ALLOWED, trial

    def check_size(self, query_sets: Sequence[np.ndarray]) -> Decision:
        """The size rule alone (Denning & Schlörer 1983), nothing recorded: for a caller that
        audits nothing (the server audits COUNT queries too, through
        :meth:`check_and_record`)."""
        sets = self._validate(query_sets)
        return self._size_decision(sets) or _ALLOWED

    def record(self, query_sets: Sequence[np.ndarray]) -> None:
        """Remember a batch of answered query sets (Chin & Özsoyoğlu 1982), without judging
        it. A record that an answer forced through this way determines stays known; later
        checks refuse only what would determine a further record."""
        sets = self._validate(query_sets)
        with self._lock:
            self._record(sets)

    def _record(self, sets: list[np.ndarray]) -> None:
        if self._audit:
            self._commit(self._trial(sets))
        self._answered += len(sets)

    def check_and_record(self, query_sets: Sequence[np.ndarray]) -> Decision:
        """:meth:`check`, and :meth:`record` the batch when it is allowed, atomically; a
        refusal is counted in :attr:`refused` (Denning & Schlörer 1983; Chin & Özsoyoğlu
        1982)."""
        sets = self._validate(query_sets)
        with self._lock:
            decision, trial = self._check(sets)
            if decision.allowed:
                if trial is not None:
                    self._commit(trial)
                self._answered += len(sets)
            else:
                assert decision.code is not None
                self._refused[decision.code] += 1
            return decision

    # ----------------------------------------------------------------- persistence
    def state(self) -> dict[str, Any]:
        """The auditor as JSON-ready data (ints, lists of ints), for :meth:`from_state`.

        Holds the atom of every record, the split tree of the atoms and, for each recorded
        batch, the atoms each query set covered when it was recorded; :meth:`from_state`
        replays the batches, so the restored auditor's floating-point state, and hence every
        future decision, is identical.
        """
        with self._lock:
            return {
                "version": _STATE_VERSION,
                "n_records": self._n,
                "min_query_set": self._k,
                "audit": self._audit,
                "tolerance": self._tol,
                "answered": self._answered,
                "refused": dict(self._refused),
                "atom_of": self._atom_of.tolist(),
                "atom_parent": self._parent[: self._n_atoms].tolist(),
                "batches": [
                    [{"atoms": atoms.tolist(), "n_atoms": n_atoms} for atoms, n_atoms in batch]
                    for batch in self._history
                ],
            }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> QuerySetAuditor:
        """Rebuild an auditor from :meth:`state` (Chin & Özsoyoğlu 1982's audit trail)."""
        if not isinstance(state, dict):
            raise ConfigError("auditor state must be a dict made by QuerySetAuditor.state()")
        if state.get("version") != _STATE_VERSION:
            raise ConfigError(
                f"auditor state: unknown version {state.get('version')!r} "
                f"(expected {_STATE_VERSION})"
            )
        try:
            auditor = cls(
                state["n_records"],
                state["min_query_set"],
                audit=state["audit"],
                tolerance=state["tolerance"],
            )
            answered = int(state["answered"])
            refused = {code: int(state["refused"][code]) for code in (TOO_SMALL, AUDIT_REFUSED)}
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"auditor state is malformed ({type(exc).__name__})") from None
        if auditor._audit:
            atom_of, parent, batches = _trail(state)
            for sets in _replay_sets(atom_of, parent, batches, auditor._n):
                auditor._record(sets)
            if not (
                np.array_equal(auditor._atom_of, atom_of)
                and np.array_equal(auditor._parent, parent)
            ):
                raise ConfigError("auditor state is inconsistent: replay gave other atoms")
            if answered != auditor._answered:
                raise ConfigError("auditor state is inconsistent: answered count differs")
        auditor._answered = answered
        auditor._refused = refused
        return auditor

    @staticmethod
    def recorded_batches(state: dict[str, Any]) -> list[list[np.ndarray]]:
        """The batches of query sets (record ids) a :meth:`state` holds, in the order they
        were recorded (empty for an auditor without audit): the audit trail of Chin &
        Özsoyoğlu 1982, for storing it elsewhere. The state is validated as in
        :meth:`from_state`."""
        auditor = QuerySetAuditor.from_state(state)
        if not auditor._audit:
            return []
        return _replay_sets(*_trail(state), auditor._n)


def _trail(
    state: dict[str, Any],
) -> tuple[np.ndarray, np.ndarray, list[list[tuple[np.ndarray, int]]]]:
    """The atom of each record, the atom tree and the recorded batches of a state."""
    try:
        atom_of = np.asarray(state["atom_of"], dtype=np.int64)
        parent = np.asarray(state["atom_parent"], dtype=np.int64)
        batches = [
            [(np.asarray(q["atoms"], dtype=np.int64), int(q["n_atoms"])) for q in batch]
            for batch in state["batches"]
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"auditor state is malformed ({type(exc).__name__})") from None
    return atom_of, parent, batches


def _weighted_rows(basis: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``basis.T @ weights``, reading only the rows of the atoms with a nonzero weight when
    they are few (a query set's first Gram-Schmidt pass touches only its own atoms)."""
    touched = np.flatnonzero(weights)
    if 4 * touched.size < weights.size:
        return basis[touched].T @ weights[touched]
    return basis.T @ weights


def _replay_sets(
    atom_of: np.ndarray,
    parent: np.ndarray,
    batches: list[list[tuple[np.ndarray, int]]],
    n: int,
) -> list[list[np.ndarray]]:
    """The record ids of every stored query set: query set ``t`` covered atoms ``atoms_t``
    among the first ``n_atoms_t`` atoms; a later atom maps back to its ancestor below
    ``n_atoms_t`` (a child's id is always larger than its parent's)."""
    n_atoms = parent.size
    if atom_of.shape != (n,) or n_atoms == 0 or parent[0] != -1:
        raise ConfigError("auditor state is malformed (atom arrays)")
    if atom_of.min() < 0 or atom_of.max() >= n_atoms:
        raise ConfigError("auditor state is malformed (atom ids)")
    if n_atoms > 1 and ((parent[1:] < 0).any() or (parent[1:] >= np.arange(1, n_atoms)).any()):
        raise ConfigError("auditor state is malformed (atom tree)")
    flat = [(b, q) for b, batch in enumerate(batches) for q in range(len(batch))]
    out: list[list[np.ndarray]] = [[np.zeros(0, np.int64)] * len(batch) for batch in batches]
    ancestor = np.arange(n_atoms, dtype=np.int64)
    for b, q in reversed(flat):
        atoms, limit = batches[b][q]
        if not 1 <= limit <= n_atoms or (atoms.size and (atoms.min() < 0 or atoms.max() >= limit)):
            raise ConfigError("auditor state is malformed (query atoms)")
        while True:
            late = ancestor >= limit
            if not late.any():
                break
            ancestor[late] = parent[ancestor[late]]
        member = np.zeros(limit, dtype=np.bool_)
        member[atoms] = True
        out[b][q] = np.flatnonzero(member[ancestor[atom_of]])
    return out
