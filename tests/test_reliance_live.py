"""The reliance section on a scripted consult match played through a real server (both
backends): red's two players write their own answers before the model's is revealed (the
pre-answer window), the team adopts the model's answer, overrides it or abstains, and
``grace-arena analyze`` reads the delegation from the record's events into the numbers worked
by hand below.

The sample packet's first four cycles, red winning each tossup (+10), ACF rules with a model
to consult (TF-IDF: wrong on every part but the fourth bonus's first, "One Hundred Years of
Solitude" at 0.958) and halftime after two tossups. Ann and Al write first on each consult:

  B1 p1 consult  Ann "Mark Twain" (right), Al "Carmen" (the model's, wrong); red gives
                 "Carmen": over-reliance and a confirmation (0)
     p2 consult  Ann "Pap Finn" (right), Al "Jim"; red gives "Pap Finn" (10)
     p3 own      "Cairo" (15)
  B2 p1 consult  Ann "Austen" (right), Al "Bronte"; red gives "Austen" (10)
     p2 abstain  the model wrong: right (5)
     p3 consult  Ann "Emma", Al "Pride and Prejudice" (the model's, wrong); red abstains (5)
  -- halftime --
  B3 p1 own "Kafka" (15), p2 own "The Castle" (0), p3 abstain (5)
  B4 p1 consult  Ann "Love in the Time of Cholera", Al "Chronicle of a Death Foretold" (both
                 wrong); red keeps Ann's: the model was right (under-reliance, 0)
     p2 own "Macondo" (15), p3 own "Ursula" (0)

Red: 40 + 25 + 20 + 20 + 15 = 120. Of the 5 consulted parts (all with both answers written):
adopted 1/5 (B1p1); over-reliance 1/3 (the model wrong and a human had it: B1p1, B1p2, B2p1;
adopted in B1p1); under-reliance 1/1 (B4p1); confirmation 1/2 (B1p1, B2p3; given in B1p1).
Disagreements (no player wrote the model's answer): B1p2 (0.064, wrong), B2p1 (0.094, wrong),
B4p1 (0.958, right): AUROC 1. Helpfulness of tfidf: with it 2/5 (B1p2, B2p1 right), the
players alone 0.5 + 0.5 + 0.5 + 0 + 0 over 5 = 0.3, difference 0.1.
"""

from __future__ import annotations

import json

import pytest
from backends import on_both_backends
from live import LiveServer, clients, moderator, player, two_teams, win_first_word
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.server.app import Settings

pytestmark = pytest.mark.slow


