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
    Control,
    EndMatchMsg,
    ErrorMsg,
    Hello,
    Joined,
    JoinTeam,
    PauseMsg,
    Ping,
    Pong,
    ResumeMsg,
    Role,
    RuleMsg,
    SetPaceMsg,
    StartTossupMsg,
    StepMsg,
    TeamView,
    ThrowOutMsg,
    UndoMsg,
    Waiting,
    Welcome,
    parse_client,
)
from grace_arena.record.lease import LeaseHeld
from grace_arena.server.arena import Arena
from grace_arena.server.event_rooms import send_on
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
    try:
        try:
            await _handshake(arena, conn)
        except TimeoutError:  # no hello in time: say so and close, without a traceback
            _error(conn, "timeout", f"no hello within {settings.hello_timeout:g} s")
            conn.end()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 1.0)
                await ws.close(code=1008)
            return
        if conn.room is None and conn.waiting_event is None:
            return
        pinger = asyncio.create_task(conn.pinger(arena.settings.ping_interval))
        while True:
            received = await _receive(arena, conn)
            if received is None:
                continue
            msg = received.message
            if isinstance(msg, Hello) and (
                conn.moved or conn.waiting_event is not None or conn.role == "moderator"
            ):
                # the room moved on (``next_match``), or a moderator takes control (back):
                # a new handshake on the same connection
                await _handshake(arena, conn, first=received)
            elif conn.room is None:  # a player waiting for the team's next match
                _while_waiting(conn, received)
            else:
                await _dispatch(conn.room, conn, received)
    except WebSocketDisconnect:
        pass
    finally:
        conn.closed = True
        _leave(arena, conn)
        if pinger is not None:
            pinger.cancel()
        conn.queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer, 1.0)


def _leave(arena: Arena, conn: Connection, *, tell: bool = True) -> None:
    """Take the connection out of its room (and out of the players waiting). A moderator in
    control gives it up: the room's watchers are told (``tell``), unless the room moved on
    with everyone in it."""
    room = conn.room
    if room is not None:
        room.connections.discard(conn)
        if room.controller is conn:
            room.controller = None
            if tell and not conn.moved:  # the watchers may take control now
                _tell_watchers(room, controlled=False)
    arena.events.unwait(conn)
    conn.room = None
    conn.waiting_event = None


def _while_waiting(conn: Connection, received: _Received) -> None:
    msg = received.message
    if isinstance(msg, Ping):
        conn.send_model(Pong(sent=msg.sent, time=time.time()))
    elif isinstance(msg, Pong):
        conn.clock.add(msg.sent, msg.time, received.wall)
    else:
        _error(conn, "not_allowed", "your team has no match here yet: wait for it", msg.type)


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


async def _handshake(arena: Arena, conn: Connection, first: _Received | None = None) -> None:
    """Read messages until a valid ``hello`` (and, for a new player, ``join``); then the
    connection follows its room (``conn.room``), or, for a player of an event whose team
    plays elsewhere, waits (``conn.waiting_event``). ``first``: a ``hello`` already read (a
    connection whose room moved on, or a moderator's hello again: one refused leaves it in
    its room as it was). The hello timeout applies to a new connection only."""
    fresh = first is None and conn.role is None
    # A moderator's hello again in its room (to take control back, or to watch) that does
    # not hold leaves it where it was; any other connection leaves its room at once.
    staying = conn.role == "moderator" and conn.room is not None and not conn.moved
    if not staying:
        _leave(arena, conn)
        conn.moved = False
    received = first
    while True:
        if received is None:
            if staying:  # its hello again did not hold: it stays in its room as it was
                return
            received = await _receive(arena, conn, arena.settings.hello_timeout if fresh else None)
            if received is None:
                continue
        msg, received = received.message, None
        if isinstance(msg, Ping):
            conn.send_model(Pong(sent=msg.sent, time=time.time()))
            continue
        if not isinstance(msg, Hello):
            _error(conn, "not_allowed", "say hello first", msg.type)
            continue
        try:
            room = await _room_for(arena, msg)
        except LeaseHeld as exc:
            _error(conn, "elsewhere", str(exc), "hello")
            continue
        if room is None:
            waiting = arena.events.waiting_text(msg.join_code or "")
            _error(conn, "not_found", waiting or "no live match with that join code or id", "hello")
            continue
        match_id = room.rm.id
        er = arena.events.event_room(room)
        if msg.role == "moderator":
            if not arena.is_moderator(match_id, msg.token):
                _error(conn, "unauthorized", "wrong moderator token", "hello")
                continue
            if _controlled_by_another(room, conn) and not (msg.watch or msg.take_over):
                _error(
                    conn,
                    "in_use",
                    "another moderator controls this match: take over (the other then "
                    "watches) or watch",
                    "hello",
                )
                continue
        elif msg.role == "player" and msg.token:
            if er is not None:
                record = arena.events.player(
                    er.event_id,
                    arena.tokens.player_id(arena.events.token_scope(er), msg.token) or "",
                )
                player, team = (record.id, record.team) if record else (None, None)
            else:
                player = arena.tokens.player_id(match_id, msg.token)
                team = _team_of(room, player)
            if player is None or team is None:
                _error(conn, "unauthorized", "unknown player token; join again", "hello")
                continue
            conn.player, conn.team = player, team
        # the hello holds: leave the room this connection was in (a hello again, or a room
        # that moved on); its watchers hear of a controller that left here, unless it is the
        # room this hello takes control of again (they hear of that below)
        _leave(arena, conn, tell=conn.room is not room)
        conn.moved = False
        if msg.role == "moderator":
            _take_control(room, conn, msg)
        conn.role = msg.role
        needs_join = msg.role == "player" and conn.player is None
        conn.send_model(
            Welcome(
                role=msg.role,
                match_id=match_id,
                watching=conn.watching,
                needs_join=needs_join,
                teams=_joinable(arena, room),
            )
        )
        if needs_join:
            if not await _join(arena, room, conn):
                return
        elif conn.player is not None and not await _seat(arena, room, conn, msg.token or ""):
            return
        _attach(room, conn, msg.role)
        if conn.watching:
            _tell(conn, controlled=_controlled_by_another(room, conn))
        return


