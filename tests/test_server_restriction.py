"""The query-restriction engine of the protected query server (sdckit.server.restriction).

Query-set-size control (Denning & Schlörer 1983) and the audit of SUM queries (Chin &
Özsoyoğlu 1982): hand-worked differencing and tracker attacks, GROUP BY batches, and property
tests against a brute-force rank test: record ``i`` is determined by the answered query sets
(rows of ``M``) iff ``rank([M; e_i]) == rank(M)``.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import ConfigError, ParameterError
from sdckit.server.restriction import AUDIT_REFUSED, TOO_SMALL, Decision, QuerySetAuditor


def ids(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def span(lo: int, hi: int) -> np.ndarray:
    return np.arange(lo, hi, dtype=np.int64)


def determined(sets: list[np.ndarray], n: int) -> list[int]:
    """Brute force: the records whose unit vector lies in the row space of ``sets``."""
    if not sets:
        return []
    m = np.zeros((len(sets), n))
    for row, s in enumerate(sets):
        m[row, s] = 1.0
    rank = np.linalg.matrix_rank(m)
    eye = np.eye(n)
    return [i for i in range(n) if np.linalg.matrix_rank(np.vstack([m, eye[i]])) == rank]


# ------------------------------------------------------------------ size control
def test_size_control_n10_k2():
    auditor = QuerySetAuditor(10, 2)
    for too_small in (ids(3), span(0, 9), span(0, 10), ids()):
        decision = auditor.check([too_small])
        assert decision == Decision(False, TOO_SMALL, decision.message)
    assert auditor.check([ids(3, 5)]).allowed  # exactly k
    assert auditor.check([span(0, 8)]).allowed  # exactly n - k
    assert auditor.answered == 0  # check records nothing
    assert auditor.check_and_record([ids(4)]).code == TOO_SMALL
    assert auditor.refused == {TOO_SMALL: 1, AUDIT_REFUSED: 0}


def test_size_refusal_message_hides_the_size_and_ids():
    auditor = QuerySetAuditor(10, 2)
    message = auditor.check([ids(7)]).message
    assert "fewer than 2" in message and "n - 2 = 8" in message
    assert "7" not in message and " 1 " not in message


def test_check_size_for_count_queries_does_not_audit():
    auditor = QuerySetAuditor(10, 2)
    assert auditor.check_and_record([span(0, 8)]).allowed
    assert auditor.check_size([span(0, 7)]).allowed  # a COUNT: size control only
    assert auditor.check_size([ids(1)]).code == TOO_SMALL
    assert auditor.check([span(0, 7)]).code == AUDIT_REFUSED  # the SUM would reveal record 7


def test_audit_off_applies_the_size_rule_only():
    auditor = QuerySetAuditor(10, 2, audit=False)
    assert auditor.check_and_record([span(0, 8)]).allowed
    assert auditor.check_and_record([span(0, 7)]).allowed
    assert auditor.check_and_record([span(0, 1)]).code == TOO_SMALL
    assert auditor.answered == 2
    assert QuerySetAuditor.from_state(auditor.state()).answered == 2


# ------------------------------------------------------------------ the audit, by hand
def test_differencing_attack_refused():
    """SUM{0..7} - SUM{0..6} = x_7: the second query is refused."""
    auditor = QuerySetAuditor(10, 2)
    assert auditor.check_and_record([span(0, 8)]).allowed
    decision = auditor.check_and_record([span(0, 7)])
    assert (decision.allowed, decision.code) == (False, AUDIT_REFUSED)
    assert "7" not in decision.message
    assert determined([span(0, 8), span(0, 7)], 10) == [7]
    assert auditor.answered == 1 and auditor.refused[AUDIT_REFUSED] == 1
    # the same set in another order and a set that does not cut the atoms are judged alike
    assert auditor.check([ids(6, 5, 4, 3, 2, 1, 0)]).code == AUDIT_REFUSED
    assert auditor.check([span(0, 8)]).allowed  # asking again reveals nothing new


def test_tracker_three_sets_isolate_a_record():
    """{0,1,2} + {2,3,4} - {0,1,3,4} = 2 x_2; any two of the sets isolate nobody."""
    a, b, c = ids(0, 1, 2), ids(2, 3, 4), ids(0, 1, 3, 4)
    assert determined([a, b], 10) == [] and determined([a, b, c], 10) == [2]
    auditor = QuerySetAuditor(10, 2)
    assert auditor.check_and_record([a]).allowed
    assert auditor.check_and_record([b]).allowed
    assert auditor.check_and_record([c]).code == AUDIT_REFUSED
    assert auditor.rank == 2
    # atoms {0,1}, {2}, {3,4}, {5..9}
    assert auditor.n_atoms == 4


def test_overlapping_windows_isolate_nobody_until_a_difference():
    """Rows (over records 0..4) r1=(1,1,1,0,0), r2=(0,1,1,1,0), r3=(0,0,1,1,1): a r1 + b r2 +
    c r3 = (a, a+b, a+b+c, b+c, c) is a unit vector for no (a, b, c); then {0,1} = r1 - e_2
    reveals record 2."""
    windows = [ids(0, 1, 2), ids(1, 2, 3), ids(2, 3, 4)]
    assert determined(windows, 10) == []
    auditor = QuerySetAuditor(10, 2)
    for w in windows:
        assert auditor.check_and_record([w]).allowed
    assert auditor.rank == 3
    assert determined([*windows, ids(0, 1)], 10) == [2]
    assert auditor.check([ids(0, 1)]).code == AUDIT_REFUSED
    # {0,4} = r1 - r2 + r3 - e_2 reveals record 2 too; {0,5,6} reaches outside and does not
    assert determined([*windows, ids(0, 4)], 10) == [2]
    assert auditor.check([ids(0, 4)]).code == AUDIT_REFUSED
    assert determined([*windows, ids(0, 5, 6)], 10) == []
    assert auditor.check([ids(0, 5, 6)]).allowed


def test_pairs_that_cover_without_singletons_determine_nothing():
    """{0,1,2,3}, {2,3,4,5}, {4,5,6,7}, {0,1,6,7}: every atom has two records."""
    sets = [ids(0, 1, 2, 3), ids(2, 3, 4, 5), ids(4, 5, 6, 7), ids(0, 1, 6, 7)]
    auditor = QuerySetAuditor(10, 2)
    for s in sets:
        assert auditor.check_and_record([s]).allowed
    assert auditor.rank == 3  # the fourth is r1 - r2 + r3: dependent
    assert determined(sets, 10) == []
    # {0, 2}: splits {0,1} and {2,3}; with r1 = {0,1,2,3} it gives {1,3}; nobody alone
    assert determined([*sets, ids(0, 2)], 10) == []
    assert auditor.check_and_record([ids(0, 2)]).allowed
    # then {0, 1}: with {0,2} and {0,1,2,3} ... x_0 + x_1, x_0 + x_2, x_0+x_1+x_2+x_3: no unit;
    assert determined([*sets, ids(0, 2), ids(0, 1)], 10) == []
    assert auditor.check_and_record([ids(0, 1)]).allowed
    # but {1, 2} closes a triangle: (x0+x1) + (x0+x2) - (x1+x2) = 2 x_0
    assert determined([*sets, ids(0, 2), ids(0, 1), ids(1, 2)], 10) == [0, 1, 2, 3]
    assert auditor.check_and_record([ids(1, 2)]).code == AUDIT_REFUSED


# ------------------------------------------------------------------ GROUP BY batches
def test_group_by_batch_with_a_small_group_refused():
    auditor = QuerySetAuditor(10, 2)
    assert auditor.check([span(0, 3), span(3, 6), span(6, 10)]).allowed
    decision = auditor.check_and_record([span(0, 1), span(1, 5), span(5, 10)])
    assert decision.code == TOO_SMALL
    assert auditor.answered == 0 and auditor.n_atoms == 1


def test_group_by_batch_refused_entirely_with_earlier_answers():
    auditor = QuerySetAuditor(10, 2)
    assert auditor.check_and_record([span(0, 8)]).allowed
    before = auditor.state()
    groups = [span(0, 4), span(4, 7), span(7, 10)]  # {0..7} - {0..3} - {4,5,6} = x_7
    assert determined([span(0, 8), *groups], 10) == [7]
    assert auditor.check_and_record(groups).code == AUDIT_REFUSED
    assert auditor.state() == {**before, "refused": {TOO_SMALL: 0, AUDIT_REFUSED: 1}}
    # each group alone is fine, and a fresh auditor answers the whole GROUP BY
    assert auditor.check([span(0, 4)]).allowed
    assert QuerySetAuditor(10, 2).check_and_record(groups).allowed


def test_batch_that_isolates_by_itself_refused():
    auditor = QuerySetAuditor(10, 2)
    batch = [ids(0, 1, 2), ids(2, 3, 4), ids(0, 1, 3, 4)]
    assert auditor.check_and_record(batch).code == AUDIT_REFUSED
    assert auditor.answered == 0 and auditor.rank == 0
    assert auditor.check_and_record(batch[:2]).allowed
    assert auditor.answered == 2


def test_forced_record_does_not_block_every_later_query():
    auditor = QuerySetAuditor(10, 2)
    auditor.record([span(0, 8), span(0, 7)])  # record 7 is known now (forced through)
    assert auditor.answered == 2
    assert auditor.check([span(2, 6)]).allowed
    assert auditor.check([span(0, 6)]).code == AUDIT_REFUSED  # would also reveal record 6


# ------------------------------------------------------------------ larger exact check
def test_interval_queries_against_brute_force():
    """Range queries (the usual differencing material) over 60 records."""
    rng = np.random.default_rng(3)
    n, k = 60, 3
    auditor = QuerySetAuditor(n, k)
    accepted: list[np.ndarray] = []
    codes = []
    for _ in range(120):
        lo = int(rng.integers(0, n - k))
        hi = int(rng.integers(lo + 1, n + 1))
        s = span(lo, hi)
        decision = auditor.check_and_record([s])
        codes.append(decision.code)
        if decision.allowed:
            accepted.append(s)
        elif decision.code == AUDIT_REFUSED:
            assert determined([*accepted, s], n)
    assert determined(accepted, n) == []
    assert codes.count(AUDIT_REFUSED) > 5 and codes.count(None) > 10


# ------------------------------------------------------------------ properties
query_set = st.lists(st.booleans(), min_size=12, max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(3, 12),
    k_frac=st.floats(0, 1),
    batches=st.lists(st.lists(query_set, min_size=1, max_size=3), min_size=1, max_size=10),
)
def test_audit_matches_brute_force(n, k_frac, batches):
    k = 1 + int(k_frac * (n // 2 - 1))
    auditor = QuerySetAuditor(n, k)
    accepted: list[np.ndarray] = []
    for batch in batches:
        sets = [np.flatnonzero(mask[:n]) for mask in batch]
        preview = auditor.check(sets)
        decision = auditor.check_and_record(sets)
        assert preview == decision
        small = any(s.size == 0 or s.size < k or s.size > n - k for s in sets)
        if decision.code == TOO_SMALL:
            assert small
        elif decision.code == AUDIT_REFUSED:
            assert not small and determined([*accepted, *sets], n)
        else:
            assert not small
            accepted.extend(sets)
        assert determined(accepted, n) == []
        assert not decision.allowed or not determined(accepted, n)
    assert auditor.answered == len(accepted)
    if accepted:
        m = np.zeros((len(accepted), n))
        for row, s in enumerate(accepted):
            m[row, s] = 1
        assert auditor.rank == np.linalg.matrix_rank(m)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(4, 12),
    history=st.lists(st.lists(query_set, min_size=1, max_size=3), min_size=1, max_size=8),
    future=st.lists(st.lists(query_set, min_size=1, max_size=3), min_size=1, max_size=8),
)
def test_state_round_trip_gives_identical_decisions(n, history, future):
    k = 1 + n // 6
    auditor = QuerySetAuditor(n, k)
    for batch in history:
        auditor.check_and_record([np.flatnonzero(m[:n]) for m in batch])
    state = json.loads(json.dumps(auditor.state()))
    restored = QuerySetAuditor.from_state(state)
    assert restored.state() == state
    assert restored.refused == auditor.refused and restored.answered == auditor.answered
    for batch in future:
        sets = [np.flatnonzero(m[:n]) for m in batch]
        assert restored.check_and_record(sets) == auditor.check_and_record(sets)
    assert restored.state() == auditor.state()
    assert np.array_equal(
        restored._basis[: restored.n_atoms, : restored.rank],
        auditor._basis[: auditor.n_atoms, : auditor.rank],
    )


def test_concurrent_check_and_record_never_determines():
    n, k = 12, 2
    rng = np.random.default_rng(11)
    sets = [
        np.sort(rng.choice(n, size=int(rng.integers(k, n - k + 1)), replace=False))
        for _ in range(50)
    ]
    auditor = QuerySetAuditor(n, k)
    accepted: list[np.ndarray] = []
    guard = threading.Lock()
    barrier = threading.Barrier(len(sets))

    def ask(s: np.ndarray) -> None:
        barrier.wait()
        if auditor.check_and_record([s]).allowed:
            with guard:
                accepted.append(s)

    threads = [threading.Thread(target=ask, args=(s,)) for s in sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) >= 2
    assert determined(accepted, n) == []
    assert auditor.answered == len(accepted)
    assert auditor.refused[AUDIT_REFUSED] == len(sets) - len(accepted)
    assert sum(s.size for s in accepted) > 0


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_records": 0, "min_query_set": 1},
        {"n_records": 10, "min_query_set": 0},
        {"n_records": 10, "min_query_set": 6},
        {"n_records": 10.0, "min_query_set": 2},
        {"n_records": 10, "min_query_set": 2, "tolerance": 0.0},
        {"n_records": 10, "min_query_set": 2, "tolerance": "x"},
        {"n_records": 10, "min_query_set": 2, "audit": 1},
    ],
)
def test_bad_parameters(kwargs):
    with pytest.raises(ParameterError):
        QuerySetAuditor(**kwargs)


@pytest.mark.parametrize(
    ("query_sets", "needle"),
    [
        ([ids(0, 123456)], "outside"),
        ([ids(-98765, 1)], "outside"),
        ([ids(3, 3)], "repeats"),
        ([np.array([0.5, 1.5])], "integer"),
        ([np.ones(10, dtype=bool)], "flatnonzero"),
        ([np.zeros((2, 2), dtype=np.int64)], "1-D"),
        ([], "empty"),
        (ids(1, 2), "sequence"),
    ],
)
def test_bad_query_sets(query_sets, needle):
    auditor = QuerySetAuditor(10, 2)
    for method in (auditor.check, auditor.record, auditor.check_and_record, auditor.check_size):
        with pytest.raises(ParameterError) as info:
            method(query_sets)
        assert needle in str(info.value)
        assert "123456" not in str(info.value) and "98765" not in str(info.value)
    assert auditor.answered == 0


def test_malformed_state():
    auditor = QuerySetAuditor(10, 2)
    auditor.check_and_record([span(0, 5)])
    state = auditor.state()
    with pytest.raises(ConfigError):
        QuerySetAuditor.from_state({**state, "version": 99})
    with pytest.raises(ConfigError):
        QuerySetAuditor.from_state({k: v for k, v in state.items() if k != "batches"})
    with pytest.raises(ConfigError):
        QuerySetAuditor.from_state({**state, "atom_of": [0] * 10})
    with pytest.raises(ConfigError):
        QuerySetAuditor.from_state({**state, "answered": 7})
    with pytest.raises(ConfigError):
        QuerySetAuditor.from_state("not a state")  # type: ignore[arg-type]