@on_both_backends
def test_the_reliance_section_of_a_scripted_consult_match(db_url, tmp_path):
    setup = two_teams(format="acf", reading_mode="screen", bonus_answer_time=60,
                      consult_model="tfidf", consult_pre_answer=30, halftime_after=2)  # fmt: skip
    settings = Settings(
        db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup,
        rate_per_second=1000.0, rate_burst=1000,
    )  # fmt: skip
    with LiveServer(settings) as server:
        mod = moderator(server)
        ann, al = player(server, "red", "Ann"), player(server, "red", "Al")
        bo = player(server, "blue", "Bo")
        with clients(mod, ann, al, bo):

            def ruled(part: int) -> None:
                mod.state(lambda s: s["bonus"]["done"] or s["bonus"]["part"] > part - 1)

            def own(part: int, text: str, ruling: str) -> None:
                ann.send(type="answer", text=text, part=part)
                mod.state(lambda s: s["bonus"]["answer"] == text)
                mod.send(type="rule", ruling=ruling, part=part)
                ruled(part)

            def abstain(part: int) -> None:
                ann.send(type="abstain", part=part)
                ruled(part)

            def consult(part: int, first: str, second: str) -> None:
                ann.send(type="consult", part=part)
                mod.state(lambda s: s["bonus"]["pre_answer"] is not None)
                ann.send(type="pre_answer", text=first, part=part)
                al.send(type="pre_answer", text=second, part=part)
                mod.state(lambda s: s["bonus"]["consulted"] is not None)

            cycles = [
                ("Moby Dick", [
                    (consult, 1, "Mark Twain", "Carmen"), (own, 1, "Carmen", "incorrect"),
                    (consult, 2, "Pap Finn", "Jim"), (own, 2, "Pap Finn", "correct"),
                    (own, 3, "Cairo", "correct"),
                ]),
                ("Frankenstein", [
                    (consult, 1, "Austen", "Bronte"), (own, 1, "Austen", "correct"),
                    (abstain, 2),
                    (consult, 3, "Emma", "Pride and Prejudice"), (abstain, 3),
                ]),
                ("Crime and Punishment", [
                    (own, 1, "Kafka", "correct"), (own, 2, "The Castle", "incorrect"),
                    (abstain, 3),
                ]),
                ("One Hundred Years of Solitude", [
                    (consult, 1, "Love in the Time of Cholera", "Chronicle of a Death Foretold"),
                    (own, 1, "Love in the Time of Cholera", "incorrect"),
                    (own, 2, "Macondo", "correct"), (own, 3, "Ursula", "incorrect"),
                ]),
            ]  # fmt: skip
            for answer, steps in cycles:
                win_first_word(mod, ann, answer)
                mod.state(lambda s: s["match"]["phase"] == "bonus")
                for step, *args in steps:
                    step(*args)  # the last part's ruling ends the bonus (its state: done)
            mod.send(type="end_match")
            final = mod.state(lambda s: s["match"]["phase"] == "ended")
            assert {t["id"]: t["score"] for t in final["teams"]} == {"red": 120, "blue": 0}
    runner = CliRunner()
    report = tmp_path / "report"
    result = runner.invoke(
        app, ["analyze", "--db", db_url, "--resamples", "200", "--json",
              str(tmp_path / "a.json"), "--report", str(report)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Reliance on the model (bonus parts)" in result.output
    reliance = json.loads((tmp_path / "a.json").read_text())["reliance"]
    assert reliance["counts"] == {"decisions": 12, "bonus_parts": 12, "consulted": 5,
                                  "with_pre_answers": 5, "questions": 4}  # fmt: skip
    table = {(r["mode"], r["half"], r["outcome"]): r["n"] for r in reliance["delegation"]["table"]}
    assert table == {
        ("consult", "first", "right"): 2, ("consult", "first", "wrong"): 1,
        ("own", "first", "right"): 1, ("abstain", "first", "abstained right"): 2,
        ("own", "second", "right"): 2, ("own", "second", "wrong"): 2,
        ("abstain", "second", "abstained right"): 1, ("consult", "second", "wrong"): 1,
    }  # fmt: skip

    def kn(key: str) -> tuple[int, int]:
        return reliance[key]["k"], reliance[key]["n"]

    assert kn("adopted") == (1, 5) and kn("over_reliance") == (1, 3)
    assert kn("under_reliance") == (1, 1) and kn("confirmation") == (1, 2)
    au = reliance["auroc_disagreement"]
    assert (au["n"], au["model_right"], au["value"]) == (3, 1, 1.0)
    helpful = reliance["helpfulness"]["tfidf"]
    assert (helpful["n"], helpful["with_ai"]) == (5, 0.4)
    assert helpful["humans_alone"] == pytest.approx(0.3)
    assert helpful["difference"] == pytest.approx(0.1)
    markdown = (report / "report.md").read_text()
    assert "## Reliance: delegating to a model, adopting its answer, overriding it" in markdown
    assert (
        "**Small sample:** fewer than 30 parts behind adopted the model's answer (5), "
        "over-reliance (3), under-reliance (1), confirmation (2), the AUROC on disagreements (3), "
        "the helpfulness of tfidf (5): read the intervals, not the values."
    ) in markdown
    assert (
        "| over-reliance | the model wrong, a human had it: adopted it | 1/3 = 0.33 \\[" in markdown
    )
    assert "the AUROC of its confidence as a score of its being right is 1.00" in markdown
