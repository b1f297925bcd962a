"""Every page of an evening of twelve teams with long names, in a real browser, at a phone's
390x844 and a projector's 1280x720 and 1920x1080: nothing cut or off the screen, no word broken
across lines, no two blocks overlapping (measured in the page), and axe-core's WCAG 2.2 AA
checks passing: the event's projector (standings with PPB, six rooms, twelve rows of
schedule; also in high contrast), the room's display and a player's phone during a bonus, the
replay, the final standings and the printed stats page.

The event is ACF's (bonuses, no powers) over two rounds in six rooms. In round 1 Herons win a
tossup and its whole bonus (40 points, 30 a bonus), Owls four tossups with one part of each
bonus (80 points, 10 a bonus); every other match ends level. Herons and Owls are then 1–0–1:
the tie-break is PPB, and the final standings say so, since Owls scored more. The replay of an
ACF match speaks of no power part, and the stats have no powers columns. A team that has played
all its matches while its room goes on is thanked, and not asked to keep its page open.
"""

from __future__ import annotations

import pytest
from a11y import assert_accessible, assert_no_broken_word, assert_no_overlap, assert_uncut
from browser import PHONE, SCREENSHOTS
from event_helpers import code_of, event_server, make_event, room_moderator, room_player
from live import Client, clients, display_url, projector_url
from playwright.sync_api import Page, expect
from test_browser_results import LARGE, SMALL, assert_fits, end_the_match_in

from grace_arena.core import schedule as pairing
from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet
from grace_arena.record.db import make_engine
from grace_arena.record.schedule import RoundPlan, TeamEntry, set_schedule

pytestmark = pytest.mark.slow

SIZES = {"phone": PHONE, "small": SMALL, "large": LARGE}
NAMES = {
    "herons": "Herons of Upper Wensleydale Academy",
    "owls": "The Owls",
    "badgers": "Saint Bartholomew's Grammar School Badgers",
    "ravens": "Northumberland Extraordinary Thinkers",
    "otters": "Otters United",
    "kings": "Kingsbridge Community College Quizbowl Club",
    "slaughter": "Lower Slaughter Polytechnic",
    "queens": "Queen Elizabeth's Hospital B",
    "wolves": "Wolverhampton Wanderers of Knowledge",
    "foxes": "Foxes",
}
TEAMS = [
    *(TeamEntry(team, name) for team, name in NAMES.items()),
    TeamEntry("robo", "Robo", "model", "tfidf", 0.5),
    TeamEntry("careful", "Careful Reasoner", "model", "tfidf", 0.99),
]
ROOMS = ("1", "2", "3", "4", "5", "6")
GAMES = [
    pairing.Game(1, "1", 0, ("herons", "badgers")),
    pairing.Game(1, "2", 0, ("owls", "ravens")),
    pairing.Game(1, "3", 0, ("otters", "kings")),
    pairing.Game(1, "4", 0, ("slaughter", "queens")),
    pairing.Game(1, "5", 0, ("wolves", "robo")),
    pairing.Game(1, "6", 0, ("foxes", "careful")),
    pairing.Game(2, "1", 0, ("herons", "otters")),
    pairing.Game(2, "2", 0, ("owls", "kings")),
    pairing.Game(2, "3", 0, ("badgers", "ravens")),
    pairing.Game(2, "4", 0, ("slaughter", "robo")),
    pairing.Game(2, "5", 0, ("wolves", "careful")),
    pairing.Game(2, "6", 0, ("foxes", "queens")),
]
TOSSUPS = 5
#: The projector's parts that must all be in sight, uncut.
PROJECTOR = (
    "#event-title", "#event-info", "#standings thead th", "#standings tbody tr",
    "#standings td.team", "#rooms li", ".room-match", ".room-code", ".room-url",
    "#schedule li", "#schedule .teams", "#leader",
)  # fmt: skip
#: The blocks of each page that must not overlap one another.
PROJECTOR_BLOCKS = ("#event-title", "#event-info", "#standings", "#schedule-section", "#rooms li")
DISPLAY = ("#title", "#tossup-info", "#banner", "#text", "#scores li", "#log li", "#join-code")
DISPLAY_BLOCKS = ("#title", "#tossup-info", "#banner", "#text", "#scores li", "#log li", ".join")
PHONE_PARTS = (
    "#me", "#event-info", "#tossup-info", "#status", "#points", "#text", "#answer-form",
    "#scores li",
)  # fmt: skip
JOIN_PARTS = ("#join-where", "#name-input", "#team-choices button", "#join-form button.primary")
PHONE_BLOCKS = ("#event-info", "#tossup-info", "#status", "#points", "#text", "#answer-form")


