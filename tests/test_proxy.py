"""One address for an event: HAProxy (``grace-arena proxy run``) in front of two server
processes sharing one record routes each phone and moderator by its room's join code to the
process that serves the room; ``kill -9`` one and the phones, reconnecting to the same
address, reach the other, which took the room over, and the proxy's map follows the move."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from backends import on_both_backends
from event_helpers import code_of, make_event
from live import Client, clients, free_port
from processes import ServerProcess, wait_for
from websockets.exceptions import ConnectionClosed, InvalidStatus

from grace_arena.record.db import make_engine
from grace_arena.record.servers import Routes, routes
from grace_arena.server.proxy import (
    ProxyLayout,
    ProxyRunner,
    backend_address,
    haproxy_config,
    room_map,
    server_name,
)

HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")

needs_haproxy = pytest.mark.skipif(
    HAPROXY is None and not os.environ.get("CI"),
    reason="HAProxy is missing (Debian's haproxy package; .ci/run installs it)",
)


def test_the_map_routes_each_room_to_its_process_and_the_config_names_every_process(
    tmp_path,
) -> None:
    table = Routes(
        servers={"h:1:a": "http://127.0.0.1:9001", "h:2:b": "http://127.0.0.1:9002/"},
        rooms={"ABCD": "h:2:b", "WXYZ": "h:1:a"},
    )
    a, b = server_name("h:1:a"), server_name("h:2:b")
    assert room_map(table) == f"ABCD to_{b}\nWXYZ to_{a}\n"
    layout = ProxyLayout("127.0.0.1", 8080, tmp_path)
    config = haproxy_config(table, layout)
    assert f"server {a} 127.0.0.1:9001 check" in config
    assert f"server {b} 127.0.0.1:9002 check" in config
    # each process's backend has the other as its backup (a process gone: the other)
    assert f"backend to_{a}\n    server {a} 127.0.0.1:9001 track any/{a}\n" in config
    assert f"    server {b} 127.0.0.1:9002 track any/{b} backup" in config
    assert f"map({tmp_path / 'rooms.map'},any)" in config
    assert backend_address("https://arena.example.org") == "arena.example.org:443"
    assert backend_address("http://[::1]:8001") == "[::1]:8001"
    with pytest.raises(ValueError, match="not an http"):
        backend_address("ftp://x")


@needs_haproxy
def test_haproxy_takes_the_written_configuration(tmp_path) -> None:
    table = Routes(servers={"h:1:a": "http://127.0.0.1:9001"}, rooms={"ABCD": "h:1:a"})
    runner = ProxyRunner(make_engine("sqlite://"), ProxyLayout("127.0.0.1", free_port(), tmp_path))
    runner.write(table)
    runner.check()  # HAProxy's own check: raises with its words if it refuses


def serve_behind(db_url: str, proxy: str, room: str) -> ServerProcess:
    return ServerProcess(db_url, free_port(), "--event", "night", "--room", room, "--proxy", proxy)


def run_proxy(db_url: str, port: int, folder) -> subprocess.Popen:
    """``grace-arena proxy run`` on ``port``, reading the record five times a second."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from grace_arena.cli import app; app()", "proxy", "run",
         "--db", db_url, "--host", "127.0.0.1", "--port", str(port), "--dir", str(folder),
         "--interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    said = []
    for line in proc.stdout:
        said.append(line)
        if line.startswith("proxy listening on"):
            return proc
    proc.wait(10)
    raise RuntimeError(f"the proxy did not start (exit {proc.returncode}):\n{''.join(said)}")


def enter(url: str, code: str, **hello) -> tuple[Client, dict]:
    """A client through ``url`` that said hello to room ``code`` and was welcomed."""
    client = Client(f"{url}?code={code}")
    client.send(type="hello", join_code=code, **hello)
    return client, client.wait("welcome")


def reenter(url: str, code: str, **hello) -> tuple[Client, dict]:
    """As a phone does after its socket closed: say hello again through the same address
    until it is welcomed (the proxy and the processes catch up with the move meanwhile)."""
    last: object = None
    deadline = time.time() + 40
    while time.time() < deadline:
        try:
            client = Client(f"{url}?code={code}")
        except (OSError, InvalidStatus, TimeoutError) as exc:  # no process behind yet
            last = exc
            time.sleep(0.3)
            continue
        try:
            client.send(type="hello", join_code=code, **hello)
            reply = client.wait(lambda m: m["type"] in ("welcome", "error"), 10)
            if reply["type"] == "welcome":
                return client, reply
            last = reply
        except (ConnectionClosed, TimeoutError) as exc:
            last = exc
        client.close()
        time.sleep(0.3)
    raise TimeoutError(f"not welcomed through {url}: {last}")


