"""Broadcast frames written straight to the socket, and the order of messages kept."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from live import clients, moderator, player
from websockets.frames import Frame

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings
from grace_arena.server.connection import Connection, ConnState
from grace_arena.server.frames import WRITE_NOW, text_frame


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


def test_a_real_server_writes_states_directly_and_in_order(server):
    mod = moderator(server)
    players = [player(server, "red" if i % 2 else "blue", f"P{i}") for i in range(6)]
    with clients(mod, *players):
        conns = [c for c in server.room().connections if c.role is not None]
        assert conns and all(c._write_now is not None for c in conns)
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


@pytest.mark.parametrize("freeze", [False, True])
def test_a_server_process_freezes_what_it_loaded_at_start(tmp_path, freeze):
    """``grace-arena serve`` sets ``freeze_gc``: a full collection then skips what start-up
    loaded, instead of stopping the event loop ~100 ms in the middle of a reveal."""
    import gc

    from fastapi.testclient import TestClient

    from grace_arena.server.app import create_app

    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'r.db'}", packets=[SAMPLE_PACKET_PATH], freeze_gc=freeze
    )
    assert gc.get_freeze_count() == 0
    try:
        with TestClient(create_app(settings)) as client:
            assert client.get("/api/health").status_code == 200
            assert (gc.get_freeze_count() > 0) is freeze
    finally:
        gc.unfreeze()
