"""Reading the record for analysis and export: matches, every buzz, every model step.

The record's ``event`` table is the source of truth; the match set-up (teams, tossups) and
which tossups were played or thrown out come from the events, the buzz details from the
``buzz`` projection, the rulings history from ``ruling``. A question is named
``"<packet id>/<tossup id>"`` (just the tossup id for a match without a packet), in buzz
files and step files alike, so the two can be joined.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.analysis.frames import (
    BUZZ_COLUMNS,
    BUZZ_OPTIONAL,
    STEP_COLUMNS,
    STEP_OPTIONAL,
    STEP_POLICY,
    buzzes_frame,
    heard_frame,
    roster_frame,
    steps_frame,
    tossups_frame,
)
from grace_arena.analysis.reliance import DECISION_COLUMNS, decisions
from grace_arena.analysis.survey import SurveyStep
from grace_arena.core import protests
from grace_arena.core.config import MatchConfig, TossupSpec
from grace_arena.core.consult import PartChoice, part_choices
from grace_arena.core.events import MatchCreated, TossupEnded, TossupStarted, tossups_heard
from grace_arena.core.lineups import LineupSpan, lineup_history
from grace_arena.core.match import Match
from grace_arena.core.officiating import replacements
from grace_arena.core.standings import BonusPlayed, bonuses_played
from grace_arena.record.models import (
    ArenaEventRow,
    BuzzRow,
    EventTeamRow,
    ModelStepRow,
    PlayerRow,
    RulingRow,
    SurveyParticipantRow,
    SurveyStepRow,
    TossupRow,
)
from grace_arena.record.store import MatchStore, RecordError

__all__ = [
    "BUZZ_EXPORT_COLUMNS",
    "STEP_EXPORT_COLUMNS",
    "MatchInfo",
    "PooledSet",
    "RecordData",
    "buzz_rows",
    "event_imports",
    "event_teams",
    "load_matches",
    "load_record",
    "load_record_data",
    "load_scope",
    "pooled_buzz_rows",
    "pooled_export_rows",
    "question_id",
    "step_rows",
    "survey_steps",
    "team_labels",
    "tossup_rows",
]


def question_id(packet_id: str | None, tossup_id: str) -> str:
    """``"<packet>/<tossup>"``, or the tossup id alone when there is no packet."""
    return f"{packet_id}/{tossup_id}" if packet_id else tossup_id


@dataclass
class MatchInfo:
    """One match as the events tell it."""

    id: int
    title: str
    packet_id: str | None
    config: MatchConfig
    played: list[str]  # tossup ids started, in order
    outcomes: dict[str, str]  # tossup id -> answered | dead | thrown_out (the last end)
    #: Tossups played and not thrown out, in order, each once (the teams heard them:
    #: :func:`grace_arena.core.events.tossups_heard`).
    counted: list[str] = field(default_factory=list)
    created_at: Any = None
    source: str | None = None
    source_meta: dict[str, Any] = field(default_factory=dict)
    event_id: int | None = None
    event: str | None = None  # the event's name
    #: The bonuses heard, as they stand (:func:`grace_arena.core.standings.bonuses_played`).
    bonuses: list[BonusPlayed] = field(default_factory=list)
    #: Consult rules: each team's choice on each part
    #: (:func:`grace_arena.core.consult.part_choices`).
    choices: list[PartChoice] = field(default_factory=list)
    #: A tossup (bonus) read as a replacement -> the one thrown out in its place
    #: (:func:`grace_arena.core.officiating.replacements`).
    replaced_tossups: dict[str, str] = field(default_factory=dict)
    replaced_bonuses: dict[str, str] = field(default_factory=dict)
    #: Its protests and corrections by hand, in sentences (``core.protests.match_notes``).
    notes: list[str] = field(default_factory=list)
    #: Each team's lineups, with the question each starts at
    #: (:func:`grace_arena.core.lineups.lineup_history`).
    lineups: list[LineupSpan] = field(default_factory=list)
    #: Its teams' delegation decisions (:func:`grace_arena.analysis.reliance.decisions`).
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def tossup(self, tossup_id: str) -> TossupSpec | None:
        return self.config.tossup(tossup_id)

    def team_name(self, team_id: str) -> str:
        team = self.config.team(team_id)
        return team.name if team else team_id

    def team_kind(self, team_id: str) -> str:
        team = self.config.team(team_id)
        return team.kind.value if team else "human"

    def team_model(self, team_id: str) -> tuple[str | None, float | None]:
        """A model team's model and the threshold of its buzz policy (None, None: a human
        team; a threshold of None: not recorded with the match)."""
        team = self.config.team(team_id)
        if team is None or not team.model:
            return None, None
        return team.model, team.threshold


def load_matches(
    engine: Engine,
    match_ids: Sequence[int] | None = None,
    *,
    event_ids: Sequence[int] | None = None,
) -> list[MatchInfo]:
    """The chosen matches (all when ``match_ids`` is empty; only those of ``event_ids`` when
    given), by id. Unknown ids raise :class:`~grace_arena.record.store.RecordError`."""
    store = MatchStore(engine)
    event_names = {e.id: e.name for e in store.events_of_record()}
    rows = {row.id: row for row in store.matches()}
    if match_ids:
        wanted = list(match_ids)
    else:
        wanted = sorted(
            i
            for i, r in rows.items()
            if i is not None and (event_ids is None or r.event_id in event_ids)
        )
    missing = [i for i in wanted if i not in rows]
    if missing:
        raise RecordError(f"no match {', '.join(map(str, missing))} in the record")
    out = []
    for match_id in wanted:
        row = rows[match_id]
        events = store.events(match_id)
        created = next((e for e in events if isinstance(e, MatchCreated)), None)
        if created is None:
            raise RecordError(f"match {match_id} has no match_created event")
        played = [e.tossup_id for e in events if isinstance(e, TossupStarted)]
        outcomes = {e.tossup_id: e.outcome.value for e in events if isinstance(e, TossupEnded)}
        replaced_tossups, replaced_bonuses = replacements(events)
        out.append(
            MatchInfo(
                id=match_id,
                title=row.title,
                packet_id=created.config.packet_id,
                config=created.config,
                played=played,
                outcomes=outcomes,
                counted=tossups_heard(events),
                created_at=row.created_at,
                source=getattr(row, "source", None),
                source_meta=dict(getattr(row, "source_meta", None) or {}),
                event_id=row.event_id,
                event=event_names.get(row.event_id),
                bonuses=bonuses_played(events),
                choices=part_choices(events, created.config),
                replaced_tossups=replaced_tossups,
                replaced_bonuses=replaced_bonuses,
                notes=protests.match_notes(Match.replay(events).state),
                lineups=lineup_history(events),
                decisions=decisions(events, created.config),
            )
        )
    return out


@dataclass
class PooledSet:
    """The pooled buzzpoints of some events (imported data whose matches are unknown)."""

    rows: list[dict[str, Any]]  # one per buzzpoint, BuzzTable columns + event, seq...
    #: ("", team label, question id, team kind, model, threshold)
    heard: list[tuple[str, str, str, str, str | None, float | None]]


def pooled_buzz_rows(
    engine: Engine, event_ids: Sequence[int], labels: dict[tuple[int, str], str]
) -> PooledSet:
    """Every pooled buzzpoint of these events as analysis rows, in import order.

    ``labels`` maps (event id, team id) to the team's name in the analysis. Which tossups a
    team heard is not in pooled data; it is taken as every tossup of each packet in which
    the team buzzed at least once (a team plays a whole packet in its round).
    """
    from grace_arena.record.models import PooledBuzzRow

    if not event_ids:
        return PooledSet([], [])
    with Session(engine) as session:
        rows = session.exec(
            select(PooledBuzzRow)
            .where(PooledBuzzRow.event_id.in_(list(event_ids)))  # type: ignore[attr-defined]
            .order_by(PooledBuzzRow.id)  # type: ignore[arg-type]
        ).all()
    stored = tossup_rows(engine, {r.packet_id for r in rows})
    registered = {(t.event_id, t.team_id): t for t in event_teams(engine, event_ids)[0]}
    by_packet: dict[str, list[str]] = {}
    for (packet_id, tossup_id), _row in sorted(stored.items(), key=lambda kv: kv[1].position):
        by_packet.setdefault(packet_id, []).append(tossup_id)
    out = []
    played: set[tuple[str, str, str, str | None, float | None]] = set()
    for r in rows:
        team = labels.get((r.event_id, r.team_id), r.team_id)
        t = stored.get((r.packet_id, r.tossup_id))
        entry = registered.get((r.event_id, r.team_id))
        model = entry.model if entry is not None else None
        threshold = entry.threshold if entry is not None and model else None
        played.add((team, r.packet_id, r.team_kind, model, threshold))
        out.append(
            {
                "event_id": r.event_id,
                "match": "",
                "packet_id": r.packet_id,
                "tossup_id": r.tossup_id,
                "question_id": question_id(r.packet_id, r.tossup_id),
                "team_id": r.team_id,
                "team": team,
                "team_kind": r.team_kind,
                "model": model,
                "threshold": threshold,
                "player": team,
                "word_index": r.word_index,
                "clue_index": r.clue_index,
                "fraction_revealed": r.fraction_revealed,
                "correct": int(r.correct),
                "category": t.category if t else None,
                "n_words": t.n_words if t else None,
                "n_clues": len(t.clue_ends) if t else None,
                "seq": r.seq,
                "source_word_index": r.source_word_index,
                "import_id": r.import_id,
            }
        )
    heard = [
        ("", team, question_id(packet_id, tossup_id), kind, model, threshold)
        for team, packet_id, kind, model, threshold in sorted(played, key=lambda p: p[:3])
        for tossup_id in by_packet.get(packet_id, [])
    ]
    return PooledSet(out, heard)


def pooled_export_rows(pooled: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pooled buzzpoints (the rows of :func:`pooled_buzz_rows`, which the analysis and the
    Parquet buzz table read) as rows of ``export --format csv``/``jsonl``
    (:data:`BUZZ_EXPORT_COLUMNS`): each a ruled buzz that took the floor, its team its only
    player; what the pooled data does not tell (the match, the buzz's id, its timing, the
    typed answer) is empty."""
    return [
        {
            **dict.fromkeys(BUZZ_EXPORT_COLUMNS),
            **{k: r[k] for k in BUZZ_EXPORT_COLUMNS if k in r and k != "match"},
            "player_kind": r["team_kind"],
            "outcome": "won",
            "ruling": "correct" if r["correct"] else "incorrect",
            "prompts": None,  # pooled data does not say
            "thrown_out": False,
            "ruling_history": [],
        }
        for r in pooled
    ]


