"""Competitors' precomputed outputs as model players: QANTA's leaderboard JSONL and the QANTA
tournament runner's CSVs, read into model steps and bonus answers, and ours written in both.

The files (one model each; tossups and bonuses in separate files):

- runner ``NAME.buzz.csv``: ``question_id, token_position, guess, confidence, buzz, correct``
  (one row per guess; ``token_position`` 0-based; ``buzz`` and ``correct`` 0/1);
- runner ``NAME.bonus.csv``: ``question_id, part_number, guess, confidence, explanation,
  correct`` (``part_number`` 1-based; ``explanation`` may be left out, as in QANTA's brief);
- QANTA JSONL, one question a line: ``{"qid", "run_outputs": [{"token_position", "guess",
  "confidence", "buzz", "correct"}]}`` for tossups, ``{"qid", "part_outputs": [{"number",
  "guess", "confidence", "explanation", "correct"}]}`` for bonuses.

**Token positions.** The runner splits a tossup's text on whitespace (JavaScript's ``\\s``) and
counts every piece as a token, the power mark ``(*)``, a pronunciation guide and a lone dash
included; our word positions (:mod:`grace_arena.core.tokenize`) skip those. The two are matched
by their character offsets in the same text: a token's step is at the last of our words that
starts before the token ends (what has been heard once the token is read; a ``(*)`` token
maps to the word before it), and one of our words is written at the token it starts in.

**Import** checks the whole file before it stores anything: a question id that is not one of
the packet's tossups (or bonuses), a token position past the tossup's end, a part number out of
range, a repeated row, or a value of the wrong type is an :class:`OutputsError` naming them,
and nothing is stored. A row whose ``correct`` is absent (empty cell, missing key, ``null``)
is judged by the core's judge (underscores in a guess read as spaces, as the runner shows
them); a given ``correct`` is kept as it is. The file's own buzz decision is kept in each step
(``extra["buzz"]``): by default an imported model buzzes where its file says
(:class:`~grace_arena.model.policy.BuzzPolicy`, ``own_buzzes``). The confidence is stored in
``confidence_logit`` (the score-based slot, as for the TF-IDF model), so thresholds,
calibration and the analysis read it like any other.

**Round trip.** Our export of an imported model writes back the same rows and values (its token
positions are kept in ``extra["token_position"]``); a file our export wrote is read back and
written again byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from grace_arena.core.packet import Packet
from grace_arena.core.tokenize import Tokenized
from grace_arena.model.base import is_correct

__all__ = [
    "BONUS_COLUMNS",
    "BUZZ_COLUMNS",
    "BonusOutput",
    "ImportStats",
    "Outputs",
    "OutputsError",
    "RosterEntry",
    "TokenMap",
    "TossupOutput",
    "export_outputs",
    "import_outputs",
    "read_outputs",
    "read_roster",
    "runner_token_spans",
    "token_map",
    "weight_class_of",
    "write_outputs",
]

Kind = Literal["tossup", "bonus"]
Format = Literal["runner", "qanta"]

BUZZ_COLUMNS = ("question_id", "token_position", "guess", "confidence", "buzz", "correct")
BONUS_COLUMNS = ("question_id", "part_number", "guess", "confidence", "explanation", "correct")
WEIGHT_CLASSES = ("lightweight", "midweight", "heavyweight")

# JavaScript's \s (ECMAScript WhiteSpace and LineTerminator), which the runner splits on.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_RUNNER_TOKEN = re.compile(f"[^{_JS_SPACE}]+")


class OutputsError(ValueError):
    """A file of outputs that cannot be read or imported; nothing of it was stored."""


@dataclass(frozen=True, slots=True)
class TossupOutput:
    """A model's guess once the runner's token ``token_position`` (0-based) has been read."""

    question_id: str
    token_position: int
    guess: str
    confidence: float | None
    buzz: bool
    correct: bool | None = None  # None: absent from the file, judged on import


@dataclass(frozen=True, slots=True)
class BonusOutput:
    """A model's answer to part ``part_number`` (1-based) of a bonus."""

    question_id: str
    part_number: int
    guess: str
    confidence: float | None
    explanation: str = ""
    correct: bool | None = None


