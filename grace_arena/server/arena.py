"""What the server holds: its settings, the record, the loaded packets and the live matches with
their leases (``Arena``). No HTTP or websocket handling here (``app.py``, ``ws.py``), and
nothing of rooms, join codes, schedules, players, tokens or the events served (``rooms.py``
sits above the arena and subscribes to it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.config import MatchConfig, ScoringRules, TeamKind, TeamSpec
from grace_arena.core.events import Event, event_to_dict
from grace_arena.core.formats import rules_for
from grace_arena.core.packet import Packet, load_packet
from grace_arena.core.specs import match_config
from grace_arena.core.tokenize import Tokenized, tokenize
from grace_arena.protocol import MatchCreatedReply, MatchSetup
from grace_arena.record import lease, servers
from grace_arena.record.db import open_engine
from grace_arena.record.lease import Holder, LeaseLost
from grace_arena.record.models import TossupRow
from grace_arena.record.servers import Peer
from grace_arena.record.store import MatchStore, RecordedMatch
from grace_arena.resources import shipped_folder
from grace_arena.server.arbiter import DEFAULT_MAX_CREDIT
from grace_arena.server.frames import websocket_protocol
from grace_arena.server.guard import Guard
from grace_arena.server.pipeline import RoomClosed, short_reason
from grace_arena.server.room import Room
from grace_arena.server.views import ModelStep, ModelTrajectory
from grace_arena.server.voice import reading_guides
from grace_arena.server.writer import GroupWriter

log = logging.getLogger(__name__)

CLIENT_DIR = shipped_folder("buzzer_client")
#: Options for ``uvicorn.run``/``uvicorn.Config`` wherever the app is served: frames over
#: 64 KiB close the connection (smaller oversized messages get an error reply), and no
#: per-message compression (small JSON on a LAN; compressing each message for each of
#: hundreds of clients was the largest cost of a broadcast).
#: The websocket protocol writes broadcast frames at once (:mod:`grace_arena.server.frames`).
#: The server keeps asyncio's own event loop even where uvloop is installed (for the precompute
#: workers): that is the loop its frame writing and its benchmarks were measured on.
UVICORN_OPTIONS: dict[str, Any] = {
    "ws_max_size": 65536,
    "ws_per_message_deflate": False,
    "ws": websocket_protocol(),
    "loop": "asyncio",
}


@dataclass
class Settings:
    db_url: str | None = None
    packets: list[Path] = field(default_factory=list)
    #: Play a packet without its questions that cannot be used rather than refuse it.
    skip_broken_questions: bool = False
    secret: str | None = None  # signs tokens; random per process if not given
    public_url: str = "http://127.0.0.1:8000"
    #: The event's one address: a reverse proxy in front of every process of the record
    #: (``grace-arena proxy run``). Join URLs give it, and a client whose room moved is sent
    #: back to it (the proxy routes it to the room's process); the record keeps
    #: ``public_url``, this process's own address, for the proxy to route to.
    proxy_url: str | None = None
    race_window: float = 0.15
    hello_timeout: float = 10.0
    #: What this process's server token grants (with no event): ``""`` matches of its own,
    #: ``"survey"`` a survey server's. A server of an event has its event's.
    token_scope: str = ""
    #: A new player's time to choose a team and type a name, from its ``welcome``.
    join_timeout: float = 300.0
    ping_interval: float = 2.0
    max_message_bytes: int = 4096  # a larger message gets a ``too_large`` error
    rate_per_second: float = 20.0  # sustained messages per connection...
    rate_burst: int = 40  # ...after a burst of this many; beyond: ``rate_limited``
    #: Bytes waiting to go to one connection before it is dropped as too far behind.
    max_queue_bytes: int = 1 << 20
    #: Players one match takes; a join past it gets a ``not_allowed`` reply.
    max_players_per_match: int = 200
    #: Websocket connections open at once from one address (a club's phones may share one
    #: address behind its router, hence generous); past it the upgrade is refused (403).
    max_connections_per_address: int = 300
    #: A match to open on start-up when the record has no unfinished match.
    first_match: MatchSetup | None = None
    #: Called (and awaited, if it is a coroutine function) once the server listens, with the
    #: arena and the rooms (by :func:`run`; e.g. to print the join URLs).
    on_ready: Callable[..., Any] | None = None
    #: Packets to host a per-clue survey of (``/survey``; grace_arena/server/survey.py).
    survey_packets: list[Path] = field(default_factory=list)
    #: Once started, leave what is loaded out of the garbage collector's full passes
    #: (``gc.freeze``). For a server process of its own; off where the app shares a process.
    freeze_gc: bool = False
    #: An event whose rooms this server serves (``grace-arena event``), and which of its rooms
    #: (None: every room no other live server process serves).
    event: str | None = None
    event_rooms: list[str] | None = None
    #: Seconds a match's lease lasts without renewal (grace_arena.record.lease): how long
    #: another process sharing the record waits before it takes over a match of a process on
    #: another host that stopped answering.
    lease_ttl: float = 15.0
    #: Seconds between renewals of the leases (each also records the last moment the matches
    #: were served: a running answer clock resumes from there after a crash).
    renew_interval: float = 1.0
    #: Compensated races: the most a press may be credited before its arrival (seconds).
    max_press_credit: float = DEFAULT_MAX_CREDIT
    #: Players one event may have (None: ``max_players_per_match`` for each of its rooms):
    #: its roster and the players connected now, not every name ever typed.
    max_players_per_event: int | None = None
    #: New names (walk-ins) one address may add to an event, per process, and one connection.
    new_names_per_address: int = 40
    new_names_per_connection: int = 3
    #: Seconds stopping may take (:meth:`Arena.stop_serving`), however many rooms are in a
    #: commit: one still running then is given up, and the log says what it held.
    stop_timeout: float = 15.0


def _end_hung_transactions(engine: Engine, ttl: float) -> None:
    """On PostgreSQL, a transaction of this process left idle (the process hangs, or its
    machine is suspended, in the middle of a commit) is ended by the server after the lease's
    time: its row locks then no longer keep another process from taking its matches over.
    A server's transactions are short (a commit, a read), never idle that long otherwise."""
    if engine.dialect.name != "postgresql":
        return
    from sqlalchemy import event as sa_event

    millis = max(1000, int(ttl * 1000))

    def set_timeout(dbapi_connection, _record) -> None:
        autocommit = dbapi_connection.autocommit
        dbapi_connection.autocommit = True
        with dbapi_connection.cursor() as cursor:
            cursor.execute(f"SET idle_in_transaction_session_timeout = {millis}")
        dbapi_connection.autocommit = autocommit

    sa_event.listen(engine, "connect", set_timeout)


