"""The server's group commit: rooms' changes handed in together are written in one
transaction; one room's failure is that room's only."""

from __future__ import annotations

import asyncio
import re

import pytest
import virtual_clock
from backends import on_both_backends
from engine_helpers import config

from grace_arena.core.commands import Join, Pause, StartTossup
from grace_arena.record.lease import Holder, LeaseLost, acquire
from grace_arena.server.writer import GroupWriter


class OnTheLoop(GroupWriter):
    """A group writer that commits on the event loop itself rather than in a thread, after
    ``delay`` of the loop's clock (a slow disk): on a virtual clock (tests/virtual_clock.py)
    a change is stored when that clock says. ``handed``: when each change was handed in (the
    loop's time), its events' types and whether it was to sync."""

    def __init__(self, store, delay: float = 0.0) -> None:
        super().__init__(store)
        self.delay = delay
        self.handed: list[tuple[float, list[str], bool]] = []

    async def write(self, match_id, events, holder, *, synced=True):
        now = asyncio.get_running_loop().time()
        self.handed.append((now, [ev.type for ev in events], synced))
        if self.delay:
            await asyncio.sleep(self.delay)
        self.store.append_many([(match_id, events, holder)], synced=synced)
        self.transactions += 1
        self.changes += 1

    def words(self) -> list[float]:
        """When each change that only reveals words was handed in."""
        return [t for t, types, _ in self.handed if types == ["words_revealed"]]


@on_both_backends
def test_changes_of_several_rooms_are_written_in_one_transaction(store):
    matches = [store.create(config(), now=0.0) for _ in range(5)]

    async def scenario() -> None:
        writer = GroupWriter(store)
        decided = []
        for i, rm in enumerate(matches):
            _, state, events = rm.decide_many([Join(team="red", player=f"p{i}", name="P")], now=1)
            decided.append((rm, state, events))
        await asyncio.gather(*(writer.write(rm.id, ev, None) for rm, _, ev in decided))
        assert (writer.transactions, writer.changes) == (1, 5)

    asyncio.run(scenario())
    for i, rm in enumerate(matches):
        assert f"p{i}" in store.open(rm.id).match.state.players["red"]


def _write_together(store, decided, count) -> None:
    """Hand each room's decided events to one group writer at once, ``count`` (a
    ``before_cursor_execute`` listener) seeing every statement: one transaction for all."""
    from sqlalchemy import event as sa_event

    async def scenario() -> None:
        writer = GroupWriter(store)
        await asyncio.gather(*(writer.write(rm.id, ev, None) for rm, ev in decided))
        assert (writer.transactions, writer.changes) == (1, len(decided))

    sa_event.listen(store.engine, "before_cursor_execute", count)
    try:
        asyncio.run(scenario())
    finally:
        sa_event.remove(store.engine, "before_cursor_execute", count)


@on_both_backends
def test_a_group_commit_writes_its_rooms_rows_with_one_insert_per_table(store):
    """Words and buzzes of many rooms in one group commit: one INSERT of event rows and one of
    buzz rows for the whole batch (a round trip each, not one per room), and every room's
    events and buzz read back as decided."""
    from sqlmodel import Session, func, select

    from grace_arena.core.commands import Buzz, Reveal
    from grace_arena.record.models import BuzzRow

    matches = [store.create(config(), now=0.0) for _ in range(6)]
    for i, rm in enumerate(matches):
        rm.handle(Join(team="red", player=f"p{i}", name="P"), now=1)
        rm.handle(StartTossup(), now=2)
    inserts: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        # (on PostgreSQL rows alone are one statement: an INSERT per table in its parts)
        inserts.extend(re.findall(r"INSERT INTO \"?(\w+)", statement, flags=re.IGNORECASE))

    decided = []
    for i, rm in enumerate(matches):
        commands = [Reveal(), Reveal()] + ([Buzz(team="red", player=f"p{i}")] if i % 2 else [])
        _, _, events = rm.decide_many(commands, now=3)
        decided.append((rm, events))

    _write_together(store, decided, count)
    assert sorted(inserts) == ["buzz", "event"]
    for i, (rm, events) in enumerate(decided):
        stored = store.events(rm.id, after=0)
        assert [e.seq for e in stored][-len(events) :] == [e.seq for e in events]
        assert [e.type for e in stored][-len(events) :] == [e.type for e in events]
        with Session(store.engine) as session:
            buzzes = session.exec(
                select(func.count()).select_from(BuzzRow).where(BuzzRow.match_id == rm.id)
            ).one()
        assert buzzes == i % 2