def tossup_rows(engine: Engine, packet_ids: Iterable[str]) -> dict[tuple[str, str], TossupRow]:
    """Stored tossups of these packets, by (packet id, tossup id)."""
    ids = sorted(set(packet_ids))
    if not ids:
        return {}
    with Session(engine) as session:
        rows = session.exec(select(TossupRow).where(TossupRow.packet_id.in_(ids))).all()  # type: ignore[attr-defined]
        return {(r.packet_id, r.tossup_id): r for r in rows}


#: Columns of ``export --format csv`` (one row per buzz), in order.
BUZZ_EXPORT_COLUMNS = (
    "match",
    "match_title",
    "packet_id",
    "tossup_id",
    "question_id",
    "question_number",
    "category",
    "n_words",
    "n_clues",
    "buzz_id",
    "event_seq",
    "team_id",
    "team",
    "team_kind",
    "model",
    "threshold",
    "player_id",
    "player",
    "player_kind",
    "word_index",
    "clue_index",
    "char_offset",
    "fraction_revealed",
    "received_wall",
    "received_mono",
    "client_press",
    "clock_offset",
    "rtt",
    "outcome",
    "interrupt",
    "holder_buzz_id",
    "margin",
    "repeats",
    "last_repeat_wall",
    "answer",
    "suggestion",
    "model_confidence",
    "ruling",
    "prompts",
    "correct",
    "points",
    "power",
    "thrown_out",
    "ruling_history",
)


