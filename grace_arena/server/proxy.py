"""One address for an event: HAProxy in front of the server processes that share a record,
routing each phone, display and moderator to the process that serves its room.

Every page and websocket of a room names its join code in its URL (``/?code=CODE``,
``/display?code=CODE``, ``/ws?code=CODE``). The proxy looks the code up in a map that this
module writes from the record (:func:`grace_arena.record.servers.routes`: each room's match
lease says which live process serves it) and sends the request to that process's backend; a
code the map does not know (a room nobody opened yet, whose process died, or no code at all:
the event's projector, the API) goes to any live process, chosen by hashing the code, so that
one room's phones reach one process, which opens the room or takes it over.

Each process's backend has the others as backups: when HAProxy's health check finds a
process gone (``kill -9``), the room's phones, reconnecting to the same address, reach
another process at once, which takes the room over (``Rooms.adopt_orphans``) while the map
catches up. :class:`ProxyRunner` keeps the map current: every ``interval`` it reads the record,
changes the map of the running HAProxy through its runtime API when a room moved, and writes
the configuration and reloads HAProxy (master-worker mode: the connections open stay on the
old worker) when a process started or stopped.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from sqlalchemy.engine import Engine

from grace_arena.record.servers import Routes, routes

log = logging.getLogger(__name__)

__all__ = [
    "ProxyLayout",
    "ProxyRunner",
    "backend_address",
    "haproxy_config",
    "room_map",
    "server_name",
]

#: The backend of a code the map does not know.
ANY = "any"


@dataclass(frozen=True)
class ProxyLayout:
    """Where the proxy listens and keeps its files."""

    host: str
    port: int
    directory: Path
    #: Connections HAProxy takes at once (each websocket is one to the client and one to a
    #: process): by default as many as the system's limit of open files allows.
    max_connections: int = field(default_factory=lambda: default_max_connections())
    #: Seconds between health checks of each process (three failed in a row mark it down:
    #: a process killed is refused at once, one merely busy answers within ``check_timeout``).
    check_interval: float = 0.5
    check_timeout: float = 5.0

    @property
    def config_path(self) -> Path:
        return self.directory / "haproxy.cfg"

    @property
    def map_path(self) -> Path:
        return self.directory / "rooms.map"

    @property
    def socket_path(self) -> Path:
        return self.directory / "admin.sock"


def default_max_connections(wanted: int = 20_000) -> int:
    """``wanted``, or fewer where the hard limit of open files is lower: HAProxy needs two
    files per connection (the client's and the process's) and some of its own."""
    try:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    except (ImportError, OSError, ValueError):
        return wanted
    if hard == resource.RLIM_INFINITY:
        return wanted
    return max(100, min(wanted, (hard - 200) // 2))


def server_name(holder: str) -> str:
    """HAProxy's name for the process ``holder`` (``host:pid:nonce``): a word it takes."""
    return "p" + hashlib.sha256(holder.encode()).hexdigest()[:10]


