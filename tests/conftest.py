"""Shared fixtures, each defined here once: a fresh migrated database per test (SQLite, or
PostgreSQL too where the record's SQL is exercised), the sample packet, a private response
cache, a live server (the sample match unless a module's ``server`` mark says otherwise), a
stand-in LLM API, an event a module plays, the browser and its pages, the async tests' backend.

Also the options ``python3 dev.py test`` runs the suite with: ``--part`` (the tests that may
run beside others, on parallel workers, or those marked ``alone``) and ``--counts-to``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy
from backends import BACKENDS, POSTGRES_ENV, postgres_database
from hypothesis import settings

from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.store import MatchStore

if TYPE_CHECKING:
    from live import LiveServer

    from grace_arena.model.stub_server import StubServer
    from grace_arena.record.schedule import EventPlan
    from grace_arena.server.app import Settings

# Property tests: new random examples on every run here; in CI the same examples each run, so
# that a run's verdict is the code's (a failure found here becomes an @example).
# No deadline on an example: a loaded machine makes any one of them slow, and a test asserts
# what it computes, not how long it took.
settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--part",
        choices=("all", "shared", "alone"),
        default="all",
        help="all the tests (the default); those that may run beside others (`python3 dev.py "
        "test` runs them on parallel workers); or only the tests marked `alone`, which stop "
        "something the others use (it runs them afterwards, by themselves)",
    )
    parser.addoption(
        "--counts-to",
        metavar="FILE",
        help="write the run's outcomes (passed, failed, ...) to FILE as JSON, for dev.py to add "
        "up the runs of one task",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that drives Chromium (through the ``browser`` fixture) is marked ``browser``;
    ``--part`` keeps the tests of its part (dropping the others without counting them as
    deselected: two parts of one run deselect nothing between them)."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker("browser")
    part = config.getoption("part")
    if part != "all":
        shared = part == "shared"
        items[:] = [i for i in items if (i.get_closest_marker("alone") is None) == shared]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    path = config.getoption("counts_to")
    if path and not hasattr(config, "workerinput"):  # the controller, with every outcome
        import json

        stats = terminalreporter.stats
        counts = {key: len(stats.get(key, [])) for key in OUTCOMES}
        Path(path).write_text(json.dumps({"counts": counts, "exitstatus": int(exitstatus)}))


#: The outcomes pytest counts in its closing line, in its order (but the deselected, which
#: pytest-xdist's workers do not report to the run that writes the counts).
OUTCOMES = ("failed", "passed", "skipped", "xfailed", "xpassed", "warnings", "error")


def _no_postgres(reason: str) -> None:
    """PostgreSQL tests skip where there is no server for them, but not in CI (see backends.py)."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the PostgreSQL tests: .ci/run sets it up)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server() -> sqlalchemy.Engine:
    """An AUTOCOMMIT engine on ``$GRACE_ARENA_TEST_POSTGRES``, to create and drop databases."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        _no_postgres(
            f"${POSTGRES_ENV} is not set (postgresql+psycopg://USER:PASSWORD@HOST/postgres, "
            "a role with CREATEDB)"
        )
    try:
        engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")
        with engine.connect():
            pass
    except Exception as exc:  # the driver missing, the server down, a wrong password...
        _no_postgres(f"cannot reach PostgreSQL at ${POSTGRES_ENV}: {str(exc).splitlines()[0]}")
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_url(postgres_server: sqlalchemy.Engine) -> str:
    """The URL of a new, empty PostgreSQL database, dropped after the test."""
    with postgres_database(postgres_server) as url:
        yield url


def _url(request: pytest.FixtureRequest, backend: str, tmp_path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'record.db'}"
    if backend == "postgresql":
        return request.getfixturevalue("postgres_url")
    raise ValueError(f"no backend {backend!r}; known: {', '.join(BACKENDS)}")


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh, empty record: a SQLite file, or a backend named by an indirect parameter."""
    return _url(request, getattr(request, "param", "sqlite"), tmp_path)


@pytest.fixture(params=BACKENDS)
def record_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh, empty record on each backend in turn: for the tests of the record's SQL."""
    return _url(request, request.param, tmp_path)


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


