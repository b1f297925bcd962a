"""Hybrid teams (QANTA 2026) in the match engine: AI players beside humans, their modes per
half, the semi key, the irrevocable mute, weight-class scoring, and the team's bonus choices;
the runner's formulas (grace_arena.core.rules.qanta) against hand-worked numbers."""

from __future__ import annotations

import pytest

from grace_arena.core.commands import (
    AbstainPart,
    AnswerPart,
    Buzz,
    ConsultPart,
    EndMatch,
    Join,
    MuteAi,
    PressAi,
    Reveal,
    Rule,
    RulePart,
    SetAiModes,
    StartTossup,
)
from grace_arena.core.config import (
    AiPlayerSpec,
    AiStep,
    BonusPartSpec,
    BonusSpec,
    MatchConfig,
    ModelAnswer,
    QantaRules,
    TeamSpec,
    WeightClasses,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import AiBuzzed, BonusPartRuled, BuzzAccepted, Ruled, Ruling
from grace_arena.core.formats import describe, rules_for
from grace_arena.core.match import Match
from grace_arena.core.phases import Phase
from grace_arena.core.rules import QantaBonuses, rule_set
from grace_arena.core.rules.qanta import (
    ai_tossup_points,
    autonomous_step,
    bonus_consult_points,
    js_round,
    weight_class_for,
)
from tests.engine_helpers import tossup

T = 1000.0


# -- the runner's formulas ------------------------------------------------------------------


def test_js_round_takes_halves_up_as_math_round():
    assert [js_round(x) for x in (0.5, 1.5, 2.5, -0.5, -2.5, 7.4999)] == [1, 2, 3, 0, -2, 7]


def test_weight_class_from_active_parameters():
    assert [weight_class_for(b) for b in (1, 9.99, 10, 49.9, 50, 400)] == [
        "lightweight", "lightweight", "midweight", "midweight", "heavyweight", "heavyweight",
    ]  # fmt: skip


def test_the_preset_is_the_runner_s_qanta26_json():
    q = rules_for("qanta26").qanta
    assert q is not None
    assert q.model_dump(mode="json") == {
        "ai_tossup_score_factors": {"lightweight": 1.0, "midweight": 0.8, "heavyweight": 0.4},
        "tossup_deflation_mode": "weighted",
        "tossup_static_deflation": 5,
        "autonomous_default_k": 1,
        "bonus_ai_consult_factor": 0.5,
        "bonus_deflation_mode": "weighted",
        "bonus_static_deflation": 5,
        "bonus_weight_deflation": {"lightweight": 1, "midweight": 2, "heavyweight": 3},
        "bonus_abstain_points": 1,
    }
    line = describe(rules_for("qanta26"))
    for bit in ("QANTA 2026", "×1/0.8/0.4", "K=1", "−1/2/3", "static −5", "factor 0.5",
                "abstention 1", "no powers", "negs -5"):  # fmt: skip
        assert bit in line


@pytest.mark.parametrize(
    ("mode", "base", "wc", "points"),
    [
        ("weighted", 10, "lightweight", 10), ("weighted", 10, "midweight", 8),
        ("weighted", 10, "heavyweight", 4), ("weighted", 15, "midweight", 12),
        ("weighted", 15, "heavyweight", 6), ("weighted", 10, None, 10),
        ("none", 10, "heavyweight", 10), ("static", 10, "heavyweight", 5),
        ("static", 3, "lightweight", 0),
    ],
)  # fmt: skip
def test_ai_tossup_points(mode, base, wc, points):
    q = QantaRules(tossup_deflation_mode=mode)
    assert ai_tossup_points(q, base, wc) == points


def test_factors_that_round_half_up():
    q = QantaRules(
        ai_tossup_score_factors=WeightClasses(lightweight=1, midweight=0.25, heavyweight=0.45)
    )
    assert ai_tossup_points(q, 10, "midweight") == 3  # 2.5 -> 3 (Python's round gives 2)
    assert ai_tossup_points(q, 10, "heavyweight") == 5  # 4.5 -> 5


@pytest.mark.parametrize(
    ("mode", "classes", "points"),
    [
        ("weighted", ["lightweight", "midweight"], 7),
        ("weighted", ["midweight", "heavyweight"], 5),
        ("weighted", ["heavyweight", "heavyweight", "heavyweight", "heavyweight"], 0),
        ("static", ["lightweight"], 5),
        ("none", ["heavyweight"], 10),
        (None, ["heavyweight"], 5),  # no mode: the consult factor 0.5
    ],
)
def test_bonus_consult_points(mode, classes, points):
    q = QantaRules(bonus_deflation_mode=mode)
    assert bonus_consult_points(q, 10, classes) == points


def test_autonomous_gate_counts_runner_tokens():
    steps = (
        AiStep(word_index=0, token=0, guess="a", buzz=True),
        AiStep(word_index=2, token=3, guess="b", buzz=False),
        AiStep(word_index=4, token=5, guess="c", buzz=True),
    )
    assert autonomous_step(steps, 1).guess == "c"  # token 0 is before the gate (k >= 1)
    assert autonomous_step(steps, 6) is None
    steps2 = (*steps[:1], AiStep(word_index=1, token=1, guess="d", buzz=True))
    assert autonomous_step(steps2, 1).guess == "d"


# -- a hybrid match ---------------------------------------------------------------------------


def _ai(aid: str, wc: str, buzz_at: dict[str, int], *, bonus: dict | None = None) -> AiPlayerSpec:
    """An AI whose guess on each tossup is right from ``buzz_at[t]`` on (it buzzes there)."""
    steps = {
        t: tuple(
            AiStep(word_index=w, token=w, guess="Carver" if w >= at else "Edison",
                   confidence=0.9 if w >= at else 0.1, buzz=w >= at)
            for w in range(0, 20, 2)
        )
        for t, at in buzz_at.items()
    }  # fmt: skip
    return AiPlayerSpec(id=aid, name=aid.title(), model=f"m-{aid}", weight_class=wc,
                        steps=steps, bonus_answers=bonus or {})  # fmt: skip


def _config(n: int = 4, *, halftime: int = 2, **ais) -> MatchConfig:
    bonus = {
        f"b{i}": (ModelAnswer(guess="part 0", correct=True), ModelAnswer(guess="x", correct=False))
        for i in range(n)
    }
    teams = (
        TeamSpec(id="red", name="Red", ai_players=(
            _ai("lw", "lightweight", ais.get("lw", {}), bonus=bonus),
            _ai("mw", "midweight", ais.get("mw", {}), bonus=bonus),
        )),
        TeamSpec(id="blue", name="Blue", ai_players=(
            _ai("hw", "heavyweight", ais.get("hw", {}), bonus=bonus),
        )),
    )  # fmt: skip
    return MatchConfig(
        rules=rules_for("qanta26", halftime_after=halftime),
        teams=teams,
        tossups=tuple(tossup(f"t{i}", power=None) for i in range(n)),
        bonuses=tuple(
            BonusSpec(
                id=f"b{i}",
                parts=tuple(
                    BonusPartSpec(text=f"Part {k}.", answer=f"<b>part {k}</b>") for k in range(2)
                ),
            )
            for i in range(n)
        ),
    )  # fmt: skip


def _play(cfg: MatchConfig) -> tuple[Match, list]:
    m, events = Match.create(cfg, now=T)
    for team in ("red", "blue"):
        events += m.handle(Join(team=team, player=f"{team}-1", name="P"), now=T)
    return m, events


def _reveal_to_end(m: Match, events: list) -> None:
    while m.phase is Phase.READING:
        events += m.handle(Reveal(), now=T)


def test_an_autonomous_ai_buzzes_by_itself_and_scores_by_weight_class():
    cfg = _config(lw={"t0": 6}, mw={"t0": 8}, hw={"t1": 4})
    assert rule_set(cfg.rules).name == "QANTA 2026"
    m, events = _play(cfg)
    events += m.handle(StartTossup(), now=T)
    _reveal_to_end(m, events)
    assert m.phase is Phase.BUZZED and m.game.floor.player == "lw"
    assert m.game.position == 6
    buzzed = [e for e in events if isinstance(e, AiBuzzed)]
    assert [(b.player, b.mode, b.k, b.weight_class) for b in buzzed] == [
        ("lw", "autonomous", 1, "lightweight")
    ]
    events += m.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert m.scores == {"red": 10, "blue": 0}
    # the bonus, then the heavyweight buzzes on t1: 10 x 0.4
    events += m.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=T)
    events += m.handle(RulePart(ruling=Ruling.CORRECT), now=T)
    events += m.handle(AbstainPart(team="red", player="red-1"), now=T)  # both AIs wrong: 1
    assert m.scores == {"red": 21, "blue": 0}
    events += m.handle(StartTossup(), now=T)
    _reveal_to_end(m, events)
    assert m.game.floor.player == "hw"
    events += m.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert m.scores["blue"] == 4
    assert Match.replay(events).state == m.state


