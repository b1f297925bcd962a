"""The reliance section worked by hand on a small fixture of delegation decisions, and read
from a match's events (the delegation rows come from the record, not the live objects)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from grace_arena.analysis.reliance import (
    DECISION_COLUMNS,
    DECISION_READERS,
    analyze_reliance,
    decisions,
    report_section,
)

# Seven decisions of one team on four bonuses (questions q1..q4), the model "m":
#   A q1 p0 consult, model right (0.9), 2 wrote, none right, disagree; gave the model's: right
#   B q1 p1 consult, model wrong (0.8), 2 wrote, 1 right, disagree; gave the model's: wrong
#   C q2 p0 consult, model right (0.3), 1 wrote, wrong, disagree; another answer: wrong
#   D q2 p1 consult, model wrong (0.6), 2 wrote, none right, one agreed with the model (a
#           confirmation); gave the model's: wrong
#   E q3 p0 consult, model wrong (0.4), 1 wrote, right, disagree; another answer: right
#   F q3 p1 own (second half), right
#   G q4 p0 abstain without consulting (second half), right to
COLUMNS = ("question", "part", "half", "mode", "consulted", "model_confidence", "model_correct",
           "pre_answers", "pre_right", "humans_disagree", "confirmed_wrong", "final", "correct",
           "outcome")  # fmt: skip
ROWS = [
    ("q1", 0, "first", "consult", True, 0.9, True, 2, 0, True, None, "model", True, "right"),
    ("q1", 1, "first", "consult", True, 0.8, False, 2, 1, True, False, "model", False, "wrong"),
    ("q2", 0, "first", "consult", True, 0.3, True, 1, 0, True, None, "other", False, "wrong"),
    ("q2", 1, "first", "consult", True, 0.6, False, 2, 0, False, True, "model", False, "wrong"),
    ("q3", 0, "first", "consult", True, 0.4, False, 1, 1, True, False, "other", True, "right"),
    ("q3", 1, "second", "own", False, None, None, 0, 0, None, None, "own", True, "right"),
    ("q4", 0, "second", "abstain", False, None, None, 0, 0, None, None, "abstain", False,
     "abstained right"),
]  # fmt: skip


def fixture() -> pd.DataFrame:
    rows = pd.DataFrame([dict(zip(COLUMNS, r, strict=True)) for r in ROWS])
    rows["kind"], rows["model"], rows["team"], rows["match"] = "bonus_part", "m", "Red", "1"
    rows["bonus_id"] = rows["question"]
    return rows.reindex(columns=list(DECISION_COLUMNS))


def test_the_reliance_section_is_worked_by_hand() -> None:
    out = analyze_reliance(fixture(), n_resamples=400, seed=1)
    assert out["counts"] == {"decisions": 7, "bonus_parts": 7, "consulted": 5,
                             "with_pre_answers": 5, "questions": 4}  # fmt: skip
    # the delegation table: mode × half × outcome
    assert out["delegation"]["table"] == [
        {"kind": "bonus_part", "mode": "abstain", "half": "second",
         "outcome": "abstained right", "n": 1},
        {"kind": "bonus_part", "mode": "consult", "half": "first", "outcome": "right", "n": 2},
        {"kind": "bonus_part", "mode": "consult", "half": "first", "outcome": "wrong", "n": 3},
        {"kind": "bonus_part", "mode": "own", "half": "second", "outcome": "right", "n": 1},
    ]  # fmt: skip
    second = out["delegation"]["modes"]["bonus_part/second"]
    assert (second["own"]["k"], second["own"]["n"], second["abstain"]["rate"]) == (1, 2, 0.5)
    assert out["delegation"]["modes"]["bonus_part/first"]["consult"]["rate"] == 1.0
    # adoption: (a human had it, the model was, the final answer)
    assert out["adoption"] == [
        {"human": "right", "model": "wrong", "final": "model", "n": 1},  # B
        {"human": "right", "model": "wrong", "final": "other", "n": 1},  # E
        {"human": "wrong", "model": "right", "final": "model", "n": 1},  # A
        {"human": "wrong", "model": "right", "final": "other", "n": 1},  # C
        {"human": "wrong", "model": "wrong", "final": "model", "n": 1},  # D
    ]
    assert (out["adopted"]["k"], out["adopted"]["n"]) == (3, 5)  # A, B, D
    # over-reliance: the model wrong and a human had it (B, E): adopted in B
    over = out["over_reliance"]
    assert (over["k"], over["n"], over["rate"]) == (1, 2, 0.5)
    # two questions (q1, q3) resampled: a resample holds both (1/2), or one twice (1 or 0),
    # each a quarter of the time: the 95 % interval is [0, 1]
    assert over["ci"] == [0.0, 1.0] and over["small_sample"]
    # under-reliance: the model right and no human had it (A, C): not adopted in C
    under = out["under_reliance"]
    assert (under["k"], under["n"], under["rate"]) == (1, 2, 0.5)
    # confirmation: the model agreed with a wrong pre-answer (D): the team gave it
    assert (out["confirmation"]["k"], out["confirmation"]["n"]) == (1, 1)
    assert out["confirmation"]["ci"] == [1.0, 1.0]
    # AUROC on the disagreements (A 0.9 right, B 0.8 wrong, C 0.3 right, E 0.4 wrong): of
    # the 4 (right, wrong) pairs, 0.9 > 0.8 and 0.9 > 0.4 are ordered right, 0.3 not: 2/4
    au = out["auroc_disagreement"]
    assert (au["n"], au["model_right"], au["value"]) == (4, 2, 0.5)
    assert au["value"] == roc_auc_score([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.4])
    assert au["ci"][0] <= 0.5 <= au["ci"][1]
    # helpfulness: with the model A, E right (2/5); alone the players' share right per part
    # 0, 1/2, 0, 0, 1 (mean 0.3)
    h = out["helpfulness"]["m"]
    assert h["n"] == 5 and h["with_ai"] == 0.4
    assert h["humans_alone"] == pytest.approx(0.3) and h["difference"] == pytest.approx(0.1)
    for key in ("with_ai", "humans_alone", "difference"):
        low, high = h[f"{key}_ci"]
        assert low <= h[key] <= high
    # every rate is a small sample here: the report says so, with its numbers
    section = report_section(out)
    assert section["caveats"] and "fewer than 30 parts" in section["caveats"][0]
    assert "over-reliance (2), under-reliance (2), confirmation (1)" in section["caveats"][0]
    rates = {r[0]: r[2] for r in section["rates"]["rows"]}
    assert rates["over-reliance"] == "1/2 = 0.50 [0.00, 1.00]"
    assert "AUROC of its confidence" in section["auroc"] and "0.50 [" in section["auroc"]
    (helpful,) = section["helpfulness"]["rows"]
    assert helpful[:2] == ["m", "5"] and helpful[4].startswith("0.10 [")


def test_without_pre_answers_the_rates_that_need_them_are_empty_and_said_so() -> None:
    rows = fixture()
    rows["pre_answers"], rows["pre_right"] = 0, 0
    out = analyze_reliance(rows, n_resamples=50)
    assert out["counts"]["with_pre_answers"] == 0 and out["helpfulness"] == {}
    assert out["over_reliance"] == {"k": 0, "n": 0, "rate": None, "ci": [None, None],
                                    "small_sample": True}  # fmt: skip
    assert out["auroc_disagreement"]["value"] is None
    assert "no player wrote an answer before the model's was revealed" in out["notes"][0]
    assert analyze_reliance(rows.iloc[:0]) is None and analyze_reliance(None) is None
    assert not math.isnan(out["delegation"]["modes"]["bonus_part/first"]["consult"]["rate"])


def test_delegation_is_read_from_events_by_every_reader() -> None:
    """A reader of other delegation events (an AI teammate's buzz mode) is one more function
    in DECISION_READERS: its rows join the bonus parts' in the same table."""
    from test_pre_answer import team_of_two, win

    from grace_arena.core.commands import AnswerPart, ConsultPart, PreAnswerPart, RulePart
    from grace_arena.core.events import Ruling

    match, events = team_of_two()
    win(match, "red")
    match.handle(ConsultPart(team="red", player="red-1"), now=2.0)
    match.handle(PreAnswerPart(team="red", player="red-1", text="wrong"), now=2.1)
    match.handle(PreAnswerPart(team="red", player="red-2", text="part 0"), now=2.2)
    match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=3.0)
    match.handle(RulePart(ruling=Ruling.CORRECT), now=3.0)
    (row,) = decisions(events)
    assert (row["mode"], row["half"], row["final"], row["outcome"]) == (
        "consult", "first", "model", "right")  # fmt: skip
    assert (row["pre_answers"], row["pre_right"], row["humans_disagree"]) == (2, 1, False)

    def ai_buzz_modes(events, config):  # as a reader of hybrid teams' events would
        return [{"team": "red", "kind": "tossup", "mode": "semi", "half": "first"}]

    DECISION_READERS.append(ai_buzz_modes)
    try:
        assert [r["kind"] for r in decisions(events)] == ["bonus_part", "tossup"]
    finally:
        DECISION_READERS.remove(ai_buzz_modes)


