"""Reading what threshold selection needs from the record and from files."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grace_arena.model.policy import CONFIDENCE_FIELDS
from grace_arena.model.threshold import Trajectory, trajectories_from_steps

__all__ = ["human_curve_from_file", "human_records_from_db", "trajectories_from_db"]


def trajectories_from_db(
    engine: Any,
    model: str,
    *,
    packet_ids: Sequence[str] | None = None,
    confidence: str = "logit",
) -> list[Trajectory]:
    """Every recorded trajectory of ``model`` (optionally only on some packets)."""
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelStepRow, TossupRow

    steps: dict[str, list[Any]] = {}
    n_words: dict[str, int] = {}
    with Session(engine) as session:
        query = select(ModelStepRow).where(ModelStepRow.model == model)
        if packet_ids:
            query = query.where(ModelStepRow.packet_id.in_(list(packet_ids)))  # type: ignore[attr-defined]
        for row in session.exec(query).all():
            steps.setdefault(f"{row.packet_id}/{row.tossup_id}", []).append(row)
        for t in session.exec(select(TossupRow)).all():
            n_words[f"{t.packet_id}/{t.tossup_id}"] = t.n_words
    for qid, rows in steps.items():  # a packet not stored: the last prefix ends the question
        n_words.setdefault(qid, max(r.word_index for r in rows) + 1)
    return trajectories_from_steps(steps, n_words, confidence=CONFIDENCE_FIELDS[confidence])


def human_records_from_db(engine: Any) -> tuple[list[float], int]:
    """Correct human buzz fractions and the number of human player–question records.

    A record is one human team on one tossup started in a match (buzzing or not); a correct
    record is a human buzz ruled correct on a tossup not thrown out.
    """
    from sqlmodel import Session, select

    from grace_arena.record.models import BuzzRow, EventRow, TeamRow

    with Session(engine) as session:
        teams: dict[int, int] = {}
        for t in session.exec(select(TeamRow).where(TeamRow.kind == "human")).all():
            teams[t.match_id] = teams.get(t.match_id, 0) + 1
        started: dict[int, set[str]] = {}
        for ev in session.exec(select(EventRow).where(EventRow.type == "tossup_started")).all():
            started.setdefault(ev.match_id, set()).add(str(ev.payload.get("tossup_id")))
        fractions = [
            float(b.fraction_revealed)
            for b in session.exec(
                select(BuzzRow).where(
                    BuzzRow.player_kind == "human",
                    BuzzRow.ruling == "correct",
                    BuzzRow.thrown_out == False,  # noqa: E712 (SQL expression)
                )
            ).all()
            if b.fraction_revealed is not None
        ]
    n_records = sum(teams.get(m, 0) * len(ids) for m, ids in started.items())
    return fractions, max(n_records, len(fractions))


def human_curve_from_file(path: str | Path) -> np.poly1d:
    """A human buzz curve ``w(x)`` from a file.

    - JSON ``{"coefficients": [c3, c2, c1, c0]}``: the cubic itself (highest power first);
    - JSON ``{"fractions_correct": [...], "n_records": N}``: fitted as from the record;
    - CSV with columns ``fraction,correct``, one row per human player–question record
      (``fraction`` empty when the player did not buzz): fitted.
    """
    from grace_arena.analysis.curves import fit_human_curve

    path = Path(path)
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        fractions = [
            float(r["fraction"])
            for r in rows
            if r.get("fraction") not in (None, "")
            and str(r.get("correct", "")).strip().lower() in ("1", "true", "yes", "+")
        ]
        return fit_human_curve(np.array(fractions), len(rows))
    data = json.loads(path.read_text(encoding="utf-8"))
    if "coefficients" in data:
        return np.poly1d([float(c) for c in data["coefficients"]])
    return fit_human_curve(np.array(data["fractions_correct"], dtype=float), int(data["n_records"]))
