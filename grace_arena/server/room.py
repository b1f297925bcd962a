"""One match being played live: its connections, its reading, its timers and its races.

Every change goes through the room's commit pipeline (``pipeline.py``): decided in order,
committed, and only then sent to each connection (a state broadcast is written straight to each
socket that keeps up, anything else goes on the connection's own queue: ``connection.py``).
Who won a race is the arbiter's (``arbiter.py``, pure).

A room is ``open`` until it is closed: its match moved on (the next match of an event's room
takes its connections), another server process took the match over, or the server stops. Then
``closing`` — the reading and the timers stop, the batch being committed finishes, every other
command fails with the :class:`~grace_arena.server.pipeline.RoomClosed` that closed it, each
connection left is told why (an ``error``, with the URL of the process that serves the match
now where there is one) and closed — and ``closed``: nothing more is sent or committed.

The reading and the answer timer outlive a failed write: a commit that fails for an
operational reason is retried by the pipeline while the room holds at the same word and says so
(``state.record``); an unexpected error in either task is logged and the task goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import Any

from grace_arena.core.commands import Buzz, Command, HalfTimeUp, Join, Pause, Reveal, Rule, TimeUp
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BuzzAccepted,
    BuzzRefused,
    BuzzRepeated,
    BuzzTiming,
    Event,
    TossupStarted,
    event_to_dict,
)
from grace_arena.core.phases import HAS_FLOOR, LIVE, Phase
from grace_arena.protocol import (
    BuzzResult,
    ErrorMsg,
    EventView,
    RecordStatus,
    Role,
    ServerMessage,
    State,
)
from grace_arena.record.lease import LeaseLost
from grace_arena.record.store import RecordedMatch
from grace_arena.server import views, voice
from grace_arena.server.arbiter import DEFAULT_MAX_CREDIT, position_at, race_order
from grace_arena.server.connection import CLOSE_MOVED, CLOSE_STOPPING, Connection, room_rtt_of
from grace_arena.server.frames import text_frame
from grace_arena.server.pipeline import CommitPipeline, Lifecycle, RecordHealth, RoomClosed
from grace_arena.server.views import ModelTrajectory
from grace_arena.server.writer import GroupWriter

log = logging.getLogger(__name__)

#: Events that change nothing a player's screen shows.
_QUIET_EVENTS = frozenset({"buzz_refused", "buzz_repeated"})
#: A timer whose command failed (not refused: failed) tries again after this long.
_TIMER_RETRY = 1.0

#: Called with the room and the events of every committed change, after everyone was told.
Listener = Callable[["Room", list[Event]], None]


class Room:
    """A live match (see the module docstring)."""

    def __init__(
        self,
        rm: RecordedMatch,
        *,
        join_code: str,
        compensated: bool = False,
        race_window: float = 0.15,
        max_credit: float = DEFAULT_MAX_CREDIT,
        trajectories: dict[str, dict[str, ModelTrajectory]] | None = None,
        words: dict[str, list[str]] | None = None,
        writer: GroupWriter | None = None,
        guides: dict[str, dict[int, str]] | None = None,
        held_since: float | None = None,
    ) -> None:
        self.rm = rm
        self.join_code = join_code
        self.compensated = compensated
        self.race_window = race_window
        self.max_credit = max_credit
        self.trajectories = trajectories or {}
        self.words = words or {}  # tossup id -> its words as written
        self.guides = guides or {}  # tossup id -> word index -> pronunciation guide after it
        self.state = Lifecycle.OPEN
        #: Why the room closed (once it did).
        self.closed_by: RoomClosed | None = None
        #: Commits this room's changes (with the other rooms', through ``writer``). A match
        #: reopened after nobody served it (``held_since``) resumes a running clock first.
        self.pipeline = CommitPipeline(
            rm,
            writer,
            on_committed=self._after,
            on_health=self._health_changed,
            on_lease_lost=self._lease_lost,
            held_since=held_since,
        )
        self.connections: set[Connection] = set()
        #: The moderator's connection that controls the match (one at a time).
        self.controller: Connection | None = None
        #: SHA-256 of the match's valid moderator tokens.
        self.moderator_hashes: frozenset[str] = frozenset()
        #: Joins by name are taken one at a time (sessions.py): two at once of one name are
        #: one player.
        self.joining = asyncio.Lock()
        #: Set at every change the room takes (the reader waits on it while not reading).
        self._changed = asyncio.Event()
        self.reveal_times: list[tuple[float, int]] = []  # (wall time, position) this tossup
        self.tossup_log: list[dict[str, Any]] = []
        self._tasks: set[asyncio.Task] = set()
        self._timer: asyncio.Task | None = None
        self._timer_deadline: float | None = None
        #: A timed half's game clock: the timer that says it ran out, and when.
        self._half_timer: asyncio.Task | None = None
        self._half_ends: float | None = None
        self._pending: list[tuple[Connection, BuzzTiming]] = []
        #: Each player's last press submitted and not yet stored (:meth:`_apply_buzz`).
        self._queued_presses: dict[tuple[str, str], asyncio.Future[list[Event]]] = {}
        self._pending_task: asyncio.Task | None = None
        #: For a match of an event's schedule: the event, room and round (in every state), and
        #: the event's id.
        self.event: EventView | None = None
        self.event_id: int | None = None
        #: Told of every committed change (the arena's hook: the event's rooms follow rulings
        #: and the end of the match this way).
        self.listeners: list[Listener] = []
        #: Told when a commit found the match taken over by another process (the arena then
        #: closes the room, saying where the match went).
        self.on_lease_lost: Callable[[Room, LeaseLost], None] | None = None
        #: A match read by the voice (``voice.py``): why it cannot be heard here (None: it
        #: can), the secret in its audio's URLs (given to the room's displays only) and the
        #: tossup the voice last cued.
        self.voice_note = voice.unavailable() if rm.match.config.voice else None
        self.voice_key = secrets.token_urlsafe(16)
        #: Grows each time a change leaves the room not reading (``voice.read_aloud``).
        self.reading_run = 0
        self._voiced_tossup: str | None = None
        self._voiced_part: tuple[str, int] | None = None

    # -- life cycle ----------------------------------------------------------------------------

    @property
    def match(self):
        return self.rm.match

    @property
    def wpm(self) -> int:
        """The reading pace, as the record has it (``set_pace`` events)."""
        return self.rm.match.state.pace

    @property
    def is_open(self) -> bool:
        return self.state is Lifecycle.OPEN

    def start(self) -> None:
        """Start reading and timing (the match is served here from now on); a match reopened
        after nobody served it first gives a running clock back the time it stood still."""
        #: The event loop the room runs on (tests and tools that reach it from other threads).
        self.loop = asyncio.get_running_loop()
        self._spawn(self._reader())
        if self._voiced():
            self._spawn(self._synthesise())
        self._schedule_deadline()
        self._schedule_half_clock()
        resumed = self.pipeline.resume()
        if resumed is not None:
            resumed.add_done_callback(self._log_failure)
        game = self.match.game
        if game.phase is Phase.READING and not game.paused:
            # Reopened in the middle of a clue (a restart, a take-over): the reading is
            # paused, on every screen, until the moderator resumes it once the room is back,
            # rather than standing still as if it read on, or reading to phones not back yet.
            self.submit(Pause()).add_done_callback(self._log_failure)

    async def close(self, error: RoomClosed | None = None) -> None:
        """Close the room (see the module docstring): stop reading and timing, let the batch
        being committed finish, fail everything else with ``error``, tell every connection
        still here why and close it."""
        if self.state is not Lifecycle.OPEN:
            return
        self.state = Lifecycle.CLOSING
        error = error or RoomClosed.stopping()
        self.closed_by = error
        for task in [*self._tasks, self._timer, self._pending_task]:
            if task is not None:
                task.cancel()
        await self.pipeline.close(error)
        code = CLOSE_MOVED if error.url else CLOSE_STOPPING
        for conn in list(self.connections):
            conn.send_model(ErrorMsg(code=error.code, message=str(error), url=error.url))  # type: ignore[arg-type]
            conn.close(code, str(error))
            conn.room = None
        self.connections.clear()
        self.controller = None
        self.state = Lifecycle.CLOSED

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _lease_lost(self, exc: LeaseLost) -> None:
        log.warning("match %d: %s", self.rm.id, exc)
        if self.on_lease_lost is not None:
            self.on_lease_lost(self, exc)
        else:
            self._spawn(self.close(RoomClosed(str(exc))))

    def _log_failure(self, done: asyncio.Future) -> None:
        if done.cancelled():
            return
        exc = done.exception()
        if exc is not None and not isinstance(exc, IllegalCommand | RoomClosed):
            log.error("match %d: %s", self.rm.id, exc)

    # -- commands ------------------------------------------------------------------------------

    async def command(self, command: Command) -> list[Event]:
        """Commit ``command``'s events, then tell everyone. Raises ``IllegalCommand``, or
        ``RoomClosed`` once the room closed."""
        return await self.pipeline.submit(command)

    async def seat(
        self,
        conn: Connection,
        role: Role,
        *,
        join: Join | None = None,
        told: tuple[ServerMessage, ...] = (),
    ) -> None:
        """Seat ``conn`` in the match as ``role`` (the one call a hello makes into its room,
        once the rooms layer has decided who it is and that it plays here): a player the
        match does not have yet joins it first (``join``; refused: ``IllegalCommand``); then
        the connection is told ``told`` (a player's ``joined``, once the match has them),
        follows the match and gets its state. Raises :class:`RoomClosed` (why the room
        closed) when it closed meanwhile."""
        try:
            if join is not None and join.player not in self.match.state.players.get(join.team, {}):
                await self.command(join)
        except RoomClosed:
            pass  # said below
        if not self.is_open:
            raise self.closed_by or RoomClosed("this match is no longer served here")
        for message in told:
            conn.send_model(message)
        conn.room = self
        self.connections.add(conn)
        state = self.state_for(role)
        conn.shown = _shown(state)
        conn.send_model(state)

    def submit(self, command: Command) -> asyncio.Future[list[Event]]:
        """Queue ``command``; the future gets its events once they are committed and sent (or
        the ``IllegalCommand`` that refused it, or the ``RoomClosed`` that ended the room)."""
        return self.pipeline.submit(command)

    def _after(self, events: list[Event]) -> None:
        """A change was committed: follow it, tell everyone, then the listeners. Each step
        runs whatever happens in the one before (a failing send must not stop the clock)."""
        if all(isinstance(ev, BuzzRepeated) for ev in events):
            # presses counted on refusals already told: each player hears of its own press
            # from its result, and nobody else of any
            return
        for ev in events:
            if isinstance(ev, BuzzRepeated):
                continue
            if isinstance(ev, TossupStarted):
                self.reveal_times = [(ev.t, -1)]
                self.tossup_log = []
            elif ev.type == "words_revealed":
                self.reveal_times.append((ev.t, ev.position))  # type: ignore[union-attr]
            self.tossup_log.append(event_to_dict(ev))
        # Refused buzzes change nothing a player sees: the buzzer hears of its own buzz from
        # its result, and only the moderator and the displays (which list lost races) get
        # the new state, not every phone in the room.
        quiet = all(ev.type in _QUIET_EVENTS for ev in events)
        roles: tuple[Role, ...] | None = ("moderator", "display") if quiet else None
        words_only = bool(events) and all(ev.type == "words_revealed" for ev in events)
        _safely(self.broadcast_state, self._events_for(events), roles=roles, reveal=words_only)
        if not self._reading():
            # the reading stopped (a buzz, a pause): the voice's run ends, even if the
            # reading starts again before the voice's next word (a buzz ruled at once)
            self.reading_run += 1
        _safely(self._voice_after, events)
        _safely(self._schedule_deadline)
        _safely(self._schedule_half_clock)
        self._changed.set()
        # A room closing (another process took its match, this one stops) tells its
        # listeners nothing more: the last change of its match is followed where it is served.
        if not quiet and self.is_open:
            for listener in list(self.listeners):
                _safely(listener, self, events)

    def _health_changed(self, health: RecordHealth) -> None:
        self.broadcast_state()

    def _events_for(self, events: list[Event]) -> dict[str, list[dict[str, Any]]]:
        """The events of one change as each role may see them."""
        return views.events_for(self.match, events, self.tossup_log)

    def public_tossup_id(self, tossup_id: str | None) -> str | None:
        return views.public_tossup_id(self.match, tossup_id)

    # -- views ---------------------------------------------------------------------------------

    def state_for(self, role: Role, events: list[dict[str, Any]] | None = None) -> State:
        """What ``role`` may see of the match now (:func:`views.state_view`)."""
        return views.state_view(self.match, self._facts(), role, events, now=time.time())

    def _facts(self) -> views.RoomFacts:
        health = self.pipeline.health
        return views.RoomFacts(
            match_id=self.rm.id,
            join_code=self.join_code,
            words=self.words,
            guides=self.guides,
            wpm=self.wpm,
            trajectories=self.trajectories,
            tossup_log=self.tossup_log,
            event=self.event,
            record=None
            if health.ok
            else RecordStatus(message=health.message or "", since=health.since),
            voice_note=self.voice_note,
        )

    def broadcast_state(
        self,
        events: dict[str, list[dict[str, Any]]] | None = None,
        *,
        roles: tuple[Role, ...] | None = None,
        reveal: bool = False,
    ) -> None:
        """Send every client (of ``roles``, if given) its role's state, encoded once per role,
        with the change's events in it; for a change that only revealed words (``reveal``),
        a client that takes reveals gets the change to the state it has instead, encoded
        once per role and state shown. A client whose send fails is skipped (its own
        connection handles the loss)."""
        encoded: dict[Any, tuple[str, bytes, bytes, tuple[str, int] | None] | None] = {}
        for conn in list(self.connections):
            if conn.role is None or conn.closed or (roles is not None and conn.role not in roles):
                continue
            sent = None
            if reveal and conn.reveals and conn.shown is not None:
                key = (conn.role, conn.shown)
                if key not in encoded:
                    encoded[key] = self._encode_reveal(conn.role, conn.shown)
                sent = encoded[key]
            if sent is None:
                if conn.role not in encoded:
                    role_events = (events or {}).get(conn.role)
                    state = self.state_for(conn.role, role_events)
                    encoded[conn.role] = _encoded(state.model_dump_json(), _shown(state))
                sent = encoded[conn.role]
            assert sent is not None
            text, data, frame, conn.shown = sent
            try:
                if not conn.write_now(data, frame):
                    conn.send(text)
            except Exception:
                log.exception("match %d: a state could not be sent", self.rm.id)

    def _encode_reveal(
        self, role: Role, shown: tuple[str, int]
    ) -> tuple[str, bytes, bytes, tuple[str, int] | None] | None:
        """A reveal for clients of ``role`` whose state is at ``shown``, encoded; None when a
        reveal cannot say the change (:func:`views.reveal_view`)."""
        view = views.reveal_view(self.match, self._facts(), role, shown, now=time.time())
        if view is None:
            return None
        return _encoded(view.model_dump_json(), (view.tossup, view.position))

    # -- reading -------------------------------------------------------------------------------

    def _reading(self) -> bool:
        """Whether the reader reads now: as the record says (a tossup being read, not paused),
        and the room open."""
        return self.is_open and self.match.game.reading

    async def _reader(self) -> None:
        """Reveal the next word every 60/wpm seconds while the room reads, for as long as the
        room is open: an error is logged and the reading goes on (a commit the record refused
        for now is retried by the pipeline, the reading holding at its word meanwhile)."""
        while self.is_open:
            try:
                await self._read()
            except RoomClosed:
                return
            except Exception:
                log.exception("match %d: the reading stopped on an error; going on", self.rm.id)
                await asyncio.sleep(_TIMER_RETRY)

    def reading_now(self) -> bool:
        return self._reading()

    def _voiced(self) -> bool:
        """The voice reads this match (asked for, and espeak-ng here)."""
        return self.match.config.voice and self.voice_note is None

    def voice_url(self, tossup_id: str) -> str:
        """Where the room's displays fetch a tossup's audio (``routes/voice.py``): by its
        place in the match and the room's secret, not its id."""
        index = next(i for i, t in enumerate(self.match.config.tossups) if t.id == tossup_id)
        return f"/voice/{self.rm.id}/{self.voice_key}/{index}.wav"

    def cue(self, cue: Any) -> None:
        """Send the voice's cue to the room's displays (who play it)."""
        for conn in list(self.connections):
            if conn.role == "display" and not conn.closed:
                _safely(conn.send_model, cue)

    def bonus_voice_url(self, bonus_id: str, part: int) -> str:
        index = next(i for i, b in enumerate(self.match.config.bonuses) if b.id == bonus_id)
        return f"/voice/{self.rm.id}/{self.voice_key}/bonus/{index}/{part}.wav"

    def _voice_after(self, events: list[Event]) -> None:
        """The voice after a change (the tossup's reading is :meth:`_read`'s): a word the
        moderator steps to while paused is said alone; a bonus part is said as it comes up."""
        if not self._voiced():
            return
        game = self.match.game
        steps = [ev for ev in events if ev.type == "words_revealed" and ev.source == "key"]  # type: ignore[union-attr]
        if steps and game.paused and game.tossup_id is not None:
            # (the reveals of this change are the last ones in reveal_times)
            shown = self.reveal_times[: -len(steps)]
            before = shown[-1][1] if shown else -1
            work = voice.say_words(self, game.tossup_id, before + 1, game.position)
            self._spawn(work).add_done_callback(self._log_failure)
        bonus = game.bonus
        if game.phase is Phase.BONUS and bonus is not None and not bonus.bounceback:
            part = (bonus.bonus_id, bonus.part)
            spec = self.match.config.bonus(bonus.bonus_id)
            if part != self._voiced_part and spec is not None and bonus.part < len(spec.parts):
                self._voiced_part = part
                url = self.bonus_voice_url(bonus.bonus_id, bonus.part)
                work = voice.say_bonus_part(self, spec, bonus.part, url)
                self._spawn(work).add_done_callback(self._log_failure)

    async def _synthesise(self) -> None:
        """Speak every tossup of the match ahead (in a worker thread), so a tossup's first
        word waits for no synthesis."""
        for tossup in self.match.config.tossups:
            try:
                await voice.speech_of(self, tossup.id)
            except Exception:
                log.exception("match %d: tossup %s could not be spoken", self.rm.id, tossup.id)

    async def _read(self) -> None:
        """The words keep a schedule from the first one: a slow commit makes one word late,
        not every word after it (a room among many others on one server keeps its pace). When
        the reading stops (a buzz, a pause), the schedule starts again a word after it
        resumes; a reader that fell more than a word behind skips the backlog rather than
        reveal a burst of words."""
        loop = asyncio.get_running_loop()
        next_at: float | None = None
        while self.is_open:
            spacing = 60.0 / self.wpm
            # (words that follow the moderator's keys are revealed by them alone)
            by_key = self.match.state.by_key and not self._voiced()
            if not self._reading() or by_key:
                # Until the reading starts again, the first word a word's time after that:
                # each room keeps the pace of its own start, not a grid the rooms of a
                # server share (several rooms' words falling due at once wait for each other).
                next_at = None
                self._changed.clear()
                await self._changed.wait()
                continue
            if self._voiced():
                # the voice times the words (voice.read_aloud) until the reading stops
                tossup = self.match.game.tossup_id
                first, self._voiced_tossup = tossup != self._voiced_tossup, tossup
                await voice.read_aloud(self, first=first)
                next_at = None
                await asyncio.sleep(0)
                continue
            now = loop.time()
            if next_at is None:
                next_at = now + spacing
            elif next_at < now - spacing:
                next_at = now
            await asyncio.sleep(max(0.0, next_at - now))
            if self._reading():
                # (refused if a pause is committed while it waits its turn)
                with contextlib.suppress(IllegalCommand):
                    await self.command(Reveal(paced=True))
            next_at += spacing

    def as_shown(self, rule: Rule) -> Rule:
        """A ruling that names nothing rules what the room shows as it arrives: the buzz with
        the floor, or the bonus part up. Decided later (behind other commands, or after the
        record was away), it is refused if that is no longer up, rather than taken for what
        came next (a ruling sent twice during an outage would otherwise rule the bonus part
        after the tossup)."""
        if rule.buzz_id is not None or rule.part is not None:
            return rule
        game = self.match.game
        if game.phase is Phase.BONUS and game.bonus is not None:
            update = {"part": game.bonus.part + 1, "bounceback": game.bonus.bounceback}
            return rule.model_copy(update=update)
        if game.phase in HAS_FLOOR and game.floor is not None:
            return rule.model_copy(update={"buzz_id": game.floor.buzz_id})
        return rule

    # -- deadlines -----------------------------------------------------------------------------

    def _schedule_deadline(self, retry: float = 0.0) -> None:
        game = self.match.game
        timed = (*HAS_FLOOR, Phase.AWAITING, Phase.BONUS)
        deadline = game.deadline if game.phase in timed else None
        if game.paused or not self.is_open:
            deadline = None
        if deadline == self._timer_deadline and not retry:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_deadline = deadline
        self._timer = self._spawn(self._fire(deadline, retry)) if deadline is not None else None

    def _schedule_half_clock(self) -> None:
        """A timed half's game clock (``core.officiating``): its command when it runs out."""
        length = self.match.config.rules.half_time
        ends = self.match.state.half_clock.ends(length) if length is not None else None
        if not self.is_open:
            ends = None
        if ends == self._half_ends:
            return
        if self._half_timer is not None:
            self._half_timer.cancel()
        self._half_ends = ends
        self._half_timer = self._spawn(self._half_time_up(ends)) if ends is not None else None

    async def _half_time_up(self, ends: float) -> None:
        await asyncio.sleep(max(0.0, ends - time.time()) + 0.01)
        if self._half_ends != ends or not self.is_open:
            return
        try:
            await self.command(HalfTimeUp())
        except (IllegalCommand, RoomClosed):
            pass
        except Exception:
            log.exception("match %d: the game clock's command failed", self.rm.id)

    async def _fire(self, deadline: float, delay: float = 0.0) -> None:
        await asyncio.sleep(max(0.0, deadline - time.time(), delay) + 0.01)
        if self.match.game.deadline != deadline or not self.is_open:
            return
        try:
            await self.command(TimeUp())
        except (IllegalCommand, RoomClosed):
            pass
        except Exception:
            log.exception("match %d: the timer's command failed; trying again", self.rm.id)
            self._schedule_deadline(retry=_TIMER_RETRY)

    # -- buzzing -------------------------------------------------------------------------------

    def buzz(self, conn: Connection, timing: BuzzTiming) -> None:
        """First come, first served; or, in compensated mode, hold the race for a window.

        Returns at once: the buzz is queued (:meth:`submit`) and its player gets a
        ``buzz_result`` once it is committed, so the player's socket keeps being read (and
        rate-limited) while a storm is decided.
        """
        game = self.match.game
        open_race = game.phase in (Phase.READING, Phase.AWAITING) and game.floor is None
        if self.compensated and (open_race or self._pending_task is not None):
            self._pending.append((conn, timing))
            if self._pending_task is None:
                self._pending_task = self._spawn(self._settle_race())
            return
        # credited with the word its player saw when pressing: the last one committed (and
        # so shown) now, not one a commit under way (or held by the record) shows later
        self._apply_buzz(conn, timing, max(game.position, 0) if game.phase in LIVE else None)

    async def _settle_race(self) -> None:
        await asyncio.sleep(self.race_window)
        pending, self._pending = self._pending, []
        self._pending_task = None
        # queued together: decided in one batch, earliest estimated press first
        room_rtt = room_rtt_of(self.connections)  # what the room's honest phones need
        for conn, timing in race_order(pending, max_credit=self.max_credit, room_rtt=room_rtt):
            assert timing.estimated_press is not None
            self._apply_buzz(conn, timing, position_at(self.reveal_times, timing.estimated_press))

    def _apply_buzz(self, conn: Connection, timing: BuzzTiming, word: int | None) -> None:
        assert conn.team is not None and conn.player is not None
        key = (conn.team, conn.player)
        queued = self._queued_presses.get(key)
        if queued is not None and not queued.done() and not self.pipeline.health.ok:
            # While the record is away, a player's presses wait as one: each is told that
            # press's outcome once it is stored, and the room's queue stays one press a
            # player however long the record takes (the presses folded so are not counted
            # as repeats in the record).
            queued.add_done_callback(lambda done: _tell_buzzer(conn, done))
            return
        future = self.submit(
            Buzz(team=conn.team, player=conn.player, timing=timing, word_index=word)
        )
        self._queued_presses[key] = future
        future.add_done_callback(lambda done: self._press_done(key, done))
        future.add_done_callback(lambda done: _tell_buzzer(conn, done))

    def _press_done(self, key: tuple[str, str], done: asyncio.Future) -> None:
        if self._queued_presses.get(key) is done:
            del self._queued_presses[key]


def _shown(state: State) -> tuple[str, int] | None:
    """The tossup and position a state shows (what a reveal that follows it must start from)."""
    return (state.tossup.id, state.tossup.position) if state.tossup is not None else None


def _encoded(
    text: str, shown: tuple[str, int] | None
) -> tuple[str, bytes, bytes, tuple[str, int] | None]:
    data = text.encode()
    return text, data, text_frame(data), shown


def _safely(work: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        work(*args, **kwargs)
    except Exception:
        log.exception("%s failed", getattr(work, "__qualname__", work))


def _tell_buzzer(conn: Connection, done: asyncio.Future[list[Event]]) -> None:
    """Send a buzz's player its outcome (or why it could not be taken)."""
    if done.cancelled():
        return
    exc = done.exception()
    if isinstance(exc, IllegalCommand):
        conn.send_model(ErrorMsg(code="illegal", message=str(exc), in_reply_to="buzz"))
        return
    if isinstance(exc, RoomClosed):
        message = f"the buzz was not recorded: {exc}"
        conn.send_model(ErrorMsg(code=exc.code, message=message, in_reply_to="buzz", url=exc.url))  # type: ignore[arg-type]
        return
    if exc is not None:
        conn.send_model(
            ErrorMsg(
                code="server_error",
                message="the buzz could not be recorded: buzz again",
                in_reply_to="buzz",
            )
        )
        return
    for ev in done.result():
        if isinstance(ev, BuzzRepeated):  # refused as its first refusal was
            conn.send_model(
                BuzzResult(buzz_id=ev.buzz_id, outcome=ev.reason.value, word_index=ev.word_index)
            )
            return
        if isinstance(ev, BuzzAccepted | BuzzRefused):
            outcome = "won" if isinstance(ev, BuzzAccepted) else ev.reason.value
            margin = ev.margin if isinstance(ev, BuzzRefused) else None
            conn.send_model(
                BuzzResult(
                    buzz_id=ev.buzz_id, outcome=outcome, word_index=ev.word_index, margin=margin
                )
            )
            return
