"""The game server: FastAPI app factory (the routes: ``routes/``; the websocket: ``ws.py``; what
the server holds: ``arena.py``).

``create_app(settings)`` builds everything from ``settings`` (database URL, packets, secret),
so tests start a real server on a free port with a temporary database. Matches that were
being played when the server stopped are reopened from the record on start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import re
from collections.abc import AsyncIterator
from typing import Any

import fastapi
from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from grace_arena.protocol import TeamView
from grace_arena.server import collector
from grace_arena.server.arena import CLIENT_DIR, UVICORN_OPTIONS, Arena, Settings
from grace_arena.server.http_limits import HttpLimits, uvicorn_options
from grace_arena.server.rooms import Rooms
from grace_arena.server.routes import ROUTERS
from grace_arena.server.sessions import Lobby
from grace_arena.server.tokens import Tokens, token_sha256

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _writable(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD, and every
    number JSON cannot hold (NaN, Infinity: Python's JSON reader takes them) by its name."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list):
        return [_writable(v) for v in value]
    if isinstance(value, dict):
        return {_writable(k): _writable(v) for k, v in value.items()}
    return value


async def malformed_request(request: fastapi.Request, exc: RequestValidationError) -> Response:
    """FastAPI's 422 reply, where each field is malformed, with the input it echoes made
    writable: JSON's escapes can carry a lone surrogate (``"\\ud800"``), which UTF-8 cannot
    hold, and a body may hold ``NaN`` or ``Infinity``, which a reply may not, so the reply to
    either failed with a 500. (Every float of the protocol's models refuses them:
    ``allow_inf_nan=False``.)"""
    return JSONResponse(
        status_code=422, content={"detail": _writable(jsonable_encoder(exc.errors()))}
    )


def create_app(settings: Settings) -> FastAPI:
    """The server of ``settings``: what it holds (the arena, the rooms, the lobby) kept in
    ``app.state`` for the routes' dependencies, the routers of :mod:`grace_arena.server.routes`
    (and the survey's when it hosts one), and a lifespan that opens the matches or the event's
    rooms on start-up and closes them on shutdown."""
    arena = Arena(settings)
    arena.load_packets(settings.packets)
    rooms = Rooms(arena)
    lobby = Lobby(rooms)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.event is not None:
            await rooms.open_event(settings.event, settings.event_rooms)
        else:
            await rooms.restore()
            if settings.first_match is not None and not arena.rooms:
                await rooms.open_match(settings.first_match)
            await arena.register(rooms.served)
        rooms.listen()  # (the record's notices of other processes' changes, where it has them)
        if settings.freeze_gc:
            # Modules, packets and restored rooms live as long as the server: frozen, a full
            # collection skips them, and full collections come seldom (grace_arena.server.
            # collector: each stopped every room of the process for 70 to 270 ms)
            collector.settle()
        yield
        await rooms.close()
        await arena.close()

    app = FastAPI(title="GRACE Arena", lifespan=lifespan)
    app.state.arena = arena
    app.state.rooms = rooms
    app.state.lobby = lobby
    app.add_exception_handler(RequestValidationError, malformed_request)  # type: ignore[arg-type]
    if settings.survey_packets:
        from grace_arena.server.survey import Surveys
        from grace_arena.server.survey import router as survey_router

        app.state.surveys = Surveys(arena, settings.survey_packets)
        app.include_router(survey_router)
    for router in ROUTERS:
        app.include_router(router)
    if CLIENT_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=CLIENT_DIR), name="static")
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


def web_server(app: FastAPI, *, host: str, port: int, limits: HttpLimits | None = None) -> Any:
    """The web server of ``app`` (a ``uvicorn.Server``): on shutdown it first tells the clients
    why their sockets close (every room retired, ``stopping``), before uvicorn closes them for
    its own reasons; once it listens, ``Settings.on_ready`` is called (the lifespan's start-up
    runs before uvicorn binds: a URL printed there may be refused for a moment). Its HTTP
    connections are held to ``limits`` (:mod:`grace_arena.server.http_limits`: time to send a
    request, connections per address, the proxies trusted; default: its defaults, no proxy);
    ``server.config.http`` counts what they refused."""
    import uvicorn

    arena: Arena = app.state.arena
    allow_more_open_files()

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(app.state.rooms.close(), 5.0)
            with contextlib.suppress(Exception):  # it keeps to its limit by itself
                await asyncio.wait_for(arena.stop_serving(), arena.settings.stop_timeout + 1.0)
            await super().shutdown(sockets)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and arena.settings.on_ready is not None:
                ready = arena.settings.on_ready(arena, app.state.rooms)
                if inspect.isawaitable(ready):
                    await ready

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        **UVICORN_OPTIONS,
        **uvicorn_options(limits),
    )
    return _Server(config)


def run(app: FastAPI, *, host: str, port: int, limits: HttpLimits | None = None) -> None:
    """Serve ``app`` until interrupted (:func:`web_server`)."""
    web_server(app, host=host, port=port, limits=limits).run()


__all__ = [
    "UVICORN_OPTIONS",
    "Arena",
    "HttpLimits",
    "Settings",
    "TeamView",
    "Tokens",
    "create_app",
    "run",
    "token_sha256",
    "web_server",
]
