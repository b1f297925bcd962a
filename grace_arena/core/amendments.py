"""The officials' amendments inside the match engine: protests filed and resolved, corrections
of earlier cycles. What they mean, and how to read a match's protests and cycles, is told in
:mod:`grace_arena.core.protests`; this module is what the match's reducer and command
dispatch call (``observe`` and ``reduce`` fold the events, ``file_protest``,
``resolve_protest`` and ``correct_ruling`` decide the commands).

The match imports this module, so it imports nothing of the match: the match's state and its
decision are typed loosely here (``MatchState``, ``Decision``), and a ledger entry is made as
a copy of the one it replaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

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
from grace_arena.core.rules import rule_set

if TYPE_CHECKING:
    from grace_arena.core.commands import CorrectRuling, FileProtest, ResolveProtest

#: ``grace_arena.core.match``'s ``MatchState``, ``GameState``, ``LedgerEntry`` and ``Decision``.
MatchState = Any
GameState = Any
LedgerEntry = Any
Decision = Any

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
            old = next((e for e in s.game.ledger if e.seq == ev.amends), None)
            if old is None:
                raise ValueError(f"seq {ev.seq}: ruling {ev.amends} is not in force")
            entry = replace(old, seq=ev.seq, team=ev.team, points=ev.points)
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
    correction does not bring back what it corrected. A state without that ruling is left as
    it is, and the states before it with it (a ledger only grows, but for a throw-out, which
    leaves no state to restore)."""
    old = next((e for e in g.ledger if e.seq == amends), None)
    if old is None:
        return g
    history = tuple(_amend(h, amends, entry, ev) for h in g.history)
    scores = dict(g.scores)
    scores[old.team] -= old.points
    scores[entry.team] = scores.get(entry.team, 0) + entry.points
    ledger = tuple(entry if e.seq == amends else e for e in g.ledger)
    bonus = g.bonus
    if isinstance(ev, BonusPartCorrected) and bonus is not None and bonus.bonus_id == ev.bonus_id:
        results = tuple(
            replace(r, team=ev.team, ruling=ev.ruling, points=ev.points)
            if (r.part, r.bounceback) == (ev.part, ev.bounceback)
            else r
            for r in bonus.results
        )
        bonus = replace(bonus, results=results)
    return replace(g, scores=scores, ledger=ledger, history=history, bonus=bonus)


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


def file_protest(run: Decision, cmd: FileProtest) -> None:
    s = run.state
    team = run.team(cmd.team)
    if cmd.by == "player" and (cmd.player is None or cmd.player not in s.players[team.id]):
        raise IllegalCommand(f"player {cmd.player!r} has not joined team {team.id!r}")
    if cmd.by == "player" and not s.config.phone_protests:
        raise IllegalCommand("this match takes protests from the moderator only")
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
        # a phone protests a part its team played (its bonus, or a bounceback of it)
        if cmd.by == "player" and not any(r.part == part and r.team == team.id for r in parts):
            raise IllegalCommand(f"your team did not play part {cmd.part} of that bonus")
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


def resolve_protest(run: Decision, cmd: ResolveProtest) -> None:
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


def correct_ruling(run: Decision, cmd: CorrectRuling) -> None:
    _correct(run, cmd.seq, cmd.ruling, cmd.player, by=cmd.by, reason=cmd.reason.strip(),
             protest=None)  # fmt: skip


def _correct(
    run: Decision,
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
    run: Decision,
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
                f"team {taken[0].team}'s correct answer (ruling {taken[0].seq}) stands on this "
                "tossup: correct it first"
            )
    buzz = s.officiating.buzzes.get(made.buzz_id)
    spec = run.config.tossup(entry.tossup_id)
    earlier = s.game.ledger[: s.game.ledger.index(entry)]
    # scored by the match's tossup rules, as the buzz was when it was first ruled
    score = rule_set(rules).tossups.buzz_score(
        ruling,
        word_index=buzz.word_index if buzz is not None else 0,
        power_index=spec.power_index if spec is not None and buzz is not None else None,
        interrupt=buzz.interrupt if buzz is not None else False,
        before=[e.points for e in earlier if e.tossup_id == entry.tossup_id and e.bonus_id is None],
    )
    points, power = score.points, score.power
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
    run: Decision,
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
                    f"team {other.team}'s correct answer to this part (ruling {e.seq}) "
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
