"""Getting every buzzpoint out of the record, in the formats the field uses.

``grace-arena export --format FORMAT --out PATH``:

* ``csv`` / ``jsonl``: one row per buzz (won, lost the race, locked out, not live) with
  every logged field (:data:`~grace_arena.io.record_io.BUZZ_EXPORT_COLUMNS`), the
  ruling in force, the prompts before it and the history of rulings; a refused buzz's row
  counts the presses that repeated it (``repeats``, ``last_repeat_wall``). The events'
  imported pooled buzzpoints follow, one row each, with the match columns empty (the match
  is unknown). A ``csv`` file is also a valid ``analyze --buzzes`` input.
* ``steps``: the model trajectories, the ``analyze --steps`` columns first, then the guess,
  the other confidences, latency, tokens, cost.
* ``grace``: GRACE's public buzzpoint JSON, one file per packet, every match of the events
  (and their imported pooled buzzpoints) pooled per tossup, team codes ``H1…``/``M1…`` kept
  per event team, with the mapping written alongside (``<name>.teams.json``). A GRACE file
  imported with ``grace-arena import grace`` comes back out as it went in.
* ``qbj``: one QBJ ``Match`` object per match (schema.quizbowl.technology, version 2.1.1),
  as MODAQ writes them, with the event round of a scheduled match in ``_round`` (MODAQ's
  field, where YellowFruit's "Import Games" finds it); our own fields sit under
  ``_grace_arena`` (QBJ readers skip ``_`` keys). A match that read its packet from a later
  tossup on (a round reading tossups 7–12) numbers its questions in the packet of its own
  tossups, written beside it in MODAQ's packet JSON. With ``--event``, an event run with a
  schedule also gets a QBJ tournament file (``<event>.qbj``: registrations, rounds with their
  packet and matches, the scoring rules), which YellowFruit opens as written and MODAQ reads
  the rosters of.

* ``sqbs``: with ``--event``, one event run with a schedule as an SQBS tournament file
  (:mod:`grace_arena.io.sqbs`; at most four tossup point values, 8 players a team a game).

With several packets (``grace``) or matches (``qbj``), ``PATH`` is a folder.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.analysis.frames import spreadsheet_safe
from grace_arena.core.config import ScoringRules
from grace_arena.core.lineups import tossups_heard_by
from grace_arena.core.rules import rule_set
from grace_arena.core.tokenize import POWER_MARK, tokenize
from grace_arena.io.imports import GraceBuzz, grace_word_maps
from grace_arena.io.record_io import (
    BUZZ_EXPORT_COLUMNS,
    STEP_EXPORT_COLUMNS,
    MatchInfo,
    buzz_rows,
    dumps_cell,
    event_imports,
    event_teams,
    load_scope,
    pooled_buzz_rows,
    pooled_export_rows,
    step_rows,
    team_labels,
    tossup_rows,
)
from grace_arena.io.scoresheet import ScoresheetPages
from grace_arena.record.models import PlayerRow, TossupRow

__all__ = [
    "FORMATS",
    "RENDERERS",
    "ExportScope",
    "Renderer",
    "export",
    "export_parquet",
    "grace_export_data",
    "qbj_match",
    "qbj_tournament",
    "renderer",
]

#: ``--format bonuses``: one row per bonus part heard, as it stands.
BONUS_EXPORT_COLUMNS = (
    "match", "event", "tossup_id", "bonus_id", "bonus_number", "category", "part", "value",
    "difficulty", "team", "team_name", "ruling", "points", "answer", "bounceback_team",
    "bounceback_ruling", "bounceback_points", "bounceback_answer", "choice", "consulted",
    "model_guess", "model_confidence",
)  # fmt: skip


def bonus_rows(matches: Sequence[MatchInfo]) -> list[dict[str, Any]]:
    """Every bonus part heard in ``matches``: the controlling team's ruling, points and typed
    answer, and a bounceback's (part numbers 1-based, as read)."""
    rows = []
    for m in matches:
        # consult rules: the team's choice on each part (own, consult, abstain: an abstention's
        # ruling is "incorrect", the team gave no answer; its points say whether it was right)
        chosen = {(c.bonus_id, c.part): c for c in m.choices}
        for number, bonus in enumerate(m.bonuses, start=1):
            spec = m.config.bonus(bonus.bonus_id)
            for part in bonus.parts:
                given = spec.parts[part.part] if spec else None
                choice = chosen.get((bonus.bonus_id, part.part))
                rows.append({
                    "match": m.id, "event": m.event, "tossup_id": bonus.tossup_id,
                    "bonus_id": bonus.bonus_id, "bonus_number": number,
                    "category": spec.category if spec else None, "part": part.part + 1,
                    "value": part.value, "difficulty": given.difficulty if given else None,
                    "team": bonus.team, "team_name": m.team_name(bonus.team),
                    "ruling": part.ruling, "points": part.points, "answer": part.answer,
                    "bounceback_team": part.bounceback_team,
                    "bounceback_ruling": part.bounceback_ruling,
                    "bounceback_points": part.bounceback_points if part.bounceback_team else None,
                    "bounceback_answer": part.bounceback_answer,
                    "choice": choice.choice if choice else None,
                    "consulted": choice.consulted if choice else None,
                    "model_guess": choice.model_guess if choice else None,
                    "model_confidence": choice.model_confidence if choice else None,
                })  # fmt: skip
    return rows


def _csv_cell(value: Any) -> Any:
    """A value as a CSV cell: text that a spreadsheet would run as a formula (a player named
    ``=HYPERLINK(…)``) quoted as text (:func:`spreadsheet_safe`); numbers as they are."""
    cell = dumps_cell(value)
    return spreadsheet_safe(cell) if isinstance(value, str) else cell


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(row.get(k)) for k in columns})


def _targets(out: Path, names: list[str], suffix: str) -> list[Path]:
    """One file, or one file per name inside ``out`` when there are several."""
    if len(names) == 1 and out.suffix:
        out.parent.mkdir(parents=True, exist_ok=True)
        return [out]
    out.mkdir(parents=True, exist_ok=True)
    return [out / f"{name}{suffix}" for name in names]


# ---------------------------------------------------------------------------------------
# The formats: one renderer each, registered in RENDERERS
# ---------------------------------------------------------------------------------------


@dataclass
class ExportScope:
    """What an export covers, read from the record once and shared by the renderers: the
    matches chosen (those of ``events`` when named, ``match_ids`` when given, else all) and
    the events whose imported pooled buzzpoints go with them (none when matches are named)."""

    engine: Engine
    match_ids: Sequence[int] | None = None
    events: Sequence[str] | None = None

    @cached_property
    def _scope(self) -> tuple[list[MatchInfo], list[int]]:
        return load_scope(self.engine, self.match_ids, events=self.events)

    @property
    def matches(self) -> list[MatchInfo]:
        return self._scope[0]

    @property
    def event_ids(self) -> list[int]:
        """The events whose pooled buzzpoints are exported: none for matches alone."""
        return [] if self.match_ids else self._scope[1]


class Renderer(Protocol):
    """One export format: its ``--format`` name, the suffix of the files it writes (``""``:
    a folder) and how it writes a scope to ``out``, returning the files written."""

    name: str
    suffix: str
    #: Whether the command line notes the imported pooled buzzpoints left out of it.
    notes_pooled_left_out: bool

    def render(self, scope: ExportScope, out: Path) -> list[Path]: ...


def _buzz_export_rows(scope: ExportScope) -> list[dict[str, Any]]:
    """The matches' buzzes, then the events' pooled buzzpoints (the match unknown: empty)."""
    labels = team_labels(scope.engine, scope.event_ids)
    pooled = pooled_buzz_rows(scope.engine, scope.event_ids, labels).rows
    return [*buzz_rows(scope.engine, scope.matches), *pooled_export_rows(pooled)]


class CsvBuzzes:
    """``csv``: one row per buzz with every logged field (an ``analyze --buzzes`` input)."""

    name, suffix, notes_pooled_left_out = "csv", ".csv", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        rows = _buzz_export_rows(scope)
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_csv(out, BUZZ_EXPORT_COLUMNS, rows)
        return [out]


class JsonlBuzzes:
    """``jsonl``: the rows of ``csv``, one JSON object a line."""

    name, suffix, notes_pooled_left_out = "jsonl", ".jsonl", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        rows = _buzz_export_rows(scope)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        return [out]


class ModelSteps:
    """``steps``: the model trajectories of the questions played in scope (all when the whole
    record is exported)."""

    name, suffix, notes_pooled_left_out = "steps", ".csv", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        questions = (
            {(m.packet_id, t) for m in scope.matches for t in m.counted if m.packet_id}
            if scope.match_ids or scope.events
            else None
        )
        _write_csv(out, STEP_EXPORT_COLUMNS, step_rows(scope.engine, questions))
        return [out]


