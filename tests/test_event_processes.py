"""Two server processes share one record, each serving rooms of one event; ``kill -9`` one and
its matches reopen on the other: no accepted buzz lost, the same tossup at the same word."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from backends import on_both_backends
from event_helpers import code_of, make_event
from live import Client, clients, free_port

from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore

SECRET = "shared-secret"  # processes of one event share it: player tokens work on each


def serve_rooms(db_url: str, port: int, *rooms: str) -> tuple[subprocess.Popen, dict[str, str]]:
    """``grace-arena serve --event night --room ...``; returns the process and the moderator
    token it printed for each join code."""
    args = [arg for room in rooms for arg in ("--room", room)]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from grace_arena.cli import app; app()", "serve",
         "--db", db_url, "--host", "127.0.0.1", "--port", str(port), "--secret", SECRET,
         "--event", "night", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.stdout is not None
    tokens: dict[str, str] = {}
    code = None
    deadline = time.time() + 60
    for line in proc.stdout:
        if time.time() > deadline:
            break
        found = re.match(r"match \d+ — join code (\w+)", line)
        if found:
            code = found.group(1)
        elif line.startswith("moderator token:") and code:
            tokens[code] = line.split(":", 1)[1].strip()
        elif line.startswith("listening on"):
            return proc, tokens
    proc.kill()
    raise RuntimeError(f"the server did not start: {proc.stdout.read()}")


def health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1):
            return True
    except OSError:
        return False


@on_both_backends
@pytest.mark.slow
def test_a_killed_process_rooms_reopen_on_the_other_with_nothing_lost(db_url) -> None:
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    port_a, port_b = free_port(), free_port()
    a, tokens_a = serve_rooms(db_url, port_a, "1")
    b, tokens_b = serve_rooms(db_url, port_b, "2")
    try:
        assert set(tokens_a) == {room1} and set(tokens_b) == {room2}
        url_a, url_b = f"ws://127.0.0.1:{port_a}/ws", f"ws://127.0.0.1:{port_b}/ws"
        mod, alice = Client(url_a), Client(url_a)
        with clients(mod, alice):
            mod.send(type="hello", role="moderator", join_code=room1, token=tokens_a[room1])
            mod.wait("welcome")
            alice.send(type="hello", role="player", join_code=room1)
            alice.wait("welcome")
            alice.send(type="join", team="red", name="Alice")
            joined = alice.wait("joined")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            for _ in range(3):
                mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 2)
            alice.drain(0.05)
            alice.send(type="buzz")
            result = alice.wait("buzz_result")
            assert result["outcome"] == "won"
            before = mod.state(lambda s: s["floor"] is not None)
        match_id = before["match"]["id"]

        # while A lives, B says who serves room 1 rather than open it
        other = Client(url_b)
        with clients(other):
            other.send(type="hello", role="player", join_code=room1)
            refused = other.wait("error")
            assert refused["code"] == "elsewhere"
            assert f"127.0.0.1:{port_a}" in refused["message"]

        os.kill(a.pid, signal.SIGKILL)
        a.wait(10)
        store = MatchStore(make_engine(db_url))
        assert [(b.buzz_id, b.outcome) for b in store.buzzes(match_id)] == [
            (result["buzz_id"], "won")
        ]

        # B takes room 1 over when asked: the same match, buzz and word; the same people
        mod, alice = Client(url_b), Client(url_b)
        with clients(mod, alice):
            mod.send(type="hello", role="moderator", join_code=room1, token=tokens_a[room1])
            mod.wait("welcome")
            after = mod.state()
            assert after["match"]["id"] == match_id
            assert after["match"]["phase"] == "buzzed"
            assert after["floor"]["buzz_id"] == result["buzz_id"]
            assert after["tossup"]["position"] == before["tossup"]["position"]
            alice.send(type="hello", role="player", join_code=room1, token=joined["token"])
            alice.wait("welcome")
            assert alice.wait("joined")["player"] == joined["player"]
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["match"]["phase"] == "answered")
        assert store.buzzes(match_id)[0].ruling == "correct"
        assert health(port_b)
    finally:
        for proc in (a, b):
            proc.kill()
            proc.wait(10)
