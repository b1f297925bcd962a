"""Leases: which server process serves a match, on the database's clock, fenced by
generation; a holder is declared dead early only where that is certain."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from backends import on_both_backends
from engine_helpers import config

from grace_arena.core.commands import Join, Reveal, StartTossup
from grace_arena.record import lease
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore


def _match(db_url: str):
    upgrade(db_url)
    engine = make_engine(db_url)
    return engine, MatchStore(engine).create(config(), now=0.0)


def _held_matches(db_url: str, n: int):
    """``n`` matches created with this process's leases: the engine, the store, the holder
    and the matches."""
    upgrade(db_url)
    engine = make_engine(db_url)
    store = MatchStore(engine)
    holder = lease.Holder.this_process()
    return engine, store, holder, [store.create(config(), now=0.0, holder=holder) for _ in range(n)]


def _other(name: str = "other", url: str = "http://b:2") -> lease.Holder:
    """A live process of another host: nothing tells it dead but its lease lapsing."""
    return lease.Holder(f"{name}:1:x", name, 1, url, None)


@on_both_backends
def test_a_lease_is_held_renewed_taken_over_and_fenced(db_url) -> None:
    engine, match = _match(db_url)
    mine, theirs = lease.Holder.this_process("http://a:1"), _other()
    taken = lease.acquire(engine, match.id, theirs)
    assert (taken.took_over, taken.claim.generation) == (False, 1)
    with pytest.raises(lease.LeaseHeld, match=r"served by process 1 on other at http://b:2"):
        lease.acquire(engine, match.id, mine)
    # a lapsed lease is taken over: a new generation
    ours = lease.acquire(engine, match.id, mine, ttl=-1.0)
    assert (ours.took_over, ours.claim.generation) == (True, 2)
    assert ours.served_until is not None  # when the other last served it (its own clock)
    assert lease.renew(engine, theirs, [match.id]) == {match.id}  # theirs no more
    # and the process that lost it can no longer commit to the match
    fenced = MatchStore(engine).open(match.id, claim=taken.claim)
    with pytest.raises(lease.LeaseLost):
        fenced.handle(Join(team="red", player="p9", name="Eve"), now=1.0)
    store = MatchStore(engine)
    taken_over = store.open(match.id, claim=ours.claim)
    taken_over.handle(Join(team="red", player="p9", name="Eve"), now=1.0)
    assert "p9" in store.open(match.id).match.state.players["red"]
    assert lease.holder_of(engine, match.id) == mine


@on_both_backends
def test_an_old_generation_cannot_commit_even_for_the_same_holder(db_url) -> None:
    """A process that lost a match and took it back later commits only under its new claim:
    a commit decided under the old one (a room that did not notice) stores nothing."""
    engine, match = _match(db_url)
    mine, theirs = lease.Holder.this_process(), _other()
    first = lease.acquire(engine, match.id, mine)
    lease.acquire(engine, match.id, theirs, ttl=-1.0)
    again = lease.acquire(engine, match.id, mine, ttl=-1.0)
    assert again.claim.generation == first.claim.generation + 2
    stale = MatchStore(engine).open(match.id, claim=first.claim)
    with pytest.raises(lease.LeaseLost):
        stale.handle(Join(team="red", player="p1", name="Ann"), now=1.0)
    assert lease.renew(engine, mine, {match.id: first.claim.generation}) == {match.id}
    assert lease.renew(engine, mine, {match.id: again.claim.generation}) == set()


@on_both_backends
def test_a_taker_whose_clock_runs_30_s_ahead_takes_no_live_match(db_url, monkeypatch) -> None:
    """Lapses are measured by the database's clock: a host whose clock is 30 s ahead (or a
    holder's clock stepped back) hands nothing over while the holder renews."""
    engine, match = _match(db_url)
    holder = _other()
    lease.acquire(engine, match.id, holder, ttl=15.0)
    real = time.time
    monkeypatch.setattr(lease.time, "time", lambda: real() + 30.0)
    with pytest.raises(lease.LeaseHeld):
        lease.acquire(engine, match.id, lease.Holder.this_process(), ttl=15.0)
    monkeypatch.setattr(lease.time, "time", lambda: real() - 30.0)  # the holder's stepped back
    assert lease.renew(engine, holder, [match.id]) == set()
    monkeypatch.setattr(lease.time, "time", real)
    with pytest.raises(lease.LeaseHeld):
        lease.acquire(engine, match.id, lease.Holder.this_process(), ttl=15.0)


