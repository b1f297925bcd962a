"""The record's backends in the tests: SQLite always, PostgreSQL where one is given.

``$GRACE_ARENA_TEST_POSTGRES`` names a PostgreSQL server for the tests: the URL of a database
there (``postgres`` will do) as a role that may create databases, e.g.
``postgresql+psycopg://grace:grace@127.0.0.1:5432/postgres``. Each test that uses it gets a
database of its own, dropped after the test (fixtures in conftest.py). ``.ci/run`` sets it.
Without it the PostgreSQL tests skip, except in CI (``CI`` set), where they fail.

A test of the record's SQL runs on both: take ``record_url`` (a fresh, empty record on each
backend in turn), or decorate a test that takes ``db_url`` (or ``store``, ``server``) with
``on_both_backends``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy
from sqlalchemy.engine import make_url

POSTGRES_ENV = "GRACE_ARENA_TEST_POSTGRES"
BACKENDS = ["sqlite", "postgresql"]

#: Run a test that takes ``db_url`` (directly or through ``store`` or ``server``) once per
#: backend.
on_both_backends = pytest.mark.parametrize("db_url", BACKENDS, indirect=True)


@contextlib.contextmanager
def postgres_database(server: sqlalchemy.Engine) -> Iterator[str]:
    """A new, empty database on ``server`` (the ``postgres_server`` fixture), named uniquely
    per pytest-xdist worker and test; its URL, and the database is dropped afterwards."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"grace_test_{worker}_{uuid.uuid4().hex[:16]}"
    with server.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(server.url).set(database=name).render_as_string(hide_password=False)
    finally:
        _drop_database(server, name)


def _drop_database(server: sqlalchemy.Engine, name: str) -> None:
    """``WITH (FORCE)`` ends the sessions a test left open, but a role outside
    ``pg_signal_backend`` may not end an autovacuum worker that is in the database: a plain
    DROP DATABASE ends it (and waits for the others), then FORCE again."""
    for force in (" WITH (FORCE)", "", " WITH (FORCE)"):
        try:
            with server.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"{force}')
            return
        except sqlalchemy.exc.DBAPIError as exc:
            error = exc
    raise error