@on_both_backends
def test_rulings_of_many_rooms_are_written_with_one_insert_and_one_update_reading_nothing(store):
    """The rulings of 6 rooms in one group commit (one room's ruled, undone and ruled again
    in the same change; one room's two buzzes ruled wrong then right): their event rows and
    ruling rows with one INSERT each, every buzz row's ruling set by one UPDATE, no row read
    (each would be a round trip to a server record); each buzz row shows the rulings in
    force, as the record read back afresh says."""

    from grace_arena.core.commands import Buzz, Rule, UndoRuling
    from grace_arena.core.events import Ruling

    matches = [store.create(config(), now=0.0) for _ in range(6)]
    for i, rm in enumerate(matches):
        rm.handle(Join(team="red", player=f"r{i}", name="R"), now=1)
        rm.handle(Join(team="blue", player=f"b{i}", name="B"), now=1)
        rm.handle(StartTossup(), now=2)
        rm.handle(Buzz(team="red", player=f"r{i}"), now=3)
    statements: list[str] = []
    full: list[str] = []  # each statement whole, in one line

    def count(conn, cursor, statement, parameters, context, executemany):
        statements.append(" ".join(statement.split()[:3]).upper())
        full.append(" ".join(statement.split()).upper())

    decided = []
    for i, rm in enumerate(matches):
        commands: list = [Rule(ruling=Ruling.CORRECT if i % 2 else Ruling.INCORRECT)]
        if i == 0:  # wrong, undone, right: the buzz shows the ruling in force
            commands = [Rule(ruling=Ruling.INCORRECT), UndoRuling(), Rule(ruling=Ruling.CORRECT)]
        if i == 2:  # red wrong, blue buzzes and is ruled right
            commands += [Buzz(team="blue", player="b2"), Rule(ruling=Ruling.CORRECT)]
        _, _, events = rm.decide_many(commands, now=4)
        decided.append((rm, events))

    _write_together(store, decided, count)
    # the undo in room 0 goes through the ORM (it reads and changes its ruling row): the rows
    # before it are written (a ruling: one UPDATE of its buzz), then the undo (one more),
    # then the rest of the batch (the last); the notice is PostgreSQL's
    reads = [s for s in full if s.startswith("SELECT") and "PG_NOTIFY" not in s]
    assert [re.search(r" FROM (\w+)", r).group(1) for r in reads] == ["RULING"]
    assert statements.count("INSERT INTO RULING") == 2
    assert len([s for s in statements if s.startswith("UPDATE BUZZ")]) == 3
    shown = {
        (rm.id, b.buzz_id): (b.ruling, b.points) for rm in matches for b in store.buzzes(rm.id)
    }
    # (each buzz came at the first word: in power)
    assert shown == {
        (matches[0].id, 1): ("correct", 15),
        (matches[1].id, 1): ("correct", 15),
        (matches[2].id, 1): ("incorrect", -5),
        (matches[2].id, 2): ("correct", 15),
        (matches[3].id, 1): ("correct", 15),
        (matches[4].id, 1): ("incorrect", -5),
        (matches[5].id, 1): ("correct", 15),
    }
    for rm, events in decided:  # and the stored events replay to what was decided
        rm.match.apply(events)
        assert store.open(rm.id).match.state == rm.match.state


@on_both_backends
def test_one_rooms_failure_is_its_own(store):
    ours, theirs = Holder.this_process(), Holder("elsewhere:1:x", "elsewhere", 1)
    kept = store.create(config(), now=0.0, holder=ours)
    lost = store.create(config(), now=0.0, holder=theirs)  # another process serves this one

    async def scenario() -> None:
        writer = GroupWriter(store)
        _, _, good = kept.decide_many([StartTossup()], now=1)
        _, _, bad = lost.decide_many([StartTossup()], now=1)
        results = await asyncio.gather(
            writer.write(kept.id, good, ours), writer.write(lost.id, bad, ours),
            return_exceptions=True,
        )  # fmt: skip
        assert results[0] is None and isinstance(results[1], LeaseLost)

    asyncio.run(scenario())
    assert store.open(kept.id).match.state.tossups_started == 1
    assert store.open(lost.id).match.state.tossups_started == 0
    with pytest.raises(Exception, match="served by"):
        acquire(store.engine, lost.id, ours)


