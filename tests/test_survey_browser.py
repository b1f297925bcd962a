"""The survey page in a real browser (headless Chromium via Playwright) on a phone viewport,
against a real server on a free port: join, answer clue by clue, reload mid-survey and resume,
finish; the answers are in the record. Skips without Debian's chromium, except in CI."""

from __future__ import annotations

import re

import pytest
from browser import SCREENSHOTS
from playwright.sync_api import Page, expect
from sqlmodel import Session, select
from test_survey import write_packet

from grace_arena.record.models import SurveyStepRow

pytestmark = [
    pytest.mark.slow,
    # one survey server for the module's tests, of one packet
    pytest.mark.server(
        per_module=True,
        packets=[],
        first_match=None,
        secret=None,
        survey_packets=lambda folder: [write_packet(folder, "survey-a", "Survey A")],
    ),
]


def answer(page: Page, guess: str, buzz: bool = False) -> None:
    page.fill("#guess-input", guess)
    if buzz:
        page.check("#buzz-input")
    page.click("#next-button")


def test_a_player_answers_reloads_mid_survey_resumes_and_finishes(server, phone):
    code = next(iter(server.app.state.surveys.plans))
    phone.goto(f"{server.http_url}/survey?code={code}")
    expect(phone.locator("#survey-title")).to_have_text("Survey A")
    expect(phone.locator("#survey-size")).to_have_text("2 questions, 5 clues in all.")
    phone.fill("#name-input", "Ivy")
    phone.click("#join-form button[type=submit]")

    info = phone.locator("#clue-info")
    expect(info).to_have_text("Question 1 of 2 · Literature · clue 1 of 3")
    expect(phone.locator("#progress-text")).to_have_text("0 / 5")
    expect(phone.locator("#clues li")).to_have_count(1)
    answer(phone, "Ahab")
    expect(info).to_have_text(re.compile("clue 2 of 3"))
    expect(phone.locator("#progress-text")).to_have_text("1 / 5")
    expect(phone.locator("#clues li")).to_have_count(2)
    expect(phone.locator("#clues li.new")).to_contain_text("rope ladder")

    # ticking "buzz" without a guess is stopped on the page, and nothing is sent
    phone.check("#buzz-input")
    phone.click("#next-button")
    expect(phone.locator("#error")).to_have_text("To buzz, type a guess.")
    answer(phone, "Moby-Dick", buzz=True)
    expect(info).to_have_text(re.compile("clue 3 of 3"))
    expect(phone.locator("#error")).to_be_hidden()

    # a reload mid-survey comes back as the same participant at the next clue
    phone.reload()
    expect(info).to_have_text("Question 1 of 2 · Literature · clue 3 of 3")
    expect(phone.locator("#progress-text")).to_have_text("2 / 5")
    expect(phone.locator("#me")).to_have_text("Ivy")
    expect(phone.locator("#given li")).to_have_count(2)
    expect(phone.locator("#given li").first).to_contain_text("Clue 2: Moby-Dick")
    expect(phone.locator("#next-button")).to_have_text("Next question")
    phone.fill("#guess-input", "Moby-Dick")
    phone.screenshot(path=str(SCREENSHOTS / "survey_phone.png"), full_page=True)
    phone.click("#next-button")

    expect(info).to_have_text("Question 2 of 2 · Literature · clue 1 of 2")
    expect(phone.locator("#guess-input")).to_have_value("")
    expect(phone.locator("#buzz-input")).not_to_be_checked()
    answer(phone, "")
    expect(phone.locator("#next-button")).to_have_text("Finish")
    answer(phone, "Frankenstein", buzz=True)
    expect(phone.locator("#done-view")).to_be_visible()
    expect(phone.locator("#progress-text")).to_have_text("5 / 5")
    phone.screenshot(path=str(SCREENSHOTS / "survey_phone_done.png"))

    with Session(server.arena.engine) as session:
        rows = session.exec(select(SurveyStepRow).order_by(SurveyStepRow.id)).all()  # type: ignore[arg-type]
    assert [(r.tossup_id, r.step, r.guess, r.would_buzz, r.correct) for r in rows] == [
        ("whale", 0, "Ahab", False, False),
        ("whale", 1, "Moby-Dick", True, True),
        ("whale", 2, "Moby-Dick", False, True),
        ("monster", 0, "", False, False),
        ("monster", 1, "Frankenstein", True, True),
    ]
    assert all(r.client_latency_s is not None and r.client_latency_s >= 0 for r in rows)


def test_an_unknown_code_is_reported_and_a_good_one_can_be_typed(server, phone):
    phone.goto(f"{server.http_url}/survey?code=NOPE9")
    expect(phone.locator("#code-view")).to_be_visible()
    expect(phone.locator("#error")).to_contain_text("no survey with code")
    code = next(iter(server.app.state.surveys.plans))
    phone.fill("#code-input", code.lower())
    phone.click("#code-form button[type=submit]")
    expect(phone.locator("#join-view")).to_be_visible()
    assert phone.url.endswith(f"/survey?code={code}")
