"""The websocket endpoint: the handshake (hello, join, one moderator in control), then every
message read, rate-limited and dispatched to its room."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import dataclass

from fastapi import (
    WebSocket,
    WebSocketDisconnect,
)
from pydantic import ValidationError

from grace_arena.core.commands import (
    EndMatch,
    Join,
    Rule,
    SetPace,
    StartTossup,
    ThrowOut,
    UndoRuling,
)
from grace_arena.core.config import TeamKind
from grace_arena.core.errors import IllegalCommand
from grace_arena.protocol import (
    MODERATOR_ONLY,
    PLAYER_ONLY,
    AnswerMsg,
    BuzzMsg,
    ClientMessage,
    EndMatchMsg,
    ErrorMsg,
    Hello,
    Joined,
    JoinTeam,
    PauseMsg,
    Ping,
    Pong,
    ResumeMsg,
    RuleMsg,
    SetPaceMsg,
    StartTossupMsg,
    StepMsg,
    ThrowOutMsg,
    UndoMsg,
    Welcome,
    parse_client,
)
from grace_arena.server.arena import Arena
from grace_arena.server.room import Connection, RateLimit, Room


async def serve_websocket(arena: Arena, ws: WebSocket) -> None:
    """One websocket, from its upgrade to its end: a limit per address, the handshake, then
    every message dispatched to its room."""
    settings = arena.settings
    address = ws.client.host if ws.client else "?"
    if arena.connections_from[address] >= settings.max_connections_per_address:
        await ws.close(code=1008, reason="too many connections from this address")
        return
    arena.connections_from[address] += 1
    try:
        await _serve_socket(arena, ws)
    finally:
        arena.connections_from[address] -= 1
        if arena.connections_from[address] <= 0:
            del arena.connections_from[address]


async def _serve_socket(arena: Arena, ws: WebSocket) -> None:
    settings = arena.settings
    await ws.accept()
    conn = Connection(
        ws,
        rate=RateLimit(settings.rate_per_second, settings.rate_burst),
        max_queue_bytes=settings.max_queue_bytes,
    )
    writer = asyncio.create_task(conn.writer())
    pinger: asyncio.Task | None = None
    room: Room | None = None
    try:
        try:
            room = await _handshake(arena, conn)
        except TimeoutError:  # no hello in time: say so and close, without a traceback
            _error(conn, "timeout", f"no hello within {settings.hello_timeout:g} s")
            conn.end()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 1.0)
                await ws.close(code=1008)
            return
        if room is None:
            return
        pinger = asyncio.create_task(conn.pinger(arena.settings.ping_interval))
        while True:
            received = await _receive(arena, conn)
            if received is not None:
                await _dispatch(room, conn, received)
    except WebSocketDisconnect:
        pass
    finally:
        conn.closed = True
        if room is not None:
            room.connections.discard(conn)
            if room.controller is conn:
                room.controller = None
        if pinger is not None:
            pinger.cancel()
        conn.queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer, 1.0)


@dataclass(frozen=True)
class _Received:
    message: ClientMessage
    wall: float  # when it arrived: server wall clock
    mono: float  # and monotonic clock


async def _receive(
    arena: Arena, conn: Connection, timeout: float | None = None
) -> _Received | None:
    """The next message, parsed; None after an error reply (too large, a flood, malformed)."""
    async with asyncio.timeout(timeout):  # (wait_for may swallow a cancellation on 3.11)
        frame = await conn.ws.receive()
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    wall, mono = time.time(), time.monotonic()
    raw = frame.get("text")
    if raw is None:  # a binary frame
        _error(conn, "bad_message", "binary frames are not part of the protocol: send JSON text")
        return None
    limit = arena.settings.max_message_bytes
    if len(raw.encode()) > limit:
        _error(conn, "too_large", f"message of {len(raw.encode())} bytes; the limit is {limit}")
        return None
    if not conn.rate.allow(mono):
        _error(conn, "rate_limited", "too many messages; slow down", _message_type(raw))
        return None
    try:
        return _Received(parse_client(raw), wall, mono)
    except ValidationError as exc:
        _error(conn, "bad_message", _explain(exc), _message_type(raw))
        return None


def _refused(conn: Connection, done: asyncio.Future, in_reply_to: str) -> None:
    """Tell a player why a queued command of theirs was not taken, if it was not."""
    if done.cancelled():
        return
    exc = done.exception()
    if isinstance(exc, IllegalCommand):
        _error(conn, "illegal", str(exc), in_reply_to)
    elif exc is not None:
        _error(conn, "server_error", "it could not be recorded: try again", in_reply_to)


def _error(conn: Connection, code: str, message: str, in_reply_to: str | None = None) -> None:
    conn.send_model(ErrorMsg(code=code, message=message, in_reply_to=in_reply_to))  # type: ignore[arg-type]


def _message_type(raw: str) -> str | None:
    import json

    with contextlib.suppress(ValueError, AttributeError, RecursionError):
        value = json.loads(raw).get("type")
        return value if isinstance(value, str) else None
    return None


async def _handshake(arena: Arena, conn: Connection) -> Room | None:
    """Read messages until a valid ``hello`` (and, for a new player, ``join``)."""
    while True:
        received = await _receive(arena, conn, arena.settings.hello_timeout)
        if received is None:
            continue
        msg = received.message
        if not isinstance(msg, Hello):
            _error(conn, "not_allowed", "say hello first", msg.type)
            continue
        room = _room_for(arena, msg)
        if room is None:
            _error(conn, "not_found", "no live match with that join code or id", "hello")
            continue
        match_id = room.rm.id
        if msg.role == "moderator":
            if not arena.is_moderator(match_id, msg.token):
                _error(conn, "unauthorized", "wrong moderator token", "hello")
                continue
            if not _take_control(room, conn, msg):
                continue
        elif msg.role == "player" and msg.token:
            player = arena.tokens.player_id(match_id, msg.token)
            team = _team_of(room, player)
            if player is None or team is None:
                _error(conn, "unauthorized", "unknown player token; join again", "hello")
                continue
            conn.player, conn.team = player, team
        conn.role = msg.role
        teams = room.state_for(msg.role).teams
        needs_join = msg.role == "player" and conn.player is None
        conn.send_model(
            Welcome(
                role=msg.role,
                match_id=match_id,
                watching=conn.watching,
                needs_join=needs_join,
                teams=[t for t in teams if t.kind == "human"],
            )
        )
        if needs_join:
            if not await _join(arena, room, conn):
                return None
        elif conn.player is not None:
            name = room.match.state.players[conn.team or ""].get(conn.player, conn.player)
            conn.send_model(
                Joined(player=conn.player, team=conn.team or "", name=name, token=msg.token or "")
            )
        room.connections.add(conn)
        conn.send_model(room.state_for(msg.role))
        return room


async def _join(arena: Arena, room: Room, conn: Connection) -> bool:
    while True:
        received = await _receive(arena, conn)
        if received is None:
            continue
        msg = received.message
        if isinstance(msg, Ping):
            conn.send_model(Pong(sent=msg.sent, time=time.time()))
            continue
        if not isinstance(msg, JoinTeam):
            _error(conn, "not_allowed", "choose a team and a name first (join)", msg.type)
            continue
        team = room.match.config.team(msg.team)
        if team is None or team.kind is not TeamKind.HUMAN:
            _error(conn, "not_found", f"no team {msg.team!r} to join", "join")
            continue
        limit = arena.settings.max_players_per_match
        if sum(len(p) for p in room.match.state.players.values()) >= limit:
            _error(conn, "not_allowed", f"this match is full ({limit} players)", "join")
            continue
        player = f"p-{secrets.token_hex(4)}"
        try:
            await room.command(Join(team=msg.team, player=player, name=msg.name.strip()))
        except IllegalCommand as exc:
            _error(conn, "illegal", str(exc), "join")
            continue
        conn.player, conn.team = player, msg.team
        conn.send_model(
            Joined(
                player=player,
                team=msg.team,
                name=msg.name.strip(),
                token=arena.tokens.player(room.rm.id, player),
            )
        )
        return True


def _take_control(room: Room, conn: Connection, hello: Hello) -> bool:
    """One moderator controls a match at a time. A second one watches (``watch``), takes
    over (``take_over``: the first then watches), or is refused (False)."""
    current = room.controller
    if current is None or current.closed:
        room.controller = None
        if hello.watch:
            conn.watching = True
        else:
            room.controller = conn
        return True
    if hello.watch:
        conn.watching = True
    elif hello.take_over:
        current.watching = True
        room.controller = conn
        _error(current, "taken_over", "another moderator took over this match: you are watching")
    else:
        _error(
            conn,
            "in_use",
            "another moderator controls this match: take over (the other then watches) or watch",
            "hello",
        )
        return False
    return True


def _room_for(arena: Arena, hello: Hello) -> Room | None:
    if hello.role == "moderator" and hello.match_id is not None:
        return arena.rooms.get(hello.match_id)
    if hello.join_code:
        return arena.rooms.get(arena.by_code.get(hello.join_code.strip().upper(), -1))
    return None


def _team_of(room: Room, player: str | None) -> str | None:
    for team, members in room.match.state.players.items():
        if player in members:
            return team
    return None


def _explain(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"malformed message: {where + ': ' if where else ''}{first.get('msg', 'invalid')}"


async def _dispatch(room: Room, conn: Connection, received: _Received) -> None:
    msg = received.message
    if msg.type in MODERATOR_ONLY and conn.role != "moderator":
        _error(conn, "not_allowed", f"only the moderator may send {msg.type}", msg.type)
        return
    if msg.type in MODERATOR_ONLY and conn.watching:
        message = "you are watching: another moderator controls this match (take over to act)"
        _error(conn, "not_allowed", message, msg.type)
        return
    if msg.type in PLAYER_ONLY and (conn.role != "player" or conn.player is None):
        _error(conn, "not_allowed", f"only a player who joined may send {msg.type}", msg.type)
        return
    try:
        match msg:
            case Ping():
                conn.send_model(Pong(sent=msg.sent, time=time.time()))
            case Pong():
                conn.clock.add(msg.sent, msg.time, received.wall)
            case BuzzMsg():
                timing = room.timing_for(conn, msg.client_time, received.wall, received.mono)
                room.buzz(conn, timing)  # queued: the socket goes on being read
            case AnswerMsg():
                from grace_arena.core.commands import GiveAnswer

                future = room.submit(GiveAnswer(team=conn.team, player=conn.player, text=msg.text))
                future.add_done_callback(lambda done: _refused(conn, done, "answer"))
            case StartTossupMsg():
                await room.command(StartTossup(tossup_id=msg.tossup_id))
            case RuleMsg():
                await room.command(Rule(ruling=msg.ruling))
            case UndoMsg():
                await room.command(UndoRuling())
            case ThrowOutMsg():
                await room.command(ThrowOut(reason=msg.reason))
            case PauseMsg():
                await room.pause()
            case ResumeMsg():
                await room.resume()
            case StepMsg():
                await room.step(msg.unit)
            case SetPaceMsg():
                await room.command(SetPace(wpm=msg.wpm))
            case EndMatchMsg():
                room.running = False
                await room.command(EndMatch())
            case Hello() | JoinTeam():
                _error(conn, "not_allowed", "already joined", msg.type)
    except IllegalCommand as exc:
        _error(conn, "illegal", str(exc), msg.type)
