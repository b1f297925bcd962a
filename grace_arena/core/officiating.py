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

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import (
    BonusPartCorrected,
    BonusPartRuled,
    BuzzAccepted,
    Event,
    ProtestFiled,
    ProtestResolved,
    Ruled,
    Ruling,
    RulingCorrected,
)

if TYPE_CHECKING:
    from grace_arena.core.commands import CorrectRuling, FileProtest, ResolveProtest
    from grace_arena.core.match import GameState, LedgerEntry, MatchState, _Decision

AnyRuling = Ruled | RulingCorrected | BonusPartRuled | BonusPartCorrected

#: The events this module folds into a match (the match's reducer hands them over whole).
AMENDMENTS = (ProtestFiled, ProtestResolved, RulingCorrected, BonusPartCorrected)


@dataclass(frozen=True)
class Protest:
    """A protest as it stands: filed, and once resolved, how and by whom."""

    seq: int  # its number: the seq of its protest_filed
    t: float
    team: str
    tossup_id: str
    part: int | None  # 0-based; None: the tossup
    answer: str
    reason: str
    by: str  # moderator | player
    player: str | None = None
    ruling_seq: int | None = None  # the ruling in force it was about when filed
    decision: str | None = None  # upheld | denied, once resolved
    decided_by: str | None = None
    decision_reason: str | None = None
    resolved_seq: int | None = None
    correction_seq: int | None = None  # the correction an upheld protest made, if any

    @property
    def open(self) -> bool:
        return self.decision is None