def _attach(room: Room, conn: Connection, role: Role) -> None:
    conn.room = room
    room.connections.add(conn)
    conn.send_model(room.state_for(role))


def _joinable(arena: Arena, room: Room) -> list[TeamView]:
    """The teams a new player may join: the match's human teams, or, in an event's room,
    every human team of the event (a player who comes to the wrong room is sent on)."""
    teams = [t for t in room.state_for("player").teams if t.kind == "human"]
    er = arena.events.event_room(room)
    if er is None:
        return teams
    here = {t.id: t for t in teams}
    return [
        here.get(tid) or TeamView(id=tid, name=name, kind="human")
        for tid, name in arena.events.human_teams(er.event_id)
    ]


async def _seat(arena: Arena, room: Room, conn: Connection, token: str) -> bool:
    """A known player (``conn.player`` of ``conn.team``) takes their seat: in this match
    (joined to it if they were not yet: a player of an event in a new round), or, when the
    team does not play here now, in the wait for its next match. False: waiting."""
    assert conn.player is not None and conn.team is not None
    er = arena.events.event_room(room)
    name = room.match.state.players.get(conn.team, {}).get(conn.player)
    if name is None and er is not None:
        record = arena.events.player(er.event_id, conn.player)
        name = record.name if record else conn.player
    conn.send_model(Joined(player=conn.player, team=conn.team, name=name or "", token=token))
    if er is not None:
        seat, where = await arena.events.seat_of(er.event_id, conn.team)
        if seat is not er:
            conn.waiting_event = er.event_id
            if seat is not None:  # the team's match is open in another room: go there
                send_on(conn, seat, where)
            else:
                conn.send_model(Waiting(team=conn.team, message=where))
                arena.events.wait(er.event_id, conn)
            return False
    if conn.player not in room.match.state.players.get(conn.team, {}):
        try:
            await room.command(Join(team=conn.team, player=conn.player, name=name or "player"))
        except IllegalCommand as exc:
            _error(conn, "illegal", str(exc), "hello")
            return False
    return True


async def _join(arena: Arena, room: Room, conn: Connection) -> bool:
    """A new player picks a team and a name; False when the connection waits or ended."""
    er = arena.events.event_room(room)
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
        name = msg.name.strip()
        if er is not None:
            if msg.team not in {tid for tid, _ in arena.events.human_teams(er.event_id)}:
                _error(conn, "not_found", f"no team {msg.team!r} to join", "join")
                continue
            record = await arena.events.register_player(er.event_id, msg.team, name)
            conn.player, conn.team = record.id, msg.team
            token = arena.tokens.player(arena.events.token_scope(er), record.id)
            return await _seat(arena, room, conn, token)
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
            await room.command(Join(team=msg.team, player=player, name=name))
        except IllegalCommand as exc:
            _error(conn, "illegal", str(exc), "join")
            continue
        conn.player, conn.team = player, msg.team
        conn.send_model(
            Joined(
                player=player,
                team=msg.team,
                name=name,
                token=arena.tokens.player(room.rm.id, player),
            )
        )
        return True


def _controlled_by_another(room: Room, conn: Connection) -> bool:
    current = room.controller
    return current is not None and current is not conn and not current.closed


def _take_control(room: Room, conn: Connection, hello: Hello) -> None:
    """One moderator controls a match at a time. A second one watches (``watch``) or takes
    over (``take_over``: the first then watches); a plain hello was refused before, while
    another controls the match. The watchers are told who controls it (``control``)."""
    conn.watching = False  # (a moderator's hello again on its connection)
    current = room.controller
    if not _controlled_by_another(room, conn):
        room.controller = None
        if hello.watch:
            conn.watching = True
            _tell_watchers(room, controlled=False)
        else:
            room.controller = conn
            _tell_watchers(room, controlled=True)
        return
    assert current is not None
    if hello.watch:
        conn.watching = True
    else:  # take_over
        current.watching = True
        room.controller = conn
        _error(current, "taken_over", "another moderator took over this match: you are watching")
        _tell_watchers(room, controlled=True)


def _tell(conn: Connection, *, controlled: bool) -> None:
    if controlled:
        message = "another moderator controls this match: you are watching (take over to act)"
    else:
        message = "no moderator controls this match now: take over to act"
    conn.send_model(Control(controlled=controlled, message=message))


def _tell_watchers(room: Room, *, controlled: bool) -> None:
    """Tell the moderators who watch ``room`` whether another moderator controls it now."""
    for other in list(room.connections):
        if other.role == "moderator" and other.watching and not other.closed:
            _tell(other, controlled=controlled)


async def _room_for(arena: Arena, hello: Hello) -> Room | None:
    """The live match a hello asks for: a moderator's match id, or a join code (a match's, or
    an event room's: its current match). A match of the record that no live process serves
    any more is opened here; one that another live process serves raises ``LeaseHeld``."""
    if hello.role == "moderator" and hello.match_id is not None:
        room = arena.rooms.get(hello.match_id)
        if room is not None:
            return room
        row = await asyncio.to_thread(arena.store.match_row, hello.match_id)
        return await arena.open_by_code(row.join_code) if row and row.join_code else None
    if hello.join_code:
        return await arena.open_by_code(hello.join_code)
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
