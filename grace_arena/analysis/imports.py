"""Bringing public data into the record: GRACE buzzpoints and QANTA questions.

**GRACE** (``grace-arena import grace FILE``): the public buzzpoint JSON is a list of tossups
``{tossup_index, category, question, answer, question_buzzpoints, position}`` where
``position`` lists ``{"<word index>": "[H3, +]"}`` (H = human team, M = model, ``+``/``-`` =
correct / incorrect) and the word index counts the whitespace-separated words of
``question``. One file becomes one packet (its tossups) and one match played through the real
match engine: every team code becomes a team (``M…`` a model team), every buzz a buzz at the
canonical word it falls on, ruled as the file says. GRACE counts power marks and
pronunciation guides as words and we do not (:mod:`grace_arena.core.tokenize`), so positions
are mapped with :func:`grace_word_maps`; the file's own word indices, texts and ids are kept
in the match's ``source_meta`` so that exporting gives the file back exactly.

**QANTA** (``grace-arena import qanta FILE``): questions (JSON, optionally gzipped) become
packets of our format in the record, clues taken from QANTA's sentence spans, and optionally
a corpus file (JSON lines ``{id, page, answer, category, text}``) for the guessers.

Importing the same file twice changes nothing: a GRACE file is known by its SHA-256, a packet
by its content.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.commands import Buzz, EndMatch, Join, Reveal, Rule, StartTossup, TimeUp
from grace_arena.core.config import ModelBuzz, ScoringRules, TeamKind, TeamSpec
from grace_arena.core.events import Ruling
from grace_arena.core.packet import Packet, PacketMeta, Tossup
from grace_arena.core.phases import HAS_FLOOR, Phase
from grace_arena.core.specs import match_config
from grace_arena.core.tokenize import tokenize
from grace_arena.record.models import MatchRow
from grace_arena.record.store import MatchStore

__all__ = [
    "GraceBuzz",
    "ImportResult",
    "grace_category",
    "grace_word_maps",
    "import_grace",
    "import_qanta",
    "parse_grace_position",
    "qanta_category",
]

_POSITION_RE = re.compile(r"^\[\s*([A-Za-z]+\d*)\s*,\s*([+-])\s*\]$")
_ID_BAD = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class ImportResult:
    """What an import did: new things stored, and what was already there or left out."""

    packets: list[str] = field(default_factory=list)
    matches: list[int] = field(default_factory=list)
    tossups: int = 0
    buzzes: int = 0
    skipped: list[str] = field(default_factory=list)  # already imported
    warnings: list[str] = field(default_factory=list)


def _identifier(value: Any, fallback: str) -> str:
    text = _ID_BAD.sub("-", str(value)).strip("-.")
    return text or fallback


# ---------------------------------------------------------------------------------------
# Categories
# ---------------------------------------------------------------------------------------

_CATEGORY_RULES: tuple[tuple[str, str], ...] = (
    ("myth", "Mythology"),
    ("fine arts", "Fine Arts"),
    ("lit", "Literature"),
    ("hist", "History"),
    ("social", "Social Science"),
    ("econ", "Social Science"),
    ("psych", "Social Science"),
    ("linguist", "Social Science"),
    ("anthro", "Social Science"),
    ("sociol", "Social Science"),
    ("relig", "Religion"),
    ("philos", "Philosophy"),
    ("geo", "Geography"),
    ("current", "Current Events"),
    ("ce", "Current Events"),
    ("trash", "Pop Culture"),
    ("pop", "Pop Culture"),
    ("sci", "Science"),
    ("chem", "Science"),
    ("bio", "Science"),
    ("physics", "Science"),
    ("math", "Science"),
    ("astro", "Science"),
    ("computer", "Science"),
    ("paint", "Fine Arts"),
    ("sculpt", "Fine Arts"),
    ("music", "Fine Arts"),
    ("opera", "Fine Arts"),
    ("art", "Fine Arts"),
    ("architect", "Fine Arts"),
    ("film", "Fine Arts"),
)


def grace_category(label: str | None) -> str:
    """Our category (GRACE appendix B.1's ACF list) for a GRACE / QANTA category label.

    >>> grace_category("Euro Lit"), grace_category("Myth/Other Academic"), grace_category("Geo/CE")
    ('Literature', 'Mythology', 'Geography')
    """
    words = re.split(r"[^a-z]+", (label or "").lower())
    for key, category in _CATEGORY_RULES:
        if any(w.startswith(key) for w in words if w):
            return category
    return "Other Academic"


def qanta_category(category: str | None) -> str:
    """QANTA's top-level categories onto ours (``Trash`` is pop culture)."""
    return grace_category(category)


# ---------------------------------------------------------------------------------------
# GRACE positions
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraceBuzz:
    """One entry of a GRACE ``position`` list."""

    word_index: int  # GRACE's: whitespace-separated words of ``question``
    code: str  # team code, e.g. "H3" or "M1"
    correct: bool

    @property
    def is_model(self) -> bool:
        return self.code.upper().startswith("M")

    def as_position(self) -> dict[str, str]:
        return {str(self.word_index): f"[{self.code}, {'+' if self.correct else '-'}]"}


def parse_grace_position(entry: dict[str, str]) -> GraceBuzz:
    """``{"17": "[H9, -]"}`` → ``GraceBuzz(17, "H9", False)``; ``ValueError`` if malformed."""
    if not isinstance(entry, dict) or len(entry) != 1:
        raise ValueError(f"a position must be a one-key object, got {entry!r}")
    ((key, value),) = entry.items()
    m = _POSITION_RE.match(str(value).strip())
    if not m or not str(key).strip().lstrip("-").isdigit():
        raise ValueError(f"a position must look like {{'17': '[H9, -]'}}, got {entry!r}")
    return GraceBuzz(int(key), m.group(1), m.group(2) == "+")


def grace_word_maps(text: str) -> tuple[list[int], list[int]]:
    """Between GRACE's word indices (whitespace tokens of ``text``) and ours.

    Returns ``(to_ours, to_grace)``: ``to_ours[g]`` is the canonical word heard by the time
    GRACE word ``g`` is read (a marker token such as ``(*)`` maps to the word before it, or 0
    at the very start); ``to_grace[w]`` is the whitespace token holding canonical word ``w``.
    ``to_ours[to_grace[w]] == w`` for every canonical word.

    >>> grace_word_maps("this (*) book")
    ([0, 0, 1], [0, 2])
    """
    tokens = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    words = tokenize(text).words
    to_grace = []
    t = 0
    for w in words:
        while t + 1 < len(tokens) and tokens[t][1] <= w.start:
            t += 1
        to_grace.append(t)
    to_ours = []
    w = -1
    for _start, end in tokens:
        while w + 1 < len(words) and words[w + 1].start < end:
            w += 1
        to_ours.append(max(w, 0))
    return to_ours, to_grace


# ---------------------------------------------------------------------------------------
# GRACE import
# ---------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def _grace_tossup(entry: dict[str, Any], index: int, file: str) -> Tossup:
    tossup_id = _identifier(entry.get("tossup_index"), f"t{index + 1}")
    label = entry.get("category")
    data = {
        "id": tossup_id,
        "category": grace_category(label),
        "subcategory": str(label) if label else None,
        "text": entry["question"],
        "answer": entry.get("answer") or "(no answer line)",
    }
    try:
        return Tossup.model_validate(data)
    except ValidationError:
        # an answer line our checker rejects (unbalanced brackets...): keep it readable
        data["answer"] = re.sub(r"[<>\[\]{}()]", " ", str(data["answer"])).strip() or "?"
        try:
            return Tossup.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"{file}: tossup #{index + 1} ({tossup_id}): {exc}") from None


