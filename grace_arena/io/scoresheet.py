"""A match's scoresheet, in the layout clubs keep on paper: the Rosenberg sheet (MODAQ's
printable scoresheet is based on it). Cycles are rows; each team has a column per player
with the player's tossup points (15 power, 10, −5 neg), a column per bonus part (the
controlling team's parts, and a bounceback part the team took), the cycle's bonus total and
the team's running score; a last column notes what the record says of the cycle (a tossup or
bonus thrown out, a ruling taken back and made again, and any other event of the cycle, such
as a protest or a correction, in words).

A correction of an earlier cycle (by the moderator or the TD, or made by an upheld protest)
counts in the sheet's numbers where the match counts it: in the place of the ruling it amends
(the player credited, the tossup's or the part's points, the running totals after it), the
way the standings and the stats read the match's ledger; its note on the row says what it
changed and why.

In a format that limits the players a team fields (ACF, PACE, NAQT: 4; ``core.lineups``), a
player's cell is shaded with a · for a tossup the player sat out on the bench; a substitution
is marked on the row of the first tossup it counts for: "in" and "out" in the two players'
cells and a note ("Sub: Dee in for Ada (halftime)"); one made after the last tossup read is
noted on the next (blank) row, and a sheet not started heads a benched player "Dee (bench)".

:func:`scoresheet` builds the sheet from the match's events alone (the record's source of
truth, replayed as the match scores it), so a sheet printed from the record agrees with every
screen; a match not started yet gives a blank sheet with its teams (and the players who have
joined). :func:`render_html` writes it as one self-contained HTML page laid out for the
browser's print (A4 or Letter, portrait, one page for a 20-tossup match).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grace_arena.core import lineups
from grace_arena.core.config import MatchConfig

__all__ = [
    "NOTES",
    "Cycle",
    "Scoresheet",
    "ScoresheetPages",
    "TeamColumns",
    "blank_rows",
    "render_html",
    "scoresheet",
]

#: Blank rows after the last cycle of a match under way (or of a blank sheet): overtime, or
#: tossups still to read, written by hand.
OVERTIME_ROWS = 3


@dataclass
class TeamColumns:
    """One team's columns: its players (in the order they joined or buzzed), its bonus parts."""

    id: str
    name: str
    players: list[str] = field(default_factory=list)
    parts: int = 3


@dataclass
class Cycle:
    """One tossup read, and its bonus."""

    number: int  # 1-based, in the order the match read them (thrown-out ones included)
    tossup_id: str
    #: Each team's answers: player name -> tossup points (several only after an undo).
    tossup_points: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The players whose answer was a power.
    powers: set[tuple[str, str]] = field(default_factory=set)
    bonus_id: str | None = None
    bonus_team: str | None = None
    #: Each team's parts: part index -> points (the controlling team's, and bouncebacks).
    bonus_parts: dict[str, dict[int, int]] = field(default_factory=dict)
    thrown_out: bool = False
    bonus_thrown_out: bool = False
    notes: list[str] = field(default_factory=list)
    #: Each team's score after this cycle (what the match counted).
    totals: dict[str, int] = field(default_factory=dict)
    #: Each team's lineup as the tossup started (player names), in a format that limits the
    #: players a team fields (``ScoringRules.lineup_size``); None: every player plays.
    lineups: dict[str, tuple[str, ...]] | None = None
    #: The players a substitution brought in and took out from this tossup: (team, name).
    came_in: set[tuple[str, str]] = field(default_factory=set)
    went_out: set[tuple[str, str]] = field(default_factory=set)

    def plays(self, team: str, player: str) -> bool:
        """Whether ``player`` of ``team`` was in the lineup for this tossup."""
        return self.lineups is None or player in self.lineups.get(team, ())

    def tossup_total(self, team: str) -> int:
        return 0 if self.thrown_out else sum(self.tossup_points.get(team, {}).values())

    def bonus_total(self, team: str) -> int:
        if self.thrown_out or self.bonus_thrown_out:
            return 0
        return sum(self.bonus_parts.get(team, {}).values())


@dataclass
class Scoresheet:
    """The sheet of one match: its header, its team columns, its cycles (rows)."""

    match_id: int | None
    title: str
    teams: list[TeamColumns]
    cycles: list[Cycle]
    rules: str = ""
    tossups: int = 0  # how many tossups the match has (its packet's, or those chosen)
    regulation: int | None = None
    packet: str | None = None
    round: str | None = None
    room: str | None = None
    ended: bool = False
    #: Substitutions made after the last cycle, for the next tossup (in words).
    pending_subs: list[str] = field(default_factory=list)
    #: Each team's lineup now (player names), in a format with a lineup size; else None.
    lineups: dict[str, tuple[str, ...]] | None = None
    #: Each team's players who joined and are not in its lineup now (names).
    bench: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The final score by team id (the running total after the last cycle).
    scores: dict[str, int] = field(default_factory=dict)
    #: The match's score as the engine replays the record, when it differs from the
    #: sheet's: an event that changes scores which the sheet cannot read (said on it, never
    #: printed as if the numbers agreed).
    record_scores: dict[str, int] | None = None

    @property
    def started(self) -> bool:
        return bool(self.cycles)


