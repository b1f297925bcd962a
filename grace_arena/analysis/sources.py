"""Where the analysis' data comes from: the record or files, as DataFrames (:func:`load`).

This is the one module of :mod:`grace_arena.analysis` that may reach the record: given a
database URL it calls :func:`grace_arena.io.record_io.load_record_data` (imported when
called, so importing the analysis loads no database code). The modules that compute
(metrics, curves, summary, recalibration, selective prediction, the report) are kept free
of database, server and CLI code by an import-linter contract that names each of them and
forbids them to import this one; a test checks that every other module of the package is
named there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from grace_arena.analysis.frames import (
    HEARD_COLUMNS,
    HEARD_OPTIONAL,
    ROSTER_COLUMNS,
    FileFormatError,
    buzzes_frame,
    derive_heard,
    heard_frame,
    read_buzz_tables,
    read_steps,
    read_table,
    roster_frame,
    steps_frame,
    tossups_frame,
    tossups_from,
)
from grace_arena.analysis.survey import read_survey_csv, survey_frame

__all__ = ["Dataset", "load"]

PathLike = str | Path
_SUFFIXES = (".parquet", ".pq", ".csv")


@dataclass
class Dataset:
    """The tables of an analysis (DataFrames of :mod:`grace_arena.analysis.frames`).

    ``steps``: model steps; ``buzzes``: ruled buzzes; ``heard``: who heard which question;
    ``tossups``: one row per question; ``survey``: the per-clue survey's answers (empty when
    there are none); ``source``: where they came from; ``notes``: warnings about the data.
    """

    steps: pd.DataFrame
    buzzes: pd.DataFrame
    heard: pd.DataFrame
    tossups: pd.DataFrame
    survey: pd.DataFrame = field(default_factory=lambda: survey_frame([]))
    source: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The models' answers to bonus parts and the teams' choices under consult rules
    #: (:mod:`grace_arena.analysis.bonuses`; from the record, or ``model_bonus_parts`` and
    #: ``bonus_choices`` files of ``export --format parquet``).
    bonus_parts: pd.DataFrame | None = None
    choices: pd.DataFrame | None = None
    #: The teams' delegation decisions, read from the record's events
    #: (:mod:`grace_arena.analysis.reliance`; none from files).
    decisions: pd.DataFrame | None = None
    #: Who played for which team in which match (:func:`~grace_arena.analysis.frames.
    #: roster_frame`): a player who pressed but never took the floor is in it.
    roster: pd.DataFrame | None = None


def _is_url(text: str) -> bool:
    return "://" in text


def load(
    source: PathLike | Sequence[PathLike] | None = None,
    *,
    event: str | Sequence[str] | None = None,
    match: int | Sequence[int] | None = None,
    steps: PathLike | None = None,
    buzzes: PathLike | None = None,
    survey: PathLike | None = None,
) -> Dataset:
    """The steps, buzzes, heard questions, tossups and survey answers of an analysis.

    ``source`` is one of:

    * a database URL (``sqlite:///arena.db``, ``postgresql+psycopg://...``) or a SQLite
      file (``.db``, ``.sqlite``): the record, optionally only some events (``event``, by
      name or id) or matches (``match``), as ``grace-arena analyze --db`` reads it;
    * a folder written by ``grace-arena export --format parquet`` (``steps.parquet``,
      ``buzzes.parquet``, ``tossups.parquet``, ``heard.parquet``; CSV files of those names
      work too);
    * a file or a list of files, CSV or Parquet, each told apart by its columns (steps have
      ``confidence_logit``, buzzes ``team_kind``, survey answers ``participant``).

    ``steps``, ``buzzes`` and ``survey`` name files explicitly. Raises
    :class:`~grace_arena.analysis.frames.FileFormatError` (a ``ValueError``) for a bad file.

    >>> data = load(steps="docs/examples/steps.csv")  # doctest: +SKIP
    >>> data.steps.groupby("model", observed=True).correct.mean()  # doctest: +SKIP
    """
    events = [event] if isinstance(event, str) else list(event or [])
    matches = [match] if isinstance(match, int) else list(match or [])
    if isinstance(source, str | Path) and (
        _is_url(str(source)) or Path(source).suffix.lower() in (".db", ".sqlite", ".sqlite3")
    ):
        if steps or buzzes or survey:
            raise ValueError("give a database or files (steps=, buzzes=, survey=), not both")
        url = str(source) if _is_url(str(source)) else f"sqlite:///{Path(source).resolve()}"
        return _load_record(url, events=events, matches=matches)
    if events or matches:
        raise ValueError("event= and match= select from a database; files hold what they hold")
    files: dict[str, Path] = {}
    for path in _paths(source):
        files[_kind_of(path)] = path
    for kind, path in (("steps", steps), ("buzzes", buzzes), ("survey", survey)):
        if path is not None:
            files[kind] = Path(path)
    dataset = _load_files(files)
    for key, frame in _bonus_tables(source).items():
        setattr(dataset, key, frame)
    return dataset


def _paths(source: PathLike | Sequence[PathLike] | None) -> list[Path]:
    if source is None:
        return []
    if isinstance(source, str | Path):
        path = Path(source)
        if path.is_dir():
            found = [
                path / f"{name}{suffix}"
                for name in ("steps", "buzzes", "tossups", "heard", "roster", "survey")
                for suffix in _SUFFIXES
                if (path / f"{name}{suffix}").is_file()
            ]
            if not found:
                raise FileFormatError(f"{path}: no steps, buzzes or survey file in this folder")
            return found
        return [path]
    return [Path(p) for p in source]


def _kind_of(path: Path) -> str:
    """Which table a file holds, by its columns."""
    columns = set(read_table(path).columns)
    if {"model", "confidence_logit"} <= columns:
        return "steps"
    if {"match", "team", "question_id"} <= columns <= {*HEARD_COLUMNS, *HEARD_OPTIONAL}:
        return "heard"
    if columns == set(ROSTER_COLUMNS):
        return "roster"
    if "team_kind" in columns:
        return "buzzes"
    if "participant" in columns:
        return "survey"
    if {"question_id", "n_clues"} <= columns:
        return "tossups"
    raise FileFormatError(
        f"{path}: neither steps (model, confidence_logit...), buzzes (team_kind...), survey "
        f"answers (participant...) nor tossups (question_id, n_clues): {', '.join(columns)}"
    )


def _bonus_tables(source: PathLike | Sequence[PathLike] | None) -> dict[str, pd.DataFrame]:
    """A folder's ``model_bonus_parts`` and ``bonus_choices`` tables (export --format parquet)."""
    if not isinstance(source, str | Path) or not Path(source).is_dir():
        return {}
    out = {}
    for key, name in (("bonus_parts", "model_bonus_parts"), ("choices", "bonus_choices")):
        for suffix in _SUFFIXES:
            path = Path(source) / f"{name}{suffix}"
            if path.is_file():
                out[key] = read_table(path)
                break
    return out


def _load_files(files: dict[str, Path]) -> Dataset:
    step_frame = read_steps(files["steps"]) if "steps" in files else steps_frame()
    if "buzzes" in files:
        buzz_frame, heard, roster = read_buzz_tables(files["buzzes"])
    else:
        buzz_frame = buzzes_frame()
        heard = derive_heard(buzz_frame)
        roster = roster_frame()
    if "heard" in files:  # written by export --format parquet: exact, also silent teams
        heard = heard_frame(read_table(files["heard"], HEARD_COLUMNS))
    if "roster" in files:  # written by export --format parquet: those who lost races too
        roster = roster_frame(read_table(files["roster"], ROSTER_COLUMNS))
    survey_steps = read_survey_csv(files["survey"]) if "survey" in files else []
    tossups = (
        tossups_frame(read_table(files["tossups"], ("question_id",)))
        if "tossups" in files
        else tossups_from(step_frame, buzz_frame)
    )
    return Dataset(
        steps=step_frame,
        buzzes=buzz_frame,
        heard=heard,
        tossups=tossups,
        survey=survey_frame(survey_steps),
        roster=roster,
        source={
            "kind": "files",
            "steps": str(files["steps"]) if "steps" in files else None,
            "buzzes": str(files["buzzes"]) if "buzzes" in files else None,
            "description": ", ".join(
                str(files[k]) for k in ("steps", "buzzes", "survey") if k in files
            ),
        },
    )


def _load_record(url: str, *, events: list[str], matches: list[int]) -> Dataset:
    # The record's reader lives with the record I/O; it is imported here only, when a
    # database is asked for (see the module docstring).
    from grace_arena.io.record_io import load_record_data, survey_steps
    from grace_arena.record.db import open_engine, redacted_url

    if events and matches:
        raise ValueError("give match= or event=, not both")
    engine = open_engine(url)
    try:
        data = load_record_data(engine, matches or None, events=events or None)
        answers = survey_steps(engine)
    finally:
        engine.dispose()
    ids = [m.id for m in data.matches]
    described = [f"record {redacted_url(url)}"]
    if data.events:
        described.append(f"event(s) {', '.join(data.events)}")
    described.append(f"matches {', '.join(map(str, ids)) or 'none'}")
    if data.n_pooled:
        described.append(f"{data.n_pooled:,} imported pooled buzzpoints (matches unknown)")
    return Dataset(
        steps=data.steps,
        buzzes=data.buzzes,
        heard=data.heard,
        tossups=data.tossups,
        survey=survey_frame(answers),
        source={
            "kind": "record",
            "db": redacted_url(url),
            "events": data.events,
            "matches": ids,
            "pooled_buzzes": data.n_pooled,
            "warnings": data.warnings,
            "match_buzzes": data.n_match_buzzes,
            # bonuses played in the matches of an event or match selection (None: the whole
            # record, where the models' answers to bonus parts are analysed whatever was played)
            "bonuses_heard": sum(len(m.bonuses) for m in data.matches)
            if (events or matches)
            else None,
            "description": ", ".join(described),
        },
        notes=list(data.warnings),
        bonus_parts=data.bonus_parts,
        choices=data.choices,
        decisions=data.decisions,
        roster=data.roster,
    )
