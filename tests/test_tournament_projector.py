"""One phase and pool of an event's standings, as the projector and the public standings show
them (a real server; the projector page in headless Chromium): ``?phase=`` ranks each pool
apart (its games and those carried over), ``&pool=`` one pool; a phase or a pool the event
does not have is a 404 that names those it has. The stats report and the standings of the
command line likewise (``--phase``, ``--pool``)."""

from __future__ import annotations

import json

import httpx
import pytest
from backends import on_both_backends
from event_helpers import event_server
from playwright.sync_api import expect

from grace_arena.core import schedule as pairing
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.record.db import make_engine, upgrade
from grace_arena.record.schedule import (
    PhasePlan,
    PoolPlan,
    RoundPlan,
    TeamEntry,
    create_event,
    enter_result,
    find_game,
    load_plan,
    set_schedule,
)
from grace_arena.record.store import MatchStore

POOLS = {"Pool A": ["ash", "birch", "cedar"], "Pool B": ["dogwood", "elm", "fir"]}
# every game entered by its score: the team listed first in its pool beats the others, the
# second beats the third; winners 200, losers 100 (W-L, points, PPG)
HAND = {
    "Pool A": [("ash", 2, 0, 400), ("birch", 1, 1, 300), ("cedar", 0, 2, 200)],
    "Pool B": [("dogwood", 2, 0, 400), ("elm", 1, 1, 300), ("fir", 0, 2, 200)],
}


def _build(url: str) -> None:
    """The event: two pools of three, a round robin in each, every game entered."""
    upgrade(url)
    engine = make_engine(url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    MatchStore(engine).save_packet(packet, source=SAMPLE_PACKET_PATH)
    teams = [t for pool in POOLS.values() for t in pool]
    create_event(engine, "cup", title="Cup", teams=[TeamEntry(t, t.title()) for t in teams],
                 defaults={"format": "acf"})  # fmt: skip
    pools = tuple(
        PoolPlan(n[-1].lower(), n, tuple(ts), i) for i, (n, ts) in enumerate(POOLS.items())
    )
    games = pairing.assign_rooms(pairing.pooled_round_robin(list(POOLS.values())), ["1", "2"])
    set_schedule(engine, "cup", rooms=["1", "2"],
                 rounds=[RoundPlan(r, packet.packet.id) for r in (1, 2, 3)], games=games,
                 phase=PhasePlan("prelims", "Prelims", "prelim", 0, pools))  # fmt: skip
    plan = load_plan(engine, "cup")
    for g in [g for g in plan.games if not g.bye]:
        pool = next(p for p in POOLS.values() if g.teams[0] in p)
        won, lost = sorted(g.teams, key=pool.index)
        enter_result(engine, "cup", find_game(plan, g.round, list(g.teams)),
                     points={won: 200, lost: 100})  # fmt: skip
    engine.dispose()


@pytest.fixture
def cup(tmp_path):
    url = f"sqlite:///{tmp_path / 'cup.db'}"
    _build(url)
    with event_server(url, event="cup") as server:
        yield server


def _rows(view):
    return [(r["team"], r["won"], r["lost"], r["points"]) for r in view["rows"]]


def test_the_public_standings_show_a_phase_and_a_pool(cup) -> None:
    base = f"{cup.http_url}/api/events/cup/standings"
    whole = httpx.get(base).json()
    assert whole["phase"] is None and all(r["pool"] is None for r in whole["rows"])
    assert whole["phases"] == [{"name": "Prelims", "kind": "prelim", "pools": list(POOLS)}]
    phase = httpx.get(base, params={"phase": "prelims"}).json()
    assert (phase["phase"], phase["pool"]) == ("Prelims", None)
    assert _rows(phase) == [row for pool in HAND.values() for row in pool]
    assert [r["pool"] for r in phase["rows"]] == ["Pool A"] * 3 + ["Pool B"] * 3
    assert [r["rank"] for r in phase["rows"]] == [1, 2, 3, 1, 2, 3]  # each pool ranked apart
    one = httpx.get(base, params={"phase": "Prelims", "pool": "pool b"}).json()
    assert (one["phase"], one["pool"]) == ("Prelims", "Pool B") and _rows(one) == HAND["Pool B"]
    missing = httpx.get(base, params={"phase": "Playoffs"})
    assert missing.status_code == 404 and "phases: Prelims" in missing.json()["detail"]
    missing = httpx.get(base, params={"phase": "Prelims", "pool": "Pool C"})
    assert missing.status_code == 404 and "pools: Pool A, Pool B" in missing.json()["detail"]
    alone = httpx.get(base, params={"pool": "Pool A"})
    assert alone.status_code == 404 and "give the phase too" in alone.json()["detail"]
    other = httpx.get(f"{cup.http_url}/api/events/nope/standings", params={"phase": "Prelims"})
    assert other.status_code == 404 and other.json()["detail"] == "no such event is served here"


@pytest.mark.slow
def test_the_projector_shows_the_pool_asked_for(cup, pages) -> None:
    projector = pages({"width": 1280, "height": 720})
    projector.goto(f"{cup.http_url}/display?event=cup&phase=Prelims&pool=Pool%20B")
    expect(projector.locator("#standings-scope")).to_have_text("· Prelims, Pool B")
    rows = projector.locator("#standings tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator("td.team")).to_have_text("Dogwood")
    projector.goto(f"{cup.http_url}/display?event=cup&phase=Prelims")
    expect(projector.locator("#standings-scope")).to_have_text("· Prelims")
    heads = projector.locator("#standings tbody tr.pool-head")
    expect(heads).to_have_text(["Pool A", "Pool B"])
    expect(projector.locator("#standings tbody tr:not(.pool-head)")).to_have_count(6)
    projector.goto(f"{cup.http_url}/display?event=cup&phase=Finals")
    expect(projector.locator("#event-conn")).to_contain_text("has no phase 'Finals'")


@on_both_backends
def test_the_stats_report_and_standings_of_a_pool(db_url, tmp_path) -> None:
    from typer.testing import CliRunner

    from grace_arena.cli import app

    _build(db_url)
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> str:
        result = runner.invoke(app, [*args, "--db", db_url])
        assert result.exit_code == code, result.output
        return result.output

    out = run("event", "standings", "cup", "--phase", "Prelims", "--pool", "Pool A", "--json")
    (pool,) = json.loads(out)["pools"]
    rows = [(r["team"], r["won"], r["lost"], r["points"]) for r in pool["rows"]]
    assert pool["pool"] == "Pool A" and rows == HAND["Pool A"]
    page = tmp_path / "b.html"
    out = run(
        "event", "stats", "cup", "--phase", "Prelims", "--pool", "pool b", "--html", str(page)
    )
    html = page.read_text()
    assert "Cup: Prelims, Pool B" in html
    assert "Dogwood" in html and "Elm" in html and "Ash" not in html and "Birch" not in html
    out = run("event", "stats", "cup", "--phase", "Prelims", "--html", str(page), code=1)
    assert "give the pool (Pool A, Pool B)" in out
    out = run("event", "stats", "cup", "--pool", "Pool A", code=2)
    assert "give --phase too" in out
    out = run("event", "stats", "cup", "--phase", "Prelims", "--pool", "Pool B")
    assert "Dogwood" in out and "Ash" not in out  # the terminal's report of the pool