class GraceBuzzpoints:
    """``grace``: GRACE's buzzpoint JSON, a file per packet, and the team codes alongside."""

    name, suffix, notes_pooled_left_out = "grace", ".json", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        engine, event_ids = scope.engine, scope.event_ids
        pooled = pooled_buzz_rows(engine, event_ids, {}).rows
        packets, mapping = grace_export_data(
            engine, scope.matches, pooled, import_ids=_import_ids(engine, event_ids)
        )
        if not packets:
            raise ValueError("nothing to export in GRACE's format (no match with a packet)")
        files = _targets(out, list(packets), self.suffix)
        for path, tossups in zip(files, packets.values(), strict=True):
            path.write_text(json.dumps(tossups, indent=4, ensure_ascii=False) + "\n", "utf-8")
        teams_file = (
            files[0].with_name(files[0].stem + ".teams.json")
            if len(files) == 1 and out.suffix
            else out / "teams.json"
        )
        teams_file.write_text(json.dumps(mapping, indent=2, ensure_ascii=False) + "\n", "utf-8")
        return [*files, teams_file]


class QbjFiles:
    """``qbj``: a QBJ match file per match, and with ``--event`` a tournament file per event
    run with a schedule."""

    name, suffix, notes_pooled_left_out = "qbj", ".qbj", True

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        engine, matches = scope.engine, scope.matches
        plans = _scheduled_events(engine, scope.event_ids) if scope.events else []
        if plans and out.suffix:
            raise ValueError(
                f"--out {out}: an event's QBJ export is a folder (a file per match and the "
                "tournament file); give a folder"
            )
        files = _targets(out, [f"match-{m.id}" for m in matches], self.suffix) if matches else []
        rounds = _rounds_of(engine, matches)
        packets: dict[Path, int] = {}  # each packet written: its number of tossups
        games: list[Path] = []  # MODAQ's games of the matches with bouncebacks
        for path, m in zip(files, matches, strict=True):
            data = qbj_match(engine, m, round_number=rounds.get(m.id))
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
            # the packet its questions are numbered in, in MODAQ's packet JSON, which its
            # "Import from QBJ" reads the match against (it opens no other packet file)
            if data.get("packets"):
                packet_path = path.with_name(f"{_safe_name(data['packets'])}.json")
                packet = modaq_packet(engine, m)
                # matches reading one packet from its first tossup on read the first tossups
                # of the same list: the longest holds every match's
                if packet is not None and len(packet["tossups"]) > packets.get(packet_path, 0):
                    text = json.dumps(packet, indent=2, ensure_ascii=False) + "\n"
                    packet_path.write_text(text, "utf-8")
                    packets[packet_path] = len(packet["tossups"])
                if packet is not None and any(t.get("bonus_bounceback_points") for t in
                                              data["match_teams"]):  # fmt: skip
                    # what MODAQ's QBJ import cannot rebuild: a game of its own beside it
                    game_path = path.with_suffix(".modaq.json")
                    game = modaq_game(data, packet, m.config.rules)
                    text = json.dumps(game, indent=2, ensure_ascii=False) + "\n"
                    game_path.write_text(text, "utf-8")
                    games.append(game_path)
        for plan in plans:  # a file per game not played here, read as the played ones are
            rosters: dict[str, list[str]] = {t.id: [] for t in plan.teams}
            for p in plan.players:
                if p.name not in rosters[p.team]:
                    rosters[p.team].append(p.name)
            for game in plan.games:
                if game.match_id is None and (game.forfeit is not None or game.result is not None):
                    out.mkdir(parents=True, exist_ok=True)
                    path = out / f"game-{game.id}{self.suffix}"
                    data = qbj_decided_match(plan, game, {t: list(n) for t, n in rosters.items()})
                    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
                    files.append(path)
        for plan in plans:
            out.mkdir(parents=True, exist_ok=True)
            path = out / f"{_safe_name(plan.name)}{self.suffix}"
            mine = [m for m in matches if m.event_id == plan.id]
            data = qbj_tournament(engine, plan, mine)
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
            files.append(path)
        if not files:
            raise ValueError("nothing to export in QBJ: no match in scope")
        return [*files, *packets, *games]


class ParquetTables:
    """``parquet``: a folder of the analysis' tables (:func:`export_parquet`)."""

    name, suffix, notes_pooled_left_out = "parquet", "", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        return export_parquet(scope.engine, out, scope.match_ids, events=scope.events)


class BonusParts:
    """``bonuses``: one CSV row per bonus part heard (:func:`bonus_rows`)."""

    name, suffix, notes_pooled_left_out = "bonuses", ".csv", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        _write_csv(out, BONUS_EXPORT_COLUMNS, bonus_rows(scope.matches))
        return [out]


class SqbsTournament:
    """``sqbs``: one event run with a schedule as an SQBS tournament file (:func:`export_sqbs`)."""

    name, suffix, notes_pooled_left_out = "sqbs", ".sqbs", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        return [export_sqbs(scope.engine, out, scope.events or ())]


#: Every export format by its ``--format`` name; adding a format is adding a renderer here.
RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        CsvBuzzes(),
        JsonlBuzzes(),
        ModelSteps(),
        GraceBuzzpoints(),
        QbjFiles(),
        ParquetTables(),
        BonusParts(),
        SqbsTournament(),
        ScoresheetPages(),
    )
}
FORMATS = tuple(RENDERERS)


def renderer(fmt: str) -> Renderer:
    """The renderer of ``fmt``; ``ValueError`` naming the formats when there is none."""
    if fmt not in RENDERERS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return RENDERERS[fmt]


def export(
    engine: Engine,
    fmt: str,
    out: str | Path,
    match_ids: Sequence[int] | None = None,
    *,
    events: Sequence[str] | None = None,
) -> list[Path]:
    """Write the chosen matches (those of ``events`` when named, ``match_ids`` when given,
    else all) in ``fmt``; returns the files written. ``grace`` also writes the pooled
    buzzpoints of the events in scope (all events when neither is given)."""
    return renderer(fmt).render(ExportScope(engine, match_ids, events), Path(out))