def test_a_slow_commit_delays_one_word_not_the_pace(store):
    """The reader keeps a schedule from the first word: with every commit taking 0.1 s at a
    pace of 4 words a second, the words are still handed in 0.25 s apart (a reader that
    waited a word's time after each commit would take 0.35 s a word). On the test's clock."""
    from grace_arena.core.config import TeamSpec
    from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
    from grace_arena.core.specs import match_config
    from grace_arena.server.room import Room

    packet = load_packet(SAMPLE_PACKET_PATH)
    teams = [TeamSpec(id="red", name="Red")]
    rm = store.create(match_config(packet, teams, wpm=240), now=0.0)
    writer = OnTheLoop(store, delay=0.1)

    async def scenario() -> float:
        room = Room(rm, join_code="SLOW", writer=writer)
        room.start()
        await room.command(StartTossup())  # stored 0.1 s after it was handed in
        started = asyncio.get_running_loop().time()
        await asyncio.sleep(2.6)
        await room.close()
        return started

    started = virtual_clock.run(scenario())
    times = writer.words()
    assert len(times) == 10  # 0.25 s, 0.5 s, ... 2.5 s after the tossup started
    assert [t - started for t in times] == pytest.approx([0.25 * i for i in range(1, 11)])


def _sync_setting(session) -> str:
    """How the transaction of ``session`` commits: SQLite's synchronous (2 FULL, 1 NORMAL),
    PostgreSQL's synchronous_commit."""
    from sqlalchemy import text

    if session.get_bind().dialect.name == "sqlite":
        return str(session.execute(text("PRAGMA synchronous")).scalar())
    return str(session.execute(text("SHOW synchronous_commit")).scalar())


def _pooled_sync_settings(engine, n: int = 5) -> list[str]:
    """:func:`_sync_setting` of ``n`` pooled connections, all of them checked out at once."""
    from contextlib import ExitStack

    from sqlmodel import Session

    with ExitStack() as stack:
        return [_sync_setting(stack.enter_context(Session(engine))) for _ in range(n)]


@on_both_backends
def test_words_revealed_alone_commit_without_a_sync_of_their_own(store, monkeypatch):
    """On SQLite a batch of words revealed is stored (a crash of the server loses nothing)
    without waiting for a disk sync; a batch holding anything else syncs, and the connection
    goes back to syncing after an unsynced commit."""
    from sqlalchemy import text

    import grace_arena.record.store as store_module
    from grace_arena.core.commands import Reveal

    # PostgreSQL runs in a process of its own, which could lose an unsynced commit while the
    # server goes on: there every commit syncs
    synced, unsynced = ("2", "1") if store.engine.dialect.name == "sqlite" else ("on", "on")
    seen: list[str] = []
    write_events = store_module._write_events

    def spying(session, match_id, events, rows=None):
        seen.append(_sync_setting(session))
        write_events(session, match_id, events, rows)

    monkeypatch.setattr(store_module, "_write_events", spying)
    if store.engine.dialect.name == "postgresql":  # rows alone: one statement, committed alone
        import grace_arena.record.one_statement as one_statement

        append_rows = one_statement.append_rows

        def spying_rows(engine, leases, events, buzzes, rulings, notice):
            with engine.connect() as conn:  # as the statement's connection is
                conn.execution_options(isolation_level="AUTOCOMMIT")
                setting = str(conn.execute(text("SHOW synchronous_commit")).scalar())
            seen.extend([setting] * len({row["match_id"] for row in events}))
            return append_rows(engine, leases, events, buzzes, rulings, notice)

        monkeypatch.setattr(one_statement, "append_rows", spying_rows)
    rooms = [store.create(config(), now=0.0) for _ in range(2)]
    for rm in rooms:
        rm.handle(StartTossup(), now=1)
    seen.clear()

    async def scenario() -> None:
        writer = GroupWriter(store)
        words = []
        for rm in rooms:
            _, state, events = rm.decide_many([Reveal()], now=2)
            assert [ev.type for ev in events] == ["words_revealed"]
            words.append((rm, state, events))
        await asyncio.gather(*(writer.write(rm.id, ev, None, synced=False) for rm, _, ev in words))
        assert seen == [unsynced, unsynced] and writer.transactions == 1
        for rm, state, _ in words:
            rm.match.state = state
        # a word with a change that syncs, in one batch: the batch syncs
        seen.clear()
        _, _, word = rooms[0].decide_many([Reveal()], now=3)
        _, _, join = rooms[1].decide_many([Join(team="red", player="p", name="P")], now=3)
        await asyncio.gather(
            writer.write(rooms[0].id, word, None, synced=False),
            writer.write(rooms[1].id, join, None),
        )
        assert seen == [synced, synced]

    asyncio.run(scenario())
    reopened = store.open(rooms[0].id).match.state
    assert reopened.game.position == rooms[0].match.state.game.position + 1
    # every pooled connection syncs again (all of them checked out at once)
    assert _pooled_sync_settings(store.engine) == [synced] * 5