def buzz_rows(engine: Engine, matches: Sequence[MatchInfo]) -> list[dict[str, Any]]:
    """Every buzz of these matches with every logged field (:data:`BUZZ_EXPORT_COLUMNS`).

    ``correct`` is 1 / 0 for a buzz whose ruling in force is correct / incorrect and None
    otherwise; ``ruling_history`` lists every ruling made on it, undone ones included.
    ``repeats``: for a refused buzz, the presses of its player that repeated it later in the
    tossup (same reason, same holder of the floor), counted on it rather than listed, and
    ``last_repeat_wall`` the server's wall clock at the last of them.
    """
    out: list[dict[str, Any]] = []
    with Session(engine) as session:
        for m in matches:
            players = {
                p.player_id: p.name
                for p in session.exec(select(PlayerRow).where(PlayerRow.match_id == m.id)).all()
            }
            history: dict[int, list[dict[str, Any]]] = {}
            for r in session.exec(
                select(RulingRow).where(RulingRow.match_id == m.id).order_by(RulingRow.seq)  # type: ignore[arg-type]
            ).all():
                history.setdefault(r.buzz_id, []).append(
                    {
                        "seq": r.seq,
                        "ruling": r.ruling,
                        "points": r.points,
                        "by": r.by,
                        "undone": r.undone_seq is not None,
                    }
                )
            number = {t: i + 1 for i, t in enumerate(m.played)}
            buzzes = session.exec(
                select(BuzzRow).where(BuzzRow.match_id == m.id).order_by(BuzzRow.buzz_id)  # type: ignore[arg-type]
            ).all()
            for b in buzzes:
                spec = m.tossup(b.tossup_id) if b.tossup_id else None
                out.append(
                    {
                        "match": m.id,
                        "match_title": m.title,
                        "packet_id": m.packet_id,
                        "tossup_id": b.tossup_id,
                        "question_id": question_id(m.packet_id, b.tossup_id)
                        if b.tossup_id
                        else None,
                        "question_number": number.get(b.tossup_id or ""),
                        "category": spec.category if spec else None,
                        "n_words": spec.n_words if spec else None,
                        "n_clues": len(spec.clue_ends) if spec else None,
                        "buzz_id": b.buzz_id,
                        "event_seq": b.event_seq,
                        "team_id": b.team_id,
                        "team": m.team_name(b.team_id),
                        "team_kind": m.team_kind(b.team_id),
                        "model": m.team_model(b.team_id)[0],
                        "threshold": m.team_model(b.team_id)[1],
                        "player_id": b.player_id,
                        "player": players.get(b.player_id, b.player_id),
                        "player_kind": b.player_kind,
                        "word_index": b.word_index,
                        "clue_index": b.clue_index,
                        "char_offset": b.char_offset,
                        "fraction_revealed": b.fraction_revealed,
                        "received_wall": b.received_wall,
                        "received_mono": b.received_mono,
                        "client_press": b.client_press,
                        "clock_offset": b.clock_offset,
                        "rtt": b.rtt,
                        "outcome": b.outcome,
                        "interrupt": b.interrupt,
                        "holder_buzz_id": b.holder_buzz_id,
                        "margin": b.margin,
                        "repeats": b.repeats,
                        "last_repeat_wall": b.last_repeat_wall,
                        "answer": b.answer,
                        "suggestion": b.suggestion,
                        "model_confidence": b.model_confidence,
                        "ruling": b.ruling,
                        "prompts": sum(
                            1
                            for r in history.get(b.buzz_id, [])
                            if r["ruling"] == "prompt" and not r["undone"]
                        ),
                        "correct": {"correct": 1, "incorrect": 0}.get(b.ruling or ""),
                        "points": b.points,
                        "power": b.power,
                        "thrown_out": b.thrown_out,
                        "ruling_history": history.get(b.buzz_id, []),
                    }
                )
    return out