def import_grace(engine: Engine, path: str | Path) -> ImportResult:
    """Import one GRACE buzzpoint file: its packet and one match of its buzzes."""
    path = Path(path)
    result = ImportResult()
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    with Session(engine) as session:
        known = session.exec(
            select(MatchRow).where(MatchRow.source == "grace", MatchRow.source_key == digest)
        ).first()
    if known is not None:
        result.skipped.append(f"{path}: already imported as match {known.id}")
        return result
    data = _read_json(path)
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ValueError(f"{path}: not GRACE buzzpoints (expected a list of tossup objects)")
    if not data:
        raise ValueError(f"{path}: no tossups")
    for i, entry in enumerate(data):
        if "question" not in entry:
            raise ValueError(f"{path}: tossup #{i + 1} has no 'question'")

    tossups = [_grace_tossup(e, i, str(path)) for i, e in enumerate(data)]
    seen: dict[str, int] = {}
    for i, t in enumerate(tossups):  # make ids unique
        if t.id in seen:
            tossups[i] = t.model_copy(update={"id": f"{t.id}-{i + 1}"})
        seen[tossups[i].id] = i
    packet_id = _identifier(path.name.split(".")[0], "grace")
    packet = Packet(
        format="grace-arena-packet/1",
        packet=PacketMeta(
            id=packet_id,
            title=f"GRACE buzzpoints: {path.name}",
            source=path.name,
            license="CC BY 4.0",
            description="Imported from GRACE's public buzzpoint data.",
        ),
        tossups=tossups,
    )
    store = MatchStore(engine)
    store.save_packet(packet, source=path)
    result.packets.append(packet_id)
    result.tossups = len(tossups)

    # every team code in the file, in order of first appearance
    buzzes_by_tossup: dict[str, list[tuple[GraceBuzz, int]]] = {}
    maps: dict[str, tuple[list[int], list[int]]] = {}
    codes: dict[str, bool] = {}
    for entry, tossup in zip(data, tossups, strict=True):
        to_ours, _ = maps.setdefault(tossup.id, grace_word_maps(tossup.text))
        found = []
        for raw_pos in entry.get("position") or []:
            try:
                gb = parse_grace_position(raw_pos)
            except ValueError as exc:
                result.warnings.append(f"{tossup.id}: {exc}; skipped")
                continue
            codes.setdefault(gb.code, gb.is_model)
            ours = to_ours[min(max(gb.word_index, 0), len(to_ours) - 1)]
            found.append((gb, ours))
        buzzes_by_tossup[tossup.id] = found

    model_buzzes: dict[str, dict[str, ModelBuzz]] = {c: {} for c, m in codes.items() if m}
    for tossup_id, found in buzzes_by_tossup.items():
        for gb, ours in found:
            if gb.is_model and tossup_id not in model_buzzes[gb.code]:
                model_buzzes[gb.code][tossup_id] = ModelBuzz(word_index=ours, guess="")
    teams = [
        TeamSpec(id=code, name=code, kind=TeamKind.MODEL, model=code, buzzes=model_buzzes[code])
        if is_model
        else TeamSpec(id=code, name=code)
        for code, is_model in codes.items()
    ]
    if not teams:  # a file without buzzes still becomes a match (every tossup dead)
        teams = [TeamSpec(id="H1", name="H1")]
    config = match_config(
        packet,
        teams,
        rules=ScoringRules(answer_time=None, buzz_window=0.0),
        title=f"GRACE import: {path.name}",
    )
    now = time.time()
    rm = store.create(config, now=now)
    for team in teams:
        if team.kind is TeamKind.HUMAN:
            rm.handle(Join(team=team.id, player=team.id, name=team.id), now=now)

    # buzz id -> [the file's word index, place in the file's position list]
    grace_index: dict[str, list[int]] = {}
    for tossup in tossups:
        # the engine lets a model buzz the moment its word is read: models first on a tie
        found = sorted(
            enumerate(buzzes_by_tossup[tossup.id]), key=lambda b: (b[1][1], not b[1][0].is_model)
        )
        rm.handle(StartTossup(tossup_id=tossup.id), now=now)
        for order, (gb, ours) in found:
            label = (
                f"{tossup.id}: [{gb.code}, {'+' if gb.correct else '-'}] at word {gb.word_index}"
            )
            floor = rm.match.game.floor
            if floor is None or floor.team != gb.code:
                if rm.match.phase not in (Phase.READING, Phase.AWAITING):
                    result.warnings.append(f"{label} comes after the tossup ended; skipped")
                    continue
                if gb.code in rm.match.game.locked_out:
                    result.warnings.append(f"{label}: the team already answered; skipped")
                    continue
                if ours > rm.match.game.position:
                    rm.handle(Reveal(to=ours), now=now)
                if not gb.is_model and rm.match.phase not in HAS_FLOOR:
                    rm.handle(Buzz(team=gb.code, player=gb.code, word_index=ours), now=now)
                floor = rm.match.game.floor
                if floor is None or floor.team != gb.code:
                    raise RuntimeError(f"{path}: {label} could not be replayed")
            grace_index[str(floor.buzz_id)] = [gb.word_index, order]
            rm.handle(Rule(ruling=Ruling.CORRECT if gb.correct else Ruling.INCORRECT), now=now)
            result.buzzes += 1
        if rm.match.phase is Phase.READING:
            spec = rm.match.current_tossup
            assert spec is not None
            rm.handle(Reveal(to=spec.n_words), now=now)
        if rm.match.phase in HAS_FLOOR:
            raise RuntimeError(f"{path}: {tossup.id}: a model buzz was left without a ruling")
        if rm.match.phase is Phase.AWAITING:
            rm.handle(TimeUp(), now=now)
    rm.handle(EndMatch(), now=now)

    source_meta = {
        "format": "grace",
        "file": path.name,
        "team_codes": {code: code for code in codes},
        "tossups": {
            t.id: {
                "tossup_index": e.get("tossup_index"),
                "category": e.get("category"),
                "question": e.get("question"),
                "answer": e.get("answer"),
            }
            for e, t in zip(data, tossups, strict=True)
        },
        "grace_word_index": grace_index,
    }
    with Session(engine) as session:
        row = session.get(MatchRow, rm.id)
        assert row is not None
        row.source = "grace"
        row.source_key = digest
        row.source_meta = source_meta
        session.add(row)
        session.commit()
    result.matches.append(rm.id)
    return result