@on_both_backends
def test_a_lost_lease_in_an_unsynced_batch_stores_nothing_and_leaves_every_connection_synced(
    store,
):
    """Words are handed in with the lease's holder and unsynced: a room whose match another
    process took over fails alone, twice over (the second time on connections that know their
    journal mode already), and every pooled connection syncs again afterwards."""
    from grace_arena.core.commands import Reveal

    ours, theirs = Holder.this_process(), Holder("elsewhere:1:x", "elsewhere", 1)
    kept = store.create(config(), now=0.0, holder=ours)
    lost = store.create(config(), now=0.0, holder=theirs)
    for rm in (kept, lost):
        rm.handle(StartTossup(), now=1)

    async def scenario() -> None:
        writer = GroupWriter(store)
        for now in (2, 3):
            _, state, good = kept.decide_many([Reveal()], now=now)
            _, _, bad = lost.decide_many([Reveal()], now=now)
            results = await asyncio.gather(
                writer.write(kept.id, good, ours, synced=False),
                writer.write(lost.id, bad, ours, synced=False),
                return_exceptions=True,
            )
            assert results[0] is None and isinstance(results[1], LeaseLost)
            kept.match.state = state

    asyncio.run(scenario())
    assert store.open(kept.id).match.state.game.position == 1
    assert store.open(lost.id).match.state.game.position == -1
    synced = "2" if store.engine.dialect.name == "sqlite" else "on"
    assert _pooled_sync_settings(store.engine) == [synced] * 5


def test_an_in_memory_sqlite_record_commits_as_it_always_does():
    """Without WAL (an in-memory database) an unsynced commit is an ordinary one."""
    from sqlalchemy import text

    from grace_arena.record.db import make_engine
    from grace_arena.record.store import unsynced_session

    engine = make_engine("sqlite:///:memory:")
    with unsynced_session(engine) as session:
        assert str(session.execute(text("PRAGMA synchronous")).scalar()) == "2"
        session.execute(text("CREATE TABLE t (a INTEGER)"))
        session.execute(text("INSERT INTO t VALUES (1)"))
        session.commit()


def test_a_room_not_reading_waits_for_its_next_change_not_for_a_clock_tick(store, monkeypatch):
    """While a room is not reading, its reader sleeps until the room's next change instead of
    looking again every so often, so that a tossup's first word is due a word's time after
    that tossup started. (Readers that looked every 50 ms put the words of all the rooms of a
    server on the five 50 ms ticks between two words, several rooms' words falling due
    together and waiting for each other.) On the test's clock."""
    from grace_arena.core.config import TeamSpec
    from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
    from grace_arena.core.specs import match_config
    from grace_arena.server import room as room_module

    packet = load_packet(SAMPLE_PACKET_PATH)
    rm = store.create(match_config(packet, [TeamSpec(id="red", name="Red")], wpm=240), now=0.0)
    writer = OnTheLoop(store)
    real_sleep = asyncio.sleep
    naps: list[float] = []

    async def nap(delay, *args, **kwargs):
        naps.append(delay)
        return await real_sleep(delay, *args, **kwargs)

    async def scenario() -> tuple[list[float], list[float], list[float], float]:
        room = room_module.Room(rm, join_code="IDLE", writer=writer)
        monkeypatch.setattr(room_module.asyncio, "sleep", nap)
        room.start()
        await real_sleep(0.3)  # nothing to read
        idle = list(naps)
        started = asyncio.get_running_loop().time()
        await room.command(StartTossup())
        await real_sleep(0.8)
        reading = list(naps[len(idle) :])
        await room.command(Pause())
        await real_sleep(0.3)
        paused = list(naps[len(idle) + len(reading) :])
        await room.close()
        return idle, reading, paused, started

    idle, reading, paused, started = virtual_clock.run(scenario())
    assert idle == [] and paused == []
    assert reading and reading[0] == pytest.approx(0.25)  # a word's time from its start
    assert [t - started for t in writer.words()] == pytest.approx([0.25, 0.5, 0.75])