def _player_names(events: Sequence[Any]) -> dict[str, str]:
    return {ev.player: ev.name for ev in events if getattr(ev, "type", "") == "player_joined"}


def _default_note(event: Any) -> str:
    """An event this sheet has no words of its own for, in words: its type and what it says
    (who, which part, why), so that a new kind of event is on the sheet from the day it is
    recorded."""
    data = event.model_dump(mode="json") if hasattr(event, "model_dump") else dict(event)
    skip = {"type", "seq", "t", "tossup_id", "deadline", "bonus_id", "buzz_id"}
    said = [f"{k} {v}" for k, v in data.items() if k not in skip and v not in (None, "", [], {})]
    what = str(data.get("type", "event")).replace("_", " ")
    return what + (f" ({', '.join(said)})" if said else "")


#: How an event of each type is noted on its cycle's row, by type: add one to say a new kind
#: of event in words of its own (a protest, a correction, a substitution). Events of a type
#: not here and not scored by the sheet are noted by :func:`_default_note` when they name a
#: tossup or a bonus.
NOTES: dict[str, Callable[[Any, Callable[[str], str]], str]] = {}


def _protest_filed(ev: Any, name: Callable[[str], str]) -> str:
    what = f"bonus part {ev.part + 1}" if ev.part is not None else "the tossup"
    said = [f"answer “{ev.answer}”"] if ev.answer else []
    said += [f"reason: {ev.reason}"] if ev.reason else []
    phone = f", from {name(ev.player)}'s phone" if ev.by == "player" and ev.player else ""
    return f"Protest by {ev.team} on {what}{phone}" + (f" ({'; '.join(said)})" if said else "")


def _protest_resolved(ev: Any, _name: Callable[[str], str]) -> str:
    why = f": {ev.reason}" if ev.reason else ""
    return f"Protest {ev.decision} by {ev.by}{why}"


def _ruling_corrected(ev: Any, name: Callable[[str], str]) -> str:
    by = "the TD" if ev.by == "td" else "the moderator"
    why = f": {ev.reason}" if ev.reason else ""
    return f"Corrected by {by}: {name(ev.player)} ({ev.team}) {ev.ruling}, {ev.points:+d}{why}"


def _bonus_part_corrected(ev: Any, _name: Callable[[str], str]) -> str:
    by = "the TD" if ev.by == "td" else "the moderator"
    why = f": {ev.reason}" if ev.reason else ""
    return (
        f"Corrected by {by}: bonus part {ev.part + 1} ({ev.team}) {ev.ruling}, {ev.points:+d}{why}"
    )


NOTES.update(
    protest_filed=_protest_filed,
    protest_resolved=_protest_resolved,
    ruling_corrected=_ruling_corrected,
    bonus_part_corrected=_bonus_part_corrected,
)

#: Events the sheet reads for its numbers, or that say nothing a scorekeeper writes down.
_SCORED_OR_SILENT = {
    "match_created", "player_joined", "tossup_started", "words_revealed", "reading_finished",
    "reading_paused", "reading_resumed", "pace_changed", "buzz_accepted", "buzz_refused",
    "buzz_repeated", "answer_given", "ruled", "ruling_undone", "clock_resumed", "tossup_ended",
    "bonus_started", "bonus_answer_given", "bonus_part_consulted", "bonus_part_ruled",
    "bonus_part_undone", "bonus_ended", "match_ended", "player_substituted", "timeout_called",
}  # fmt: skip


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def substitution_note(ev: Any, name: Callable[[str], str]) -> str:
    """A substitution as the scorekeeper writes it: "Sub: Dee in for Ada (halftime)"."""
    out = f" for {name(ev.player_out)}" if ev.player_out else ""
    return f"Sub: {name(ev.player_in)} in{out} ({str(ev.reason).replace('_', ' ')})"


