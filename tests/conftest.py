"""Shared fixtures: a fresh migrated database per test, the sample packet, a private response
cache, a live server with the sample match, and the browser."""

from __future__ import annotations

import pytest

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
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
def sample():
    """The sample packet."""
    return load_packet(SAMPLE_PACKET_PATH)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """The LLM response cache in this test's folder (model test modules use it throughout)."""
    monkeypatch.setenv("GRACE_ARENA_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def server(db_url):
    """A live server with the sample packet and a two-team match (a module that needs another
    server defines its own ``server``)."""
    from live import LiveServer, two_teams

    from grace_arena.server.app import Settings

    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s3cret", first_match=two_teams()
    )
    with LiveServer(settings) as live:
        yield live


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
