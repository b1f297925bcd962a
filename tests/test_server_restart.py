"""``kill -9`` of a real server process mid-match: no accepted buzz is lost; the match resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from backends import on_both_backends
from live import Client, clients, free_port

from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore
from grace_arena.server.app import token_sha256
from grace_arena.server.schedules import match_moderator_hashes

SECRET = "restart-secret"


def start_server(db_url: str, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from grace_arena.cli import app; app()",
            "serve",
            "--db",
            db_url,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--model",
            "",
            "--secret",
            SECRET,
            "--answer-time",  # (read aloud, none runs unless given)
            "10",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1):
                return proc
        except OSError as exc:
            if proc.poll() is not None:
                output = proc.stdout.read() if proc.stdout else ""
                raise RuntimeError(f"server died: {output}") from exc
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not start")


def moderator_token(proc: subprocess.Popen) -> str:
    """The moderator token the server printed, checked against the moderator's command line
    and the projector's address it prints after the QR code."""
    assert proc.stdout is not None
    token = None
    for line in proc.stdout:
        if line.startswith("moderator token:"):
            token = line.split(":", 1)[1].strip()
        elif line.startswith("moderator:"):
            assert token and line.startswith(f"moderator: GRACE_ARENA_TOKEN={token} "), line
            assert line.rstrip().endswith("--match 1") and "--token" not in line, line
            assert " moderate --server http://127.0.0.1:" in line, line
        elif line.startswith("projector:"):
            assert "/display?code=" in line, line
            assert token
            return token
    raise RuntimeError("the server printed no moderator token")


@pytest.mark.slow
@on_both_backends
def test_kill_minus_nine_loses_no_buzz_and_the_match_resumes(db_url):
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    proc = start_server(db_url, port)
    token = moderator_token(proc)
    try:
        store = MatchStore(make_engine(db_url))
        (row,) = store.matches()
        mod, red = Client(url), Client(url)
        with clients(mod, red):
            mod.send(type="hello", role="moderator", match_id=row.id, token=token)
            mod.wait("welcome")
            red.send(type="hello", role="player", join_code=row.join_code)
            red.wait("welcome")
            red.send(type="join", team="red", name="Ruth")
            joined = red.wait("joined")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 3)
            red.send(type="buzz")
            result = red.wait("buzz_result")
            assert result["outcome"] == "won"
            floor = mod.state(lambda s: s["floor"] is not None)
            before, answer_by = floor["tossup"], floor["deadline"]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)

        buzzes = store.buzzes(row.id)
        assert [(b.buzz_id, b.outcome, b.player_id) for b in buzzes] == [
            (result["buzz_id"], "won", joined["player"])
        ]

        # The record has the token's hash, never the token.
        assert match_moderator_hashes(store.engine, row.id) == [token_sha256(token)]
        proc = start_server(db_url, port)
        assert moderator_token(proc) != token  # the restarted server issued one of its own...
        assert len(store.matches()) == 1  # the unfinished match was reopened, not replaced
        mod, red = Client(url), Client(url)
        with clients(mod, red):
            red.send(type="hello", role="player", join_code=row.join_code, token=joined["token"])
            assert red.wait("joined")["player"] == joined["player"]
            # ...and the moderator's own token still works after the restart.
            mod.send(type="hello", role="moderator", match_id=row.id, token=token)
            st = mod.state()
            if time.time() > answer_by:  # the restart outlasted the answer time (a loaded
                # machine): the buzz stands in the record, ruled by the answer timer
                assert store.buzzes(row.id)[0].ruling == "incorrect"
                assert [r.by for r in store.rulings(row.id)] == ["timer"]
                return
            assert st["match"]["phase"] == "buzzed"
            assert st["floor"]["buzz_id"] == result["buzz_id"]
            # the same tossup, at the same reading position
            assert (st["tossup"]["id"], st["tossup"]["position"]) == (
                before["id"],
                before["position"],
            )
            mod.send(type="rule", ruling="correct")
            st = red.state(lambda s: s["match"]["phase"] == "answered")
            assert next(t["score"] for t in st["teams"] if t["id"] == "red") in (10, 15)
    finally:
        proc.kill()
        proc.wait(10)


def test_a_match_reopened_in_the_middle_of_a_clue_is_paused_until_the_moderator_resumes(db_url):
    """Killed while reading: the restarted server does not read on to phones that are not
    back yet, nor stand still as if it read on. Every screen says the reading is paused, at
    the word where it stopped, and the moderator resumes it."""
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    proc = start_server(db_url, port)
    token = moderator_token(proc)
    try:
        store = MatchStore(make_engine(db_url))
        (row,) = store.matches()
        mod = Client(url)
        with clients(mod):
            mod.send(type="hello", role="moderator", match_id=row.id, token=token)
            mod.wait("welcome")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 3)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        stopped_at = store.open(row.id).match.game.position

        proc = start_server(db_url, port)
        mod, red = Client(url), Client(url)
        with clients(mod, red):
            red.send(type="hello", role="player", join_code=row.join_code)
            red.wait("welcome")
            red.send(type="join", team="red", name="Ruth")
            red.wait("joined")
            st = red.state(lambda s: s["match"]["paused"])
            assert st["match"]["phase"] == "reading"
            assert st["tossup"]["position"] == stopped_at
            time.sleep(1.0)  # nothing is read meanwhile
            assert store.open(row.id).match.game.position == stopped_at
            mod.send(type="hello", role="moderator", match_id=row.id, token=token)
            mod.wait("welcome")
            mod.send(type="resume")
            st = red.state(lambda s: s["tossup"]["position"] > stopped_at)
            assert not st["match"]["paused"]
    finally:
        proc.kill()
        proc.wait(10)