def scoresheet(
    match_id: int | None,
    events: Sequence[Any],
    *,
    config: MatchConfig | None = None,
    describe_rules: Callable[[MatchConfig], str] | None = None,
    roster: dict[str, Sequence[str]] | None = None,
    round_: str | None = None,
    room: str | None = None,
) -> Scoresheet:
    """The scoresheet of a match from its events (its ``match_created`` gives the set-up; a
    ``config`` alone gives a blank sheet). ``roster``: players known beforehand by team id
    (an event's registered players), listed first."""
    created = next((ev for ev in events if getattr(ev, "type", "") == "match_created"), None)
    config = config or (created.config if created is not None else None)  # type: ignore[attr-defined]
    if config is None:
        raise ValueError("a scoresheet needs the match's set-up (its match_created event)")
    names = _player_names(events)
    for t in config.teams:  # a model team's player is its model
        if t.kind.value == "model":
            names.setdefault(t.model_player, t.model or t.name)

    def name(player: str) -> str:
        return names.get(player, player)

    n_parts = max((len(b.parts) for b in config.bonuses), default=0) if config.rules.bonuses else 0
    teams = [
        TeamColumns(t.id, t.name, list((roster or {}).get(t.id, ())), parts=n_parts)
        for t in config.teams
    ]
    by_id = {t.id: t for t in teams}
    for ev in events:  # the players who joined, in that order
        joined = getattr(ev, "type", "") == "player_joined" and ev.team in by_id
        if joined and ev.name not in by_id[ev.team].players:
            by_id[ev.team].players.append(ev.name)

    cycles: dict[str, Cycle] = {}
    current: Cycle | None = None
    sized = config.rules.lineup_size is not None
    lineup_ids: dict[str, tuple[str, ...]] = {}  # team -> the players in its lineup now
    subs: list[Any] = []  # substitutions since the last tossup started

    def lineup_names() -> dict[str, tuple[str, ...]]:
        return {t.id: tuple(name(p) for p in lineup_ids.get(t.id, ())) for t in teams}

    rulings: dict[int, Any] = {}  # seq -> Ruled (or the RulingCorrected) in force
    parts: dict[int, Any] = {}  # seq -> BonusPartRuled (or BonusPartCorrected) in force
    superseded: dict[int, int] = {}  # a ruling corrected -> the correction in its place

    def in_force(seq: int) -> int:
        """The seq of what stands in ruling ``seq``'s place now (its last correction)."""
        while seq in superseded:
            seq = superseded[seq]
        return seq

    def note(ev: Any, kind: str) -> None:
        """An event the sheet has words for, on the row of the tossup or bonus it names, else
        on the cycle under way."""
        tossup = getattr(ev, "tossup_id", None)
        bonus = getattr(ev, "bonus_id", None)
        cycle = cycles.get(tossup) if tossup else bonus_cycle.get(bonus) if bonus else current
        if cycle is not None:
            cycle.notes.append(NOTES.get(kind, lambda e, _name: _default_note(e))(ev, name))

    bonus_cycle: dict[str, Cycle] = {}
    thrown_bonuses: set[str] = set()  # their parts count for nobody
    ended = False
    for ev in events:
        kind = getattr(ev, "type", "")
        lineup_ids = lineups.reduce(lineup_ids, config, ev)
        if kind == "tossup_started":
            current = cycles.get(ev.tossup_id)
            if current is None:
                current = Cycle(len(cycles) + 1, ev.tossup_id)
                cycles[ev.tossup_id] = current
                current.lineups = lineup_names() if sized else None
                if len(cycles) > 1:  # a substitution before the first tossup is the lineup
                    for sub in subs:
                        current.notes.append(substitution_note(sub, name))
                        current.came_in.add((sub.team, name(sub.player_in)))
                        if sub.player_out:
                            current.went_out.add((sub.team, name(sub.player_out)))
                subs = []
        elif kind == "player_substituted":
            subs.append(ev)
        elif kind == "timeout_called" and current is not None:  # (its end: a server clock)
            team_name = by_id[ev.team].name if ev.team in by_id else ev.team
            current.notes.append(f"Timeout after this tossup: {team_name} ({_nth(ev.number)})")
        elif kind == "ruled" and ev.ruling != "prompt":
            rulings[ev.seq] = ev
        elif kind == "ruling_undone":
            undone = rulings.pop(in_force(ev.ruled_seq), None)
            cycle = cycles.get(ev.tossup_id)
            if undone is not None and cycle is not None:
                cycle.notes.append(f"ruling on {name(undone.player)} ({undone.ruling}) undone")
        elif kind == "tossup_ended":
            cycle = cycles.get(ev.tossup_id)
            if cycle is not None:
                thrown = ev.outcome == "thrown_out"
                if thrown and not cycle.thrown_out:
                    cycle.notes.append(f"tossup thrown out ({ev.reason.replace('_', ' ')})")
                cycle.thrown_out = thrown
        elif kind == "bonus_started":
            cycle = cycles.get(ev.tossup_id)
            if cycle is not None:
                cycle.bonus_id, cycle.bonus_team = ev.bonus_id, ev.team
                cycle.bonus_thrown_out = False
                bonus_cycle[ev.bonus_id] = cycle
        elif kind == "bonus_part_ruled" and ev.ruling != "prompt":
            parts[ev.seq] = ev
        elif kind == "bonus_part_undone":
            undone = parts.pop(in_force(ev.ruled_seq), None)
            cycle = bonus_cycle.get(ev.bonus_id)
            if undone is not None and cycle is not None:
                cycle.notes.append(f"bonus part {ev.part + 1} ruling undone")
        elif kind == "bonus_ended":
            cycle = bonus_cycle.get(ev.bonus_id)
            if cycle is not None and ev.outcome == "thrown_out":
                cycle.bonus_thrown_out = True
                thrown_bonuses.add(ev.bonus_id)
                reason = f" ({ev.reason.replace('_', ' ')})" if ev.reason else ""
                cycle.notes.append(f"bonus thrown out{reason}")
        elif kind in ("ruling_corrected", "bonus_part_corrected"):
            # a correction (made by hand, or by an upheld protest) takes the place of the
            # ruling it amends, in the numbers as in the match's ledger; its note says what
            # it was
            in_place = rulings if kind == "ruling_corrected" else parts
            in_place.pop(in_force(ev.amends), None)
            superseded[ev.amends] = ev.seq
            in_place[ev.seq] = ev
            note(ev, kind)
        elif kind == "match_ended":
            ended = True
        elif kind not in _SCORED_OR_SILENT:
            # another kind of event (a protest, a substitution...): noted on the row of the
            # tossup or bonus it names, else on the cycle under way
            note(ev, kind)

    for ruled in rulings.values():
        cycle = cycles.get(ruled.tossup_id)
        if cycle is None:
            continue
        player = name(ruled.player)
        team = by_id.get(ruled.team)
        if team is not None and player not in team.players:
            team.players.append(player)
        answers = cycle.tossup_points.setdefault(ruled.team, {})
        answers[player] = answers.get(player, 0) + ruled.points
        if ruled.power and ruled.points > 0:
            cycle.powers.add((ruled.team, player))
    for ruled in parts.values():
        cycle = bonus_cycle.get(ruled.bonus_id)
        if cycle is not None and ruled.bonus_id not in thrown_bonuses:
            team_parts = cycle.bonus_parts.setdefault(ruled.team, {})
            team_parts[ruled.part] = team_parts.get(ruled.part, 0) + ruled.points

    rows = sorted(cycles.values(), key=lambda c: c.number)
    running = {t.id: 0 for t in teams}
    for cycle in rows:
        for t in teams:
            running[t.id] += cycle.tossup_total(t.id) + cycle.bonus_total(t.id)
        cycle.totals = dict(running)
    recorded = _replayed_scores(events) if created is not None else None
    pending = [substitution_note(sub, name) for sub in subs] if cycles else []
    return Scoresheet(
        match_id=match_id,
        title=config.title,
        teams=teams,
        cycles=rows,
        rules=describe_rules(config) if describe_rules else "",
        tossups=len(config.tossups),
        regulation=config.rules.regulation_tossups,
        packet=config.packet_id,
        round=round_,
        room=room,
        ended=ended,
        pending_subs=pending,
        lineups=lineup_names() if sized else None,
        bench={t.id: tuple(_bench(events, t.id, lineup_ids, name)) for t in teams} if sized else {},
        scores=dict(running),
        record_scores=recorded if recorded is not None and recorded != running else None,
    )


