"""One connection's conversation with the server: its handshake (a hello, taken to its seat by
the rooms layer), then each message it sends, handled in its room.

The transport (``ws.py``) reads frames and hands over parsed messages; this module decides
what each command does. A ``hello`` is handed down to the rooms layer in one call
(:meth:`Rooms.enter`), which takes it to its seat: the room it opens (served here or taken
over from a process that stopped; nothing a server does not serve, nothing for a stranger's
guess), the player a token names or a new player's ``join``, and where the player's team
plays. Every error becomes an ``error`` reply; none reaches the transport.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from grace_arena.core.commands import (
    AbstainPart,
    CallTimeout,
    ConsultPart,
    EndMatch,
    GiveAnswer,
    MuteAi,
    Pause,
    PreAnswerPart,
    PressAi,
    ReadPart,
    Resume,
    Reveal,
    Rule,
    SetAiModes,
    SetBuzzSource,
    SetPace,
    StartTossup,
    Substitute,
    ThrowOut,
    ThrowOutBonus,
    UndoRuling,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.protocol import (
    MODERATOR_ONLY,
    PLAYER_ONLY,
    PLAYER_OR_MODERATOR,
    AbstainMsg,
    AiModesMsg,
    AnswerMsg,
    BuzzMsg,
    BuzzSourceMsg,
    ClientMessage,
    ConsultMsg,
    CorrectMsg,
    EndMatchMsg,
    ErrorMsg,
    Hello,
    JoinTeam,
    MuteAiMsg,
    PauseMsg,
    Ping,
    Pong,
    PreAnswerMsg,
    PressAiMsg,
    ProtestMsg,
    ReadPartMsg,
    ResumeMsg,
    RuleMsg,
    SetPaceMsg,
    StartTossupMsg,
    StepMsg,
    SubstituteMsg,
    ThrowOutBonusMsg,
    ThrowOutMsg,
    TimeoutMsg,
    UndoMsg,
)
from grace_arena.server.connection import Connection, LoopWatch
from grace_arena.server.pipeline import RoomClosed
from grace_arena.server.protests import (
    officiating_command,
    phone_protest,
    phone_protest_refused,
)
from grace_arena.server.room import Room
from grace_arena.server.rooms import Refused, Rooms
from grace_arena.server.views import REVEAL_ROLES

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Received:
    message: ClientMessage
    wall: float  # when it was read: server wall clock
    mono: float  # and monotonic clock
    #: How long it may have waited, arrived, for the server's busy loop to read it (seconds).
    read_delay: float = 0.0


#: Reads the connection's next message (None after an error reply), within a timeout.
Receive = Callable[[float | None], Awaitable[Received | None]]


class Lobby:
    """Where a ``hello`` leads: the rooms layer (a join code names a room), and every open
    connection of this process."""

    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms
        self.arena = rooms.arena
        #: Every open connection of this process, in a room, waiting, or on its way.
        self.connections: set[Connection] = rooms.connections
        #: How late the process's loop reads what arrives (a buzz's read delay).
        self.loop_watch = LoopWatch()


class Session:
    """One connection's conversation (see the module docstring)."""

    def __init__(self, lobby: Lobby, conn: Connection, receive: Receive) -> None:
        self.lobby = lobby
        self.arena = lobby.arena
        self.rooms = lobby.rooms
        self.conn = conn
        self.receive = receive

    # -- the whole conversation ------------------------------------------------------------------

    async def run(self) -> None:
        self.lobby.connections.add(self.conn)
        try:
            await self._run()
        finally:
            self.lobby.connections.discard(self.conn)
            self.rooms.gone(self.conn)

    async def _run(self) -> None:
        conn, settings = self.conn, self.arena.settings
        try:
            await self.handshake()
        except TimeoutError:  # no hello (or join) in time: say so and close, no traceback
            if conn.role is None:
                self.error("timeout", f"no hello within {settings.hello_timeout:g} s")
                conn.close(1008, "no hello")
            else:
                self.error("timeout", f"no join within {settings.join_timeout:g} s", "join")
                conn.close(1008, "no join")
            return
        if conn.room is None and conn.waiting_event is None:
            return
        conn.start_pinging(settings.ping_interval)
        while not conn.closed:
            received = await self.receive(None)
            if received is None:
                continue
            msg = received.message
            if isinstance(msg, Hello) and (
                conn.moved or conn.waiting_event is not None or conn.role == "moderator"
            ):
                # the room moved on (``next_match``), or a moderator takes control (back):
                # a new handshake on the same connection
                await self.handshake(first=received)
            elif conn.room is None:  # a player waiting for the team's next match
                self.while_waiting(received)
            else:
                await self.dispatch(conn.room, received)

    def leave(self) -> None:
        """Take the connection out of its room (and out of the players waiting)."""
        self.rooms.leave(self.conn)

    def error(self, code: str, message: str, in_reply_to: str | None = None, **extra) -> None:
        if extra.get("url") is not None:  # (behind a proxy: the proxy's address)
            extra["url"] = self.arena.told_url(extra["url"])
        self.conn.send_model(
            ErrorMsg(code=code, message=message, in_reply_to=in_reply_to, **extra)  # type: ignore[arg-type]
        )

    def while_waiting(self, received: Received) -> None:
        msg = received.message
        if isinstance(msg, Ping):
            self.conn.send_model(Pong(sent=msg.sent, time=time.time()))
        elif isinstance(msg, Pong):
            self.conn.clock.add(msg.sent, msg.time, received.wall)
        else:
            self.error("not_allowed", "your team has no match here yet: wait for it", msg.type)

    # -- the handshake -----------------------------------------------------------------------------

    async def handshake(self, first: Received | None = None) -> None:
        """Read messages until a valid ``hello`` (and, for a new player, ``join``); then the
        connection follows its room (``conn.room``), or, for a player of an event whose team
        plays elsewhere, waits (``conn.waiting_event``). ``first``: a ``hello`` already read
        (a connection whose room moved on, or a moderator's hello again: one refused leaves it
        in its room as it was). The hello timeout applies to a new connection only."""
        conn = self.conn
        fresh = first is None and conn.role is None
        # A moderator's hello again in its room (to take control back, or to watch) that does
        # not hold leaves it where it was; any other connection leaves its room at once.
        staying = conn.role == "moderator" and conn.room is not None and not conn.moved
        if not staying and not fresh:  # (a new connection is nowhere yet)
            self.leave()
            conn.moved = False
        received = first
        # one deadline for the whole handshake (pings and refused hellos do not extend it)
        hello_by = time.monotonic() + self.arena.settings.hello_timeout if fresh else None
        while not conn.closed:
            if received is None:
                if staying:  # its hello again did not hold: it stays in its room as it was
                    return
                timeout = None if hello_by is None else max(0.0, hello_by - time.monotonic())
                received = await self.receive(timeout)
                if received is None:
                    continue
            msg, received = received.message, None
            if isinstance(msg, Ping):
                conn.send_model(Pong(sent=msg.sent, time=time.time()))
                continue
            if not isinstance(msg, Hello):
                self.error("not_allowed", "say hello first", msg.type)
                continue
            if await self._hello(msg):
                return

    async def _hello(self, msg: Hello) -> bool:
        """Take one ``hello`` down to its seat (:meth:`Rooms.enter`); True when it holds (the
        connection is in its room, or waits), False after an error reply."""
        self.conn.reveals = msg.reveals and msg.role in REVEAL_ROLES
        self.conn.shown = None  # (until its state is sent: a reveal follows a state)
        try:
            return await self.rooms.enter(self.conn, msg, self.receive)
        except Refused as exc:
            self.error(exc.code, str(exc), "hello", url=exc.url)
            return False

    # -- commands ----------------------------------------------------------------------------------

    async def dispatch(self, room: Room, received: Received) -> None:
        """One message of a connection in its room. Every refusal or failure is an ``error``
        reply; the commands that change the match are queued (the socket goes on being read
        while a commit waits for the record), and their refusal, if any, is replied when it
        comes."""
        conn, msg = self.conn, received.message
        if msg.type in MODERATOR_ONLY and conn.role != "moderator":
            self.error("not_allowed", f"only the moderator may send {msg.type}", msg.type)
            return
        if msg.type in MODERATOR_ONLY and conn.watching:
            message = "you are watching: another moderator controls this match (take over to act)"
            self.error("not_allowed", message, msg.type)
            return
        if msg.type in PLAYER_ONLY and (conn.role != "player" or conn.player is None):
            self.error("not_allowed", f"only a player who joined may send {msg.type}", msg.type)
            return
        if msg.type in PLAYER_OR_MODERATOR and not (
            (conn.role == "player" and conn.player is not None)
            or (conn.role == "moderator" and not conn.watching)
        ):
            message = f"only a player who joined, or the moderator in control, may send {msg.type}"
            self.error("not_allowed", message, msg.type)
            return
        try:
            match msg:
                case Ping():
                    conn.send_model(Pong(sent=msg.sent, time=time.time()))
                case Pong():
                    conn.clock.add(msg.sent, msg.time, received.wall)
                case BuzzMsg():
                    timing = conn.clock.timing(
                        msg.client_time, received.wall, received.mono, received.read_delay
                    )
                    room.buzz(conn, timing)  # queued: the socket goes on being read
                case AnswerMsg():
                    assert conn.team is not None and conn.player is not None
                    # what it answers is decided when it is committed, by what it names
                    answer = GiveAnswer(team=conn.team, player=conn.player, text=msg.text,
                                        part=msg.part, bounceback=msg.bounceback)  # fmt: skip
                    self.queue(room, answer, msg.type)
                case StartTossupMsg():
                    self.queue(room, StartTossup(tossup_id=msg.tossup_id), msg.type)
                case RuleMsg():
                    # one key rules a tossup's buzz, or in a bonus its current part
                    ruling = Rule(ruling=msg.ruling, buzz_id=msg.buzz_id, part=msg.part,
                                  bounceback=msg.bounceback)  # fmt: skip
                    self.queue(room, room.as_shown(ruling), msg.type)
                case ConsultMsg() | AbstainMsg():
                    # a player's for their team; the moderator's for the team whose turn it is
                    team = conn.team if conn.role == "player" else room.match.bonus_turn()
                    player = conn.player if conn.role == "player" else None
                    if team is None:
                        self.error("illegal", "no bonus part is up", msg.type)
                        return
                    command = (
                        ConsultPart(team=team, player=player, draft=msg.draft, part=msg.part)
                        if isinstance(msg, ConsultMsg)
                        else AbstainPart(team=team, player=player, part=msg.part)
                    )
                    self.queue(room, command, msg.type)
                case PreAnswerMsg():
                    assert conn.team is not None and conn.player is not None
                    pre = PreAnswerPart(team=conn.team, player=conn.player, text=msg.text,
                                        part=msg.part)  # fmt: skip
                    self.queue(room, pre, msg.type)
                case PressAiMsg():  # a player presses a semi AI teammate's key
                    assert conn.team is not None and conn.player is not None
                    press = PressAi(
                        team=conn.team,
                        ai=msg.ai,
                        player=conn.player,
                        timing=conn.clock.timing(
                            None, received.wall, received.mono, received.read_delay
                        ),
                    )
                    self.queue(room, press, msg.type)
                case BuzzSourceMsg():  # the moderator hands a human's buzz to a semi AI
                    self.queue(room, SetBuzzSource(ai=msg.ai), msg.type)
                case MuteAiMsg() | AiModesMsg():  # a captain's for their team, or the moderator's
                    team = conn.team if conn.role == "player" else msg.team
                    player = conn.player if conn.role == "player" else None
                    if team is None:
                        self.error("illegal", "name the team of the AI players", msg.type)
                        return
                    command = (
                        MuteAi(team=team, ai=msg.ai, player=player)
                        if isinstance(msg, MuteAiMsg)
                        else SetAiModes(team=team, modes=msg.modes, ks=msg.ks, player=player)
                    )
                    self.queue(room, command, msg.type)
                case ThrowOutBonusMsg():
                    throw = ThrowOutBonus(reason=msg.reason, replacement=msg.replacement)
                    self.queue(room, throw, msg.type)
                case TimeoutMsg():
                    self.queue(room, CallTimeout(team=msg.team), msg.type)
                case SubstituteMsg():
                    sub = Substitute(
                        team=msg.team, player_in=msg.player_in, player_out=msg.player_out
                    )
                    self.queue(room, sub, msg.type)
                case ReadPartMsg():
                    self.queue(room, ReadPart(), msg.type)
                case UndoMsg():
                    self.queue(room, UndoRuling(), msg.type)
                case ThrowOutMsg():
                    self.queue(room, ThrowOut(reason=msg.reason), msg.type)
                case PauseMsg():
                    self.queue(room, Pause(), msg.type)
                case ResumeMsg():
                    self.queue(room, Resume(), msg.type)
                case StepMsg():  # a word, or the rest of the clue from where the reading is then
                    self.queue(room, Reveal(clue=msg.unit == "clue"), msg.type)
                case SetPaceMsg():
                    self.queue(room, SetPace(wpm=msg.wpm, by_key=msg.by_key), msg.type)
                case EndMatchMsg():
                    self.queue(room, EndMatch(), msg.type)
                case ProtestMsg() if conn.role == "player":  # from a phone, where allowed
                    assert conn.team is not None and conn.player is not None
                    now = time.time()
                    try:
                        protest = phone_protest(room, room.match, conn.team, conn.player, msg,
                                                now)  # fmt: skip
                    except IllegalCommand as exc:
                        self.error("illegal", str(exc), msg.type)
                        return
                    future = room.submit(protest)

                    def filed(done: asyncio.Future, protest=protest, now=now) -> None:
                        if not done.cancelled() and done.exception() is not None:
                            phone_protest_refused(room, protest, now)
                        self.refused(done, "protest")

                    future.add_done_callback(filed)
                case ProtestMsg() | CorrectMsg():  # amendments of the record (core.protests)
                    try:
                        command = officiating_command(msg)
                    except IllegalCommand as exc:
                        self.error("illegal", str(exc), msg.type)
                        return
                    self.queue(room, command, msg.type)
                case Hello() | JoinTeam():
                    self.error("not_allowed", "already joined", msg.type)
        except Exception:  # a bug: the client hears of it, the connection goes on
            log.exception("handling %s failed", msg.type)
            self.error("server_error", "the server failed to handle this: try again", msg.type)

    def queue(self, room: Room, command, in_reply_to: str) -> None:
        """Queue a command; its refusal, if any, is an error reply when it comes."""
        future = room.submit(command)
        future.add_done_callback(lambda done: self.refused(done, in_reply_to))

    def refused(self, done: asyncio.Future, in_reply_to: str) -> None:
        """Tell the client why a queued command of theirs was not taken, if it was not."""
        if done.cancelled():
            return
        exc = done.exception()
        if exc is None:
            return
        if isinstance(exc, IllegalCommand):
            self.error("illegal", str(exc), in_reply_to)
        elif isinstance(exc, RoomClosed):
            self.error(exc.code, f"not taken: {exc}", in_reply_to, url=exc.url)
        else:
            log.error("%s failed: %s", in_reply_to, exc)
            self.error("server_error", "it could not be recorded: try again", in_reply_to)
