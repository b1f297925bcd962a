"""The game server: FastAPI app factory and HTTP routes (the websocket: ``ws.py``; what the
server holds: ``arena.py``).

``create_app(settings)`` builds everything from ``settings`` (database URL, packets, secret),
so tests start a real server on a free port with a temporary database. Matches that were
being played when the server stopped are reopened from the record on start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

import fastapi
from fastapi import (
    FastAPI,
    Header,
    HTTPException,
    Request,
    WebSocket,
)
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlmodel import Session, select

from grace_arena.protocol import (
    MAX_MATCH_ID,
    BuzzRecord,
    EventRoomInfo,
    Health,
    JoinInfo,
    MatchCreatedReply,
    MatchSetup,
    MatchSummary,
    PacketInfo,
    ReplayView,
    StandingsView,
    TeamView,
    TossupInfo,
)
from grace_arena.record.lease import LeaseHeld
from grace_arena.record.models import EventGameRow, MatchRow
from grace_arena.record.schedule import load_plan
from grace_arena.record.store import RecordError
from grace_arena.server.arena import (
    CLIENT_DIR,
    UVICORN_OPTIONS,
    Arena,
    Settings,
    Tokens,
    token_sha256,
)
from grace_arena.server.deps import (
    BAD_BODY,
    CONFLICT,
    NOT_FOUND,
    THROTTLED,
    UNAUTHORIZED,
    ArenaDep,
    ServerAuth,
    guess,
    wrong_guess,
)
from grace_arena.server.event_rooms import EventHost
from grace_arena.server.room import Room
from grace_arena.server.sessions import Lobby
from grace_arena.server.views import ReplayRefused
from grace_arena.server.ws import serve_websocket

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _writable(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_writable(v) for v in value]
    if isinstance(value, dict):
        return {_writable(k): _writable(v) for k, v in value.items()}
    return value


async def malformed_request(request: fastapi.Request, exc: RequestValidationError) -> Response:
    """FastAPI's 422 reply, where each field is malformed, with the input it echoes made
    writable: JSON's escapes can carry a lone surrogate (``"\\ud800"``), which UTF-8 cannot
    hold, so the reply to a name holding one failed with a 500."""
    return JSONResponse(
        status_code=422, content={"detail": _writable(jsonable_encoder(exc.errors()))}
    )


def create_app(settings: Settings) -> FastAPI:
    arena = Arena(settings)
    arena.load_packets(settings.packets)
    events = EventHost(arena)
    lobby = Lobby(arena, events)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.event is not None:
            await events.open_event(settings.event, settings.event_rooms)
        else:
            await arena.restore()
            if settings.first_match is not None and not arena.rooms:
                await arena.open_match(settings.first_match)
            await arena.register()
        if settings.freeze_gc:
            # Modules, packets and restored rooms live as long as the server. A full collection
            # would scan them all again (about 100 ms with the event loop stopped, so one word of
            # a reveal or one race arrives that much late); frozen, they are skipped.
            gc.collect()
            gc.freeze()
        yield
        await events.close()
        await arena.close()

    app = FastAPI(title="GRACE Arena", lifespan=lifespan)
    app.state.arena = arena
    app.state.events = events
    app.add_exception_handler(RequestValidationError, malformed_request)  # type: ignore[arg-type]
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
        return Health(
            ok=True, matches=len(arena.rooms), connections=sum(arena.connections_from.values())
        )

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

    @app.post(
        "/api/matches", status_code=201, responses=UNAUTHORIZED | NOT_FOUND | BAD_BODY | THROTTLED
    )
    async def create_match(setup: MatchSetup, arena: ArenaDep, _: ServerAuth) -> MatchCreatedReply:
        if settings.event is not None:
            raise HTTPException(
                status_code=404,
                detail=f"this server serves the rooms of event {settings.event!r} only",
            )
        try:
            room = await arena.open_match(setup)
        except LookupError as exc:  # no such packet loaded
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        except ValueError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        return arena.created_reply(room, await arena.moderator_token_async(room.rm.id))

    @app.get("/api/matches", responses=UNAUTHORIZED | THROTTLED)
    async def list_matches(arena: ArenaDep, _: ServerAuth) -> list[MatchCreatedReply]:
        rooms = list(arena.rooms.values())
        replies = []
        for room in rooms:
            reply = arena.created_reply(room, await arena.moderator_token_async(room.rm.id))
            row = await asyncio.to_thread(arena.store.match_row, room.rm.id)
            replies.append(reply.model_copy(update={"created_at": row and row.created_at}))
        return replies

    @app.get("/api/matches/{match_id}/summary", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED)
    async def match_summary(
        match_id: Annotated[int, fastapi.Path(ge=1, le=MAX_MATCH_ID)],
        request: Request,
        arena: ArenaDep,
        authorization: Annotated[str | None, Header()] = None,
    ) -> MatchSummary:
        """Scores and every buzz from the record (for the moderator's end-of-match screen)."""
        address = guess(request, arena)
        given = authorization.removeprefix("Bearer ").strip() if authorization else None
        if not (
            arena.tokens.check(given, arena.tokens.server())
            or await arena.is_moderator_of_record(match_id, given)
            or events.is_room_moderator(match_id, given)
        ):
            wrong_guess(address, arena)
            raise HTTPException(status_code=401, detail="a server or moderator token is needed")

        def read() -> tuple[MatchRow | None, dict[str, int], list[BuzzRecord]]:
            with Session(arena.engine) as session:
                row = session.get(MatchRow, match_id)
                if row is not None and not arena.settings.event:
                    # a server of matches of their own speaks of matches played as such: not
                    # an event's scheduled ones, nor imported ones
                    scheduled = session.exec(
                        select(EventGameRow.id).where(EventGameRow.match_id == match_id)
                    ).first()
                    if scheduled is not None or row.source is not None:
                        row = None
            if row is None:
                return None, {}, []
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
                    credit=b.credit,
                )
                for b in arena.store.buzzes(match_id)
            ]
            return row, dict(scores), buzzes

        row, scores, buzzes = await asyncio.to_thread(read)
        # a server of an event speaks of its event's matches only
        if row is None or (arena.settings.event and row.event_id not in arena.served_events):
            raise HTTPException(status_code=404, detail=f"no match {match_id}")
        return MatchSummary(
            match_id=match_id,
            title=row.title,
            ended=row.ended_at is not None,
            scores=scores,
            buzzes=buzzes,
            record=arena.engine.url.render_as_string(hide_password=True),
        )

    def served_event(name: str, address: str) -> int:
        """The id of the event served here with this name; 404 otherwise, saying nothing of
        the record's other events (a public URL must not enumerate them)."""
        event_id = events.served_event(name)
        if event_id is None:
            wrong_guess(address, arena)
            raise HTTPException(status_code=404, detail="no such event is served here")
        return event_id

    @app.get("/api/events/{name}/standings", responses=NOT_FOUND | THROTTLED)
    async def event_standings(name: str, request: Request, arena: ArenaDep) -> StandingsView:
        """The event's standings after every ruling so far, and what each room plays now
        (nothing secret: the projector shows it). Only for an event this server serves, by
        its name."""
        event_id = served_event(name, guess(request, arena))
        try:
            view = await asyncio.to_thread(events.compute_standings, event_id)
        except RecordError as exc:
            raise HTTPException(status_code=404, detail="no such event is served here") from exc
        rooms = [
            r.model_copy(
                update={
                    "join_url": arena.join_url(r.join_code),
                    "waiting": events.waiting_text(r.join_code),
                }
            )
            for r in view.rooms
        ]
        return view.model_copy(update={"rooms": rooms})

    @app.get("/api/events/{name}/rooms", responses=UNAUTHORIZED | NOT_FOUND | THROTTLED)
    async def event_rooms(
        name: str, request: Request, arena: ArenaDep, _: ServerAuth
    ) -> list[EventRoomInfo]:
        """The event's rooms with their join codes and moderator tokens (server token): what
        the moderator's terminal offers to pick from. A room no process serves now is opened
        here."""
        event_id = served_event(name, guess(request, arena))
        try:
            plan = await asyncio.to_thread(load_plan, arena.engine, event_id)
        except RecordError as exc:
            raise HTTPException(status_code=404, detail="no such event is served here") from exc
        out = []
        names = {t.id: t.name for t in plan.teams}
        for r in plan.rooms:
            with contextlib.suppress(LeaseHeld):
                await events.room_by_code(r.join_code)
            er = events.rooms.get(r.join_code)
            live = events.live(er) if er is not None else None
            game = plan.current_game(r.id)
            out.append(
                EventRoomInfo(
                    room=r.name,
                    join_code=r.join_code,
                    join_url=arena.join_url(r.join_code),
                    moderator_token=await events.moderator_token(er) if er is not None else "",
                    round=game.round if game else None,
                    match_id=live.rm.id if live is not None else game.match_id if game else None,
                    teams=[names.get(t, t) for t in game.teams] if game else [],
                    served_here=live is not None,
                )
            )
        return out

    def served(code: str) -> Room | None:
        """The live match a join code opens here: a match's own code, or an event room's."""
        code = code.strip().upper()
        room = arena.room_by_code(code)
        if room is None:
            room = events.live_in(code)
        return room

    @app.get("/replay", include_in_schema=False)
    def replay_page() -> FileResponse:
        return FileResponse(CLIENT_DIR / "replay.html")

    @app.get("/api/replay", responses=NOT_FOUND | CONFLICT | THROTTLED)
    async def replay(
        request: Request,
        arena: ArenaDep,
        match: Annotated[int, fastapi.Query(ge=1, le=MAX_MATCH_ID)],
        tossup: Annotated[int, fastapi.Query(ge=1, le=1000)],
        code: Annotated[str, fastapi.Query(min_length=1, max_length=32)],
    ) -> ReplayView:
        """One tossup of a match once it has ended, from the record (read-only): its text
        with every buzz, each model player's trajectory against its threshold, the rulings.
        ``code`` is the match's join code (what its room holds: match ids are counted, not
        secret). 409 while it is still being played (or, in an event, a room has yet to read
        it)."""
        address = guess(request, arena)
        try:
            return await asyncio.to_thread(arena.replay, match, tossup, code)
        except ReplayRefused as exc:
            if exc.wrong_code:
                wrong_guess(address, arena)  # a match and its code are guessed like codes
            raise HTTPException(status_code=exc.status, detail=str(exc)) from exc
        except RecordError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    @app.get("/api/join/{code}", responses=NOT_FOUND | THROTTLED)
    def join_info(code: str, request: Request, arena: ArenaDep) -> JoinInfo:
        address = guess(request, arena)
        room = served(code)
        if room is None:
            wrong_guess(address, arena)
            raise HTTPException(status_code=404, detail="no live match with that join code here")
        return JoinInfo(
            match_id=room.rm.id,
            title=room.match.config.title,
            join_code=room.join_code,
            join_url=arena.join_url(room.join_code),
        )

    @app.get("/api/join/{code}/qr.svg", include_in_schema=False)
    def join_qr(code: str, request: Request, arena: ArenaDep) -> Response:
        import io

        import segno

        address = guess(request, arena)
        if served(code) is None:
            wrong_guess(address, arena)
            raise HTTPException(status_code=404, detail="no live match with that join code here")
        out = io.BytesIO()
        segno.make(arena.join_url(code.upper()), error="m").save(out, kind="svg", scale=8)
        return Response(out.getvalue(), media_type="image/svg+xml")

    @app.websocket("/ws")
    async def websocket(ws: WebSocket) -> None:
        await serve_websocket(lobby, ws)

    return app