def _bench(
    events: Sequence[Any], team: str, lineup: dict[str, tuple[str, ...]], name: Callable
) -> list[str]:
    """The names of ``team``'s players who joined and are not in its lineup."""
    joined = (e for e in events if getattr(e, "type", "") == "player_joined" and e.team == team)
    return [
        name(p) for p in dict.fromkeys(e.player for e in joined) if p not in lineup.get(team, ())
    ]


def _replayed_scores(events: Sequence[Any]) -> dict[str, int] | None:
    """The scores the match engine gives the events (None when it cannot replay them)."""
    from grace_arena.core.match import Match

    try:
        return dict(Match.replay(events).scores)
    except (ValueError, TypeError, AttributeError, KeyError):
        return None  # events of the record it does not know: nothing to compare with


def blank_rows(sheet: Scoresheet) -> int:
    """How many empty rows follow the cycles: the tossups still to read (a blank sheet: all
    of them, the format's regulation at most), then a few for overtime; none once ended."""
    if sheet.ended:
        return 0
    planned = sheet.tossups
    if sheet.regulation:
        planned = min(planned, sheet.regulation) if planned else sheet.regulation
    return max(0, planned - len(sheet.cycles)) + OVERTIME_ROWS


# -------------------------------------------------------------------------------------------
# HTML for the browser's print


def _points(n: int) -> str:
    return f"−{-n}" if n < 0 else str(n)


_CSS = """
@page { size: auto; margin: 10mm; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font: 9pt/1.25 "DejaVu Sans", Arial, Helvetica, sans-serif; color: #000; margin: 0;
       padding: 8px; }
@media print { body { padding: 0; } .screen-only { display: none; } }
header { display: flex; flex-wrap: wrap; gap: 2px 16px; align-items: baseline;
         margin-bottom: 4px; }
header h1 { font-size: 13pt; margin: 0; overflow-wrap: anywhere; }
header span { overflow-wrap: anywhere; }
table.sheet { width: 100%; table-layout: fixed; border-collapse: collapse; }
.sheet th, .sheet td { border: 1px solid #000; padding: 1px 2px; text-align: center;
                       overflow: hidden; overflow-wrap: anywhere; word-break: break-word; }
.sheet thead th { font-weight: 600; font-size: 7.5pt; vertical-align: bottom; }
.sheet th.team { font-size: 9pt; background: #e8e8e8; }
.sheet td { height: 6.2mm; font-variant-numeric: tabular-nums; }
.sheet .n { width: 6mm; }
.sheet .part, .sheet .bonus { background: #f4f4f4; }
.sheet .total { font-weight: 700; border-right: 2px solid #000; }
.sheet td.notes, .sheet th.notes { text-align: left; font-size: 7pt; }
.sheet tr.thrown td:not(.notes):not(.n):not(.total) { color: #777; text-decoration: line-through; }
.sheet .power { font-weight: 700; text-decoration: underline; }
.sheet .neg { font-style: italic; }
.sheet td.bench { background: #d0d0d0; color: #333; }
.sheet td.sub-in { border-left: 2px solid #000; font-weight: 700; }
.sheet tr.overtime td.n { font-style: italic; }
.sheet tfoot td { font-weight: 700; height: 7mm; }
.legend { margin-top: 3px; font-size: 7pt; }
.mismatch { border: 2px solid #000; padding: 2px 4px; margin: 2px 0 4px; }
.signatures { display: flex; gap: 24px; margin-top: 10px; font-size: 8pt; }
.signatures span { flex: 1; border-top: 1px solid #000; padding-top: 2px; }
"""


