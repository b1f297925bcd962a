"""Bringing public data into the record: GRACE buzzpoints and QANTA questions.

**GRACE** (``grace-arena import grace FILE... --event NAME``): the public buzzpoint JSON is a
list of tossups ``{tossup_index, category, question, answer, question_buzzpoints, position}``
where ``position`` lists ``{"<word index>": "[H3, +]"}`` (H = human team, M = model, ``+``/``-``
= correct / incorrect) and the word index counts the whitespace-separated words of
``question``. The buzzpoints of a tossup are pooled over every room that played it (a dozen
teams, several correct, several on one word), so they are not replayed through one match's
rules: each file becomes a packet and each buzzpoint a pooled buzz of the event, its team
registered in the event. GRACE counts power marks and pronunciation guides as words and we
do not (:mod:`grace_arena.core.tokenize`), so positions are mapped with
:func:`grace_word_maps`; the file's own word indices, order, texts and ids are kept so that
exporting gives the file back exactly.

**QANTA** (``grace-arena import qanta FILE``): questions (JSON, optionally gzipped) become
packets of our format in the record, clues taken from QANTA's sentence spans, and optionally
a corpus file (JSON lines ``{id, page, answer, category, text}``) for the guessers.

Importing the same file twice changes nothing: a GRACE file is known (per event) by its
SHA-256, a packet by its content.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.packet import Packet, PacketMeta, Tossup
from grace_arena.core.tokenize import Tokenized, tokenize
from grace_arena.record.store import MatchStore

__all__ = [
    "GraceBuzz",
    "GraceFile",
    "ImportResult",
    "grace_category",
    "grace_word_maps",
    "import_grace",
    "import_qanta",
    "parse_grace_position",
    "qanta_category",
    "read_grace_file",
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
    event: str | None = None  # the event imported into
    per_file: list[tuple[str, str, int, int]] = field(
        default_factory=list
    )  # file, packet, tossups, buzzes


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


def grace_word_maps(text: str, tokenized: Tokenized | None = None) -> tuple[list[int], list[int]]:
    """Between GRACE's word indices (whitespace tokens of ``text``) and ours.

    Returns ``(to_ours, to_grace)``: ``to_ours[g]`` is the canonical word heard by the time
    GRACE word ``g`` is read (a marker token such as ``(*)`` maps to the word before it, or 0
    at the very start); ``to_grace[w]`` is the whitespace token holding canonical word ``w``.
    ``to_ours[to_grace[w]] == w`` for every canonical word.

    >>> grace_word_maps("this (*) book")
    ([0, 0, 1], [0, 2])
    """
    tokens = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    words = (tokenized or tokenize(text)).words
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


def _decode_json(raw: bytes) -> Any:
    """JSON from a file's bytes, gzipped or not."""
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def _read_json(path: Path) -> Any:
    return _decode_json(path.read_bytes())


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


@dataclass
class GraceFile:
    """One GRACE file read and checked, ready to be written."""

    path: Path
    digest: str
    packet: Packet
    data: list[dict[str, Any]]
    buzzes: dict[str, list[tuple[GraceBuzz, int]]]  # tossup id -> (buzzpoint, our word)


def _position_error(path: Path, entry: dict[str, Any], index: int, j: int, raw: Any) -> str:
    label = entry.get("tossup_index", f"#{index + 1}")
    return f"{path}: tossup {label} (#{index + 1}): position {j + 1} {raw!r}"


