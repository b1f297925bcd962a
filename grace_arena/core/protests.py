"""Protests and corrections: how the officials amend a match's record. Pure, like the match.

A **correction** replaces a ruling in force of an earlier cycle (a tossup's ruling, who
buzzed, a bonus part's ruling) by another: a ``ruling_corrected`` or ``bonus_part_corrected``
event that names the ruling it amends (``amends``, that ruling's seq). The ruling amended
stays in the record, superseded: nothing is rewritten, and the replay of the record is the
live match. The ledger of rulings in force (``GameState.ledger``) holds the correction in the
amended ruling's place, so the scores, the standings, the stats and the exports (which all read
the ledger) follow it.

A **protest** is filed by a team on a cycle's tossup or on a part of its bonus, with the answer
it gave and its reason (``protest_filed``); the match goes on. A TD resolves it after the
game (``protest_resolved``, with who decided and why): *upheld* reverses the ruling protested
(a correction follows, made by the TD and naming the protest), *denied* keeps it.

Which ruling a protest is about is decided when it is resolved, on the rulings then in force:
for a tossup, the protesting team's own ruling on it (its answer was ruled wrong), or else the
correct ruling another team got (that answer should not have counted); for a bonus part, the
protesting team's ruling on that part (its own, or its bounceback), or else the controlling
team's. Reversing is correct ↔ incorrect, scored as the match's rules score it where the buzz
was (a power before the power mark, a neg for an interrupt, ...).

What a correction does not do (the TD decides these, and records each as a correction): a
tossup made correct does not give its team a bonus it did not hear, and a bonus stays with the
cycle it was played in. Two correct rulings on one tossup (or on one part) are refused: the
one that should not stand is corrected first.

Corrections and resolutions are made between cycles or after the match (never while a tossup
or a bonus is being played, whose rulings the moderator rules and undoes as usual); a protest
may be filed at any time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from grace_arena.core.amendments import (
    AMENDMENTS,
    Officiating,
    Protest,
    RulingInForce,
    rulings_in_force,
)
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import BonusPartCorrected, RulingCorrected, TossupOutcome
from grace_arena.core.match import Match, MatchState
from grace_arena.core.phases import Phase

__all__ = [
    "AMENDMENTS",
    "Cycle",
    "Impact",
    "Officiating",
    "Protest",
    "RulingInForce",
    "cycles",
    "describe_corrections",
    "describe_protest",
    "impact",
    "match_notes",
    "protests",
    "question_label",
    "rulings_in_force",
    "upheld_effect",
]


# --------------------------------------------------------------------------------------------
# Reading the match


@dataclass(frozen=True)
class Cycle:
    """One tossup played (and its bonus), numbered as played, with its rulings in force."""

    number: int
    tossup_id: str
    thrown_out: bool
    rulings: tuple[RulingInForce, ...]


def cycles(s: MatchState) -> list[Cycle]:
    """Every tossup played, in order, with its rulings in force."""
    rulings = rulings_in_force(s)
    return [
        Cycle(
            number=i,
            tossup_id=t,
            thrown_out=s.game.outcomes.get(t) is TossupOutcome.THROWN_OUT,
            rulings=tuple(r for r in rulings if r.tossup_id == t),
        )
        for i, t in enumerate(s.game.played, start=1)
    ]


def protests(s: MatchState) -> list[Protest]:
    """Every protest of the match, in the order filed."""
    return sorted(s.officiating.protests.values(), key=lambda p: p.seq)


@dataclass(frozen=True)
class Impact:
    """What upholding a protest would do to the match's result."""

    scores: dict[str, int]  # now
    if_upheld: dict[str, int]
    leaders: tuple[str, ...]  # the team(s) ahead now
    leaders_if_upheld: tuple[str, ...]
    refused: str | None = None  # why it could not be upheld as it stands

    @property
    def changes_result(self) -> bool:
        """Whether upholding it changes who is ahead (a win becomes a tie or a loss)."""
        return self.leaders != self.leaders_if_upheld

    def describe(self, names: dict[str, str] | None = None) -> str:
        names = names or {}
        if self.refused:
            return f"cannot be upheld as it stands: {self.refused}"

        def score(d: dict[str, int]) -> str:
            return ", ".join(f"{names.get(t, t)} {d[t]}" for t in d)

        if self.scores == self.if_upheld:
            return "upheld, it would change no score"
        head = f"upheld, the score would be {score(self.if_upheld)} (now {score(self.scores)})"
        if not self.changes_result:
            return f"{head}: the result stands"

        def who(leaders: tuple[str, ...]) -> str:
            if len(leaders) == 1:
                return f"{names.get(leaders[0], leaders[0])} ahead"
            return "a tie"

        return f"{head}: it would change the result ({who(self.leaders_if_upheld)}, not " \
               f"{who(self.leaders)})"  # fmt: skip


def _leaders(scores: dict[str, int]) -> tuple[str, ...]:
    if not scores:
        return ()
    top = max(scores.values())
    return tuple(t for t, p in scores.items() if p == top)