def header_name(sheet: Scoresheet, team: str, player: str) -> str:
    """A player's column head: on a sheet not started, a player who joined and waits on the
    bench is "Dee (bench)" (once started, each row shades the bench)."""
    if sheet.started or player not in sheet.bench.get(team, ()):
        return player
    return f"{player} (bench)"


#: What the legend says of corrections (and upheld protests, which are corrections).
CORRECTIONS_LEGEND = (
    "A ruling corrected later (or reversed by an upheld protest) counts as corrected; the "
    "row's note says what it was and why."
)

#: What the legend says of the lineup marks (a format with a lineup size).
LINEUP_LEGEND = (
    "A shaded · : not in the lineup (on the bench); in / out: a substitution from that "
    "tossup (its note says who and why)."
)


def _team_header(sheet: Scoresheet, team: TeamColumns, players: int) -> list[str]:
    cells = [
        f'<th class="player">{html.escape(header_name(sheet, team.id, p))}</th>'
        for p in team.players[:players]
    ]
    cells += ['<th class="player"></th>'] * (players - len(cells))
    cells += [f'<th class="part">B{i + 1}</th>' for i in range(team.parts)]
    if team.parts:
        cells.append('<th class="bonus">Bon</th>')
    cells.append('<th class="total">Total</th>')
    return cells


def lineup_mark(cycle: Cycle, team: str, player: str) -> str:
    """What a player's cell says of the lineup: "in" (a substitution brought the player in
    for this tossup), "out" (took the player out), "·" (on the bench), else ""."""
    if (team, player) in cycle.came_in:
        return "in"
    if (team, player) in cycle.went_out:
        return "out"
    return "" if cycle.plays(team, player) else "·"


def _cycle_cells(cycle: Cycle, team: TeamColumns, players: int) -> list[str]:
    answers = cycle.tossup_points.get(team.id, {})
    cells = []
    listed = team.players[:players]
    for player in listed:
        mark = lineup_mark(cycle, team.id, player)
        if player in answers:
            points = answers[player]
            kind = "power" if (team.id, player) in cycle.powers else "neg" if points < 0 else ""
            kind += " sub-in" if mark == "in" else ""
            cells.append(f'<td class="{kind.strip()}">{_points(points)}</td>')
        elif mark == "in":
            cells.append('<td class="sub-in" title="substituted in">in</td>')
        elif mark:
            title = "substituted out" if mark == "out" else "not in the lineup"
            cells.append(f'<td class="bench" title="{title}">{mark}</td>')
        else:
            cells.append("<td></td>")
    cells += ["<td></td>"] * (players - len(listed))
    got = cycle.bonus_parts.get(team.id, {})
    heard = cycle.bonus_id is not None and (cycle.bonus_team == team.id or bool(got))
    for part in range(team.parts):
        text = _points(got[part]) if part in got else ("0" if heard else "")
        cells.append(f'<td class="part">{text}</td>')
    if team.parts:
        bonus = cycle.bonus_total(team.id)
        cells.append(f'<td class="bonus">{_points(bonus) if heard else ""}</td>')
    cells.append(f'<td class="total">{_points(cycle.totals.get(team.id, 0))}</td>')
    return cells


def mismatch_text(sheet: Scoresheet) -> str | None:
    """What the sheet says when its totals are not the record's (see ``record_scores``)."""
    if sheet.record_scores is None:
        return None
    said = ", ".join(f"{t.name} {_points(sheet.record_scores.get(t.id, 0))}" for t in sheet.teams)
    return (
        f"The record's score is {said}, not this sheet's: the record holds an event the sheet "
        "cannot count; the match's screens and exports have the record's."
    )


def _mismatch_html(sheet: Scoresheet) -> str:
    text = mismatch_text(sheet)
    return f'<p class="mismatch"><strong>{html.escape(text)}</strong></p>' if text else ""


