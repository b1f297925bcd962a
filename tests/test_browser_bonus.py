"""A whole ACF match of 20 tossup–bonus cycles, played with real phones (headless Chromium):
each team's phone buzzes and types its answers, the controlling team's phone answers each bonus
part, the moderator rules; the scores on the phones, the moderator's and the record's replay
agree. The moderator here is a websocket client (the test checks each phone's screens);
``test_tui_acf_match`` plays the same match with the moderator's terminal UI."""

from __future__ import annotations

import pytest
from browser import PHONE, SCREENSHOTS
from live import LiveServer, display_url, moderator, two_teams
from playwright.sync_api import Page, expect

from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings

pytestmark = pytest.mark.slow


def _join(page: Page, server: LiveServer, code: str, team: str, name: str) -> None:
    page.goto(f"{server.http_url}/?code={code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name=team, exact=True).click()
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#me")).to_have_text(f"{name} · {team}")


def _type(page: Page, text: str) -> None:
    answer = page.get_by_label("Your answer")
    expect(answer).to_be_visible()
    answer.fill(text)
    answer.press("Enter")


def test_a_whole_acf_match_of_twenty_cycles_on_real_phones(tmp_path, pages):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    setup = two_teams(format="acf", reading_mode="screen", wpm=30, bonus_answer_time=None)
    # (the test's moderator acts far faster than a person: its messages are not rate-limited)
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup,
        rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    with LiveServer(settings) as server:
        mod = moderator(server)
        code = server.room().join_code
        phones = {"red": pages(PHONE, is_mobile=True, has_touch=True),
                  "blue": pages(PHONE, is_mobile=True, has_touch=True)}  # fmt: skip
        _join(phones["red"], server, code, "Red", "Ann")
        _join(phones["blue"], server, code, "Blue", "Bo")
        display = pages({"width": 1280, "height": 720})
        display.goto(display_url(server, code))
        expected = {"red": 0, "blue": 0}
        try:
            for cycle in range(20):
                team = "red" if cycle % 2 == 0 else "blue"
                other = "blue" if team == "red" else "red"
                mod.send(type="start_tossup")
                reply = mod.wait(
                    lambda m: (
                        m["type"] == "error"
                        or (m["type"] == "state" and m["match"]["phase"] == "reading")
                    )
                )
                assert reply["type"] == "state", (cycle, reply)
                mod.send(type="pause")
                mod.state(lambda s: s["match"]["paused"])
                mod.send(type="step", unit="clue")
                mod.state(lambda s: s["tossup"]["position"] >= 0)
                phone = phones[team]
                phone.get_by_role("button", name="Buzz", exact=True).tap()
                mod.state(lambda s, t=team: s["floor"] is not None and s["floor"]["team"] == t)
                dead = cycle % 5 == 4  # a neg, then the other team's wrong answer: no bonus
                _type(phone, "a wrong guess" if dead else "the answer")
                mod.state(lambda s: s["floor"] is not None and s["floor"]["answer"] is not None)
                if dead:
                    mod.send(type="rule", ruling="incorrect")
                    expected[team] -= 5  # (an interrupt: ACF's neg)
                    mod.state(lambda s, t=team: any(x["locked_out"] for x in s["teams"]))
                    phones[other].get_by_role("button", name="Buzz", exact=True).tap()
                    mod.state(lambda s, t=other: s["floor"] is not None and s["floor"]["team"] == t)
                    _type(phones[other], "also wrong")
                    mod.state(lambda s: s["floor"] is not None and s["floor"]["answer"] is not None)
                    mod.send(type="rule", ruling="incorrect")
                    # (no points: ACF negs only the first team to interrupt wrongly)
                    mod.state(lambda s: s["match"]["phase"] == "dead")
                    continue
                mod.send(type="rule", ruling="correct")
                expected[team] += 10  # ACF: no powers
                state = mod.state(lambda s: s["match"]["phase"] == "bonus")
                assert state["bonus"]["team"] == team
                if cycle == 0:  # the projector: the bonus as read, whose turn, the total
                    expect(display.locator("#text .bonus-part.current")).to_contain_text(
                        state["bonus"]["parts"][0]["text"]
                    )
                    expect(display.locator("#tossup-info")).to_contain_text("Bonus 1 · Red")
                    expect(display.locator("#banner")).to_contain_text("Red")
                    display.screenshot(path=str(SCREENSHOTS / "grace-arena-display-bonus.png"))
                for part in range(3):
                    expect(phone.locator("#status-title")).to_have_text("Bonus — your team's turn")
                    expect(phone.locator("#text .bonus-part.current")).to_contain_text(
                        state["bonus"]["parts"][part]["text"]
                    )
                    expect(phones[other].locator("#answer-form")).to_be_hidden()
                    _type(phone, f"part {part + 1}")
                    mod.state(lambda s: s["bonus"] is not None and s["bonus"]["answer"] is not None)
                    right = (cycle + part) % 3 != 0
                    mod.send(type="rule", ruling="correct" if right else "incorrect")
                    expected[team] += 10 if right else 0
                    if part < 2:
                        state = mod.state(lambda s, p=part: s["bonus"]["part"] == p + 1)
                mod.state(lambda s: s["match"]["phase"] == "answered" and s["bonus"]["done"])
                expect(phone.locator("#status-title")).to_have_text("Bonus over")
                if cycle == 0:
                    phone.screenshot(path=str(SCREENSHOTS / "grace-arena-bonus-over.png"))
            mod.send(type="end_match")
            final = mod.state(lambda s: s["match"]["phase"] == "ended")
            live = {t["id"]: t["score"] for t in final["teams"]}
            assert live == expected
            for name, phone in phones.items():
                scores = phone.locator("#scores li .score")
                expect(scores).to_have_text([str(expected["red"]), str(expected["blue"])])
                assert name in expected
            match_id = server.room().rm.id
        finally:
            mod.close()
    engine = make_engine(db_url)
    events = MatchStore(engine).events(match_id)
    engine.dispose()
    replayed = Match.replay(events)
    assert replayed.scores == expected
    assert len(replayed.state.game.bonuses_used) == 16  # 20 cycles, 4 dead
    assert [e.type for e in events].count("bonus_part_ruled") == 48


def test_a_phone_consults_the_model_and_abstains_with_its_buttons(tmp_path, pages):
    """Consult rules on a real phone: Consult shows the model's answer and confidence on the
    phone and the projector (and sends what was typed as the team's draft); Abstain scores the
    part at once."""
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    setup = two_teams(format="acf", reading_mode="screen", wpm=30, bonus_answer_time=None,
                      consult_model="tfidf")  # fmt: skip
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup,
        rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    with LiveServer(settings) as server:
        advice = server.room().match.config.consult.answers["b-lit-american-1"]
        mod = moderator(server)
        code = server.room().join_code
        phone = pages(PHONE, is_mobile=True, has_touch=True)
        other = pages(PHONE, is_mobile=True, has_touch=True)
        _join(phone, server, code, "Red", "Ann")
        _join(other, server, code, "Blue", "Bo")
        display = pages({"width": 1280, "height": 720})
        display.goto(display_url(server, code))
        try:
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            mod.send(type="step", unit="clue")
            mod.state(lambda s: s["tossup"]["position"] >= 0)
            phone.get_by_role("button", name="Buzz", exact=True).tap()
            mod.state(lambda s: s["floor"] is not None)
            _type(phone, "moby dick")
            mod.state(lambda s: s["floor"] is not None and s["floor"]["answer"] is not None)
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["match"]["phase"] == "bonus")
            detail = phone.locator("#status-detail")  # the stakes of each choice
            expect(detail).to_contain_text(
                "answer alone (15 if right), consult the model (then 10)"
            )
            expect(display.locator("#banner")).to_contain_text("after consulting 10")
            expect(other.get_by_role("button", name="Consult the model")).to_be_hidden()
            phone.get_by_label("Your answer").fill("hemingway")
            phone.get_by_role("button", name="Consult the model").tap()
            said = f"The model (tfidf) says “{advice[0].guess}”"
            expect(phone.locator("#consulted")).to_contain_text(said)
            expect(other.locator("#consulted")).to_contain_text(said)
            expect(display.locator("#banner")).to_contain_text(f"“{advice[0].guess}”")
            expect(phone.get_by_role("button", name="Consult the model")).to_be_hidden()
            shown = mod.state(lambda s: s["bonus"]["consulted"] is not None)["bonus"]
            assert shown["consulted"]["draft"] == "hemingway"  # what the team had typed
            phone.screenshot(path=str(SCREENSHOTS / "grace-arena-consulted.png"))
            _type(phone, "mark twain")
            mod.state(lambda s: s["bonus"]["answer"] == "mark twain")
            mod.send(type="rule", ruling="correct")
            mod.state(lambda s: s["bonus"]["part"] == 1)
            phone.get_by_role("button", name="Abstain").tap()
            state = mod.state(lambda s: s["bonus"]["part"] == 2)
            assert state["bonus"]["parts"][1]["choice"] == "abstain"
            expect(display.locator("#text")).to_contain_text("(abstained)")
            # no ✓ on the phone for an abstention: the team gave no answer
            expect(phone.locator("#text .bonus-part").nth(1)).to_contain_text("— abstained (+")
            expect(display.locator("#text")).to_contain_text("(after consulting the model)")
        finally:
            mod.close()
