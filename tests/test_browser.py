"""The buzzer page and the display page in a real browser (headless Chromium via Playwright).

A real server runs on a free loopback port (``live.LiveServer``); the moderator is a real
websocket client; the players are pages on a phone-sized viewport. Debian's ``chromium`` is
used (Playwright's own browser download is not available here). Without it these tests skip,
except in CI (``CI`` set), where they must run: ``.ci/run`` installs it.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from browser import SCREENSHOTS
from live import Client, LiveServer, clients, display_url, moderator, new_match, player, two_teams
from playwright.sync_api import Page, expect
from test_browser_results import assert_fits

from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.protocol import TeamSetup
from grace_arena.server.app import Settings

pytestmark = [
    pytest.mark.slow,
    # one server for the module's tests, its first match read slowly
    pytest.mark.server(per_module=True, secret="browser-tests", first_match=two_teams(wpm=30)),
]


# ---------------------------------------------------------------------------------------------
# fixtures


def start_paused(mod: Client, tossup_id: str | None = None, clues: int = 1) -> dict[str, Any]:
    """Start a tossup, stop the automatic reading, reveal ``clues`` clues by hand."""
    mod.send(type="start_tossup", tossup_id=tossup_id)
    mod.state(lambda s: s["match"]["phase"] == "reading")
    mod.send(type="pause")
    state = mod.state(lambda s: s["match"]["paused"])
    for _ in range(clues):
        mod.send(type="step", unit="clue")
        state = mod.wait(lambda m: m["type"] == "state" or m["type"] == "error")
        assert state["type"] == "state", state
    return state


def join(page: Page, server: LiveServer, code: str, team: str, name: str) -> str:
    """Open the join link, pick a team and a name; returns the player's id."""
    page.goto(f"{server.http_url}/?code={code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=team, exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text(f"{name} · {team}")
    token = page.evaluate(f"localStorage.getItem('grace-arena:token:{code}')")
    assert token, "the player token was not kept"
    return token.rpartition(".")[0]


def status(page: Page):
    return page.locator("#status-title")


def buzz_button(page: Page):
    return page.get_by_role("button", name="Buzz", exact=True)


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"grace-arena-{name}.png"), full_page=True)


def wait_for_floor(mod: Client, player_id: str) -> dict[str, Any]:
    """The moderator's first state in which ``player_id`` has the floor."""
    return mod.state(lambda s: s["floor"] is not None and s["floor"]["player"] == player_id)


def accepted_buzz(mod: Client, buzz_id: int) -> dict[str, Any]:
    for message in reversed(mod.received):
        event = message.get("event") or {}
        if event.get("type") == "buzz_accepted" and event["buzz_id"] == buzz_id:
            return event
    raise AssertionError(f"no buzz_accepted event for buzz {buzz_id}")


# ---------------------------------------------------------------------------------------------
# the buzzer page


def test_join_then_buzz_with_the_button_and_with_the_space_bar(server, phone):
    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    try:
        me = join(phone, server, code, "Red", "Ann")
        expect(status(phone)).to_have_text("Waiting for the first tossup")
        expect(buzz_button(phone)).to_be_disabled()
        shot(phone, "buzzer-waiting")

        start_paused(mod)
        expect(status(phone)).to_have_text("Ready")
        expect(buzz_button(phone)).to_be_enabled()
        shot(phone, "buzzer-ready")
        time.sleep(0.5)  # let a few pings through, so the press time can be converted
        buzz_button(phone).tap()
        floor = wait_for_floor(mod, me)["floor"]
        expect(status(phone)).to_have_text("You have the floor!")
        expect(buzz_button(phone)).to_be_disabled()
        shot(phone, "buzzer-floor")
        # The page answered the server's pings and sent its press time: the buzz is auditable.
        timing = accepted_buzz(mod, floor["buzz_id"])["timing"]
        assert timing["client_press"] is not None
        assert timing["clock_offset"] is not None and abs(timing["clock_offset"]) < 1.0
        assert timing["rtt"] is not None and timing["rtt"] < 1.0

        mod.send(type="rule", ruling="correct")
        expect(status(phone)).to_have_text("You got it!")
        expect(phone.locator("#scores li.mine .score")).to_have_text(re.compile(r"^1[05]$"))

        start_paused(mod)
        expect(status(phone)).to_have_text("Ready")
        phone.keyboard.press("Space")
        wait_for_floor(mod, me)
        expect(status(phone)).to_have_text("You have the floor!")
    finally:
        mod.close()