def test_a_hybrid_team_s_delegation_is_read_from_its_events() -> None:
    """Hybrid teams (QANTA 2026): each bonus part's choice and each AI's buzz mode on each
    tossup, counted by hand. Red has AIs lw and mw (semi, then autonomous at halftime, lw
    muted then), blue hw; halftime after two tossups.

    T0: lw buzzes by itself, right; red consults on b0 part 0 and gives the AIs' answer
    (right), consults on part 1 and abstains (no AI had it: right).
    T1: red-1 buzzes and hands the buzz to mw (semi), right; part 0 alone (right, corrected
    to wrong at the end), part 1 abstained without consulting (right).
    T2: hw buzzes by itself, wrong; then mw (autonomous now), right; red consults on b2 part
    0 and answers otherwise (wrong, the AIs were right), part 1 alone (wrong)."""
    from test_hybrid import _config, _play, _reveal_to_end

    from grace_arena.core.commands import (
        AbstainPart,
        AnswerPart,
        Buzz,
        ConsultPart,
        CorrectRuling,
        EndMatch,
        MuteAi,
        Reveal,
        Rule,
        RulePart,
        SetAiModes,
        SetBuzzSource,
        StartTossup,
        UndoRuling,
    )
    from grace_arena.core.events import BonusPartCorrected, BonusPartRuled, BonusPartUndone, Ruling

    m, events = _play(_config(n=3, lw={"t0": 2}, mw={"t1": 2, "t2": 6}, hw={"t2": 4}))

    def do(*commands) -> None:
        for c in commands:
            events.extend(m.handle(c, now=1000.0))

    red = {"team": "red", "player": "red-1"}
    do(SetAiModes(team="red", modes={"mw": "semi"}), StartTossup())
    _reveal_to_end(m, events)
    assert m.game.floor.player == "lw"
    do(Rule(ruling=Ruling.CORRECT), ConsultPart(**red), AnswerPart(**red, text="part 0"),
       RulePart(ruling=Ruling.CORRECT), ConsultPart(**red), AbstainPart(**red), UndoRuling(),
       AbstainPart(**red))  # the abstention taken back and made again: still consulted  # fmt: skip
    do(StartTossup(), Reveal(to=5), Buzz(**red), SetBuzzSource(ai="mw"),
       Rule(ruling=Ruling.CORRECT), AnswerPart(**red, text="part 0"),
       RulePart(ruling=Ruling.CORRECT), AbstainPart(**red))  # fmt: skip
    do(SetAiModes(team="red", modes={"mw": "autonomous"}), MuteAi(team="red", ai="lw"))
    do(StartTossup())
    _reveal_to_end(m, events)
    assert m.game.floor.player == "hw"
    do(Rule(ruling=Ruling.INCORRECT))
    _reveal_to_end(m, events)
    assert m.game.floor.player == "mw"
    do(Rule(ruling=Ruling.CORRECT), ConsultPart(**red), AnswerPart(**red, text="Edison"),
       RulePart(ruling=Ruling.INCORRECT), AnswerPart(**red, text="x"),
       RulePart(ruling=Ruling.INCORRECT), EndMatch())  # fmt: skip
    # b1's part 0 corrected to wrong: the correction is in force
    b1p0 = next(e for e in events if isinstance(e, BonusPartRuled) and e.bonus_id == "b1")
    do(CorrectRuling(seq=b1p0.seq, ruling=Ruling.INCORRECT))

    assert [type(e) for e in events if isinstance(e, BonusPartUndone | BonusPartCorrected)] == [
        BonusPartUndone, BonusPartCorrected]  # fmt: skip
    rows = decisions(events)
    parts = [
        (r["bonus_id"], r["part"], r["half"], r["mode"], r["consulted"], r["model"],
         r["model_correct"], r["final"], r["outcome"])
        for r in rows if r["kind"] == "bonus_part"
    ]  # fmt: skip
    both = "m-lw+m-mw"
    assert parts == [
        ("b0", 0, "first", "consult", True, both, True, "model", "right"),
        ("b0", 1, "first", "abstain", True, both, False, "abstain", "abstained right"),
        ("b1", 0, "first", "own", False, None, None, "own", "wrong"),
        ("b1", 1, "first", "abstain", False, None, None, "abstain", "abstained right"),
        ("b2", 0, "second", "consult", True, both, True, "other", "wrong"),
        ("b2", 1, "second", "own", False, None, None, "own", "wrong"),
    ]
    tossups = [
        (r["tossup_id"], r["team"], r["model"], r["half"], r["mode"], r["outcome"], r["points"])
        for r in rows if r["kind"] == "tossup"
    ]  # fmt: skip
    assert tossups == [
        ("t0", "red", "m-lw", "first", "autonomous", "right", 10),
        ("t0", "red", "m-mw", "first", "semi", "no buzz", 0),
        ("t0", "blue", "m-hw", "first", "autonomous", "no buzz", 0),
        ("t1", "red", "m-lw", "first", "autonomous", "no buzz", 0),
        ("t1", "red", "m-mw", "first", "semi", "right", 8),  # midweight: 10 × 0.8
        ("t1", "blue", "m-hw", "first", "autonomous", "no buzz", 0),
        ("t2", "red", "m-lw", "second", "muted", "no buzz", 0),
        ("t2", "red", "m-mw", "second", "autonomous", "right", 8),
        ("t2", "blue", "m-hw", "second", "autonomous", "wrong", -5),
    ]

    frame = pd.DataFrame(rows).reindex(columns=list(DECISION_COLUMNS))
    frame["question"] = frame["bonus_id"].fillna(pd.Series([r["tossup_id"] for r in rows]))
    out = analyze_reliance(frame, n_resamples=0)
    assert out["counts"] == {"decisions": 15, "bonus_parts": 6, "consulted": 3,
                             "with_pre_answers": 0, "questions": 6}  # fmt: skip
    modes = out["delegation"]["modes"]
    assert {m: (r["k"], r["n"]) for m, r in modes["tossup/first"].items()} == {
        "autonomous": (4, 6), "semi": (2, 6)}  # fmt: skip
    assert {m: (r["k"], r["n"]) for m, r in modes["tossup/second"].items()} == {
        "autonomous": (2, 3), "muted": (1, 3)}  # fmt: skip
    table = {(r["kind"], r["mode"], r["half"], r["outcome"]): r["n"]
             for r in out["delegation"]["table"] if r["kind"] == "tossup"}  # fmt: skip
    assert table == {
        ("tossup", "autonomous", "first", "right"): 1,
        ("tossup", "autonomous", "first", "no buzz"): 3,
        ("tossup", "semi", "first", "right"): 1,
        ("tossup", "semi", "first", "no buzz"): 1,
        ("tossup", "autonomous", "second", "right"): 1,
        ("tossup", "autonomous", "second", "wrong"): 1,
        ("tossup", "muted", "second", "no buzz"): 1,
    }
