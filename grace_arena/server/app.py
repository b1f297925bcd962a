"""The game server: FastAPI app factory, HTTP routes and the websocket endpoint.

``create_app(settings)`` builds everything from ``settings`` (database URL, packets, secret),
so tests start a real server on a free port with a temporary database. Matches that were
being played when the server stopped are reopened from the record on start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import hmac
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import fastapi
from fastapi import (
    Depends,
    FastAPI,
    Header,
    HTTPException,
    Request,
    WebSocket,
    WebSocketDisconnect,
)
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.commands import EndMatch, Join, Rule, StartTossup, ThrowOut, UndoRuling
from grace_arena.core.config import MatchConfig, ScoringRules, TeamKind, TeamSpec
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import event_to_dict
from grace_arena.core.packet import Packet, load_packet
from grace_arena.core.specs import match_config
from grace_arena.protocol import (
    MODERATOR_ONLY,
    PLAYER_ONLY,
    AnswerMsg,
    ApiError,
    BuzzMsg,
    BuzzRecord,
    ClientMessage,
    EndMatchMsg,
    ErrorMsg,
    Health,
    Hello,
    Joined,
    JoinInfo,
    JoinTeam,
    MatchCreatedReply,
    MatchSetup,
    MatchSummary,
    PacketInfo,
    PauseMsg,
    Ping,
    Pong,
    ResumeMsg,
    RuleMsg,
    SetPaceMsg,
    StartTossupMsg,
    StepMsg,
    TeamView,
    ThrowOutMsg,
    TossupInfo,
    UndoMsg,
    Welcome,
    parse_client,
)
from grace_arena.record.db import open_engine
from grace_arena.record.models import MatchRow, TossupRow
from grace_arena.record.store import MatchStore, RecordedMatch
from grace_arena.resources import shipped_folder
from grace_arena.server.frames import FrameWritingProtocol
from grace_arena.server.room import Connection, ModelTrajectory, RateLimit, Room

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
#: Error responses of the HTTP API, for its OpenAPI description.
UNAUTHORIZED: dict[int | str, dict[str, Any]] = {401: {"model": ApiError}}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ApiError}}
#: A body that is not JSON (400) or not a valid request (422).
BAD_BODY: dict[int | str, dict[str, Any]] = {400: {"model": ApiError}, 422: {"model": ApiError}}
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
            wpm=config.wpm,
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
                select(MatchRow).where(MatchRow.ended_at.is_(None), MatchRow.join_code.is_not(None))  # type: ignore[union-attr]
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


# ---------------------------------------------------------------------------------------------
# Dependencies (module level: the route annotations are resolved in this module's namespace).


def get_arena(request: Request) -> Arena:
    return request.app.state.arena


ArenaDep = Annotated[Arena, Depends(get_arena)]


def require_server_token(
    arena: ArenaDep, authorization: Annotated[str | None, Header()] = None
) -> None:
    given = authorization.removeprefix("Bearer ").strip() if authorization else None
    if not arena.tokens.check(given, arena.tokens.server()):
        raise HTTPException(status_code=401, detail="a valid server token is needed")


ServerAuth = Annotated[None, Depends(require_server_token)]


def create_app(settings: Settings) -> FastAPI:
    arena = Arena(settings)
    arena.load_packets(settings.packets)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        arena.restore()
        if settings.first_match is not None and not arena.rooms:
            await arena.open_match(settings.first_match)
        if settings.freeze_gc:
            # Modules, packets and restored rooms live as long as the server. A full collection
            # would scan them all again (about 100 ms with the event loop stopped, so one word of
            # a reveal or one race arrives that much late); frozen, they are skipped.
            gc.collect()
            gc.freeze()
        yield
        await arena.close()

    app = FastAPI(title="GRACE Arena", lifespan=lifespan)
    app.state.arena = arena
    if settings.survey_packets:
        from grace_arena.server.survey import Surveys
        from grace_arena.server.survey import router as survey_router

        app.state.surveys = Surveys(arena, settings.survey_packets)
        app.include_router(survey_router)

    @app.get("/", include_in_schema=False)
    def buzzer_page() -> FileResponse:
        return FileResponse(CLIENT_DIR / "index.html")

    @app.get("/display", include_in_schema=False)
    def display_page() -> FileResponse:
        return FileResponse(CLIENT_DIR / "display.html")

    if CLIENT_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=CLIENT_DIR), name="static")

    @app.get("/api/health")
    def health() -> Health:
        return Health(ok=True, matches=len(arena.rooms))

    @app.get("/api/packets")
    def packets(arena: ArenaDep) -> list[PacketInfo]:
        # Anyone on the network can ask: ids and categories for the set-up, never answers.
        return [
            PacketInfo(
                id=p.packet.id,
                title=p.packet.title,
                tossups=[TossupInfo(id=t.id, category=t.category) for t in p.tossups],
            )
            for p in arena.packets.values()
        ]

    @app.get("/api/models")
    def models(arena: ArenaDep) -> list[str]:

        from grace_arena.record.models import ModelStepRow

        with Session(arena.engine) as session:
            return sorted(session.exec(select(ModelStepRow.model).distinct()).all())

    @app.post("/api/matches", status_code=201, responses=UNAUTHORIZED | NOT_FOUND | BAD_BODY)
    async def create_match(setup: MatchSetup, arena: ArenaDep, _: ServerAuth) -> MatchCreatedReply:
        try:
            room = await arena.open_match(setup)
        except LookupError as exc:  # no such packet loaded
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        except ValueError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        return arena.created_reply(room)

    @app.get("/api/matches", responses=UNAUTHORIZED)
    def list_matches(arena: ArenaDep, _: ServerAuth) -> list[MatchCreatedReply]:
        return [arena.created_reply(room) for room in arena.rooms.values()]

    @app.get("/api/matches/{match_id}/summary", responses=UNAUTHORIZED | NOT_FOUND)
    def match_summary(
        match_id: Annotated[int, fastapi.Path(ge=1, le=2**63 - 1)],
        arena: ArenaDep,
        authorization: Annotated[str | None, Header()] = None,
    ) -> MatchSummary:
        """Scores and every buzz from the record (for the moderator's end-of-match screen)."""
        given = authorization.removeprefix("Bearer ").strip() if authorization else None
        if not (
            arena.tokens.check(given, arena.tokens.server()) or arena.is_moderator(match_id, given)
        ):
            raise HTTPException(status_code=401, detail="a server or moderator token is needed")
        with Session(arena.engine) as session:
            row = session.get(MatchRow, match_id)
        if row is None:
            raise HTTPException(status_code=404, detail=f"no match {match_id}")
        room = arena.rooms.get(match_id)
        scores = (room.rm if room is not None else arena.store.open(match_id)).match.scores
        buzzes = [
            BuzzRecord(
                buzz_id=b.buzz_id,
                tossup_id=b.tossup_id,
                team=b.team_id,
                player=b.player_id,
                kind="model" if b.player_kind == "model" else "human",
                word_index=b.word_index,
                clue_index=b.clue_index,
                outcome=b.outcome,
                answer=b.answer,
                suggestion=b.suggestion,
                confidence=b.model_confidence,
                ruling=b.ruling,
                points=b.points,
                thrown_out=b.thrown_out,
            )
            for b in arena.store.buzzes(match_id)
        ]
        return MatchSummary(
            match_id=match_id,
            title=row.title,
            ended=row.ended_at is not None,
            scores=dict(scores),
            buzzes=buzzes,
            record=arena.engine.url.render_as_string(hide_password=True),
        )

    @app.get("/api/join/{code}", responses=NOT_FOUND)
    def join_info(code: str, arena: ArenaDep) -> JoinInfo:
        room = arena.rooms.get(arena.by_code.get(code.upper(), -1))
        if room is None:
            raise HTTPException(status_code=404, detail=f"no match with join code {code!r}")
        return JoinInfo(
            match_id=room.rm.id, title=room.match.config.title, join_code=room.join_code
        )

    @app.get("/api/join/{code}/qr.svg", include_in_schema=False)
    def join_qr(code: str, arena: ArenaDep) -> Response:
        import io

        import segno

        if code.upper() not in arena.by_code:
            raise HTTPException(status_code=404, detail=f"no match with join code {code!r}")
        out = io.BytesIO()
        segno.make(arena.join_url(code.upper()), error="m").save(out, kind="svg", scale=8)
        return Response(out.getvalue(), media_type="image/svg+xml")

    @app.websocket("/ws")
    async def websocket(ws: WebSocket) -> None:
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

    return app


def run(app: FastAPI, *, host: str, port: int) -> None:
    """Serve ``app`` until interrupted; its ``Settings.on_ready`` is called once the socket
    listens (the lifespan's start-up runs before uvicorn binds: a URL printed there may be
    refused for a moment)."""
    import uvicorn

    arena: Arena = app.state.arena

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and arena.settings.on_ready is not None:
                arena.settings.on_ready(arena)

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **UVICORN_OPTIONS)
    _Server(config).run()


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
                room.wpm = msg.wpm
                room.broadcast_state()
            case EndMatchMsg():
                room.running = False
                await room.command(EndMatch())
            case Hello() | JoinTeam():
                _error(conn, "not_allowed", "already joined", msg.type)
    except IllegalCommand as exc:
        _error(conn, "illegal", str(exc), msg.type)


__all__ = ["Arena", "Settings", "TeamView", "Tokens", "create_app", "run"]