#: Columns of ``export --format steps``: the ``--steps`` columns first, then the rest.
STEP_EXPORT_COLUMNS = (
    *STEP_COLUMNS,
    *STEP_OPTIONAL,
    *STEP_POLICY,
    "packet_id",
    "tossup_id",
    "guess",
    "confidence_logit_geo",
    "sequence_prob",
    "judge_directive",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "exemplars",
    "extra",
)


#: The columns of a model's answers to bonus parts (``bonus_parts`` tables).
BONUS_PART_COLUMNS = (
    "model", "packet_id", "bonus_id", "part", "difficulty", "category", "guess",
    "confidence_logit", "confidence_verbal", "correct", "confident",
)  # fmt: skip
#: The columns of the teams' choices on bonus parts under consult rules.
CHOICE_COLUMNS = (
    "match", "event", "team", "packet_id", "bonus_id", "part", "difficulty", "category",
    "choice", "consulted", "model", "model_guess", "model_confidence", "model_correct", "draft",
    "draft_correct", "answer", "correct", "points", "agreed", "changed", "abstained_right",
)  # fmt: skip


def _bonus_meta(engine: Engine, packet_ids: Iterable[str]) -> dict[tuple[str, str, int], dict]:
    """(packet, bonus, part) -> its difficulty and category, from the packets in the record."""
    from grace_arena.record.models import PacketRow

    out: dict[tuple[str, str, int], dict] = {}
    with Session(engine) as session:
        for packet_id in set(packet_ids):
            row = session.get(PacketRow, packet_id)
            document = (row.meta or {}).get("document", {}) if row is not None else {}
            for bonus in document.get("bonuses", []):
                for i, part in enumerate(bonus.get("parts", [])):
                    out[(packet_id, bonus["id"], i)] = {
                        "difficulty": part.get("difficulty"),
                        "category": bonus.get("category"),
                    }
    return out


