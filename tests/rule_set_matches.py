"""Matches played under every rule set, kept in ``fixtures/rules/matches.json.gz``.

Each match is one script of commands (:data:`SCRIPT`) played under one rule set
(:data:`VARIANTS`); a command a rule set does not allow is refused, and the refusal is kept as
its events are. The file holds what the engine decided when the rule sets were written down:
``test_rule_sets`` plays the scripts again and replays the stored events, and both must give
the same events, refusals and scores. Run this module to write the file again (only when the
engine is meant to decide differently)::

    .venv/bin/python tests/rule_set_matches.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from engine_helpers import tossup

from grace_arena.core import commands as c
from grace_arena.core.config import (
    BonusPartSpec,
    BonusSpec,
    ConsultScoring,
    ConsultSpec,
    MatchConfig,
    ModelAnswer,
    ModelBuzz,
    ScoringRules,
    TeamKind,
    TeamSpec,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Ruling, event_to_dict
from grace_arena.core.formats import rules_for
from grace_arena.core.match import Match

FILE = Path(__file__).parent / "fixtures" / "rules" / "matches.json.gz"
T0 = 1000.0
X, C, P = Ruling.INCORRECT, Ruling.CORRECT, Ruling.PROMPT

#: name -> (rules, human teams, reading mode); a model team plays too unless the name says
#: "humans" (bouncebacks need two teams)
VARIANTS: dict[str, tuple[ScoringRules, tuple[str, ...], str]] = {
    "unnamed": (ScoringRules(), ("red", "blue"), "read_aloud"),
    "grace": (rules_for("grace"), ("red", "blue"), "read_aloud"),
    "grace-3": (rules_for("grace"), ("red", "blue", "green"), "screen"),
    "acf": (rules_for("acf"), ("red", "blue"), "read_aloud"),
    "acf-screen": (rules_for("acf"), ("red", "blue"), "screen"),
    "acf-overtime": (rules_for("acf", regulation_tossups=3), ("red", "blue"), "read_aloud"),
    "pace": (rules_for("pace"), ("red", "blue"), "read_aloud"),
    "naqt": (rules_for("naqt"), ("red", "blue"), "read_aloud"),
    "naqt-3": (rules_for("naqt"), ("red", "blue", "green"), "read_aloud"),
    "naqt-bouncebacks": (rules_for("naqt", bouncebacks=True), ("red", "blue"), "screen"),
    "naqt-bouncebacks-humans": (rules_for("naqt", bouncebacks=True), ("red", "blue"), "screen"),
    "naqt-bouncebacks-humans-aloud": (
        rules_for("naqt", bouncebacks=True), ("red", "blue"), "read_aloud"
    ),
    "acf-consult-humans": (rules_for("acf", consult=ConsultScoring()), ("red", "blue"), "screen"),
    "naqt-bouncebacks-3": (rules_for("naqt", bouncebacks=True), ("red", "blue", "green"), "screen"),
    "acf-consult": (rules_for("acf", consult=ConsultScoring()), ("red", "blue"), "screen"),
    "naqt-consult-bouncebacks-humans": (
        rules_for("naqt", bouncebacks=True, consult=ConsultScoring(own_points=20,
                  consult_points=10, abstain_points=10)),
        ("red", "blue"), "read_aloud",
    ),
    "custom-harsh": (
        rules_for("grace", power_points=None, neg_points=-10, negs_only_before_end=False,
                  rebuzz=False, answer_time=None, buzz_window=3.0),
        ("red", "blue"), "read_aloud",
    ),
    "custom-overtime-bonuses-humans": (
        rules_for("custom", bonuses=True, bouncebacks=True, regulation_tossups=2,
                  overtime_bonuses=True, correct_points=20, power_points=30, neg_points=-10),
        ("red", "blue"), "screen",
    ),
}  # fmt: skip


def config(
    rules: ScoringRules, humans: tuple[str, ...], reading_mode: str, *, bot: bool = True
) -> MatchConfig:
    """Six tossups (power to word 10), six bonuses of three parts worth 10, 15 and 20, the
    humans and (``bot``) a model team that buzzes at word 12 of t3 and answers its bonus (the
    second part wrongly)."""
    bonuses = tuple(
        BonusSpec(
            id=f"b{i}",
            leadin="For 10 points each:",
            parts=tuple(
                BonusPartSpec(text=f"Name part {k}.", answer=f"<b>part {k}</b>", value=10 + 5 * k)
                for k in range(3)
            ),
        )
        for i in range(6)
    )
    answers = tuple(
        ModelAnswer(guess=f"part {k}" if k != 1 else "wrong", confidence=0.5, correct=k != 1)
        for k in range(3)
    )
    model = TeamSpec(
        id="bot", name="Bot", kind=TeamKind.MODEL, model="tfidf",
        buzzes={"t3": ModelBuzz(word_index=12, guess="Carver", confidence=0.9)},
        bonus_answers={f"b{i}": answers for i in range(6)},
    )  # fmt: skip
    consult = None
    if rules.consult is not None:
        consult = ConsultSpec(
            model="tfidf",
            answers={
                f"b{i}": (
                    ModelAnswer(guess="part 0", confidence=0.9, correct=True),
                    ModelAnswer(guess="nope", confidence=0.2, correct=False),
                    ModelAnswer(),
                )
                for i in range(6)
            },
        )
    return MatchConfig(
        rules=rules,
        teams=(*(TeamSpec(id=h, name=h.title()) for h in humans), *([model] if bot else [])),
        tossups=tuple(tossup(f"t{i}") for i in range(6)),
        bonuses=bonuses,
        reading_mode=reading_mode,
        consult=consult,
    )


def _bonus(team: str, other: str) -> list[tuple[float, c.Command]]:
    """Every way of playing a bonus part, for whichever rules allow it: a consult and a right
    answer, a wrong answer, an abstention (consult rules), a bounceback answered right, a
    prompt then a wrong answer, undone and ruled right."""
    return [
        (1, c.ConsultPart(team=team, player=f"{team}-1", draft="part 0")),
        (1, c.AnswerPart(team=team, player=f"{team}-1", text="part 0")),
        (1, c.RulePart(ruling=C)),
        (1, c.AnswerPart(team=team, player=f"{team}-1", text="wrong")),
        (1, c.RulePart(ruling=X)),
        (1, c.AbstainPart(team=team)),
        (1, c.AnswerPart(team=other, player=f"{other}-1", text="part 1")),
        (1, c.RulePart(ruling=C)),
        (1, c.RulePart(ruling=P)),
        (1, c.RulePart(ruling=X)),
        (1, c.UndoRuling()),
        (1, c.RulePart(ruling=C)),
        # (tossups only: the undo took back the tossup's ruling, which is ruled again)
        (1, c.Rule(ruling=C)),
    ]


def script(humans: tuple[str, ...]) -> list[tuple[float, c.Command]]:
    """(seconds after the command before, command) in order."""
    red, blue = humans[0], humans[1]
    steps: list[tuple[float, c.Command]] = [
        (0, c.Join(team=h, player=f"{h}-1", name=h.title())) for h in humans
    ]
    # t0: two wrong interrupts, then (with a third team) a third, a wrong answer after the end
    steps += [
        *_next_tossup(), (1, c.Reveal(to=3)), (1, c.Buzz(team=red, player=f"{red}-1")),
        (1, c.Rule(ruling=X)), (1, c.Reveal(to=8)), (1, c.Buzz(team=blue, player=f"{blue}-1")),
        (1, c.Rule(ruling=X)),
    ]  # fmt: skip
    if len(humans) > 2:
        steps += [(1, c.Reveal(to=9)), (1, c.Buzz(team=humans[2], player=f"{humans[2]}-1")),
                  (1, c.Rule(ruling=X))]  # fmt: skip
    steps += [(1, c.Reveal(to=20)), (1, c.TimeUp()), (30, c.TimeUp())]
    # t1: a power, its bonus
    steps += [*_next_tossup(), (1, c.Reveal(to=5)), (1, c.Buzz(team=red, player=f"{red}-1")),
              (1, c.GiveAnswer(team=red, player=f"{red}-1", text="Carver")),
              (1, c.Rule(ruling=C))]  # fmt: skip
    steps += _bonus(red, blue)
    # t2: after the end, a wrong answer, the answer clock running out, a rebuzz
    steps += [
        *_next_tossup(), (1, c.Reveal(to=20)), (1, c.Buzz(team=blue, player=f"{blue}-1")),
        (1, c.Rule(ruling=X)), (1, c.Buzz(team=red, player=f"{red}-1")), (30, c.TimeUp()),
        (30, c.TimeUp()),
    ]  # fmt: skip
    # t3: the model buzzes at word 12 and is right (no power); its bonus
    steps += [*_next_tossup(), (1, c.Reveal(to=15)), (1, c.Rule(ruling=C))]
    steps += [(1, c.RulePart(ruling=C)), (1, c.RulePart(ruling=C)), (1, c.RulePart(ruling=X)),
              (1, c.RulePart(ruling=C)), (1, c.RulePart(ruling=X))]  # fmt: skip
    # t4 (overtime under some rules): a prompt, then right; its bonus, thrown out and replaced
    steps += [
        *_next_tossup(), (1, c.Reveal(to=11)), (1, c.Buzz(team=blue, player=f"{blue}-1")),
        (1, c.Rule(ruling=P)), (1, c.GiveAnswer(team=blue, player=f"{blue}-1", text="Carver")),
        (1, c.Rule(ruling=C)), (1, c.ThrowOutBonus(reason="misread")),
    ]  # fmt: skip
    steps += _bonus(blue, red)
    # t5: a neg, undone and ruled again, then the other team's right answer in power
    steps += [
        *_next_tossup(), (1, c.Reveal(to=2)), (1, c.Buzz(team=red, player=f"{red}-1")),
        (1, c.Rule(ruling=X)), (1, c.UndoRuling()), (1, c.Rule(ruling=X)),
        (1, c.Reveal(to=4)), (1, c.Buzz(team=blue, player=f"{blue}-1")), (1, c.Rule(ruling=C)),
    ]  # fmt: skip
    steps += _bonus(blue, red)[:5]
    steps += [(1, c.EndMatch())]
    return steps


def _next_tossup() -> list[tuple[float, c.Command]]:
    """The clock runs out on whatever is left (refused when nothing is), then the next tossup
    starts."""
    return [(30, c.TimeUp()), (1, c.StartTossup())]


COMMANDS = {cls.kind: cls for cls in c.Command.__subclasses__()}


def command_to_dict(command: c.Command) -> dict[str, Any]:
    return {"kind": command.kind, **command.model_dump(mode="json", exclude_defaults=True)}


def command_from_dict(data: dict[str, Any]) -> c.Command:
    fields = dict(data)
    return COMMANDS[fields.pop("kind")].model_validate(fields)


def play(name: str) -> dict[str, Any]:
    """One variant's match: its first event, each command with its events or refusal, and the
    final scores."""
    rules, humans, mode = VARIANTS[name]
    match, created = Match.create(config(rules, humans, mode, bot="humans" not in name), now=T0)
    now = T0
    steps = []
    for delay, command in script(humans):
        now += delay
        step: dict[str, Any] = {"now": now, "command": command_to_dict(command)}
        try:
            step["events"] = [event_to_dict(e) for e in match.handle(command, now=now)]
        except IllegalCommand as exc:
            step["refused"] = str(exc)
        steps.append(step)
    return {
        "name": name,
        "created": event_to_dict(created[0]),
        "steps": steps,
        "scores": match.scores,
    }


def stored() -> list[dict[str, Any]]:
    """The matches of the file."""
    return json.loads(gzip.decompress(FILE.read_bytes()))


def main() -> None:
    FILE.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps([play(n) for n in VARIANTS], separators=(",", ":"))
    FILE.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"wrote {FILE}")


if __name__ == "__main__":
    main()
