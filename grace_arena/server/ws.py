"""The websocket endpoint, as transport: a limit of connections per address, frames read,
sized, rate-limited and parsed into messages, which the connection's session handles
(``sessions.py``); what the session sends goes out through the connection's queue
(``connection.py``). No exception reaches the ASGI server: a failure is logged and the
connection closed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from grace_arena.protocol import ErrorMsg, parse_client
from grace_arena.server.arena import Settings
from grace_arena.server.connection import Connection, LoopWatch, RateLimit
from grace_arena.server.sessions import Lobby, Received, Session

log = logging.getLogger(__name__)


async def serve_websocket(lobby: Lobby, ws: WebSocket) -> None:
    """One websocket, from its upgrade to its end: a limit per address, then its session."""
    arena = lobby.arena
    settings = arena.settings
    address = ws.client.host if ws.client else "?"
    if arena.connections_from[address] >= settings.max_connections_per_address:
        await ws.close(code=1008, reason="too many connections from this address")
        return
    arena.connections_from[address] += 1
    lobby.loop_watch.start()
    try:
        await ws.accept()
        conn = Connection(
            ws,
            rate=RateLimit(settings.rate_per_second, settings.rate_burst),
            max_queue_bytes=settings.max_queue_bytes,
        )
        writer = asyncio.create_task(conn.writer())
        session = Session(
            lobby, conn, lambda timeout: receive(settings, conn, timeout, lobby.loop_watch)
        )
        try:
            await session.run()
        except WebSocketDisconnect:
            pass
        except Exception:  # a bug: logged, and the connection closed (the client reconnects)
            log.exception("a websocket session failed")
            conn.close(1011, "server error: reconnect")
        finally:
            session.leave()
            conn.end()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 2.0)
            if not writer.done():
                writer.cancel()
    except WebSocketDisconnect:
        pass
    finally:
        arena.connections_from[address] -= 1
        if arena.connections_from[address] <= 0:
            del arena.connections_from[address]
        if not arena.connections_from:  # the last connection is gone
            lobby.loop_watch.stop()


async def receive(
    settings: Settings, conn: Connection, timeout: float | None, watch: LoopWatch | None = None
) -> Received | None:
    """The connection's next message, parsed; None after an error reply (too large, a flood,
    malformed). Raises ``WebSocketDisconnect`` when the client is gone. Stamped when it was
    read, with how long it may have waited for a busy loop before (``watch``)."""
    async with asyncio.timeout(timeout):  # (wait_for may swallow a cancellation on 3.11)
        frame = await conn.ws.receive()
    wall, mono = time.time(), time.monotonic()
    read_delay = watch.read_delay(mono) if watch is not None else 0.0
    if frame["type"] == "websocket.disconnect":
        code = frame.get("code", 1000)
        # a close frame with a code of its own: it left (no code, 1005, is what a dropped
        # network looks like too; the pages close with 1000)
        conn.left = code in (1000, 1001)
        raise WebSocketDisconnect(code)
    conn.heard_at = mono
    raw = frame.get("text")
    if raw is None:  # a binary frame
        _error(conn, "bad_message", "binary frames are not part of the protocol: send JSON text")
        return None
    limit = settings.max_message_bytes
    size = len(raw.encode("utf-8", "surrogatepass"))
    if size > limit:
        _error(conn, "too_large", f"message of {size} bytes; the limit is {limit}")
        return None
    if not conn.rate.allow(mono):
        _error(conn, "rate_limited", "too many messages; slow down", _message_type(raw))
        return None
    try:
        return Received(parse_client(raw), wall, mono, read_delay)
    except ValidationError as exc:
        _error(conn, "bad_message", _explain(exc), _message_type(raw))
        return None


def _error(conn: Connection, code: str, message: str, in_reply_to: str | None = None) -> None:
    conn.send_model(ErrorMsg(code=code, message=message, in_reply_to=in_reply_to))  # type: ignore[arg-type]


def _message_type(raw: str) -> str | None:
    with contextlib.suppress(ValueError, AttributeError, RecursionError):
        value = json.loads(raw).get("type")
        return value if isinstance(value, str) else None
    return None


def _explain(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"malformed message: {where + ': ' if where else ''}{first.get('msg', 'invalid')}"
