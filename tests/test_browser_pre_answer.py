"""QANTA 2026's pre-answer on a real phone (headless Chromium) in a live room: the team asks for
the model's answer, each of its players writes their own on their phone before it is
revealed (the phone's box says so), the model's answer then shows, and the team's final
answer is recorded as before. The other team sees no pre-answer; the record replays to the
same scores and reads the pre-answers back with the team's choice."""

from __future__ import annotations

import json

from browser import PHONE, SCREENSHOTS
from live import LiveServer, clients, moderator, player, two_teams, win_first_word
from playwright.sync_api import expect

from grace_arena.core.consult import part_choices
from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.record.db import make_engine
from grace_arena.record.store import MatchStore
from grace_arena.server.app import Settings


def test_each_player_writes_an_answer_before_the_models_is_revealed(tmp_path, pages):
    db_url = f"sqlite:///{tmp_path / 'record.db'}"
    setup = two_teams(format="acf", reading_mode="screen", bonus_answer_time=60,
                      consult_model="tfidf", consult_pre_answer=3)  # fmt: skip
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup,
        rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    with LiveServer(settings) as server:
        config = server.room().match.config
        assert config.rules.consult.pre_answer_time == 3
        advice = config.consult.answers["b-lit-american-1"]
        mod = moderator(server)
        code = server.room().join_code
        phone = pages(PHONE, is_mobile=True, has_touch=True)
        phone.goto(f"{server.http_url}/?code={code}")
        phone.get_by_label("Your name").fill("Ann")
        phone.get_by_role("button", name="Red", exact=True).click()
        phone.get_by_role("button", name="Join").click()
        expect(phone.locator("#me")).to_have_text("Ann · Red")
        al, bo = player(server, "red", "Al"), player(server, "blue", "Bo")
        with clients(mod, al, bo):
            win_first_word(mod, al, "Moby Dick")
            mod.state(lambda s: s["match"]["phase"] == "bonus")
            # paused, the window's clock stands still: the test writes at its own pace
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            phone.get_by_role("button", name="Consult the model").tap()
            window = mod.state(lambda s: s["bonus"]["pre_answer"] is not None)["bonus"]
            assert window["consulted"] is None and window["pre_answer"]["players"] == 2
            assert window["pre_answer"]["seconds_left"] == 3
            detail = phone.locator("#status-detail")
            expect(detail).to_contain_text("write your own answer before the model's is revealed")
            expect(phone.get_by_role("button", name="Consult the model")).to_be_hidden()
            expect(phone.get_by_role("button", name="Abstain")).to_be_hidden()
            own = phone.get_by_label("Your own answer, before the model's")
            own.fill("hemingway")
            phone.screenshot(path=str(SCREENSHOTS / "grace-arena-pre-answer.png"))
            own.press("Enter")
            expect(detail).to_contain_text("you wrote “hemingway”: the model's answer is revealed")
            written = mod.state(lambda s: s["bonus"]["pre_answer"]["written"] == 1)["bonus"]
            assert written["pre_answer"]["answers"] == {"Ann": "hemingway"}  # the moderator's
            # the team's second player writes: every player has, the model's answer shows
            al.send(type="pre_answer", text=advice[0].guess, part=1)
            shown = mod.state(lambda s: s["bonus"]["consulted"] is not None)["bonus"]
            assert shown["pre_answer"] is None and shown["consulted"]["guess"] == advice[0].guess
            said = f"The model (tfidf) says “{advice[0].guess}”"
            expect(phone.locator("#consulted")).to_contain_text(said)
            mod.send(type="resume")
            mod.state(lambda s: not s["match"]["paused"])
            final = phone.get_by_label("Your answer")
            final.fill(advice[0].guess)
            final.press("Enter")
            mod.state(lambda s: s["bonus"]["answer"] == advice[0].guess)
            mod.send(type="rule", ruling="correct")
            state = mod.state(lambda s: s["bonus"]["part"] == 1)
            assert state["bonus"]["parts"][0]["choice"] == "consult"
            # part 2: nobody writes; the server's timer reveals the model's answer at the end
            # of the window (the moderator's clock says how long it has left meanwhile)
            phone.get_by_role("button", name="Consult the model").tap()
            mod.state(lambda s: s["bonus"]["pre_answer"] is not None)
            mod.state(lambda s: s["bonus"]["consulted"] is not None, timeout=30)
            expect(phone.locator("#consulted")).to_contain_text("The model (tfidf) says")
            mod.send(type="abstain", part=2)
            mod.state(lambda s: s["bonus"]["part"] == 2)
            phone.get_by_label("Your answer").fill("cairo")
            phone.get_by_label("Your answer").press("Enter")
            mod.state(lambda s: s["bonus"]["answer"] == "cairo")
            mod.send(type="rule", ruling="correct")
            state = mod.state(lambda s: s["match"]["phase"] == "answered")
            live = {t["id"]: t["score"] for t in state["teams"]}
            # the other team never saw what red's players wrote before the reveal
            bo.state(lambda s: s["match"]["phase"] == "answered")
            sent = json.dumps(bo.received)
            assert "hemingway" not in sent and "bonus_pre_answer_given" in sent
            match_id = server.room().rm.id
    engine = make_engine(db_url)
    events = MatchStore(engine).events(match_id)
    engine.dispose()
    assert Match.replay(events).scores == live
    assert [e.type for e in events if "pre_answer" in e.type] == [
        "bonus_pre_answer_opened", "bonus_pre_answer_given", "bonus_pre_answer_given",
        "bonus_pre_answer_opened",
    ]  # fmt: skip
    choices = part_choices(events, config)
    assert [c.choice for c in choices] == ["consult", "abstain", "own"]
    first = choices[0]
    assert [(p.text, p.correct) for p in first.pre_answers] == [
        ("hemingway", False), (advice[0].guess, advice[0].correct)]  # fmt: skip
    assert choices[1].pre_answers == ()  # nobody wrote in time