@on_both_backends
def test_a_dead_process_of_this_system_loses_its_lease_at_once(db_url) -> None:
    engine, match = _match(db_url)
    code = "import os; from grace_arena.record.lease import process_key; "
    code += "print(os.getpid(), process_key())"
    gone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    pid, proc = gone.stdout.split()
    if proc == "None":
        pytest.skip("this system cannot tell its processes for certain (no /proc)")
    me = lease.Holder.this_process()
    dead = lease.Holder(f"{me.host}:{pid}:y", me.host, int(pid), None, proc)
    assert lease.known_dead(proc) and not lease.known_dead(me.proc)
    lease.acquire(engine, match.id, dead)
    # taken over at once: a lease renewed just now, of a holder not known dead, is held for
    # 60 s (LeaseHeld), and acquire never waits one out
    assert lease.acquire(engine, match.id, me, ttl=60.0).took_over


def test_a_process_of_another_pid_namespace_or_boot_is_never_declared_dead() -> None:
    """Two containers may share a host name but not their processes: a holder whose system
    (boot, PID namespace) is not this one's is alive until its lease lapses, whatever runs
    under its PID here. And no signal probes anything."""
    mine = lease.process_key()
    if mine is None:
        pytest.skip("this system cannot tell its processes for certain (no /proc)")
    boot, namespace, pid, start = mine.split(":")
    assert not lease.known_dead(mine)
    assert not lease.known_dead(f"{boot}:{int(namespace) + 1}:999999:1")  # another namespace
    assert not lease.known_dead(f"another-boot:{namespace}:999999:1")
    assert lease.known_dead(f"{boot}:{namespace}:{pid}:{int(start) + 1}")  # its pid reused
    assert not lease.known_dead(None) and not lease.known_dead("garbage")


@on_both_backends
def test_a_released_lease_is_free_at_once_and_says_when_it_was_served(db_url) -> None:
    engine, match = _match(db_url)
    holder = _other()
    lease.acquire(engine, match.id, holder)
    before = time.time()
    lease.release(engine, holder, [match.id])
    assert lease.holder_of(engine, match.id) is None
    taken = lease.acquire(engine, match.id, lease.Holder.this_process(), ttl=60.0)
    assert not taken.took_over and taken.served_until >= before - 1


@on_both_backends
def test_orphans_are_the_lapsed_not_the_released_nor_the_live(db_url) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    store = MatchStore(engine)
    ids = [store.create(config(), now=0.0).id for _ in range(3)]
    lapsed, released, live = (_other(f"h{i}") for i in range(3))
    for match_id, holder in zip(ids, (lapsed, released, live), strict=True):
        lease.acquire(engine, match_id, holder)
    lease.release(engine, released, [ids[1]])
    time.sleep(1.5)  # the lease lives 1 s: the renewed one must still be live when asked,
    lease.renew(engine, live, [ids[2]])  # however loaded the machine (0.04 s was not)
    assert lease.orphaned(engine, ids, ttl=1.0) == {ids[0]}
    assert lease.orphaned(engine, ids, ttl=60.0) == set()


@on_both_backends
def test_a_group_commit_fences_its_matches_in_one_call_and_refuses_a_lost_one(db_url) -> None:
    """A group commit of 5 matches renews their leases with one statement (on PostgreSQL
    one execution with an array of the matches, elsewhere a set of parameters per match);
    when one of them was taken over meanwhile, the whole commit is refused (LeaseLost,
    naming that match) and stores nothing."""
    from sqlalchemy import event as sa_event

    from grace_arena.core.commands import StartTossup

    engine, store, _, matches = _held_matches(db_url, 5)
    fences: list[int] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        if "UPDATE MATCH_LEASE" in statement.upper():  # (PostgreSQL: maybe a commit's part)
            if executemany:
                fences.append(len(parameters))
            elif isinstance(parameters, dict) and "lease_matches" in parameters:
                fences.append(len(parameters["lease_matches"]))  # every match's, as arrays
            else:
                fences.append(1)

    def batch():
        out = []
        for rm in matches:
            _, _, events = rm.decide_many([StartTossup()], now=1.0)
            out.append((rm.id, events, rm.fence))
        return out

    sa_event.listen(engine, "before_cursor_execute", count)
    try:
        store.append_many(batch())
        assert fences == [5]  # one call, each match's parameters
        lease.acquire(engine, matches[2].id, _other(), ttl=-1.0)  # taken over
        before = [store.event_count(rm.id) for rm in matches]
        with pytest.raises(lease.LeaseLost, match=f"match {matches[2].id}"):
            store.append_many(batch())
        assert [store.event_count(rm.id) for rm in matches] == before
    finally:
        sa_event.remove(engine, "before_cursor_execute", count)


