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


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright (browser test modules import ``browser`` first,
    which skips them where Chromium is missing outside CI)."""
    from browser import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()