def read_grace_file(path: Path) -> GraceFile:
    """Read and check one GRACE file: every tossup valid, every buzzpoint placeable. Raises
    ``ValueError`` naming the file, the tossup and the position of the first problem."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        data = _decode_json(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, OSError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ValueError(f"{path}: not GRACE buzzpoints (expected a list of tossup objects)")
    if not data:
        raise ValueError(f"{path}: no tossups")
    for i, entry in enumerate(data):
        if not isinstance(entry.get("question"), str):
            raise ValueError(f"{path}: tossup #{i + 1} has no 'question' text")
        if not isinstance(entry.get("position") or [], list):
            raise ValueError(f"{path}: tossup #{i + 1}: 'position' must be a list")
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
    buzzes: dict[str, list[tuple[GraceBuzz, int]]] = {}
    for i, (entry, tossup) in enumerate(zip(data, tossups, strict=True)):
        to_ours, _ = grace_word_maps(tossup.text, tossup.tokens())
        n_tokens = len(entry["question"].split())
        found = []
        for j, raw_pos in enumerate(entry.get("position") or []):
            where = _position_error(path, entry, i, j, raw_pos)
            try:
                gb = parse_grace_position(raw_pos)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            if gb.code[:1].upper() not in ("H", "M"):
                raise ValueError(
                    f"{where}: unknown team mark {gb.code!r} (H… for a human team, M… a model)"
                )
            if not 0 <= gb.word_index < n_tokens:
                raise ValueError(
                    f"{where}: word {gb.word_index} is outside the question "
                    f"(words 0..{n_tokens - 1})"
                )
            found.append((gb, to_ours[gb.word_index]))
        buzzes[tossup.id] = found
    return GraceFile(path, digest, packet, data, buzzes)


def import_grace(
    engine: Engine, paths: str | Path | Sequence[str | Path], *, event: str = "grace"
) -> ImportResult:
    """Import GRACE buzzpoint files into ``event`` (made if new), in one transaction.

    Each file becomes a packet (its tossups) and every buzzpoint a ``pooled_buzz`` row of the
    event: its team (``H…`` human, ``M…`` model, registered in the event), the canonical word
    it falls on, its clue and fraction, correct or not, and the file's own word index and
    order (to write the file back exactly). Nothing is replayed through a match's rules:
    the file pools many rooms. All or nothing: a file that cannot be read, or a buzzpoint
    that cannot be placed, raises ``ValueError`` naming the file, the tossup and the
    position, and nothing is written. A file already imported into the event is skipped.
    """
    from grace_arena.record.models import EventImportRow, PooledBuzzRow
    from grace_arena.record.store import (
        RecordError,
        ensure_event,
        register_team,
        save_packet_in,
    )

    if isinstance(paths, str | Path):
        paths = [paths]
    files = [read_grace_file(Path(p)) for p in paths]
    result = ImportResult()
    with Session(engine) as session:
        try:
            event_row = ensure_event(session, event, title=f"GRACE buzzpoints ({event})")
        except RecordError as exc:
            raise ValueError(str(exc)) from None
        assert event_row.id is not None
        done: set[str] = set()
        registered: set[tuple[str, str]] = set()
        for f in files:
            known = session.exec(
                select(EventImportRow).where(
                    EventImportRow.event_id == event_row.id,
                    EventImportRow.source == "grace",
                    EventImportRow.source_key == f.digest,
                )
            ).first()
            if known is not None or f.digest in done:
                result.skipped.append(f"{f.path}: already imported into event {event!r}")
                continue
            done.add(f.digest)
            try:
                save_packet_in(session, f.packet, source=f.path, digest=f.digest)
            except RecordError as exc:
                raise ValueError(f"{f.path}: {exc}") from None
            meta = {
                "format": "grace",
                "file": f.path.name,
                "tossups": {
                    t.id: {k: e.get(k) for k in ("tossup_index", "category", "question",
                                                  "answer", "question_buzzpoints")}
                    for e, t in zip(f.data, f.packet.tossups, strict=True)
                },
                "order": [t.id for t in f.packet.tossups],
            }  # fmt: skip
            imp = EventImportRow(
                event_id=event_row.id,
                source="grace",
                source_key=f.digest,
                name=f.path.name,
                packet_id=f.packet.packet.id,
                meta=meta,
            )
            session.add(imp)
            session.flush()
            assert imp.id is not None
            rows = []
            for tossup in f.packet.tossups:
                tokens = tossup.tokens()
                for seq, (gb, ours) in enumerate(f.buzzes[tossup.id]):
                    kind = "model" if gb.is_model else "human"
                    if (gb.code, kind) not in registered:
                        try:
                            register_team(
                                session, event_row.id, team_id=gb.code, name=gb.code,
                                kind=kind, model=gb.code if gb.is_model else None,
                            )  # fmt: skip
                        except RecordError as exc:
                            raise ValueError(f"{f.path}: tossup {tossup.id}: {exc}") from None
                        registered.add((gb.code, kind))
                    rows.append(
                        {
                            "event_id": event_row.id,
                            "import_id": imp.id,
                            "packet_id": f.packet.packet.id,
                            "tossup_id": tossup.id,
                            "seq": seq,
                            "team_id": gb.code,
                            "team_kind": kind,
                            "word_index": ours,
                            "clue_index": tokens.clue_of(ours),
                            "fraction_revealed": tokens.fraction_revealed(ours),
                            "correct": gb.correct,
                            "source_word_index": gb.word_index,
                        }
                    )
            session.flush()
            if rows:
                session.execute(insert(PooledBuzzRow), rows)
            result.packets.append(f.packet.packet.id)
            result.tossups += len(f.packet.tossups)
            result.buzzes += len(rows)
            result.per_file.append(
                (str(f.path), f.packet.packet.id, len(f.packet.tossups), len(rows))
            )
        session.commit()
        result.event = event
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


# --------------------------------------------------------------------------------------------
# QBJ: a registration or tournament file's teams and rosters; a match file's result
#
# What tournament directors have: a QBJ file (schema.quizbowl.technology, 2.1.1) written by
# YellowFruit ("Export QBJ"), MODAQ (its roster export: a Tournament with its registrations
# written in it) or NAQT's registration. The objects may be written in place or referenced
# by ``{"$ref": id}`` to an object of the file's ``objects``; both are read.


class QbjImportError(ValueError):
    """A QBJ file that cannot be read as asked, with what is wrong."""


def _qbj_objects(data: Any, path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The file's top-level objects and every object with an id, at any depth."""
    if isinstance(data, dict) and isinstance(data.get("objects"), list):
        objects = data["objects"]
    elif isinstance(data, list):
        objects = data
    elif isinstance(data, dict):
        objects = [data]
    else:
        raise QbjImportError(f"{path}: not a QBJ file (expected an object or a list of objects)")
    by_id: dict[str, dict[str, Any]] = {}

    def index(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("id"), str) and "$ref" not in value:
                by_id.setdefault(value["id"], value)
            for item in value.values():
                index(item)
        elif isinstance(value, list):
            for item in value:
                index(item)

    index(objects)
    return [o for o in objects if isinstance(o, dict)], by_id


