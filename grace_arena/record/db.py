"""Database engines and migrations. SQLite (WAL) by default; any SQLAlchemy URL works."""

from __future__ import annotations

import os
import re
import select
import threading
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from platformdirs import user_data_dir
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import InvalidatePoolError
from sqlmodel import create_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
DB_ENV_VAR = "GRACE_ARENA_DB"


def default_db_url() -> str:
    """``$GRACE_ARENA_DB``, or a SQLite file in the user's data folder."""
    if url := os.environ.get(DB_ENV_VAR):
        return url
    path = Path(user_data_dir("grace-arena", appauthor=False)) / "grace_arena.db"
    return f"sqlite:///{path}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk before we tell anyone about the event it holds (a commit of
    # words revealed alone waits for no sync of its own: store.unsynced_session).
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def make_engine(url: str | None = None) -> Engine:
    """An engine for ``url`` (default :func:`default_db_url`); SQLite files get WAL and their
    folder is created."""
    url = url or default_db_url()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url)
    _ping_when_idle(engine)
    if engine.dialect.driver == "psycopg":
        # A set of rows to insert (a group commit's events, a storm's buzzes) goes as one
        # multi-row INSERT (pages of 1,000), not as a statement a row pipelined by psycopg:
        # each of those is a message and a wait on the socket, and in a busy server each
        # wait may hand the interpreter to the event loop and wait to have it back.
        engine.dialect.use_insertmanyvalues_wo_returning = True
    return engine


#: A pooled connection idle longer than this is pinged before it is handed out (seconds).
PING_AFTER_IDLE = 1.0


def _ping_when_idle(engine: Engine) -> None:
    """Ping a server record's pooled connection before handing it out when it has been idle
    over :data:`PING_AFTER_IDLE`, or when the server has said something on it meanwhile (the
    pool's pre-ping, for the connections it is there for).

    A connection idle in the pool is what a restarted server, a cut network or a proxy's idle
    timeout leaves dead: pinged, it is replaced before anyone uses it. The pool's own pre-ping
    pings every connection at every checkout: one more round trip in every commit, which in a
    busy server is one more wait to have the interpreter back. A connection used within the
    last second is not pinged unless its socket has something to read (a look, not a round
    trip): a server that ends its sessions (a restart, an administrator) sends each a last
    message and closes it, so such a connection is pinged, found dead and replaced, with every
    connection older than it. One whose network was cut without a word fails its statement
    instead, as a disconnect; writes are tried again
    (:func:`grace_arena.record.store.is_transient`)."""

    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_connection, record) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, proxy) -> None:
        since = record.info.get("idle_since")  # none for a new connection: nothing to ping
        if since is None:
            return
        if time.monotonic() - since < PING_AFTER_IDLE and not _has_word(dbapi_connection):
            return
        dialect = engine.dialect
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, dbapi_connection, None):
                # the pool replaces it (and every connection older than it) and tries again
                raise InvalidatePoolError(f"pooled connection found closed: {exc}") from exc
            raise


def _has_word(dbapi_connection) -> bool:
    """Whether an idle connection's socket has something to read (or cannot be looked at)."""
    try:
        return bool(select.select([dbapi_connection.fileno()], [], [], 0)[0])
    except Exception:  # closed, or no socket to look at: ping it
        return True


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


#: Alembic's commands use process-wide state (the environment module it loads): two threads of
#: one process migrating at once fail (a server opening two rooms' matches together).
_MIGRATING = threading.Lock()


def upgrade(url: str | None = None, revision: str = "head") -> str:
    """Bring the database at ``url`` to ``revision`` with the migrations; returns the URL."""
    url = url or default_db_url()
    make_engine(url).dispose()  # creates the SQLite folder
    with _MIGRATING:
        command.upgrade(alembic_config(url), revision)
    return url


def open_engine(url: str | None = None) -> Engine:
    """Migrate to head, then return an engine: what every command that uses the record calls."""
    url = upgrade(url)
    return make_engine(url)


def at_head(url: str) -> bool:
    """Whether the record at ``url`` is at the newest schema (without changing it)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine as plain_engine

    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    engine = plain_engine(url)  # no pragmas: WAL mode would be written into the file
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision() == head
    finally:
        engine.dispose()


def redacted_url(url: str) -> str:
    """``url`` as commands print it and reports keep it: a server record's password hidden."""
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # not a URL ("post gresql://", a port "x"): still a secret
        return re.sub(r"(://[^:/@]*:).*@", r"\1***@", url)  # to the last "@": "p@ss"
    if parsed.host and "@" in parsed.host:  # an "@" of the password not written %40
        return re.sub(r"(://[^:/@]*:).*@", r"\1***@", url)
    # without a password, as given (rendering again would escape a file name's accents)
    return url if parsed.password is None else parsed.render_as_string(hide_password=True)
