"""Benchmark: one address holding requests that never finish, against a real server.

Starts the server (``web_server``, as ``serve`` runs it, on a temporary record and a free
loopback port), opens ``--sockets`` connections from 127.0.0.2, each sending part of a request
head and never the rest, then prints: how many the server refused at once, how many it still
holds after ``--wait`` seconds, a health check's status and time from 127.0.0.1 meanwhile,
and the server's counts. Loopback only; every socket is closed at the end.

    .venv/bin/python bench/bench_unfinished_requests.py [--sockets 300] [--wait 15]
        [--forged 40] [--cap N]

``--forged``: that many wrong join codes, each with a different ``X-Forwarded-For``: how many
the guess throttle refused (none: the header was believed).

Not a timed test: it prints numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import select
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from live import free_port, two_teams

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings, create_app, web_server


def status(url: str, headers: dict[str, str] | None = None) -> tuple[int | str, float]:
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers or {}), timeout=10
        ) as r:
            code: int | str = r.status
    except urllib.error.HTTPError as exc:
        code = exc.code
    except OSError as exc:
        code = type(exc).__name__
    return code, time.perf_counter() - started


def still_open(sockets: list[socket.socket]) -> int:
    """How many of ``sockets`` the server has not closed (nothing to read, no EOF)."""
    readable, _, _ = select.select(sockets, [], [], 0)
    closed = 0
    for sock in readable:
        try:
            sock.setblocking(False)
            data = sock.recv(65536)
            closed += (
                data == b"" or data.startswith(b"HTTP/1.1 4") or data.startswith(b"HTTP/1.1 5")
            )
        except OSError:
            closed += 1
    return len(sockets) - closed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=300)
    parser.add_argument("--wait", type=float, default=15.0)
    parser.add_argument("--forged", type=int, default=40)
    parser.add_argument("--cap", type=int, help="HTTP connections per address (default: 2,000)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    port = free_port()
    settings = Settings(
        db_url=f"sqlite:///{folder / 'record.db'}",
        packets=[SAMPLE_PACKET_PATH],
        secret="bench",
        first_match=two_teams(),
        public_url=f"http://127.0.0.1:{port}",
    )
    limits = {}
    if args.cap is not None:
        from grace_arena.server.http_limits import HttpLimits

        limits = {"limits": HttpLimits(max_per_address=args.cap)}
    server = web_server(create_app(settings), host="127.0.0.1", port=port, **limits)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    base = f"http://127.0.0.1:{port}"
    sockets: list[socket.socket] = []
    try:
        for _ in range(args.sockets):
            sock = socket.socket()
            sock.bind(("127.0.0.2", 0))
            sock.connect(("127.0.0.1", port))
            with contextlib.suppress(OSError):  # refused already
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            sockets.append(sock)
        time.sleep(1.0)
        held_at_once = still_open(sockets)
        health, took = status(f"{base}/api/health")
        print(f"unfinished requests from 127.0.0.2: {args.sockets}")
        print(f"  held after 1 s: {held_at_once} (refused at once: {args.sockets - held_at_once})")
        print(f"  health from 127.0.0.1 meanwhile: {health} in {took * 1000:.0f} ms")
        time.sleep(max(0.0, args.wait - 1.0))
        print(f"  held after {args.wait:.0f} s: {still_open(sockets)}")
        guard = server.config.http
        for name in ("refused", "timed_out"):
            if hasattr(guard, name):
                print(f"  server's count, {name}: {getattr(guard, name)}")
        codes = [
            status(f"{base}/api/join/ZZZZ{i:02d}", {"X-Forwarded-For": f"10.0.{i}.1"})[0]
            for i in range(args.forged)
        ]
        print(
            f"wrong join codes with {args.forged} forged X-Forwarded-For: "
            f"{codes.count(429)} refused (429), {codes.count(404)} looked up (404)"
        )
    finally:
        for sock in sockets:
            sock.close()
        server.should_exit = True
        thread.join(10)


if __name__ == "__main__":
    main()
