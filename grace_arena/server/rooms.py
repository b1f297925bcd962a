"""The rooms this process serves: every match is played in a room. A join code names a room;
a room plays a schedule of one or more games, one after another: an event's room the games the
event's schedule gives it, a match of its own a schedule of one game (the record makes an event
of its own for it, with its teams and players). This layer owns the codes, the schedules, the
players and their tokens, the moderator check and what a server speaks of (replays, summaries).

It sits above the arena (``arena.py``), which owns the live matches and their leases: it asks
the arena to create, reopen, serve and retire matches, and follows them through the arena's
hook (:class:`Rooms` is an ``ArenaListener``); the arena knows nothing of rooms. The arena's
``rooms`` is the one record of which match is live here: a room keeps only the id of its
current match.

A server process serves the events it was started for (``serve --event``), or, started for
none, the events the record made for matches of their own (:meth:`Rooms.serves`): a code of
anything else opens nothing and changes nothing in the record. A match of its own is a room
with one game: its event's room and game are written with it (:meth:`MatchStore.create`; a
match of an older record that has none gets them when it is opened), so it is opened,
joined, moderated and replayed as every other room is.

A room is found by its join code, which stays the same from round to round. The room's
current match is the first of its schedule that has not ended: opened from the record if it
exists (this process takes its lease), created from the schedule if not. When a match ends,
the room moves on: its next match is created and every connection of the ended one gets
``next_match`` and says ``hello`` again, as after a dropped connection. A player is someone
of the room's event (a token valid in every room and round of it), so a phone comes back as
the same player of the same team in every round, on every server process of the event (a
player not in this process's memory is looked up in the record); a player whose team plays
in another room, or not yet, waits and is sent on when the team's match opens here. A room
whose server process died (its lease lapsed, or its holder is known dead) is taken over by
another process serving the event. An event's standings are computed by one of its processes
(the holder of the event's standings claim, ``record/standings_record.py``), once per change
of the record's version of them, by folding the results of the matches that changed into the
rows (``record/standings_fold.py``), and published as a snapshot with that version, the views
of each phase and pool with it: to this process's clients (``standings_feed.py``) and, through
the record, to the other processes, which read it and compute nothing. When the computing
process dies, another takes the claim and computes afresh from the record. A client's request
computes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from grace_arena.core.commands import Join
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Event
from grace_arena.core.standings import RESULT_EVENTS
from grace_arena.protocol import (
    Control,
    ErrorMsg,
    Hello,
    Joined,
    MatchSetup,
    NextMatch,
    PhaseInfo,
    RoomStatus,
    Servers,
    StandingsView,
    TeamSetup,
    TeamView,
    Waiting,
    Welcome,
)
from grace_arena.record import claims, lease, notices, standings_record
from grace_arena.record.models import ArenaEventRow, EventPlayerRow, MatchRow
from grace_arena.record.roster import ORGANISER, claim_matches, remove_player, walk_ins_allowed
from grace_arena.record.schedule import (
    EventPlan,
    GamePlan,
    NoSuchPhase,
    PhasePlan,
    PoolPlan,
    StandingsReader,
    find_room_by_code,
    load_plan,
    new_join_code,
    open_match_ids,
    pool_of_phase,
    standings_stamp,
)
from grace_arena.record.standings_fold import EventFold
from grace_arena.record.store import (
    GameTaken,
    RecordError,
    is_transient,
    register_player,
)
from grace_arena.server.arena import Arena
from grace_arena.server.connection import CLOSE_REPLACED, Connection, next_join
from grace_arena.server.pipeline import RoomClosed, short_reason
from grace_arena.server.room import Room
from grace_arena.server.schedules import (
    Schedule,
    ScheduledRoom,
    event_view,
    match_moderator_hashes,
    moves_on_text,
    room_name,
    schedule_of,
    starts_when,
    waiting_text_of,
)
from grace_arena.server.spoilers import yet_to_read
from grace_arena.server.standings_feed import Snapshot, StandingsFeed
from grace_arena.server.tokens import Tokens, token_in, token_sha256
from grace_arena.server.views import standings_view

log = logging.getLogger(__name__)

#: Events after which the standings change (a tossup started is a tossup heard; a bonus part
#: ruled, a correction, a protest resolved: the record's version of the standings moves too).
_STANDINGS_EVENTS = RESULT_EVENTS
#: Seconds between reads of the record's changes to an event's standings: of its version, by
#: the process that computes them (changes made in its own rooms are computed at once); of the
#: snapshot published, by the others while clients of theirs wait for newer standings.
STANDINGS_FOLLOW = 0.25
#: The same while the record tells this process of changes as they are committed (PostgreSQL's
#: notices, :mod:`grace_arena.record.notices`): the reads are only what catches one missed.
STANDINGS_FOLLOW_TOLD = 2.0
#: The least time from one computation of an event's standings to the next: the changes of
#: a burst (a hundred rooms ruling within a moment) are folded once, and a projector that
#: keeps the standings up gets a few versions a second at most, each of them complete.
STANDINGS_EVERY = 0.25
#: The longest the first request for an event's standings waits for the process that
#: computes them to publish them (then this process computes them for its own clients).
FIRST_STANDINGS_WAIT = 10.0
#: How long a player's hello waits for another process to let the player go (a phone that
#: left it a moment ago) before it is told the player is in use.
CLAIM_WAIT = 2.0
#: How long a hello waits for the record to take its player's claim: past it, the record is
#: away or slow, and the player plays (this process's own check holds).
CLAIM_TIMEOUT = 1.0
#: How long a player whose connection ended without leaving (the server turned it away: its
#: match is full; or its network dropped) keeps a place in an event that is full: the phone
#: comes back within it, and a stranger's name does not take the place meanwhile. A phone that
#: closed its connection itself left: its place is free at once.
PLACE_KEPT = 120.0
#: The transport's reader of a connection's next message (None after an error reply).
Receive = Callable[[float | None], Awaitable[Any]]
#: One computation of an event's standings: the record's version of them, the event's view,
#: each phase's and pool's (by ids), the phases and pools (ids and names).
Computed = tuple[int, StandingsView, dict[str, StandingsView], list[dict[str, Any]]]
#: Settings of a scheduled match that the event's defaults may give.
_SETUP_DEFAULTS = frozenset(MatchSetup.model_fields) - {"packet_id", "title", "tossup_ids", "teams"}


class EventFull(RecordError):
    """The event has registered as many players as it takes."""


class Refused(Exception):
    """A ``hello`` or a ``join`` that opens nothing: the error reply it gets, and whether it
    was a guess (a wrong code or token, charged to the address)."""

    def __init__(
        self, code: str, message: str, *, url: str | None = None, guess: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.url = url
        self.guess = guess


@dataclass
class Admission:
    """What a ``hello`` opens: the live match, the room it is played in, the teams a new
    player may join; for a player's token, who the player is."""

    room: Room
    place: ScheduledRoom
    teams: list[TeamView]
    player: PlayerRecord | None = None


@dataclass
class PlayerRecord:
    """A player of an event: the team they play for, whatever the room or round."""

    id: str
    team: str
    name: str


