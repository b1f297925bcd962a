"""A record that blinks, and a server that crashes, under a real server process.

SQLite locked by another process for longer than its busy timeout; PostgreSQL stopped and
started again: the room holds at its word and says so, goes on by itself once the record is
back, loses no acknowledged buzz, and the record replays to the state the room shows. A server
killed while a player holds the floor and started again 12 s later: the player still has the
answer time that was left.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from live import Client, clients, free_port
from processes import ServerProcess, hold_lock, wait_for

from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore

pytestmark = pytest.mark.slow


def _enter(server: ServerProcess, code: str) -> tuple[Client, Client, Client, dict]:
    """The match's moderator and two players, in; the red player's ``joined``."""
    mod, red, blue = Client(server.ws_url), Client(server.ws_url), Client(server.ws_url)
    mod.send(type="hello", role="moderator", join_code=code, token=server.tokens[code])
    mod.wait("welcome")
    mod.state()
    joined = {}
    for client, team, name in ((red, "red", "Ruth"), (blue, "blue", "Bob")):
        client.send(type="hello", role="player", join_code=code)
        client.wait("welcome")
        client.send(type="join", team=team, name=name)
        joined[team] = client.wait("joined")
    return mod, red, blue, joined


def _states_while(client: Client, seconds: float) -> list[dict]:
    """The states a client gets for ``seconds``."""
    states = []
    deadline = time.time() + seconds
    while (left := deadline - time.time()) > 0:
        try:
            message = client.wait(lambda m: True, timeout=left)
        except TimeoutError:
            break
        if message["type"] == "state":
            states.append(message)
    return states


def _replayed(db_url: str, match_id: int):
    engine = make_engine(db_url)
    try:
        return MatchStore(engine).open(match_id).match
    finally:
        engine.dispose()


def _same_as_the_record(state: dict, db_url: str) -> None:
    """The room's last state is the record's, replayed."""
    match = _replayed(db_url, state["match"]["id"])
    game = match.game
    assert state["match"]["phase"] == game.phase.value
    assert state["tossup"]["position"] == game.position
    assert {t["id"]: t["score"] for t in state["teams"]} == game.scores
    floor = state["floor"]
    assert (floor["buzz_id"] if floor else None) == (game.floor.buzz_id if game.floor else None)


def test_a_record_locked_past_its_busy_timeout_holds_the_room_and_it_goes_on(tmp_path):
    path = tmp_path / "record.db"
    db_url = f"sqlite:///{path}"
    with ServerProcess(db_url, free_port(), "--model", "") as server:
        code = next(iter(server.tokens))
        mod, red, blue, _ = _enter(server, code)
        with clients(mod, red, blue):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 3)

            # Another process holds the write lock for 12 s (the busy timeout is 10 s).
            locker = hold_lock(path, 12.0)
            locked_at = time.time()
            held = mod.state(lambda s: s["record"] is not None, timeout=5)
            word = held["tossup"]["position"]
            assert "waiting for the record" in held["record"]["message"]
            told = mod.state(
                lambda s: s["record"] and "database is locked" in s["record"]["message"],
                timeout=15,
            )
            assert "retrying" in told["record"]["message"]
            assert told["tossup"]["position"] == word  # nothing shown that is not stored
            # the displays and the phones are told too
            assert red.state(lambda s: s["record"] is not None)["record"]["message"]
            locker.wait(30)
            released = time.time()
            assert released - locked_at >= 11
            # the reading goes on by itself within a second or so, from the word it held
            back = mod.state(lambda s: s["record"] is None, timeout=5)
            assert time.time() - released < 2.0
            moving = mod.state(lambda s: s["tossup"]["position"] >= word + 2, timeout=5)
            assert moving["record"] is None

            # A shorter stall with a buzz in it: held, not acknowledged until it is stored,
            # then won at the word its player saw.
            locker = hold_lock(path, 3.0)
            held = mod.state(lambda s: s["record"] is not None, timeout=5)
            word = held["tossup"]["position"]
            red.send(type="buzz")
            with pytest.raises(TimeoutError):
                red.wait("buzz_result", timeout=1.0)  # not before it is stored
            locker.wait(30)
            result = red.wait("buzz_result", timeout=5)
            assert result["outcome"] == "won" and result["word_index"] == word
            last = mod.state(lambda s: s["floor"] is not None and s["record"] is None)
            assert back is not None
        _same_as_the_record(last, db_url)


def _postgres_cluster() -> tuple[str, str]:
    """The version and name of the PostgreSQL cluster the tests use, which this test stops
    and starts again (as root, with Debian's pg_ctlcluster)."""
    missing = None
    if not shutil.which("pg_ctlcluster") or not shutil.which("pg_lsclusters"):
        missing = "Debian's pg_ctlcluster is not installed"
    elif os.geteuid() != 0:
        missing = "stopping the PostgreSQL server needs root"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} (CI runs this test as root: .ci/run)")
        pytest.skip(missing)
    out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True)
    version, name = out.stdout.split()[:2]
    return version, name