def test_a_wrong_ai_buzz_negs_like_a_human_s_and_cannot_be_prompted():
    m, events = _play(_config(mw={"t0": 4}))
    events += m.handle(StartTossup(), now=T)
    _reveal_to_end(m, events)
    with pytest.raises(IllegalCommand):
        m.decide(Rule(ruling=Ruling.PROMPT), now=T)
    events += m.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert m.scores == {"red": -5, "blue": 0}


def test_semi_ai_buzzes_only_when_a_teammate_presses_its_key():
    m, events = _play(_config(lw={"t0": 4}, mw={"t0": 6}))
    events += m.handle(SetAiModes(team="red", modes={"lw": "semi"}, ks={"mw": 9}), now=T)
    events += m.handle(StartTossup(), now=T)
    events += m.handle(Reveal(to=7), now=T)  # lw would have buzzed at 4; mw is gated to 9
    assert m.phase is Phase.READING
    with pytest.raises(IllegalCommand, match="autonomous"):
        m.decide(PressAi(team="red", ai="mw", player="red-1"), now=T)
    with pytest.raises(IllegalCommand, match="not joined"):
        m.decide(PressAi(team="red", ai="lw", player="blue-1"), now=T)
    events += m.handle(PressAi(team="red", ai="lw", player="red-1"), now=T)
    accepted = [e for e in events if isinstance(e, BuzzAccepted)][-1]
    assert (accepted.player, accepted.answer, accepted.kind.value) == ("lw", "Carver", "model")
    buzzed = [e for e in events if isinstance(e, AiBuzzed)][-1]
    assert (buzzed.mode, buzzed.pressed_by, buzzed.token) == ("semi", "red-1", 6)
    events += m.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert m.scores["red"] == 10
    assert Match.replay(events).state == m.state