def test_a_neg_locks_the_team_out(server, phone):
    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    try:
        me = join(phone, server, code, "Blue", "Bo")
        start_paused(mod)
        expect(buzz_button(phone)).to_be_enabled()
        phone.keyboard.press("Space")
        wait_for_floor(mod, me)
        mod.send(type="rule", ruling="incorrect")
        mod.state(lambda s: s["match"]["phase"] == "reading" and s["floor"] is None)
        expect(status(phone)).to_have_text("Locked out")
        expect(buzz_button(phone)).to_be_disabled()
        expect(phone.locator("#scores li.mine .score")).to_have_text("−5")
        shot(phone, "buzzer-locked-out")
        # The space bar does nothing now: no buzz reaches the server.
        phone.keyboard.press("Space")
        time.sleep(0.5)
        mod.drain(0.2)
        buzzes = [
            m["event"]
            for m in mod.received
            if m["type"] == "event" and m["event"]["type"].startswith("buzz_")
        ]
        assert len(buzzes) == 1
    finally:
        mod.close()


# Test instrumentation: hold the messages the server sends to the page (``__hold()``) and hand
# them over later (``__release()``), as a slow network would: a press made before the page
# heard of a rival's buzz.
HOLD_MESSAGES = """
(() => {
  const Native = window.WebSocket;
  let held = null;
  window.__hold = () => { held = held || []; };
  window.__release = () => { const q = held || []; held = null; q.forEach((f) => f()); };
  window.WebSocket = class extends Native {
    set onmessage(handler) {
      super.onmessage = (ev) => {
        if (held) held.push(() => handler.call(this, ev));
        else handler.call(this, ev);
      };
    }
    get onmessage() { return super.onmessage; }
  };
})();
"""


def test_losing_the_race_shows_the_margin(server, phone):
    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    rival = player(server, "red", "Rex", match_id)
    phone.add_init_script(HOLD_MESSAGES)
    try:
        join(phone, server, code, "Blue", "Bea")
        start_paused(mod)
        expect(status(phone)).to_have_text("Ready")
        phone.evaluate("window.__hold()")  # the rival's buzz has not reached the phone ...
        rival.send(type="buzz", client_time=time.time())
        wait_for_floor(mod, rival.joined["player"])
        buzz_button(phone).tap()  # ... when Bea presses
        mod.wait(
            lambda m: (
                m["type"] == "event"
                and m["event"]["type"] == "buzz_refused"
                and m["event"]["reason"] == "lost_race"
            )
        )
        phone.evaluate("window.__release()")
        expect(status(phone)).to_have_text("Lost the race")
        expect(phone.locator("#status-detail")).to_contain_text(
            re.compile(r"by ([\d,]+|under 1) ms")
        )
        expect(phone.locator("#status")).to_have_attribute("data-state", "lost")
        shot(phone, "buzzer-lost-race")
    finally:
        rival.close()
        mod.close()


def test_the_other_teams_button_is_off_while_a_ruling_is_awaited(server, phone):
    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    rival = player(server, "red", "Rex", match_id)
    try:
        join(phone, server, code, "Blue", "Bea")
        start_paused(mod)
        expect(buzz_button(phone)).to_be_enabled()
        rival.send(type="buzz", client_time=time.time())
        wait_for_floor(mod, rival.joined["player"])
        expect(status(phone)).to_have_text("Red: Rex buzzed")
        expect(phone.locator("#status-detail")).to_have_text("Wait for the ruling")
        expect(buzz_button(phone)).to_be_disabled()  # not a red button nobody may press
        shot(phone, "buzzer-other-team-buzzed")
        mod.send(type="rule", ruling="incorrect")
        expect(status(phone)).to_have_text("Ready")  # the floor is open again
        expect(buzz_button(phone)).to_be_enabled()
    finally:
        rival.close()
        mod.close()


