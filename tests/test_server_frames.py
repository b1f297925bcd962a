"""Broadcast frames written straight to the socket, and the order of messages kept."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest
from live import LiveServer, clients, moderator, player, two_teams
from websockets.frames import Frame

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server import frames
from grace_arena.server.app import UVICORN_OPTIONS, Settings
from grace_arena.server.connection import Connection, ConnState
from grace_arena.server.frames import (
    WRITE_NOW,
    FrameWritingProtocol,
    text_frame,
    uvicorn_mismatches,
    websocket_protocol,
)


def _connection(written: list[bytes]) -> Connection:
    def write_now(data: bytes, frame: bytes | None = None) -> bool:
        written.append(frame or data)
        return True

    ws = SimpleNamespace(scope={"extensions": {WRITE_NOW: {"write_text": write_now}}})
    return Connection(ws)  # type: ignore[arg-type]


def test_a_direct_write_never_overtakes_a_queued_message():
    async def run() -> tuple[list[bytes], list[str]]:
        written: list[bytes] = []
        conn = _connection(written)
        assert conn.write_now(b"first", text_frame(b"first"))
        conn.send("queued")  # e.g. a reply to this client only
        assert not conn.write_now(b"second")  # must wait behind "queued"
        conn.send("second")
        return written, [conn.queue.get_nowait(), conn.queue.get_nowait()]

    written, queued = asyncio.run(run())
    assert written == [text_frame(b"first")] and queued == ["queued", "second"]


def test_no_direct_write_without_the_extension_or_while_the_writer_sends():
    async def run() -> None:
        plain = Connection(SimpleNamespace(scope={}))  # type: ignore[arg-type]
        assert not plain.write_now(b"x")
        conn = _connection([])
        conn._writing = True
        assert not conn.write_now(b"x")
        conn._writing = False
        conn.state = ConnState.CLOSED
        assert not conn.write_now(b"x")

    asyncio.run(run())


def test_text_frame_is_a_final_unmasked_text_frame():
    data = "Ω".encode() * 200  # long enough for a 16-bit length
    frame = text_frame(data)

    def read_exact(n: int):
        nonlocal frame
        chunk, frame = frame[:n], frame[n:]
        yield from ()
        return chunk

    parser = Frame.parse(read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        parsed = done.value
    assert parsed.fin and parsed.opcode.name == "TEXT" and parsed.data == data and not frame


def _every_word_reaches_every_player_in_order(server: LiveServer, direct: bool) -> None:
    """A tossup read at 3000 wpm to a moderator and six players: each player gets every word's
    state, in order; ``direct``: through the frame writer, else through the ASGI send."""
    mod = moderator(server)
    players = [player(server, "red" if i % 2 else "blue", f"P{i}") for i in range(6)]
    with clients(mod, *players):
        conns = [c for c in server.room().connections if c.role is not None]
        assert len(conns) == 7
        assert all((c._write_now is not None) is direct for c in conns)
        # asyncio's own loop, even with uvloop installed (for the precompute workers)
        loop = server.server.servers[0].get_loop()
        assert type(loop).__module__.startswith("asyncio"), type(loop)
        mod.send(type="set_pace", wpm=3000)
        mod.send(type="start_tossup")
        mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 30, timeout=10)
        mod.send(type="pause")
        for p in players:
            p.state(lambda s: s["match"]["paused"], timeout=10)
            positions = [
                m["tossup"]["position"]
                for m in p.received
                if m.get("type") == "state" and m.get("tossup")
            ]
            assert len(positions) >= 30
            assert positions == sorted(positions)  # every word's state, none out of order
            assert positions[-1] - positions[0] + 1 == len(set(positions))


def test_a_real_server_writes_states_directly_and_in_order(server):
    _every_word_reaches_every_player_in_order(server, direct=True)


def test_uvicorn_still_has_what_frame_writing_relies_on(server):
    """Fails (never skips) on a uvicorn whose internals moved: the class at start-up, then a
    real connection's attributes."""
    assert uvicorn_mismatches() == []
    assert websocket_protocol() is FrameWritingProtocol
    assert UVICORN_OPTIONS["ws"] is FrameWritingProtocol
    with clients(moderator(server)):
        (conn,) = server.room().connections
        protocol = conn._write_now.__self__
        assert isinstance(protocol, FrameWritingProtocol)
        assert uvicorn_mismatches(protocol) == []