class Rooms:
    """The rooms this process serves (an event's, a match of its own's), by join code, and
    the players waiting for their team's match."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        settings = arena.settings
        #: The server token's and the players' (an event's rooms give the server token their
        #: event's scope when they open).
        self.tokens = Tokens(settings.secret or secrets.token_hex(32), settings.token_scope)
        #: The ids of the events this process serves (``serve --event``; none: matches of
        #: their own).
        self.served: set[int] = set()
        self.rooms: dict[str, ScheduledRoom] = {}  # by join code
        self._by_match: dict[int, ScheduledRoom] = {}  # by the id of a match they played
        self.plans: dict[int, EventPlan] = {}  # the latest read of each event served here
        self.players: dict[int, dict[str, PlayerRecord]] = {}  # event id -> player id -> ...
        #: event id -> the connections waiting for their team's match, and what each was told
        self.waiting: dict[int, dict[Connection, str]] = {}
        self._moderator_tokens: dict[str, str] = {}  # join code -> token issued here
        self._standings: dict[int, StandingsView] = {}
        self.standings_version: dict[int, int] = {}  # bumped with every recomputation
        self._refreshing: dict[int, asyncio.Task] = {}
        self._again: set[int] = set()
        #: Per event: the changes asked to be computed here so far (a count), the count the
        #: last finished computation began after (it counted every change asked before),
        #: and who waits for that to move.
        self._asked: dict[int, int] = {}
        self._covered: dict[int, int] = {}
        self._covered_moved: dict[int, asyncio.Event] = {}
        self._readers: dict[int, StandingsReader] = {}  # by event id
        self._folded_at: dict[int, float] = {}  # the loop's time of each event's last fold
        self._folds: dict[int, EventFold] = {}  # by event id: the standings folded here
        #: Held by each computation of an event's standings (a worker thread's), from the
        #: record's version read to the views made: one at a time, each of one state.
        self._computing: dict[int, threading.RLock] = {}
        #: The events whose standings this process computes (it holds their standings claim).
        self._leading: set[int] = set()
        self._forced: set[int] = set()
        #: Computations of standings made here (folds of the record's changes), and the
        #: seconds each of the last ones took (to its snapshot published here).
        self.standings_computed = 0
        self.standings_seconds: deque[float] = deque(maxlen=1000)
        #: Each event's standings as last computed, versioned, for every client to read.
        self.feed = StandingsFeed()
        #: Replies of the standings encoded (``routes/events.py``): (event id, version,
        #: phase, pool) -> (the loop's time it was encoded, its JSON).
        self.standings_replies: dict[tuple[int, int, str | None, str | None], tuple[float, bytes]]
        self.standings_replies = {}
        #: The plan each event's standings were last computed with (its rooms' matches).
        self.standings_plans: dict[int, EventPlan] = {}
        self._follower: asyncio.Task | None = None
        #: Notices of the record's changes (results committed, standings published) from
        #: the other processes, where the record has them (PostgreSQL).
        self.listener: notices.Listener | None = None
        self._registering: dict[int, asyncio.Lock] = {}  # event id -> one registration at once
        #: New names registered from phones, per event and address (this process): a walk-in
        #: may type a name, but one address may not fill an event with them.
        self.new_names: dict[tuple[int, str], int] = {}
        self._tasks: set[asyncio.Task] = set()  # moving rooms on
        #: The player (event id, player id) each connection here has claimed in the record.
        self._claimed: dict[Connection, tuple[int, str]] = {}
        #: When the connection here of each player (event id, player id) ended without the
        #: player's leaving (:data:`PLACE_KEPT`).
        self._left: dict[tuple[int, str], float] = {}
        #: Every open connection of this process, in a room, waiting, or on its way.
        self.connections: set[Connection] = set()
        arena.subscribe(self)

    @property
    def engine(self):
        return self.arena.engine

    def serves(self, event_id: int, meta: dict[str, Any]) -> bool:
        """Whether this process serves (opens, replays, sums up) the rooms of the event
        ``event_id`` (its record's ``meta``): a server of events, of those events; any other,
        of the events the record made for matches of their own."""
        return event_id in self.served if self.served else "created_for_match" in meta

    def serves_match(self, session: Session, row: MatchRow) -> bool:
        """Whether this process speaks of (replays, sums up) a match of the record: one played
        here, not imported, of an event it :meth:`serves`."""
        event = session.get(ArenaEventRow, row.event_id)
        return row.source is None and event is not None and self.serves(event.id, event.meta)  # type: ignore[arg-type]

    def servers(self) -> list[str]:
        """The other server processes a client of a room served here may turn to: those
        serving what this one serves (the same events; none: matches of their own)."""
        if self.arena.settings.proxy_url is not None:  # the proxy is the one address
            return []
        return [p.url for p in self.arena.peers if set(p.events) == self.served]

    def on_peers(self) -> None:
        """The other server processes changed: every client here is told where to turn."""
        urls = self.servers()
        for room in list(self.arena.rooms.values()):
            for conn in list(room.connections):
                conn.send_model(Servers(urls=urls))

    def live(self, sr: ScheduledRoom) -> Room | None:
        """The room's current match, if this process serves it now."""
        return self.arena.rooms.get(sr.match_id) if sr.match_id is not None else None

    def live_in(self, join_code: str) -> Room | None:
        """The live match of the room with this join code, if this process serves it now."""
        sr = self.rooms.get(join_code.strip().upper())
        return self.live(sr) if sr is not None else None

    def room_of(self, room: Room) -> ScheduledRoom | None:
        """The room a live match is played in."""
        sr = self._by_match.get(room.rm.id)
        return sr if sr is not None and sr.match_id == room.rm.id else None

    def event_rooms(self) -> list[ScheduledRoom]:
        """The rooms served here that play rounds (an event's), in the order they were
        opened."""
        return [r for r in self.rooms.values() if r.rounds]

    # -- opening rooms -------------------------------------------------------------------------

    async def open_event(self, name: str, rooms: list[str] | None = None) -> list[ScheduledRoom]:
        """Serve the event: its rooms (those named in ``rooms``, or all) each open their
        current match now; a room whose match another live process serves is left to it (and
        logged). Hellos to the event's other rooms are answered too (a room of another process
        that stopped is taken over)."""
        plan = await asyncio.to_thread(load_plan, self.engine, name)
        if not plan.rooms:
            raise RecordError(
                f"event {plan.name!r} has no schedule yet: "
                f"grace-arena event schedule {plan.name} --rooms N --packet ..."
            )
        chosen = list(plan.rooms)
        if rooms:
            unknown = [r for r in rooms if plan.room(r) is None]
            if unknown:
                have = ", ".join(r.name for r in plan.rooms)
                raise RecordError(f"event {plan.name!r} has no room {unknown} (rooms: {have})")
            chosen = [r for r in plan.rooms if r.id in rooms or r.name in rooms]
        self.served.add(plan.id)
        # the server token of an event's processes is the event's, however it was named
        self.tokens.scope = f"event:{plan.name}"
        await self._load(plan)
        opened = []
        for plan_room in chosen:
            sr = self._register(plan, Schedule(plan.id, plan_room.id))
            try:
                await self.advance(sr, plan)
            except lease.LeaseHeld as exc:
                log.warning("room %s of %s not opened here: %s", sr.name, plan.name, exc)
                continue
            opened.append(sr)
        await self.arena.register(self.served)
        return opened

    async def open_match(self, setup: MatchSetup) -> Room:
        """Create a match of its own (its event's room and its one game are written with it)
        and serve it in that room, as every room is served (:meth:`advance`)."""
        code = await asyncio.to_thread(self._new_join_code, frozenset(self.rooms))
        room = await self.arena.create(setup, join_code=code)
        schedule = await asyncio.to_thread(self._schedule_of_code, room.join_code)
        assert schedule is not None
        plan = await asyncio.to_thread(schedule.read, self.engine)
        await self.advance(self._register(plan, schedule), plan, created=room)
        return room

    async def restore(self) -> None:
        """Reopen the room of every unfinished match of the record that this process serves
        (:meth:`serves`) and no other live server process does (after a crash or a restart),
        in the order the matches were made: each by its join code, as a hello opens it."""

        def unfinished() -> list[str]:
            with Session(self.engine) as session:
                rows = session.exec(
                    select(MatchRow.join_code, ArenaEventRow.id, ArenaEventRow.meta)
                    .join(ArenaEventRow, ArenaEventRow.id == MatchRow.event_id)  # type: ignore[arg-type]
                    .where(MatchRow.ended_at.is_(None), MatchRow.join_code.is_not(None))  # type: ignore[union-attr]
                    .order_by(MatchRow.id)  # type: ignore[arg-type]  (PostgreSQL has no order unless asked)
                ).all()
            return [code for code, event_id, meta in rows if self.serves(event_id, meta or {})]  # type: ignore[misc]

        for code in dict.fromkeys(await asyncio.to_thread(unfinished)):
            try:
                await self.room_by_code(code)
            except lease.LeaseHeld as exc:
                log.warning("not reopened here: %s", exc)

    def _new_join_code(self, taken: frozenset[str]) -> str:
        """A join code no room has, here (``taken``) or in the record (a worker thread's
        work)."""
        while True:
            code = new_join_code(taken)
            if (
                self.arena.store.find_by_join_code(code) is None
                and find_room_by_code(self.engine, code) is None
            ):
                return code

    def _schedule_of_code(self, code: str) -> Schedule | None:
        """The room a join code names in the record (a worker thread's work). A match of its
        own of an older record has no room yet: it is written now."""
        found = find_room_by_code(self.engine, code)
        if found is None:
            row = self.arena.store.find_by_join_code(code)
            if row is not None and row.id is not None and row.ended_at is None:
                found = self.arena.store.add_one_game_room(row.id)
        return Schedule(*found) if found is not None else None

    async def _load(self, plan: EventPlan) -> None:
        """The event's packets, from the record when this process was given no file."""
        from grace_arena.record.packets import packet_from_record

        missing = sorted({r.packet_id for r in plan.rounds} - set(self.arena.packets))

        def read() -> dict:
            return {packet_id: packet_from_record(self.engine, packet_id) for packet_id in missing}

        if missing:
            for packet_id, packet in (await asyncio.to_thread(read)).items():
                self.arena.packets.setdefault(packet_id, packet)

    def _remember(self, plan: EventPlan) -> None:
        self.plans[plan.id] = plan
        known = self.players.setdefault(plan.id, {})
        for p in plan.players:
            known.setdefault(p.id, PlayerRecord(p.id, p.team, p.name))

    async def _read(self, event_id: int) -> EventPlan:
        """The event's plan as the record holds it now."""
        return await asyncio.to_thread(load_plan, self.engine, event_id)

    def _register(self, plan: EventPlan, schedule: Schedule) -> ScheduledRoom:
        self._remember(plan)
        room = plan.room(schedule.room_id)
        assert room is not None
        sr = self.rooms.get(room.join_code)
        if sr is None:
            sr = ScheduledRoom(
                schedule=schedule,
                event_id=plan.id,
                event_name=plan.name,
                event_title=plan.title,
                rounds=len(plan.rounds),
                room_id=room.id,
                name=room.name,
                join_code=room.join_code,
            )
            self.rooms[room.join_code] = sr
        return sr

    async def room_for(
        self, code: str | None, match_id: int | None = None, role: str = "player"
    ) -> Room | None:
        """The live match a ``hello`` asks for: the current match of the room its join code
        names, or a moderator's match by id (its room's). Raises ``LeaseHeld`` when another
        live process serves it."""
        if role == "moderator" and match_id is not None:
            room = self.arena.rooms.get(match_id)
            if room is not None:
                return room
            row = await asyncio.to_thread(self.arena.store.match_row, match_id)
            code = row.join_code if row is not None else None
        return await self.room_by_code(code) if code else None

    async def room_by_code(self, code: str) -> Room | None:
        """The live match of the room with this join code (opened here if this process was
        not serving it: a room of another process that stopped). None: no room this process
        speaks of, or every match of the room has ended. Raises ``LeaseHeld`` when another
        live process serves the room's match."""
        code = code.strip().upper()
        sr = self.rooms.get(code)
        if sr is None:
            schedule = await asyncio.to_thread(self._schedule_of_code, code)
            if schedule is None:
                return None
            plan = await asyncio.to_thread(schedule.read, self.engine)
            if not self.serves(plan.id, dict(plan.meta)):
                return None  # not this process's to open
            await self._load(plan)
            sr = self._register(plan, schedule)
        room = self.live(sr)
        if room is not None:
            return room
        return await self.advance(sr)

    async def advance(
        self, sr: ScheduledRoom, plan: EventPlan | None = None, *, created: Room | None = None
    ) -> Room | None:
        """Open the room's current match: the one under way, or the next of its schedule
        (created now; or ``created`` already, with the room). None when every match of the
        room has ended, or its next one waits."""
        async with sr.lock:
            if plan is None:
                plan = await asyncio.to_thread(sr.schedule.read, self.engine)
            self._remember(plan)
            game = plan.current_game(sr.room_id)
            if game is None:
                sr.done, sr.game = True, None
                return None
            live = self.live(sr)
            if live is not None and live.rm.id == game.match_id:
                return live
            if game.match_id is None and (blockers := plan.blockers(game)):
                sr.game, sr.done = game, False
                sr.waiting = waiting_text_of(plan, sr, game, blockers)
                return None
            # (read before the match is opened: from its opening to its serving nothing
            # waits, so a process that begins to stop meanwhile holds no lease it won't serve)
            hashes = await asyncio.to_thread(sr.schedule.moderator_hashes, self.engine)
            if created is not None and created.rm.id == game.match_id:
                room = created
            else:
                room = await self._open_game(sr, plan, game)
            room.event = event_view(plan, sr, game)
            room.event_id = plan.id
            sr.match_id, sr.game, sr.done, sr.waiting = room.rm.id, game, False, None
            sr.title = room.match.config.title
            self._by_match[room.rm.id] = sr
            if room.rm.id not in self.arena.rooms:
                self.arena.serve(room, hashes=frozenset(hashes))
        self._send_on_waiting(sr.event_id)
        self._standings_change(sr, begun=True)  # (what the room plays now: the schedule's)
        return room

    async def _open_game(self, sr: ScheduledRoom, plan: EventPlan, game: GamePlan) -> Room:
        if game.match_id is not None:
            match_id = game.match_id
            return await self.arena.open_once(
                match_id, lambda: self.arena.reopen(match_id, sr.join_code)
            )
        setup = self.game_setup(plan, game)
        try:
            return await self.arena.create(
                setup, event=plan.name, game_id=game.id, join_code=sr.join_code
            )
        except GameTaken:  # another process created it first: open theirs
            fresh = await self._read(sr.event_id)
            match_id = next(g.match_id for g in fresh.games if g.id == game.id)
            assert match_id is not None
            return await self.arena.open_once(
                match_id, lambda: self.arena.reopen(match_id, sr.join_code)
            )

    def game_setup(self, plan: EventPlan, game: GamePlan) -> MatchSetup:
        """The match a scheduled game is: its teams, its round's packet, the event's rules."""
        rnd = plan.round_(game.round)
        if rnd is None:
            raise RecordError(f"event {plan.name!r} has no round {game.round}")
        teams = []
        for team_id in game.teams:
            t = plan.team(team_id)
            if t is None:
                raise RecordError(f"event {plan.name!r} has no team {team_id!r}")
            teams.append(
                TeamSetup(
                    id=t.id,
                    name=t.name,
                    kind="model" if t.kind == "model" else "human",
                    model=t.model,
                    threshold=t.threshold,
                    confidence="verbal" if t.confidence == "verbal" else "logit",
                )
            )
        room = plan.room(game.room_id or "")
        names = " vs ".join(t.name for t in teams)
        defaults = {k: v for k, v in plan.defaults.items() if k in _SETUP_DEFAULTS}
        return MatchSetup(
            packet_id=rnd.packet_id,
            title=f"{plan.title}, round {game.round}, {room_name(room)}: {names}",
            tossup_ids=list(rnd.tossup_ids) if rnd.tossup_ids is not None else None,
            teams=teams,
            **defaults,
        )

    # -- following the matches (the arena's hook) -------------------------------------------------

    def on_events(self, room: Room, events: list[Event]) -> None:
        sr = self.room_of(room)
        if sr is None:  # (a match opened by the arena alone)
            return
        types = {ev.type for ev in events}
        if types & _STANDINGS_EVENTS:
            # (a match's first tossup makes it a match under way: computed whatever the
            # record's version says)
            begun = "tossup_started" in types and len(room.match.game.played) <= 1
            self._standings_change(sr, begun=begun)
        if "match_ended" in types:
            self._spawn(self._move_on(sr, room))
            self._spawn(self.recheck_waiting(sr.event_id, but=sr))

    def on_retired(self, room: Room) -> None:
        """A match stopped being served here (it ended, another process took it over, the
        server stops): its room no longer has it live here."""
        moved = room.closed_by is not None and room.closed_by.code == "elsewhere"
        for sr in self.rooms.values():
            if sr.match_id == room.rm.id and moved:
                sr.match_id = None

    async def on_tick(self) -> None:
        """After each renewal of the leases: rooms waiting for other rooms' matches move on
        when those ended (here or in another process), and rooms of the events served here
        whose server process died are taken over."""
        try:
            await self.renew_claims()
        except Exception as exc:
            log.warning("renewing the players' claims failed (%s); trying again", exc)
        await self.recheck_waiting()
        await self.adopt_orphans()
        await self.take_standings_lead()
        await self.follow_standings()
        await self.reread_waiting()

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _move_on(self, sr: ScheduledRoom, ended: Room) -> None:
        """The room's match ended: open its next one and send everyone there."""
        try:
            new = await self.advance(sr)
        except RoomClosed:  # this process is stopping: the next process opens it
            return
        except Exception:
            log.exception("room %s of %s: its next match did not open", sr.name, sr.event_name)
            return
        if new is ended:  # its schedule goes on with the match that ended: nowhere to go
            return
        if new is None:
            if sr.waiting is None:
                log.info("room %s of %s has played all its matches", sr.name, sr.event_name)
            else:
                self._wait_in(sr, ended)
            self._send_on_waiting(sr.event_id)  # the players waiting elsewhere: why, now
            return
        plan_of = self.plans.get(sr.event_id)
        moved = list(ended.connections)
        ended.connections.clear()
        ended.controller = None
        for conn in moved:
            conn.room = None
            send_on(conn, sr, moves_on_text(plan_of, sr))
        await self.arena.retire(ended, RoomClosed("this match has ended", code="illegal"))

    def _wait_in(self, sr: ScheduledRoom, ended: Room) -> None:
        """The room's next match cannot start yet: its ended match stays on the moderator's
        and displays' screens, saying what it waits for; each player is sent to the team's
        match if it is open in another room, or waits for it."""
        if ended.event is not None:
            ended.event = ended.event.model_copy(update={"waiting": sr.waiting})
            ended.broadcast_state()
        plan = self.plans.get(sr.event_id)
        for conn in list(ended.connections):
            if conn.role != "player" or not conn.team or plan is None:
                continue
            seat, where = self._seat_in(plan, conn.team)
            if seat is not None:
                send_on(conn, seat, where)
                continue
            ended.connections.discard(conn)
            conn.room, conn.waiting_event = None, sr.event_id
            self.wait(sr.event_id, conn, where)

    async def recheck_waiting(
        self, event_id: int | None = None, but: ScheduledRoom | None = None
    ) -> None:
        """Move on the rooms (of the event, or of every event) whose next match waited for
        teams of an earlier round: a match that held them may have ended, here or in another
        process sharing the record."""
        for sr in list(self.rooms.values()):
            other = event_id is not None and sr.event_id != event_id
            if sr is but or sr.waiting is None or other:
                continue
            try:
                live = self.live(sr)
                if live is not None:
                    await self._move_on(sr, live)
                else:
                    await self.advance(sr)
            except Exception:
                log.exception("room %s of %s: its next match did not open", sr.name, sr.event_name)

    async def reread_waiting(self) -> None:
        """Read again the plan of each event with players waiting here (another process may
        have opened their team's match), and send them on."""
        for event_id, waiting in list(self.waiting.items()):
            if not waiting:
                continue
            try:
                self._remember(await self._read(event_id))
            except Exception as exc:
                log.warning("event %d not read again (%s)", event_id, short_reason(exc))
                continue
            self._send_on_waiting(event_id)

    async def adopt_orphans(self) -> None:
        """Take over the rooms of the events served here whose current match's server process
        died (its lease lapsed, or it is known dead): their phones, sent here, find them
        served, at the word where they stopped."""
        candidates: dict[int, ScheduledRoom] = {}
        lapsed: set[int] = set()
        for event_id in list(self.served):
            plan = self.plans.get(event_id)
            if plan is None:
                continue
            foreign = [r for r in plan.rooms if self.live_in(r.join_code) is None]
            if not foreign:
                continue  # every room of it is served here
            its_lapsed = await asyncio.to_thread(self._lapsed, event_id)
            if not its_lapsed:
                continue  # no match of it lost its process (the plan is not read)
            lapsed |= its_lapsed
            plan = await self._read(event_id)  # as it is now
            self._remember(plan)
            for plan_room in plan.rooms:
                game = plan.current_game(plan_room.id)
                if game is None or game.match_id is None or game.match_id in self.arena.rooms:
                    continue
                schedule = Schedule(plan.id, plan_room.id)
                candidates[game.match_id] = self._register(plan, schedule)
        # (a room whose current match lost its process; another process may take it first:
        # ``advance`` takes its lease or finds it held)
        for match_id in sorted(lapsed & candidates.keys()):
            sr = candidates[match_id]
            try:
                if await self.advance(sr) is not None:
                    log.warning("room %s of %s: taken over here", sr.name, sr.event_name)
            except lease.LeaseHeld:
                pass  # another process was quicker
            except Exception:
                log.exception("room %s of %s could not be taken over", sr.name, sr.event_name)

    def _lapsed(self, event_id: int) -> set[int]:
        """The event's matches not ended nor served here whose server process died (one
        query of the event's games, one of their leases)."""
        mine = open_match_ids(self.engine, event_id) - set(self.arena.rooms)
        return lease.orphaned(self.engine, mine, ttl=self.arena.settings.lease_ttl)

    def waiting_text(self, code: str) -> str | None:
        """Why the room with this join code has no match open now, if it waits."""
        sr = self.rooms.get(code.strip().upper())
        return sr.waiting if sr is not None else None

    # -- a phone's way to its seat ------------------------------------------------------------

    async def enter(self, conn: Connection, hello: Hello, receive: Receive) -> bool:
        """Take ``hello`` on ``conn``, down to its seat: what it opens (:meth:`admit`), the
        moderator who controls the match, the room the connection was in left, the
        ``welcome``; for a new player, a ``join`` read with ``receive`` (the transport's) and
        the player it names (:meth:`join`); for a known one, their seat (:meth:`seat`); then
        the connection follows its room. True when the hello holds (the connection is in its
        room, waits for its team's next match, or ended); raises :class:`Refused` when it
        opens nothing (a wrong code or token charged to the address)."""
        guard = self.arena.guard
        # an address's codes and tokens are looked at a few at a time (guard.SLOTS), those
        # in flight charged all the same: sockets sent together buy no more guesses; a
        # connection that guesses is held on its own, its address only at its ceiling
        async with guard.turn(conn.address):
            wait = guard.wait(conn.address, connection=conn)
            if wait:
                raise Refused("rate_limited", guard.message(wait))
            try:
                admission = await self.admit(hello)
            except Refused as exc:
                if exc.guess:
                    guard.failed(conn.address, connection=conn)
                raise
            room, sr = admission.room, admission.place
            if (
                hello.role == "moderator"
                and _controlled_by_another(room, conn)
                and not (hello.watch or hello.take_over)
            ):
                message = (
                    "another moderator controls this match: take over (the other then "
                    "watches) or watch"
                )
                raise Refused("in_use", message)
            if admission.player is not None:
                # a token is the player's on one device at a time, as a name is: a kept token
                # does not play beside its player (a phone that comes back takes its seat once
                # the one it left stopped answering)
                await self.claim(conn, sr.event_id, admission.player)
        # the hello holds: leave the room this connection was in (a hello again, or a room
        # that moved on); its watchers hear of a controller that left here, unless it is the
        # room this hello takes control of again (they hear of that below)
        self.leave(conn, tell=conn.room is not room)
        conn.moved = False
        if hello.role == "moderator":
            _take_control(room, conn, hello)
        conn.role = hello.role
        needs_join = hello.role == "player" and conn.player is None
        conn.send_model(
            Welcome(
                role=hello.role,
                match_id=room.rm.id,
                watching=conn.watching,
                needs_join=needs_join,
                teams=admission.teams,
                title=sr.title,
                event=room.event,
                walk_ins=self.walk_ins(sr.event_id),
            )
        )
        try:
            if needs_join:
                seated = await self._join_by(conn, room, sr, receive)
            elif admission.player is not None:
                seated = await self.seat(conn, room, sr, hello.token or "", admission.player)
            else:  # a moderator, or a projector
                await room.seat(conn, hello.role)
                seated = True
            if not seated:  # waiting for the team's next match, or ended
                return True
        except IllegalCommand as exc:  # a refused join (the match is full)
            _error(conn, "not_allowed", str(exc), "hello")
            return True
        except RoomClosed as exc:  # it closed meanwhile: say where the match is now
            raise Refused(exc.code, str(exc), url=exc.url) from exc
        # where to turn if this server cannot be reached, as the arena knows it now: the
        # connection is in its room from here on, so a change of the servers after this
        # reaches it (one before, while it joined, is in this list)
        urls = self.servers()
        if urls:
            conn.send_model(Servers(urls=urls))
        if conn.watching:
            _tell(conn, controlled=_controlled_by_another(room, conn))
        return True

    async def _join_by(
        self, conn: Connection, room: Room, sr: ScheduledRoom, receive: Receive
    ) -> bool:
        """A new player picks a team and a name (:meth:`join`) within the join timeout (a
        refused ``join`` is told why, and another one read); False when the connection waits
        or ended."""
        join_by = time.monotonic() + self.arena.settings.join_timeout
        while (msg := await next_join(conn, receive, join_by)) is not None:
            try:
                return await self.join(conn, room, sr, msg.team, msg.name.strip(), msg.code)
            except Refused as exc:
                if exc.guess:  # a wrong claim code: charged to the address, as codes are
                    self.arena.guard.failed(conn.address)
                _error(conn, exc.code, str(exc), "join", url=self.arena.told_url(exc.url))
        return False

    def leave(self, conn: Connection, *, tell: bool = True) -> None:
        """Take ``conn`` out of its room (and out of the players waiting). A moderator in
        control gives it up: the room's watchers are told (``tell``), unless the room moved on
        with everyone in it."""
        room = conn.room
        if room is not None:
            room.connections.discard(conn)
            if room.controller is conn:
                room.controller = None
                if tell and not conn.moved:  # the watchers may take control now
                    _tell_watchers(room, controlled=False)
        for conns in self.waiting.values():
            conns.pop(conn, None)
        conn.room = None
        conn.waiting_event = None

    async def admit(self, hello: Hello) -> Admission:
        """What ``hello`` opens (:class:`Admission`): the current match of the room its join
        code names (or a moderator's match by id), its moderator token right, or the player
        its player token names. Raises :class:`Refused` when it opens nothing."""
        try:
            room = await self.room_for(hello.join_code, hello.match_id, hello.role)
        except lease.LeaseHeld as exc:
            raise Refused("elsewhere", str(exc), url=exc.holder.url) from exc
        except RoomClosed as exc:  # this process is stopping
            raise Refused(exc.code, str(exc), url=exc.url) from exc
        if room is None:
            waiting = self.waiting_text(hello.join_code or "")
            message = waiting or "no live match with that join code or id"
            raise Refused("not_found", message, guess=waiting is None)
        sr = self.room_of(room)
        if sr is None:  # its room moved on to its next match a moment ago
            gone = RoomClosed("this match is no longer served here")
            raise Refused(gone.code, str(gone), url=gone.url)
        admission = Admission(room, sr, self._joinable(sr))
        if hello.role == "moderator":
            if not await self.is_moderator(room.rm.id, hello.token):
                raise Refused("unauthorized", "wrong moderator token", guess=True)
        elif hello.role == "display":
            await self._display_granted(room, sr, hello.token)
        elif hello.role == "player" and hello.token:
            player_id = self.tokens.player_id(self.token_scope(sr), hello.token)
            record = await self.player(sr.event_id, player_id or "")
            if record is None:
                raise Refused("unauthorized", "unknown player token; join again", guess=True)
            admission.player = record
        return admission

    async def _display_granted(self, room: Room, sr: ScheduledRoom, token: str | None) -> None:
        """A room's display needs the room's or the organiser's grant (:meth:`Tokens.display`)
        in a match the voice reads (the display gets each tossup's audio whole), and while
        another room of its event, or another match here, has yet to read what the room
        reads (:func:`spoilers.yet_to_read`, the rule of replays); raises :class:`Refused`
        otherwise (a wrong grant is a guess)."""
        if self.tokens.display_granted(token, sr.event_id, sr.room_id):
            return
        config = room.match.config
        if config.voice:  # the display fetches each tossup's whole audio before it is read
            raise Refused(
                "unauthorized",
                "this room's display needs its display token: the voice reads this match, and "
                "its display is given each tossup's whole audio (the projector's link, printed "
                "by serve, carries it)",
                guess=bool(token),
            )
        tossups = [t.id for t in config.tossups]
        where = await asyncio.to_thread(
            yet_to_read,
            self.engine,
            list(self.arena.rooms.values()),
            sr.event_id,
            room.rm.id,
            config.packet_id,
            tossups,
        )
        if where is not None:
            raise Refused(
                "unauthorized",
                f"this room's display needs its display token: what it reads is yet to be "
                f"read in {where} (the projector's link, printed by serve, carries it)",
                guess=bool(token),
            )

    def _joinable(self, sr: ScheduledRoom) -> list[TeamView]:
        """The teams a new player may join: every human team of the room's event (a player
        who comes to the wrong room of an event is sent on), with the names of its roster."""
        plan = self.plans.get(sr.event_id)
        roster: dict[str, list[str]] = {}
        for p in plan.players if plan else ():
            if p.registered:
                roster.setdefault(p.team, []).append(p.name)
        return [
            TeamView(id=tid, name=name, kind="human", roster=roster.get(tid, []))
            for tid, name in self.human_teams(sr.event_id)
        ]

    def walk_ins(self, event_id: int) -> bool:
        """Whether the event takes players under names of their own (its setting; by
        default, only when it has no roster)."""
        plan = self.plans.get(event_id)
        if plan is None:
            return True
        return walk_ins_allowed(plan.meta, any(p.registered for p in plan.players))

    async def join(
        self,
        conn: Connection,
        room: Room,
        sr: ScheduledRoom,
        team: str,
        name: str,
        code: str | None = None,
    ) -> bool:
        """A new player of ``conn`` picks ``team`` and a ``name`` in ``sr``, whose match now is
        ``room``: the event's player of that name (so that Alice of Red is the same player from
        any phone, on any server process of the event), or a new one, registered now; then
        their seat (:meth:`seat`). One name, one player of a team: a phone that joins with the
        name of a player who is not playing now (a phone that died, its token lost) is that
        player; the name of one who is playing is refused. A name of the event's roster is
        taken only with its claim ``code`` (``grace_arena.record.roster``); a name of one's own
        only where the event takes walk-ins, and so many per address and per connection.
        Raises :class:`Refused`."""
        if team not in {tid for tid, _ in self.human_teams(sr.event_id)}:
            raise Refused("not_found", f"no team {team!r} to join")
        try:
            known = await asyncio.to_thread(self._named, sr.event_id, team, name)
            if known is not None and known.registered_by == ORGANISER:
                if not claim_matches(code, known.claim_sha256):
                    said = "that is not" if code else "give"
                    raise Refused(
                        "unauthorized",
                        f"{known.name} is on the roster: {said} {known.name}'s claim code "
                        "(the organiser has it)",
                        guess=bool(code),
                    )
                record = self.players.setdefault(sr.event_id, {}).setdefault(
                    known.player_id, PlayerRecord(known.player_id, team, known.name)
                )
            else:
                if known is None:
                    self._new_name(conn, sr.event_id)
                record = await self.register_player(sr.event_id, team, name)
                if known is None:  # a name registered now: charged to the connection and address
                    conn.new_names += 1
                    key = (sr.event_id, conn.address)
                    self.new_names[key] = self.new_names.get(key, 0) + 1
        except EventFull as exc:
            raise Refused("not_allowed", str(exc)) from exc
        except Exception as exc:
            if not is_transient(exc):
                raise
            why = short_reason(exc)
            raise Refused("server_error", f"the record is unavailable ({why}): join again") from exc
        await self.claim(conn, sr.event_id, record)
        token = self.tokens.player(self.token_scope(sr), record.id)
        return await self.seat(conn, room, sr, token, record)

    async def seat(
        self, conn: Connection, room: Room, sr: ScheduledRoom, token: str, record: PlayerRecord
    ) -> bool:
        """A known player (``record``, on ``conn``) takes their seat, and is told so
        (``joined``): in ``room``, the match of ``sr`` their hello opened (joined to it if they
        were not yet: a player of an event in a new round), or, when the team does not play
        there now, in the wait for its next match (False: waiting). A refused join raises
        ``IllegalCommand``, a room that closed ``RoomClosed``."""
        assert conn.player is not None and conn.team is not None
        joined = Joined(player=record.id, team=record.team, name=record.name, token=token)
        seat, where = await self.seat_of(sr.event_id, conn.team)
        if seat is not sr:
            conn.send_model(joined)
            conn.waiting_event = sr.event_id
            if seat is not None:  # the team's match is open in another room: go there
                send_on(conn, seat, where)
            elif not self._send_elsewhere(sr.event_id, conn, where):
                self.wait(sr.event_id, conn, where)
            return False
        limit = self.arena.settings.max_players_per_match
        join = Join(team=record.team, player=record.id, name=record.name or "player", limit=limit)
        try:
            await room.seat(conn, "player", join=join, told=(joined,))  # joined: once it has them
        except IllegalCommand:
            # the match is full: the player is the event's all the same (registered, with a
            # token to come back with in a later round), and hears why there is no seat now
            conn.send_model(joined)
            raise
        return True

    def _named(self, event_id: int, team: str, name: str) -> EventPlayerRow | None:
        """The event's player of ``team`` under this name (not removed), if any."""
        from grace_arena.record.store import find_player

        with Session(self.engine) as session:
            found = find_player(session, event_id, team, name)
            return session.get(EventPlayerRow, (event_id, found)) if found else None

    def _new_name(self, conn: Connection, event_id: int) -> None:
        """A new name is typed on ``conn``: refused where the event takes only its roster, or
        past the names one connection and one address may add."""
        if not self.walk_ins(event_id):
            raise Refused(
                "not_allowed",
                "this event plays its roster: pick your name from the list (the organiser "
                "adds a name that is missing)",
            )
        settings = self.arena.settings
        if conn.new_names >= settings.new_names_per_connection:
            raise Refused(
                "not_allowed",
                f"no more new names from this connection ({settings.new_names_per_connection})",
            )
        key = (event_id, conn.address)
        if self.new_names.get(key, 0) >= settings.new_names_per_address:
            raise Refused(
                "not_allowed",
                f"no more new names from this address ({settings.new_names_per_address}): "
                "ask the organiser to register you",
            )

    async def remove_player(self, event_id: int, player_id: str) -> EventPlayerRow:
        """Remove a player from the event (``grace_arena.record.roster.remove_player``): its
        phones here are closed, its token opens nothing, its name is free."""
        row = await asyncio.to_thread(remove_player, self.engine, event_id, player_id)
        self.players.get(event_id, {}).pop(player_id, None)
        for conn in list(self.connections):
            if conn.player == player_id and not conn.closed:
                conn.close(CLOSE_REPLACED, "the organiser removed this player")
        plan = await self._read(event_id)
        self._remember(plan)
        return row

    async def claim(self, conn: Connection, event_id: int, record: PlayerRecord) -> None:
        """``conn`` plays as ``record`` from now on, or :class:`Refused` ``in_use``: another
        connection of this process plays as them (:meth:`_playing`), or another process holds
        them (a claim of the record, :mod:`grace_arena.record.claims`)."""
        if self._playing(record.team, record.id, conn):
            raise Refused("in_use", _in_use(record.name))
        # taken here with no wait after the check: two hellos of one player at once cannot
        # both pass it
        before = conn.player, conn.team
        conn.player, conn.team = record.id, record.team
        key = (event_id, record.id)
        if self._claimed.get(conn) == key:
            return  # (a hello again of the connection's player: the claim is this process's)
        wait_until = time.monotonic() + CLAIM_WAIT
        while True:
            try:
                holder = await asyncio.wait_for(
                    asyncio.to_thread(
                        claims.claim, self.engine, event_id, record.id, self.arena.holder,
                        ttl=self.arena.settings.lease_ttl,
                    ),
                    CLAIM_TIMEOUT,
                )  # fmt: skip
            except Exception as exc:
                if not (isinstance(exc, TimeoutError) or is_transient(exc)):
                    raise
                # the record is away (or slow): this process's own check holds meanwhile, and
                # the claim is taken when the record answers
                log.warning("player %s not claimed in the record: %s", record.id, short_reason(exc))
                holder = None
            if holder is None:
                break
            if time.monotonic() >= wait_until or conn.closed:
                conn.player, conn.team = before
                message = f"{record.name} is playing on another device (served by {holder})"
                raise Refused("in_use", message + ": choose another name, or go on there")
            # a phone that left another process a moment ago: its claim goes with its socket
            await asyncio.sleep(0.1)
        self._claimed[conn] = key
        self._left.pop(key, None)  # (back: its place is its connection's again)

    def gone(self, conn: Connection) -> None:
        """``conn`` closed: its player's claim is let go, unless another connection here
        plays as them."""
        key = self._claimed.pop(conn, None)
        if key is None or key in self._claimed.values():
            return
        if not conn.left:
            self._left[key] = time.monotonic()
        with contextlib.suppress(RuntimeError):  # no running loop: the claim lapses
            self._spawn(self._release_claims([key]))

    async def _release_claims(self, keys: list[tuple[int, str]] | None) -> None:
        try:
            await asyncio.to_thread(claims.release, self.engine, self.arena.holder, keys)
        except Exception as exc:  # it lapses by itself
            log.warning("claims not let go (%s): they lapse", short_reason(exc))

    async def renew_claims(self) -> None:
        """The players in play here are still in play."""
        keys = [k for c, k in list(self._claimed.items()) if not c.closed]
        for conn in [c for c in list(self._claimed) if c.closed]:
            self.gone(conn)
        if keys:
            await asyncio.to_thread(claims.renew, self.engine, self.arena.holder, keys)

    def _playing(self, team: str, player: str, conn: Connection) -> bool:
        """Whether another connection of this process plays as ``player`` of ``team`` now (in
        a room, waiting for the team's next match, or on its way to it). A join takes its
        player (``conn.player``) with no wait after this check, so two joins of one name at
        once cannot both pass it. A connection that has not answered the server's pings for a
        while (a phone whose Wi-Fi dropped: its socket is not known to be closed yet) plays
        no more: it is closed, and the name is the new phone's."""
        silent_for = 3 * self.arena.settings.ping_interval
        now = time.monotonic()
        playing = False
        for other in list(self.connections):
            if other is conn or other.closed or other.player != player or other.team != team:
                continue
            if now - other.heard_at > silent_for:
                other.close(CLOSE_REPLACED, "this player joined on another device")
                continue
            playing = True
        return playing

    # -- players ---------------------------------------------------------------------------------

    def token_scope(self, sr: ScheduledRoom) -> str:
        """Players' tokens are valid in every room and round of the event."""
        return f"event:{sr.event_id}"

    def human_teams(self, event_id: int) -> list[tuple[str, str]]:
        """``(id, name)`` of the event's human teams, in order of registration."""
        plan = self.plans.get(event_id)
        return [(t.id, t.name) for t in plan.teams if t.kind == "human"] if plan else []

    async def player(self, event_id: int, player_id: str) -> PlayerRecord | None:
        """The event's player with this id: from this process's memory, or from the record (a
        player who joined on another server process of the event)."""
        known = self.players.setdefault(event_id, {})
        record = known.get(player_id)
        if record is not None or not player_id:
            return record

        def read() -> EventPlayerRow | None:
            with Session(self.engine) as session:
                return session.get(EventPlayerRow, (event_id, player_id))

        row = await asyncio.to_thread(read)
        if row is None or row.kind != "human" or row.removed_at is not None:
            return None
        return known.setdefault(player_id, PlayerRecord(row.player_id, row.team_id, row.name))

    def player_limit(self, event_id: int) -> int:
        settings = self.arena.settings
        if settings.max_players_per_event is not None:
            return settings.max_players_per_event
        plan = self.plans.get(event_id)
        return settings.max_players_per_match * max(1, len(plan.rooms) if plan else 1)

    def _present(self, event_id: int) -> set[str]:
        """The players of the event with a connection to this process now, or whose connection
        here ended without their leaving less than :data:`PLACE_KEPT` ago."""
        known = self.players.get(event_id, {})
        now = time.monotonic()
        for key in [k for k, left in self._left.items() if now - left > PLACE_KEPT]:
            del self._left[key]
        present = {c.player for c in self.connections if not c.closed and c.player in known}
        return present | {p for (e, p) in self._left if e == event_id and p in known}  # type: ignore[misc]

    async def register_player(self, event_id: int, team: str, name: str) -> PlayerRecord:
        """The event's player ``name`` of ``team``: the one registered under that name (so
        that Alice of Red is the same player from any phone and on any server process of the
        event), or a new one, registered now. Raises :class:`EventFull` when the event has as
        many players as it takes: its roster, the players present, and those turned away or
        dropped a moment ago (:meth:`_present`; a name typed once and gone, its phone closed,
        no longer takes a place)."""
        lock = self._registering.setdefault(event_id, asyncio.Lock())
        limit = self.player_limit(event_id)
        plan = self.plans.get(event_id)
        noun = "event" if plan is not None and plan.rounds else "match"
        full = f"this {noun} is full ({limit} players)"
        async with lock:  # one at a time in this process; the record's unique name across
            fresh = f"p-{secrets.token_hex(4)}"
            present = self._present(event_id)

            def store() -> tuple[str, str]:
                with Session(self.engine) as session:
                    roster = set(
                        session.exec(
                            select(EventPlayerRow.player_id).where(
                                EventPlayerRow.event_id == event_id,
                                EventPlayerRow.kind == "human",
                                EventPlayerRow.registered_by == ORGANISER,
                                EventPlayerRow.removed_at.is_(None),  # type: ignore[union-attr]
                            )
                        ).all()
                    )
                    count = len(roster | present)
                    from grace_arena.record.store import find_player

                    existing = find_player(session, event_id, team, name)
                    if existing is not None:
                        row = session.get(EventPlayerRow, (event_id, existing))
                        return existing, row.name if row is not None else name
                    if count >= limit:
                        raise EventFull(full)
                    player_id = register_player(
                        session, event_id, player_id=fresh, team_id=team, name=name, kind="human"
                    )
                    session.commit()
                    row = session.get(EventPlayerRow, (event_id, player_id))
                    return player_id, row.name if row is not None else name

            try:
                player_id, registered = await asyncio.to_thread(store)
            except IntegrityError:
                # SQLite: another process registered the name between this transaction's
                # read and its write (PostgreSQL reads it back within the transaction): the
                # second try finds it
                player_id, registered = await asyncio.to_thread(store)
        known = self.players.setdefault(event_id, {})
        return known.setdefault(player_id, PlayerRecord(player_id, team, registered))

    def wait(self, event_id: int, conn: Connection, message: str) -> None:
        """The player waits for the team's next match: told why, and told again whenever the
        reason changes (:meth:`_send_on_waiting`)."""
        self.waiting.setdefault(event_id, {})[conn] = message
        plan, team = self.plans.get(event_id), conn.team or ""
        done = plan is not None and plan.next_game_of(team) is None
        conn.send_model(Waiting(team=team, message=message, done=done))

    async def seat_of(self, event_id: int, team: str) -> tuple[ScheduledRoom | None, str]:
        """Where the team plays now: the room served here whose current match is the team's
        next one (its earliest scheduled match not over), or None and where it plays later,
        in words (another room whose match is not over yet, a room of another server process,
        or nothing: the team has played all its matches)."""
        plan = await self._read(event_id)
        self._remember(plan)
        return self._seat_in(plan, team)

    def _seat_in(self, plan: EventPlan, team: str) -> tuple[ScheduledRoom | None, str]:
        game = plan.next_game_of(team)
        entry = plan.team(team)
        name = entry.name if entry else team
        if game is None:  # its last match, ended, is shown while its room shows it here
            return self._last_seat(plan, team), f"{name} has played all its matches: thank you!"
        room = plan.room(game.room_id or "")
        sr = self.rooms.get(room.join_code) if room else None
        names = {t.id: t.name for t in plan.teams}
        others = " and ".join(names.get(t, t) for t in game.teams if t != team)
        where = f"{name} plays round {game.round} in {room_name(room)}"
        where += f" against {others}" if others else ""
        here = sr is not None and sr.game is not None and sr.game.id == game.id
        if here and self.live(sr) is not None and sr.waiting is None:  # type: ignore[arg-type]
            return sr, where
        # what it waits for, as the room's moderator and display say it (starts_when)
        current = plan.current_game(room.id) if room else None
        before = []
        if current is not None and current.id != game.id:
            before.append(f"after {' vs '.join(names.get(t, t) for t in current.teams)} there")
        # (the room's match before it is said once)
        blockers = [g for g in plan.blockers(game) if current is None or g.id != current.id]
        if game.match_id is None and blockers:
            before.append(f"once {starts_when(plan, blockers, game)}")
        return None, where + "".join(f", {b}" for b in before) + "."

    def _last_seat(self, plan: EventPlan, team: str) -> ScheduledRoom | None:
        """The room served here whose match now is the team's last one (ended), if any."""
        played = [g for g in plan.games if team in g.teams and g.match_id is not None]
        if not played:
            return None
        last = max(played, key=lambda g: (g.round, g.slot))
        room = plan.room(last.room_id or "")
        sr = self.rooms.get(room.join_code) if room is not None else None
        live = self.live(sr) if sr is not None else None
        return sr if live is not None and live.rm.id == last.match_id else None

    def _send_on_waiting(self, event_id: int) -> None:
        """Send each waiting player whose team's match is now open here to its room; tell the
        others again why they wait when the reason changed (a match ended or opened)."""
        plan = self.plans.get(event_id)
        if plan is None:
            return
        waiting = self.waiting.get(event_id, {})
        for conn, told in list(waiting.items()):
            if conn.closed:
                waiting.pop(conn, None)
                continue
            sr, where = self._seat_in(plan, conn.team or "")
            if sr is not None:
                waiting.pop(conn, None)
                send_on(conn, sr, f"your team's match is open in {room_name(sr)}")
            elif self._send_elsewhere(event_id, conn, where):
                waiting.pop(conn, None)
            elif where != told:
                self.wait(event_id, conn, where)

    def _send_elsewhere(self, event_id: int, conn: Connection, where: str) -> bool:
        """Send ``conn`` on to the room of its team's match when that match is open and not
        served here (another server process serves it: its hello there is told where, as the
        record says); False when there is none."""
        plan = self.plans.get(event_id)
        game = plan.next_game_of(conn.team or "") if plan is not None else None
        room = plan.room(game.room_id or "") if plan is not None and game is not None else None
        if game is None or room is None or game.match_id is None:
            return False  # not opened yet
        if game.match_id in self.arena.rooms:
            return False  # (served here: its room sends it on when it opens)
        conn.moved = True
        message = f"your team's match is open in {room_name(room)}: {where}"
        conn.send_model(NextMatch(join_code=room.join_code, room=room.name, message=message))
        return True

    # -- moderators -------------------------------------------------------------------------------

    async def moderator_token(self, sr: ScheduledRoom) -> str:
        """The room's moderator token as issued by this process (a new one, stored hashed in
        the record, when it has issued none; every one issued stays valid)."""
        token = self._moderator_tokens.get(sr.join_code)
        if token is None:
            token = secrets.token_urlsafe(24)
            hashes = await asyncio.to_thread(
                sr.schedule.add_moderator_token, self.engine, token_sha256(token)
            )
            token = self._moderator_tokens.setdefault(sr.join_code, token)
            live = self.live(sr)
            if live is not None:
                live.moderator_hashes = live.moderator_hashes | frozenset(hashes)
        return token

    async def is_moderator(self, match_id: int, given: str | None) -> bool:
        """Whether ``given`` is a moderator token of match ``match_id``: one of the match (as
        it is served here, or as the record holds it), or of the room that played it (the
        room has moved on to its next match by the time its moderator's screen asks for the
        summary of the one that ended)."""
        if not given:
            return False
        live = self.arena.rooms.get(match_id)
        if live is not None:
            return token_in(given, live.moderator_hashes)
        hashes = await asyncio.to_thread(match_moderator_hashes, self.engine, match_id)
        return token_in(given, hashes)

    async def match_moderator_token(self, match_id: int) -> str:
        """The moderator token of the room whose match ``match_id`` is served here."""
        sr = self._by_match.get(match_id)
        if sr is None or self.live(sr) is None:
            raise LookupError(f"match {match_id} is not served here")
        return await self.moderator_token(sr)

    # -- standings -------------------------------------------------------------------------------

    def _standings_change(self, sr: ScheduledRoom, *, begun: bool = False) -> None:
        """A match of the room opened or changed: its event's standings, if it has any
        (``begun``: the match opened, or its first tossup started: changes the record's
        version of the standings does not count)."""
        if sr.rounds:  # (a match of its own has no rounds, and no standings)
            self.refresh_standings(sr.event_id, force=begun)

    def refresh_standings(self, event_id: int, *, force: bool = False) -> None:
        """Fold the event's changes into its standings, soon, if this process computes them
        (it holds the event's standings claim; the others read what it publishes), and if
        the record's version of them moved (or ``force``). One at a time: a burst of
        rulings costs one computation after the one under way."""
        if event_id not in self._leading:
            return
        self._asked[event_id] = self._asked.get(event_id, 0) + 1
        if force:
            self._forced.add(event_id)
        task = self._refreshing.get(event_id)
        if task is not None and not task.done():
            self._again.add(event_id)
            return
        with contextlib.suppress(RuntimeError):  # no running loop: computed when asked
            loop = asyncio.get_running_loop()
            self._refreshing[event_id] = loop.create_task(self._refresh(event_id))

    async def _refresh(self, event_id: int) -> None:
        loop = asyncio.get_running_loop()
        while True:
            # the changes of a burst (rooms ruling within a moment) are folded together
            last = self._folded_at.get(event_id)
            if last is not None:
                await asyncio.sleep(max(0.0, last + STANDINGS_EVERY - loop.time()))
            self._folded_at[event_id] = loop.time()
            self._again.discard(event_id)
            force = event_id in self._forced
            self._forced.discard(event_id)
            began, asked = loop.time(), self._asked.get(event_id, 0)
            try:
                computed = await asyncio.to_thread(self._compute_if_moved, event_id, force)
            except Exception:
                log.exception("standings of event %d could not be computed", event_id)
                return
            if computed is not None:
                self.standings_computed += 1
                await self._publish(event_id, computed, began)
            # (published or found unchanged: what was asked before it began is counted)
            self._covered[event_id] = max(self._covered.get(event_id, 0), asked)
            moved = self._covered_moved.pop(event_id, None)
            if moved is not None:
                moved.set()
            if event_id not in self._again:
                return

    async def _publish(
        self, event_id: int, computed: Computed, began: float | None = None
    ) -> Snapshot:
        """A computation of this process (begun at ``began``, the loop's time): to its
        clients, and through the record to the other processes of the event."""
        version, view, scoped, phases = computed
        self._standings[event_id] = view
        self.standings_version[event_id] = self.standings_version.get(event_id, 0) + 1
        snapshot = self.feed.publish(event_id, version, view, scoped, phases=phases)
        if began is not None:
            self.standings_seconds.append(asyncio.get_running_loop().time() - began)
        doc = {
            "views": {"": view.model_dump(mode="json")}
            | {k: v.model_dump(mode="json") for k, v in scoped.items()},
            "phases": phases,
        }
        try:
            await asyncio.to_thread(standings_record.publish, self.engine, event_id, version, doc)
        except Exception as exc:  # the record unreachable for a moment: the next change
            log.warning("standings of event %d not published (%s)", event_id, exc)
        return snapshot

    def _compute_if_moved(self, event_id: int, force: bool) -> Computed | None:
        """The event's standings folded from the changes the record has (a worker thread's
        work), with the record's version of them; None when that version did not move since
        the last computation here (and nothing forces one). One computation of the event at
        a time (two that crossed would fold one change twice, or an older read last)."""
        with self._computing.setdefault(event_id, threading.RLock()):
            version = standings_stamp(self.engine, event_id)
            kept = self.feed.latest(event_id)
            if (
                not force
                and event_id in self._folds
                and kept is not None
                and kept.version == version
            ):
                return None
            view, scoped, phases = self.fold_standings(event_id)
            return version, view, scoped, phases

    def fold_standings(
        self, event_id: int
    ) -> tuple[StandingsView, dict[str, StandingsView], list[dict[str, Any]]]:
        """The event's standings, and each phase's and pool's, folded from the matches whose
        results changed since the last fold here (the first fold here reads them all), with
        the event's phases and pools (ids and names): one computation (a worker thread's
        work; its caller counts it in ``standings_computed``)."""
        with self._computing.setdefault(event_id, threading.RLock()):
            return self._fold_standings(event_id)

    def _fold_standings(
        self, event_id: int
    ) -> tuple[StandingsView, dict[str, StandingsView], list[dict[str, Any]]]:
        reader = self._readers.get(event_id)
        if reader is None:
            reader = self._readers.setdefault(event_id, StandingsReader(self.engine, event_id))
        plan, results = reader.read_results()
        fold = self._folds.get(event_id)
        if fold is None:
            fold = self._folds.setdefault(event_id, EventFold(plan))
        fold.update(plan, results)
        self.standings_plans[event_id] = plan
        index = [
            {"id": ph.id, "name": ph.name, "kind": ph.kind,
             "pools": [{"id": p.id, "name": p.name} for p in ph.pools]}
            for ph in plan.phases
        ]  # fmt: skip
        phases = [
            PhaseInfo(name=ph.name, kind=ph.kind, pools=[p.name for p in ph.pools])
            for ph in plan.phases
        ]
        rooms, schedule = self.room_status(plan), schedule_of(plan)

        def view(rows: list, pools: list, **scope: Any) -> StandingsView:
            return standings_view(
                plan.name, plan.title, len(plan.rounds), rows, rooms, schedule,
                pools=pools, phases=phases, **scope,
            )  # fmt: skip

        scoped: dict[str, StandingsView] = {}
        for ph in plan.phases:
            tables = [(pool, fold.phase_rows(ph, pool)) for pool in ph.pools]
            scoped[ph.id] = view(
                [row for _, rows in tables for row in rows],
                [pool.name for pool, rows in tables for _ in rows],
                phase=ph.name,
                pool=None,
            )
            for pool, rows in tables:
                scoped[f"{ph.id}/{pool.id}"] = view(
                    rows, [pool.name] * len(rows), phase=ph.name, pool=pool.name
                )
        return view(fold.rows(), []), scoped, index

    def scoped_standings(
        self, event_id: int, snapshot: Snapshot, phase: str | None, pool: str | None
    ) -> StandingsView:
        """The standings of a phase (of one pool of it) from the snapshot: raises
        ``NoSuchPhase`` naming the event's phases (or the phase's pools)."""
        if phase is None:
            raise NoSuchPhase("a pool is of a phase: give the phase too")
        light = EventPlan(
            id=event_id,
            name=snapshot.view.event,
            title=snapshot.view.title,
            teams=(),
            phases=tuple(
                PhasePlan(
                    ph["id"],
                    ph["name"],
                    ph["kind"],
                    pools=tuple(PoolPlan(p["id"], p["name"], ()) for p in ph["pools"]),
                )
                for ph in snapshot.phases
            ),
        )
        chosen, only = pool_of_phase(light, phase, pool)
        key = chosen.id if only is None else f"{chosen.id}/{only.id}"
        found = snapshot.scoped.get(key)
        if found is None:  # (a phase added since: the next snapshot has it)
            raise NoSuchPhase(f"the standings of phase {chosen.name!r} are not computed yet")
        return found

    def _adopt(self, event_id: int, doc: dict[str, Any]) -> Snapshot | None:
        """The snapshot another process computed, read from the record: to the clients here
        (nothing computed)."""
        try:
            views = {k: StandingsView.model_validate(v) for k, v in doc["views"].items()}
            version = int(doc["version"])
            event_view = views.pop("")
            phases = [
                {"id": str(ph["id"]), "name": str(ph["name"]), "kind": str(ph["kind"]),
                 "pools": [{"id": str(p["id"]), "name": str(p["name"])} for p in ph["pools"]]}
                for ph in doc.get("phases") or []
            ]  # fmt: skip
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            # (written by another version, or by hand: computed again, not served)
            log.warning("standings of event %d in the record unreadable (%s)", event_id, exc)
            return None
        self._standings[event_id] = event_view
        return self.feed.publish(event_id, version, event_view, views, phases=phases)

    def _lead_standings(self, event_id: int) -> bool:
        """Take (or keep) the computing of the event's standings for this process (the
        record's claim, :func:`standings_record.lead`): True when it is this process's."""
        return standings_record.lead(
            self.engine, event_id, self.arena.holder, ttl=self.arena.settings.lease_ttl
        )

    async def take_standings_lead(self) -> None:
        """Take (or keep) the computing of the standings of the events served here, where
        no other live process has it; a process that takes it computes them afresh from the
        record (what it folds from then on starts there)."""
        for event_id in list(self.served):
            plan = self.plans.get(event_id)
            if plan is None or not plan.rounds:
                continue
            try:
                led = await asyncio.to_thread(self._lead_standings, event_id)
            except Exception as exc:  # the record unreachable for a moment: next tick
                log.warning("standings claim of event %d not renewed (%s)", event_id, exc)
                continue
            if led and event_id not in self._leading:
                log.info("computing the standings of event %d here", event_id)
                self._leading.add(event_id)
                self._folds.pop(event_id, None)
                self.refresh_standings(event_id, force=True)
            elif not led and event_id in self._leading:
                log.info("the standings of event %d are computed by another process", event_id)
                self._leading.discard(event_id)
        self._follow_often()

    def served_event(self, name: str) -> int | None:
        """The id of the event served here with this name (never by its number: a public URL
        must not enumerate the record's events)."""
        for event_id in self.served:
            plan = self.plans.get(event_id)
            if plan is not None and plan.name == name:
                return event_id
        return None

    async def follow_standings(self) -> None:
        """The standings of the events served here, as they change in the record: where this
        process computes them, computed again when the record's version of them moved (one
        query, ``standings_stamp``: rulings in rooms of other processes); elsewhere, the
        snapshot the computing process published, read when its version moved (one small
        query, then one read of it)."""
        for event_id in list(self.served):
            plan = self.plans.get(event_id)
            under_way = self._refreshing.get(event_id)
            if plan is None or not plan.rounds or (under_way and not under_way.done()):
                continue  # (a computation under way reads the record as it is now)
            kept = self.feed.latest(event_id)
            try:
                if event_id in self._leading:
                    stamp = await asyncio.to_thread(standings_stamp, self.engine, event_id)
                    if kept is None or stamp != kept.version:
                        self.refresh_standings(event_id)
                    continue
                version = await asyncio.to_thread(
                    standings_record.read_version, self.engine, event_id
                )
                if version is not None and (kept is None or version > kept.version):
                    doc = await asyncio.to_thread(standings_record.read, self.engine, event_id)
                    if doc is not None:
                        self._adopt(event_id, doc)
            except Exception as exc:  # the record unreachable for a moment: next tick
                log.warning("standings of event %d not followed (%s)", event_id, exc)

    def listen(self) -> None:
        """Be told of the record's changes as they are committed, where the record tells
        (PostgreSQL): a ruling in another process's room reaches the standings this process
        computes, and standings another process publishes reach the clients here, at once
        rather than at the next read of the record."""
        if self.listener is not None or not notices.listens(self.engine):
            return
        loop = asyncio.get_running_loop()

        def told(payload: str) -> None:  # (the listener's thread)
            with contextlib.suppress(RuntimeError):  # (the loop closed: the server stops)
                loop.call_soon_threadsafe(self._told, payload)

        def listening() -> None:  # what was committed while it did not listen: read now
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(lambda: self._spawn(self.follow_standings()))

        self.listener = notices.Listener(self.engine, told, listening)
        self.listener.start()

    def _told(self, payload: str) -> None:
        """A notice of the record (on the loop): results committed in some match, read into
        the standings this process computes; standings published, read for the clients here."""
        kind, numbers = notices.parse(payload)
        if kind == "results":
            # (a change of a room served here is followed already: on_events; a notice
            # without numbers names too many matches to list)
            if numbers and all(m in self.arena.rooms for m in numbers):
                return
            for event_id in list(self._leading):
                self.refresh_standings(event_id)
        elif kind == "standings" and len(numbers) == 2:
            event_id, version = numbers
            kept = self.feed.latest(event_id)
            if (
                event_id in self.served
                and event_id not in self._leading
                and (kept is None or version > kept.version)
            ):
                self._spawn(self._read_published(event_id))

    async def _read_published(self, event_id: int) -> None:
        try:
            doc = await asyncio.to_thread(standings_record.read, self.engine, event_id)
        except Exception as exc:  # the record unreachable for a moment: the next read
            log.warning("standings of event %d not read (%s)", event_id, exc)
            return
        kept = self.feed.latest(event_id)
        if doc is not None and (kept is None or int(doc.get("version", -1)) > kept.version):
            self._adopt(event_id, doc)

    def _follow_often(self) -> None:
        if self._follower is None or self._follower.done():
            with contextlib.suppress(RuntimeError):  # (no running loop)
                loop = asyncio.get_running_loop()
                self._follower = loop.create_task(self._follow_while_needed())

    async def _follow_while_needed(self) -> None:
        """While this process computes an event's standings, or clients wait for newer
        ones, follow the record's changes more often than the leases' renewal does (a
        ruling in another process's room reaches them sooner)."""
        while self.feed.waiting or self._leading:
            told = self.listener is not None and self.listener.listening.is_set()
            await asyncio.sleep(STANDINGS_FOLLOW_TOLD if told else STANDINGS_FOLLOW)
            await self.follow_standings()

    async def standings_snapshot(
        self, event_id: int, *, after: int | None = None, wait: float = 0.0
    ) -> Snapshot:
        """The event's latest standings, as published (by this process or, read from the
        record, by the one that computes them); with ``after``, the first newer than that
        version, waiting up to ``wait`` seconds for it."""
        under_way = self._refreshing.get(event_id)
        if under_way is not None and not under_way.done():
            # a change made here is being computed: its standings, not the ones before it
            # (a moderator who ended a match, then asks, sees it counted): those of the first
            # computation that began after every change asked so far, not the end of them all
            # (while rooms keep ruling, the computations follow one another for as long)
            await self._counted(event_id, self._asked.get(event_id, 0), under_way)
        kept = self.feed.latest(event_id)
        if kept is None:
            kept = await self._first_snapshot(event_id)
        if after is None or kept.version > after or wait <= 0:
            return kept
        self._follow_often()
        newer = await self.feed.newer(event_id, after, wait)
        return newer if newer is not None else kept

    async def _counted(self, event_id: int, asked: int, under_way: asyncio.Task) -> None:
        """Wait (10 s at most) until a computation that began after the ``asked``-th change
        asked here has finished, or the computing has stopped."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10.0
        while self._covered.get(event_id, 0) < asked and not under_way.done():
            left = deadline - loop.time()
            if left <= 0:
                return
            moved = self._covered_moved.setdefault(event_id, asyncio.Event())
            waiting = asyncio.ensure_future(moved.wait())
            ended = asyncio.shield(under_way)
            try:
                await asyncio.wait(
                    [waiting, ended], timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                waiting.cancel()
                if ended.done() and not ended.cancelled():
                    ended.exception()  # (a computation's failure is logged where it ran)
                ended.cancel()

    async def _first_snapshot(self, event_id: int) -> Snapshot:
        """The first standings asked for here: the record's snapshot; none there, computed
        here if this process may compute them (it takes the event's standings claim), else
        waited for from the process that computes them (for at most ``FIRST_STANDINGS_WAIT``
        seconds: then computed here, for this process's clients alone)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FIRST_STANDINGS_WAIT
        while True:
            doc = await asyncio.to_thread(standings_record.read, self.engine, event_id)
            adopted = self._adopt(event_id, doc) if doc is not None else None
            if adopted is not None:
                return adopted
            led = await asyncio.to_thread(self._lead_standings, event_id)
            if led or loop.time() >= deadline:
                if led:
                    self._leading.add(event_id)
                computed = await asyncio.to_thread(self._compute_if_moved, event_id, True)
                assert computed is not None
                self.standings_computed += 1
                if led:
                    return await self._publish(event_id, computed)
                version, view, scoped, phases = computed
                return self.feed.publish(event_id, version, view, scoped, phases=phases)
            await asyncio.sleep(STANDINGS_FOLLOW)

    def room_status(self, plan: EventPlan) -> list[RoomStatus]:
        """Each room of the event: what it plays now (live scores for the rooms served here)."""
        out = []
        names = {t.id: t.name for t in plan.teams}
        for r in plan.rooms:
            game = plan.current_game(r.id)
            sr = self.rooms.get(r.join_code)
            live = self.live(sr) if sr is not None and game is not None else None
            if live is not None and live.rm.id != game.match_id:  # type: ignore[union-attr]
                live = None
            out.append(
                RoomStatus(
                    room=r.name,
                    join_code=r.join_code,
                    round=game.round if game else None,
                    match_id=game.match_id if game else None,
                    teams=[names.get(t, t) for t in game.teams] if game else [],
                    scores={names.get(t, t): p for t, p in live.match.scores.items()}
                    if live is not None
                    else {},
                    phase=live.match.phase.value if live is not None else None,
                    tossups_played=len(live.match.game.played) if live is not None else None,
                )
            )
        return out

    def standings(self, event_id: int) -> StandingsView | None:
        return self._standings.get(event_id)

    async def close(self) -> None:
        if self.listener is not None:
            await asyncio.to_thread(self.listener.stop)
        for task in [*self._refreshing.values(), *self._tasks, self._follower]:
            if task is None:
                continue
            task.cancel()
        self._claimed.clear()
        with contextlib.suppress(TimeoutError):  # (they lapse by themselves)
            await asyncio.wait_for(self._release_claims(None), CLAIM_TIMEOUT)


def send_on(conn: Connection, sr: ScheduledRoom, message: str) -> None:
    """Tell a connection to say hello again, to ``sr``'s code: its room moved on, or its
    team's match is open there."""
    conn.moved = True
    conn.send_model(NextMatch(join_code=sr.join_code, room=sr.name, message=message))


def _in_use(name: str) -> str:
    return f"{name} is playing on another device: choose another name, or go on there"


def _error(conn: Connection, code: str, message: str, in_reply_to: str, **extra: Any) -> None:
    conn.send_model(ErrorMsg(code=code, message=message, in_reply_to=in_reply_to, **extra))


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
        current.send_model(
            ErrorMsg(
                code="taken_over",
                message="another moderator took over this match: you are watching",
            )
        )
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
