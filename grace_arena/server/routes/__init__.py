"""The HTTP routes and the websocket endpoint, one ``APIRouter`` per concern: the pages, the
matches of this server, an event's standings and rooms, the replay of a tossup, the way a
phone finds and joins a live match, and the TD's protests. Each route is thin: it gets what
it needs through the dependencies of :mod:`grace_arena.server.deps` (what ``create_app``
keeps in ``app.state``) and turns a refusal into an HTTP error.
"""

from __future__ import annotations

from fastapi import APIRouter

from grace_arena.server.routes import (
    events,
    join,
    matches,
    pages,
    protests,
    replay,
    roster,
    scoresheet,
    voice,
)

__all__ = ["ROUTERS"]

#: In the order ``create_app`` includes them (the order of the paths in the OpenAPI description).
ROUTERS: tuple[APIRouter, ...] = (
    pages.router,
    matches.router,
    events.router,
    replay.router,
    join.router,
    scoresheet.router,
    protests.router,
    roster.router,
    voice.router,
)