def test_the_phone_names_a_model_player_once(server, phone):
    teams = [
        TeamSetup(id="red", name="Red"),
        TeamSetup(id="model", name="Model (tfidf)", kind="model", model="tfidf"),
    ]
    match_id, code = new_match(server, teams=teams)
    model_team = server.room(match_id).match.config.team("model")
    tossup_id = next(tid for tid, buzz in model_team.buzzes.items() if buzz.word_index > 3)
    mod = moderator(server, match_id)
    try:
        join(phone, server, code, "Red", "Ann")
        start_paused(mod, tossup_id, clues=0)
        floor = None
        for _ in range(40):  # clue by clue until the model buzzes
            mod.send(type="step", unit="clue")
            state = mod.wait(lambda m: m["type"] in ("state", "error"))
            if state["type"] == "state" and state["floor"] and state["floor"]["kind"] == "model":
                floor = state["floor"]
                break
        assert floor is not None, "the model never buzzed"
        expect(status(phone)).to_have_text("Model (tfidf) buzzed")
        mod.send(type="rule", ruling="correct")
        expect(status(phone)).to_have_text("Model (tfidf) got it")
        expect(phone.locator("#status-detail")).to_contain_text(f"“{floor['answer']}”")
    finally:
        mod.close()


def test_a_reload_comes_back_as_the_same_player(server, phone):
    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    try:
        me = join(phone, server, code, "Red", "Ann")
        phone.reload()
        expect(phone.locator("#me")).to_have_text("Ann · Red")
        expect(phone.locator("#join-view")).to_be_hidden()
        start_paused(mod)
        expect(status(phone)).to_have_text("Ready")
        buzz_button(phone).tap()
        state = wait_for_floor(mod, me)  # the buzz came from the same player
        red = next(t for t in state["teams"] if t["id"] == "red")
        assert red["players"] == {me: "Ann"}  # no second join
    finally:
        mod.close()


def drop_player_connections(server: LiveServer, match_id: int) -> None:
    """Close every player's websocket from the server's side, as a Wi-Fi drop or a proxy
    restart would (close code 1012: service restart)."""
    room = server.room(match_id)
    loop = room.loop  # the server thread's event loop
    for conn in [c for c in room.connections if c.role == "player"]:
        asyncio.run_coroutine_threadsafe(conn.ws.close(code=1012), loop).result(5)


def test_a_dropped_connection_reconnects_by_itself_as_the_same_player(server, phone):
    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    try:
        me = join(phone, server, code, "Blue", "Bo")
        drop_player_connections(server, match_id)
        start_paused(mod)  # changes while the page is away
        expect(status(phone)).to_have_text("Ready")  # back, with a fresh state
        buzz_button(phone).tap()
        state = wait_for_floor(mod, me)
        blue = next(t for t in state["teams"] if t["id"] == "blue")
        assert blue["players"] == {me: "Bo"}
    finally:
        mod.close()


def test_a_buzz_held_with_the_match_says_buzzing_until_it_is_taken(server, phone):
    """Another process holds the record locked for 6 s when the player buzzes: the match is
    held, the buzz waits in the server's queue, and the page says "Buzzing…" (it used to say
    "Ready" again after 3 s, as if the press were lost) until it has the floor."""
    from processes import hold_lock

    match_id, code = new_match(server)
    mod = moderator(server, match_id)
    try:
        me = join(phone, server, code, "Red", "Hal")
        start_paused(mod)
        expect(buzz_button(phone)).to_be_enabled()
        path = server.arena.engine.url.database
        locker = hold_lock(path, 6.0)
        try:
            buzz_button(phone).tap()
            expect(phone.locator("#conn")).to_contain_text("Match held", timeout=5_000)
            time.sleep(3.5)  # past the page's 3 s for an unanswered buzz
            expect(status(phone)).to_have_text("Buzzing…")
        finally:
            locker.wait(30)
        expect(status(phone)).to_have_text("You have the floor!", timeout=15_000)
        wait_for_floor(mod, me)
    finally:
        mod.close()


def test_a_server_that_stops_says_so_on_the_phone_until_it_answers_again(tmp_path, phone):
    """Stopped with Ctrl-C, the server tells each phone; the page keeps saying it (a close
    that follows used to put "Connection lost" over it) and shows nothing to act on."""
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'record.db'}",
        packets=[SAMPLE_PACKET_PATH],
        secret="browser-tests",
        first_match=two_teams(wpm=30),
    )
    with LiveServer(settings) as live:
        join(phone, live, live.room().join_code, "Red", "Sue")
        expect(status(phone)).to_have_text("Waiting for the first tossup")
    expect(phone.locator("#conn")).to_contain_text("The server stopped")
    expect(status(phone)).to_have_text("Waiting for the server")
    expect(buzz_button(phone)).to_be_disabled()
    time.sleep(2.0)  # reconnection attempts fail meanwhile: it still says why
    expect(phone.locator("#conn")).to_contain_text("The server stopped")


