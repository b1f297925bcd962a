"""What the server holds: its settings, its tokens, the record, the loaded packets and the live
rooms (``Arena``). No HTTP or websocket handling here (``app.py``, ``ws.py``)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
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
from grace_arena.protocol import (
    MatchCreatedReply,
    MatchSetup,
)
from grace_arena.record.db import open_engine
from grace_arena.record.models import MatchRow, TossupRow
from grace_arena.record.store import MatchStore, RecordedMatch
from grace_arena.resources import shipped_folder
from grace_arena.server.frames import FrameWritingProtocol
from grace_arena.server.room import ModelTrajectory, Room

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
    "ws": FrameWritingProtocol,
    "loop": "asyncio",
}
JOIN_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


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

    def player(self, match_id: int, player_id: str) -> str:
        return f"{player_id}.{self._sign(f'player:{match_id}:{player_id}')}"

    def player_id(self, match_id: int, token: str) -> str | None:
        player_id, _, _ = token.rpartition(".")
        if player_id and _same(self.player(match_id, player_id), token):
            return player_id
        return None

    def check(self, given: str | None, expected: str) -> bool:
        return given is not None and _same(given, expected)


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

    # -- packets and matches ---------------------------------------------------------------

    def load_packets(self, paths: list[Path]) -> None:
        for path in paths:
            packet = load_packet(path)
            self.store.save_packet(packet, source=path)
            self.packets[packet.packet.id] = packet

    def _words(self, packet_id: str | None) -> dict[str, list[str]]:
        if packet_id in self.packets:
            return {
                t.id: [w.text for w in t.tokens().words] for t in self.packets[packet_id].tossups
            }
        from grace_arena.core.tokenize import tokenize

        with Session(self.engine) as session:
            rows = session.exec(select(TossupRow).where(TossupRow.packet_id == packet_id)).all()
            return {r.tossup_id: [w.text for w in tokenize(r.text).words] for r in rows}

    def _new_join_code(self) -> str:
        while True:
            code = "".join(secrets.choice(JOIN_ALPHABET) for _ in range(5))
            if code not in self.by_code and self.store.find_by_join_code(code) is None:
                return code

    async def open_match(self, setup: MatchSetup) -> Room:
        """Create a match (the slow part in a worker thread) and start its room."""
        room = await asyncio.to_thread(self.create_match, setup)
        self._add(room)
        return room

    def create_match(self, setup: MatchSetup) -> Room:
        """Create a match in the record and its room (not started: see ``open_match``)."""
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
        config = match_config(
            packet,
            teams,
            rules=rules,
            tossup_ids=setup.tossup_ids,
            title=setup.title,
            reading_mode=setup.reading_mode,
            wpm=setup.wpm,
            compensated=setup.compensated,
        )
        code = self._new_join_code()
        rm = self.store.create(config, now=time.time(), join_code=code)
        self.issue_moderator_token(rm.id)
        return self._room(rm, code)

    def _room(self, rm: RecordedMatch, join_code: str) -> Room:
        """The room of a recorded match, with what the moderator sees of its model teams."""
        config = rm.match.config
        return Room(
            rm,
            join_code=join_code,
            compensated=config.compensated,
            race_window=self.settings.race_window,
            trajectories=self._trajectories(config),
            words=self._words(config.packet_id),
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

    def _add(self, room: Room) -> None:
        self.rooms[room.rm.id] = room
        self.by_code[room.join_code] = room.rm.id
        room.moderator_hashes = frozenset(self.store.moderator_tokens(room.rm.id))
        room.start()

    def restore(self) -> None:
        """Reopen every unfinished match in the record (after a crash or a restart)."""
        with Session(self.engine) as session:
            rows = session.exec(
                select(MatchRow)
                .where(MatchRow.ended_at.is_(None), MatchRow.join_code.is_not(None))  # type: ignore[union-attr]
                .order_by(MatchRow.id)  # type: ignore[arg-type]  (PostgreSQL has no order unless asked)
            ).all()
        for row in rows:
            assert row.id is not None and row.join_code is not None
            if row.id in self.rooms:
                continue
            room = self._room(self.store.open(row.id), row.join_code)
            # The moderator's log of the tossup being played, as it was before the restart.
            events = self.store.events(row.id)
            started = [i for i, ev in enumerate(events) if ev.type == "tossup_started"]
            if started:
                room.tossup_log = [event_to_dict(ev) for ev in events[started[-1] :]]
            self._add(room)

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
        for room in self.rooms.values():
            await room.close()
        self.engine.dispose()