@dataclass(frozen=True, slots=True)
class Outputs:
    """One file's rows: a model's tossup outputs or its bonus outputs, in one format."""

    kind: Kind
    format: Format
    rows: tuple[TossupOutput, ...] | tuple[BonusOutput, ...]
    #: runner bonus CSV only: whether the file has the ``explanation`` column
    explanations: bool = True


# -- token positions --------------------------------------------------------------------------


def runner_token_spans(text: str) -> list[tuple[int, int]]:
    """The character spans of the runner's tokens of ``text`` (``text.split(/\\s+/)``)."""
    return [(m.start(), m.end()) for m in _RUNNER_TOKEN.finditer(text)]


@dataclass(frozen=True, slots=True)
class TokenMap:
    """Between the runner's token positions and our word positions in one tossup."""

    word_of_token: tuple[int, ...]  # the last word heard once the token is read (-1: none yet)
    token_of_word: tuple[int, ...]  # the token a word starts in

    @property
    def n_tokens(self) -> int:
        return len(self.word_of_token)


def token_map(tokens: Tokenized) -> TokenMap:
    """The map for a tossup, from the character offsets of both splits of its text."""
    spans = runner_token_spans(tokens.text)
    word_starts = [w.start for w in tokens.words]
    token_starts = [s for s, _ in spans]
    return TokenMap(
        word_of_token=tuple(bisect_left(word_starts, end) - 1 for _, end in spans),
        token_of_word=tuple(bisect_right(token_starts, s) - 1 for s in word_starts),
    )


# -- reading and writing files -----------------------------------------------------------------


def _bool(value: Any, where: str, name: str, *, optional: bool = False) -> bool | None:
    if optional and (value is None or value == ""):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "true", "yes", "1.0"):
            return True
        if text in ("0", "false", "no", "0.0"):
            return False
    raise OutputsError(f"{where}: {name} {value!r} is not 0/1 or true/false")


