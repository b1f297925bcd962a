"""The model players' view in a real browser: the confidence curve against the threshold on
the room display (live in an exhibition, after the tossup otherwise), the guess once the buzz
is ruled, and the replay page of a finished tossup.

A real server on a free port with the offline model player (tfidf, precomputed on the sample
packet when the match is made), a real moderator and a real player over websockets, the pages
in Debian's Chromium."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from browser import SCREENSHOTS
from live import Client, LiveServer, display_grant, display_url, moderator, player, projector_url
from live import new_match as _new_match
from playwright.sync_api import Page, expect

from grace_arena.protocol import TeamSetup

pytestmark = [
    pytest.mark.slow,
    # one server for the module's tests, without a match of its own
    pytest.mark.server(per_module=True, secret="modelview-tests", first_match=None),
]

PROJECTOR = {"width": 1280, "height": 720}
TEAMS = [
    TeamSetup(id="red", name="Red"),
    TeamSetup(id="model", name="Robo", kind="model", model="tfidf", threshold=0.3),
]


def new_match(server: LiveServer, **overrides: Any) -> tuple[int, str]:
    return _new_match(server, **{"teams": TEAMS, **overrides})


def model_tossup(server: LiveServer, match_id: int) -> tuple[str, int, int]:
    """A tossup on which the model buzzes after its first clue: its id, the model's buzz
    word, and how many steps the model has on it."""
    room = server.room(match_id)
    buzzes = room.match.config.team("model").buzzes
    for tossup in room.match.config.tossups:
        buzz = buzzes.get(tossup.id)
        if buzz is not None and buzz.word_index > tossup.clue_ends[0]:
            steps = room.trajectories["model"][tossup.id].steps
            return tossup.id, buzz.word_index, len(steps)
    raise AssertionError("the model buzzes after its first clue on no tossup")


def projector(pages) -> Page:
    return pages(PROJECTOR)


def fits(page: Page) -> None:
    """Nothing overflows the projector's 1280×720: no scrolling, the stage and the curves in
    sight."""
    width, height = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    assert width <= PROJECTOR["width"] and height <= PROJECTOR["height"], (width, height)
    for element in (".stage", "#curves"):
        box = page.locator(element).bounding_box()
        assert box is not None and box["y"] + box["height"] <= PROJECTOR["height"], element
        assert box["x"] + box["width"] <= PROJECTOR["width"], element


def last_word_in_sight(page: Page) -> None:
    """The text's last word is inside the text's box (the chart took room from it)."""
    text = page.locator("#text").bounding_box()
    word = page.locator("#text .w").last.bounding_box()
    assert text is not None and word is not None
    assert text["y"] <= word["y"] and word["y"] + word["height"] <= text["y"] + text["height"] + 1


def first_word_in_sight(page: Page) -> None:
    """The text's first word is below the banner and inside the text's box (not scrolled
    away)."""
    text = page.locator("#text").bounding_box()
    word = page.locator("#text .w").first.bounding_box()
    banner = page.locator("#banner").bounding_box()
    assert text is not None and word is not None and banner is not None
    assert banner["y"] + banner["height"] <= word["y"] and text["y"] <= word["y"] + 1


def step_clue(mod: Client) -> dict[str, Any]:
    mod.send(type="step", unit="clue")
    state = mod.wait(lambda m: m["type"] in ("state", "error"))
    assert state["type"] == "state", state
    return state


def start_paused(mod: Client, tossup_id: str) -> dict[str, Any]:
    mod.send(type="start_tossup", tossup_id=tossup_id)
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    return mod.state(lambda s: s["match"]["paused"])


def test_an_exhibition_draws_the_curve_live_and_the_guess_once_ruled(server, pages):
    # (a long name: the chart's caption takes two lines)
    robo = TEAMS[1].model_copy(update={"name": "Robo the Reader (a tfidf model)"})
    match_id, code = new_match(server, exhibition=True, teams=[TEAMS[0], robo])
    tossup_id, buzz_word, n_steps = model_tossup(server, match_id)
    page = projector(pages)
    mod = moderator(server, match_id)
    try:
        page.goto(display_url(server, code))
        expect(page.locator("#join-code")).to_have_text(code)
        start_paused(mod, tossup_id)
        state = step_clue(mod)  # the first clue: the model's first step is read
        guess_now = next(m["guess"] for m in state["models"] if m["team"] == "model")
        curves = page.locator("#curves")
        expect(curves).to_be_visible()
        expect(curves.locator("polyline.curve.main")).to_have_count(1)
        expect(curves.locator("circle.point")).to_have_count(1)
        expect(curves.locator("line.threshold")).to_have_count(1)
        expect(curves).to_contain_text("/ threshold 30%")
        assert guess_now is None or guess_now not in curves.inner_text()  # spoiler guard
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-display-exhibition.png"))
        fits(page)

        # clue by clue until the model buzzes: its guess hidden until the ruling
        floor = None
        for _ in range(40):
            state = step_clue(mod)
            if state["floor"] and state["floor"]["kind"] == "model":
                floor = state["floor"]
                break
        assert floor is not None and floor["word_index"] == buzz_word
        guess = floor["answer"]
        expect(page.locator("#banner")).to_contain_text("Robo")
        expect(curves).to_contain_text(f"buzzed at word {buzz_word + 1}")
        expect(curves.locator("line.buzz.model")).to_have_count(1)
        assert guess not in curves.inner_text()
        points = curves.locator("circle.point").count()
        assert 2 <= points < n_steps or points == n_steps  # the steps read so far

        mod.send(type="rule", ruling="correct")
        expect(curves).to_contain_text(f"“{guess}”")
        expect(curves.locator(".verdict.right")).to_have_text(" ✓")
        # the tossup is over: the whole trajectory, and a link to its replay
        expect(curves.locator("circle.point")).to_have_count(n_steps)
        expect(curves.get_by_role("link", name="Replay")).to_have_attribute(
            "href", f"/replay?match={match_id}&tossup=1&code={code}"
        )
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-display-trajectory.png"))
        fits(page)
        last_word_in_sight(page)
        # most of a long tossup read, its answer up, a caption of two lines: every word still
        # in sight, and a chart no lower than its least, with its 0 and 100% labels and the
        # model's buzz label clear of its curve's dots
        first_word_in_sight(page)
        chart = curves.locator("svg").bounding_box()
        assert chart is not None and chart["height"] >= 55, chart
        axis = curves.locator("text.axis").all_text_contents()
        assert "0%" in axis and "100%" in axis, axis
        label = curves.locator("text.buzz-label").bounding_box()
        for dot in curves.locator("circle.point").all():
            d = dot.bounding_box()
            assert not (
                d["x"] < label["x"] + label["width"] and label["x"] < d["x"] + d["width"]
                and d["y"] < label["y"] + label["height"] and label["y"] < d["y"] + d["height"]
            ), (label, d)  # fmt: skip
    finally:
        mod.close()


def test_by_default_the_display_shows_the_curve_only_once_the_tossup_is_over(server, pages):
    match_id, code = new_match(server)
    tossup_id, _, n_steps = model_tossup(server, match_id)
    page = projector(pages)
    mod = moderator(server, match_id)
    red = player(server, "red", "Ann", match_id)
    watcher = Client(server.ws_url)  # a display's view, as the page gets it
    try:
        watcher.send(
            type="hello", role="display", join_code=code, token=display_grant(server, code)
        )
        watcher.wait("welcome")
        page.goto(display_url(server, code))
        expect(page.locator("#join-code")).to_have_text(code)
        start_paused(mod, tossup_id)
        step_clue(mod)
        step_clue(mod)
        # the reading goes on: no curve on the display, none in its state or on the phone
        watcher.state(lambda s: s["tossup"] and s["tossup"]["position"] > 0)
        assert all(m["curves"] is None for m in watcher.received if m["type"] == "state")
        red.state(lambda s: s["tossup"] and s["tossup"]["position"] > 0)
        assert all(m.get("curves") is None for m in red.received if m["type"] == "state")
        expect(page.locator("#text")).not_to_be_empty()
        assert page.locator("#curves").is_hidden()

        red.send(type="buzz", client_time=time.time())
        mod.state(lambda s: s["floor"] is not None)
        mod.send(type="rule", ruling="correct")
        # over: the whole trajectory with the model's guess where the reading stopped
        curves = page.locator("#curves")
        expect(curves).to_be_visible()
        expect(curves.locator("circle.point")).to_have_count(n_steps)
        expect(curves.locator("line.threshold")).to_have_count(1)
        expect(curves.locator("line.buzz.human.correct")).to_have_count(1)
        expect(curves).to_contain_text("did not buzz")
        last = watcher.state(lambda s: s["curves"] is not None)["curves"]
        assert last["over"] and len(last["curves"][0]["points"]) == n_steps
        assert all(m.get("curves") is None for m in red.received if m["type"] == "state")
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-display-after-tossup.png"))
        fits(page)
        last_word_in_sight(page)
        first_word_in_sight(page)
        # a chart of a readable height, with its axis labels and the buzz's label on it
        chart = curves.locator("svg").bounding_box()
        assert chart is not None and chart["height"] >= 80, chart
        assert curves.locator("text.axis").count() >= 4  # 0 and 100%, the first and last word
        expect(curves.locator("text.buzz-label")).to_have_count(1)
    finally:
        watcher.close()
        red.close()
        mod.close()


def test_the_replay_page_shows_a_finished_tossup_and_refuses_one_under_way(server, pages):
    # a name that looks like markup is shown as written, never made into elements
    robo = TEAMS[1].model_copy(update={"name": "<i>Robo</i>"})
    match_id, code = new_match(server, teams=[TEAMS[0], robo])
    tossup_id, _, n_steps = model_tossup(server, match_id)
    mod = moderator(server, match_id)
    red = player(server, "red", "Ann", match_id)
    page = projector(pages)
    try:
        start_paused(mod, tossup_id)
        step_clue(mod)
        # under way: refused, saying why
        page.goto(f"{server.http_url}/replay?match={match_id}&tossup=1&code={code}")
        expect(page.locator("#message")).to_contain_text("still being played")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(
                f"{server.http_url}/api/replay?match={match_id}&tossup=1&code={code}"
            )
        assert refused.value.code == 409

        red.send(type="buzz", client_time=time.time())
        mod.state(lambda s: s["floor"] is not None)
        mod.send(type="rule", ruling="incorrect")
        mod.state(lambda s: s["floor"] is None)
        floor = None
        for _ in range(40):
            state = step_clue(mod)
            if state["floor"] and state["floor"]["kind"] == "model":
                floor = state["floor"]
                break
        assert floor is not None
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s: s["match"]["phase"] == "answered")

        page.goto(f"{server.http_url}/replay?match={match_id}&tossup=1&code={code}")
        expect(page.locator("#title")).to_have_text(server.room(match_id).match.config.title)
        expect(page.locator("#text .mark")).to_have_count(2)
        expect(page.locator("#text .mark.incorrect")).to_contain_text("Red")
        expect(page.locator("#text .mark.model.correct")).to_have_text("◆ <i>Robo</i>")
        expect(page.locator("#curves .trajectory-line strong")).to_have_text("<i>Robo</i>")
        assert page.locator("i").count() == 0
        expect(page.locator("#answer")).to_contain_text("ANSWER:")
        expect(page.locator("#curves circle.point")).to_have_count(n_steps)
        expect(page.locator("#curves line.threshold")).to_have_count(1)
        expect(page.locator("#curves line.buzz")).to_have_count(2)
        expect(page.locator("#rulings li")).to_have_count(2)
        expect(page.locator("#rulings li").nth(0)).to_contain_text("Red — Ann")
        expect(page.locator("#rulings li").nth(0)).to_contain_text("incorrect")
        expect(page.locator("#rulings li").nth(1)).to_contain_text(f"“{floor['answer']}”")
        expect(page.locator("#rulings li").nth(1)).to_contain_text("correct +")
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-replay.png"))
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PROJECTOR["width"]
        box = page.locator("#curves svg").bounding_box()
        assert box is not None and box["x"] + box["width"] <= PROJECTOR["width"]
        # the bold words are the power part, and a line says so
        assert page.locator("#text .power").count() > 0
        expect(page.locator("#legend")).to_contain_text("Bold: the power part")
        # on a phone the buzzes' labels stay inside the chart, none across a curve's dots
        page.set_viewport_size({"width": 390, "height": 844})
        page.reload()
        expect(page.locator("#curves .buzz-label")).to_have_count(2)
        clear = page.evaluate(
            """() => {
          const chart = document.querySelector("#curves svg").getBoundingClientRect();
          const dots = [...document.querySelectorAll("#curves circle.point")]
            .map((d) => d.getBoundingClientRect());
          return [...document.querySelectorAll("#curves .buzz-label")].map((l) => {
            const r = l.getBoundingClientRect();
            const inside = r.left >= chart.left - 0.5 && r.right <= chart.right + 0.5;
            const hits = dots.some((d) => d.left < r.right && d.right > r.left
                                         && d.top < r.bottom && d.bottom > r.top);
            return [l.textContent, inside, hits];
          });
        }"""
        )
        assert all(inside and not hits for _, inside, hits in clear), clear

        # an unknown tossup or match: refused, saying so
        page.goto(f"{server.http_url}/replay?match={match_id}&tossup=9&code={code}")
        expect(page.locator("#message")).to_contain_text(f"match {match_id} has no tossup 9")
        page.goto(f"{server.http_url}/replay?match=99999&tossup=1&code={code}")
        expect(page.locator("#message")).to_contain_text("no match 99999 here with that join code")
        page.goto(f"{server.http_url}/replay?match={match_id}&tossup=1")  # (no code)
        expect(page.locator("#message")).to_contain_text("/replay?match=ID&tossup=N&code=CODE")
        page.goto(f"{server.http_url}/replay?match=abc")
        expect(page.locator("#message")).to_contain_text("/replay?match=ID&tossup=N&code=CODE")
    finally:
        red.close()
        mod.close()


@pytest.mark.parametrize("exhibition", [True, False])
def test_the_event_projector_draws_each_rooms_curve_as_the_display_may(tmp_path, pages, exhibition):
    from event_helpers import code_of, event_server, make_event, room_moderator
    from live import clients

    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    defaults = {"answer_time": None, "wpm": 30, "exhibition": exhibition}
    plan = make_event(db_url, rounds=1, defaults=defaults)
    with event_server(db_url) as server:
        room1 = code_of(plan, "1")  # Red vs Robo
        projector = projector_page = pages(PROJECTOR)
        with clients(room_moderator(server, room1)) as (mod,):
            projector_page.goto(projector_url(server, "night"))
            card = projector.locator("#rooms li").nth(0)
            expect(card).to_contain_text("Room 1")
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            step_clue(mod)
            step_clue(mod)
            if exhibition:  # live: the curve of the steps read, against the threshold
                expect(card.locator(".room-curves circle.point")).to_have_count(2)
                expect(card.locator(".room-curves line.threshold")).to_have_count(1)
                expect(card.locator(".trajectory-compact-line")).to_contain_text("Robo")
                expect(card.locator(".trajectory-compact-line")).to_contain_text("/ 50%")
            else:
                expect(card.locator(".room-match")).to_be_visible()
                projector.wait_for_timeout(500)  # the room's state arrived: still no curve
                assert card.locator(".room-curves svg").count() == 0
            mod.send(type="throw_out")
            mod.state(lambda s: s["match"]["phase"] == "thrown_out")
            # over: the whole trajectory in every mode
            steps = len(
                server.events.live_in(room1)
                .trajectories["robo"][server.events.live_in(room1).match.game.played[0]]
                .steps
            )
            expect(card.locator(".room-curves circle.point")).to_have_count(steps)
            # but no guess: room 2 reads the same tossup, and a model's right guess is its
            # answer (the room's own display shows it, to the room that read it)
            room = server.events.live_in(room1)
            guesses = {s.guess for s in room.trajectories["robo"][room.match.game.played[0]].steps}
            caption = card.locator(".trajectory-compact-line").inner_text()
            assert "Robo" in caption and not any(g and g in caption for g in guesses), caption
            projector.screenshot(
                path=str(SCREENSHOTS / f"grace-arena-event-projector-curves-{exhibition}.png")
            )
            width, height = projector.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            assert width <= 1280 and height <= 720, (width, height)
            box = card.locator(".room-curves").bounding_box()
            assert box is not None and box["y"] + box["height"] <= 720


def test_a_buzz_before_the_model_s_first_clue_says_it_had_no_guess_yet(server, pages):
    """The room stops before the model read a whole clue: the caption says it had no guess
    (so no confidence) at that word, and the curve beyond it is marked as not read."""
    match_id, code = new_match(server)
    tossup_id, _, _ = model_tossup(server, match_id)
    page = projector(pages)
    mod = moderator(server, match_id)
    red = player(server, "red", "Ann", match_id)
    try:
        page.goto(display_url(server, code))
        expect(page.locator("#join-code")).to_have_text(code)
        start_paused(mod, tossup_id)
        mod.send(type="step", unit="word")
        mod.state(lambda s: s["tossup"]["position"] >= 0)
        red.send(type="buzz", client_time=time.time())
        floor = mod.state(lambda s: s["floor"] is not None)["floor"]
        mod.send(type="rule", ruling="correct")
        curves = page.locator("#curves")
        expect(curves).to_be_visible()
        line = curves.locator(".trajectory-line")
        expect(line).to_contain_text(
            f"logit unknown at word {floor['word_index'] + 1}: no guess before its first clue"
        )
        expect(line).to_contain_text("did not buzz")
        expect(curves.locator("rect.unread")).to_have_count(1)
        expect(curves.locator("text.unread-label")).to_have_text("not read to the room")
        fits(page)
    finally:
        red.close()
        mod.close()