def model_trajectory(rows: Sequence[Any], field_: str = "confidence_logit") -> ModelTrajectory:
    """A model's recorded steps on one tossup (``ModelStepRow``, in order) as the views use
    them: ``field_`` is the confidence its policy buzzes on."""
    return ModelTrajectory(
        tuple(
            ModelStep(
                word=s.word_index,
                guess=s.guess,
                confidence=getattr(s, field_, None),
                logit=s.confidence_logit,
                verbal=s.confidence_verbal,
                correct=s.correct,
            )
            for s in rows
        )
    )


@dataclass
class _Parts:
    """What a room is built from, read from the record in a worker thread."""

    rm: RecordedMatch
    join_code: str
    words: dict[str, list[str]]
    guides: dict[str, dict[int, str]]
    trajectories: dict[str, dict[str, ModelTrajectory]]
    tossup_log: list[dict[str, Any]] = field(default_factory=list)
    #: The last moment the match was served before (on its deadlines' clock), if reopened.
    held_since: float | None = None


class ArenaListener(Protocol):
    """What the layers above the arena (the rooms) follow: every committed change of
    every room served here, every room retired, and the arena's periodic tick (after the
    leases were renewed)."""

    def on_events(self, room: Room, events: list[Event]) -> None: ...

    def on_retired(self, room: Room) -> None: ...

    async def on_tick(self) -> None: ...

    def on_peers(self) -> None: ...