def _number(value: Any, where: str, name: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise OutputsError(f"{where}: {name} {value!r} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise OutputsError(f"{where}: {name} {value!r} is not a number") from None
    if not math.isfinite(number):
        raise OutputsError(f"{where}: {name} {value!r} is not a finite number")
    return number


def _int(value: Any, where: str, name: str, *, low: int) -> int:
    if isinstance(value, bool):
        raise OutputsError(f"{where}: {name} {value!r} is not a whole number")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        value = value.strip()
        if re.fullmatch(r"[+-]?\d+", value):
            value = int(value)
    if not isinstance(value, int):
        raise OutputsError(f"{where}: {name} {value!r} is not a whole number")
    if value < low:
        raise OutputsError(f"{where}: {name} {value} is below {low}")
    return value


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _tossup(item: dict[str, Any], qid: Any, where: str) -> TossupOutput:
    if qid is None or qid == "":
        raise OutputsError(f"{where}: no question id")
    return TossupOutput(
        question_id=str(qid),
        token_position=_int(item.get("token_position"), where, "token_position", low=0),
        guess=_text(item.get("guess")),
        confidence=_number(item.get("confidence"), where, "confidence"),
        buzz=bool(_bool(item.get("buzz", 0), where, "buzz")),
        correct=_bool(item.get("correct"), where, "correct", optional=True),
    )


def _bonus(item: dict[str, Any], qid: Any, number: Any, where: str) -> BonusOutput:
    if qid is None or qid == "":
        raise OutputsError(f"{where}: no question id")
    return BonusOutput(
        question_id=str(qid),
        part_number=_int(number, where, "part number", low=1),
        guess=_text(item.get("guess")),
        confidence=_number(item.get("confidence"), where, "confidence"),
        explanation=_text(item.get("explanation")),
        correct=_bool(item.get("correct"), where, "correct", optional=True),
    )


def _read_csv(path: Path, text: str) -> Outputs:
    reader = csv.DictReader(io.StringIO(text))
    columns = [c.strip() for c in reader.fieldnames or []]
    reader.fieldnames = columns
    if "token_position" in columns:
        kind: Kind = "tossup"
        needed = ("question_id", "token_position", "guess", "confidence", "buzz")
    elif "part_number" in columns:
        kind = "bonus"
        needed = ("question_id", "part_number", "guess", "confidence")
    else:
        raise OutputsError(
            f"{path}: not a runner file: its header has neither token_position (a .buzz.csv) "
            f"nor part_number (a .bonus.csv): {', '.join(columns) or 'empty'}"
        )
    missing = [c for c in needed if c not in columns]
    if missing:
        raise OutputsError(f"{path}: the header lacks {', '.join(missing)}")
    rows: list[Any] = []
    for line, raw in enumerate(reader, start=2):
        item = {k: (v.strip() if isinstance(v, str) else v) for k, v in raw.items() if k}
        if not any(item.values()):
            continue  # the runner skips empty lines too
        where = f"{path.name} line {line}"
        if kind == "tossup":
            rows.append(_tossup(item, item.get("question_id"), where))
        else:
            rows.append(_bonus(item, item.get("question_id"), item.get("part_number"), where))
    return Outputs(kind, "runner", tuple(rows), explanations="explanation" in columns)


def _read_jsonl(path: Path, text: str) -> Outputs:
    kind: Kind | None = None
    rows: list[Any] = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path.name} line {line}"
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise OutputsError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise OutputsError(f"{where}: expected an object with qid and run_outputs")
        here: Kind = "tossup" if "run_outputs" in record else "bonus"
        if "run_outputs" not in record and "part_outputs" not in record:
            raise OutputsError(f"{where}: neither run_outputs (tossups) nor part_outputs (bonuses)")
        if kind is not None and here != kind:
            raise OutputsError(f"{where}: tossups and bonuses mixed in one file")
        kind = here
        outputs = record.get("run_outputs" if kind == "tossup" else "part_outputs")
        if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
            raise OutputsError(f"{where}: its outputs are not a list of objects")
        qid = record.get("qid")
        for o in outputs:
            if kind == "tossup":
                rows.append(_tossup(o, qid, where))
            else:
                rows.append(_bonus(o, qid, o.get("number"), where))
    if kind is None:
        raise OutputsError(f"{path}: no outputs in the file")
    return Outputs(kind, "qanta", tuple(rows))


def read_outputs(path: str | Path) -> Outputs:
    """A file of outputs: a runner CSV (``.csv``) or QANTA JSONL (``.jsonl``), tossups or
    bonuses (told by the header or the keys). Raises :class:`OutputsError` saying what is
    wrong and where."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputsError(f"cannot read {path}: {exc}") from None
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path, text)
    if suffix == ".jsonl":
        return _read_jsonl(path, text)
    raise OutputsError(f"{path}: expected a runner .csv or a QANTA .jsonl file")


def _cell(value: float | bool | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return repr(float(value))


def write_outputs(outputs: Outputs, path: str | Path) -> None:
    """Write ``outputs`` in its format (runner CSV or QANTA JSONL)."""
    path = Path(path)
    buffer = io.StringIO()
    if outputs.format == "qanta":
        by_question: dict[str, list[dict[str, Any]]] = {}
        for row in outputs.rows:
            if isinstance(row, TossupOutput):
                item = {
                    "token_position": row.token_position,
                    "guess": row.guess,
                    "confidence": row.confidence,
                    "buzz": row.buzz,
                    "correct": row.correct,
                }
            else:
                item = {
                    "number": row.part_number,
                    "guess": row.guess,
                    "confidence": row.confidence,
                    "explanation": row.explanation,
                    "correct": row.correct,
                }
            by_question.setdefault(row.question_id, []).append(item)
        key = "run_outputs" if outputs.kind == "tossup" else "part_outputs"
        for qid, items in by_question.items():
            buffer.write(json.dumps({"qid": qid, key: items}, ensure_ascii=False) + "\n")
    else:
        writer = csv.writer(buffer, lineterminator="\n")
        if outputs.kind == "tossup":
            writer.writerow(BUZZ_COLUMNS)
            for r in outputs.rows:
                assert isinstance(r, TossupOutput)
                cells = [r.question_id, r.token_position, r.guess, _cell(r.confidence)]
                writer.writerow([*cells, _cell(r.buzz), _cell(r.correct)])
        else:
            columns = [c for c in BONUS_COLUMNS if outputs.explanations or c != "explanation"]
            writer.writerow(columns)
            for r in outputs.rows:
                assert isinstance(r, BonusOutput)
                cells = [r.question_id, r.part_number, r.guess, _cell(r.confidence)]
                cells += [r.explanation] if outputs.explanations else []
                writer.writerow([*cells, _cell(r.correct)])
    path.write_text(buffer.getvalue(), encoding="utf-8")


# -- the roster ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RosterEntry:
    """One AI of a runner roster (``ai_roster.csv``): its name and its two files' names."""

    name: str
    tossup_model: str  # the tossup file is <folder>/<tossup_model>.buzz.csv (or .jsonl)
    bonus_model: str  # the bonus file is <folder>/<bonus_model>.bonus.csv (or .jsonl)
    weight_class: str | None = None
    player_id: str = ""

    def files(self, folder: Path) -> list[Path]:
        """The entry's output files in ``folder``: each model's CSV, else its JSONL."""
        found = []
        for stem, kind in ((self.tossup_model, "buzz"), (self.bonus_model, "bonus")):
            if not stem:
                continue
            for candidate in (f"{stem}.{kind}.csv", f"{stem}.{kind}.jsonl", f"{stem}.jsonl"):
                if (folder / candidate).is_file():
                    found.append(folder / candidate)
                    break
            else:
                raise OutputsError(
                    f"{self.name}: no {stem}.{kind}.csv or {stem}.{kind}.jsonl in {folder}"
                )
        return found


def read_roster(path: str | Path) -> list[RosterEntry]:
    """The AIs of a roster CSV in the runner's layout (``player_id, name, type,
    tossup_model, bonus_model, weight_class``, …; rows whose ``type`` is not ``ai`` are
    humans and skipped). A weight class other than lightweight / midweight / heavyweight, a
    row with no model, or two AIs of one name is an :class:`OutputsError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise OutputsError(f"cannot read {path}: {exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    reader.fieldnames = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in ("name", "tossup_model", "bonus_model") if c not in reader.fieldnames]
    if missing:
        raise OutputsError(f"{path}: the header lacks {', '.join(missing)}")
    entries: list[RosterEntry] = []
    for line, raw in enumerate(reader, start=2):
        item = {k: (v or "").strip() for k, v in raw.items() if k}
        if item.get("type", "ai").lower() not in ("ai", ""):
            continue
        where = f"{path.name} line {line}"
        name = item.get("name", "")
        if not name:
            raise OutputsError(f"{where}: an AI with no name")
        if not (item.get("tossup_model") or item.get("bonus_model")):
            raise OutputsError(f"{where}: {name} has neither a tossup_model nor a bonus_model")
        weight = item.get("weight_class", "").lower() or None
        if weight is not None and weight not in WEIGHT_CLASSES:
            raise OutputsError(
                f"{where}: weight class {weight!r} of {name} is not one of "
                f"{', '.join(WEIGHT_CLASSES)}"
            )
        if any(e.name == name for e in entries):
            raise OutputsError(f"{where}: two AIs called {name!r}")
        entries.append(
            RosterEntry(
                name=name,
                tossup_model=item.get("tossup_model", ""),
                bonus_model=item.get("bonus_model", ""),
                weight_class=weight,
                player_id=item.get("player_id", ""),
            )
        )
    if not entries:
        raise OutputsError(f"{path}: no AI in the roster (type ai)")
    return entries


# -- into the record and out of it -------------------------------------------------------------


@dataclass
class ImportStats:
    steps: int = 0
    parts: int = 0
    tossups: int = 0
    bonuses: int = 0
    judged: int = 0  # rows with no correct in the file, judged here
    replaced: int = 0  # rows of the model on the packet removed first (replace=True)
    files: list[str] = field(default_factory=list)


def _judged(guess: str, answer: str, given: bool | None) -> tuple[bool, str | None]:
    if given is not None:
        return given, None
    return is_correct(guess.replace("_", " ").strip(), answer)


def _few(items: Iterable[str], limit: int = 8) -> str:
    items = list(dict.fromkeys(items))
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _rows_of(
    packet: Packet,
    model: str,
    outputs: Outputs,
    source: str,
    weight_class: str | None,
    stats: ImportStats,
) -> list[Any]:
    """The record's rows of one file, after checking every row against the packet."""
    from grace_arena.record.models import ModelBonusPartRow, ModelStepRow

    imported = {"format": outputs.format, "file": source}
    if weight_class is not None:
        imported["weight_class"] = weight_class
    if outputs.kind == "tossup":
        known = {t.id: t for t in packet.tossups}
        what = "tossup"
    else:
        known = {b.id: b for b in packet.bonuses}  # type: ignore[misc]
        what = "bonus"
    unknown = [r.question_id for r in outputs.rows if r.question_id not in known]
    if unknown:
        raise OutputsError(
            f"{source}: {len(set(unknown))} question ids are not {what}s of packet "
            f"{packet.packet.id!r}: {_few(unknown)} (its {what}s: {_few(known)}); "
            "nothing was imported"
        )
    rows: list[Any] = []
    if outputs.kind == "tossup":
        by_question: dict[str, list[TossupOutput]] = {}
        for r in outputs.rows:
            assert isinstance(r, TossupOutput)
            by_question.setdefault(r.question_id, []).append(r)
        for qid, items in by_question.items():
            tossup = packet.tossup(qid)
            tokens = tossup.tokens()
            tmap = token_map(tokens)
            positions = [r.token_position for r in items]
            again = sorted({p for p in positions if positions.count(p) > 1})
            if again:
                raise OutputsError(
                    f"{source}: tossup {qid!r} has two rows at token position(s) "
                    f"{', '.join(map(str, again))}; nothing was imported"
                )
            beyond = sorted(p for p in positions if p >= tmap.n_tokens)
            if beyond:
                raise OutputsError(
                    f"{source}: tossup {qid!r} has {tmap.n_tokens} tokens (0–"
                    f"{tmap.n_tokens - 1}), but rows at token position(s) "
                    f"{', '.join(map(str, beyond))}: is it the same question? nothing was imported"
                )
            for step, r in enumerate(sorted(items, key=lambda r: r.token_position)):
                correct, directive = _judged(r.guess, tossup.answer, r.correct)
                stats.judged += r.correct is None
                rows.append(
                    ModelStepRow(
                        model=model,
                        packet_id=packet.packet.id,
                        tossup_id=qid,
                        step=step,
                        word_index=max(0, tmap.word_of_token[r.token_position]),
                        guess=r.guess,
                        confidence_logit=r.confidence,
                        correct=correct,
                        judge_directive=directive,
                        would_buzz=r.buzz,
                        extra={
                            "imported": imported,
                            "token_position": r.token_position,
                            "buzz": r.buzz,
                        },
                    )
                )
        stats.steps += len(outputs.rows)
        stats.tossups += len(by_question)
        return rows
    seen: set[tuple[str, int]] = set()
    for r in outputs.rows:
        assert isinstance(r, BonusOutput)
        bonus = packet.bonus(r.question_id)
        if r.part_number > len(bonus.parts):
            raise OutputsError(
                f"{source}: bonus {r.question_id!r} has {len(bonus.parts)} parts, not part "
                f"{r.part_number}; nothing was imported"
            )
        if (r.question_id, r.part_number) in seen:
            raise OutputsError(
                f"{source}: bonus {r.question_id!r} part {r.part_number} is given twice; "
                "nothing was imported"
            )
        seen.add((r.question_id, r.part_number))
        correct, directive = _judged(r.guess, bonus.parts[r.part_number - 1].answer, r.correct)
        stats.judged += r.correct is None
        rows.append(
            ModelBonusPartRow(
                model=model,
                packet_id=packet.packet.id,
                bonus_id=r.question_id,
                part=r.part_number - 1,
                guess=r.guess,
                confidence_logit=r.confidence,
                correct=correct,
                judge_directive=directive,
                confident=r.confidence is not None and r.confidence >= 0.5,
                extra={"imported": imported, "explanation": r.explanation},
            )
        )
    stats.parts += len(outputs.rows)
    stats.bonuses += len({r.question_id for r in outputs.rows})
    return rows


def import_outputs(
    engine: Any,
    packet: Packet,
    model: str,
    files: Sequence[tuple[str, Outputs]],
    *,
    weight_class: str | None = None,
    replace: bool = False,
) -> ImportStats:
    """Store ``files`` (each ``(name, outputs)``) as ``model``'s steps and bonus answers on
    ``packet``, all in one transaction: a file that does not fit the packet raises
    :class:`OutputsError` and nothing is stored. A model that already has rows on the packet
    is refused, unless ``replace`` (its rows there are then replaced in the same
    transaction)."""
    from sqlmodel import Session, delete, select

    from grace_arena.record.models import ModelBonusPartRow, ModelStepRow
    from grace_arena.record.store import MatchStore

    if weight_class is not None and weight_class not in WEIGHT_CLASSES:
        raise OutputsError(
            f"weight class {weight_class!r} is not one of {', '.join(WEIGHT_CLASSES)}"
        )
    stats = ImportStats(files=[name for name, _ in files])
    kinds = [o.kind for _, o in files]
    for kind in ("tossup", "bonus"):
        if kinds.count(kind) > 1:
            raise OutputsError(f"two {kind} files for one model: give one of each at most")
    rows = [
        row
        for name, outputs in files
        for row in _rows_of(packet, model, outputs, name, weight_class, stats)
    ]
    MatchStore(engine).save_packet(packet, source=packet.path)
    tables = (ModelStepRow, ModelBonusPartRow)
    with Session(engine) as session:
        have = sum(
            len(
                session.exec(
                    select(t.id).where(t.model == model, t.packet_id == packet.packet.id)
                ).all()
            )
            for t in tables
        )
        if have and not replace:
            raise OutputsError(
                f"model {model!r} already has {have} rows on packet {packet.packet.id!r}: "
                "give another name, or replace them (--replace); nothing was imported"
            )
        for table in tables:
            session.exec(  # type: ignore[call-overload]
                delete(table).where(table.model == model, table.packet_id == packet.packet.id)
            )
        stats.replaced = have
        session.add_all(rows)
        session.commit()
    return stats


def export_outputs(
    engine: Any, packet: Packet, model: str, format: Format, *, policy: Any = None
) -> tuple[Outputs | None, Outputs | None]:
    """``model``'s steps and bonus answers on ``packet`` as files of ``format``: ``(tossups,
    bonuses)``, None where it has none. An imported step keeps its token position,
    confidence and buzz; one of ours is written at the token its last word starts in, with
    ``policy``'s confidence and its buzz decision (``would_buzz``)."""
    from grace_arena.model.policy import BuzzPolicy, load_steps
    from grace_arena.record.models import ModelBonusPartRow

    policy = policy or BuzzPolicy()
    steps = load_steps(engine, model, packet.packet.id)
    tossup_rows: list[TossupOutput] = []
    for tossup in packet.tossups:
        tmap: TokenMap | None = None
        for row in steps.get(tossup.id, []):
            extra = row.extra or {}
            if "token_position" in extra:
                position = int(extra["token_position"])
                confidence = row.confidence_logit
            else:
                tmap = tmap or token_map(tossup.tokens())
                position = tmap.token_of_word[row.word_index]
                confidence = policy.confidence_of(row)
            tossup_rows.append(
                TossupOutput(
                    question_id=tossup.id,
                    token_position=position,
                    guess=row.guess or "",
                    confidence=confidence,
                    buzz=policy.would_buzz(row),
                    correct=row.correct,
                )
            )
    from sqlmodel import Session, select

    parts: dict[tuple[str, int], Any] = {}
    with Session(engine) as session:
        for row in session.exec(
            select(ModelBonusPartRow).where(
                ModelBonusPartRow.model == model,
                ModelBonusPartRow.packet_id == packet.packet.id,
            )
        ).all():
            parts[(row.bonus_id, row.part)] = row
    bonus_rows: list[BonusOutput] = []
    for bonus in packet.bonuses:
        for index in range(len(bonus.parts)):
            part = parts.get((bonus.id, index))
            if part is None:
                continue
            extra = part.extra or {}
            bonus_rows.append(
                BonusOutput(
                    question_id=bonus.id,
                    part_number=index + 1,
                    guess=part.guess or "",
                    confidence=part.confidence_logit
                    if "imported" in extra
                    else policy.confidence_of(part),
                    explanation=str(extra.get("explanation", "")),
                    correct=part.correct,
                )
            )
    return (
        Outputs("tossup", format, tuple(tossup_rows)) if tossup_rows else None,
        Outputs("bonus", format, tuple(bonus_rows)) if bonus_rows else None,
    )


def weight_class_of(engine: Any, model: str, packet_id: str) -> str | None:
    """The weight class an imported model was given (``--weight-class`` or its roster's), on
    a packet; None when it has none or is not imported."""
    from sqlmodel import Session, select

    from grace_arena.record.models import ModelBonusPartRow, ModelStepRow

    with Session(engine) as session:
        for table in (ModelStepRow, ModelBonusPartRow):
            extra = session.exec(
                select(table.extra)
                .where(table.model == model, table.packet_id == packet_id)
                .limit(1)
            ).first()
            if extra:
                return (extra.get("imported") or {}).get("weight_class")
    return None