def test_screen_mode_shows_the_text_and_an_answer_box(server, phone):
    match_id, code = new_match(server, reading_mode="screen")
    mod = moderator(server, match_id)
    try:
        me = join(phone, server, code, "Red", "Ann")
        expect(phone.locator("#answer-form")).to_be_hidden()
        state = start_paused(mod)
        words = state["tossup"]["words"][: state["tossup"]["position"] + 1]
        expect(phone.locator("#text")).to_have_text(" ".join(words))
        buzz_button(phone).tap()
        wait_for_floor(mod, me)
        answer = phone.get_by_label("Your answer")
        expect(answer).to_be_visible()
        expect(answer).to_be_focused()
        shot(phone, "buzzer-screen-answer")
        answer.fill("Moby Dick")
        answer.press("Enter")
        given = mod.wait(
            lambda m: m["type"] == "event" and m["event"]["type"] == "answer_given", timeout=10
        )
        assert given["event"]["text"] == "Moby Dick"
        assert given["event"]["player"] == me
        expect(phone.locator("#answer-form")).to_be_hidden()
        expect(phone.locator("#status-detail")).to_contain_text("waiting for the ruling")
        mod.send(type="rule", ruling="correct")
        expect(status(phone)).to_have_text("You got it!")
        expect(phone.locator("#text .answer-line")).to_contain_text("Answer:")
        shot(phone, "buzzer-screen-answered")
    finally:
        mod.close()


# ---------------------------------------------------------------------------------------------
# the display page


def test_display_shows_the_banner_and_the_model_guess_after_the_ruling(server, browser):
    teams = [
        TeamSetup(id="red", name="Red"),
        TeamSetup(id="model", name="Model (tfidf)", kind="model", model="tfidf"),
    ]
    match_id, code = new_match(server, teams=teams)
    room = server.room(match_id)
    model_team = room.match.config.team("model")
    # a tossup on which the model buzzes, but not at once
    tossup_id = next(tid for tid, buzz in model_team.buzzes.items() if buzz.word_index > 3)

    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(10_000)
    mod = moderator(server, match_id)
    red = player(server, "red", "Ann", match_id)
    try:
        page.goto(display_url(server, code))
        expect(page.locator("#join-code")).to_have_text(code)
        expect(page.locator("#qr")).to_have_attribute("src", f"/api/join/{code}/qr.svg")
        page.wait_for_function("document.getElementById('qr').naturalWidth > 0")  # it loaded

        mod.send(type="start_tossup", tossup_id=tossup_id)
        mod.state(lambda s: s["match"]["phase"] == "reading")
        mod.send(type="pause")
        mod.state(lambda s: s["match"]["paused"])
        mod.send(type="step", unit="word")
        mod.state(lambda s: s["tossup"]["position"] >= 0)
        red.send(type="buzz", client_time=time.time())
        wait_for_floor(mod, red.joined["player"])
        expect(page.locator("#banner")).to_contain_text("Red — Ann buzzed")
        mod.send(type="rule", ruling="incorrect")
        mod.state(lambda s: s["floor"] is None)

        # reveal clue by clue until the model buzzes
        floor = None
        for _ in range(40):
            mod.send(type="step", unit="clue")
            state = mod.wait(lambda m: m["type"] in ("state", "error"))
            if state["type"] == "state" and state["floor"] and state["floor"]["kind"] == "model":
                floor = state["floor"]
                break
        assert floor is not None, "the model never buzzed"
        guess = floor["answer"]
        assert guess, "the moderator sees the model's guess"
        expect(page.locator("#banner")).to_contain_text("Model (tfidf)")
        expect(page.locator("#banner")).to_contain_text("buzzed")
        assert guess not in page.locator("#banner").inner_text()  # hidden until ruled
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-display-buzz.png"))
        assert page.locator("#answer").is_hidden()

        mod.send(type="rule", ruling="correct")
        expect(page.locator("#banner")).to_contain_text(f"guessed “{guess}”")
        expect(page.locator("#banner")).to_contain_text("correct")
        expect(page.locator("#answer")).to_contain_text("ANSWER:")
        expect(page.locator("#scores")).to_contain_text("Model (tfidf)")
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-display.png"))
    finally:
        red.close()
        mod.close()
        context.close()