@pytest.fixture
def record(tmp_path) -> tuple[str, dict[str, str]]:
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    defaults = {"answer_time": None, "wpm": 600, "format": "acf", "bonus_answer_time": None}
    make_event(db_url, teams=TEAMS, rounds=2, rooms=ROOMS, defaults=defaults, tossups=TOSSUPS)
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    ids = tuple(t.id for t in packet.tossups[:TOSSUPS])
    plan = set_schedule(engine, "night", rooms=list(ROOMS), games=GAMES,
                        rounds=[RoundPlan(r, packet.packet.id, ids) for r in (1, 2)])  # fmt: skip
    engine.dispose()
    return db_url, {room: code_of(plan, room) for room in ROOMS}


def check_everything(page: Page, name: str, parts, blocks, words, *, scrolls: bool = False) -> None:
    """At each size: a screenshot, everything in sight (on a page that ``scrolls`` down, and on
    a projector's page at a phone's size, within its sides) and uncut, no word broken, no
    overlap, no axe-core violation."""
    for size in SIZES.values():
        down = scrolls or size == PHONE
        page.set_viewport_size(size)
        page.wait_for_timeout(300)  # (a resize redraws the pages that fit themselves)
        page.screenshot(path=str(SCREENSHOTS / f"a11y-{name}-{size['width']}.png"), full_page=down)
        what = f"{name} at {size['width']}x{size['height']}"
        if down:
            assert_uncut(page, *parts, what=what)
        else:
            assert_fits(page, *parts, what=what)
        assert_no_broken_word(page, *words, what=what)
        assert_no_overlap(page, *blocks, what=what)
        assert_accessible(page, what)


def tossup_to(mod: Client, player: Client) -> None:
    """The moderator reads a tossup; the player buzzes at once and is ruled right."""
    mod.send(type="start_tossup")
    mod.state(lambda s: s["match"]["phase"] == "reading")
    player.send(type="buzz")
    mod.state(lambda s: s["floor"] is not None)
    player.send(type="answer", text="the answer")
    mod.state(lambda s: s["floor"] is not None and s["floor"]["answer"] == "the answer")
    mod.send(type="rule", ruling="correct")
    mod.state(lambda s: s["match"]["phase"] == "bonus")


def state_now(mod: Client, predicate) -> dict:
    """The moderator's latest state if it says ``predicate`` already, else the next that does."""
    latest = next(m for m in reversed(mod.received) if m["type"] == "state")
    return latest if predicate(latest) else mod.state(predicate)


def bonus_part(mod: Client, player: Client, part: int, ruling: str) -> None:
    state_now(mod, lambda s: s["bonus"] is not None and s["bonus"]["part"] == part)
    player.send(type="answer", text=f"part {part + 1}", part=part + 1)
    mod.state(lambda s: s["bonus"] is not None and s["bonus"]["answer"] == f"part {part + 1}")
    mod.send(type="rule", ruling=ruling, part=part + 1)