def backend_address(url: str) -> str:
    """``host:port`` of a process's URL, for HAProxy (``http://127.0.0.1:8001/`` ->
    ``127.0.0.1:8001``; no port: 80, or 443 for https)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) address of a server process")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def room_map(table: Routes) -> str:
    """The map file: one line per room served by a live process, ``CODE to_<process>``."""
    return "".join(
        f"{code} to_{server_name(holder)}\n" for code, holder in sorted(table.rooms.items())
    )


def haproxy_config(table: Routes, layout: ProxyLayout) -> str:
    """HAProxy's configuration for the live processes of ``table``: one frontend on the
    event's address, a backend ``any`` balanced by join code over every process (health
    checked), and one backend per process (the others its backups)."""
    inter = f"{max(1, round(layout.check_interval * 1000))}ms"
    servers = [(server_name(holder), backend_address(url)) for holder, url in table.servers.items()]
    lines = [
        "# Written by grace-arena proxy: the event's one address in front of its processes.",
        "global",
        f"    maxconn {layout.max_connections}",
        f"    stats socket {layout.socket_path} mode 600 level admin",
        "    log stderr format short local0 notice",
        "",
        "defaults",
        "    mode http",
        "    log global",
        "    option forwardfor",
        "    option redispatch",
        "    retries 2",
        "    timeout connect 2s",
        "    timeout client 60s",
        "    timeout server 60s",
        # a websocket (an upgraded connection) may stay quiet between pings for long
        "    timeout tunnel 1h",
        "    timeout http-request 10s",
        f"    timeout check {max(1, round(layout.check_timeout * 1000))}ms",
        f"    default-server inter {inter} fastinter {inter} fall 3 rise 2",
        "",
        "frontend event",
        f"    bind {layout.host}:{layout.port}",
        f"    maxconn {layout.max_connections}",
        f"    use_backend %[url_param(code),upper,map({layout.map_path},{ANY})]",
        f"    default_backend {ANY}",
        "",
        f"backend {ANY}",
        "    balance url_param code",
        "    hash-type consistent",
        "    option httpchk GET /api/health",
    ]
    lines += [f"    server {name} {address} check" for name, address in servers]
    if not servers:  # a backend with no server answers 503 until a process starts
        lines.append("    # no server process is live")
    for name, address in servers:
        lines += ["", f"backend to_{name}"]
        lines.append(f"    server {name} {address} track {ANY}/{name}")
        lines += [
            f"    server {other} {where} track {ANY}/{other} backup"
            for other, where in servers
            if other != name
        ]
    return "\n".join(lines) + "\n"


class ProxyRunner:
    """HAProxy, running for the live processes of a record and kept current: started with
    the record's routes, then :meth:`refresh` (every second or so) follows the rooms as they
    move and the processes as they come and go."""

    def __init__(
        self,
        engine: Engine,
        layout: ProxyLayout,
        *,
        ttl: float = 15.0,
        events: tuple[int, ...] = (),
        haproxy: str | None = None,
        quiet: bool = False,
    ) -> None:
        self.engine = engine
        self.layout = layout
        self.ttl = ttl
        self.events = events
        found = haproxy or shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
        if found is None:
            raise FileNotFoundError("HAProxy is not installed (Debian: apt-get install haproxy)")
        self.haproxy = found
        self.quiet = quiet  # HAProxy's own notices (reloads, servers down) not shown
        self.table = Routes({}, {})
        self.proc: subprocess.Popen | None = None
        #: Reloads (a process came or went) and map changes through the runtime API.
        self.reloads = 0
        self.map_changes = 0

    def read(self) -> Routes:
        return routes(self.engine, ttl=self.ttl, events=self.events)

    def write(self, table: Routes) -> None:
        self.layout.directory.mkdir(parents=True, exist_ok=True)
        _write_atomically(self.layout.map_path, room_map(table))
        _write_atomically(self.layout.config_path, haproxy_config(table, self.layout))

    def check(self) -> None:
        """HAProxy's own check of the configuration; raises ``RuntimeError`` with its words."""
        done = subprocess.run(
            [self.haproxy, "-c", "-q", "-f", str(self.layout.config_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"HAProxy refused its configuration: {done.stderr.strip()}")

    def start(self) -> None:
        """Write the configuration for the record as it is and start HAProxy (master-worker:
        a reload starts a new worker and leaves the open connections to the old one)."""
        self.table = self.read()
        self.write(self.table)
        self.check()
        self.proc = subprocess.Popen(
            [self.haproxy, "-W", "-db", "-f", str(self.layout.config_path)],
            preexec_fn=_die_with_parent,  # (only sets the death signal)
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL if self.quiet else None,
            stderr=subprocess.DEVNULL if self.quiet else None,
        )
        deadline = time.monotonic() + 10
        while not self.listening():
            if self.proc.poll() is not None:
                raise RuntimeError(f"HAProxy stopped (exit {self.proc.returncode})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"HAProxy does not listen on {self.address}")
            time.sleep(0.05)

    @property
    def address(self) -> str:
        return f"{self.layout.host}:{self.layout.port}"

    def listening(self) -> bool:
        try:
            with socket.create_connection((self.layout.host, self.layout.port), timeout=0.5):
                return True
        except OSError:
            return False

    def refresh(self) -> str | None:
        """Follow the record: reload HAProxy when the live processes changed, change its map
        when only rooms moved. What was done, in words, or None."""
        table = self.read()
        if table == self.table:
            return None
        before = self.table
        if table.servers != before.servers:
            self.write(table)
            self.reload()  # (raises if HAProxy refuses it: tried again on the next refresh)
            self.table = table
            return f"{len(table.servers)} server processes, {len(table.rooms)} rooms: reloaded"
        _write_atomically(self.layout.map_path, room_map(table))
        moved = self._apply_map(before, table)
        self.table = table
        return f"{moved} rooms moved"

    def _apply_map(self, before: Routes, after: Routes) -> int:
        """Change the running map through the runtime API (a reload if it cannot be reached)."""
        commands = []
        path = self.layout.map_path
        for code in sorted(before.rooms.keys() - after.rooms.keys()):
            commands.append(f"del map {path} {code}")
        for code, holder in sorted(after.rooms.items()):
            old = before.rooms.get(code)
            if old == holder:
                continue
            value = f"to_{server_name(holder)}"
            verb = "set" if old is not None else "add"
            commands.append(f"{verb} map {path} {code} {value}")
        try:
            for command in commands:
                self.runtime(command)
        except OSError as exc:
            log.warning("HAProxy's runtime API did not answer (%s): reloading", exc)
            self.reload()
        self.map_changes += len(commands)
        return len(commands)

    def runtime(self, command: str) -> str:
        """One command of HAProxy's runtime API (its admin socket); its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2.0)
            s.connect(str(self.layout.socket_path))
            s.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def reload(self) -> None:
        """HAProxy reads its configuration again (SIGUSR2 to its master process)."""
        self.check()
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGUSR2)
            self.reloads += 1

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> ProxyRunner:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _die_with_parent() -> None:
    """In HAProxy's process, before it runs (Linux): a SIGTERM when the process that started
    it dies, however it died (``kill -9`` too), so that no HAProxy is left serving routes
    nobody keeps current."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _write_atomically(path: Path, text: str) -> None:
    staged = path.with_name(path.name + ".new")
    staged.write_text(text)
    with contextlib.suppress(OSError):
        staged.chmod(0o644)
    staged.replace(path)