def bonus_part_rows(engine: Engine, packet_ids: Iterable[str] | None = None) -> list[dict]:
    """Every model's judged answers to bonus parts (:data:`BONUS_PART_COLUMNS`), all or those
    of the given packets."""
    from grace_arena.record.models import ModelBonusPartRow as Row

    wanted = None if packet_ids is None else set(packet_ids)
    with Session(engine) as session:
        rows = [
            r
            for r in session.exec(
                select(Row).order_by(Row.model, Row.packet_id, Row.bonus_id, Row.part)  # type: ignore[arg-type]
            ).all()
            if (wanted is None or r.packet_id in wanted) and r.correct is not None
        ]
    meta = _bonus_meta(engine, {r.packet_id for r in rows})
    return [
        {
            "model": r.model,
            "packet_id": r.packet_id,
            "bonus_id": r.bonus_id,
            "part": r.part,
            **meta.get((r.packet_id, r.bonus_id, r.part), {"difficulty": None, "category": None}),
            "guess": r.guess,
            "confidence_logit": r.confidence_logit,
            "confidence_verbal": r.confidence_verbal,
            "correct": int(bool(r.correct)),
            "confident": r.confident,
        }
        for r in rows
    ]


def choice_rows(
    engine: Engine,
    matches: Sequence[MatchInfo],
    labels: dict[tuple[int, str], str] | None = None,
) -> list[dict]:
    """The teams' choices on bonus parts under consult rules (:data:`CHOICE_COLUMNS`); a team
    is named by ``labels`` (the analysis' team names, :func:`team_labels`) when given."""
    labels = labels or {}
    meta = _bonus_meta(engine, {m.packet_id for m in matches if m.choices and m.packet_id})
    out = []
    for m in matches:
        for c in m.choices:
            where = meta.get((m.packet_id or "", c.bonus_id, c.part), {})
            out.append(
                {
                    "match": str(m.id),
                    "event": m.event,
                    "team": labels.get((m.event_id or 0, c.team), m.team_name(c.team)),
                    "packet_id": m.packet_id,
                    "bonus_id": c.bonus_id,
                    "part": c.part,
                    "difficulty": where.get("difficulty"),
                    "category": where.get("category"),
                    "choice": c.choice,
                    "consulted": c.consulted,
                    "model": c.model,
                    "model_guess": c.model_guess,
                    "model_confidence": c.model_confidence,
                    "model_correct": c.model_correct,
                    "draft": c.draft,
                    "draft_correct": c.draft_correct,
                    "answer": c.answer,
                    "correct": c.correct,
                    "points": c.points,
                    "agreed": c.agreed,
                    "changed": c.changed,
                    "abstained_right": c.abstained_right,
                }
            )
    return out


def decision_rows(
    matches: Sequence[MatchInfo], labels: dict[tuple[int, str], str] | None = None
) -> list[dict[str, Any]]:
    """The teams' delegation decisions in these matches (:data:`DECISION_COLUMNS`), each
    named by its match, event and team (``labels``, as :func:`choice_rows`) and its question
    (``packet/bonus``, or ``packet/tossup`` for a tossup's, which the reliance bootstrap
    resamples)."""
    labels = labels or {}
    return [
        {
            **row,
            "match": str(m.id),
            "event": m.event,
            "team": labels.get((m.event_id or 0, row["team"]), m.team_name(row["team"])),
            "packet_id": m.packet_id,
            "question": question_id(
                m.packet_id, row["bonus_id"] if row["bonus_id"] is not None else row["tossup_id"]
            ),
        }
        for m in matches
        for row in m.decisions
    ]