@on_both_backends
def test_renewals_and_group_commits_of_many_matches_never_wait_in_a_circle(db_url) -> None:
    """Everything that locks several lease rows locks them in ascending match order: a
    renewal and group commits of the same matches, each handed the matches in its own order,
    run side by side without a deadlock (PostgreSQL would stall for deadlock_timeout and fail
    one of them)."""
    engine, store, holder, matches = _held_matches(db_url, 12)
    errors: list[BaseException] = []

    def renewals() -> None:
        for _ in range(30):
            try:
                lost = lease.renew(engine, holder, [m.id for m in reversed(matches)])
                assert lost == set()
            except BaseException as exc:
                errors.append(exc)

    def commits(order) -> None:
        for _ in range(30):
            try:  # the fences alone: each renews the leases of the batch's matches
                store.append_many([(m.id, [], m.fence) for m in order])
            except BaseException as exc:
                errors.append(exc)

    threads = [
        threading.Thread(target=renewals),
        threading.Thread(target=commits, args=(matches,)),
        threading.Thread(target=commits, args=(list(reversed(matches)),)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []


@on_both_backends
def test_a_match_created_by_a_host_30_s_behind_is_no_orphan(db_url, monkeypatch) -> None:
    """A new match's lease is taken on the database's clock too: a creator whose clock runs
    behind has its live match taken by nobody."""
    upgrade(db_url)
    engine = make_engine(db_url)
    creator = _other("creator", "http://a:1")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 30.0)
    match = MatchStore(engine).create(config(), now=0.0, holder=creator)
    monkeypatch.setattr(time, "time", real)
    assert lease.orphaned(engine, [match.id], ttl=15.0) == set()
    with pytest.raises(lease.LeaseHeld):
        lease.acquire(engine, match.id, _other(), ttl=15.0)


@on_both_backends
def test_a_take_over_tried_again_still_knows_when_the_match_was_last_served(db_url) -> None:
    """Taking a lease over does not say the match is served (its room may fail to open): the
    same process's next try is handed the moment it was last served, as the first was."""
    from sqlalchemy import update

    from grace_arena.record.models import MatchLeaseRow

    engine, match = _match(db_url)
    lease.acquire(engine, match.id, _other())
    served = time.time() - 20.0
    with engine.begin() as conn:
        conn.execute(update(MatchLeaseRow.__table__).values(served_until=served))  # type: ignore[arg-type]
    me = lease.Holder.this_process()
    first = lease.acquire(engine, match.id, me, ttl=-1.0)
    again = lease.acquire(engine, match.id, me, ttl=-1.0)
    assert first.took_over and first.served_until == pytest.approx(served, abs=1e-3)
    assert again.served_until == pytest.approx(served, abs=1e-3)
    lease.renew(engine, me, [match.id])  # served here from now on
    assert lease.acquire(engine, match.id, me).served_until > served + 19.0


@on_both_backends
def test_one_statement_commits_renewals_and_fences_never_wait_in_a_circle(db_url, monkeypatch):
    """Group commits that write rows (on PostgreSQL the one-statement commit, checked to have
    gone that way), each handed the matches in its own order, beside renewals and plain
    fences of the same matches: no deadlock (the statement locks its leases in match
    order)."""
    import grace_arena.record.one_statement as one_statement

    upgrade(db_url)
    engine = make_engine(db_url)
    store = MatchStore(engine)
    holder = lease.Holder.this_process()
    matches = [store.create(config(), now=0.0, holder=holder) for _ in range(12)]
    for m in matches:
        m.handle(StartTossup(), now=1.0)
    word = {m.id: m.match.decide(Reveal(), now=2.0)[0] for m in matches}
    statements: list[bool] = []
    append_rows = one_statement.append_rows

    def counted(*args, **kwargs):
        ok = append_rows(*args, **kwargs)
        statements.append(ok)
        return ok

    monkeypatch.setattr(one_statement, "append_rows", counted)
    errors: list[BaseException] = []

    def commits(order, first_seq) -> None:  # a word in each match: rows alone
        for i in range(30):
            try:
                store.append_many(
                    [(m.id, [word[m.id].model_copy(update={"seq": first_seq + 2 * i})], m.fence)
                     for m in order]
                )  # fmt: skip
            except BaseException as exc:
                errors.append(exc)

    def renewals() -> None:
        for _ in range(30):
            try:
                assert lease.renew(engine, holder, [m.id for m in reversed(matches)]) == set()
            except BaseException as exc:
                errors.append(exc)

    def fences() -> None:
        for _ in range(30):
            try:
                store.append_many([(m.id, [], m.fence) for m in reversed(matches)])
            except BaseException as exc:
                errors.append(exc)

    threads = [
        threading.Thread(target=commits, args=(matches, 1000)),
        threading.Thread(target=commits, args=(list(reversed(matches)), 1001)),
        threading.Thread(target=renewals),
        threading.Thread(target=fences),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    engine.dispose()
    assert errors == []
    if engine.dialect.name == "postgresql":
        assert statements.count(True) == 60