@dataclass(frozen=True)
class Officiating:
    """What the officials' amendments need of the match so far: the buzzes that took the
    floor, every ruling made (as made or as corrected), by seq, and the protests."""

    buzzes: dict[int, BuzzAccepted] = field(default_factory=dict)
    rulings: dict[int, AnyRuling] = field(default_factory=dict)
    protests: dict[int, Protest] = field(default_factory=dict)
    #: A ruling corrected -> the correction that replaced it.
    superseded: dict[int, int] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Folding events (called by the match's reducer)


def observe(s: MatchState, ev: Event) -> MatchState:
    """Note what a correction may need later: a buzz that took the floor, a ruling made."""
    if isinstance(ev, BuzzAccepted):
        o = s.officiating
        return replace(s, officiating=replace(o, buzzes={**o.buzzes, ev.buzz_id: ev}))
    if isinstance(ev, Ruled | BonusPartRuled):
        o = s.officiating
        return replace(s, officiating=replace(o, rulings={**o.rulings, ev.seq: ev}))
    return s


def reduce(s: MatchState, ev: Event) -> MatchState:
    """Fold one of :data:`AMENDMENTS` (``s`` already carries its seq)."""
    from grace_arena.core.match import LedgerEntry

    o = s.officiating
    match ev:
        case ProtestFiled():
            protest = Protest(
                seq=ev.seq, t=ev.t, team=ev.team, tossup_id=ev.tossup_id, part=ev.part,
                answer=ev.answer, reason=ev.reason, by=ev.by, player=ev.player,
                ruling_seq=ev.ruling_seq,
            )  # fmt: skip
            return replace(s, officiating=replace(o, protests={**o.protests, ev.seq: protest}))
        case ProtestResolved():
            p = o.protests.get(ev.protest_seq)
            if p is None:
                raise ValueError(f"seq {ev.seq}: no protest {ev.protest_seq} to resolve")
            p = replace(p, decision=ev.decision, decided_by=ev.by, decision_reason=ev.reason,
                        resolved_seq=ev.seq)  # fmt: skip
            return replace(s, officiating=replace(o, protests={**o.protests, p.seq: p}))
        case RulingCorrected() | BonusPartCorrected():
            bonus_id = ev.bonus_id if isinstance(ev, BonusPartCorrected) else None
            buzz_id = ev.buzz_id if isinstance(ev, RulingCorrected) else 0
            entry = LedgerEntry(ev.seq, ev.tossup_id, buzz_id, ev.team, ev.points, bonus_id)
            if not any(e.seq == ev.amends for e in s.game.ledger):
                raise ValueError(f"seq {ev.seq}: ruling {ev.amends} is not in force")
            protests = o.protests
            if ev.protest_seq is not None and ev.protest_seq in protests:
                p = replace(protests[ev.protest_seq], correction_seq=ev.seq)
                protests = {**protests, p.seq: p}
            o = replace(
                o, rulings={**o.rulings, ev.seq: ev}, protests=protests,
                superseded={**o.superseded, ev.amends: ev.seq},
            )  # fmt: skip
            return replace(s, game=_amend(s.game, ev.amends, entry, ev), officiating=o)
    raise ValueError(f"not an amendment: {ev.type}")


def _amend(g: GameState, amends: int, entry: LedgerEntry, ev: AnyRuling) -> GameState:
    """``g`` with the ruling ``amends`` replaced by ``entry`` on its ledger (in its place) and
    in its scores; the same in the states an undo would restore, so that an undo after a
    correction does not bring back what it corrected."""
    from grace_arena.core.match import PartResult

    old = next((e for e in g.ledger if e.seq == amends), None)
    history = tuple(_amend(h, amends, entry, ev) for h in g.history)
    if old is None:
        return replace(g, history=history)
    scores = dict(g.scores)
    scores[old.team] -= old.points
    scores[entry.team] = scores.get(entry.team, 0) + entry.points
    ledger = tuple(entry if e.seq == amends else e for e in g.ledger)
    bonus = g.bonus
    if isinstance(ev, BonusPartCorrected) and bonus is not None and bonus.bonus_id == ev.bonus_id:
        results = tuple(
            PartResult(r.part, ev.team, ev.ruling, ev.points, r.bounceback, r.choice)
            if (r.part, r.bounceback) == (ev.part, ev.bounceback)
            else r
            for r in bonus.results
        )
        bonus = replace(bonus, results=results)
    return replace(g, scores=scores, ledger=ledger, history=history, bonus=bonus)


# --------------------------------------------------------------------------------------------
# Reading the match


@dataclass(frozen=True)
class RulingInForce:
    """A ruling on the ledger, as the officials see it: what they may correct."""

    seq: int
    tossup_id: str
    team: str
    player: str | None  # a tossup's; None for a bonus part
    ruling: str
    points: int
    bonus_id: str | None = None
    part: int | None = None  # 0-based
    bounceback: bool = False
    corrected: bool = False  # it is a correction (of ``amends``)
    amends: int | None = None


@dataclass(frozen=True)
class Cycle:
    """One tossup played (and its bonus), numbered as played, with its rulings in force."""

    number: int
    tossup_id: str
    thrown_out: bool
    rulings: tuple[RulingInForce, ...]


def rulings_in_force(s: MatchState) -> list[RulingInForce]:
    """The rulings on the ledger, in order (prompts left out: they score nothing and are no
    answer's ruling)."""
    out = []
    for entry in s.game.ledger:
        ev = s.officiating.rulings.get(entry.seq)
        if ev is None or ev.ruling is Ruling.PROMPT:
            continue
        amends = ev.amends if isinstance(ev, RulingCorrected | BonusPartCorrected) else None
        if isinstance(ev, Ruled | RulingCorrected):
            out.append(RulingInForce(entry.seq, ev.tossup_id, ev.team, ev.player,
                                     ev.ruling.value, entry.points, corrected=amends is not None,
                                     amends=amends))  # fmt: skip
        else:
            out.append(RulingInForce(entry.seq, ev.tossup_id, ev.team, None, ev.ruling.value,
                                     entry.points, ev.bonus_id, ev.part, ev.bounceback,
                                     corrected=amends is not None, amends=amends))  # fmt: skip
    return out


def cycles(s: MatchState) -> list[Cycle]:
    """Every tossup played, in order, with its rulings in force."""
    from grace_arena.core.events import TossupOutcome

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
    """Whether upholding ``protest`` would change the match's result, on the state ``s``."""
    from grace_arena.core.commands import ResolveProtest
    from grace_arena.core.match import Match

    now = dict(s.game.scores)
    scratch = Match(s)
    refused = None
    try:
        scratch.handle(ResolveProtest(protest=protest, decision="upheld", by="impact"),
                       now=0.0)  # fmt: skip
        after = dict(scratch.state.game.scores)
    except IllegalCommand as exc:
        after, refused = now, str(exc)
    return Impact(now, after, _leaders(now), _leaders(after), refused)


# --------------------------------------------------------------------------------------------
# Deciding commands (called by the match's command dispatch)


def _tossup_of(s: MatchState, tossup: str) -> str:
    played = s.game.played
    if tossup in played:
        return tossup
    if tossup.isdigit() and 1 <= int(tossup) <= len(played):
        return played[int(tossup) - 1]
    if s.config.tossup(tossup) is not None:
        raise IllegalCommand(f"tossup {tossup!r} has not been played")
    raise IllegalCommand(
        f"no tossup {tossup!r} played in this match (give its id or its number, 1 to {len(played)})"
    )


def file_protest(run: _Decision, cmd: FileProtest) -> None:
    s = run.state
    team = run.team(cmd.team)
    if cmd.by == "player" and (cmd.player is None or cmd.player not in s.players[team.id]):
        raise IllegalCommand(f"player {cmd.player!r} has not joined team {team.id!r}")
    tossup_id = _tossup_of(s, cmd.tossup)
    part = None if cmd.part is None else cmd.part - 1
    if part is not None:
        parts = [r for r in rulings_in_force(s) if r.tossup_id == tossup_id and r.bonus_id]
        if not parts:
            raise IllegalCommand(f"tossup {tossup_id!r}'s cycle has no bonus ruled: no part to "
                                 "protest")  # fmt: skip
        spec = s.config.bonus(parts[0].bonus_id or "")
        if spec is not None and part >= len(spec.parts):
            raise IllegalCommand(f"the bonus has {len(spec.parts)} parts, not {cmd.part}")
    target = _protested(s, team.id, tossup_id, part)
    run.emit(
        ProtestFiled(
            team=team.id, tossup_id=tossup_id, part=part,
            ruling_seq=target.seq if target else None, answer=cmd.answer.strip(),
            reason=cmd.reason.strip(), by=cmd.by, player=cmd.player,
        )
    )  # fmt: skip


def _protested(s: MatchState, team: str, tossup_id: str, part: int | None) -> RulingInForce | None:
    """The ruling in force a protest of ``team`` is about (see the module docstring)."""
    mine = [r for r in rulings_in_force(s) if r.tossup_id == tossup_id]
    if part is None:
        tossup = [r for r in mine if r.bonus_id is None]
        own = [r for r in tossup if r.team == team]
        if own:
            return own[-1]
        return next((r for r in tossup if r.ruling == Ruling.CORRECT), None)
    on_part = [r for r in mine if r.bonus_id is not None and r.part == part]
    own = [r for r in on_part if r.team == team]
    if own:
        return own[-1]
    return next((r for r in on_part if not r.bounceback), None)


def resolve_protest(run: _Decision, cmd: ResolveProtest) -> None:
    s = run.state
    p = s.officiating.protests.get(cmd.protest)
    if p is None:
        known = ", ".join(str(n) for n in s.officiating.protests) or "none"
        raise IllegalCommand(f"no protest {cmd.protest} in this match (protests: {known})")
    if not p.open:
        raise IllegalCommand(
            f"protest {p.seq} was already resolved: {p.decision} by {p.decided_by}"
        )
    target = _protested(s, p.team, p.tossup_id, p.part)
    run.emit(ProtestResolved(protest_seq=p.seq, decision=cmd.decision, by=cmd.by,
                             reason=cmd.reason.strip()))  # fmt: skip
    if cmd.decision == "denied" or target is None:
        return
    flipped = Ruling.INCORRECT if target.ruling == Ruling.CORRECT else Ruling.CORRECT
    reason = f"protest {p.seq} upheld" + (f": {cmd.reason.strip()}" if cmd.reason.strip() else "")
    _correct(run, target.seq, flipped, None, by="td", reason=reason, protest=p.seq)


def correct_ruling(run: _Decision, cmd: CorrectRuling) -> None:
    _correct(run, cmd.seq, cmd.ruling, cmd.player, by=cmd.by, reason=cmd.reason.strip(),
             protest=None)  # fmt: skip


def _correct(
    run: _Decision,
    seq: int,
    ruling: Ruling | None,
    player: str | None,
    *,
    by: str,
    reason: str,
    protest: int | None,
) -> None:
    s = run.state
    g = s.game
    entry = next((e for e in g.ledger if e.seq == seq), None)
    if entry is None:
        newer = s.officiating.superseded.get(seq)
        hint = f": it was corrected (ruling {newer} is in force)" if newer else ""
        raise IllegalCommand(f"no ruling {seq} in force in this match{hint}")
    made = s.officiating.rulings.get(seq)
    assert made is not None
    if made.ruling is Ruling.PROMPT:
        raise IllegalCommand("a prompt is no ruling on an answer: correct the ruling after it")
    if ruling is Ruling.PROMPT:
        raise IllegalCommand("a correction rules an answer correct or incorrect, not a prompt")
    ruling = ruling or made.ruling
    if isinstance(made, Ruled | RulingCorrected):
        _correct_tossup(run, entry, made, ruling, player, by=by, reason=reason, protest=protest)
    else:
        if player is not None:
            raise IllegalCommand("a bonus part is the team's: there is no player to correct")
        _correct_part(run, entry, made, ruling, by=by, reason=reason, protest=protest)


def _correct_tossup(
    run: _Decision,
    entry: LedgerEntry,
    made: Ruled | RulingCorrected,
    ruling: Ruling,
    player: str | None,
    *,
    by: str,
    reason: str,
    protest: int | None,
) -> None:
    s, rules = run.state, run.config.rules
    team = made.team
    if player is not None and player != made.player:
        team = next((t for t, members in s.players.items() if player in members), "")
        if not team:
            raise IllegalCommand(f"no player {player!r} in this match")
    player = player or made.player
    if ruling is made.ruling and (team, player) == (made.team, made.player):
        raise IllegalCommand(f"ruling {entry.seq} is {ruling.value} already")
    others = [
        e
        for e in s.game.ledger
        if e.tossup_id == entry.tossup_id and e.bonus_id is None and e.seq != entry.seq
    ]
    if team != made.team and any(e.team == team for e in others):
        raise IllegalCommand(f"team {team!r} already has a ruling on this tossup")
    if ruling is Ruling.CORRECT:
        taken = [e for e in others if _ruling_of(s, e.seq) is Ruling.CORRECT]
        if taken:
            raise IllegalCommand(
                f"team {taken[0].team!r}'s correct answer (ruling {taken[0].seq}) stands on this "
                "tossup: correct it first"
            )
    buzz = s.officiating.buzzes.get(made.buzz_id)
    spec = run.config.tossup(entry.tossup_id)
    power = False
    if ruling is Ruling.CORRECT:
        power = (
            rules.power_points is not None
            and spec is not None
            and spec.power_index is not None
            and buzz is not None
            and buzz.word_index < spec.power_index
        )
        points = rules.power_points if power else rules.correct_points
        assert points is not None
    else:
        before = s.game.ledger[: s.game.ledger.index(entry)]
        negged = any(e.tossup_id == entry.tossup_id and e.bonus_id is None and e.points < 0
                     for e in before)  # fmt: skip
        interrupt = buzz.interrupt if buzz is not None else False
        points = rules.incorrect_points(interrupt=interrupt, negged=negged)
    run.emit(
        RulingCorrected(
            amends=entry.seq, buzz_id=made.buzz_id, tossup_id=entry.tossup_id, team=team,
            player=player, ruling=ruling, points=points, power=power, by=by, reason=reason,
            protest_seq=protest,
        )
    )  # fmt: skip


def _ruling_of(s: MatchState, seq: int) -> Ruling | None:
    ev = s.officiating.rulings.get(seq)
    return ev.ruling if ev is not None else None


def _correct_part(
    run: _Decision,
    entry: LedgerEntry,
    made: BonusPartRuled | BonusPartCorrected,
    ruling: Ruling,
    *,
    by: str,
    reason: str,
    protest: int | None,
) -> None:
    s = run.state
    if made.choice == "abstain":
        raise IllegalCommand("an abstention is scored by the model's answer: nothing to rule")
    if ruling is made.ruling:
        raise IllegalCommand(f"ruling {entry.seq} is {ruling.value} already")
    if ruling is Ruling.CORRECT:
        for e in s.game.ledger:
            other = s.officiating.rulings.get(e.seq)
            if (e.seq != entry.seq and isinstance(other, BonusPartRuled | BonusPartCorrected)
                    and other.bonus_id == made.bonus_id and other.part == made.part
                    and other.ruling is Ruling.CORRECT):  # fmt: skip
                raise IllegalCommand(
                    f"team {other.team!r}'s correct answer to this part (ruling {e.seq}) "
                    "stands: correct it first"
                )
    spec = run.config.bonus(made.bonus_id)
    value = spec.parts[made.part].value if spec is not None else 0
    consult = run.config.rules.consult
    points = 0
    if ruling is Ruling.CORRECT:
        if consult is not None and made.choice == "own":
            points = consult.own_points
        elif consult is not None and made.choice == "consult":
            points = consult.consult_points
        else:
            points = value
    run.emit(
        BonusPartCorrected(
            amends=entry.seq, bonus_id=made.bonus_id, tossup_id=made.tossup_id, part=made.part,
            team=made.team, ruling=ruling, points=points, bounceback=made.bounceback,
            answer=made.answer, choice=made.choice, by=by, reason=reason, protest_seq=protest,
        )
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# In words (QBJ notes, the stats report, the command line)


def question_label(s: MatchState, tossup_id: str, part: int | None = None) -> str:
    """ "tossup 3" (its number among the tossups heard, as QBJ numbers its questions), or
    "bonus part 2 of tossup 3"."""
    from grace_arena.core.events import TossupOutcome

    heard = [t for t in s.game.played if s.game.outcomes.get(t) is not TossupOutcome.THROWN_OUT]
    label = f"tossup {heard.index(tossup_id) + 1}" if tossup_id in heard else f"tossup {tossup_id}"
    return label if part is None else f"bonus part {part + 1} of {label}"


def describe_protest(s: MatchState, p: Protest, names: dict[str, str] | None = None) -> str:
    """One protest in a sentence: who, what, the answer given, why, and how it stands."""
    names = names or {}
    what = question_label(s, p.tossup_id, p.part)
    text = f"Protest {p.seq} by {names.get(p.team, p.team)} on {what}"
    if p.answer:
        text += f' (answer given: "{p.answer}")'
    if p.reason:
        text += f": {p.reason}"
    if p.open:
        return f"{text}. Open; {impact(s, p.seq).describe(names)}."
    verdict = f"{(p.decision or '').capitalize()} by {p.decided_by}"
    if p.decision_reason:
        verdict += f": {p.decision_reason}"
    return f"{text}. {verdict}."


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