def step_rows(
    engine: Engine, questions: Iterable[tuple[str, str]] | None = None
) -> list[dict[str, Any]]:
    """Model steps (:data:`STEP_EXPORT_COLUMNS`), all or those of the given (packet, tossup)
    pairs. Steps whose correctness was never judged are left out (they cannot be scored)."""
    wanted = None if questions is None else set(questions)
    with Session(engine) as session:
        rows = session.exec(
            select(ModelStepRow).order_by(
                ModelStepRow.model,  # type: ignore[arg-type]
                ModelStepRow.packet_id,  # type: ignore[arg-type]
                ModelStepRow.tossup_id,  # type: ignore[arg-type]
                ModelStepRow.step,  # type: ignore[arg-type]
            )
        ).all()
    rows = [r for r in rows if wanted is None or (r.packet_id, r.tossup_id) in wanted]
    tossups = tossup_rows(engine, {r.packet_id for r in rows})
    out = []
    for r in rows:
        if r.correct is None:
            continue
        t = tossups.get((r.packet_id, r.tossup_id))
        policy = (r.extra or {}).get("policy") or {} if r.would_buzz is not None else {}
        out.append(
            {
                "model": r.model,
                "question_id": question_id(r.packet_id, r.tossup_id),
                "step": r.step,
                "word_index": r.word_index,
                "correct": int(bool(r.correct)),
                "confidence_logit": r.confidence_logit,
                "confidence_verbal": r.confidence_verbal,
                "category": t.category if t else None,
                "n_words": t.n_words if t else None,
                "would_buzz": None if r.would_buzz is None else int(r.would_buzz),
                # the policy behind would_buzz, as precompute stored it
                "policy_confidence": policy.get("confidence"),
                "policy_threshold": policy.get("threshold"),
                "packet_id": r.packet_id,
                "tossup_id": r.tossup_id,
                "guess": r.guess,
                "confidence_logit_geo": r.confidence_logit_geo,
                "sequence_prob": r.sequence_prob,
                "judge_directive": r.judge_directive,
                "latency_s": r.latency_s,
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens": r.completion_tokens,
                "cost_usd": r.cost_usd,
                "exemplars": r.exemplars,
                "extra": r.extra,
            }
        )
    return out


@dataclass
class RecordData:
    """What the analysis reads from the record: its tables (DataFrames of
    :mod:`grace_arena.analysis.frames`) and where they came from."""

    steps: pd.DataFrame
    buzzes: pd.DataFrame
    heard: pd.DataFrame
    tossups: pd.DataFrame
    matches: list[MatchInfo]
    events: list[str]  # names of the events in scope
    n_pooled: int  # buzzes from pooled (imported) data, matches unknown
    n_match_buzzes: int  # ruled buzzes from matches
    warnings: list[str] = field(default_factory=list)
    #: The models' answers to bonus parts, and the teams' choices under consult rules.
    bonus_parts: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(BONUS_PART_COLUMNS))
    )
    choices: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(CHOICE_COLUMNS))
    )
    #: The teams' delegation decisions (:mod:`grace_arena.analysis.reliance`).
    decisions: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(DECISION_COLUMNS))
    )
    #: Who played for which team in which match: every player with a buzz outside
    #: thrown-out tossups, a press that lost a race included (a pooled team is its player).
    roster: pd.DataFrame = field(default_factory=roster_frame)

    @property
    def normalised_by(self) -> str:
        """How buzz rates are normalised (:func:`~grace_arena.analysis.summary.normalisation`):
        by matches played, or by tossups heard where the matches are unknown."""
        from grace_arena.analysis.summary import normalisation

        return normalisation(self.heard)


def team_labels(engine: Engine, event_ids: Sequence[int]) -> dict[tuple[int, str], str]:
    """A team's name in the analysis: its registered name, followed by its event's name when
    teams of several events in scope share that name (different events, different teams).

    Matches created on their own (each in an event of its own, ``match-<id>``, as every match
    was before events existed) are taken together, as before: a team name is one team across
    them.
    """
    teams, events = event_teams(engine, event_ids)

    def group(event_id: int) -> int | None:
        event = events.get(event_id)
        return None if event is None or "created_for_match" in (event.meta or {}) else event_id

    groups_of: dict[str, set[int | None]] = {}
    for t in teams:
        groups_of.setdefault(t.name, set()).add(group(t.event_id))
    labels = {}
    for t in teams:
        g = group(t.event_id)
        if len(groups_of[t.name]) == 1:
            labels[(t.event_id, t.team_id)] = t.name
        elif g is None:
            labels[(t.event_id, t.team_id)] = f"{t.name} (own matches)"
        else:
            labels[(t.event_id, t.team_id)] = f"{t.name} ({events[t.event_id].name})"
    return labels