def test_a_room_hands_in_its_words_unsynced_and_everything_else_synced(store):
    from grace_arena.core.config import TeamSpec
    from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
    from grace_arena.core.specs import match_config
    from grace_arena.server.room import Room

    packet = load_packet(SAMPLE_PACKET_PATH)
    rm = store.create(match_config(packet, [TeamSpec(id="red", name="Red")], wpm=600), now=0.0)
    writer = OnTheLoop(store)

    async def scenario() -> None:
        room = Room(rm, join_code="SYNC", writer=writer)
        room.start()
        await room.command(StartTossup())
        await asyncio.sleep(0.45)  # between two words (due 0.1 s apart from the start)
        await room.command(Join(team="red", player="p", name="P"))
        await room.close()

    virtual_clock.run(scenario())
    handed = [(types, synced) for _, types, synced in writer.handed]
    words = [synced for types, synced in handed if types == ["words_revealed"]]
    others = [(types, synced) for types, synced in handed if "words_revealed" not in types]
    assert words == [False] * 4
    assert others == [(["tossup_started"], True), (["player_joined"], True)]


def test_rows_alone_are_one_statement_on_postgresql_and_store_what_a_transaction_would(
    postgres_url, monkeypatch
):
    """On PostgreSQL a group commit that writes rows alone (words, buzzes won and refused, a
    tossup started, rulings: every room's lease fenced, a notice sent) is one statement
    committed on its own: one round trip. The rows it stores, every column (a buzz row shows
    its rulings in force: ruled in the same commit as the buzz, or later, after a prompt),
    equal what the ordinary transaction stores for the same play in other matches, and a
    match whose lease was taken over meanwhile makes it store nothing and refuse the commit,
    naming the match."""
    from sqlalchemy import event as sa_event
    from sqlmodel import Session, select

    import grace_arena.record.store as store_module
    from grace_arena.core.commands import Buzz, Reveal, Rule
    from grace_arena.core.events import Ruling
    from grace_arena.record.db import make_engine, upgrade
    from grace_arena.record.models import BuzzRow, EventRow, RulingRow
    from grace_arena.record.store import MatchStore

    upgrade(postgres_url)
    engine = make_engine(postgres_url)
    store = MatchStore(engine)
    holder = Holder.this_process()
    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    def play(rooms, now):
        """Each room: players join (and in room 2 a buzz is prompted, in room 3 a buzz is
        made); then each room's batch: room 0 words, room 1 words and a buzz won and one
        refused, room 2 its buzz ruled right, room 3 its buzz ruled wrong, the other team's
        buzz and its ruling. The batch's events of every room."""
        batch = []
        for i, rm in enumerate(rooms):
            rm.handle(Join(team="red", player="r", name="R"), now=now)
            rm.handle(Join(team="blue", player="b", name="B"), now=now)
            commands: list = [StartTossup(), Reveal(), Reveal()]
            if i == 1:
                commands += [Buzz(team="red", player="r"), Buzz(team="blue", player="b")]
            if i in (2, 3):
                rm.handle(StartTossup(), now=now)
                rm.handle(Reveal(), now=now)
                rm.handle(Buzz(team="red", player="r"), now=now)
                commands = [Rule(ruling=Ruling.CORRECT if i == 2 else Ruling.INCORRECT)]
            if i == 2:
                rm.handle(Rule(ruling=Ruling.PROMPT), now=now)
            if i == 3:
                commands += [Buzz(team="blue", player="b"), Rule(ruling=Ruling.CORRECT)]
            _, _, events = rm.decide_many(commands, now=now + 1)
            batch.append((rm.id, events, rm.fence))
        return batch

    def stored(rooms):
        with Session(engine) as session:
            rows = []
            for table, key in (
                (EventRow, EventRow.seq),
                (BuzzRow, BuzzRow.buzz_id),
                (RulingRow, RulingRow.seq),
            ):
                for rm in rooms:
                    for row in session.exec(
                        select(table).where(table.match_id == rm.id).order_by(key)
                    ):
                        rows.append(row.model_dump(exclude={"match_id", "stored_at"}))
            return rows

    try:
        fast = [store.create(config(), now=0.0, holder=holder) for _ in range(4)]
        ordinary = [store.create(config(), now=0.0, holder=holder) for _ in range(4)]
        batch = play(fast, 1.0)
        sa_event.listen(engine, "before_cursor_execute", count)
        try:
            store.append_many(batch)
        finally:
            sa_event.remove(engine, "before_cursor_execute", count)
        assert len(statements) == 1 and statements[0].lstrip().startswith("WITH fenced AS")
        assert "pg_notify" in statements[0]  # a tossup started: the results change

        monkeypatch.setattr(store_module, "_rows_alone", lambda batch, fenced: False)
        store.append_many(play(ordinary, 1.0))
        monkeypatch.undo()
        assert stored(fast) == stored(ordinary)
        with engine.connect() as conn:  # its connection back in the pool commits no more alone
            assert conn.connection.driver_connection.autocommit is False
        assert sum("undone_seq" in row for row in stored(fast)) == 4  # the ruling rows
        shown = [(row["buzz_id"], row["ruling"], row["points"]) for row in stored(fast)
                 if "buzz_id" in row and "event_seq" in row]  # fmt: skip
        assert shown == [(1, None, None), (2, None, None), (1, "correct", 15),
                         (1, "incorrect", -5), (2, "correct", 15)]  # fmt: skip
        assert any(row.get("outcome") == "lost_race" for row in stored(fast))

        # a ruling on a buzz the record does not have: nothing stored, the ordinary way says
        from grace_arena.core.events import Ruled
        from grace_arena.record.errors import RecordError

        ruled = next(ev for ev in batch[2][1] if isinstance(ev, Ruled))
        stray = ruled.model_copy(update={"seq": batch[2][1][-1].seq + 1, "buzz_id": 99})
        before = [store.event_count(rm.id) for rm in fast]
        with pytest.raises(RecordError, match="ruling on unknown buzz 99"):
            store.append_many([(fast[2].id, [stray], fast[2].fence)])
        assert [store.event_count(rm.id) for rm in fast] == before

        # a lease taken over meanwhile: nothing stored, the commit refused naming the match
        acquire(engine, fast[2].id, Holder("elsewhere:1:x", "elsewhere", 1), ttl=-1.0)
        before = [store.event_count(rm.id) for rm in fast]
        more = []
        for rm in fast:
            _, _, events = rm.decide_many([Reveal()], now=5.0)
            more.append((rm.id, events, rm.fence))
        with pytest.raises(LeaseLost, match=f"match {fast[2].id}"):
            store.append_many(more)
        assert [store.event_count(rm.id) for rm in fast] == before
    finally:
        engine.dispose()