def impact(s: MatchState, protest: int) -> Impact:
    """Whether upholding ``protest`` would change the match's result, on the state ``s``
    (as if it were resolved now, whatever is being played: a protest filed during a tossup
    is weighed at once)."""
    from grace_arena.core.commands import ResolveProtest

    now = dict(s.game.scores)
    # (a TD resolves between cycles: the scratch match is taken there to weigh it)
    scratch = Match(replace(s, game=replace(s.game, phase=Phase.ENDED)))
    refused = None
    try:
        scratch.handle(ResolveProtest(protest=protest, decision="upheld", by="impact"),
                       now=0.0)  # fmt: skip
        after = dict(scratch.state.game.scores)
    except IllegalCommand as exc:
        after, refused = now, str(exc)
    return Impact(now, after, _leaders(now), _leaders(after), refused)


# --------------------------------------------------------------------------------------------
# In words (QBJ notes, the stats report, the command line)


def question_label(s: MatchState, tossup_id: str, part: int | None = None) -> str:
    """ "tossup 3 (lit-british-1)": its number among the tossups played, as the moderator's
    screen, the protest form and the cycles number them (a tossup thrown out keeps its number),
    and its id; or "bonus part 2 of tossup 3 (lit-british-1)"."""
    played = s.game.played
    number = f"tossup {played.index(tossup_id) + 1} " if tossup_id in played else "tossup "
    label = f"{number}({tossup_id})"
    return label if part is None else f"bonus part {part + 1} of {label}"


def describe_protest(
    s: MatchState, p: Protest, names: dict[str, str] | None = None, *, upheld: Impact | None = None
) -> str:
    """One protest in a sentence: who, what, the answer given, why, and how it stands (for an
    open one, ``upheld`` or :func:`impact`)."""
    names = names or {}
    what = question_label(s, p.tossup_id, p.part)
    text = f"Protest {p.seq} by {names.get(p.team, p.team)} on {what}"
    if p.answer:
        text += f' (answer given: "{p.answer}")'
    if p.reason:
        text += f": {p.reason}"
    if p.open:
        return f"{text}. Open; {(upheld or impact(s, p.seq)).describe(names)}."
    verdict = f"{(p.decision or '').capitalize()} by {p.decided_by}"
    if p.decision_reason:
        verdict += f": {p.decision_reason}"
    effect = upheld_effect(s, p, names)
    return f"{text}. {verdict}" + (f"; {effect}." if effect else ".")


def upheld_effect(s: MatchState, p: Protest, names: dict[str, str] | None = None) -> str | None:
    """What an upheld protest's correction did to the score, and whether it changed the result
    ("the score went from Red 70, Blue 65 to Red 70, Blue 75: it changed the result (Blue
    ahead, not Red ahead)"); None for a protest not upheld, or upheld with nothing to change."""
    names = names or {}
    if p.decision != "upheld" or p.correction_seq is None:
        return None
    made = s.officiating.rulings.get(p.correction_seq)
    if not isinstance(made, RulingCorrected | BonusPartCorrected):
        return None
    old = s.officiating.rulings.get(made.amends)
    now = dict(s.game.scores)
    before = dict(now)
    before[made.team] -= made.points
    if old is not None:
        before[old.team] += old.points
    if before == now:
        return "it changed no score"

    def score(d: dict[str, int]) -> str:
        return ", ".join(f"{names.get(t, t)} {d[t]}" for t in d)

    def who(leaders: tuple[str, ...]) -> str:
        return f"{names.get(leaders[0], leaders[0])} ahead" if len(leaders) == 1 else "a tie"

    head = f"the score went from {score(before)} to {score(now)}"
    if _leaders(before) == _leaders(now):
        return f"{head}: the result stands"
    return f"{head}: it changed the result ({who(_leaders(now))}, not {who(_leaders(before))})"


def describe_corrections(s: MatchState, names: dict[str, str] | None = None) -> list[str]:
    """Each correction made by hand (not by an upheld protest), in a sentence."""
    names = names or {}
    out = []
    for seq, ev in sorted(s.officiating.rulings.items()):
        if not isinstance(ev, RulingCorrected | BonusPartCorrected) or ev.protest_seq:
            continue
        part = ev.part if isinstance(ev, BonusPartCorrected) else None
        who = names.get(ev.team, ev.team)
        if isinstance(ev, RulingCorrected):
            who = f"{s.players.get(ev.team, {}).get(ev.player, ev.player)} ({who})"
        text = (
            f"Correction {seq} of {question_label(s, ev.tossup_id, part)} by the {ev.by}: "
            f"{ev.ruling.value} for {who}, {ev.points:+d}"
        )
        out.append(f"{text}: {ev.reason}." if ev.reason else f"{text}.")
    return out


def match_notes(s: MatchState) -> list[str]:
    """The match's protests, then its corrections by hand, in sentences (QBJ ``notes``, the
    stats report)."""
    names = {t.id: t.name for t in s.config.teams}
    return [describe_protest(s, p, names) for p in protests(s)] + describe_corrections(s, names)