@needs_haproxy
@on_both_backends
def test_phones_follow_their_room_through_the_proxy_when_its_process_is_killed(
    db_url, tmp_path
) -> None:
    plan = make_event(db_url)
    room1, room2 = code_of(plan, "1"), code_of(plan, "2")
    port = free_port()
    proxy_url = f"http://127.0.0.1:{port}"
    ws = f"ws://127.0.0.1:{port}/ws"
    a = serve_behind(db_url, proxy_url, "1")
    b = serve_behind(db_url, proxy_url, "2")
    proxy = None
    try:
        proxy = run_proxy(db_url, port, tmp_path / "proxy")
        engine = make_engine(db_url)
        table = routes(engine, ttl=15)
        assert set(table.rooms) == {room1, room2}
        # what the room of each process is, in the proxy's map
        mapped = (tmp_path / "proxy" / "rooms.map").read_text()
        assert f"{room1} to_{server_name(table.rooms[room1])}" in mapped

        # each process prints the one address as its rooms' join URL
        assert f"players join at: {proxy_url}/?code={room1}\n" in a.lines
        mod, _ = enter(ws, room1, role="moderator", token=a.tokens[room1])
        alice, _ = enter(ws, room1, role="player")
        bo, _ = enter(ws, room2, role="player")
        with clients(mod, alice, bo):
            alice.send(type="join", team="red", name="Alice")
            joined = alice.wait("joined")
            # each phone reached the process that serves its room: 2 sockets on A, 1 on B
            wait_for(lambda: (a.health() or {}).get("connections") == 2, "A's sockets")
            wait_for(lambda: (b.health() or {}).get("connections") == 1, "B's socket")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            mod.send(type="step", unit="word")
            mod.state(lambda s: s["tossup"]["position"] >= 0)
            alice.send(type="buzz")
            result = alice.wait("buzz_result")
            assert result["outcome"] == "won"
            before = mod.state(lambda s: s["floor"] is not None)

            # a process asked directly for a room it does not serve sends the client back
            # to the one address, not to the other process's own
            other = Client(b.ws_url)
            with clients(other):
                other.send(type="hello", role="player", join_code=room1)
                refused = other.wait("error")
                assert refused["code"] == "elsewhere" and refused["url"] == proxy_url

            a.kill()
            # the sockets through the proxy to A close: the phone and the moderator reconnect
            for client in (mod, alice):
                with pytest.raises(ConnectionClosed):
                    client.wait(lambda m: False, 20)

        # the same address, the same room: now served by B, at the buzz where A stopped
        mod, _ = reenter(ws, room1, role="moderator", token=a.tokens[room1])
        alice, _ = reenter(ws, room1, role="player", token=joined["token"])
        with clients(mod, alice):
            after = mod.state()
            assert after["match"]["id"] == before["match"]["id"]
            assert after["floor"]["buzz_id"] == result["buzz_id"]
            assert alice.wait("joined")["player"] == joined["player"]
            assert (b.health() or {}).get("matches") == 2
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["match"]["phase"] == "answered")
            # B's durable commits, timed (the national bench reads them here)
            health = b.health() or {}
            assert health["synced_commits"] >= 1
            assert health["commit_p99_ms"] >= health["commit_p50_ms"] > 0
            # (in the record alone: no more than as the room waited for them)
            assert 0 < health["commit_record_p50_ms"] <= health["commit_p50_ms"]
            assert health["commit_record_p99_ms"] <= health["commit_p99_ms"]
        # and the proxy's map follows the move: room 1 is B's
        b_name = server_name(routes(engine, ttl=15).rooms[room2])
        wait_for(
            lambda: f"{room1} to_{b_name}" in (tmp_path / "proxy" / "rooms.map").read_text(),
            "the map to follow room 1 to B",
        )
    finally:
        if proxy is not None:
            proxy.terminate()  # (it stops its HAProxy)
            proxy.wait(10)
        a.kill()
        b.kill()


@needs_haproxy
def test_a_process_that_starts_or_stops_reloads_the_proxy(record_url, tmp_path) -> None:
    """The proxy starts before any process; one registers in the record: HAProxy is reloaded
    with it (and still listens); it unregisters (a clean stop): reloaded without it."""
    from grace_arena.record import servers
    from grace_arena.record.db import upgrade

    upgrade(record_url)
    engine = make_engine(record_url)
    runner = ProxyRunner(
        engine, ProxyLayout("127.0.0.1", free_port(), tmp_path), ttl=15, quiet=True
    )
    with runner:
        assert runner.table.servers == {} and runner.refresh() is None
        servers.register(engine, "h:1:x", f"http://127.0.0.1:{free_port()}", [])
        assert "reloaded" in (runner.refresh() or "")
        assert server_name("h:1:x") in runner.layout.config_path.read_text()
        servers.unregister(engine, "h:1:x")
        assert "reloaded" in (runner.refresh() or "")
        assert server_name("h:1:x") not in runner.layout.config_path.read_text()
        assert runner.reloads == 2
        assert runner.proc is not None and runner.proc.poll() is None
        wait_for(runner.listening, "HAProxy listening after its reloads")