def test_mute_is_for_the_rest_of_the_match_and_modes_change_once_at_halftime():
    m, events = _play(_config(n=4, halftime=2, mw={"t0": 4, "t3": 2}, lw={"t2": 4}))
    events += m.handle(SetAiModes(team="red", modes={"lw": "semi"}), now=T)
    events += m.handle(SetAiModes(team="red", modes={"lw": "autonomous"}), now=T)  # set-up
    events += m.handle(StartTossup(), now=T)
    events += m.handle(MuteAi(team="red", ai="mw", player="red-1"), now=T)
    with pytest.raises(IllegalCommand, match="muted already"):
        m.decide(MuteAi(team="red", ai="mw"), now=T)
    _reveal_to_end(m, events)
    assert m.phase is Phase.AWAITING  # the muted AI did not buzz at 4
    for team in ("blue", "red"):  # both wrong: dead
        events += m.handle(Buzz(team=team, player=f"{team}-1"), now=T)
        events += m.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    with pytest.raises(IllegalCommand, match="before the match"):
        m.decide(SetAiModes(team="red", modes={"lw": "semi"}), now=T)
    events += m.handle(StartTossup(), now=T)
    _reveal_to_end(m, events)
    for team in ("blue", "red"):  # both wrong: dead
        events += m.handle(Buzz(team=team, player=f"{team}-1"), now=T)
        events += m.handle(Rule(ruling=Ruling.INCORRECT), now=T)
    assert m.game.heard == 2  # halftime
    with pytest.raises(IllegalCommand, match="muted"):
        m.decide(SetAiModes(team="red", modes={"mw": "autonomous"}), now=T)
    events += m.handle(SetAiModes(team="red", modes={"lw": "semi"}, player="red-1"), now=T)
    with pytest.raises(IllegalCommand, match=r"once|one change"):
        m.decide(SetAiModes(team="red", modes={"lw": "autonomous"}), now=T)
    events += m.handle(StartTossup(), now=T)
    _reveal_to_end(m, events)
    assert m.phase is Phase.AWAITING  # lw is semi now, mw muted
    events += m.handle(PressAi(team="red", ai="lw", player="red-1"), now=T)
    events += m.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert m.scores["red"] == 10
    live = m.state
    assert Match.replay(events).state == live
    assert live.hybrid.muted == frozenset({"mw"})
    assert live.hybrid.changed_at_halftime == frozenset({"red"})


