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

import pytest

POSTGRES_ENV = "GRACE_ARENA_TEST_POSTGRES"
BACKENDS = ["sqlite", "postgresql"]

#: Run a test that takes ``db_url`` (directly or through ``store`` or ``server``) once per
#: backend.
on_both_backends = pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