# ---------------------------------------------------------------------------------------
# QANTA import
# ---------------------------------------------------------------------------------------


def _qanta_questions(data: Any, path: Path) -> list[dict[str, Any]]:
    questions = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(questions, list) or not all(isinstance(q, dict) for q in questions):
        raise ValueError(f"{path}: not QANTA questions (expected a list or {{'questions': [...]}})")
    return questions


def _qanta_clues(text: str, spans: Sequence[Sequence[int]] | None) -> list[str] | None:
    """QANTA's sentence spans as clues; spans without a word join the clue before them."""
    if not spans:
        return None
    clues: list[str] = []
    for span in spans:
        if len(span) != 2:
            return None
        piece = " ".join(text[int(span[0]) : int(span[1])].split())
        if not piece:
            continue
        if tokenize(piece).words or not clues:
            clues.append(piece)
        else:
            clues[-1] = f"{clues[-1]} {piece}"
    if not clues or not tokenize(clues[0]).words:
        return None
    return clues


def _qanta_tossup(q: dict[str, Any], index: int) -> tuple[Tossup, str | None]:
    """A tossup from a QANTA question, and a note when something had to give."""
    qid = q.get("qanta_id", index)
    text = str(q.get("text") or "")
    page = str(q.get("page") or "").replace("_", " ").strip()
    data: dict[str, Any] = {
        "id": _identifier(f"qanta-{qid}", f"qanta-{index}"),
        "category": qanta_category(q.get("category")),
        "subcategory": q.get("subcategory") or None,
        "source": " ".join(str(x) for x in (q.get("tournament"), q.get("year")) if x) or None,
    }
    answer = str(q.get("answer") or page or "?")
    clues = _qanta_clues(text, q.get("tokenizations"))
    bodies = [("clues", {"clues": clues})] if clues else []
    bodies.append(("text", {"text": text}))
    last: Exception | None = None
    for how, body in bodies:
        for line in dict.fromkeys((answer, page or "?")):
            try:
                tossup = Tossup.model_validate({**data, **body, "answer": line})
            except ValidationError as exc:
                last = exc
                continue
            notes = []
            if line != answer:
                notes.append(f"answer line {answer!r} is malformed; the page title stands in")
            if clues and how == "text":
                notes.append("its sentence spans did not make clues; split into sentences")
            note = f"QANTA question {qid}: " + "; ".join(notes) if notes else None
            return tossup, note
    raise ValueError(f"QANTA question {qid}: {last}")


