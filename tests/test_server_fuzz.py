"""Thousands of generated messages against a live server, as a player, a display and a
moderator: the server logs no unhandled exception, keeps every connection that broke no limit,
and still serves a well-behaved player afterwards."""

from __future__ import annotations

import json
import logging
import time
import urllib.request

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live import Client, LiveServer, clients, moderator, player, two_teams
from websockets.exceptions import ConnectionClosed

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings, Tokens

SECRET = "fuzz-secret"
TYPES = [
    "hello", "join", "buzz", "answer", "ping", "pong", "start_tossup", "rule", "undo",
    "throw_out", "pause", "resume", "step", "set_pace", "end_match",
]  # fmt: skip
FIELDS = [
    "role", "join_code", "match_id", "token", "team", "name", "client_time", "text", "sent",
    "time", "tossup_id", "ruling", "reason", "unit", "wpm", "take_over", "watch", "version",
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["1e400", "NaN", "-Infinity", "correct", "player", "moderator", "word"])
    | st.text(max_size=40)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
#: A message: JSON objects shaped like the protocol's (known types, known and unknown fields,
#: values of any type), any JSON at all, JSON with non-finite numbers or deep nesting, text
#: that is not JSON, and binary frames.
messages = st.one_of(
    st.builds(
        lambda kind, fields: json.dumps({"type": kind, **fields}),
        st.sampled_from(TYPES) | st.text(max_size=12),
        st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), values, max_size=5),
    ),
    values.map(json.dumps),
    st.sampled_from(TYPES).map(lambda t: f'{{"type": "{t}", "client_time": 1e400, "sent": NaN}}'),
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),
    st.text(max_size=200),
    st.binary(max_size=200),
)


class Errors(logging.Handler):
    """Keeps every record at ERROR or above (an unhandled exception is logged there)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    errors = Errors()
    loggers = [logging.getLogger(n) for n in ("", "uvicorn", "uvicorn.error", "asyncio")]
    for logger in loggers:
        logger.addHandler(errors)
    folder = tmp_path_factory.mktemp("fuzz")
    live = Settings(
        db_url=f"sqlite:///{folder / 'record.db'}",
        packets=[SAMPLE_PACKET_PATH],
        secret=SECRET,
        first_match=two_teams(),
        rate_per_second=10_000.0,
        rate_burst=10_000,
        hello_timeout=2.0,
    )
    try:
        with LiveServer(live) as server:
            yield server, errors
    finally:
        for logger in loggers:
            logger.removeHandler(errors)


def _send_all(client: Client, batch: list[str | bytes]) -> None:
    for message in batch:
        client.ws.send(message)
    # the connection is kept: a ping still gets its pong after everything before it
    client.send(type="ping", sent=-1.0)
    client.wait(lambda m: m["type"] == "pong" and m["sent"] == -1.0, timeout=20)


def _new_match(server: LiveServer) -> int:
    request = urllib.request.Request(
        f"{server.http_url}/api/matches",
        data=two_teams().model_dump_json().encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {Tokens(SECRET).server()}",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["match_id"]


def _open_match(server: LiveServer) -> int:
    """A match still open (a fuzzed moderator may have ended the last one)."""
    for match_id, room in server.arena.rooms.items():
        if room.match.game.phase.value != "ended":
            return match_id
    return _new_match(server)


@pytest.mark.slow
@pytest.mark.parametrize("role", ["player", "display", "moderator", "stranger"])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(messages, min_size=10, max_size=30))
def test_generated_messages_get_replies_not_tracebacks(fuzzed, role, batch):
    server, errors = fuzzed
    match_id = _open_match(server)
    room = server.room(match_id)
    if role == "player":
        client = player(server, "red", "Fuzz", match_id)
    elif role == "moderator":
        client = moderator(server, match_id)
    else:
        client = Client(server.ws_url)
        if role == "display":
            client.send(type="hello", role="display", join_code=room.join_code)
            client.wait("welcome")
    with clients(client):
        try:
            _send_all(client, batch)
        except ConnectionClosed as exc:  # only for a limit the protocol names, never a crash
            assert exc.rcvd is not None and exc.rcvd.code in (1008, 1009, 1013), exc
        if client.received:
            assert not any(m.get("code") == "server_error" for m in client.received)
    assert [r.getMessage() for r in errors.records] == []


@pytest.mark.slow
def test_after_the_fuzz_a_well_behaved_player_is_served(fuzzed):
    server, errors = fuzzed
    match_id = _new_match(server)
    mod = moderator(server, match_id)
    red = player(server, "red", "Ruth", match_id)
    with clients(mod, red):
        mod.send(type="start_tossup")
        mod.state(lambda s: s["match"]["phase"] == "reading")
        time.sleep(0.2)
        red.send(type="buzz")
        assert red.wait("buzz_result")["outcome"] == "won"
    assert [r.getMessage() for r in errors.records] == []
