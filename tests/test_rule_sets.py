"""Rule sets as objects: every match already recorded plays and replays as it did.

``fixtures/rules/matches.json.gz`` holds matches played under every rule set (tossups only,
ACF, PACE, NAQT with and without bouncebacks, consult rules, custom rules, two or three teams,
read aloud or on screens: see ``rule_set_matches``) as the engine decided them when the rules
were flags read where they mattered; ``fixtures/rules/outputs.json`` what those rules wrote to
screens, QBJ and SQBS then. ``fixtures/records/record_0003.db`` is a record made before
formats were named.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from rule_set_matches import FILE, VARIANTS, command_from_dict, config, stored

from grace_arena.core.commands import Rule
from grace_arena.core.config import ScoringRules
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Ruled, Ruling, event_from_dict, event_to_dict
from grace_arena.core.formats import FORMATS, describe, format_named, registry, rules_for
from grace_arena.core.match import Match
from grace_arena.core.rules import (
    Bouncebacks,
    ConsultBonuses,
    NoBonuses,
    PlainBonuses,
    rule_set,
)
from grace_arena.core.stats import match_play
from grace_arena.io.sqbs import tossup_values

STORED = {m["name"]: m for m in stored()}
OUTPUTS = json.loads((FILE.parent / "outputs.json").read_text())
OLD_RECORD = Path(__file__).parent / "fixtures" / "records" / "record_0003.db"


def stored_events(name: str) -> list:
    match = STORED[name]
    return [event_from_dict(match["created"])] + [
        event_from_dict(e) for step in match["steps"] for e in step.get("events", [])
    ]


def test_every_rule_set_is_stored() -> None:
    assert set(STORED) == set(VARIANTS) == set(OUTPUTS)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_stored_match_is_decided_again_event_for_event(name: str) -> None:
    """Each command of the match, given to the engine again at its time, produces the stored
    events, or the stored refusal, word for word."""
    stored = STORED[name]
    match = Match.replay([event_from_dict(stored["created"])])
    for step in stored["steps"]:
        command = command_from_dict(step["command"])
        if "refused" in step:
            with pytest.raises(IllegalCommand) as refused:
                match.handle(command, now=step["now"])
            assert str(refused.value) == step["refused"], step["command"]
        else:
            got = [event_to_dict(e) for e in match.handle(command, now=step["now"])]
            assert got == step["events"], step["command"]
    assert match.scores == stored["scores"]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_stored_match_replays_to_its_scores_and_state(name: str) -> None:
    events = stored_events(name)
    replayed = Match.replay(events)
    assert replayed.scores == STORED[name]["scores"]
    live = Match.replay(events[:1])
    live.apply(events[1:])
    assert replayed.state == live.state


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_rules_describe_and_export_themselves_as_before(name: str) -> None:
    rules, humans, mode = VARIANTS[name]
    before = OUTPUTS[name]
    assert rules == ScoringRules.model_validate(before["rules"])
    played = rule_set(rules)
    assert describe(rules) == played.describe() == before["describe"]
    assert describe(rules, bouncebacks=True) == before["describe_with_bouncebacks"]
    assert describe(rules, bouncebacks=False) == before["describe_without_bouncebacks"]
    assert played.qbj_name == before["qbj_name"]
    assert played.tossups.qbj_answer_types() == before["qbj_answer_types"]
    cfg = config(rules, humans, mode, bot="humans" not in name)
    assert json.dumps(played.qbj_bonuses(cfg.bonuses)) == json.dumps(before["qbj_bonuses"])
    play = match_play(stored_events(name), match_id=1)
    assert tossup_values([play]) == before["sqbs_tossup_values"]


def _old_matches() -> dict[int, list]:
    db = sqlite3.connect(f"file:{OLD_RECORD}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT match_id, payload FROM event ORDER BY match_id, seq").fetchall()
    finally:
        db.close()
    matches: dict[int, list] = {}
    for match_id, payload in rows:
        matches.setdefault(match_id, []).append(event_from_dict(json.loads(payload)))
    return matches


def test_a_record_made_before_formats_replays_and_its_rulings_score_as_stored() -> None:
    """Each stored ruling of an old record, decided again on the match as it stood, scores
    what the record says; the replay's scores are the sum of the rulings in force."""
    matches = _old_matches()
    assert matches
    rulings = 0
    for events in matches.values():
        rules = events[0].config.rules
        assert rules.format is None and not rules.bonuses
        assert describe(rules).startswith("GRACE: 10 a tossup, powers 15, negs -5, tossups only")
        for i, ev in enumerate(events):
            if isinstance(ev, Ruled) and ev.ruling in (Ruling.CORRECT, Ruling.INCORRECT):
                before = Match.replay(events[:i])
                decided = before.decide(Rule(ruling=ev.ruling), now=ev.t)[0]
                assert isinstance(decided, Ruled)
                assert (decided.points, decided.power) == (ev.points, ev.power)
                rulings += 1
        replayed = Match.replay(events)
        ledger = replayed.game.ledger
        assert replayed.scores == {
            t.id: sum(e.points for e in ledger if e.team == t.id) for t in replayed.config.teams
        }
    assert rulings > 10