def _resolved(value: Any, by_id: dict[str, dict[str, Any]], path: Path) -> dict[str, Any]:
    if isinstance(value, dict) and "$ref" in value:
        target = by_id.get(str(value["$ref"]))
        if target is None:
            raise QbjImportError(f"{path}: a reference to {value['$ref']!r}, defined nowhere")
        return target
    if not isinstance(value, dict):
        raise QbjImportError(f"{path}: expected an object, found {type(value).__name__}")
    return value


def read_qbj_rosters(path: Path) -> list[tuple[str, list[str]]]:
    """Each team of a QBJ registration or tournament file, with its players' names, in the
    file's order: the teams of its ``Registration`` objects (those of a ``Tournament``'s
    ``registrations`` too), or, in a file without registrations, its ``Team`` objects. A
    team named twice, or a file without teams, is an error."""
    objects, by_id = _qbj_objects(_read_json(path), path)
    registrations: list[dict[str, Any]] = []
    for obj in objects:
        if obj.get("type") == "Tournament":
            registrations += [_resolved(r, by_id, path) for r in obj.get("registrations") or []]
        elif obj.get("type") == "Registration":
            registrations.append(obj)
    registrations = list({id(r): r for r in registrations}.values())  # once each
    teams = [_resolved(t, by_id, path) for r in registrations for t in r.get("teams") or []]
    if not registrations:
        teams = [o for o in objects if o.get("type") == "Team"]
    out: list[tuple[str, list[str]]] = []
    for team in teams:
        name = str(team.get("name") or "").strip()
        if not name:
            raise QbjImportError(f"{path}: a team without a name")
        if any(name.casefold() == n.casefold() for n, _ in out):
            raise QbjImportError(f"{path}: team {name!r} is named twice")
        players = []
        for p in team.get("players") or []:
            player = str(_resolved(p, by_id, path).get("name") or "").strip()
            if player and player.casefold() not in (x.casefold() for x in players):
                players.append(player)
        out.append((name, players))
    if not out:
        raise QbjImportError(f"{path}: no registration or team in the file")
    return out


class RosterCsvError(ValueError):
    """A roster CSV that cannot be read: which line, and why."""


def read_csv_rosters(path: Path) -> list[tuple[str, list[str]]]:
    """Each team of a roster CSV with its players' names, in the file's order: a header line
    with a ``team`` column and a ``player`` (or ``name``) column, then one player a line
    (``Red,Ann``); a line with a team and no player registers the team alone. Spreadsheets'
    UTF-8 byte-order mark and ``;`` separators are understood."""
    import csv

    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RosterCsvError(f"{path}: not UTF-8 text ({exc.reason})") from None
    lines = text.splitlines()
    if not lines:
        raise RosterCsvError(f"{path}: empty (expected a header line: team,player)")
    dialect = "excel" if lines[0].count(",") >= lines[0].count(";") else "excel-semicolon"
    if dialect == "excel-semicolon":
        csv.register_dialect(dialect, delimiter=";")
    reader = csv.reader(lines, dialect=dialect)
    header = [h.strip().casefold() for h in next(reader)]
    if "team" not in header or not ({"player", "name"} & set(header)):
        raise RosterCsvError(
            f"{path}: line 1 must name the columns 'team' and 'player', e.g. team,player "
            f"(found {', '.join(header) or 'nothing'})"
        )
    t = header.index("team")
    p = header.index("player") if "player" in header else header.index("name")
    out: dict[str, tuple[str, list[str]]] = {}
    for number, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(t, p) and len(row) <= t:
            raise RosterCsvError(f"{path}: line {number} has no team")
        team = row[t].strip()
        player = row[p].strip() if len(row) > p else ""
        if not team:
            raise RosterCsvError(f"{path}: line {number} has no team")
        _, players = out.setdefault(team.casefold(), (team, []))
        if player and player.casefold() in (x.casefold() for x in players):
            raise RosterCsvError(f"{path}: line {number}: {player!r} is named twice in {team!r}")
        if player:
            players.append(player)
    if not out:
        raise RosterCsvError(f"{path}: no team in the file")
    return list(out.values())


