"""The server's HTTP API, as blocking calls (the app runs them in workers).

Plain ``urllib``: the API is a few small JSON calls, not worth another dependency.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from grace_arena.protocol import (
    EventRoomInfo,
    JoinInfo,
    MatchCreatedReply,
    MatchSetup,
    MatchSummary,
    StandingsView,
)

TIMEOUT = 60.0  # creating a match may precompute the offline model player first


class ApiError(Exception):
    """An HTTP call failed; the message says why, in words fit for a notification."""


def _call(url: str, *, token: str | None = None, body: bytes | None = None) -> Any:
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if body is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        try:
            detail = json.load(exc).get("detail", exc.reason)
        except (ValueError, AttributeError):
            detail = exc.reason
        if exc.code == 401:
            raise ApiError(f"the server refused the token ({detail})") from exc
        if exc.code == 404 and isinstance(detail, str):
            raise ApiError(detail) from exc  # (what is not there, in words)
        raise ApiError(f"HTTP {exc.code}: {detail}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ApiError(f"cannot reach {url}: {reason}") from exc


def packets(base: str) -> list[dict[str, Any]]:
    return _call(f"{base}/api/packets")


def models(base: str) -> list[str]:
    return _call(f"{base}/api/models")


def open_matches(base: str, server_token: str) -> list[MatchCreatedReply]:
    listed = _call(f"{base}/api/matches", token=server_token)
    return [MatchCreatedReply.model_validate(m) for m in listed]


def create_match(base: str, server_token: str, setup: MatchSetup) -> MatchCreatedReply:
    # only what the set-up says: a rule it does not give is its format's
    body = setup.model_dump_json(exclude_unset=True).encode()
    reply = _call(f"{base}/api/matches", token=server_token, body=body)
    return MatchCreatedReply.model_validate(reply)


def summary(base: str, token: str, match_id: int) -> MatchSummary:
    return MatchSummary.model_validate(_call(f"{base}/api/matches/{match_id}/summary", token=token))


def join_info(base: str, code: str) -> JoinInfo:
    """The match a join code opens now, with the join URL players use."""
    return JoinInfo.model_validate(_call(f"{base}/api/join/{urllib.parse.quote(code)}"))


def event_rooms(base: str, server_token: str, event: str) -> list[EventRoomInfo]:
    """The event's rooms, each with its moderator token (the server token is needed)."""
    listed = _call(f"{base}/api/events/{urllib.parse.quote(event)}/rooms", token=server_token)
    return [EventRoomInfo.model_validate(r) for r in listed]


def standings(base: str, event: str) -> StandingsView:
    return StandingsView.model_validate(
        _call(f"{base}/api/events/{urllib.parse.quote(event)}/standings")
    )


def ws_url(base: str, code: str | None = None) -> str:
    """``http://host:port`` -> ``ws://host:port/ws`` (``https`` -> ``wss``); with a room's
    join code, ``/ws?code=CODE``: a proxy in front of several server processes routes the
    socket by it to the process that serves the room."""
    scheme, _, rest = base.partition("://")
    query = f"?code={urllib.parse.quote(code.strip().upper())}" if code else ""
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}/ws{query}"