#: Open files (sockets) the server asks for, at most: the usual soft limit of 1,024 is held by
#: a thousand connections that never finish their request, and then nobody else gets in.
OPEN_FILES = 65_536


def allow_more_open_files(wanted: int = OPEN_FILES) -> int | None:
    """Raise this process's soft limit of open files towards ``wanted`` (never above the hard
    limit, never lower than it was); the limit now, or None where there is none to raise."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def web_server(app: FastAPI, *, host: str, port: int) -> Any:
    """The web server of ``app`` (a ``uvicorn.Server``): on shutdown it first tells the clients
    why their sockets close (every room retired, ``stopping``), before uvicorn closes them for
    its own reasons; once it listens, ``Settings.on_ready`` is called (the lifespan's start-up
    runs before uvicorn binds: a URL printed there may be refused for a moment)."""
    import uvicorn

    arena: Arena = app.state.arena
    allow_more_open_files()

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(app.state.events.close(), 5.0)
            with contextlib.suppress(Exception):  # it keeps to its limit by itself
                await asyncio.wait_for(arena.stop_serving(), arena.settings.stop_timeout + 1.0)
            await super().shutdown(sockets)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and arena.settings.on_ready is not None:
                ready = arena.settings.on_ready(arena, app.state.events)
                if inspect.isawaitable(ready):
                    await ready

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **UVICORN_OPTIONS)
    return _Server(config)


def run(app: FastAPI, *, host: str, port: int) -> None:
    """Serve ``app`` until interrupted (:func:`web_server`)."""
    web_server(app, host=host, port=port).run()


__all__ = [
    "UVICORN_OPTIONS",
    "Arena",
    "Settings",
    "TeamView",
    "Tokens",
    "create_app",
    "run",
    "token_sha256",
    "web_server",
]
