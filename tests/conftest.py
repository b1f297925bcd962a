"""Shared fixtures: a fresh migrated database per test."""

from __future__ import annotations

import pytest

from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore


@pytest.fixture
def db_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'record.db'}"


@pytest.fixture
def store(db_url) -> MatchStore:
    upgrade(db_url)
    engine = make_engine(db_url)
    yield MatchStore(engine)
    engine.dispose()