def load_scope(
    engine: Engine,
    match_ids: Sequence[int] | None = None,
    *,
    events: Sequence[str] | None = None,
) -> tuple[list[MatchInfo], list[int]]:
    """The matches an analysis or export covers, and the ids of their events: the events
    named (by name or id) and all their matches; else the matches given and their events;
    else every match and every event of the record."""
    store = MatchStore(engine)
    if events:
        event_ids = [e.id for e in store.find_events(events) if e.id is not None]
        return load_matches(engine, event_ids=event_ids), event_ids
    matches = load_matches(engine, match_ids)
    if match_ids:
        return matches, sorted({m.event_id for m in matches if m.event_id is not None})
    return matches, [e.id for e in store.events_of_record() if e.id is not None]


def event_teams(
    engine: Engine, event_ids: Sequence[int]
) -> tuple[list[EventTeamRow], dict[int, ArenaEventRow]]:
    """The teams registered in these events, and the events by id."""
    if not event_ids:
        return [], {}
    with Session(engine) as session:
        teams = session.exec(
            select(EventTeamRow).where(EventTeamRow.event_id.in_(list(event_ids)))  # type: ignore[attr-defined]
        ).all()
        events = session.exec(
            select(ArenaEventRow).where(ArenaEventRow.id.in_(list(event_ids)))  # type: ignore[union-attr]
        ).all()
    return list(teams), {e.id: e for e in events if e.id is not None}


def load_record_data(
    engine: Engine,
    match_ids: Sequence[int] | None = None,
    *,
    events: Sequence[str] | None = None,
) -> RecordData:
    """The analysis tables of some events (by name or id; all of the record's when none is
    named), or of some matches.

    Buzzes, pooled per tossup over every match of the events that heard it: every buzz that
    took the floor and is ruled correct or incorrect, outside thrown-out tossups, and every
    pooled buzzpoint of the events (imported data; not with ``match_ids``). ``heard``: every
    team of each match heard every tossup played and not thrown out there; for pooled data,
    see :func:`pooled_buzz_rows`. Steps: every model step on the questions in scope (with
    ``match_ids`` or ``events``), otherwise every model step in the record.
    """
    matches, event_ids = load_scope(engine, match_ids, events=events)
    names = {e.id: e.name for e in MatchStore(engine).events_of_record()}
    labels = team_labels(engine, event_ids)
    rows = buzz_rows(engine, matches)
    event_of = {m.id: m.event_id or 0 for m in matches}
    kept = [
        {
            **r,
            "match": str(r["match"]),
            "team": labels.get((event_of[r["match"]], r["team_id"]), r["team"]),
        }
        for r in rows
        if r["outcome"] == "won" and r["correct"] is not None and not r["thrown_out"]
    ]
    heard = [
        (str(m.id), labels.get((m.event_id or 0, team.id), m.team_name(team.id)),
         question_id(m.packet_id, t), str(team.kind), *m.team_model(team.id))
        for m in matches
        for team in m.config.teams
        for t in m.counted
    ]  # fmt: skip
    played = [
        (str(r["match"]), labels.get((event_of[r["match"]], r["team_id"]), r["team"]), r["player"])
        for r in rows
        if not r["thrown_out"]
    ]
    pooled = PooledSet([], []) if match_ids else pooled_buzz_rows(engine, event_ids, labels)
    columns = [*BUZZ_COLUMNS, *BUZZ_OPTIONAL, "packet_id", "tossup_id", "model", "threshold",
               "prompts", "answer"]  # fmt: skip
    buzzes = buzzes_frame(pd.DataFrame([*kept, *pooled.rows], columns=columns))
    scoped = match_ids or events
    questions = {(m.packet_id, t) for m in matches for t in m.counted if m.packet_id}
    questions |= {(r["packet_id"], r["tossup_id"]) for r in pooled.rows}
    step_list = step_rows(engine, questions if scoped else None)
    steps = steps_frame(pd.DataFrame(step_list) if step_list else None)
    packets = {p for p, _ in questions} | {r["packet_id"] for r in step_list}
    stored = tossup_rows(engine, {p for p in packets if p})
    tossups = tossups_frame(
        [
            {
                "question_id": question_id(packet_id, tossup_id),
                "packet_id": packet_id,
                "tossup_id": tossup_id,
                "category": t.category,
                "n_words": t.n_words,
                "n_clues": len(t.clue_ends),
            }
            for (packet_id, tossup_id), t in stored.items()
        ]
    )
    in_scope = {m.packet_id for m in matches if m.packet_id} if scoped else None
    return RecordData(
        steps=steps,
        buzzes=buzzes,
        heard=heard_frame([*heard, *pooled.heard]),
        tossups=tossups,
        matches=matches,
        events=[names[i] for i in event_ids if i in names],
        n_pooled=len(pooled.rows),
        n_match_buzzes=len(kept),
        warnings=[] if match_ids else _imported_twice(engine, event_ids, names),
        bonus_parts=pd.DataFrame(
            bonus_part_rows(engine, in_scope), columns=list(BONUS_PART_COLUMNS)
        ),
        choices=pd.DataFrame(choice_rows(engine, matches, labels), columns=list(CHOICE_COLUMNS)),
        decisions=pd.DataFrame(decision_rows(matches, labels), columns=list(DECISION_COLUMNS)),
        roster=roster_frame([*played, *(("", r["team"], r["player"]) for r in pooled.rows)]),
    )