def import_qanta(
    engine: Engine | None,
    path: str | Path,
    *,
    packet_size: int = 20,
    limit: int | None = None,
    corpus_out: str | Path | None = None,
) -> ImportResult:
    """Import QANTA questions as packets of ``packet_size`` tossups (ids
    ``qanta-<file>-<n>``) into the record, and/or write them as a corpus file.

    Questions that cannot be made into a valid tossup are left out with a warning.
    """
    if packet_size < 1:
        raise ValueError(f"packet_size must be at least 1, got {packet_size}")
    path = Path(path)
    questions = _qanta_questions(_read_json(path), path)
    if limit is not None:
        questions = questions[:limit]
    result = ImportResult()
    tossups: list[Tossup] = []
    for i, q in enumerate(questions):
        try:
            tossup, note = _qanta_tossup(q, i)
        except ValueError as exc:
            result.warnings.append(f"{exc}; left out")
            continue
        tossups.append(tossup)
        if note:
            result.warnings.append(note)
    seen: set[str] = set()
    unique = []
    for t in tossups:
        if t.id not in seen:
            seen.add(t.id)
            unique.append(t)
    tossups = unique
    stem = _identifier(path.name.split(".")[0], "qanta")
    if corpus_out is not None:
        _write_corpus(Path(corpus_out), questions, tossups)
    if engine is None:
        return result
    store = MatchStore(engine)
    for n, start in enumerate(range(0, len(tossups), packet_size), start=1):
        chunk = tossups[start : start + packet_size]
        packet_id = f"qanta-{stem}-{n:03d}" if len(tossups) > packet_size else f"qanta-{stem}"
        packet = Packet(
            format="grace-arena-packet/1",
            packet=PacketMeta(
                id=packet_id,
                title=f"QANTA {stem} #{n}",
                source=path.name,
                description="Imported from the QANTA dataset.",
            ),
            tossups=chunk,
        )
        store.save_packet(packet)
        result.packets.append(packet_id)
        result.tossups += len(chunk)
    return result


def _write_corpus(out: Path, questions: Iterable[dict[str, Any]], tossups: list[Tossup]) -> None:
    by_id = {t.id: t for t in tossups}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for i, q in enumerate(questions):
            tossup = by_id.get(_identifier(f"qanta-{q.get('qanta_id', i)}", f"qanta-{i}"))
            if tossup is None:
                continue
            entry = {
                "id": tossup.id,
                "page": str(q.get("page") or "").replace("_", " ") or None,
                "answer": q.get("answer"),
                "category": tossup.category,
                "text": tossup.text,
            }
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