# -- the rule objects --------------------------------------------------------------------------


def test_each_format_is_a_file_of_the_registry_in_its_order() -> None:
    formats = registry()
    assert list(formats) == list(FORMATS) == ["grace", "acf", "pace", "naqt", "qanta26"]
    for name, fmt in formats.items():
        assert (
            Path(__import__(f"grace_arena.core.formats.{name}", fromlist=["FORMAT"]).__file__).stem
            == name
        )
        assert rules_for(name).format == name
        assert format_named(name.upper()) is fmt
    with pytest.raises(
        ValueError,
        match=r"unknown format 'quiz' \(formats: grace, acf, pace, naqt, qanta26, custom\)",
    ):
        format_named("quiz")


def test_the_bonus_rules_are_one_object_each() -> None:
    assert isinstance(rule_set(rules_for("grace")).bonuses, NoBonuses)
    assert isinstance(rule_set(rules_for("acf")).bonuses, PlainBonuses)
    assert isinstance(rule_set(rules_for("naqt", bouncebacks=True)).bonuses, Bouncebacks)
    consult = rule_set(rules_for("naqt", bouncebacks=True, consult={"own_points": 15}))
    assert isinstance(consult.bonuses, ConsultBonuses)
    # no bounceback under consult rules, nor with three teams
    assert not consult.bonuses.bounces_with(2)
    assert rule_set(rules_for("naqt", bouncebacks=True)).bonuses.bounces_with(2)
    assert not rule_set(rules_for("naqt", bouncebacks=True)).bonuses.bounces_with(3)


def test_a_buzz_scores_by_power_position_and_the_neg_before_it() -> None:
    naqt = rule_set(rules_for("naqt")).tossups
    grace = rule_set(rules_for("grace")).tossups
    where = {"word_index": 3, "power_index": 10, "interrupt": True}
    assert naqt.buzz_score(Ruling.CORRECT, **where).points == 15
    assert naqt.buzz_score(Ruling.CORRECT, **{**where, "word_index": 10}).points == 10
    assert rule_set(rules_for("acf")).tossups.buzz_score(Ruling.CORRECT, **where).points == 10
    assert naqt.buzz_score(Ruling.INCORRECT, **where).points == -5
    # the second team's wrong interrupt after a neg: 0 in NAQT, a neg in GRACE's game
    assert naqt.buzz_score(Ruling.INCORRECT, **where, before=[-5]).points == 0
    assert grace.buzz_score(Ruling.INCORRECT, **where, before=[-5]).points == -5
    # after the end, nothing
    assert grace.buzz_score(Ruling.INCORRECT, **{**where, "interrupt": False}).points == 0
    assert grace.ends_after_incorrect({"red", "blue"}, ["red", "blue"]) == "all_locked_out"
    assert grace.ends_after_incorrect({"red"}, ["red", "blue"]) is None
    harsh = rule_set(rules_for("grace", rebuzz=False)).tossups
    assert harsh.ends_after_incorrect({"red"}, ["red", "blue"]) == "no_rebuzz"


BRITBOWL = """
from grace_arena.core.formats import Format

FORMAT = Format(
    name="britbowl",
    label="Britbowl: 20 cycles, powers 15, -5",
    order=10,
    rules={"power_points": 15, "neg_points": -5, "neg_first_team_only": True, "bonuses": True,
           "bouncebacks": True, "regulation_tossups": 20},
)
"""


def test_a_new_format_is_one_file(tmp_path, monkeypatch) -> None:
    """A file with a ``FORMAT`` beside the others is a format: named, listed after them,
    played and described by its rules."""
    import grace_arena.core.formats as formats

    (tmp_path / "britbowl.py").write_text(BRITBOWL)
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "grace_arena.core.formats.britbowl", raising=False)
    assert list(registry()) == ["grace", "acf", "pace", "naqt", "britbowl", "qanta26"]
    rules = rules_for("britbowl")
    assert rules.format == "britbowl" and rules.bouncebacks
    assert rules_for("britbowl", answer_time=5).format == "britbowl"
    assert rules_for("britbowl", neg_points=0).format == "custom"
    assert describe(rules) == (
        "BRITBOWL: 10 a tossup, powers 15, negs -5 (first team only), bonuses with bouncebacks, "
        "20 tossups"
    )
    match = Match.replay([Match.create(config(rules, ("red", "blue"), "screen", bot=False),
                                       now=0)[1][0]])  # fmt: skip
    assert rule_set(match.config.rules).bonuses.bounces_with(len(match.config.teams))


def test_a_format_that_sets_no_rule_of_the_record_is_refused() -> None:
    from grace_arena.core.formats import Format

    with pytest.raises(ValueError, match=r"format 'quiz' sets unknown rules: \['powers'\]"):
        Format(name="quiz", label="Quiz", order=9, rules={"powers": 20})
