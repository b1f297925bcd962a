"""What the server holds: its settings, its tokens, the record, the loaded packets and the live
rooms (``Arena``). No HTTP or websocket handling here (``app.py``, ``ws.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.config import MatchConfig, ScoringRules, TeamKind, TeamSpec
from grace_arena.core.events import event_to_dict
from grace_arena.core.packet import Packet, load_packet
from grace_arena.core.specs import match_config
from grace_arena.core.tokenize import POWER_MARK, Tokenized, tokenize
from grace_arena.protocol import (
    MatchCreatedReply,
    MatchSetup,
)
from grace_arena.record import lease
from grace_arena.record.db import open_engine
from grace_arena.record.lease import Holder, LeaseHeld
from grace_arena.record.models import MatchRow, TossupRow
from grace_arena.record.schedule import JOIN_ALPHABET
from grace_arena.record.store import MatchStore, RecordedMatch
from grace_arena.resources import shipped_folder
from grace_arena.server.frames import websocket_protocol
from grace_arena.server.room import ModelTrajectory, Room
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
    secret: str | None = None  # signs tokens; random per process if not given
    public_url: str = "http://127.0.0.1:8000"
    race_window: float = 0.15
    hello_timeout: float = 10.0
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
    #: Called once the server listens (by :func:`run`; e.g. to print the join URL).
    on_ready: Callable[[Arena], None] | None = None
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


class Tokens:
    """The server token and players' tokens are HMACs of what they grant, so nothing secret
    is stored in the record. Moderator tokens are random per match (``Arena.moderator_token``)
    and the record keeps only their SHA-256."""

    def __init__(self, secret: str) -> None:
        self._key = secret.encode()

    def _sign(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()[:32]

    def server(self) -> str:
        return self._sign("server")

    def player(self, scope: int | str, player_id: str) -> str:
        """A player's token, valid in ``scope``: a match (its id), or every match of an event
        (``"event:<id>"``: the player of an event's rooms comes back in every round)."""
        return f"{player_id}.{self._sign(f'player:{scope}:{player_id}')}"

    def player_id(self, scope: int | str, token: str) -> str | None:
        player_id, _, _ = token.rpartition(".")
        if player_id and _same(self.player(scope, player_id), token):
            return player_id
        return None

    def check(self, given: str | None, expected: str) -> bool:
        return given is not None and _same(given, expected)


def reading_guides(tossup: Tokenized) -> dict[int, str]:
    """Word index -> what the text has between that word and the next one that is not a word
    (a pronunciation guide and the punctuation after it, a lone dash), for the moderator who
    reads aloud: ``Raskolnikov ("ras-KOHL-nee-kuff"), uses`` -> ``{0: '("ras-KOHL-nee-kuff"),'}``.
    The power mark is left out (the moderator's screen marks it from ``power_index``)."""
    out: dict[int, str] = {}
    words = tossup.words
    for i, word in enumerate(words):
        end = words[i + 1].start if i + 1 < len(words) else len(tossup.text)
        between = " ".join(tossup.text[word.end : end].replace(POWER_MARK, " ").split())
        if between:
            out[i] = between
    return out


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _same(a: str, b: str) -> bool:
    """Constant-time comparison of two tokens; any text may be given (``compare_digest``
    refuses non-ASCII ``str``), so compare their UTF-8 bytes."""
    return hmac.compare_digest(
        a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
    )


class Arena:
    """Everything the server holds: the record, the loaded packets and the live rooms."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine: Engine = open_engine(settings.db_url)
        self.store = MatchStore(self.engine)
        self.tokens = Tokens(settings.secret or secrets.token_hex(32))
        self.packets: dict[str, Packet] = {}
        self.rooms: dict[int, Room] = {}
        self.by_code: dict[str, int] = {}
        self.connections_from: Counter[str] = Counter()  # open websockets per address
        #: Moderator tokens issued by this process (the record has only their hashes).
        self._moderator_tokens: dict[int, str] = {}
        #: This process, as the holder of the leases of the matches it serves.
        self.holder = Holder.this_process(settings.public_url)
        #: Every room's changes are committed through it, together (group commit).
        self.writer = GroupWriter(self.store)
        self._renewer: asyncio.Task | None = None
        from grace_arena.server.event_rooms import EventHost

        #: The rooms of events this process serves.
        self.events = EventHost(self)

    # -- packets and matches ---------------------------------------------------------------

    def load_packets(self, paths: list[Path]) -> None:
        for path in paths:
            packet = load_packet(path)
            self.store.save_packet(packet, source=path)
            self.packets[packet.packet.id] = packet

    def _tokenized(self, packet_id: str | None) -> dict[str, Tokenized]:
        """Each tossup of the packet, split into its canonical words."""
        if packet_id in self.packets:
            return {t.id: t.tokens() for t in self.packets[packet_id].tossups}
        with Session(self.engine) as session:
            rows = session.exec(select(TossupRow).where(TossupRow.packet_id == packet_id)).all()
            return {r.tossup_id: tokenize(r.text) for r in rows}

    def _new_join_code(self) -> str:
        from grace_arena.record.schedule import find_room_by_code

        while True:
            code = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(5))
            if (
                code not in self.by_code
                and self.store.find_by_join_code(code) is None
                and find_room_by_code(self.engine, code) is None
            ):
                return code

    async def open_match(self, setup: MatchSetup) -> Room:
        """Create a match (the slow part in a worker thread) and start its room."""
        room = await asyncio.to_thread(self.create_match, setup)
        self._add(room)
        return room

    def create_match(
        self,
        setup: MatchSetup,
        *,
        event: str | None = None,
        game_id: int | None = None,
        join_code: str | None = None,
    ) -> Room:
        """Create a match in the record and its room (not started: see ``open_match``); this
        process takes its lease. With ``event``/``game_id``/``join_code``, the match plays a
        scheduled match of an event in the room with that code."""
        config = self.match_config(setup)
        code = join_code or self._new_join_code()
        rm = self.store.create(
            config,
            now=time.time(),
            join_code=code,
            event=event,
            game_id=game_id,
            holder=self.holder,
        )
        if event is None:
            self.issue_moderator_token(rm.id)
        return self._room(rm, code)

    def open_recorded(self, match_id: int, join_code: str) -> Room:
        """A match of the record, rebuilt, with this process holding its lease (raises
        :class:`~grace_arena.record.lease.LeaseHeld` when another live process serves it)."""
        took_over = lease.acquire(self.engine, match_id, self.holder, ttl=self.settings.lease_ttl)
        if took_over:
            log.warning("match %d: taken over from a server process that stopped", match_id)
        room = self._room(self.store.open(match_id, holder=self.holder), join_code)
        # The moderator's log of the tossup being played, as it was before.
        events = self.store.events(match_id)
        started = [i for i, ev in enumerate(events) if ev.type == "tossup_started"]
        if started:
            room.tossup_log = [event_to_dict(ev) for ev in events[started[-1] :]]
        return room

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
                teams.append(TeamSpec(id=team.id, name=team.name))
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
        rules = ScoringRules(
            correct_points=setup.correct_points,
            power_points=setup.power_points,
            neg_points=setup.neg_points,
            negs_only_before_end=setup.negs_only_before_end,
            rebuzz=setup.rebuzz,
            answer_time=setup.answer_time,
            buzz_window=setup.buzz_window,
        )
        return match_config(
            packet,
            teams,
            rules=rules,
            tossup_ids=setup.tossup_ids,
            title=setup.title,
            reading_mode=setup.reading_mode,
            wpm=setup.wpm,
            compensated=setup.compensated,
        )

    def _room(self, rm: RecordedMatch, join_code: str) -> Room:
        """The room of a recorded match, with what the moderator sees of its model teams."""
        config = rm.match.config
        tossups = self._tokenized(config.packet_id)
        return Room(
            rm,
            writer=self.writer,
            join_code=join_code,
            compensated=config.compensated,
            race_window=self.settings.race_window,
            trajectories=self._trajectories(config),
            words={tid: [w.text for w in t.words] for tid, t in tossups.items()},
            guides={tid: reading_guides(t) for tid, t in tossups.items()},
        )

    def _trajectories(self, config: MatchConfig) -> dict[str, dict[str, ModelTrajectory]]:
        """Each model team's precomputed guesses, per tossup, for the moderator's model panel."""
        out: dict[str, dict[str, ModelTrajectory]] = {}
        models = [t for t in config.teams if t.kind is TeamKind.MODEL and t.model]
        if not models or config.packet_id is None:
            return out
        from grace_arena.model.policy import CONFIDENCE_FIELDS, load_steps

        for team in models:
            assert team.model is not None
            field = CONFIDENCE_FIELDS.get(team.confidence or "logit", "confidence_logit")
            steps = load_steps(self.engine, team.model, config.packet_id)
            out[team.id] = {
                tid: ModelTrajectory(
                    tuple((s.word_index, s.guess, getattr(s, field, None)) for s in rows)
                )
                for tid, rows in steps.items()
            }
        return out

    def _add(self, room: Room, *, extra_hashes: frozenset[str] = frozenset()) -> None:
        """Serve ``room`` (its match's lease is this process's): start its reader and timers.
        A match of an event's room is found by the room's code (``self.events``), any other
        by its own."""
        self.rooms[room.rm.id] = room
        if room.event is None:
            self.by_code[room.join_code] = room.rm.id
        room.moderator_hashes = frozenset(self.store.moderator_tokens(room.rm.id)) | extra_hashes
        room.start()
        if self._renewer is None or self._renewer.done():
            with contextlib.suppress(RuntimeError):  # no running loop: nothing to renew yet
                self._renewer = asyncio.get_running_loop().create_task(self._renew_leases())

    def drop(self, match_id: int) -> Room | None:
        """Stop serving a match (it ended and its room moved on, or another process took it
        over); its connections are left to the caller."""
        room = self.rooms.pop(match_id, None)
        if room is not None and self.by_code.get(room.join_code) == match_id:
            del self.by_code[room.join_code]
        return room

    def restore(self) -> None:
        """Reopen every unfinished match in the record that no other live server process
        serves (after a crash or a restart). Matches of an event's rooms are opened by the
        event's rooms (``serve --event``), not here."""
        from grace_arena.record.models import EventGameRow

        with Session(self.engine) as session:
            scheduled = set(
                session.exec(
                    select(EventGameRow.match_id).where(EventGameRow.match_id.is_not(None))  # type: ignore[union-attr]
                ).all()
            )
            rows = session.exec(
                select(MatchRow)
                .where(MatchRow.ended_at.is_(None), MatchRow.join_code.is_not(None))  # type: ignore[union-attr]
                .order_by(MatchRow.id)  # type: ignore[arg-type]  (PostgreSQL has no order unless asked)
            ).all()
        for row in rows:
            assert row.id is not None and row.join_code is not None
            if row.id in self.rooms or row.id in scheduled:
                continue
            try:
                self._add(self.open_recorded(row.id, row.join_code))
            except LeaseHeld as exc:
                log.warning("not reopened here: %s", exc)

    async def open_by_code(self, code: str) -> Room | None:
        """The live match a join code opens: served here already, or an unfinished match of
        the record that this process takes over (its server stopped). Raises
        :class:`~grace_arena.record.lease.LeaseHeld` when another live process serves it."""
        code = code.strip().upper()
        match_id = self.by_code.get(code)
        if match_id is not None:
            return self.rooms.get(match_id)
        room = await self.events.room_by_code(code)
        if room is not None:
            return room
        row = await asyncio.to_thread(self.store.find_by_join_code, code)
        if row is None or row.id is None or row.ended_at is not None:
            return None
        if row.id in self.rooms:
            return self.rooms[row.id]
        room = await asyncio.to_thread(self.open_recorded, row.id, code)
        if row.id in self.rooms:  # opened meanwhile by another request
            return self.rooms[row.id]
        self._add(room)
        return room

    async def _renew_leases(self) -> None:
        """Renew the leases of the matches served here; stop serving any that another process
        took over (this one was too slow to renew: a hang, a suspended laptop)."""
        interval = max(0.5, self.settings.lease_ttl / 3)
        while True:
            await asyncio.sleep(interval)
            try:
                lost = await asyncio.to_thread(
                    lease.renew, self.engine, self.holder, list(self.rooms)
                )
            except Exception:  # the record is unreachable for now: try again
                log.exception("renewing the leases of %d matches failed", len(self.rooms))
                continue
            for match_id in lost:
                room = self.drop(match_id)
                if room is not None:
                    log.warning("match %d: another server process took it over", match_id)
                    await room.close(reason="another server process serves this match now")
            # A room waiting for a match of another process to end moves on when it has.
            await self.events.recheck_waiting()

    def moderator_token(self, match_id: int) -> str:
        """The match's moderator token as issued by this process; a new one (the older ones
        stay valid) when this process has issued none, e.g. after a restart."""
        token = self._moderator_tokens.get(match_id)
        if token is None:
            token = self.issue_moderator_token(match_id)
        return token

    def issue_moderator_token(self, match_id: int) -> str:
        """A new random moderator token for the match; the record keeps its hash."""
        token = secrets.token_urlsafe(24)
        hashes = self.store.add_moderator_token(match_id, token_sha256(token))
        self._moderator_tokens[match_id] = token
        room = self.rooms.get(match_id)
        if room is not None:
            room.moderator_hashes = frozenset(hashes)
        return token

    def is_moderator(self, match_id: int, given: str | None) -> bool:
        """Whether ``given`` is a valid moderator token of the match."""
        if not given:
            return False
        room = self.rooms.get(match_id)
        hashes = (
            room.moderator_hashes if room is not None else self.store.moderator_tokens(match_id)
        )
        digest = token_sha256(given)
        return any(_same(digest, h) for h in hashes)

    def join_url(self, code: str) -> str:
        return f"{self.settings.public_url.rstrip('/')}/?code={code}"

    def created_reply(self, room: Room) -> MatchCreatedReply:
        return MatchCreatedReply(
            match_id=room.rm.id,
            join_code=room.join_code,
            join_url=self.join_url(room.join_code),
            moderator_token=self.moderator_token(room.rm.id),
        )

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
        await self.events.close()
        for room in self.rooms.values():
            await room.close()
        with contextlib.suppress(Exception):  # give the matches up: another process may go on
            await asyncio.to_thread(lease.release, self.engine, self.holder, list(self.rooms))
        self.engine.dispose()
