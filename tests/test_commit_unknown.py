"""Commits whose outcome is unknown: the connection drops at COMMIT (a PostgreSQL server
restarting, a network blip) after the server may have stored the events. Before trying again
the room asks the record how far the match got: events stored are applied, not written again,
and only what did not land is decided afresh, so that no room is wedged by a duplicate seq.

On PostgreSQL the cut is real: a proxy between the app and the server drops the connection as
COMMIT goes through (after the server has it and before its reply reaches the app, or before
the server gets it), or as a commit that is one statement committing itself goes through
(``grace_arena.record.one_statement``). On SQLite an error is raised as the commit returns (or
just before it).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from backends import BACKENDS
from engine_helpers import config
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from grace_arena.core.commands import Buzz, Join, Rule, StartTossup
from grace_arena.core.events import Ruling, event_to_dict
from grace_arena.core.match import Match
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore
from grace_arena.server.pipeline import CommitPipeline, RoomClosed
from grace_arena.server.writer import GroupWriter

# -- cutting the connection at COMMIT -----------------------------------------------------------

#: ``landed``: the server gets COMMIT (and commits); its reply never reaches the app.
#: ``lost``: the connection drops as the app sends COMMIT; the server never gets it.
MODES = ("landed", "lost")


class CommitCutter:
    """A TCP proxy on the loopback between the app and a PostgreSQL server. Traffic goes
    through untouched until :meth:`arm`; then the next COMMIT (a simple query message, which
    is how psycopg commits) drops both sides of its connection: in ``landed`` mode once the
    server has answered it, before the answer is forwarded; in ``lost`` mode before the server
    gets it."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.mode: str | None = None
        self.statement: bytes | None = None
        self.cuts = 0
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, mode: str, statement: bytes | None = None) -> None:
        """Cut the next COMMIT, or with ``statement`` the next statement whose text holds it
        (a statement that commits itself: the server has it whole once it has its Parse
        message and the Sync after it, which it answers after executing it)."""
        assert mode in MODES
        with self._lock:
            self.mode, self.statement = mode, statement

    def close(self) -> None:
        self.listener.close()
        for sock in list(self._sockets):
            self._drop(sock)

    def _drop(self, *socks: socket.socket) -> None:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            self._sockets.discard(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self._sockets |= {client, server}
            cut = {"waiting": False}
            threading.Thread(
                target=self._from_client, args=(client, server, cut), daemon=True
            ).start()
            threading.Thread(
                target=self._from_server, args=(client, server, cut), daemon=True
            ).start()

    def _watched(self, message: bytes) -> bool:
        if self.statement is not None:
            return message[:1] == b"P" and self.statement in message
        return message[:1] == b"Q" and message[5:].rstrip(b"\0").strip().upper() == b"COMMIT"

    def _take(self) -> str | None:
        with self._lock:
            mode, self.mode = self.mode, None
            if mode is not None:
                self.cuts += 1
            return mode

    def _from_client(self, client: socket.socket, server: socket.socket, cut: dict) -> None:
        """Forward the client's messages whole, one by one (a startup, SSL or GSS request has
        no type byte; every later message does), watching for COMMIT."""
        buffer = b""
        started = False
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._drop(client, server)
                return
            buffer += data
            while True:
                head = 0 if started else -1
                if len(buffer) < 5 + head:
                    break
                (length,) = struct.unpack("!I", buffer[1 + head : 5 + head])
                size = 1 + head + length
                if len(buffer) < size:
                    break
                message, buffer = buffer[:size], buffer[size:]
                if not started:
                    (code,) = struct.unpack("!I", message[4:8])
                    started = code == 196608  # protocol 3.0: the startup message itself
                elif self._watched(message):
                    mode = self._take()
                    if mode == "lost":
                        self._drop(client, server)
                        return
                    if mode == "landed":
                        cut["waiting"] = True
                try:
                    server.sendall(message)
                except OSError:
                    self._drop(client, server)
                    return

    def _from_server(self, client: socket.socket, server: socket.socket, cut: dict) -> None:
        while True:
            try:
                data = server.recv(65536)
            except OSError:
                data = b""
            if not data or cut["waiting"]:  # the server answered COMMIT: it is done there
                self._drop(client, server)
                return
            try:
                client.sendall(data)
            except OSError:
                self._drop(client, server)
                return


class SqliteCutter:
    """What :class:`CommitCutter` does, for a SQLite record: once armed, the next commit of
    the store's engine raises a dropped connection's error, after it is done (``landed``) or
    before it starts (``lost``)."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.mode: str | None = None
        self.cuts = 0
        event.listen(Session, "before_commit", self._before)
        event.listen(Session, "after_commit", self._after)

    def arm(self, mode: str) -> None:
        assert mode in MODES
        self.mode = mode

    def close(self) -> None:
        event.remove(Session, "before_commit", self._before)
        event.remove(Session, "after_commit", self._after)

    def _ours(self, session) -> bool:
        return session.get_bind().engine is self.engine

    def _cut(self, mode: str, session) -> None:
        if self.mode == mode and self._ours(session):
            self.mode = None
            self.cuts += 1
            raise OperationalError(
                "COMMIT", None, ConnectionError("the connection dropped at COMMIT")
            )

    def _before(self, session) -> None:
        self._cut("lost", session)

    def _after(self, session) -> None:
        self._cut("landed", session)


def _through_a_cutter(url: str) -> tuple:
    """An engine on the PostgreSQL record at ``url`` (migrated) whose connections go through
    a :class:`CommitCutter`, and the cutter."""
    upgrade(url)
    real = make_url(url)
    cutter = CommitCutter(real.host or "127.0.0.1", real.port or 5432)
    through = real.set(host="127.0.0.1", port=cutter.port).update_query_dict(
        {"sslmode": "disable", "gssencmode": "disable"}
    )
    return make_engine(through.render_as_string(hide_password=False)), cutter


@pytest.fixture(params=BACKENDS)
def cut_store(request, tmp_path) -> Iterator[tuple[MatchStore, CommitCutter | SqliteCutter]]:
    """A record on each backend in turn whose connection can be cut at COMMIT."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'record.db'}"
        upgrade(url)
        engine = make_engine(url)
        cutter: CommitCutter | SqliteCutter = SqliteCutter(engine)
    else:
        engine, cutter = _through_a_cutter(request.getfixturevalue("postgres_url"))
    try:
        yield MatchStore(engine), cutter
    finally:
        engine.dispose()
        cutter.close()


def _stored(store: MatchStore, match_id: int) -> list[dict]:
    return [event_to_dict(ev) for ev in store.events(match_id)]


def _same_as_the_record(store: MatchStore, rm) -> None:
    """The live match is the record's, replayed, and the record has each seq once."""
    stored = store.events(rm.id)
    seqs = [ev.seq for ev in stored]
    assert seqs == sorted(set(seqs))
    assert rm.match.state == Match.replay(stored).state


# -- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("grouped", [False, True], ids=["alone", "group_commit"])
def test_a_commit_cut_after_or_before_the_server_got_it_is_stored_once(cut_store, grouped, caplog):
    """The connection drops at COMMIT three times: once before the server has it (nothing
    stored: the batch is decided again and stored), once after it committed (stored: the
    callers get the stored events, nothing is written again), and the room goes on."""
    store, cutter = cut_store
    rm = store.create(config(), now=0.0)
    told: list[list[dict]] = []

    async def scenario() -> list:
        writer = GroupWriter(store) if grouped else None
        pipeline = CommitPipeline(
            rm, writer, on_committed=lambda evs: told.append([event_to_dict(e) for e in evs])
        )
        cutter.arm("lost")
        first = await pipeline.submit(Join(team="red", player="r1", name="R"))
        cutter.arm("landed")
        batch = [  # one batch: decided and committed together
            pipeline.submit(Join(team="blue", player="b1", name="B")),
            pipeline.submit(StartTossup()),
            pipeline.submit(StartTossup()),  # refused: a tossup is being read
        ]
        second = await asyncio.gather(*batch, return_exceptions=True)
        third = await pipeline.submit(Buzz(team="blue", player="b1"))
        await pipeline.close(RoomClosed.stopping())
        return [first, *second, third]

    first, joined, started, again, buzzed = asyncio.run(scenario())
    assert cutter.cuts == 2
    # the batch cut after the server had it was found in the record, once
    assert caplog.text.count("not written again") == 1
    assert [ev.type for ev in first] == ["player_joined"]
    assert [ev.type for ev in joined] == ["player_joined"]
    assert started[0].type == "tossup_started"
    assert "cannot start tossup" in str(again)
    assert [ev.type for ev in buzzed] == ["buzz_accepted"]
    stored = _stored(store, rm.id)
    # what the callers got is what the record holds, once, and what the room was told
    landed = [event_to_dict(ev) for ev in [*first, *joined, *started, *buzzed]]
    assert stored[-len(landed) :] == landed
    assert [ev for evs in told for ev in evs] == landed
    _same_as_the_record(store, rm)


def test_rooms_committed_together_when_the_connection_dropped_each_go_on(cut_store):
    """Three rooms' changes are in the one transaction that was cut after COMMIT reached
    the server: each room finds its own events stored and goes on from there."""
    store, cutter = cut_store
    matches = [store.create(config(), now=0.0) for _ in range(3)]

    async def scenario() -> tuple[list, list, GroupWriter]:
        writer = GroupWriter(store)
        pipelines = [CommitPipeline(rm, writer, on_committed=lambda evs: None) for rm in matches]
        cutter.arm("landed")
        joins = [Join(team="red", player=f"r{i}", name=f"R{i}") for i in range(len(pipelines))]
        joined = await asyncio.gather(*(p.submit(j) for p, j in zip(pipelines, joins, strict=True)))
        started = await asyncio.gather(*(p.submit(StartTossup()) for p in pipelines))
        for p in pipelines:
            await p.close(RoomClosed.stopping())
        return joined, started, writer

    joined, started, writer = asyncio.run(scenario())
    assert cutter.cuts == 1
    assert writer.transactions == 1  # the starts; the joins were not written again
    for i, rm in enumerate(matches):
        assert [ev.player for ev in joined[i]] == [f"r{i}"]
        assert [ev.type for ev in started[i]] == ["tossup_started"]
        assert _stored(store, rm.id)[-2:] == [
            event_to_dict(joined[i][0]),
            event_to_dict(started[i][0]),
        ]
        _same_as_the_record(store, rm)


def test_a_room_behind_its_record_catches_up_instead_of_writing_the_same_seq(cut_store):
    """Events the record holds and the live match never took (an attempt that landed while
    its outcome was lost): the next command meets their seq in the record. The room applies
    what is stored and decides the command on it, once, instead of failing every command
    after it on the same duplicate seq."""
    store, _ = cut_store
    rm = store.create(config(), now=0.0)
    _, _, events = rm.decide_many([Join(team="red", player="r1", name="R"), StartTossup()], now=1)
    store.append(rm.id, events)  # stored; the live match does not know

    async def scenario() -> list:
        told: list = []
        pipeline = CommitPipeline(rm, None, on_committed=told.extend)
        joined = await pipeline.submit(Join(team="blue", player="b1", name="B"))
        buzzed = await pipeline.submit(Buzz(team="red", player="r1"))
        return [joined, buzzed, told]

    async def run() -> list:
        try:
            return await scenario()
        except Exception as exc:  # refused for the duplicate seq
            return [exc]

    outcome = asyncio.run(run())
    assert not isinstance(outcome[0], Exception), outcome[0]
    joined, buzzed, told = outcome
    assert [ev.seq for ev in joined] == [events[-1].seq + 1]
    assert [ev.type for ev in buzzed] == ["buzz_accepted"]
    # the room was told what it had not known, then its own changes
    assert [ev.seq for ev in told] == [ev.seq for ev in [*events, *joined, *buzzed]]
    _same_as_the_record(store, rm)


def test_a_commit_in_one_statement_cut_after_or_before_the_server_got_it_is_stored_once(
    postgres_url, caplog
):
    """On PostgreSQL a commit that only adds rows is one statement that commits itself (no
    COMMIT): the connection drops as it goes, once before the server has it (nothing stored:
    decided again and stored) and once after the server executed it (stored: found in the
    record, not written again), and the room goes on, each event stored once."""
    engine, cutter = _through_a_cutter(postgres_url)
    store = MatchStore(engine)
    rm = store.create(config(), now=0.0)
    told: list[list[dict]] = []

    async def scenario() -> list:
        writer = GroupWriter(store)
        pipeline = CommitPipeline(
            rm, writer, on_committed=lambda evs: told.append([event_to_dict(e) for e in evs])
        )
        joined = await pipeline.submit(Join(team="red", player="r1", name="R"))
        cutter.arm("lost", statement=b"WITH fenced AS")
        started = await pipeline.submit(StartTossup())
        cutter.arm("landed", statement=b"WITH fenced AS")
        buzzed = await pipeline.submit(Buzz(team="red", player="r1"))
        ruled = await pipeline.submit(Rule(ruling=Ruling.CORRECT))
        await pipeline.close(RoomClosed.stopping())
        return [joined, started, buzzed, ruled]

    try:
        with caplog.at_level("INFO"):
            joined, started, buzzed, ruled = asyncio.run(scenario())
        assert cutter.cuts == 2
        assert caplog.text.count("not written again") == 1
        assert [ev.type for ev in started] == ["tossup_started"]
        assert [ev.type for ev in buzzed] == ["buzz_accepted"]
        assert ruled[0].type == "ruled"
        stored = _stored(store, rm.id)
        # each event the callers got is stored once, and the room was told exactly the record
        # (the clock's time given back after the outage included)
        for ev in [*joined, *started, *buzzed, *ruled]:
            assert stored.count(event_to_dict(ev)) == 1
        assert [ev for evs in told for ev in evs] == stored[1:]
        _same_as_the_record(store, rm)
    finally:
        engine.dispose()
        cutter.close()
