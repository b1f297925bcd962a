"""The record's notices (PostgreSQL's NOTIFY and LISTEN): a process is told of results
committed and standings published by another at once; a notice rides its transaction (none
for one rolled back); a listener whose connection is cut listens again and says so (what was
committed meanwhile is read then); SQLite tells nothing and nothing listens."""

from __future__ import annotations

import queue
import time

import pytest
from engine_helpers import config
from sqlalchemy import text

from grace_arena.core.commands import Buzz, Join, Reveal, Rule, StartTossup
from grace_arena.core.events import BuzzTiming, Ruling
from grace_arena.record import notices, standings_record
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore

T = 1_800_000_000.0


def _listening(engine, told: queue.Queue, connected: queue.Queue) -> notices.Listener:
    listener = notices.Listener(engine, told.put, lambda: connected.put(time.time()))
    listener.start()
    assert listener.listening.wait(10)
    connected.get(timeout=5)
    return listener


def test_a_notice_is_sent_when_its_transaction_commits_and_never_for_one_rolled_back(
    postgres_url,
):
    engine = make_engine(postgres_url)
    told: queue.Queue[str] = queue.Queue()
    listener = _listening(engine, told, queue.Queue())
    try:
        with engine.connect() as conn:
            notices.notify(conn, "results 7")
            assert told.empty() or pytest.fail("told before the commit")
            conn.commit()
        assert told.get(timeout=5) == "results 7"
        with engine.connect() as conn:
            notices.notify(conn, "results 8")
            conn.rollback()
        with engine.begin() as conn:
            notices.notify(conn, "standings 3 12")
        assert told.get(timeout=5) == "standings 3 12"  # (never "results 8")
        assert listener.received == 2
    finally:
        listener.stop()
        engine.dispose()


def test_results_and_standings_written_to_the_record_are_told(postgres_url):
    """A match opened, and a commit of events that may change a result, name the match; a
    join, words revealed, a buzz say nothing; standings published say their event and
    version, and nothing when an older version is refused."""
    upgrade(postgres_url)
    engine = make_engine(postgres_url)
    store = MatchStore(engine)
    told: queue.Queue[str] = queue.Queue()
    listener = _listening(engine, told, queue.Queue())
    try:
        rm = store.create(config(), now=T)
        assert told.get(timeout=5) == f"results {rm.id}"
        rm.handle(Join(team="red", player="r1", name="Ruth"), now=T)
        rm.handle(StartTossup(), now=T)
        assert told.get(timeout=5) == f"results {rm.id}"
        rm.handle(Reveal(to=4), now=T)
        rm.handle(Buzz(team="red", player="r1", timing=BuzzTiming(received_mono=1.0)), now=T)
        rm.handle(Rule(ruling=Ruling.CORRECT), now=T + 1)
        assert told.get(timeout=5) == f"results {rm.id}"  # (the ruling: nothing before it)
        event_id = store.match_row(rm.id).event_id
        assert standings_record.publish(engine, event_id, 5, {"views": {}})
        assert told.get(timeout=5) == f"standings {event_id} 5"
        assert not standings_record.publish(engine, event_id, 4, {"views": {}})
        with pytest.raises(queue.Empty):
            told.get(timeout=1.0)
    finally:
        listener.stop()
        engine.dispose()


def test_a_forfeit_and_a_result_entered_are_told(postgres_url):
    """Results decided outside a match (a forfeit, a final score entered) are told as results
    of no match named: every process computing the event's standings folds them at once."""
    from event_helpers import make_event

    from grace_arena.record.schedule import enter_result, load_plan, record_forfeit

    plan = make_event(postgres_url, name="cup", rooms=("1",))
    engine = make_engine(postgres_url)
    told: queue.Queue[str] = queue.Queue()
    listener = _listening(engine, told, queue.Queue())
    try:
        first = plan.games[0]
        record_forfeit(engine, "cup", first, first.teams[1])
        assert told.get(timeout=5) == "results"
        assert notices.parse("results") == ("results", [])
        later = next(g for g in load_plan(engine, "cup").games if g.round == 2 and not g.bye)
        enter_result(engine, "cup", later, points={t: 100 - 10 * i for i, t in
                                                   enumerate(later.teams)})  # fmt: skip
        assert told.get(timeout=5) == "results"
    finally:
        listener.stop()
        engine.dispose()


def test_a_listener_cut_off_listens_again_and_says_so(postgres_url):
    engine = make_engine(postgres_url)
    told: queue.Queue[str] = queue.Queue()
    connected: queue.Queue[float] = queue.Queue()
    listener = _listening(engine, told, connected)
    try:
        with engine.begin() as conn:  # the listener's backend, cut off by the server
            cut = conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                    "query LIKE 'LISTEN%' AND pid <> pg_backend_pid() AND datname = "
                    "current_database()"
                )
            ).all()
        assert cut == [(True,)]
        connected.get(timeout=15)  # listening again (its on_connect reads what it missed)
        with engine.begin() as conn:
            notices.notify(conn, "results 9")
        assert told.get(timeout=5) == "results 9"
    finally:
        listener.stop()
        engine.dispose()
    assert not listener.listening.is_set()


def test_sqlite_tells_nothing(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'record.db'}")
    try:
        assert not notices.listens(engine)
        with engine.begin() as conn:
            notices.notify(conn, "results 1")  # (nothing: no error either)
    finally:
        engine.dispose()


def test_a_notice_names_its_kind_and_numbers():
    assert notices.parse("results 3 14") == ("results", [3, 14])
    assert notices.parse("standings 2 40") == ("standings", [2, 40])
    assert notices.parse("results") == ("results", [])  # (too many matches to list)
    assert notices.parse("results x") == ("", [])
    assert notices.parse("") == ("", [])