def test_a_one_statement_commit_takes_what_a_transaction_takes_and_refuses_what_it_refuses(
    postgres_url,
):
    """Rooms decided at times given as an int and as a float in one commit are stored (a
    column's values go as one type); a value longer than its column is refused, as the
    ordinary transaction refuses it, not cut, and nothing of the batch is stored."""
    from sqlalchemy.exc import DataError
    from sqlmodel import Session, select

    from grace_arena.core.commands import Buzz, Reveal
    from grace_arena.record.db import make_engine, upgrade
    from grace_arena.record.models import BuzzRow, EventRow
    from grace_arena.record.store import MatchStore

    upgrade(postgres_url)
    engine = make_engine(postgres_url)
    store = MatchStore(engine)
    holder = Holder.this_process()
    try:
        rooms = [store.create(config(), now=0.0, holder=holder) for _ in range(2)]
        for rm in rooms:
            rm.handle(Join(team="red", player="r", name="R"), now=1)
            rm.handle(StartTossup(), now=1)
        batch = []
        for rm, now in zip(rooms, (3, 3.5), strict=True):
            _, _, events = rm.decide_many([Reveal()], now=now)
            batch.append((rm.id, events, rm.fence))
            rm.match.apply(events)
        store.append_many(batch)
        with Session(engine) as session:
            times = session.exec(
                select(EventRow.t).where(EventRow.type == "words_revealed").order_by(EventRow.t)
            ).all()
        assert times == [3.0, 3.5]

        _, _, events = rooms[0].decide_many([Buzz(team="red", player="r")], now=4.0)
        long = [ev.model_copy(update={"player": "p" * 150}) if ev.type == "buzz_accepted"
                else ev for ev in events]  # fmt: skip
        before = store.event_count(rooms[0].id)
        with pytest.raises(DataError, match="too long"):
            store.append_many([(rooms[0].id, long, rooms[0].fence)])
        assert store.event_count(rooms[0].id) == before
        with Session(engine) as session:
            assert session.exec(select(BuzzRow)).all() == []
    finally:
        engine.dispose()