def test_display_keeps_the_join_url_and_qr_code_in_sight_at_1280x720(server, browser):
    colours = ("Red", "Blue", "Green", "Gold")
    teams = [TeamSetup(id=c.lower(), name=c) for c in colours]
    match_id, code = new_match(server, teams=teams)
    mod = moderator(server, match_id)
    players = [player(server, c.lower(), f"{c} player", match_id) for c in colours]
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(display_url(server, code))
        # the join URL as text, the server's (here its loopback address: the test's server)
        expect(page.locator("#join-url")).to_have_text(f"{server.http_url[7:]}/?code={code}")
        start_paused(mod, clues=0)
        mod.send(type="step", unit="word")
        mod.state(lambda s: s["tossup"]["position"] >= 0)
        # every team buzzes and negs in turn; the three others lose a race to the first
        first, *others = players
        first.send(type="buzz", client_time=time.time())
        wait_for_floor(mod, first.joined["player"])
        for rival in others:
            rival.send(type="buzz", client_time=time.time())
        for _ in others:
            mod.wait(lambda m: m["type"] == "event" and m["event"]["type"] == "buzz_refused")
        mod.send(type="rule", ruling="incorrect")
        for rival in others:
            mod.state(lambda s: s["floor"] is None)
            rival.send(type="buzz", client_time=time.time())
            wait_for_floor(mod, rival.joined["player"])
            mod.send(type="rule", ruling="incorrect")
        # the latest buzzes that fit, whole, and how many earlier ones are left out
        log = page.locator("#log li")
        expect(log.last).to_contain_text("Gold player")
        page.wait_for_timeout(200)
        shown = log.all_inner_texts()
        earlier = re.fullmatch(r"… (\d+) earlier", shown[0])
        assert (int(earlier.group(1)) if earlier else 0) + len(shown) - bool(earlier) == 7, shown
        assert_fits(page, "#log li", what="the buzz list")
        page.screenshot(path=str(SCREENSHOTS / "grace-arena-display-many-buzzes.png"))
        stage = page.locator(".stage").bounding_box()  # what is below it is cut off
        assert stage["y"] + stage["height"] <= 720
        for element in ("#qr", "#join-code", "#join-url"):
            box = page.locator(element).bounding_box()
            assert box is not None and box["height"] > 0, element
            assert box["y"] >= 0 and box["y"] + box["height"] <= stage["y"] + stage["height"], (
                element,
                box,
            )
        qr = page.locator("#qr").bounding_box()
        assert qr["width"] >= 120  # still scannable from the room
    finally:
        for p in players:
            p.close()
        mod.close()
        context.close()


def test_the_phone_s_end_says_the_result_once_and_writes_a_negative_score_with_a_minus(
    server, phone
):
    match_id, code = new_match(server, answer_time=1)
    with clients(moderator(server, match_id)) as (mod,):
        me = join(phone, server, code, "Blue", "Bo")
        start_paused(mod, clues=1)
        buzz_button(phone).tap()
        wait_for_floor(mod, me)
        mod.send(type="rule", ruling="incorrect")  # a neg: Blue −5
        mod.state(lambda s: s["match"]["phase"] in ("reading", "awaiting"))
        mod.send(type="set_pace", wpm=1200)
        mod.send(type="resume")
        mod.state(lambda s: s["match"]["phase"] == "dead", timeout=30)
        mod.send(type="end_match")
        mod.state(lambda s: s["match"]["phase"] == "ended")
        # the result is the title, said once; the scores with a minus sign; no tossup line
        expect(status(phone)).to_have_text("Red won 0 to −5 (ended after 1 of 26 tossups)")
        said = status(phone).inner_text()
        expect(phone.locator("#result")).to_be_hidden()
        expect(phone.locator("#scores li.mine .score")).to_have_text("−5")
        expect(phone.locator("#tossup-info")).to_have_text("GRACE Arena Sample Packet")
        # (seen once; #announce, outside main, says it once to a screen reader)
        assert phone.locator("main").inner_text().count(said) == 1