@dataclass(frozen=True)
class QbjMatchResult:
    """A QBJ match file's result as a game entered by its score: each team's points, the
    tossups read, each player's answers (by the answer types' values), and the round the file
    names (MODAQ's ``_round``), if any."""

    points: dict[str, int]  # team name -> points
    tossups_read: int | None
    players: list[dict[str, Any]]  # {team, name, tuh, answers: {value: number}}
    bonus_points: dict[str, int]
    round: int | None = None
    #: The match's cycles as the file gives them (MODAQ's: buzz positions, results, bonus
    #: parts), each buzz's team and player by name: kept so that the game written back as
    #: QBJ is the one MODAQ rebuilds. Its packet's name, if the file names one.
    questions: list[dict[str, Any]] = field(default_factory=list)
    packets: str | None = None


def read_qbj_match(path: Path) -> QbjMatchResult:
    """The result of the one ``Match`` of a QBJ match file (MODAQ's, YellowFruit's, ours).
    A team's points are the file's, or, where it gives none, its answers' values plus its
    bonus points (as YellowFruit adds them). Bounceback points are refused: a game entered
    by its score has none."""
    objects, by_id = _qbj_objects(_read_json(path), path)
    matches = [o for o in objects if o.get("type", "Match") == "Match" and "match_teams" in o]
    if len(matches) != 1:
        raise QbjImportError(f"{path}: expected one match, found {len(matches)}")
    match = matches[0]
    points: dict[str, int] = {}
    bonus: dict[str, int] = {}
    players: list[dict[str, Any]] = []
    for entry in match.get("match_teams") or []:
        entry = _resolved(entry, by_id, path)
        name = str(_resolved(entry.get("team"), by_id, path).get("name") or "").strip()
        if not name:
            raise QbjImportError(f"{path}: a team of the match has no name")
        if entry.get("bonus_bounceback_points"):
            raise QbjImportError(f"{path}: {name} has bounceback points, which a game entered "
                                 "by its score does not take")  # fmt: skip
        total = 0
        for mp in entry.get("match_players") or []:
            mp = _resolved(mp, by_id, path)
            player = str(_resolved(mp.get("player"), by_id, path).get("name") or "").strip()
            answers: dict[int, int] = {}
            for count in mp.get("answer_counts") or []:
                value = int(_resolved(count.get("answer_type"), by_id, path).get("value", 0))
                answers[value] = answers.get(value, 0) + int(count.get("number") or 0)
                total += value * int(count.get("number") or 0)
            players.append(
                {"team": name, "name": player, "tuh": mp.get("tossups_heard"), "answers": answers}
            )
        bonus[name] = int(entry.get("bonus_points") or 0)
        given = entry.get("points")
        points[name] = int(given) if given is not None else total + bonus[name]
    if len(points) != 2:
        raise QbjImportError(f"{path}: a match of two teams, found {len(points)}")
    number = match.get("_round")
    questions = []
    for q in match.get("match_questions") or []:
        q = dict(_resolved(q, by_id, path))
        buzzes = []
        for b in q.get("buzzes") or []:
            b = dict(_resolved(b, by_id, path))
            team = str(_resolved(b.get("team"), by_id, path).get("name") or "").strip()
            if team not in points:
                raise QbjImportError(f"{path}: a buzz of team {team!r}, not a team of the match")
            b["team"] = {"name": team}
            b["player"] = {"name": str(_resolved(b.get("player"), by_id, path).get("name") or "")}
            buzzes.append(b)
        questions.append({**q, "buzzes": buzzes})
    packets = match.get("packets")
    return QbjMatchResult(
        points=points,
        tossups_read=match.get("tossups_read"),
        players=players,
        bonus_points=bonus,
        round=int(number) if isinstance(number, int | str) and str(number).isdigit() else None,
        questions=questions,
        packets=packets if isinstance(packets, str) else None,
    )