def render_html(sheet: Scoresheet) -> str:
    """The sheet as one HTML page (no script, no outside file), laid out for printing."""
    # four player columns at least (ACF's and NAQT's most on the buzzers), more when more
    # played (substitutes)
    players = max([4, *(len(t.players) for t in sheet.teams)])
    head = [
        f"<h1>{html.escape(sheet.title)}</h1>",
        *(
            f"<span>{html.escape(text)}</span>"
            for text in (
                f"Match {sheet.match_id}" if sheet.match_id is not None else "",
                f"Round {sheet.round}" if sheet.round else "",
                f"Room {sheet.room}" if sheet.room else "",
                f"Packet {sheet.packet}" if sheet.packet else "",
                f"{sheet.tossups} tossups" if sheet.tossups else "",
                sheet.rules,
                "final" if sheet.ended else ("in progress" if sheet.started else "blank"),
            )
            if text
        ),
    ]
    cols = ['<col class="n">']
    for team in sheet.teams:
        width = [*(["p"] * players), *(["b"] * team.parts), *(["s"] if team.parts else []), "t"]
        cols += [f'<col class="{w}">' for w in width]
    cols.append('<col class="notes-col">')
    # the notes column takes what the numbers leave (a fixed layout shares the rest)
    team_cols = sum(players + t.parts + (1 if t.parts else 0) + 1 for t in sheet.teams)
    notes_share = 22 if team_cols <= 20 else 14
    style = f".sheet col.notes-col {{ width: {notes_share}%; }} .sheet col.n {{ width: 6mm; }}"
    first = ['<th class="n" rowspan="2">#</th>']
    for team in sheet.teams:
        span = players + team.parts + (1 if team.parts else 0) + 1
        first.append(f'<th class="team" colspan="{span}">{html.escape(team.name)}</th>')
    first.append('<th class="notes" rowspan="2">Notes</th>')
    second = [cell for team in sheet.teams for cell in _team_header(sheet, team, players)]
    body = []
    regulation = sheet.regulation
    for cycle in sheet.cycles:
        classes = []
        if cycle.thrown_out:
            classes.append("thrown")
        heard_before = sum(1 for c in sheet.cycles if c.number < cycle.number and not c.thrown_out)
        if regulation and not cycle.thrown_out and heard_before >= regulation:
            classes.append("overtime")
        cells = [f'<td class="n">{cycle.number}</td>']
        for team in sheet.teams:
            cells += _cycle_cells(cycle, team, players)
        notes = "; ".join(html.escape(n) for n in cycle.notes)
        cells.append(f'<td class="notes">{notes}</td>')
        attr = f' class="{" ".join(classes)}"' if classes else ""
        body.append(f"<tr{attr}>{''.join(cells)}</tr>")
    start, blank = len(sheet.cycles), blank_rows(sheet)
    for i in range(blank):
        overtime = i >= blank - OVERTIME_ROWS
        label = "OT" if overtime else str(start + i + 1)
        cells = [f'<td class="n">{label}</td>']
        for team in sheet.teams:
            cells += ["<td></td>"] * players
            cells += ['<td class="part"></td>'] * team.parts
            cells += ['<td class="bonus"></td>'] if team.parts else []
            cells.append('<td class="total"></td>')
        # the next tossup's row: the substitutions made for it
        notes = "; ".join(html.escape(n) for n in sheet.pending_subs) if i == 0 else ""
        cells.append(f'<td class="notes">{notes}</td>')
        attr = ' class="overtime"' if overtime else ""
        body.append(f"<tr{attr}>{''.join(cells)}</tr>")
    foot = ['<td class="n">Σ</td>']
    for team in sheet.teams:
        span = players + team.parts + (1 if team.parts else 0)
        label = "Final" if sheet.ended else "So far" if sheet.started else ""
        foot.append(f'<td colspan="{span}">{html.escape(team.name)} {label}</td>')
        score = _points(sheet.scores.get(team.id, 0)) if sheet.started else ""
        foot.append(f'<td class="total">{score}</td>')
    foot.append('<td class="notes"></td>')
    legend = (
        "Tossup points by player: <span class=power>15</span> power (underlined), "
        "<span class=neg>−5</span> neg; B1–B3: bonus parts (a bounceback part in the other "
        f"team's columns); a struck-through row was thrown out. {CORRECTIONS_LEGEND}"
    )
    if sheet.lineups is not None:
        legend += f" {LINEUP_LEGEND}"
    return "".join(
        [
            "<!doctype html><html lang=en><head><meta charset=utf-8>",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Scoresheet — {html.escape(sheet.title)}</title>",
            f"<style>{_CSS}{style}</style></head><body>",
            f"<header>{''.join(head)}</header>",
            _mismatch_html(sheet),
            '<table class="sheet">',
            f"<colgroup>{''.join(cols)}</colgroup>",
            f"<thead><tr>{''.join(first)}</tr><tr>{''.join(second)}</tr></thead>",
            f"<tbody>{''.join(body)}</tbody>",
            f"<tfoot><tr>{''.join(foot)}</tr></tfoot></table>",
            f'<p class="legend">{legend}</p>',
            '<div class="signatures"><span>Moderator</span><span>Scorekeeper</span>'
            "<span>Captains</span></div>",
            '<p class="screen-only">Print this page (Ctrl+P / ⌘P) for the paper sheet.</p>',
            "</body></html>",
        ]
    )


def rows_of(sheet: Scoresheet) -> Iterable[dict[str, Any]]:
    """The sheet's numbers by cycle (for tests and other writers): each team's tossup and
    bonus points and running total."""
    for cycle in sheet.cycles:
        yield {
            "number": cycle.number,
            "tossup_id": cycle.tossup_id,
            "thrown_out": cycle.thrown_out,
            **{f"{t.id}:tossup": cycle.tossup_total(t.id) for t in sheet.teams},
            **{f"{t.id}:bonus": cycle.bonus_total(t.id) for t in sheet.teams},
            **{f"{t.id}:total": cycle.totals[t.id] for t in sheet.teams},
        }


