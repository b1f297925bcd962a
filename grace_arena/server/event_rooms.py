"""The rooms of an event, served live: each room plays its scheduled matches one after another.

A room is found by its join code, which stays the same from round to round. The room's
current match is the first of its schedule that has not ended: opened from the record if it
exists (this process takes its lease), created from the schedule if not. When a match ends,
the room moves on: its next match is created and every connection of the ended one gets
``next_match`` and says ``hello`` again, as after a dropped connection. A player is someone
of the event (an event-wide token), so a phone comes back as the same player of the same
team in every round; a player whose team plays in another room, or not yet, waits and is sent
on when the team's match opens here. Standings are computed from the record after every
ruling, so that every process sharing the record shows the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grace_arena.core.events import Event
from grace_arena.protocol import (
    EventView,
    MatchSetup,
    NextMatch,
    RoomStatus,
    StandingsView,
    TeamSetup,
    Waiting,
)
from grace_arena.record import lease
from grace_arena.record.schedule import (
    EventPlan,
    GamePlan,
    StandingsReader,
    add_room_moderator_token,
    event_id_of,
    find_room_by_code,
    load_plan,
    room_moderator_hashes,
)
from grace_arena.record.store import GameTaken, RecordError
from grace_arena.server.views import standings_view

if TYPE_CHECKING:
    from grace_arena.server.arena import Arena
    from grace_arena.server.room import Connection, Room

log = logging.getLogger(__name__)

#: Events after which the standings change (a tossup started is a tossup heard).
_STANDINGS_EVENTS = frozenset(
    {"tossup_started", "ruled", "ruling_undone", "tossup_ended", "match_ended"}
)
#: Settings of a scheduled match that the event's defaults may give.
_SETUP_DEFAULTS = frozenset(MatchSetup.model_fields) - {"packet_id", "title", "tossup_ids", "teams"}


@dataclass(eq=False)
class EventRoom:
    """One room of an event, as this process serves it."""

    event_id: int
    event_name: str
    event_title: str
    rounds: int
    room_id: str
    name: str
    join_code: str
    live: Room | None = None  # the match it plays now
    game: GamePlan | None = None
    done: bool = False  # every match of its schedule has ended
    #: Its next match cannot start yet (a team of it plays an earlier round elsewhere): why.
    waiting: str | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class PlayerRecord:
    """A player of an event: the team they play for, whatever the room or round."""

    id: str
    team: str
    name: str


class EventHost:
    """The event rooms this process serves, and the players waiting for their team's match."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.rooms: dict[str, EventRoom] = {}  # by join code
        self.plans: dict[int, EventPlan] = {}  # the latest read of each event served here
        self.players: dict[int, dict[str, PlayerRecord]] = {}  # event id -> player id -> ...
        self.waiting: dict[int, set[Connection]] = {}  # event id -> waiting connections
        self._moderator_tokens: dict[str, str] = {}  # join code -> token issued here
        self._standings: dict[int, StandingsView] = {}
        self.standings_version: dict[int, int] = {}  # bumped with every recomputation
        self._refreshing: dict[int, asyncio.Task] = {}
        self._again: set[int] = set()
        self._readers: dict[int, StandingsReader] = {}  # by event id
        self._tasks: set[asyncio.Task] = set()  # moving rooms on

    @property
    def engine(self):
        return self.arena.engine

    # -- opening rooms -------------------------------------------------------------------------

    async def open_event(self, name: str, rooms: list[str] | None = None) -> list[EventRoom]:
        """Serve the event's rooms (those named in ``rooms``, or all): each opens its current
        match. A room whose match another live process serves is left to it (and logged)."""
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
        await asyncio.to_thread(self._load, plan)
        opened = []
        for plan_room in chosen:
            er = self._register(plan, plan_room.id)
            try:
                await self.advance(er, plan)
            except lease.LeaseHeld as exc:
                log.warning("room %s of %s not opened here: %s", er.name, plan.name, exc)
                continue
            opened.append(er)
        return opened

    def _load(self, plan: EventPlan) -> None:
        """The event's packets (from the record when this process was given no file) and its
        registered players."""
        from grace_arena.record.packets import packet_from_record

        for rnd in plan.rounds:
            if rnd.packet_id not in self.arena.packets:
                self.arena.packets[rnd.packet_id] = packet_from_record(self.engine, rnd.packet_id)
        self.plans[plan.id] = plan
        known = self.players.setdefault(plan.id, {})
        for p in plan.players:
            known.setdefault(p.id, PlayerRecord(p.id, p.team, p.name))

    def _register(self, plan: EventPlan, room_id: str) -> EventRoom:
        room = plan.room(room_id)
        assert room is not None
        er = self.rooms.get(room.join_code)
        if er is None:
            er = EventRoom(
                event_id=plan.id,
                event_name=plan.name,
                event_title=plan.title,
                rounds=len(plan.rounds),
                room_id=room.id,
                name=room.name,
                join_code=room.join_code,
            )
            self.rooms[room.join_code] = er
        return er

    async def room_by_code(self, code: str) -> Room | None:
        """The live match of the event room with this join code (opened here if this process
        was not serving it: a room of another process that stopped). None: no such room, or
        every match of the room has ended. Raises ``LeaseHeld`` when another live process
        serves the room's match."""
        er = self.rooms.get(code)
        if er is None:
            found = await asyncio.to_thread(find_room_by_code, self.engine, code)
            if found is None:
                return None
            plan = await asyncio.to_thread(load_plan, self.engine, found[0])
            await asyncio.to_thread(self._load, plan)
            er = self._register(plan, found[1])
        if er.live is not None and er.live.rm.id in self.arena.rooms:
            return er.live
        return await self.advance(er)

    async def advance(self, er: EventRoom, plan: EventPlan | None = None) -> Room | None:
        """Open the room's current match: the one under way, or the next of its schedule
        (created now). None when every match of the room has ended."""
        async with er.lock:
            if plan is None:
                plan = await asyncio.to_thread(load_plan, self.engine, er.event_id)
            self.plans[plan.id] = plan
            game = plan.current_game(er.room_id)
            if game is None:
                er.done, er.game = True, None
                return None
            live = er.live
            if live is not None and live.rm.id == game.match_id and live.rm.id in self.arena.rooms:
                return live
            if game.match_id is None and (blockers := plan.blockers(game)):
                er.game, er.done = game, False
                er.waiting = _waiting_text(plan, er, game, blockers)
                return None
            room = await self._open_game(er, plan, game)
            room.event = EventView(
                name=plan.name,
                title=plan.title,
                room=er.name,
                join_code=er.join_code,
                round=game.round,
                rounds=len(plan.rounds),
            )
            room.on_events = self._follow
            hashes = await asyncio.to_thread(
                room_moderator_hashes, self.engine, er.event_id, er.room_id
            )
            er.live, er.game, er.done, er.waiting = room, game, False, None
            self.arena._add(room, extra_hashes=frozenset(hashes))
        self._send_on_waiting(er.event_id)
        self.refresh_standings(er.event_id)
        return room

    async def _open_game(self, er: EventRoom, plan: EventPlan, game: GamePlan) -> Room:
        if game.match_id is not None:
            return await asyncio.to_thread(self.arena.open_recorded, game.match_id, er.join_code)
        setup = self.game_setup(plan, game)
        try:
            return await asyncio.to_thread(
                self.arena.create_match,
                setup,
                event=plan.name,
                game_id=game.id,
                join_code=er.join_code,
            )
        except GameTaken:  # another process created it first: open theirs
            fresh = await asyncio.to_thread(load_plan, self.engine, er.event_id)
            match_id = next(g.match_id for g in fresh.games if g.id == game.id)
            assert match_id is not None
            return await asyncio.to_thread(self.arena.open_recorded, match_id, er.join_code)

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
            title=f"{plan.title}, round {game.round}, {_room_name(room)}: {names}",
            tossup_ids=list(rnd.tossup_ids) if rnd.tossup_ids is not None else None,
            teams=teams,
            **defaults,
        )

    # -- following the matches -----------------------------------------------------------------

    def _follow(self, room: Room, events: list[Event]) -> None:
        types = {ev.type for ev in events}
        event_id = self._event_of(room)
        if event_id is None:
            return
        if types & _STANDINGS_EVENTS:
            self.refresh_standings(event_id)
        if "match_ended" in types:
            er = next((r for r in self.rooms.values() if r.live is room), None)
            if er is not None:
                self._spawn(self._move_on(er, room))
            self._spawn(self.recheck_waiting(event_id, but=er))

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _event_of(self, room: Room) -> int | None:
        return next((r.event_id for r in self.rooms.values() if r.live is room), None)

    async def _move_on(self, er: EventRoom, ended: Room) -> None:
        """The room's match ended: open its next one and send everyone there."""
        try:
            new = await self.advance(er)
        except Exception:
            log.exception("room %s of %s: its next match did not open", er.name, er.event_name)
            return
        if new is None:
            if er.waiting is None:
                log.info("room %s of %s has played all its matches", er.name, er.event_name)
            else:
                self._wait_in(er, ended)
            return
        moved = list(ended.connections)
        ended.connections.clear()
        if ended.controller is not None:
            ended.controller = None
        for conn in moved:
            send_on(conn, er, f"{_room_name(er)}: on to round {er.game.round if er.game else '?'}")
        self.arena.drop(ended.rm.id)
        await ended.stop()
        with contextlib.suppress(Exception):
            await asyncio.to_thread(lease.release, self.engine, self.arena.holder, [ended.rm.id])

    def _wait_in(self, er: EventRoom, ended: Room) -> None:
        """The room's next match cannot start yet: its ended match stays on the moderator's
        and displays' screens, saying what it waits for; each player is sent to the team's
        match if it is open in another room, or waits for it."""
        if ended.event is not None:
            ended.event = ended.event.model_copy(update={"waiting": er.waiting})
            ended.broadcast_state()
        plan = self.plans.get(er.event_id)
        for conn in list(ended.connections):
            if conn.role != "player" or not conn.team or plan is None:
                continue
            seat, where = self._seat_in(plan, conn.team)
            if seat is not None:
                send_on(conn, seat, where)
                continue
            ended.connections.discard(conn)
            conn.room, conn.waiting_event = None, er.event_id
            conn.send_model(Waiting(team=conn.team, message=where))
            self.wait(er.event_id, conn)

    async def recheck_waiting(
        self, event_id: int | None = None, but: EventRoom | None = None
    ) -> None:
        """Move on the rooms (of the event, or of every event) whose next match waited for
        teams of an earlier round: a match that held them may have ended, here or in another
        process sharing the record."""
        for er in list(self.rooms.values()):
            other = event_id is not None and er.event_id != event_id
            if er is but or er.waiting is None or other:
                continue
            try:
                if er.live is not None and er.live.rm.id in self.arena.rooms:
                    await self._move_on(er, er.live)
                else:
                    await self.advance(er)
            except Exception:
                log.exception("room %s of %s: its next match did not open", er.name, er.event_name)

    def waiting_text(self, code: str) -> str | None:
        """Why the event room with this join code has no match open now, if it waits."""
        er = self.rooms.get(code.strip().upper())
        return er.waiting if er is not None else None

    # -- players ---------------------------------------------------------------------------------

    def event_room(self, room: Room) -> EventRoom | None:
        return next((r for r in self.rooms.values() if r.live is room), None)

    def token_scope(self, er: EventRoom) -> str:
        """Players' tokens are valid in every room and round of the event."""
        return f"event:{er.event_id}"

    def human_teams(self, event_id: int) -> list[tuple[str, str]]:
        """``(id, name)`` of the event's human teams, in order of registration."""
        plan = self.plans.get(event_id)
        return [(t.id, t.name) for t in plan.teams if t.kind == "human"] if plan else []

    def player(self, event_id: int, player_id: str) -> PlayerRecord | None:
        return self.players.get(event_id, {}).get(player_id)

    async def register_player(self, event_id: int, team: str, name: str) -> PlayerRecord:
        """The event's player ``name`` of ``team``: the one registered under that name (so
        that Alice of Red is the same player from any phone), or a new one, registered now."""
        known = self.players.setdefault(event_id, {})
        for p in known.values():
            if p.team == team and p.name.casefold() == name.casefold():
                return p
        from grace_arena.record.store import register_player

        record = PlayerRecord(f"p-{secrets.token_hex(4)}", team, name)

        def store() -> None:
            from sqlmodel import Session

            with Session(self.engine) as session:
                register_player(
                    session, event_id, player_id=record.id, team_id=team, name=name, kind="human"
                )
                session.commit()

        await asyncio.to_thread(store)
        known[record.id] = record
        return record

    def wait(self, event_id: int, conn: Connection) -> None:
        self.waiting.setdefault(event_id, set()).add(conn)

    def unwait(self, conn: Connection) -> None:
        for conns in self.waiting.values():
            conns.discard(conn)

    async def seat_of(self, event_id: int, team: str) -> tuple[EventRoom | None, str]:
        """Where the team plays now: the room served here whose current match is the team's
        next one (its earliest scheduled match not over), or None and where it plays later,
        in words (another room whose match is not over yet, a room of another server process,
        or nothing: the team has played all its matches)."""
        plan = await asyncio.to_thread(load_plan, self.engine, event_id)
        self.plans[plan.id] = plan
        return self._seat_in(plan, team)

    def _seat_in(self, plan: EventPlan, team: str) -> tuple[EventRoom | None, str]:
        game = plan.next_game_of(team)
        entry = plan.team(team)
        name = entry.name if entry else team
        if game is None:
            return None, f"{name} has played all its matches: thank you!"
        room = plan.room(game.room_id or "")
        er = self.rooms.get(room.join_code) if room else None
        here = er is not None and er.game is not None and er.game.id == game.id
        if here and er.live is not None and er.waiting is None:  # type: ignore[union-attr]
            return er, f"{name} plays round {game.round} in {_room_name(room)}"
        if here and er.waiting is not None:  # type: ignore[union-attr]
            return None, er.waiting  # type: ignore[union-attr]
        current = plan.current_game(room.id) if room else None
        before = " once the match there now ends" if current and current.id != game.id else ""
        return None, f"{name} plays round {game.round} in {_room_name(room)}{before}."

    def _send_on_waiting(self, event_id: int) -> None:
        """Send each waiting player whose team's match is now open here to its room."""
        plan = self.plans.get(event_id)
        if plan is None:
            return
        for conn in list(self.waiting.get(event_id, ())):
            if conn.closed:
                self.waiting[event_id].discard(conn)
                continue
            er, _ = self._seat_in(plan, conn.team or "")
            if er is not None:
                self.waiting[event_id].discard(conn)
                send_on(conn, er, f"your team's match is open in {_room_name(er)}")

    # -- moderators -------------------------------------------------------------------------------

    def moderator_token(self, er: EventRoom) -> str:
        """The room's moderator token as issued by this process (a new one, stored hashed in
        the record, when it has issued none)."""
        token = self._moderator_tokens.get(er.join_code)
        if token is None:
            from grace_arena.server.arena import token_sha256

            token = secrets.token_urlsafe(24)
            hashes = add_room_moderator_token(
                self.engine, er.event_id, er.room_id, token_sha256(token)
            )
            self._moderator_tokens[er.join_code] = token
            if er.live is not None:
                er.live.moderator_hashes = er.live.moderator_hashes | frozenset(hashes)
        return token

    # -- standings -------------------------------------------------------------------------------

    def refresh_standings(self, event_id: int) -> None:
        """Recompute the event's standings from the record, soon (one at a time: a burst of
        rulings costs one computation after the one under way)."""
        task = self._refreshing.get(event_id)
        if task is not None and not task.done():
            self._again.add(event_id)
            return
        with contextlib.suppress(RuntimeError):  # no running loop: computed when asked
            loop = asyncio.get_running_loop()
            self._refreshing[event_id] = loop.create_task(self._refresh(event_id))

    async def _refresh(self, event_id: int) -> None:
        while True:
            self._again.discard(event_id)
            try:
                view = await asyncio.to_thread(self.compute_standings, event_id)
            except Exception:
                log.exception("standings of event %d could not be computed", event_id)
                return
            self._standings[event_id] = view
            self.standings_version[event_id] = self.standings_version.get(event_id, 0) + 1
            if event_id not in self._again:
                return

    def compute_standings(self, key: int | str) -> StandingsView:
        """The standings of the event named (or numbered) ``key``; raises ``RecordError``
        for no such event. One reader per event, whatever name it was asked by (the key
        comes from a public URL: any number of names keeps no more than one per event)."""
        event_id = event_id_of(self.engine, key)
        reader = self._readers.get(event_id)
        if reader is None:
            reader = self._readers.setdefault(event_id, StandingsReader(self.engine, event_id))
        plan, rows = reader.read()
        return standings_view(plan.name, plan.title, len(plan.rounds), rows, self.room_status(plan))

    def room_status(self, plan: EventPlan) -> list[RoomStatus]:
        """Each room of the event: what it plays now (live scores for the rooms served here)."""
        out = []
        names = {t.id: t.name for t in plan.teams}
        for r in plan.rooms:
            game = plan.current_game(r.id)
            er = self.rooms.get(r.join_code)
            live = er.live if er is not None and game is not None else None
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
                )
            )
        return out

    def standings(self, event_id: int) -> StandingsView | None:
        return self._standings.get(event_id)

    async def close(self) -> None:
        for task in self._refreshing.values():
            task.cancel()


def send_on(conn: Connection, er: EventRoom, message: str) -> None:
    """Tell a connection to say hello again, to ``er``'s code: its room moved on, or its
    team's match is open there."""
    conn.moved = True
    conn.send_model(NextMatch(join_code=er.join_code, room=er.name, message=message))


def _waiting_text(plan: EventPlan, er: EventRoom, game: GamePlan, blockers: list[GamePlan]) -> str:
    """``Room 2's round 3 match, Blue vs Robo, starts when round 2 in Room 1 (Blue) is over.``"""
    names = {t.id: t.name for t in plan.teams}
    teams = " vs ".join(names.get(t, t) for t in game.teams)
    held = []
    for g in blockers:
        room = plan.room(g.room_id or "")
        who = ", ".join(names.get(t, t) for t in g.teams if t in game.teams)
        held.append(f"round {g.round} in {_room_name(room)} ({who})")
    text = (
        f"{_room_name(er)}'s round {game.round} match, {teams}, starts when "
        f"{' and '.join(held)} {'is' if len(held) == 1 else 'are'} over."
    )
    return text[0].upper() + text[1:]


def _room_name(room: Any) -> str:
    if room is None:
        return "no room"
    name = room.name
    return name if not name.isdigit() else f"room {name}"
