"""Telling the record's other processes of a change at once: PostgreSQL's NOTIFY and LISTEN.

Processes that share a PostgreSQL record learn of each other's changes by reading the record
every so often; a notice sent in the transaction of a change (delivered when it commits, to
every process listening, never for a transaction rolled back) lets them read it at once
instead. A notice only says where to read: a process that misses one (its listening
connection dropped) still reads the change on its next round, as it did without notices.

- ``results <match id> ...``: events that may change these matches' results were committed
  (no ids: more matches than a notice holds);
- ``standings <event id> <version>``: an event's standings were published.

SQLite has no notices: :func:`notify` does nothing there and :class:`Listener` does not start.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

#: The channel every notice of the project goes on.
CHANNEL = "grace_arena"
#: Seconds a listener waits for notices before it looks whether it should stop.
WAIT = 1.0
#: Seconds before a listener whose connection failed tries again (doubling up to the last).
RETRY = (0.5, 1.0, 2.0, 5.0)


def notify(conn: Any, payload: str) -> None:
    """Send ``payload`` on :data:`CHANNEL` when ``conn``'s transaction commits (a SQLAlchemy
    connection or session on a PostgreSQL record; nothing on another)."""
    bind = conn.get_bind() if hasattr(conn, "get_bind") else conn
    if bind.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_notify(:channel, :payload)"),
                     {"channel": CHANNEL, "payload": payload})  # fmt: skip


def listens(engine: Engine) -> bool:
    """Whether processes on this record can be told of changes (PostgreSQL)."""
    return engine.dialect.name == "postgresql"


class Listener:
    """A thread that listens on :data:`CHANNEL` on a connection of its own, and calls
    ``on_notice(payload)`` (in that thread) for each notice; ``on_connect()`` (in that thread
    too) each time it is listening afresh, for what may have been missed meanwhile. A dropped
    connection is opened again, after a pause. :meth:`stop` ends it."""

    def __init__(
        self,
        engine: Engine,
        on_notice: Callable[[str], None],
        on_connect: Callable[[], None] | None = None,
    ) -> None:
        self.url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self.on_notice = on_notice
        self.on_connect = on_connect
        self.listening = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="record-notices", daemon=True)
        self.received = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = WAIT + 1.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        import psycopg

        failures = 0
        while not self._stop.is_set():
            try:
                # (keepalives: a connection silently gone, a peer's reboot or a dropped
                # route, is found dead in about a minute, and opened again)
                with psycopg.connect(
                    self.url,
                    autocommit=True,
                    connect_timeout=10,
                    keepalives=1,
                    keepalives_idle=30,
                    keepalives_interval=10,
                    keepalives_count=3,
                ) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    failures = 0
                    if self.on_connect is not None:
                        self.on_connect()
                    while not self._stop.is_set():
                        for notice in conn.notifies(timeout=WAIT):
                            self.received += 1
                            try:
                                self.on_notice(notice.payload)
                            except Exception:  # a bug of the handler: logged, listening goes on
                                log.exception("a notice of the record was not handled")
            except Exception as exc:
                self.listening.clear()
                if self._stop.is_set():
                    break
                pause = RETRY[min(failures, len(RETRY) - 1)]
                failures += 1
                log.warning("not told of the record's changes (%s); listening again in %g s",
                            exc, pause)  # fmt: skip
                self._stop.wait(pause)
        self.listening.clear()


def parse(payload: str) -> tuple[str, list[int]]:
    """A notice's kind and numbers (``("results", [12])``); ``("", [])`` for one not of this
    project's making."""
    kind, *rest = payload.split() or [""]
    with contextlib.suppress(ValueError):
        return kind, [int(x) for x in rest]
    return "", []