# -------------------------------------------------------------------------------------------
# The export format (``grace-arena export --format scoresheet``)


class ScoresheetPages:
    """``scoresheet``: a printable scoresheet per match: HTML (:func:`render_html`) and PDF
    (:func:`render_pdf`, A4) side by side in a folder, or the one ``--out`` names (``.html``
    or ``.pdf``); blank for a match not started, final for one that ended."""

    name, suffix, notes_pooled_left_out = "scoresheet", ".html", False

    def render(self, scope: Any, out: Path) -> list[Path]:
        from grace_arena.core.formats import describe
        from grace_arena.record.store import MatchStore

        matches = scope.matches
        if not matches:
            raise ValueError("nothing to export as a scoresheet: no match in scope")
        store = MatchStore(scope.engine)
        single = len(matches) == 1 and out.suffix.lower() in (".html", ".htm", ".pdf")
        if out.suffix and not single:
            raise ValueError(
                f"--out {out}: a scoresheet is an .html or .pdf file for one match; give a "
                "folder for several (each match's sheet in both)"
            )
        written = []
        for m in matches:
            sheet = scoresheet(m.id, store.events(m.id), describe_rules=lambda c: describe(c.rules))
            if single:
                targets = [out]
                out.parent.mkdir(parents=True, exist_ok=True)
            else:
                out.mkdir(parents=True, exist_ok=True)
                stem = out / f"scoresheet-match-{m.id}"
                targets = [stem.with_suffix(".html"), stem.with_suffix(".pdf")]
            for path in targets:
                if path.suffix.lower() == ".pdf":
                    path.write_bytes(render_pdf(sheet))
                else:
                    path.write_text(render_html(sheet), encoding="utf-8")
                written.append(path)
        return written


# -------------------------------------------------------------------------------------------
# PDF, without a browser (fpdf2: pure Python)

#: Unicode fonts a machine may have, tried in order for the PDF (the PDF's own fonts hold
#: Latin-1 only: a name in another script needs one of these, or the HTML sheet).
UNICODE_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/Library/Fonts/Arial Unicode.ttf",
    "/System/Library/Fonts/Supplemental/Arial Unicode.ttf",
    "C:/Windows/Fonts/arial.ttf",
)
PAPERS = ("A4", "Letter")


def _unicode_font() -> Path | None:
    return next((Path(p) for p in UNICODE_FONTS if Path(p).is_file()), None)