def test_a_hybrid_team_consults_its_ais_and_scores_less_their_deflation():
    m, events = _play(_config(lw={"t0": 2}))
    assert isinstance(rule_set(m.config.rules).bonuses, QantaBonuses)
    events += m.handle(StartTossup(), now=T)
    _reveal_to_end(m, events)
    events += m.handle(Rule(ruling=Ruling.CORRECT), now=T)  # red 10
    with pytest.raises(IllegalCommand, match="team 'red'"):
        m.decide(ConsultPart(team="blue", player="blue-1"), now=T)
    events += m.handle(ConsultPart(team="red", player="red-1", draft="part zero"), now=T)
    shown = events[-1]
    assert shown.type == "ai_answers_shown"
    assert [(a.player, a.guess, a.correct) for a in shown.answers] == [
        ("lw", "part 0", True),
        ("mw", "part 0", True),
    ]
    events += m.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=T)
    events += m.handle(RulePart(ruling=Ruling.CORRECT), now=T)
    ruled = [e for e in events if isinstance(e, BonusPartRuled)]
    assert (ruled[-1].choice, ruled[-1].points) == ("consult", 10 - 1 - 2)
    events += m.handle(AbstainPart(team="red", player="red-1"), now=T)
    assert [e.points for e in events if isinstance(e, BonusPartRuled)][-1] == 1
    events += m.handle(EndMatch(), now=T)
    assert m.scores == {"red": 10 + 7 + 1, "blue": 0}
    assert [e.points for e in events if isinstance(e, Ruled)] == [10]
    assert Match.replay(events).state == m.state


def test_every_case_the_runner_s_own_scoring_returned():
    """The runner's scoring functions, run with node on its preset (tests/fixtures/qanta26),
    and ours give the same points on 64 AI buzzes and 96 consulted parts."""
    import json
    from pathlib import Path

    cases = json.loads((Path(__file__).parent / "fixtures/qanta26/runner_scores.json").read_text())
    assert len(cases["tossup"]) == 64 and len(cases["bonus"]) == 96
    for c in cases["tossup"]:
        q = QantaRules(tossup_deflation_mode=c["mode"])
        assert ai_tossup_points(q, c["base"], c["wc"]) == c["points"], c
    for c in cases["bonus"]:
        q = QantaRules(bonus_deflation_mode=c["mode"])
        assert bonus_consult_points(q, c["full"], c["team"]) == c["points"], c


def test_the_moderator_hands_a_human_s_buzz_to_a_semi_ai_of_the_team():
    from grace_arena.core.commands import SetBuzzSource

    m, events = _play(_config(lw={"t0": 4}, mw={"t0": 2}))
    events += m.handle(SetAiModes(team="red", modes={"lw": "semi", "mw": "semi"}), now=T)
    events += m.handle(StartTossup(), now=T)
    events += m.handle(Reveal(to=5), now=T)
    events += m.handle(Buzz(team="red", player="red-1"), now=T)
    with pytest.raises(IllegalCommand, match="not an AI player of team 'red'"):
        m.decide(SetBuzzSource(ai="hw"), now=T)
    events += m.handle(SetBuzzSource(ai="lw"), now=T)
    assert (m.game.floor.player, m.game.floor.answer) == ("lw", "Carver")
    with pytest.raises(IllegalCommand, match="an AI has the floor"):
        m.decide(SetBuzzSource(ai="mw"), now=T)
    events += m.handle(Rule(ruling=Ruling.CORRECT), now=T)
    assert m.scores["red"] == 10  # the lightweight's: 10 x 1.0
    ruled = [e for e in events if isinstance(e, Ruled)][-1]
    assert ruled.player == "lw"
    assert Match.replay(events).state == m.state
    # on the next tossup blue buzzes: red's AI is not blue's to hand the buzz to
    for _ in range(2):
        events += m.handle(AbstainPart(team="red", player="red-1"), now=T)
    events += m.handle(StartTossup(), now=T)
    events += m.handle(Buzz(team="blue", player="blue-1"), now=T)
    with pytest.raises(IllegalCommand, match="not an AI player of team 'blue'"):
        m.decide(SetBuzzSource(ai="mw"), now=T)