def test_an_evening_of_twelve_long_named_teams_fits_every_page_at_every_size(record, pages):
    db_url, codes = record
    with event_server(db_url, rate_per_second=1000.0, rate_burst=1000) as server:
        projector = pages(SMALL)
        projector.goto(projector_url(server, "night"))
        expect(projector.locator("#rooms li")).to_have_count(6)
        # Herons' phone, a real page; their room's display
        phone = pages(PHONE, is_mobile=True, has_touch=True)
        phone.goto(f"{server.http_url}/?code={codes['1']}")
        expect(phone.locator("#team-choices button")).to_have_count(10)
        check_everything(phone, "phone-join", JOIN_PARTS, JOIN_PARTS, JOIN_PARTS, scrolls=True)
        phone.set_viewport_size(PHONE)
        phone.get_by_label("Your name").fill("Ann")
        phone.get_by_role("button", name=NAMES["herons"], exact=True).click()
        phone.get_by_role("button", name="Join").click()
        expect(phone.locator("#me")).to_have_text(f"Ann · {NAMES['herons']}")
        display = pages(SMALL)
        display.goto(display_url(server, codes["1"]))
        with clients(
            room_moderator(server, codes["1"]),
            room_moderator(server, codes["2"]),
            room_player(server, codes["1"], "herons", "Ann's twin"),
            room_player(server, codes["2"], "owls", "Olu"),
        ) as (mod1, mod2, ann, olu):
            ann.state()
            olu.state()
            match1 = mod1.state()["match"]["id"]
            # Owls: four tossups, one part of each bonus
            for _ in range(4):
                tossup_to(mod2, olu)
                for part, ruling in enumerate(("correct", "incorrect", "incorrect")):
                    bonus_part(mod2, olu, part, ruling)
                state_now(mod2, lambda s: s["match"]["phase"] == "answered")
            mod2.send(type="end_match")
            mod2.state(lambda s: s["match"]["phase"] == "ended")
            # Herons: a tossup and the whole bonus; the pages looked at during the bonus
            tossup_to(mod1, ann)
            bonus_part(mod1, ann, 0, "correct")
            bonus_part(mod1, ann, 1, "correct")
            state_now(mod1, lambda s: s["bonus"]["part"] == 2)
            expect(phone.locator("#status-title")).to_have_text("Bonus — your team's turn")
            expect(display.locator("#tossup-info")).to_contain_text("Bonus 1")
            expect(projector.locator("#ppb-head")).to_be_visible(timeout=8000)
            check_everything(phone, "phone-bonus", PHONE_PARTS, PHONE_BLOCKS,
                             ("#me", "#status", "#text", "#scores li"), scrolls=True)  # fmt: skip
            check_everything(display, "display-bonus", DISPLAY, DISPLAY_BLOCKS,
                             ("#title", "#banner", "#text", "#scores li", "#log li"))  # fmt: skip
            check_everything(projector, "projector-live", PROJECTOR, PROJECTOR_BLOCKS,
                             ("#standings td.team", "#schedule .teams", "#rooms li"))  # fmt: skip
            projector.goto(projector_url(server, "night", "&contrast=high"))
            expect(projector.locator("#ppb-head")).to_be_visible(timeout=8000)
            check_everything(projector, "projector-contrast", PROJECTOR, PROJECTOR_BLOCKS,
                             ("#standings td.team", "#schedule .teams", "#rooms li"))  # fmt: skip
            bonus_part(mod1, ann, 2, "correct")
            state_now(mod1, lambda s: s["match"]["phase"] == "answered" and s["bonus"]["done"])
            expect(display.locator("#banner")).to_contain_text("scored 30 on the bonus")
            check_everything(display, "display-bonus-over", DISPLAY, DISPLAY_BLOCKS,
                             ("#title", "#banner", "#text", "#scores li", "#log li"))  # fmt: skip
            mod1.send(type="end_match")
            mod1.state(lambda s: s["match"]["phase"] == "ended")
        # every other match ends level; round 2 too
        for room in ROOMS[2:]:
            end_the_match_in(server, codes[room])
        # (Herons' phone goes on to its round 2 match, then it ends too)
        expect(phone.locator("#event-info")).to_have_text("Round 2 of 2 · Room 1", timeout=10_000)
        for room in ROOMS:
            end_the_match_in(server, codes[room])
        expect(projector.locator("#event-info")).to_have_text(
            "Every match played · final standings", timeout=10_000
        )
        leader = projector.locator("#leader")
        expect(leader).to_contain_text("leads the final standings")
        said = leader.inner_text().replace("\u2060", "").replace("\u00a0", " ")
        assert said == (
            f"{NAMES['herons']} leads the final standings: 1–0–1, 40 points (The Owls scored 80;"
            " the tie-break on 1–0–1 is PPB: 30.00 to 10.00 for The Owls)"
        )
        # Herons' phone: the end of its last match, and its place
        expect(phone.locator("#status-title")).to_have_text(
            "The match ended before any tossup was played"
        )
        expect(phone.locator("#result")).to_contain_text("1st of 12 in the standings")
        check_everything(phone, "phone-end", ("#status", "#result", "#scores li"),
                         ("#status", "#result"), ("#status", "#result", "#scores li"),
                         scrolls=True)  # fmt: skip
        check_everything(projector, "projector-final", PROJECTOR, PROJECTOR_BLOCKS,
                         ("#standings td.team", "#leader"))  # fmt: skip
        # the replay of Herons' tossup: an ACF match, no power part
        replay = pages(SMALL)
        replay.goto(f"{server.http_url}/replay?match={match1}&tossup=1&code={codes['1']}")
        expect(replay.locator("#rulings li")).to_have_count(1)
        expect(replay.locator("#legend")).to_be_hidden()
        expect(replay.locator("#text .power")).to_have_count(0)
        check_everything(
            replay, "replay", ("#title", "#info", "#text", "#answer", "#rulings li"),
            ("#title", "#info", "#text", "#answer", "#curves"), ("#title", "#text", "#rulings li"),
            scrolls=True,
        )  # fmt: skip
    # the printed stats page, from the record
    from grace_arena.io.stats_report import html_stats, load_event_stats

    engine = make_engine(db_url)
    try:
        html = html_stats(*load_event_stats(engine, "night"))
    finally:
        engine.dispose()
    stats = pages(SMALL)
    stats.set_content(html)
    expect(stats.locator("h1")).to_have_text("Night")
    # (a table wider than a phone scrolls sideways in its own box, which takes the keyboard's
    # focus: WCAG's reflow makes an exception of data tables; the page itself is not wider)
    check_everything(stats, "stats", ("h1", "h2", "p.key"), ("h1", "p.key"),
                     ("h1", "h2", "td.l"), scrolls=True)  # fmt: skip
    assert "Powers" not in stats.content(), "an ACF event's stats show powers"