def render_pdf(sheet: Scoresheet, *, paper: str = "A4", font: Path | bool | None = True) -> bytes:
    """The sheet as a PDF of ``paper`` (A4 or Letter, portrait), the layout of
    :func:`render_html`. ``font``: a TrueType font file; True (the default): the first of
    :data:`UNICODE_FONTS` this machine has, else the PDF's own Helvetica; False: Helvetica,
    whose Latin-1 cannot write every name: a name it cannot is refused (``ValueError``
    naming it), never written wrong."""
    from fpdf import FPDF
    from fpdf.fonts import FontFace

    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    pdf = FPDF(orientation="portrait", unit="mm", format=paper.lower())
    pdf.set_margins(10, 10, 10)
    pdf.set_auto_page_break(True, margin=10)
    path = _unicode_font() if font is True else (font or None)
    minus = "−"
    if path is not None:
        pdf.add_font("sheet", "", str(path))
        pdf.add_font("sheet", "B", str(path))  # (drawn bold from the regular where needed)
        family = "sheet"
    else:
        family, minus = "helvetica", "-"

        def check(text: str) -> str:
            try:
                text.encode("latin-1")
            except UnicodeEncodeError:
                raise ValueError(
                    f"{text!r} cannot be written with the PDF's own font (Latin-1 only): "
                    "give a Unicode font (DejaVu Sans) or print the HTML sheet"
                ) from None
            return text

        # the notes' typographic quotes (a protest's answer) as the font's own
        quotes = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})
        sheet = replace(
            sheet,
            cycles=[replace(c, notes=[n.translate(quotes) for n in c.notes]) for c in sheet.cycles],
            pending_subs=[n.translate(quotes) for n in sheet.pending_subs],
        )
        for team in sheet.teams:
            for text in (team.name, *team.players):
                check(text)
        check(sheet.title)
        for cycle in sheet.cycles:
            for note in cycle.notes:
                check(note)
        for note in sheet.pending_subs:
            check(note)

    def pts(n: int) -> str:
        return f"{minus}{-n}" if n < 0 else str(n)

    pdf.add_page()
    pdf.set_font(family, "B", 12)
    pdf.multi_cell(0, 6, sheet.title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font(family, "", 8)
    facts = [
        f"Match {sheet.match_id}" if sheet.match_id is not None else "",
        f"Round {sheet.round}" if sheet.round else "",
        f"Room {sheet.room}" if sheet.room else "",
        f"Packet {sheet.packet}" if sheet.packet else "",
        f"{sheet.tossups} tossups" if sheet.tossups else "",
        sheet.rules,
        "final" if sheet.ended else ("in progress" if sheet.started else "blank"),
    ]
    pdf.multi_cell(0, 4, "   ".join(f for f in facts if f), new_x="LMARGIN", new_y="NEXT")
    mismatch = mismatch_text(sheet)
    if mismatch:
        pdf.set_font(family, "B", 8)
        pdf.multi_cell(0, 4, mismatch.replace("−", minus), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font(family, "", 8)
    pdf.ln(1)
    players = max([4, *(len(t.players) for t in sheet.teams)])
    numbers = sum(players + t.parts + (1 if t.parts else 0) + 1 for t in sheet.teams)
    width = pdf.epw
    number_w, notes_w = 6.0, width * (0.22 if numbers <= 20 else 0.14)
    cell_w = (width - number_w - notes_w) / max(1, numbers)
    widths = [number_w]
    for team in sheet.teams:
        widths += [cell_w] * (players + team.parts + (1 if team.parts else 0) + 1)
    widths.append(notes_w)
    head = FontFace(emphasis="BOLD", fill_color=(232, 232, 232))
    bench = FontFace(fill_color=(208, 208, 208))  # not in the lineup
    pdf.set_font(family, "", 7)
    with pdf.table(
        col_widths=widths,
        width=width,
        text_align="CENTER",
        line_height=4.2,
        first_row_as_headings=False,
        padding=0.6,
    ) as table:
        row = table.row()
        row.cell("#", rowspan=2, style=head)
        for team in sheet.teams:
            span = players + team.parts + (1 if team.parts else 0) + 1
            row.cell(team.name, colspan=span, style=head)
        row.cell("Notes", rowspan=2, style=head, align="LEFT")
        row = table.row()
        for team in sheet.teams:
            for i in range(players):
                who = header_name(sheet, team.id, team.players[i]) if i < len(team.players) else ""
                row.cell(who, style=head)
            for i in range(team.parts):
                row.cell(f"B{i + 1}", style=head)
            if team.parts:
                row.cell("Bon", style=head)
            row.cell("Total", style=head)
        for cycle in sheet.cycles:
            row = table.row()
            row.cell(str(cycle.number))
            for team in sheet.teams:
                answers = cycle.tossup_points.get(team.id, {})
                for i in range(players):
                    name = team.players[i] if i < len(team.players) else None
                    mark = lineup_mark(cycle, team.id, name) if name is not None else ""
                    if name is not None and name in answers:
                        power = (team.id, name) in cycle.powers
                        style = FontFace(emphasis="BOLD") if power or mark == "in" else None
                        prefix = "in " if mark == "in" else ""
                        row.cell(prefix + pts(answers[name]) + ("*" if power else ""), style=style)
                    elif mark == "in":
                        row.cell("in", style=FontFace(emphasis="BOLD"))
                    elif mark:
                        row.cell(mark, style=bench)
                    else:
                        row.cell("")
                got = cycle.bonus_parts.get(team.id, {})
                heard = cycle.bonus_id is not None and (cycle.bonus_team == team.id or bool(got))
                for part in range(team.parts):
                    row.cell(pts(got[part]) if part in got else ("0" if heard else ""))
                if team.parts:
                    row.cell(pts(cycle.bonus_total(team.id)) if heard else "")
                row.cell(pts(cycle.totals.get(team.id, 0)), style=FontFace(emphasis="BOLD"))
            notes = "; ".join(cycle.notes)
            if cycle.thrown_out and not notes:
                notes = "thrown out"
            row.cell(notes, align="LEFT")
        start, blank = len(sheet.cycles), blank_rows(sheet)
        for i in range(blank):
            row = table.row()
            row.cell("OT" if i >= blank - OVERTIME_ROWS else str(start + i + 1))
            for team in sheet.teams:
                for _ in range(players + team.parts + (1 if team.parts else 0) + 1):
                    row.cell(" ")
            # the next tossup's row: the substitutions made for it
            row.cell("; ".join(sheet.pending_subs) if i == 0 else " ", align="LEFT")
        row = table.row()
        row.cell("Σ" if path is not None else "=")
        for team in sheet.teams:
            span = players + team.parts + (1 if team.parts else 0)
            label = "Final" if sheet.ended else "So far" if sheet.started else ""
            row.cell(f"{team.name} {label}", colspan=span, style=FontFace(emphasis="BOLD"))
            score = pts(sheet.scores.get(team.id, 0)) if sheet.started else ""
            row.cell(score, style=FontFace(emphasis="BOLD"))
        row.cell("")
    pdf.ln(2)
    pdf.set_font(family, "", 6.5)
    pdf.multi_cell(
        0,
        3.5,
        f"Tossup points by player (15* a power, {minus}5 a neg); B1-B3: bonus parts (a "
        f"bounceback part in the other team's columns). {CORRECTIONS_LEGEND} "
        + (f"{LINEUP_LEGEND} " if sheet.lineups is not None else "")
        + "Signatures: moderator, scorekeeper, captains.",
    )
    return bytes(pdf.output())