def test_write_now_says_no_rather_than_raising_when_an_attribute_is_gone():
    written: list[bytes] = []
    transport = SimpleNamespace(
        is_closing=lambda: False, get_write_buffer_size=lambda: 0, write=written.append
    )
    protocol = FrameWritingProtocol.__new__(FrameWritingProtocol)  # no attributes at all
    assert protocol.write_now(b"x", text_frame(b"x")) is False
    protocol.abort()  # no transport: nothing to drop
    protocol.transport = transport
    protocol.close_sent = False
    protocol.handshake_complete, protocol.initial_response = True, None
    protocol.writable = asyncio.Event()
    protocol.writable.set()
    assert protocol.write_now(b"x", text_frame(b"x")) is False  # no conn
    protocol.conn = SimpleNamespace(extensions=[])
    assert protocol.write_now(b"x", text_frame(b"x")) is True
    assert protocol.write_now(b"x") is False  # conn without send_text
    assert written == [text_frame(b"x")]


@pytest.fixture
def fresh_checks(monkeypatch):
    """The frame writer's checks made again in this test, and as they were after it."""
    websocket_protocol.cache_clear()
    monkeypatch.setattr(frames, "_connections_match", None)
    yield
    websocket_protocol.cache_clear()


@pytest.mark.parametrize("what", ["class", "connection"])
def test_without_the_internals_broadcasts_go_through_send(
    db_url, monkeypatch, caplog, fresh_checks, what
):
    """uvicorn's class (at start-up) or a connection's attributes (at the first connection)
    not as expected: one warning, no extension in any scope, and a broadcast reaches every
    client in order through the ASGI send."""
    missing = {"class": "run_asgi", "connection": "a connection's writable"}[what]

    def mismatches(protocol=None):
        return [missing] if what == "class" or protocol is not None else []

    monkeypatch.setattr(frames, "uvicorn_mismatches", mismatches)
    monkeypatch.setitem(UVICORN_OPTIONS, "ws", websocket_protocol())
    expected_ws = "websockets-sansio" if what == "class" else FrameWritingProtocol
    assert UVICORN_OPTIONS["ws"] == expected_ws
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s3cret", first_match=two_teams()
    )
    with caplog.at_level(logging.WARNING, logger=frames.__name__), LiveServer(settings) as live:
        _every_word_reaches_every_player_in_order(live, direct=False)
    warnings = [r for r in caplog.records if r.name == frames.__name__]
    assert len(warnings) == 1 and missing in warnings[0].getMessage()
    assert warnings[0].levelno == logging.WARNING


@pytest.mark.parametrize("freeze", [False, True])
def test_a_server_process_freezes_what_it_loaded_at_start(tmp_path, freeze):
    """``grace-arena serve`` sets ``freeze_gc``: a full collection then skips what start-up
    loaded, instead of stopping the event loop ~100 ms in the middle of a reveal, and full
    collections come seldom (``grace_arena.server.collector``); ``/api/health`` times them."""
    import gc

    from fastapi.testclient import TestClient

    from grace_arena.server import collector
    from grace_arena.server.app import create_app

    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'r.db'}", packets=[SAMPLE_PACKET_PATH], freeze_gc=freeze
    )
    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    try:
        with TestClient(create_app(settings)) as client:
            health = client.get("/api/health")
            assert health.status_code == 200
            assert (gc.get_freeze_count() > 0) is freeze
            # the young generations collected less often (full passes come seldom), and every
            # pass timed
            assert (gc.get_threshold() == collector.THRESHOLDS) is freeze
            if not freeze:
                assert health.json()["gc_full_passes"] is None
                return
            full = collector.pauses.counts[2]
            gc.collect()
            health = client.get("/api/health").json()
            assert health["gc_full_passes"] == full + 1
            assert 0 < health["gc_pause_p99_ms"] <= health["gc_pause_max_ms"]
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        collector.pauses.remove()