def test_a_phone_whose_team_has_played_all_its_matches_is_thanked_not_told_to_wait(tmp_path, pages):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    teams = [TeamEntry("red", "Red"), TeamEntry("blue", "Blue"), TeamEntry("green", "Green")]
    make_event(db_url, teams=teams, rounds=2, rooms=("1",), tossups=1, fmt="round_robin")
    engine = make_engine(db_url)
    packet = load_packet(SAMPLE_PACKET_PATH)
    games = [pairing.Game(1, "1", 0, ("red", "blue")), pairing.Game(2, "1", 0, ("red", "green"))]
    plan = set_schedule(engine, "night", rooms=["1"], games=games,
                        rounds=[RoundPlan(r, packet.packet.id, (packet.tossups[0].id,))
                                for r in (1, 2)])  # fmt: skip
    engine.dispose()
    code = code_of(plan, "1")
    with event_server(db_url) as server:
        bo = pages(PHONE, is_mobile=True, has_touch=True)
        bo.goto(f"{server.http_url}/?code={code}")
        bo.get_by_label("Your name").fill("Bo")
        bo.get_by_role("button", name="Blue", exact=True).click()
        bo.get_by_role("button", name="Join").click()
        expect(bo.locator("#event-info")).to_have_text("Round 1 of 2 · Room 1")
        end_the_match_in(server, code)  # round 1 ends; the room goes on to Red vs Green
        expect(bo.locator("#wait-message")).to_have_text(
            "Blue has played all its matches: thank you!", timeout=10_000
        )
        expect(bo.locator("#wait-hint")).to_be_hidden()
        check_everything(bo, "phone-done", ("#wait-message", "#result"), ("#wait-message",),
                         ("#wait-message", "#result"), scrolls=True)  # fmt: skip