def test_a_match_s_end_names_the_winner_on_the_phone_and_the_display(server, phone, pages):
    match_id, code = new_match(server)
    display = pages({"width": 1280, "height": 720})
    with clients(moderator(server, match_id)) as (mod,):
        phone.goto(f"{server.http_url}/?code={code}")  # the join page names the match
        expect(phone.locator("#join-where")).to_have_text("GRACE Arena Sample Packet")
        me = join(phone, server, code, "Blue", "Bo")
        display.goto(display_url(server, code))
        start_paused(mod, clues=0)
        buzz_button(phone).tap()
        wait_for_floor(mod, me)
        mod.send(type="rule", ruling="incorrect")
        mod.state(lambda s: s["match"]["phase"] in ("reading", "awaiting"))
        expect(phone.locator("#points")).to_have_text(re.compile(r"^(−5|no points) — you$"))
        mod.send(type="throw_out")
        mod.state(lambda s: s["match"]["phase"] == "thrown_out")
        mod.send(type="end_match")
        mod.state(lambda s: s["match"]["phase"] == "ended")
        # a tie at 0 after a throw-out; the display does not show the last buzz
        result = "Red and Blue tied 0–0 (ended after 1 of 26 tossups)"
        expect(status(phone)).to_have_text(result)
        expect(phone.locator("#status-detail")).to_have_text(
            "Match over · 1 tossup read · thanks for playing!"
        )
        expect(display.locator("#banner")).to_contain_text(result)
        expect(display.locator("#banner")).not_to_contain_text("incorrect")
        expect(display.locator(".final-scores li.winner")).to_have_count(0)


def test_after_an_undo_the_display_s_banner_and_buzz_list_say_the_same(server, pages):
    """Prompt, correct, undo: the floor is the prompted buzz's again; the banner says so and
    the buzz list keeps its prompt."""
    match_id, code = new_match(server)
    display = pages({"width": 1280, "height": 720})
    mod = moderator(server, match_id)
    red = player(server, "red", "Ann", match_id)
    try:
        display.goto(display_url(server, code))
        expect(display.locator("#join-code")).to_have_text(code)
        start_paused(mod)
        red.send(type="buzz", client_time=time.time())
        wait_for_floor(mod, red.joined["player"])
        mod.send(type="rule", ruling="prompt")
        mod.state(lambda s: s["match"]["phase"] == "prompted")
        expect(display.locator("#banner")).to_contain_text("(prompt)")
        expect(display.locator("#log li").first).to_contain_text("prompt")
        mod.send(type="rule", ruling="correct")
        mod.state(lambda s: s["match"]["phase"] == "answered")
        expect(display.locator("#banner")).to_contain_text("correct")
        mod.send(type="undo")
        state = mod.state(lambda s: s["match"]["phase"] != "answered")
        assert state["match"]["phase"] == "prompted" and state["floor"] is not None
        expect(display.locator("#banner")).to_contain_text("(prompt)")
        expect(display.locator("#log li").first).to_contain_text("prompt")
        expect(display.locator("#log li").first).not_to_contain_text("correct")
    finally:
        red.close()
        mod.close()


def test_the_display_s_final_scores_of_three_teams_fit_a_1280x720_screen(server, pages):
    from test_browser_results import assert_fits

    teams = [
        TeamSetup(id="red", name="Red"),
        TeamSetup(id="blue", name="Blue"),
        TeamSetup(id="model", name="Model (tfidf)", kind="model", model="tfidf"),
    ]
    match_id, code = new_match(server, teams=teams)
    display = pages({"width": 1280, "height": 720})
    mod = moderator(server, match_id)
    try:
        display.goto(display_url(server, code))
        expect(display.locator("#join-code")).to_have_text(code)
        start_paused(mod)
        mod.send(type="throw_out")
        mod.state(lambda s: s["match"]["phase"] == "thrown_out")
        mod.send(type="end_match")
        mod.state(lambda s: s["match"]["phase"] == "ended")
        expect(display.locator(".final-scores li")).to_have_count(3)
        for size in ({"width": 1280, "height": 720}, {"width": 1920, "height": 1080}):
            display.set_viewport_size(size)
            display.wait_for_timeout(100)
            assert_fits(display, "#banner", ".final-scores li", what=f"the end at {size}")
    finally:
        mod.close()