def event_imports(engine: Engine, event_ids: Sequence[int]) -> list[Any]:
    """The files (and other records' data) imported into these events."""
    from grace_arena.record.models import EventImportRow

    if not event_ids:
        return []
    with Session(engine) as session:
        return list(
            session.exec(
                select(EventImportRow).where(EventImportRow.event_id.in_(list(event_ids)))  # type: ignore[attr-defined]
            ).all()
        )


def _imported_twice(
    engine: Engine, event_ids: Sequence[int], names: dict[int | None, str]
) -> list[str]:
    """A warning for each file imported into several of these events: analysed together,
    its buzzpoints count once per event."""
    from grace_arena.record.models import EventImportRow

    if len(event_ids) < 2:
        return []
    where: dict[str, list[EventImportRow]] = {}
    for imp in event_imports(engine, event_ids):
        where.setdefault(imp.source_key, []).append(imp)
    return [
        f"{found[0].name} was imported into events "
        f"{', '.join(sorted(names.get(i.event_id, str(i.event_id)) for i in found))}: analysed "
        "together, its buzzpoints count once per event (name one with --event)"
        for found in where.values()
        if len({i.event_id for i in found}) > 1
    ]


def load_record(
    engine: Engine,
    match_ids: Sequence[int] | None = None,
    *,
    events: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, list[MatchInfo]]:
    """``(steps, buzzes, matches)`` of :func:`load_record_data`."""
    data = load_record_data(engine, match_ids, events=events)
    return data.steps, data.buzzes, data.matches


def survey_steps(engine: Engine) -> list[SurveyStep]:
    """Every answer of every survey participant (``grace-arena survey``), with the question's
    length in words and clues from the stored tossups."""
    with Session(engine) as session:
        rows = session.exec(
            select(SurveyStepRow, SurveyParticipantRow.name)
            .join(SurveyParticipantRow, SurveyParticipantRow.id == SurveyStepRow.participant_id)  # type: ignore[arg-type]
            .order_by(
                SurveyStepRow.participant_id,  # type: ignore[arg-type]
                SurveyStepRow.packet_id,  # type: ignore[arg-type]
                SurveyStepRow.tossup_id,  # type: ignore[arg-type]
                SurveyStepRow.step,  # type: ignore[arg-type]
            )
        ).all()
    tossups = tossup_rows(engine, {r.packet_id for r, _ in rows})
    out = []
    for r, name in rows:
        t = tossups.get((r.packet_id, r.tossup_id))
        out.append(
            SurveyStep(
                participant=r.participant_id,
                question_id=question_id(r.packet_id, r.tossup_id),
                step=r.step,
                word_index=r.word_index,
                correct=r.correct,
                would_buzz=r.would_buzz,
                guess=r.guess,
                name=name,
                n_words=t.n_words if t else None,
                n_clues=len(t.clue_ends) if t else None,
            )
        )
    return out


def dumps_cell(value: Any) -> Any:
    """A CSV cell: lists and dicts as compact JSON, None as empty."""
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bool):
        return int(value)
    return value
