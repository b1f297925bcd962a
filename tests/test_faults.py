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
from processes import ServerProcess, hold_lock, release, wait_for

from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore

pytestmark = pytest.mark.slow

#: How long to wait for what a fault is bound to bring (a limit for a loaded machine, not a
#: measure: what the tests assert is what comes, in what order).
WAIT = 60.0


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

            # Another process holds the write lock past the busy timeout (10 s): until the
            # room says the record refused its commit.
            locker = hold_lock(path)
            held = mod.state(lambda s: s["record"] is not None, timeout=WAIT)
            word = held["tossup"]["position"]
            assert "waiting for the record" in held["record"]["message"]
            told = mod.state(
                lambda s: s["record"] and "database is locked" in s["record"]["message"],
                timeout=WAIT,
            )
            assert "retrying" in told["record"]["message"]
            assert told["tossup"]["position"] == word  # nothing shown that is not stored
            # the displays and the phones are told too
            assert red.state(lambda s: s["record"] is not None)["record"]["message"]
            release(locker)
            # the reading goes on by itself (nobody sends anything), from the word it held
            back = mod.state(lambda s: s["record"] is None, timeout=WAIT)
            assert back["tossup"]["position"] in (word, word + 1)
            moving = mod.state(lambda s: s["tossup"]["position"] >= word + 2, timeout=WAIT)
            assert moving["record"] is None

            # A shorter stall with a buzz in it: held, not acknowledged until it is stored,
            # then won at the word its player saw.
            locker = hold_lock(path)
            held = mod.state(lambda s: s["record"] is not None, timeout=WAIT)
            word = held["tossup"]["position"]
            red.send(type="buzz")
            with pytest.raises(TimeoutError):
                red.wait("buzz_result", timeout=1.0)  # not while the record is locked
            release(locker)
            result = red.wait("buzz_result", timeout=WAIT)
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
                held = mod.state(lambda s: s["record"] is not None, timeout=WAIT)
                word = held["tossup"]["position"]
                assert "retrying" in held["record"]["message"]
                # the pipeline tries again meanwhile (0.05 s to 0.5 s apart): nothing moves
                during = _states_while(mod, 3.0)
                assert all(s["tossup"]["position"] == word for s in during)
                # a moderator's command meanwhile is held, not refused, not a dropped socket
                mod.send(type="set_pace", wpm=240)
                subprocess.run(["pg_ctlcluster", version, cluster, "start"], check=True)
                # back by itself: nobody sends anything but the command held meanwhile
                mod.state(lambda s: s["record"] is None, timeout=WAIT)
                paced = mod.state(lambda s: s["reading"]["wpm"] == 240, timeout=WAIT)
                moving = mod.state(lambda s: s["tossup"]["position"] >= word + 2, timeout=WAIT)
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
    the floor for 3 s of a 10 s answer time when the server was killed has the time that was
    left then (about 7 s) when it is served again 12 s later, not a ruling by the timer. The
    times compared are the record's, whatever the machine's load made of the 3 s."""
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
            assert 0 < floor["deadline"] - floor["server_time"] <= 10
            time.sleep(3.0)
            server.kill()
        time.sleep(12.0)
        server = ServerProcess(db_url, port, "--model", "", "--answer-time", "10")
        mod, red = Client(server.ws_url), Client(server.ws_url)
        with clients(mod, red):
            mod.send(type="hello", role="moderator", join_code=code, token=token)
            mod.wait("welcome")
            state = mod.state(lambda s: s["floor"] is not None and s["deadline"])
            assert state["match"]["phase"] == "buzzed"
            red.send(type="hello", role="player", join_code=code, token=joined["red"]["token"])
            red.wait("welcome")
            red.send(type="answer", text="an answer")
            mod.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "answer_given")
        events = MatchStore(make_engine(db_url)).events(state["match"]["id"])
        assert not [e for e in events if e.type == "ruled" and e.by == "timer"]
        resumed = [e for e in events if e.type == "clock_resumed"]
        assert len(resumed) == 1 and resumed[0].reason == "restart"
        # what was left when the match was last served (the server renews its lease every
        # second, 3 s into the answer time): less than the 10 s, more than nothing...
        (buzz,) = [e for e in events if e.type == "buzz_accepted"]
        left = buzz.deadline - resumed[0].down_since
        assert 0 < left < 10, left
        # ...is what the restarted server gives back, and shows
        assert resumed[0].deadline - resumed[0].t == pytest.approx(left)
        assert state["deadline"] == pytest.approx(resumed[0].deadline)
        assert 0 < state["deadline"] - state["server_time"] <= left
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
