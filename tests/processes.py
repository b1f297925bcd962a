"""Real ``grace-arena serve`` processes for the tests: started, read, frozen, killed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

SECRET = "shared-secret"  # processes of one event share it: player tokens work on each


class ServerProcess:
    """``grace-arena serve`` on a free port: what it printed (join codes, moderator tokens)
    read as it goes, its health asked over HTTP."""

    def __init__(self, db_url: str, port: int, *args: str, secret: str = SECRET) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/ws"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from grace_arena.cli import app; app()", "serve",
             "--db", db_url, "--host", "127.0.0.1", "--port", str(port), "--secret", secret,
             *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
        )  # fmt: skip
        self.lines: list[str] = []
        #: join code -> the moderator token printed for it
        self.tokens: dict[str, str] = {}
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(90):
            self.kill()
            raise RuntimeError("the server did not start:\n" + "".join(self.lines))
        if self.proc.poll() is not None:
            raise RuntimeError("the server stopped:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        code = None
        for line in self.proc.stdout:
            self.lines.append(line)
            found = re.match(r"match \d+ — join code (\w+)", line)
            if found:
                code = found.group(1)
            elif line.startswith("moderator token:") and code:
                self.tokens[code] = line.split(":", 1)[1].strip()
            elif line.startswith("listening on"):
                self._ready.set()
        self._ready.set()

    def health(self, timeout: float = 1.0) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(f"{self.url}/api/health", timeout=timeout) as reply:
                return json.load(reply)
        except OSError:
            return None

    def freeze(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """``kill -9``: no clean stop, nothing given up."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Ctrl+C: a clean stop."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.thaw()
            self.kill()


def wait_for(predicate, what: str, timeout: float = 30.0, every: float = 0.1):
    """Poll ``predicate`` until it returns something true; that value."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError(f"waited {timeout:g} s for {what}")


def hold_lock(path, seconds: float | None = None) -> subprocess.Popen:
    """Another process that takes SQLite's write lock and keeps it for ``seconds``, or, with
    ``None``, until :func:`release` (a test that waits for what the lock brings, however
    long a loaded machine takes to bring it)."""
    wait = "sys.stdin.read()" if seconds is None else f"time.sleep({seconds})"
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        f"{wait}\n"
        "c.execute('COMMIT')\n"
    )
    locker = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
    return locker


def release(locker: subprocess.Popen) -> None:
    """Let the process of :func:`hold_lock` give its lock up, and wait until it has."""
    assert locker.stdin is not None
    locker.stdin.close()
    locker.wait(30)