def _server_settings(request: pytest.FixtureRequest, db_url: str, folder: Path) -> Settings:
    """The settings of the ``server`` fixture's server: the sample packet and a two-team
    match, with what the closest ``server`` mark of the test or its module says instead (a
    callable there is called with the server's folder, for files it writes)."""
    from live import two_teams

    from grace_arena.server.app import Settings

    mark = request.node.get_closest_marker("server")
    options: dict[str, Any] = {
        "packets": [SAMPLE_PACKET_PATH], "secret": "s3cret", "first_match": two_teams(),
    }  # fmt: skip
    options.update(mark.kwargs if mark else {})
    options.pop("per_module", None)
    options = {k: v(folder) if callable(v) else v for k, v in options.items()}
    return Settings(db_url=db_url, **options)


def _per_module(request: pytest.FixtureRequest) -> bool:
    mark = request.node.get_closest_marker("server")
    return bool(mark and mark.kwargs.get("per_module"))


@pytest.fixture
def server(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Iterator[LiveServer]:
    """A live server on a free port: by default with the sample packet and a two-team match
    on a fresh record (``db_url``). A module says what its server has instead with a mark,
    e.g. ``pytestmark = pytest.mark.server(first_match=None, secret="tui-test")``; with
    ``per_module=True`` its tests share one server, on a SQLite record of the module's."""
    if _per_module(request):
        yield request.getfixturevalue("_module_server")
        return
    from live import LiveServer

    with LiveServer(_server_settings(request, db_url, tmp_path)) as live:
        yield live


@pytest.fixture(scope="module")
def _module_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[LiveServer]:
    """The server the tests of a module share (``server``'s mark with ``per_module=True``)."""
    from live import LiveServer

    folder = tmp_path_factory.mktemp("server")
    settings = _server_settings(request, f"sqlite:///{folder / 'record.db'}", folder)
    with LiveServer(settings) as live:
        yield live


@pytest.fixture
def llm_server(request: pytest.FixtureRequest) -> Iterator[StubServer]:
    """A stand-in for an LLM API on a free port (grace_arena.model.stub_server), answering the
    closest ``llm_server`` mark's arguments (``answers=...``, ``latency=...``)."""
    from grace_arena.model.stub_server import StubServer

    mark = request.node.get_closest_marker("llm_server")
    with StubServer(**(mark.kwargs if mark else {})) as stub:
        yield stub


@pytest.fixture(scope="module")
def event_template(request: pytest.FixtureRequest, tmp_path_factory) -> tuple[Path, EventPlan]:
    """An event made once per module (``event_helpers.make_event``, given the closest
    ``event`` mark's arguments) in a SQLite record: the record's path and the plan."""
    from event_helpers import make_event

    mark = request.node.get_closest_marker("event")
    path = tmp_path_factory.mktemp("event") / "record.db"
    return path, make_event(f"sqlite:///{path}", **(mark.kwargs if mark else {}))


@pytest.fixture
def event(event_template, tmp_path) -> Iterator[tuple[LiveServer, EventPlan]]:
    """A live server of the module's event, on a copy of its record: each test plays the
    event from the start."""
    from event_helpers import copy_record, event_server

    template, plan = event_template
    with event_server(copy_record(template, tmp_path)) as live:
        yield live, plan


@pytest.fixture
def anyio_backend() -> str:
    """The async tests (Textual's pilots) run on asyncio."""
    return "asyncio"


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


@pytest.fixture
def pages(browser):
    """New pages (each in a context of its own: its own localStorage), failing the test on a
    JavaScript error or a fetch from anywhere but the server under test:
    ``pages(viewport, timeout=..., **context options)``."""
    from browser import PHONE

    contexts, errors, outside = [], [], []

    def fetched(request) -> None:
        if not request.url.startswith(("http://127.0.0.1", "data:")):
            outside.append(request.url)

    def new(viewport=PHONE, *, timeout: float = 10_000, **options):
        context = browser.new_context(viewport=viewport, **options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(timeout)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", fetched)
        return page

    yield new
    for context in contexts:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    assert not outside, f"the page fetched from elsewhere: {outside}"


@pytest.fixture
def phone(pages):
    """A new page the size of a phone, touch and all."""
    from browser import phone

    return phone(pages)