# Every other test's PostgreSQL database goes down with the server: this one runs by itself.
@pytest.mark.alone
def test_postgresql_stopped_and_started_again_holds_the_room_and_it_goes_on(
    postgres_url, postgres_server
):
    version, cluster = _postgres_cluster()
    with ServerProcess(postgres_url, free_port(), "--model", "") as server:
        code = next(iter(server.tokens))
        mod, red, blue, _ = _enter(server, code)
        try:
            with clients(mod, red, blue):
                mod.send(type="start_tossup")
                mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 3)
                blue.send(type="buzz")
                acknowledged = blue.wait("buzz_result")
                assert acknowledged["outcome"] == "won"
                mod.send(type="rule", ruling="incorrect")  # blue out: the reading goes on
                mod.state(lambda s: s["floor"] is None and "blue" in [
                    t["id"] for t in s["teams"] if t["locked_out"]
                ])  # fmt: skip
                subprocess.run(["pg_ctlcluster", version, cluster, "stop"], check=True)
                stopped = time.time()
                held = mod.state(lambda s: s["record"] is not None, timeout=10)
                word = held["tossup"]["position"]
                assert "retrying" in held["record"]["message"]
                during = _states_while(mod, max(0.0, 5.0 - (time.time() - stopped)))
                assert all(s["tossup"]["position"] == word for s in during)
                # a moderator's command meanwhile is held, not refused, not a dropped socket
                mod.send(type="set_pace", wpm=240)
                subprocess.run(["pg_ctlcluster", version, cluster, "start"], check=True)
                started = time.time()
                mod.state(lambda s: s["record"] is None, timeout=15)
                assert time.time() - started < 3.0
                paced = mod.state(lambda s: s["reading"]["wpm"] == 240, timeout=5)
                moving = mod.state(lambda s: s["tossup"]["position"] >= word + 2, timeout=10)
                assert paced and moving
                red.send(type="buzz")
                assert red.wait("buzz_result")["outcome"] == "won"
                last = mod.state(lambda s: s["floor"] is not None)
        finally:
            subprocess.run(["pg_ctlcluster", version, cluster, "start"], check=False)
            postgres_server.dispose()  # its pooled connections died with the server
    _same_as_the_record(last, postgres_url)
    buzzes = MatchStore(make_engine(postgres_url)).buzzes(last["match"]["id"])
    assert acknowledged["buzz_id"] in [b.buzz_id for b in buzzes]


def test_a_crash_and_a_restart_12_s_later_leave_the_player_the_answer_time_left(tmp_path):
    """The answer clock stands still while no process serves the match: a player who held
    the floor for 3 s of a 10 s answer time when the server was killed has about 7 s left
    when it is served again 12 s later, not a ruling by the timer."""
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    port = free_port()
    server = ServerProcess(db_url, port, "--model", "", "--answer-time", "10")
    code = next(iter(server.tokens))
    token = server.tokens[code]
    try:
        mod, red, blue, joined = _enter(server, code)
        with clients(mod, red, blue):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["tossup"] and s["tossup"]["position"] >= 3)
            red.send(type="buzz")
            assert red.wait("buzz_result")["outcome"] == "won"
            floor = mod.state(lambda s: s["floor"] is not None)
            left = floor["deadline"] - floor["server_time"]
            assert 9 < left <= 10
            time.sleep(3.0)
            server.kill()
        killed = time.time()
        time.sleep(12.0)
        server = ServerProcess(db_url, port, "--model", "", "--answer-time", "10")
        assert time.time() - killed >= 12
        mod, red = Client(server.ws_url), Client(server.ws_url)
        with clients(mod, red):
            mod.send(type="hello", role="moderator", join_code=code, token=token)
            mod.wait("welcome")
            state = mod.state(lambda s: s["floor"] is not None and s["deadline"])
            remaining = state["deadline"] - state["server_time"]
            # what was left at the crash (about 7 s; the server renews every second, so at
            # most a second more), not the 10 s again, nor nothing
            assert 5.5 < remaining <= 8.2, remaining
            assert state["match"]["phase"] == "buzzed"
            red.send(type="hello", role="player", join_code=code, token=joined["red"]["token"])
            red.wait("welcome")
            red.send(type="answer", text="an answer")
            mod.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "answer_given")
        events = MatchStore(make_engine(db_url)).events(state["match"]["id"])
        assert not [e for e in events if e.type == "ruled" and e.by == "timer"]
        resumed = [e for e in events if e.type == "clock_resumed"]
        assert len(resumed) == 1 and resumed[0].reason == "restart"
    finally:
        server.kill()


def test_no_ping_reaches_a_phone_of_a_room_closed_with_the_server(tmp_path):
    """A server stopping cleanly tells each phone and closes its socket (no zombie
    connection that keeps getting pings, or nothing)."""
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    server = ServerProcess(db_url, free_port(), "--model", "")
    code = next(iter(server.tokens))
    try:
        mod, red, blue, _ = _enter(server, code)
        with clients(mod, red, blue):
            wait_for(lambda: (server.health() or {}).get("connections") == 3, "3 sockets")
            server.stop()
            for client in (mod, red, blue):
                error = client.wait("error", timeout=10)
                assert error["code"] == "stopping"
                wait_for(lambda c=client: c.ws.close_code is not None or _closed(c), "a close")
    finally:
        server.kill()


def _closed(client: Client) -> bool:
    from websockets.exceptions import ConnectionClosed

    try:
        client.ws.recv(timeout=0.1)
    except TimeoutError:
        return False
    except ConnectionClosed:
        return True
    return False