class Arena:
    """The live matches of this server process and what they need: the record, the loaded
    packets, the leases.

    One owner of the rooms' life cycle: a room is built (:meth:`create`, :meth:`reopen`: the
    record's work in a worker thread, nothing of the arena changed there), served
    (:meth:`serve`: registered and started, on the event loop), and retired (:meth:`retire`:
    unregistered and closed). ``rooms`` is the one place that says which match is served here.
    The layers above (the rooms) subscribe (:meth:`subscribe`) rather than being
    called from here.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine: Engine = open_engine(settings.db_url)
        _end_hung_transactions(self.engine, settings.lease_ttl)
        self.store = MatchStore(self.engine)
        self.packets: dict[str, Packet] = {}
        #: The matches served here, by id: the one record of what is live in this process.
        self.rooms: dict[int, Room] = {}
        self.connections_from: Counter[str] = Counter()  # open websockets per address
        #: Wrong codes and tokens per address (guessing is throttled).
        self.guard = Guard()
        #: This process, as the holder of the leases of the matches it serves.
        self.holder = Holder.this_process(settings.public_url)
        #: Every room's changes are committed through it, together (group commit).
        self.writer = GroupWriter(self.store)
        #: The other server processes sharing the record (renewed with the leases).
        self.peers: list[Peer] = []
        self._listeners: list[ArenaListener] = []
        self._opening: dict[int, asyncio.Future[Room]] = {}
        self._renewer: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        #: Set by :meth:`stop_serving`: nothing is opened or served after it.
        self.stopping = False
        self._looking: asyncio.Task | None = None  # the layers' look around, after a renewal
        self._moving: set[int] = set()  # matches another process took, being retired here

    def subscribe(self, listener: ArenaListener) -> None:
        self._listeners.append(listener)

    # -- packets and matches ---------------------------------------------------------------

    def load_packets(self, paths: list[Path]) -> None:
        for path in paths:
            packet = load_packet(path, skip_broken=self.settings.skip_broken_questions)
            self.store.save_packet(packet, source=path)
            self.packets[packet.packet.id] = packet

    def tokenized(self, packet_id: str | None) -> dict[str, Tokenized]:
        """Each tossup of the packet, split into its canonical words."""
        if packet_id in self.packets:
            return {t.id: t.tokens() for t in self.packets[packet_id].tossups}
        with Session(self.engine) as session:
            rows = session.exec(select(TossupRow).where(TossupRow.packet_id == packet_id)).all()
            return {r.tossup_id: tokenize(r.text) for r in rows}

    def _ai_players(self, team: Any, packet: Any) -> tuple[Any, ...]:
        """A hybrid team's AI players (QANTA 2026), read from the record's model outputs."""
        from grace_arena.model.hybrid import ai_player

        try:
            return tuple(
                ai_player(self.engine, a.model, packet, player_id=f"ai:{a.model}",
                          name=a.name or a.model, weight_class=a.weight_class)
                for a in team.ais
            )  # fmt: skip
        except ValueError as exc:  # no weight class: as a model not in the record, refused
            raise LookupError(str(exc)) from exc

    def match_config(self, setup: MatchSetup) -> MatchConfig:
        """What the engine plays for ``setup``: its packet's tossups, its teams (model teams
        with their buzzes from the precomputed record), its rules."""
        packet = self.packets.get(setup.packet_id)
        if packet is None:
            raise LookupError(
                f"no packet {setup.packet_id!r} loaded; loaded: {', '.join(self.packets) or 'none'}"
            )
        teams: list[TeamSpec] = []
        for team in setup.teams:
            if team.kind == "human":
                teams.append(TeamSpec(id=team.id, name=team.name,
                                      ai_players=self._ai_players(team, packet)))  # fmt: skip
                continue
            from grace_arena.model.policy import BuzzPolicy, model_team

            model = team.model or "tfidf"
            policy = BuzzPolicy(
                confidence=team.confidence,
                threshold=team.threshold if team.threshold is not None else 0.5,
            )
            if model == "tfidf":
                from grace_arena.model.precompute import ensure_precomputed

                ensure_precomputed(self.settings.db_url, packet, model)
            spec = model_team(self.engine, model, packet, policy, team_id=team.id, name=team.name)
            teams.append(
                spec.model_copy(
                    update={"confidence": policy.confidence, "threshold": policy.threshold}
                )
            )
        # a format's rules, with what the set-up says explicitly on top; no format: GRACE's
        # game (the defaults) with the same
        if setup.format is None:
            rules = ScoringRules(**setup.scoring())
        else:
            rules = rules_for(setup.format, **setup.scoring())
        for spec in teams:  # a model team plays its bonuses with its precomputed answers
            if spec.kind is TeamKind.MODEL and rules.bonuses and packet.bonuses:
                missing = [b.id for b in packet.bonuses if b.id not in spec.bonus_answers]
                if missing:
                    raise LookupError(
                        f"model {spec.model!r} has not been precomputed on the bonuses of packet "
                        f"{packet.packet.id!r} ({len(missing)} missing, e.g. {missing[0]!r}): "
                        f"run `grace-arena precompute --packet ... --model {spec.model}`"
                    )
        consult = None
        if setup.consult_model:
            from grace_arena.core.config import ConsultSpec
            from grace_arena.model.policy import load_bonus_answers

            if setup.consult_model == "tfidf":
                from grace_arena.model.precompute import ensure_precomputed

                ensure_precomputed(self.settings.db_url, packet, "tfidf")
            answers = load_bonus_answers(self.engine, setup.consult_model, packet)
            missing = [b.id for b in packet.bonuses if b.id not in answers]
            if missing:
                raise LookupError(
                    f"model {setup.consult_model!r} has not been precomputed on the bonuses of "
                    f"packet {packet.packet.id!r} ({len(missing)} missing, e.g. {missing[0]!r}): "
                    f"run `grace-arena precompute --packet ... --model {setup.consult_model}`"
                )
            consult = ConsultSpec(model=setup.consult_model, answers=answers)
        return match_config(
            packet,
            teams,
            consult=consult,
            rules=rules,
            tossup_ids=setup.tossup_ids,
            title=setup.title,
            reading_mode=setup.reading_mode,
            wpm=setup.wpm,
            compensated=setup.compensated,
            exhibition=setup.exhibition,
            phone_protests=setup.phone_protests,
            voice=setup.voice,
        )

    # -- building rooms (the record's work, in a worker thread) ----------------------------------

    async def create(
        self,
        setup: MatchSetup,
        *,
        join_code: str,
        event: str | None = None,
        game_id: int | None = None,
    ) -> Room:
        """A new match in the record, this process holding its lease, and its room (not served
        yet: :meth:`serve`), played in the room with ``join_code`` (the rooms layer's). With
        ``event``/``game_id``, the match plays a scheduled match of an event; otherwise it is
        a match of its own (an event of its own in the record, whose one room it is)."""
        self._refuse_if_stopping()
        parts = await asyncio.to_thread(self._create_parts, setup, event, game_id, join_code)
        await self._give_up_if_stopping(parts)
        return self._build(parts)

    def _create_parts(
        self,
        setup: MatchSetup,
        event: str | None,
        game_id: int | None,
        join_code: str,
    ) -> _Parts:
        config = self.match_config(setup)
        rm = self.store.create(
            config,
            now=time.time(),
            join_code=join_code,
            event=event,
            game_id=game_id,
            holder=self.holder,
        )
        return _Parts(rm, join_code, **self._room_data(config))

    async def reopen(self, match_id: int, join_code: str) -> Room:
        """A match of the record, rebuilt, with this process holding its lease, and its room
        (not served yet). Raises :class:`~grace_arena.record.lease.LeaseHeld` when another
        live process serves it."""
        self._refuse_if_stopping()
        parts = await asyncio.to_thread(self._reopen_parts, match_id, join_code)
        await self._give_up_if_stopping(parts)
        return self._build(parts)

    def _refuse_if_stopping(self) -> None:
        if self.stopping:
            raise RoomClosed.stopping()

    async def _give_up_if_stopping(self, parts: _Parts) -> None:
        """A match made or taken while this process began to stop: its lease goes back at
        once (another process may serve it), and nothing of it is served here."""
        if self.stopping:
            with contextlib.suppress(Exception):  # else it lapses by itself
                await asyncio.to_thread(
                    lease.release, self.engine, self.holder, [parts.rm.id], served=False
                )
            self._refuse_if_stopping()

    def _reopen_parts(self, match_id: int, join_code: str) -> _Parts:
        taken = lease.acquire(self.engine, match_id, self.holder, ttl=self.settings.lease_ttl)
        if taken.took_over:
            log.warning(
                "match %d: taken over from a server process that stopped answering", match_id
            )
        rm = self.store.open(match_id, claim=taken.claim)
        events = self.store.events(match_id)
        started = [i for i, ev in enumerate(events) if ev.type == "tossup_started"]
        log_ = [event_to_dict(ev) for ev in events[started[-1] :]] if started else []
        return _Parts(
            rm,
            join_code,
            **self._room_data(rm.match.config),
            tossup_log=log_,  # the moderator's log of the tossup being played, as it was
            held_since=taken.served_until,
        )

    def _room_data(self, config: MatchConfig) -> dict[str, Any]:
        tossups = self.tokenized(config.packet_id)
        return {
            "words": {tid: [w.text for w in t.words] for tid, t in tossups.items()},
            "guides": {tid: reading_guides(t) for tid, t in tossups.items()},
            "trajectories": self.trajectories(config),
        }

    def trajectories(self, config: MatchConfig) -> dict[str, dict[str, ModelTrajectory]]:
        """Each model team's precomputed guesses, per tossup, for the moderator's model panel."""
        out: dict[str, dict[str, ModelTrajectory]] = {}
        models = [t for t in config.teams if t.kind is TeamKind.MODEL and t.model]
        if not models or config.packet_id is None:
            return out
        from grace_arena.model.policy import CONFIDENCE_FIELDS, load_steps

        for team in models:
            assert team.model is not None
            field_ = CONFIDENCE_FIELDS.get(team.confidence or "logit", "confidence_logit")
            steps = load_steps(self.engine, team.model, config.packet_id)
            out[team.id] = {tid: model_trajectory(rows, field_) for tid, rows in steps.items()}
        return out

    def _build(self, parts: _Parts) -> Room:
        """The room of ``parts`` (on the event loop)."""
        config = parts.rm.match.config
        room = Room(
            parts.rm,
            writer=self.writer,
            join_code=parts.join_code,
            compensated=config.compensated,
            race_window=self.settings.race_window,
            max_credit=self.settings.max_press_credit,
            trajectories=parts.trajectories,
            words=parts.words,
            guides=parts.guides,
            held_since=parts.held_since,
        )
        room.tossup_log = parts.tossup_log
        return room

    # -- serving and retiring ------------------------------------------------------------------

    def serve(self, room: Room, *, hashes: frozenset[str] = frozenset()) -> None:
        """Serve ``room`` (its match's lease is this process's): register it and start its
        reading and timers; ``hashes``: its valid moderator tokens' (its room's: the room, its
        join code and its tokens are the rooms layer's, ``rooms.py``)."""
        match_id = room.rm.id
        self._refuse_if_stopping()
        if match_id in self.rooms and self.rooms[match_id] is not room:
            raise RuntimeError(f"match {match_id} is served here already")
        self.rooms[match_id] = room
        room.moderator_hashes = room.moderator_hashes | hashes
        room.listeners.append(self._tell_events)
        room.on_lease_lost = self._lease_lost
        room.start()
        if self._renewer is None or self._renewer.done():
            with contextlib.suppress(RuntimeError):  # no running loop: nothing to renew yet
                self._renewer = asyncio.get_running_loop().create_task(self._renew_leases())

    async def retire(self, room: Room, error: RoomClosed, *, release: bool = True) -> None:
        """Stop serving ``room``'s match: unregister it, close it (its connections, if any are
        left, are told ``error`` and closed), and give its lease up (``release``: not when
        another process took it)."""
        match_id = room.rm.id
        if self.rooms.get(match_id) is room:
            del self.rooms[match_id]
        await room.close(error)
        for listener in list(self._listeners):
            try:
                listener.on_retired(room)
            except Exception:
                log.exception("match %d: following its retirement failed", match_id)
        if release:
            try:
                await asyncio.to_thread(lease.release, self.engine, self.holder, [match_id])
            except Exception as exc:  # it lapses by itself
                log.warning("match %d: its lease was not released (%s)", match_id, exc)

    def _tell_events(self, room: Room, events: list[Event]) -> None:
        for listener in list(self._listeners):
            listener.on_events(room, events)

    def _lease_lost(self, room: Room, exc: LeaseLost | None) -> None:
        if room.rm.id in self._moving:  # told already (a commit, then a renewal)
            return
        self._moving.add(room.rm.id)
        self._spawn(self._moved_away(room))

    async def _moved_away(self, room: Room) -> None:
        """Another process took ``room``'s match over: retire it here, sending its clients
        there."""
        holder = None
        with contextlib.suppress(Exception):
            holder = await asyncio.to_thread(lease.holder_of, self.engine, room.rm.id)
        where = holder.describe() if holder is not None else "another server process"
        error = RoomClosed(
            f"match {room.rm.id} is served by {where} now",
            url=self.told_url(holder.url if holder is not None else None),
        )
        log.warning("match %d: another server process took it over", room.rm.id)
        try:
            await self.retire(room, error, release=False)
        finally:
            self._moving.discard(room.rm.id)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- finding rooms --------------------------------------------------------------------------

    async def open_once(self, match_id: int, opening: Callable[[], Any]) -> Room:
        """The room of ``match_id``: served here already, or opened by ``opening`` (once,
        however many ask at the same time)."""
        room = self.rooms.get(match_id)
        if room is not None:
            return room
        pending = self._opening.get(match_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Room] = asyncio.get_running_loop().create_future()
        self._opening[match_id] = future
        try:
            room = await opening()
            future.set_result(room)
            return room
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            del self._opening[match_id]

    # -- leases, peers --------------------------------------------------------------------------

    async def _renew_leases(self) -> None:
        """Every second or so: renew the leases of the matches served here (retiring any that
        another process took over: this one was too slow to renew, a hang, a suspended
        laptop), say this process is alive and learn of the others, then let the layers above
        look around (rooms that may move on, rooms nobody serves any more)."""
        interval = min(self.settings.renew_interval, max(0.2, self.settings.lease_ttl / 3))
        while True:
            await asyncio.sleep(interval)
            claims = {
                match_id: room.rm.claim.generation if room.rm.claim is not None else -1
                for match_id, room in self.rooms.items()
            }
            try:
                lost = await asyncio.to_thread(
                    lease.renew, self.engine, self.holder,
                    {m: g for m, g in claims.items() if g >= 0},
                )  # fmt: skip
                peers = await asyncio.to_thread(
                    servers.heartbeat, self.engine, self.holder.id, ttl=self.settings.lease_ttl
                )
            except Exception as exc:  # the record is unreachable for now: try again
                log.warning(
                    "renewing the leases of %d matches failed (%s); trying again",
                    len(claims), short_reason(exc),
                )  # fmt: skip
                continue
            # Neither retiring a room (its batch in flight may take seconds to finish) nor
            # the layers' look around (opening rooms) holds the next renewal up: the leases of
            # the other rooms must not lapse meanwhile.
            for match_id in lost:
                room = self.rooms.get(match_id)
                if room is not None:
                    self._lease_lost(room, None)
            if peers != self.peers:
                self.peers = peers
                for listener in list(self._listeners):
                    listener.on_peers()
            if self._looking is None or self._looking.done():
                self._looking = asyncio.get_running_loop().create_task(self._look_around())

    async def _look_around(self) -> None:
        for listener in list(self._listeners):
            try:
                await listener.on_tick()
            except Exception:
                log.exception("looking around after renewing the leases failed")

    async def register(self, events: Iterable[int] = ()) -> None:
        """Say, in the record, that this process serves (and which ``events``: the rooms
        layer's)."""
        await asyncio.to_thread(
            servers.register, self.engine, self.holder.id, self.settings.public_url, sorted(events)
        )
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew_leases())

    def join_url(self, code: str) -> str:
        return f"{self.client_base.rstrip('/')}/?code={code}"

    @property
    def client_base(self) -> str:
        """The address clients are given: the proxy's, behind one, else this process's."""
        return self.settings.proxy_url or self.settings.public_url

    def told_url(self, url: str | None) -> str | None:
        """The address a client is sent to for a process at ``url`` (one of the record):
        behind a proxy, the proxy's (which routes it to the process serving its room)."""
        if url is None or self.settings.proxy_url is None:
            return url
        return self.settings.proxy_url

    def created_reply(self, room: Room, token: str) -> MatchCreatedReply:
        """What a moderator's set-up is told of a match served here; ``token``: the moderator
        token of its room (the rooms layer's)."""
        state = room.rm.match.state
        return MatchCreatedReply(
            match_id=room.rm.id,
            join_code=room.join_code,
            join_url=self.join_url(room.join_code),
            moderator_token=token,
            title=state.config.title,
            packet_id=state.config.packet_id,
            teams=[t.name for t in state.config.teams],
            tossups_started=state.tossups_started,
        )

    async def stop_serving(self, *, limit: float | None = None) -> None:
        """Retire every room (its clients are told the server is stopping and their sockets
        closed, before the web server closes them for its own reasons) and give the leases
        up, so that another process may go on at once; within ``limit`` seconds
        (``Settings.stop_timeout``), whatever the rooms are doing."""
        self.stopping = True
        for task in (self._renewer, self._looking):
            if task is not None:
                task.cancel()
        limit = self.settings.stop_timeout if limit is None else limit
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        stopping = RoomClosed.stopping()
        rooms = list(self.rooms.values())
        ids = list(self.rooms)
        # The commits in flight get the limit, less a moment for the leases, all at once (not
        # one room after another): a commit still running then is given up (the room's
        # pipeline says in the log what it held), and the rooms retire without waiting.
        commits = max(limit - min(1.0, limit / 4), 0.0)
        await asyncio.gather(*(room.pipeline.close(stopping, timeout=commits) for room in rooms))
        await asyncio.gather(*(self.retire(room, stopping, release=False) for room in rooms))
        if ids:
            with contextlib.suppress(Exception):  # else the leases lapse by themselves
                await asyncio.wait_for(
                    asyncio.to_thread(lease.release, self.engine, self.holder, ids),
                    max(deadline - loop.time(), 0.0),
                )

    async def close(self) -> None:
        """Stop serving (:meth:`stop_serving`), say so in the record, let go of it; within
        ``Settings.stop_timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.stop_timeout
        await self.stop_serving()
        with contextlib.suppress(Exception):  # else the registration lapses by itself
            await asyncio.wait_for(
                asyncio.to_thread(servers.unregister, self.engine, self.holder.id),
                max(deadline - loop.time(), 0.0),
            )
        for task in list(self._tasks):
            task.cancel()
        self.engine.dispose()