def export_sqbs(engine: Engine, out: Path, events: Sequence[str]) -> Path:
    """``--format sqbs``: one event run with a schedule as an SQBS tournament file
    (:mod:`grace_arena.io.sqbs`); ``ValueError`` past SQBS's limits."""
    from grace_arena.io.sqbs import sqbs_file
    from grace_arena.io.stats_report import event_plays
    from grace_arena.record.schedule import load_plan

    if len(events) != 1:
        raise ValueError("--format sqbs writes one event: give --event NAME once")
    plan = load_plan(engine, events[0])
    if not plan.rounds:
        raise ValueError(f"event {plan.name!r} has no schedule: SQBS needs its rounds")
    plays = event_plays(engine, plan)
    entered = entered_games(plan, first_id=max((p.match_id for p in plays), default=0) + 1)
    text = sqbs_file(plan, plays, entered, _event_rules(plan) if entered else None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(text.encode("utf-8"))
    return out


def _event_rules(plan: Any) -> Any:
    from grace_arena.record.schedule import event_rules

    return event_rules(plan)


def entered_games(plan: Any, *, first_id: int = 1) -> list[Any]:
    """The event's games not played here (forfeits, results entered by their final score),
    in schedule order, as :class:`grace_arena.io.sqbs.EnteredGame`, numbered from
    ``first_id`` on. A team's counts entered without players stand on a player named after
    the team, as in the QBJ files (:func:`qbj_decided_match`)."""
    from grace_arena.io.sqbs import EnteredGame
    from grace_arena.record.schedule import result_lines

    names = {t.id: t.name for t in plan.teams}
    out = []
    decided = [
        g
        for g in plan.games
        if g.match_id is None and (g.forfeit is not None or g.result is not None)
    ]
    for i, game in enumerate(decided):
        if game.forfeit is not None:
            out.append(EnteredGame(first_id + i, game.round, game.teams, forfeit=game.forfeit))
            continue
        lines, heard = result_lines(plan, {**game.result, "teams": list(game.teams)})
        players = [dict(p) for p in game.result.get("players") or []]
        for t in game.teams:
            if not any(p["team"] == t for p in players):
                line = lines[t]
                players.append(
                    {
                        "team": t,
                        "name": names[t],
                        "powers": line.powers,
                        "tens": line.correct - line.powers,
                        "negs": line.negs,
                        "tuh": heard,
                    }
                )
        out.append(EnteredGame(first_id + i, game.round, game.teams, None, lines, heard, players))
    return out


# ---------------------------------------------------------------------------------------
# GRACE
# ---------------------------------------------------------------------------------------


def _import_ids(engine: Engine, event_ids: Sequence[int]) -> list[int]:
    return [i.id for i in event_imports(engine, event_ids) if i.id is not None]


def pooled_count(engine: Engine, event_ids: Sequence[int]) -> int:
    """How many pooled buzzpoints these events hold."""
    from grace_arena.record.models import PooledBuzzRow

    if not event_ids:
        return 0
    with Session(engine) as session:
        return len(
            session.exec(
                select(PooledBuzzRow.id).where(PooledBuzzRow.event_id.in_(list(event_ids)))  # type: ignore[attr-defined,union-attr]
            ).all()
        )


_CODE = re.compile(r"^([HM])\d+$")


def _team_codes(
    engine: Engine, matches: Sequence[MatchInfo], pooled: Sequence[dict[str, Any]]
) -> tuple[dict[tuple[int, str], str], dict[str, Any]]:
    """A GRACE code per (event, team): a team already coded ``H…``/``M…`` (imported, or
    so named) keeps its code, the others are numbered after the codes in use. Teams keep
    one code across the matches of their event."""
    event_ids = sorted({m.event_id or 0 for m in matches} | {r["event_id"] for r in pooled})
    registered_teams, events = event_teams(engine, event_ids)
    registered = {(t.event_id, t.team_id): t for t in registered_teams}
    names = {i: e.name for i, e in events.items()}
    teams: dict[tuple[int, str], dict[str, Any]] = {}
    for r in pooled:
        teams.setdefault((r["event_id"], r["team_id"]), {"kind": r["team_kind"], "matches": []})
    for m in matches:
        for team in m.config.teams:
            entry = teams.setdefault(
                (m.event_id or 0, team.id), {"kind": team.kind.value, "matches": []}
            )
            entry["matches"].append(m.id)
            if team.threshold is not None:  # a model team's, as its match played it
                entry["threshold"] = team.threshold
            legacy = m.source_meta.get("team_codes", {}) if m.source == "grace" else {}
            if team.id in legacy:
                entry["code"] = legacy[team.id]
    codes: dict[tuple[int, str], str] = {}
    used: set[str] = set()
    for key, entry in teams.items():  # codes kept first, in order of appearance
        code = entry.get("code") or key[1]
        match = _CODE.match(code)
        letter = "M" if entry["kind"] == "model" else "H"
        if match and match.group(1) == letter and code not in used:
            codes[key] = code
            used.add(code)
    # new codes follow the highest in use, so that a later import using a gap (GRACE has no
    # H8 in the public packets) does not take another team's code
    counters = {"H": 0, "M": 0}
    for code in used:
        counters[code[0]] = max(counters[code[0]], int(code[1:]))
    for key, entry in teams.items():
        if key in codes:
            continue
        letter = "M" if entry["kind"] == "model" else "H"
        while True:
            counters[letter] += 1
            code = f"{letter}{counters[letter]}"
            if code not in used:
                break
        used.add(code)
        codes[key] = code
    mapping: dict[str, Any] = {}
    for key, entry in teams.items():
        row = registered.get(key)
        mapping.setdefault(codes[key], []).append(
            {
                "event": names.get(key[0]),
                "team_id": key[1],
                "team": row.name if row else key[1],
                "kind": entry["kind"],
                "model": row.model if row else None,
                "threshold": entry.get("threshold", row.threshold if row and row.model else None),
                "matches": entry["matches"],
            }
        )
    return codes, mapping


def _with_markers(question: str, marks: dict[int, list[str]]) -> str:
    tokens = question.split()
    out = []
    for i, token in enumerate(tokens):
        out.append(token)
        out.extend(marks.get(i, []))
    for i in sorted(k for k in marks if k >= len(tokens)):
        out.extend(marks[i])
    return " ".join(out)


def _imported_tossups(engine: Engine, import_ids: set[int]) -> dict[tuple[str, str], dict]:
    """The published form of every imported tossup, by (packet, tossup): the file's texts
    and ids, and the ids of the imports it came from."""
    from grace_arena.record.models import EventImportRow

    if not import_ids:
        return {}
    with Session(engine) as session:
        imports = session.exec(
            select(EventImportRow).where(EventImportRow.id.in_(sorted(import_ids)))  # type: ignore[union-attr]
        ).all()
    out: dict[tuple[str, str], dict] = {}
    for imp in imports:
        for tossup_id, original in (imp.meta.get("tossups") or {}).items():
            entry = out.setdefault((imp.packet_id or "", tossup_id), dict(original))
            entry.setdefault("_imports", []).append(imp.id)
    return out


def grace_export_data(
    engine: Engine,
    matches: Sequence[MatchInfo],
    pooled: Sequence[dict[str, Any]] = (),
    *,
    import_ids: Sequence[int] = (),
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """``{packet id: [GRACE tossup, ...]}`` and the team-code mapping.

    Buzzes are pooled per tossup: first the pooled buzzpoints (imported data) in the order
    they were imported, then every buzz of every match that took the floor and was ruled
    correct or incorrect, match by match in the order they happened. A tossup is listed
    (once per packet, in packet order) if a chosen match played it and did not throw it
    out, or if it came in an imported file. An imported file whose tossups gained no other
    buzz comes back exactly as it went in.
    """
    codes, mapping = _team_codes(engine, matches, pooled)
    with_packet = [m for m in matches if m.packet_id]
    published = _imported_tossups(engine, {r["import_id"] for r in pooled} | set(import_ids))
    stored = tossup_rows(
        engine, {m.packet_id for m in with_packet if m.packet_id} | {k[0] for k in published}
    )
    rows = buzz_rows(engine, with_packet)
    by_question: dict[tuple[str, str], list[tuple[MatchInfo, dict[str, Any]]]] = {}
    info = {m.id: m for m in with_packet}
    for r in rows:
        if r["outcome"] != "won" or r["correct"] is None or r["thrown_out"]:
            continue
        by_question.setdefault((r["packet_id"], r["tossup_id"]), []).append((info[r["match"]], r))
    pooled_by_question: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in pooled:
        pooled_by_question.setdefault((r["packet_id"], r["tossup_id"]), []).append(r)
    played: dict[str, set[str]] = {}
    for m in with_packet:
        assert m.packet_id is not None
        played.setdefault(m.packet_id, set()).update(m.counted)
    for packet_id, tossup_id in published:
        played.setdefault(packet_id, set()).add(tossup_id)
    legacy = {
        (m.packet_id, t): original
        for m in with_packet
        if m.source == "grace"
        for t, original in m.source_meta.get("tossups", {}).items()
    }
    packets: dict[str, list[dict[str, Any]]] = {}
    for packet_id in sorted(played):
        order = sorted(
            played[packet_id],
            key=lambda t: (stored[(packet_id, t)].position if (packet_id, t) in stored else 1e9, t),
        )
        entries = []
        for tossup_id in order:
            row: TossupRow | None = stored.get((packet_id, tossup_id))
            text = row.text if row else ""
            original = published.get((packet_id, tossup_id)) or legacy.get((packet_id, tossup_id))
            question = text
            if original and " ".join(str(original.get("question") or "").split()) == text:
                question = original["question"]  # the published text, spacing and all
            to_ours, to_grace = grace_word_maps(question)
            found: list[GraceBuzz] = []
            from_pool = sorted(
                pooled_by_question.get((packet_id, tossup_id), []),
                key=lambda r: (r["import_id"], r["seq"]),
            )
            for r in from_pool:
                gw = r["source_word_index"]
                if gw is None or not 0 <= gw < len(to_ours) or to_ours[gw] != r["word_index"]:
                    gw = to_grace[min(r["word_index"], len(to_grace) - 1)] if to_grace else 0
                code = codes[(r["event_id"], r["team_id"])]
                found.append(GraceBuzz(gw, code, r["correct"] == 1))
            played_buzzes: list[tuple[tuple[int, int, int], GraceBuzz]] = []
            for m, r in by_question.get((packet_id, tossup_id), []):
                ours = int(r["word_index"])
                gw = to_grace[min(ours, len(to_grace) - 1)] if to_grace else ours
                order_key = r["buzz_id"]
                kept = m.source_meta.get("grace_word_index", {}).get(str(r["buzz_id"]))
                if kept and 0 <= kept[0] < len(to_ours) and to_ours[kept[0]] == ours:
                    gw, order_key = kept[0], kept[1]
                code = codes[(m.event_id or 0, r["team_id"])]
                played_buzzes.append(
                    ((m.id, order_key, r["buzz_id"]), GraceBuzz(gw, code, r["correct"] == 1))
                )
            found += [gb for _, gb in sorted(played_buzzes, key=lambda f: f[0])]
            marks: dict[int, list[str]] = {}
            for gb in found:
                marks.setdefault(gb.word_index, []).append(gb.as_position()[str(gb.word_index)])
            with_marks = _with_markers(question, marks)
            unchanged = (
                original is not None
                and not played_buzzes
                and len(original.get("_imports", [])) == 1
                and isinstance(original.get("question_buzzpoints"), str)
            )
            entries.append(
                {
                    "tossup_index": original.get("tossup_index", tossup_id)
                    if original
                    else tossup_id,
                    "category": (original or {}).get("category")
                    or (row.subcategory or row.category if row else None),
                    "question": question,
                    "answer": (original or {}).get("answer") or (row.answer if row else None),
                    "question_buzzpoints": original["question_buzzpoints"]
                    if unchanged and original is not None
                    else with_marks,
                    "position": [gb.as_position() for gb in found],
                }
            )
        packets[packet_id] = entries
    return packets, mapping


# ---------------------------------------------------------------------------------------
# QBJ
# ---------------------------------------------------------------------------------------


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def qbj_match(engine: Engine, m: MatchInfo, *, round_number: int | None = None) -> dict[str, Any]:
    """One match as a QBJ ``Match`` object (schema.quizbowl.technology, version
    :data:`QBJ_VERSION`), in the layout MODAQ writes and reads and YellowFruit imports.

    Cycles are the tossups played and not thrown out; a cycle's buzzes are those that took
    the floor and were ruled, each worth the points in force (10, 15, −5 or 0). Lost races,
    lockouts and prompts still pending have no place in QBJ: the ``csv``/``jsonl`` exports
    carry them.

    What the programs that read it need, from their own code:

    * the match, its teams and its players carry ids (``match_<id>``, ``Team_<name>`` as
      YellowFruit names a team, ``player_<team>_<n>``); a team and a player are written in
      full wherever they appear
      (the same id and name each time), since MODAQ reads their names where they are used
      and YellowFruit's game import matches them by name;
    * ``_round``: the event's round of a scheduled match. It is not QBJ's but MODAQ's, and
      the only place YellowFruit's "Import Games" finds the round of a lone match file;
    * ``carryover_phases`` (empty), ``overtime_tossups_read`` and, when there was overtime,
      each team's answers in overtime as ``YfData.overTimeBuzzes`` (MODAQ's way of telling
      YellowFruit, which reads them to check the overtime and to leave overtime out of the
      bonuses heard);
    * ``word_index`` counts the words of the tossup's text as MODAQ does
      (:func:`modaq_word_index`), and a buzz after the whole question was read is at n, the
      number of words (MODAQ's end-of-question mark, where an incorrect answer costs
      nothing), not on the last word n − 1 (an interrupt for MODAQ);
    * ``tossup_question.question_number`` is the tossup's place in the packet, so a match that
      read tossups 7–12 of its packet says so (MODAQ reads the gap before the first as tossups
      thrown out);
    * a tossup read in place of one thrown out is its cycle's ``replacement_tossup_question``;
      when it is an extra (not the packet's next tossup) the one thrown out is the cycle's
      ``tossup_question``, as MODAQ writes a replacement out of sequence (and reads the
      replacement as the tossup read); the next tossup is a sequential replacement, where both
      name it. A bonus read in place of one thrown out alike, as ``replacement_bonus`` when it
      is an extra (``bonus`` names the one thrown out and keeps the parts, which YellowFruit
      reads);
      ``tossups_read`` and ``overtime_tossups_read`` count the tossups heard (replacements,
      not those thrown out);
    * ``answer_counts`` hold ``number`` and ``answer_type`` only; an incorrect answer that
      costs nothing (after the end, or another team's after a neg under the first-team-only
      rule) is an answer of value 0, which YellowFruit leaves out and MODAQ reads as a wrong
      answer that is not the tossup's neg.
    """
    rows = [
        r
        for r in buzz_rows(engine, [m])
        if r["outcome"] == "won" and r["correct"] is not None and not r["thrown_out"]
    ]
    with Session(engine) as session:
        players = session.exec(
            select(PlayerRow).where(PlayerRow.match_id == m.id).order_by(PlayerRow.joined_at)  # type: ignore[arg-type]
        ).all()
    stored = tossup_rows(engine, [m.packet_id] if m.packet_id else [])
    counted = m.counted
    roster: dict[str, list[str]] = {t.id: [] for t in m.config.teams}
    for p in players:
        if p.name not in roster.setdefault(p.team_id, []):
            roster[p.team_id].append(p.name)
    for r in rows:  # anyone who buzzed is on the roster
        if r["player"] not in roster.setdefault(r["team_id"], []):
            roster[r["team_id"]].append(r["player"])
    player_ids = {
        (team, name): f"player_{team}_{i}"
        for team, names in roster.items()
        for i, name in enumerate(names, start=1)
    }

    def player(team: str, name: str) -> dict[str, str]:
        return {"id": player_ids[(team, name)], "name": name}

    team_ids = _qbj_team_ids({t.id: m.team_name(t.id) for t in m.config.teams})

    def team_of(team: str) -> dict[str, Any]:
        return {
            "id": team_ids[team],
            "name": m.team_name(team),
            "players": [player(team, n) for n in roster[team]],
        }

    spans = [s for s in m.lineups if s.players]
    for span in spans:  # everyone in a lineup is on the roster
        for name in span.names:
            if name not in roster.setdefault(span.team, []):
                roster[span.team].append(name)
                player_ids[(span.team, name)] = f"player_{span.team}_{len(roster[span.team])}"
    heard_by: dict[tuple[str, str], int] = {}
    by_id = tossups_heard_by(spans, len(counted))
    for span in spans:
        for pid, name in zip(span.players, span.names, strict=True):
            heard_by[(span.team, name)] = by_id.get((span.team, pid), 0)

    def fielded(team: str) -> bool:
        return any(s.team == team for s in spans)

    def team_lineups(team: str) -> list[dict[str, Any]]:
        mine = [s for s in spans if s.team == team]
        if not mine:
            return [
                {
                    "first_question": 1,
                    "players": [player(team, n) for n in roster[team]],
                    "reason": "initial",
                }
            ]
        return [  # (a team's first lineup is its initial one, however late its players came)
            {
                "first_question": s.first_question,
                "players": [player(team, n) for n in s.names],
                "reason": "initial" if i == 0 else s.reason,
            }
            for i, s in enumerate(mine)
        ]

    rules = rule_set(m.config.rules)
    overtime = rules.overtime_tossups(len(counted))
    # the match's questions are numbered in its own list of tossups, which is its packet's
    # unless the match read a part of it after the start (see qbj_packet_name)
    in_list = {t.id: i for i, t in enumerate(m.config.tossups)}
    answer_counts: dict[tuple[str, str], dict[int, int]] = {}
    overtime_counts: dict[str, dict[int, int]] = {}
    questions = []
    bonuses = {b.tossup_id: b for b in m.bonuses}
    correct: dict[str, list[str]] = {}  # team -> tossups it answered correctly
    for r in rows:
        if r["correct"]:
            correct.setdefault(r["team_id"], []).append(r["tossup_id"])
    for number, tossup_id in enumerate(counted, start=1):
        spec = m.config.tossup(tossup_id)
        in_packet = in_list[tossup_id] + 1
        buzzes = []
        for r in rows:
            if r["tossup_id"] != tossup_id:
                continue
            row = stored.get((m.packet_id or "", tossup_id))
            word_index = _qbj_word_index(r, spec, row.text if row else None)
            position: dict[str, Any] = {"word_index": word_index}
            if r["clue_index"] is not None:
                position["clue_index"] = r["clue_index"]
            if r["received_wall"] is not None:
                position["time"] = _iso(r["received_wall"])
            value = int(r["points"] or 0)
            buzzes.append(
                {
                    "team": {"id": team_ids[r["team_id"]], "name": m.team_name(r["team_id"])},
                    "player": player(r["team_id"], r["player"]),
                    "buzz_position": position,
                    "result": {"value": value},
                }
            )
            counts = answer_counts.setdefault((r["team_id"], r["player"]), {})
            counts[value] = counts.get(value, 0) + 1
            if rules.overtime_tossups(number):  # question ``number`` is past regulation
                in_overtime = overtime_counts.setdefault(r["team_id"], {})
                in_overtime[value] = in_overtime.get(value, 0) + 1
        question: dict[str, Any] = {
            "question_number": number,
            "tossup_question": {
                "question_number": in_packet,
                "type": "tossup",
                "parts": 1,
            },
            "buzzes": buzzes,
        }
        thrown_tossup = m.replaced_tossups.get(tossup_id)
        if thrown_tossup is not None and thrown_tossup in in_list:
            question["replacement_tossup_question"] = dict(question["tossup_question"])
            if in_list[thrown_tossup] + 1 != in_list[tossup_id]:  # not the next one: an extra
                question["tossup_question"] = {
                    "question_number": in_list[thrown_tossup] + 1, "type": "tossup", "parts": 1,
                }  # fmt: skip
        bonus = bonuses.get(tossup_id)
        if bonus is not None:
            bonus_spec = m.config.bonus(bonus.bonus_id)
            ruled = {p.part: p for p in bonus.parts}
            number_in_packet = (
                [b.id for b in m.config.bonuses].index(bonus.bonus_id) + 1 if bonus_spec else 0
            )
            n_parts = len(bonus_spec.parts) if bonus_spec else len(bonus.parts)
            question["bonus"] = {
                "question": {
                    "question_number": number_in_packet,
                    "type": "bonus",
                    "parts": n_parts,
                },
                # every part of the bonus, those the match ended before worth nothing
                "parts": [
                    {"controlled_points": p.points, "bounceback_points": p.bounceback_points}
                    if (p := ruled.get(part)) is not None
                    else {"controlled_points": 0, "bounceback_points": 0}
                    for part in range(n_parts)
                ],
            }
            bonus_ids = [b.id for b in m.config.bonuses]
            thrown_bonus = m.replaced_bonuses.get(bonus.bonus_id)
            if (
                thrown_bonus is not None
                and thrown_bonus in bonus_ids
                and bonus_ids.index(thrown_bonus) + 1 != bonus_ids.index(bonus.bonus_id)
            ):  # an extra, not the next one (which is read in sequence, as MODAQ infers)
                question["replacement_bonus"] = {**question["bonus"]}
                question["bonus"] = {
                    **question["bonus"],
                    "question": {
                        **question["bonus"]["question"],
                        "question_number": bonus_ids.index(thrown_bonus) + 1,
                    },
                }
        questions.append(question)
    match_teams = []
    for t in m.config.teams:
        entry: dict[str, Any] = {
            "team": team_of(t.id),
            "bonus_points": sum(b.points for b in m.bonuses if b.team == t.id),
            "bonus_bounceback_points": sum(
                p.bounceback_points for b in m.bonuses for p in b.parts if p.bounceback_team == t.id
            ),
            # a correct tossup with no bonus heard (tossups only, overtime, none left): not
            # in the PPB denominator
            "correct_tossups_without_bonuses": sum(
                1 for tossup in correct.get(t.id, []) if tossup not in bonuses
            ),
            # the lineups the record holds (who joined, the substitutions), each from the
            # question it starts at; a team whose record names no lineup (an imported match)
            # plays everyone it has the whole match
            "lineups": team_lineups(t.id),
            "match_players": [
                {
                    "player": player(t.id, name),
                    "tossups_heard": heard_by.get((t.id, name), len(counted))
                    if fielded(t.id)
                    else len(counted),
                    "answer_counts": [
                        {"number": n, "answer_type": {"value": v}}
                        for v, n in sorted(answer_counts.get((t.id, name), {}).items())
                    ],
                }
                for name in roster[t.id]
            ],
        }
        if overtime:
            entry["YfData"] = {
                "overTimeBuzzes": [
                    {"number": n, "answer_type": {"value": v}}
                    for v, n in sorted(overtime_counts.get(t.id, {}).items(), reverse=True)
                    if v  # (a 0 is no answer type of the rules: YellowFruit refuses it here)
                ]
            }
        match_teams.append(entry)
    thrown = [t for t in m.played if t not in counted]
    instead = {old: new for new, old in m.replaced_tossups.items()}
    notes = [
        f"Tossup {t} thrown out" + (f", replaced by {instead[t]}." if t in instead else ".")
        for t in thrown
    ]
    notes += m.notes  # its protests (how each stands) and corrections
    return {
        "id": f"match_{m.id}",
        **({"_round": round_number} if round_number is not None else {}),
        "tossups_read": len(counted),
        "overtime_tossups_read": overtime,
        "carryover_phases": [],
        "match_teams": match_teams,
        "match_questions": questions,
        **({"packets": qbj_packet_name(m, stored)} if m.packet_id else {}),
        **({"notes": "\n".join(notes)} if notes else {}),
        "_grace_arena": {
            "match": m.id,
            "title": m.title,
            **({"packet": m.packet_id} if m.packet_id else {}),
            "team_kinds": {t.name: t.kind.value for t in m.config.teams},
            "models": {t.name: t.model for t in m.config.teams if t.model},
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        },
    }


def _qbj_team_ids(names: dict[str, str]) -> dict[str, str]:
    """Each team's QBJ id: ``Team_<name>``, the id YellowFruit gives a team, by which its
    "Import Games" of a whole QBJ file finds the tournament's teams (``buildTypesByIdArrays``),
    or ``team_<id>`` for all when two teams share a name."""
    if len(set(names.values())) < len(names):
        return {team: f"team_{team}" for team in names}
    return {team: f"Team_{name}" for team, name in names.items()}


def _qbj_word_index(row: dict[str, Any], spec: Any, text: str | None) -> int:
    """A buzz's QBJ ``word_index``: the word it came on, or n (the number of words, one past
    the last) for a buzz after the whole question was read, which MODAQ reads as the end of
    the question rather than an interrupt on the last word. Words are counted as MODAQ counts
    those of the tossup's text (:func:`modaq_word_index`: not "(pause)", but "—"), so that
    it finds the power mark and the end where we did; without the text, as we count them."""
    word = int(row["word_index"])
    after = spec is not None and row["interrupt"] is False and word >= spec.n_words - 1
    if text is not None:
        return modaq_word_index(text, None if after else word)
    return spec.n_words if after else word


#: What MODAQ's packet reader does not count as words (``FormattedTextParser.ts``, with the
#: pronunciation guide markers of its game formats, ``("`` ... ``")``, straight or curly):
#: its formatting tags are cut out of the text, a guide or a reader directive starts a word
#: that is not one, and so does the power mark.
_MODAQ_GUIDES = (('("', '")'), ("(“", "”)"))
_MODAQ_DIRECTIVES = ("(emphasize)", "(emphasise)", "(pause)", "(read slowly)",
                     "[emphasize]", "[emphasise]", "[pause]", "[read slowly]")  # fmt: skip
_MODAQ_TAGS = re.compile(
    "|".join(
        [r"</?em>", r"</?req>", r"</?b>", r"</?u>", r"</?sub>", r"</?sup>"]
        + [re.escape(m) for pair in _MODAQ_GUIDES for m in pair]
        + [re.escape(d) for d in _MODAQ_DIRECTIVES]
    ),
    re.IGNORECASE,
)


def modaq_words(text: str) -> list[int]:
    """Where each word MODAQ counts in a tossup's text starts (an offset in ``text``): the
    words its reader shows as buzzable, numbered from 0, whose number is the index of its
    end-of-question mark. The same reading as MODAQ's ``parseFormattedText``,
    ``splitFormattedTextIntoWords`` and ``Tossup.getWords``.

    >>> text = 'Nietzsche ("NEE-chuh") wrote (pause) this (*) book.'
    >>> [text[i:].split()[0] for i in modaq_words(text)]
    ['Nietzsche', 'wrote', 'this', 'book.']
    """
    # the text as segments (their start in ``text``, their text, whether a guide's)
    segments: list[tuple[int, str, bool]] = []
    start, guide = 0, False
    for match in _MODAQ_TAGS.finditer(text):
        tag = match.group().lower()
        ends_guide = any(tag == close.lower() for _, close in _MODAQ_GUIDES)
        end = match.start() + (len(tag) if ends_guide else 0)
        if end > start:
            segments.append((start, text[start:end], guide))
        if any(tag == open_.lower() for open_, _ in _MODAQ_GUIDES):
            guide, start = True, match.start()  # (the guide's opening stays in its text)
            continue
        if ends_guide:
            guide = False
        elif tag in _MODAQ_DIRECTIVES:
            segments.append((match.start(), match.group(), True))
        start = match.end()
    if start < len(text):
        segments.append((start, text[start:], guide))
    # the words, each its pieces of segments (its first piece says whether it is a guide) and
    # where it starts; a segment starting with a space closes the word before it, even an
    # empty one, which MODAQ counts as a word
    words: list[tuple[int, list[bool]]] = []
    at, pieces = 0, []  # the word being read
    for offset, piece, in_guide in segments:
        parts = list(re.finditer(r"\S+", piece))
        if not re.search(r"\s", piece):
            if not pieces:
                at = offset
            pieces.append(in_guide)
            continue
        if parts and parts[0].start() == 0:  # the end of the word being read
            if not pieces:
                at = offset
            pieces.append(in_guide)
            parts = parts[1:]
        words.append((at, pieces))
        at, pieces = offset, []
        for part in parts:
            if part.end() == len(piece):  # the start of a word going on in the next segment
                at, pieces = offset + part.start(), [in_guide]
            else:
                words.append((offset + part.start(), [in_guide]))
    if pieces:
        words.append((at, pieces))
    return [
        at
        for at, pieces in words
        if not (pieces and pieces[0]) and not text[at:].lstrip().startswith(POWER_MARK)
    ]


def modaq_word_index(text: str, word: int | None) -> int:
    """Our word ``word`` of a tossup (:mod:`grace_arena.core.tokenize`) as MODAQ counts the
    words of its text (:func:`modaq_words`); None: after the whole tossup was read, MODAQ's
    end-of-question mark."""
    # each MODAQ word by the start of the whitespace-separated token it is in (a tag before
    # it, "<b>For", is cut out of its text, not of ours)
    starts = [_token_start(text, at) for at in modaq_words(text)]
    ours = tokenize(text).words
    if word is None or word >= len(ours):
        return len(starts)
    return max(0, bisect_right(starts, ours[word].start) - 1)


def _token_start(text: str, at: int) -> int:
    while at > 0 and not text[at - 1].isspace():
        at -= 1
    return at


def _packet_positions(m: MatchInfo, stored: dict[tuple[str, str], TossupRow]) -> list[int | None]:
    """Where each tossup of the match's list is in its packet (None: not stored)."""
    return [
        row.position if (row := stored.get((m.packet_id or "", t.id))) else None
        for t in m.config.tossups
    ]


def qbj_packet_name(m: MatchInfo, stored: dict[tuple[str, str], TossupRow]) -> str:
    """The packet a match's QBJ file numbers its questions in: its packet's id when the
    match's tossups are its packet's from the first on, else the packet of the match's own
    tossups that the ``qbj`` export writes beside it (:func:`modaq_packet`), named after
    the packet and the tossups taken (``sample-7-10``).

    MODAQ's "Import from QBJ" reads a match against a packet from the packet's first tossup
    on (``QBJ.fromQBJ`` checks cycle i's buzzes against the packet's tossup i, whatever its
    question number says), so a round that read tossups 7–12 of a packet can be rebuilt only
    from a packet that starts at tossup 7."""
    positions = _packet_positions(m, stored)
    if m.packet_id is None or positions == list(range(len(positions))):
        return m.packet_id or ""
    known = [p for p in positions if p is not None]
    if not known:
        return m.packet_id
    name = f"{m.packet_id}-{min(known) + 1}-{max(known) + 1}"
    if positions == list(range(min(known), max(known) + 1)):
        return name
    # not a run of the packet's tossups (one skipped, or read out of order): two such
    # matches over one range must not share a packet file
    taken = ",".join("-" if p is None else str(p) for p in positions)
    return f"{name}-{hashlib.sha256(taken.encode()).hexdigest()[:8]}"


def modaq_packet(engine: Engine, m: MatchInfo) -> dict[str, Any] | None:
    """The match's own tossups and its bonuses as a packet in MODAQ's (YAPP's) JSON
    (``tossups``: question and answer; ``bonuses``: lead-in, parts, answers, values), the
    packet :func:`qbj_packet_name` names, which the ``qbj`` export writes beside every match
    file (MODAQ's "Import from QBJ" needs the packet as well as the match, and its packet
    loader, ``PacketLoaderController.loadPacket``, reads this JSON); None when its texts are
    not in the record."""
    stored = tossup_rows(engine, [m.packet_id] if m.packet_id else [])
    rows = [stored.get((m.packet_id or "", t.id)) for t in m.config.tossups]
    if any(r is None for r in rows):
        return None
    return {
        "name": qbj_packet_name(m, stored),
        "tossups": [{"question": r.text, "answer": r.answer} for r in rows if r is not None],
        "bonuses": [
            {
                "leadin": b.leadin,
                "parts": [p.text for p in b.parts],
                "answers": [p.answer for p in b.parts],
                "values": [p.value for p in b.parts],
            }
            for b in m.config.bonuses
        ],
    }


#: The game format version MODAQ's games are written in (``GameFormats.ts``: a format of this
#: version is read as it is, ``getUpgradedFormatVersion``).
MODAQ_FORMAT_VERSION = "2024-03-20"


def modaq_game(
    match: dict[str, Any], packet: dict[str, Any], rules: ScoringRules
) -> dict[str, Any]:
    """A match (its QBJ ``Match``, :func:`qbj_match`) as a game of MODAQ's own, the JSON its
    "Export to JSON" writes and its "Import game" reads (``ImportGameDialog.tsx``: ``players``,
    ``gameFormat``, ``packet``, ``cycles``), for a match with bouncebacks.

    MODAQ's "Import from QBJ" cannot rebuild a bounceback (``QBJ.fromQBJ`` gives every bonus
    part to the team that answered the tossup); its own games can: a bonus part is
    ``{teamName, points}`` (``Events.IBonusAnswerPart``) and ``GameState.scores`` credits
    the part's team. Each cycle holds its buzzes (``wrongBuzzes``, ``correctBuzz``: the
    tossup of the packet read, the word, the points as ruled), the tossups and bonuses thrown
    out before it (as ``fromQBJ`` infers them), the bonus parts by team, and the players who
    joined and left at it (the match's lineups)."""
    starters = {
        t["team"]["name"]: {p["name"] for p in t["lineups"][0]["players"]}
        for t in match["match_teams"]
    }

    def player(team: str, name: str) -> dict[str, Any]:
        return {"name": name, "teamName": team, "isStarter": name in starters[team]}

    teams = [t["team"]["name"] for t in match["match_teams"]]
    cycles: list[dict[str, Any]] = [{} for _ in match["match_questions"]]
    for t in match["match_teams"]:  # a new lineup: who left and who joined at its question
        team = t["team"]["name"]
        for before, after in pairwise(t["lineups"]):
            if not 1 <= after["first_question"] <= len(cycles):
                continue
            cycle = cycles[after["first_question"] - 1]
            was = [p["name"] for p in before["players"]]
            now = [p["name"] for p in after["players"]]
            cycle.setdefault("playerLeaves", []).extend(
                {"outPlayer": player(team, n)} for n in was if n not in now
            )
            cycle.setdefault("playerJoins", []).extend(
                {"inPlayer": player(team, n), "isInactive": False} for n in now if n not in was
            )
    last = -1  # the packet's last tossup read in sequence
    for cycle, q in zip(cycles, match["match_questions"], strict=True):
        scheduled = q["tossup_question"]["question_number"] - 1
        replacement = q.get("replacement_tossup_question")
        thrown: list[dict[str, int]] = []
        if replacement and replacement["question_number"] - 1 != scheduled:  # an extra
            read = replacement["question_number"] - 1
            thrown.append({"questionIndex": scheduled, "replacementQuestionIndex": read})
            last = scheduled
        else:
            read = scheduled
            thrown += [{"questionIndex": i} for i in range(last + 1, read)]
            last = read
        if thrown:
            cycle["thrownOutTossups"] = thrown
        wrong = []
        for b in q["buzzes"]:
            event = {
                "tossupIndex": read,
                "marker": {
                    "player": player(b["team"]["name"], b["player"]["name"]),
                    "position": b["buzz_position"]["word_index"],
                    "points": b["result"]["value"],
                },
            }
            if b["result"]["value"] > 0:
                cycle["correctBuzz"] = event
            else:
                wrong.append(event)
        if wrong:
            cycle["wrongBuzzes"] = sorted(wrong, key=lambda e: e["marker"]["position"])
        bonus = q.get("replacement_bonus") or q.get("bonus")
        if bonus is not None and "correctBuzz" in cycle:
            owner = cycle["correctBuzz"]["marker"]["player"]["teamName"]
            other = next(t for t in teams if t != owner)
            number = bonus["question"]["question_number"] - 1
            if "replacement_bonus" in q:
                thrown_bonus = q["bonus"]["question"]["question_number"] - 1
                cycle["thrownOutBonuses"] = [
                    {"questionIndex": thrown_bonus, "replacementQuestionIndex": number}
                ]
            cycle["bonusAnswer"] = {
                "bonusIndex": number,
                "receivingTeamName": owner,
                "correctParts": [],
                "parts": [
                    {"teamName": owner, "points": p["controlled_points"]}
                    if p["controlled_points"]
                    else {"teamName": other, "points": p["bounceback_points"]}
                    if p.get("bounceback_points")
                    else {"teamName": "", "points": 0}
                    for p in bonus["parts"]
                ],
            }
    return {
        "players": [
            player(t["team"]["name"], mp["player"]["name"])
            for t in match["match_teams"]
            for mp in t["match_players"]
        ],
        "gameFormat": {
            "bonusesBounceBack": rules.bouncebacks,
            "displayName": rules.format,
            "minimumOvertimeQuestionCount": rules.overtime_tossups,
            "overtimeIncludesBonuses": rules.overtime_bonuses,
            "negValue": rules.neg_points or 0,
            "powers": [{"marker": POWER_MARK, "points": rules.power_points}]
            if rules.power_points
            else [],
            # (no regulation length: as MODAQ's "Freeform format")
            "regulationTossupCount": rules.regulation_tossups or 999,
            "timeoutsAllowed": rules.timeouts if rules.timeouts is not None else 999,
            "pronunciationGuideMarkers": list(_MODAQ_GUIDES[0]),
            "pairTossupsBonuses": False,
            "version": MODAQ_FORMAT_VERSION,
        },
        "packet": {
            "name": packet["name"],
            "tossups": packet["tossups"],
            "bonuses": [
                {
                    "leadin": b["leadin"],
                    "parts": [
                        {"question": q, "answer": a, "value": v}
                        for q, a, v in zip(b["parts"], b["answers"], b["values"], strict=True)
                    ],
                }
                for b in packet["bonuses"]
            ],
        },
        "cycles": cycles,
    }


# ---------------------------------------------------------------------------------------
# QBJ tournament (an event run with a schedule)
# ---------------------------------------------------------------------------------------

#: The version of the QBJ schema our files follow (schema.quizbowl.technology): the one
#: YellowFruit reads (``QbjUtils.ts``: it refuses a file of any other version).
QBJ_VERSION = "2.1.1"


def _scheduled_events(engine: Engine, event_ids: Sequence[int]) -> list[Any]:
    from grace_arena.record.schedule import load_plan

    plans = [load_plan(engine, event_id) for event_id in event_ids]
    # (with rounds: a match of its own has a room and a game, the match, but no rounds)
    return [p for p in plans if p.rounds]


def _rounds_of(engine: Engine, matches: Sequence[MatchInfo]) -> dict[int, int]:
    """The event round of each of these matches that an event's schedule placed."""
    from grace_arena.record.schedule import load_plan

    rounds: dict[int, int] = {}
    for event_id in sorted({m.event_id for m in matches if m.event_id is not None}):
        plan = load_plan(engine, event_id)
        for game in plan.games if plan.rounds else ():  # (a match of its own: no round)
            if game.match_id is not None:
                rounds[game.match_id] = game.round
    return rounds


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "event"


def qbj_tournament(engine: Engine, plan: Any, matches: Sequence[MatchInfo]) -> dict[str, Any]:
    """An event run with a schedule as a QBJ tournament file: the ``Tournament`` with its
    registrations written in it (a ``Registration`` per team, its players those of the event
    and every name that played in its matches, each with an id), every played match as a
    ``Match`` object of the file (the per-match export, its teams and players references to
    the registered ones), one phase with one pool of all teams, whose rounds, named by their
    number, list their packet and matches, and the scoring rules of the event's matches.

    This is the layout YellowFruit opens ("Open QBJ Tournament", ``FileParser
    .parseTournament``): version 2.1.1, a round's name must read as a number or its matches
    are skipped, every match has ``carryover_phases``, a match's teams and players are
    references to registered ones, a team needs a player; YellowFruit reads the aggregates
    (``match_players``' answer counts, ``bonus_points``), not ``match_questions``. MODAQ
    reads the rosters from it ("Import from QBJ" of a registration): it does not follow
    references, so the registrations and their teams are written in the ``Tournament``."""
    by_match = {m.id: m for m in matches}
    team_ref = _qbj_team_ids({t.id: t.name for t in plan.teams})
    players: dict[str, list[str]] = {t.id: [] for t in plan.teams}
    for p in plan.players:
        if p.name not in players[p.team]:  # (one name is one player of the team)
            players[p.team].append(p.name)
    played = []
    rules = None
    for game in plan.games:
        m = by_match.get(game.match_id) if game.match_id is not None else None
        if m is None or not m.played:
            continue
        match = qbj_match(engine, m, round_number=game.round)
        for entry, team in zip(match["match_teams"], m.config.teams, strict=True):
            for p in entry["team"]["players"]:  # everyone who played is registered
                if p["name"] not in players.setdefault(team.id, []):
                    players[team.id].append(p["name"])
        played.append((game, {m.team_name(t.id): t.id for t in m.config.teams}, match))
        rules = rules or m.config.rules
    for t in plan.teams:
        if not players[t.id] and t.model:
            players[t.id].append(t.model)
    for game in plan.games:  # forfeits and results entered by their final score
        if game.match_id is None and (game.forfeit is not None or game.result is not None):
            match = qbj_decided_match(plan, game, players)
            played.append((game, {t.name: t.id for t in plan.teams}, match))
    player_ref = {
        (team, name): f"player_{team}_{i}"
        for team, names in players.items()
        for i, name in enumerate(names, start=1)
    }
    registrations = [
        {
            "type": "Registration",
            "id": f"registration_{t.id}",
            "name": t.name,
            "teams": [
                {
                    "id": team_ref[t.id],
                    "name": t.name,
                    "players": [{"id": player_ref[(t.id, n)], "name": n} for n in players[t.id]],
                }
            ],
        }
        for t in plan.teams
    ]
    objects: list[dict[str, Any]] = []
    rounds: dict[int, list[dict[str, str]]] = {}
    kinds = {ph.id: ph.kind for ph in plan.phases}
    for game, ids, match in sorted(played, key=lambda p: (p[0].round, p[0].slot, p[0].id)):
        match["carryover_phases"] = [{"$ref": f"phase_{ph}"} for ph in game.carryover]
        if kinds.get(game.phase_id or "") == "tiebreaker":
            match["tiebreaker"] = True

        def ref(
            team: dict[str, Any], player: dict[str, Any] | None = None, ids: dict = ids
        ) -> dict[str, str]:
            team_id = ids[team["name"]]
            if player is None:
                return {"$ref": team_ref[team_id]}
            return {"$ref": player_ref[(team_id, player["name"])]}

        for entry in match["match_teams"]:
            team = entry["team"]
            for mp in entry["match_players"]:
                mp["player"] = ref(team, mp["player"])
            for lineup in entry["lineups"]:
                lineup["players"] = [ref(team, p) for p in lineup["players"]]
            entry["team"] = ref(team)
        for question in match["match_questions"]:
            for buzz in question["buzzes"]:
                buzz["player"] = ref(buzz["team"], buzz["player"])
                buzz["team"] = ref(buzz["team"])
        room = plan.room(game.room_id or "")
        objects.append(
            {
                "type": "Match",
                **match,
                **({"location": f"Room {room.name}"} if room else {}),
                # round, room and the game's place in the room's round: two matches of one
                # room in one round differ
                "serial": f"{game.round}-{room.name if room else '-'}-{game.slot + 1}",
            }
        )
        rounds.setdefault(game.round, []).append({"$ref": match["id"]})
    entered = any(g.match_id is None and g.result is not None for g in plan.games)
    if (rules is None and plan.phases) or entered or (plan.defaults or {}).get("format"):
        # the event's own rules when the director set its format, or when games entered by
        # their final score were counted by them: YellowFruit checks every game of the file
        # against these (a game's tossup points plus its bonus points must make its score)
        from grace_arena.record.schedule import event_rules

        rules = event_rules(plan)
    played = rule_set(rules) if rules is not None else None
    answer_types = [{"value": 10}, {"value": -5}]
    if played is not None:
        answer_types = played.tossups.qbj_answer_types()
    # every value a game of the file scored, though its match was played by other rules:
    # YellowFruit refuses the whole file when an answer count names a value the rules lack
    values = {a["value"] for a in answer_types} | {
        c["answer_type"]["value"]
        for o in objects
        for entry in o["match_teams"]
        for mp in entry["match_players"]
        for c in mp["answer_counts"]
        if c["answer_type"]["value"]
    }
    answer_types = [{"value": v} for v in sorted(values, reverse=True)]
    objects.insert(
        0,
        {
            "type": "Tournament",
            "name": plan.title,
            "short_name": plan.name,
            "scoring_rules": {
                "name": played.qbj_name if played else "GRACE Arena tossups",
                "teams_per_match": 2,
                "maximum_players_per_team": max(4, *(len(n) for n in players.values())),
                "regulation_tossup_count": (played.regulation if played else None)
                or max((len(r.tossup_ids) for r in plan.rounds if r.tossup_ids), default=20),
                "answer_types": answer_types,
                # the overtime tossups read whatever the score (NAQT: 3), where the rules
                # have a regulation: MODAQ ends a tied game's overtime after them, and
                # YellowFruit checks each overtime against them
                **(
                    {"minimum_overtime_question_count": rules.overtime_tossups}
                    if played is not None and played.regulation
                    else {}
                ),
                **(
                    played.qbj_bonuses(
                        [
                            b
                            for m in matches
                            if rule_set(m.config.rules).bonuses.played
                            for b in m.config.bonuses
                        ]
                    )
                    if played
                    else {}
                ),
            },
            "registrations": registrations,
            "phases": qbj_phases(plan, team_ref, rounds)
            if plan.phases
            else [
                {
                    "name": "Rounds",
                    "pools": [
                        {
                            "name": "All teams",
                            "pool_teams": [{"team": {"$ref": team_ref[t.id]}} for t in plan.teams],
                        }
                    ],
                    "rounds": [
                        {
                            # a number: YellowFruit skips the matches of a round it cannot number
                            "name": str(r.number),
                            "packets": [{"name": r.packet_id}],
                            "matches": rounds.get(r.number, []),
                            **_byes_of(plan, r.number),
                        }
                        for r in plan.rounds
                    ],
                }
            ],
            "_grace_arena": {
                "event": plan.name,
                "team_kinds": {t.name: t.kind for t in plan.teams},
                "models": {t.name: t.model for t in plan.teams if t.model},
                "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        },
    )
    return {"version": QBJ_VERSION, "objects": objects}


#: YellowFruit's phase types (``Phase.ts``, ``PhaseTypes``), read from a phase's ``YfData``;
#: without it YellowFruit takes the first phase for the prelims and every other for playoffs.
_YF_PHASE_TYPES = {
    "prelim": "Prelim",
    "playoff": "Playoff",
    "finals": "Finals",
    "tiebreaker": "Tiebreaker",
}


def qbj_phases(
    plan: Any, team_ref: dict[str, str], rounds: dict[int, list[dict[str, str]]]
) -> list[dict[str, Any]]:
    """An event's phases as QBJ ``Phase`` objects: each with its pools (``Pool``, its teams
    in seed order as ``PoolTeam`` references) and its rounds (named by their number, which
    run on from one phase to the next, as YellowFruit numbers them), and YellowFruit's
    ``YfData`` (the phase's type and code: 1, 2, ... for full phases, a tiebreaker ``NT``
    after phase N - 1, as ``Tournament.recomputePhaseCodes`` makes them). A game carried over
    names the later phases in its ``carryover_phases``."""
    out = []
    code = 1
    for ph in plan.phases:
        if ph.kind == "tiebreaker":
            yf_code = f"{code}T"
        else:
            yf_code = str(code)
            code += 1
        numbers = sorted({g.round for g in plan.games if g.phase_id == ph.id})
        out.append(
            {
                "id": f"phase_{ph.id}",
                "name": ph.name,
                "pools": [
                    {
                        "id": f"pool_{ph.id}_{pool.id}",
                        "name": pool.name,
                        "position": i + 1,
                        "pool_teams": [{"team": {"$ref": team_ref[t]}} for t in pool.teams],
                    }
                    for i, pool in enumerate(ph.pools)
                ],
                "rounds": [
                    {
                        "name": str(n),
                        "packets": [{"name": r.packet_id}] if (r := plan.round_(n)) else [],
                        "matches": rounds.get(n, []),
                        **_byes_of(plan, n, ph.id),
                    }
                    for n in numbers
                ],
                "YfData": {"phaseType": _YF_PHASE_TYPES[ph.kind], "code": yf_code},
            }
        )
    return out


def _byes_of(plan: Any, number: int, phase_id: str | None = None) -> dict[str, Any]:
    """The teams with a bye in round ``number`` (of ``phase_id``), for a QBJ ``Round``: QBJ
    has no place for a bye (a round lists matches), so they go in ``_grace_arena``, which the
    programs that read QBJ leave alone; nothing when the round has none."""
    byes = [
        {"$ref": _qbj_team_ids({t.id: t.name for t in plan.teams})[g.teams[0]]}
        for g in plan.games
        if g.bye and g.round == number and (phase_id is None or g.phase_id == phase_id)
    ]
    return {"_grace_arena": {"byes": byes}} if byes else {}


def qbj_decided_match(plan: Any, game: Any, players: dict[str, list[str]]) -> dict[str, Any]:
    """A game not played here as a QBJ ``Match``: a forfeit (the forfeiting team's
    ``forfeit_loss``, no tossups read: YellowFruit counts it in won/lost only), or a result
    entered by its final score, each team with its points, bonus points and answer counts
    where they were given (a player's line as entered; a team's counts without players go to
    a player named after the team, who heard every tossup)."""
    from grace_arena.record.schedule import event_rules, result_lines

    names = {t.id: t.name for t in plan.teams}
    team_ids = _qbj_team_ids(names)

    def player(team: str, name: str) -> dict[str, str]:
        if name not in players.setdefault(team, []):
            players[team].append(name)
        return {"id": f"player_{team}_{players[team].index(name) + 1}", "name": name}

    def team_of(team: str, roster: list[str]) -> dict[str, Any]:
        return {
            "id": team_ids[team],
            "name": names[team],
            "players": [player(team, n) for n in roster],
        }

    base: dict[str, Any] = {"id": f"game_{game.id}", "_round": game.round}
    if game.forfeit is not None:
        return {
            **base,
            "carryover_phases": [],
            "match_teams": [
                {
                    "team": team_of(t, []),
                    "forfeit_loss": t == game.forfeit,
                    "match_players": [],
                    "lineups": [],
                }
                for t in game.teams
            ],
            "match_questions": [],
            "_grace_arena": {"game": game.id, "forfeit": names[game.forfeit]},
        }
    rules = event_rules(plan)
    lines, heard = result_lines(plan, {**game.result, "teams": list(game.teams)})
    values = {"powers": rules.power_points, "tens": rules.correct_points, "negs": rules.neg_points}
    entered = list(game.result.get("players") or [])
    match_teams = []
    for t in game.teams:
        line = lines[t]
        mine = [p for p in entered if p["team"] == t]
        if not mine:
            # a stand-in named after the team, never a registered player: YellowFruit would
            # credit that player with the team's answers (no player here made them)
            stand_in = names[t]
            counts = {"powers": line.powers, "tens": line.correct - line.powers,
                      "negs": line.negs}  # fmt: skip
            mine = [{"team": t, "name": stand_in, **counts, "tuh": heard}]
        roster = [p["name"] for p in mine]
        match_teams.append(
            {
                "team": team_of(t, roster),
                "points": line.points,
                **({"bonus_points": line.bonus_points} if line.bonuses_heard else {}),
                "lineups": [
                    {
                        "first_question": 1,
                        "players": [player(t, n) for n in roster],
                        "reason": "initial",
                    }
                ],
                "match_players": [
                    {
                        "player": player(t, p["name"]),
                        "tossups_heard": heard if p.get("tuh") is None else int(p["tuh"]),
                        "answer_counts": [
                            {"number": int(p.get(k) or 0), "answer_type": {"value": v}}
                            for k, v in values.items()
                            if v and int(p.get(k) or 0)
                        ],
                    }
                    for p in mine
                ],
            }
        )
    source = game.result.get("source") or {}
    questions = [  # a match file's cycles, read back with the event's teams and players
        {
            **q,
            "buzzes": [
                {
                    **b,
                    "team": {"id": team_ids[b["team"]["id"]], "name": names[b["team"]["id"]]},
                    "player": player(b["team"]["id"], b["player"]["name"]),
                }
                for b in q.get("buzzes") or []
            ],
        }
        for q in source.get("match_questions") or []
    ]
    return {
        **base,
        "tossups_read": heard,
        "overtime_tossups_read": 0,
        "carryover_phases": [],
        "match_teams": match_teams,
        "match_questions": questions,
        **({"packets": source["packets"]} if source.get("packets") else {}),
        "_grace_arena": {"game": game.id, "entered": True},
    }


# ---------------------------------------------------------------------------------------
# Parquet: the analysis' tables
# ---------------------------------------------------------------------------------------

#: The files ``export --format parquet`` writes, one per table of the analysis.
PARQUET_TABLES = ("steps", "buzzes", "tossups", "heard", "roster")


def export_parquet(
    engine: Engine,
    out: str | Path,
    match_ids: Sequence[int] | None = None,
    *,
    events: Sequence[str] | None = None,
) -> list[Path]:
    """``--format parquet``: the tables the analysis reads from the record
    (:func:`~grace_arena.io.record_io.load_record_data`), as Parquet files in folder
    ``out``: ``steps.parquet`` (every model step in scope, all its logged fields),
    ``buzzes.parquet`` (ruled buzzes that took the floor, outside thrown-out tossups, and
    the events' pooled buzzpoints), ``tossups.parquet``, ``heard.parquet`` (which team
    heard which question), ``roster.parquet`` (who played for which team in which match, a
    player whose presses all lost races included), and ``bonus_parts.parquet`` when bonuses
    were played (the rows of ``--format bonuses``), ``model_bonus_parts.parquet`` (the
    models' answers to bonus parts) and ``bonus_choices.parquet`` (the teams' choices under
    consult rules) when there are any. ``grace_arena.analysis.load(out)`` reads the folder back and
    gives the same analysis as the record."""
    from grace_arena.io.record_io import load_record_data

    data = load_record_data(engine, match_ids, events=events)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name in PARQUET_TABLES:
        frame = getattr(data, name).copy()
        for column in frame.columns:  # nested values (exemplars, extra) as JSON text
            if frame[column].dtype == object and any(
                isinstance(v, list | dict) for v in frame[column].tolist()
            ):
                frame[column] = [
                    None if v is None else json.dumps(v, ensure_ascii=False, default=str)
                    for v in frame[column].tolist()
                ]
        path = out / f"{name}.parquet"
        frame.to_parquet(path, index=False)
        files.append(path)
    # the bonus parts heard, one row each (as --format bonuses), when any bonus was played
    matches, _ = load_scope(engine, match_ids, events=events)
    rows = bonus_rows(matches)
    if rows:
        import pandas as pd

        path = out / "bonus_parts.parquet"
        pd.DataFrame(rows, columns=list(BONUS_EXPORT_COLUMNS)).to_parquet(path, index=False)
        files.append(path)
    # the models' answers to bonus parts, and the teams' choices under consult rules
    for name, frame in (("model_bonus_parts", data.bonus_parts), ("bonus_choices", data.choices)):
        if len(frame):
            path = out / f"{name}.parquet"
            frame.to_parquet(path, index=False)
            files.append(path)
    return files
