"""The packets clubs have, read into our packet format: MODAQ's (and YAPP's) JSON, QB Reader's
JSON, and ``.docx`` files in the layout question-set editors use.

Each reader turns its file into the data of a ``grace-arena-packet/1`` file (then checked like
any packet, so a question that cannot be used is named with its field), a list of errors: a
question it could not read whole (a tossup or a bonus part with no ANSWER line after it, an
ANSWER line with no question before it), each named by its paragraph and kept in the data
under its number, so that the packet is refused (or, when the caller asks for it, played
without that question); and a list of warnings: what it read but could not place (a paragraph
that is neither a heading, a question, a part, an answer line nor an editor's tag and does not
read as a question), or what it had to assume (a part without a value: 10). Nothing is dropped
without a word.

The ``.docx`` layout, as editors write it (ACF, NAQT, PACE and club sets alike)::

    Packet 3 by Somewhere A                      <- a title: paragraphs before the first question
    Tossups                                      <- a heading (optional): Tossups, Bonuses,
                                                    Tiebreakers, Extra(s), Overtime, Spares
    1. This author's narrator ... (*) ... For 10 points, name this author.
    ANSWER: Mark **Twain** [or Samuel Clemens]   <- bold or underlined: the required part
    <Literature - American, Editor>              <- editor's tag: category - subcategory, author
    Bonuses
    1. For 10 points each, name these ...        <- a lead-in
    [10e] This one ...                           <- a part: [10], [10e], [10m], [10h], [5] ...
    ANSWER: ...

A question is a bonus when it has parts, whatever its section says (a missing "Bonuses" heading
costs nothing); Word's own list numbering counts as a number; a paragraph that follows a
question's text before its answer line continues it; a paragraph that starts with "[" or "("
right after an answer line continues that answer line.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Imported",
    "Paragraph",
    "category_of",
    "from_paragraphs",
    "from_question_json",
    "is_question_json",
    "read_docx",
]


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of a document: its 1-based number, its plain text, and the same text
    with its bold or underlined runs marked ``<b>…</b>`` (an answer line's required part)."""

    number: int
    text: str
    marked: str
    numbered: bool = False  # Word's list numbering (the number is not in the text)


@dataclass(frozen=True)
class Warning_:
    """Something a reader noticed: where (a paragraph number, a question) and what."""

    message: str
    paragraph: int | None = None
    kind: str | None = None  # "tossup" or "bonus"
    position: int | None = None
    part: int | None = None
    field: str | None = None  # the question's field it concerns ("answer", "text")


@dataclass
class Imported:
    """A foreign packet read into our format's data, with what the reader noticed. ``places``
    gives, for ("tossup" | "bonus", 0-based index), the paragraph the question starts at.
    ``errors`` are questions it could not read whole (the packet is refused for them, as for
    a field's problem); ``warnings`` what it left out or assumed (the packet loads)."""

    data: dict[str, Any]
    warnings: list[Warning_] = field(default_factory=list)
    errors: list[Warning_] = field(default_factory=list)
    places: dict[tuple[str, int], int] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Categories


_CATEGORY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Current Events", ("current events", "current affairs", "ce")),
    ("Social Science", ("social science", "economics", "psychology", "sociology", "anthropology",
                        "linguistics", "political science", "ss", "soc sci")),
    ("Other Academic", ("other academic", "oa", "general knowledge", "gk", "academic other")),
    ("Pop Culture", ("pop culture", "popular culture", "trash", "sports", "entertainment",
                     "video games", "television", "tv")),
    ("Fine Arts", ("fine arts", "fine art", "fa", "painting", "sculpture", "music",
                   "classical music", "opera", "visual arts", "auditory arts", "architecture",
                   "art", "arts", "ofa", "other fine arts")),
    ("Literature", ("literature", "lit", "poetry", "drama", "fiction", "novel", "novels")),
    ("History", ("history", "hist")),
    ("Science", ("science", "sci", "biology", "bio", "chemistry", "chem", "physics", "phys",
                 "math", "mathematics", "astronomy", "earth science", "computer science", "cs",
                 "other science")),
    ("Religion", ("religion", "rel")),
    ("Mythology", ("mythology", "myth")),
    ("Philosophy", ("philosophy", "phil")),
    ("Geography", ("geography", "geo")),
)  # fmt: skip
_PIECES = re.compile(r"\s*(?:[,;/|()]|\s[-–—]\s|[-–—]{2})\s*")


def category_of(*hints: str | None) -> str | None:
    """The GRACE category that a file's category, subcategory or editor's tag names, or None.
    Each hint is split into pieces ("Literature - American, Smith"); a piece that is a known
    name or abbreviation decides, else a piece that contains one ("American Literature")."""
    pieces = [p.lower().strip(" .:<>") for hint in hints if hint for p in _PIECES.split(hint) if p]
    for piece in pieces:
        for category, words in _CATEGORY_WORDS:
            if piece in words:
                return category
    for piece in pieces:
        for category, words in _CATEGORY_WORDS:
            if any(len(w) > 3 and re.search(rf"\b{re.escape(w)}\b", piece) for w in words):
                return category
    return None


def _categorised(question: dict[str, Any], *hints: str | None, raw: str | None) -> None:
    category = category_of(*hints)
    question["category"] = category or "Uncategorized"
    if raw:
        question["subcategory"] = " ".join(raw.split())[:120]


_TAG_PARTS = re.compile(r"^\s*(?P<head>[^,]*?)\s*(?:,\s*(?P<author>[^,]+?))?\s*$")
_TAG_SUB = re.compile(r"\s+[-–—]\s+")


def _tagged(question: dict[str, Any], tag: str | None) -> None:
    """An editor's tag, ``Category - Subcategory, Author`` (``<History - European, Jo
    Writer>``): the category it names, its subcategory (``European``), its author."""
    parts = _TAG_PARTS.match(tag or "")
    if tag is None or parts is None:
        _categorised(question, tag, raw=tag)
        return
    head, author = parts.group("head"), parts.group("author")
    pieces = _TAG_SUB.split(head, maxsplit=1)
    _categorised(question, tag, raw=pieces[1] if len(pieces) > 1 else head or None)
    if author and "author" not in question:
        question["author"] = " ".join(author.split())[:200]


# --------------------------------------------------------------------------------------------
# Text


_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z]+)[^<>]*>")
_KEPT_IN_ANSWERS = {"b": "b", "strong": "b", "u": "u", "req": "b"}


def _plain(text: Any) -> Any:
    """Question text: tags dropped (emphasis, power portions in bold), entities read. Not a
    string: as it is, for the packet's checks to name (never made text: a list of YAML
    aliases would grow to gigabytes)."""
    if text is None:
        return ""
    if not isinstance(text, str):
        return text
    return " ".join(_visible(html.unescape(_TAG.sub("", text))).split())


def _answer(text: Any) -> Any:
    """An answer line: the required part's tags kept as ours (<b>, <u>; MODAQ's <req> is
    <b>), every other tag dropped, entities read; empty pairs left out. Not a string: as
    it is (see :func:`_plain`)."""
    if text is None:
        return ""
    if not isinstance(text, str):
        return text

    def tag(match: re.Match[str]) -> str:
        name = _KEPT_IN_ANSWERS.get(match.group(2).lower())
        return f"<{match.group(1)}{name}>" if name else ""

    kept = _TAG.sub(tag, _visible(text))
    pieces = re.split(r"(</?[bu]>)", kept)
    text = "".join(p if i % 2 else html.unescape(p).replace("<", "‹").replace(">", "›")
                   for i, p in enumerate(pieces))  # fmt: skip
    text = re.sub(r"<([bu])>(\s*)</\1>", r"\2", text)
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------
# MODAQ / YAPP and QB Reader JSON


def is_question_json(data: Any) -> bool:
    """Whether ``data`` is a packet of MODAQ (YAPP) or QB Reader: ``tossups`` of ``question``
    and ``answer`` (and perhaps ``bonuses`` of ``leadin``, ``parts``, ``answers``)."""
    if not isinstance(data, dict) or "format" in data:
        return False
    tossups = data.get("tossups")
    return isinstance(tossups, list) and any(
        isinstance(t, dict) and ("question" in t or "question_sanitized" in t) for t in tossups
    )


def _difficulty(value: Any) -> str | None:
    text = str(value or "").strip().lower()[:1]
    return text if text in ("e", "m", "h") else None


def from_question_json(data: dict[str, Any], stem: str) -> Imported:
    """A MODAQ (YAPP) or QB Reader packet as ours. Their text carries HTML-like tags; a
    question's ``metadata`` (MODAQ: the editor's tag) or ``category``/``subcategory`` (QB
    Reader) gives its category."""
    imported = Imported({})
    tossups: list[Any] = []
    bonuses: list[Any] = []
    for index, raw in enumerate(data.get("tossups") or []):
        if not isinstance(raw, dict):
            tossups.append(raw)  # reported by the packet's checks, with its position
            continue
        tossup = {
            "id": f"tossup-{index + 1}",
            "text": _plain(raw.get("question", raw.get("question_sanitized"))),
            "answer": _answer(raw.get("answer", raw.get("answer_sanitized"))),
        }
        _question_category(tossup, raw)
        tossups.append(tossup)
    raw_bonuses = data.get("bonuses") or []
    for index, raw in enumerate(raw_bonuses if isinstance(raw_bonuses, list) else []):
        if not isinstance(raw, dict):
            bonuses.append(raw)
            continue
        texts = raw.get("parts", raw.get("parts_sanitized")) or []
        answers = _listed(raw, ("answers", "answers_sanitized"), imported, index)
        values = _listed(raw, ("values",), imported, index)
        difficulties = _listed(
            raw, ("difficultyModifiers", "difficulty_modifiers"), imported, index
        )
        if not isinstance(texts, list):  # reported by the packet's checks
            bonuses.append(
                {"id": f"bonus-{index + 1}", "category": "Uncategorized", "parts": texts}
            )
            continue
        parts = []
        for number, text in enumerate(texts):
            part: dict[str, Any] = {"text": _plain(text)}
            part["answer"] = _answer(answers[number]) if number < len(answers) else ""
            if number >= len(answers):
                imported.errors.append(
                    Warning_(f"no answer for this part ({len(answers)} answers for "
                             f"{len(texts)} parts)", None, "bonus", index + 1, number + 1,
                             "answer")
                )  # fmt: skip
            if number < len(values) and values[number] is not None:
                value = values[number]
                # a whole number as a float is one; a truth value is not a value
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                part["value"] = str(value) if isinstance(value, bool) else value
            else:
                imported.warnings.append(
                    Warning_("the part has no value; it is worth 10", None, "bonus", index + 1,
                             number + 1)
                )  # fmt: skip
            if number < len(difficulties) and _difficulty(difficulties[number]):
                part["difficulty"] = _difficulty(difficulties[number])
            parts.append(part)
        if len(answers) > len(texts):
            imported.warnings.append(
                Warning_(f"{len(answers)} answers for {len(texts)} parts; the extra answers "
                         "are left out", None, "bonus", index + 1)
            )  # fmt: skip
        bonus = {
            "id": f"bonus-{index + 1}",
            "leadin": _plain(raw.get("leadin", raw.get("leadin_sanitized"))),
            "parts": parts,
        }
        _question_category(bonus, raw)
        bonuses.append(bonus)
    title = data.get("name") or data.get("title") or stem
    imported.data = _packet_data(stem, str(title), tossups, bonuses)
    if not isinstance(raw_bonuses, list):
        imported.data["bonuses"] = raw_bonuses  # reported by the packet's checks
    return imported


def _listed(raw: dict[str, Any], keys: tuple[str, ...], imported: Imported, index: int) -> list:
    """The list under the first of ``keys`` that ``raw`` has ([] if none; said if not a list)."""
    for key in keys:
        if key in raw and raw[key] is not None:
            if isinstance(raw[key], list):
                return raw[key]
            message = f"{key!r} is not a list; left out"
            imported.warnings.append(Warning_(message, None, "bonus", index + 1))
            return []
    return []


def _question_category(question: dict[str, Any], raw: dict[str, Any]) -> None:
    category, subcategory = raw.get("category"), raw.get("subcategory")
    metadata = raw.get("metadata")
    metadata = _plain(metadata) if isinstance(metadata, str) else None
    hints = [h for h in (category, subcategory, metadata) if isinstance(h, str)]
    if isinstance(category, str):
        raw_text = " / ".join(h for h in (category, subcategory) if isinstance(h, str))
        _categorised(question, *hints, raw=raw_text)
    else:  # MODAQ's editor's tag: "Literature - American, Ed Itor"
        _tagged(question, metadata)
    for key in ("author", "source"):
        if isinstance(raw.get(key), str) and raw[key].strip():
            question[key] = raw[key].strip()


def _packet_data(stem: str, title: str, tossups: list, bonuses: list) -> dict[str, Any]:
    packet_id = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._") or "packet"
    data: dict[str, Any] = {
        "format": "grace-arena-packet/1",
        "packet": {"id": packet_id, "title": " ".join(title.split()) or packet_id},
        "tossups": tossups,
    }
    if bonuses:
        data["bonuses"] = bonuses
    return data


# --------------------------------------------------------------------------------------------
# .docx


#: The most text a ``.docx`` may hold (its document part, uncompressed), and the most
#: paragraphs: packets are far smaller (a 24-tossup, 24-bonus packet: ~0.3 MB, ~400).
MAX_DOCX_BYTES = 64 << 20
MAX_PARAGRAPHS = 100_000
#: The most any one member of a ``.docx`` archive may hold uncompressed (the document's text
#: is held to MAX_DOCX_BYTES), all members together, and how many members there may be. Every
#: member is checked before anything is read: the Word document reader loads every part (a
#: thumbnail, an embedded image) whole into memory, so a file of 1 MB holding a 1 GB member,
#: highly compressible, would take a gigabyte. A packet with pictures stays far below.
MAX_DOCX_MEMBER_BYTES = 64 << 20
MAX_DOCX_TOTAL_BYTES = 128 << 20
MAX_DOCX_MEMBERS = 1_000
_CHUNK = 1 << 20


class _TooLarge(ValueError):
    """The archive is refused for what it is (not for a broken zip)."""


def _check_docx_archive(path: str | Path) -> None:
    """Refuse a ``.docx`` whose members are larger than :data:`MAX_DOCX_MEMBER_BYTES` each,
    :data:`MAX_DOCX_TOTAL_BYTES` together, or more than :data:`MAX_DOCX_MEMBERS`: first by
    the sizes its central directory declares, then by decompressing each member a chunk at
    a time and counting (a declared size can lie), so that memory stays at one chunk."""
    import zipfile

    def too_large(what: str, size: int, limit: int) -> ValueError:
        return _TooLarge(
            f"too large for a packet: {what} is {size / 1e6:.0f} MB (at most {limit >> 20} MB)"
        )

    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_DOCX_MEMBERS:
                raise _TooLarge(
                    f"too large for a packet: {len(members):,} parts (at most {MAX_DOCX_MEMBERS:,})"
                )
            names = {m.filename for m in members}
            if "word/document.xml" not in names:
                raise _TooLarge("not a Word (.docx) document: it has no word/document.xml")
            total = 0
            for member in members:  # as declared
                if member.filename == "word/document.xml":
                    what, limit = "its text", MAX_DOCX_BYTES
                else:
                    what, limit = f"its part {member.filename}", MAX_DOCX_MEMBER_BYTES
                if member.file_size > limit:
                    raise too_large(what, member.file_size, limit)
                total += member.file_size
            if total > MAX_DOCX_TOTAL_BYTES:
                raise too_large("the whole document", total, MAX_DOCX_TOTAL_BYTES)
            total = 0
            for member in members:  # as they are
                read = 0
                with archive.open(member) as data:
                    while chunk := data.read(_CHUNK):
                        read += len(chunk)
                        total += len(chunk)
                        if read > member.file_size:
                            raise _TooLarge(
                                f"not a readable Word (.docx) document: its part "
                                f"{member.filename} holds more than its header says"
                            )
                        if total > MAX_DOCX_TOTAL_BYTES:
                            raise too_large("the whole document", total, MAX_DOCX_TOTAL_BYTES)
    except _TooLarge:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise ValueError(f"not a Word (.docx) document: {exc}") from None
    except NotImplementedError as exc:  # a compression method zipfile does not have
        raise ValueError(f"not a readable Word (.docx) document: {exc}") from None


def read_docx(path: str | Path) -> list[Paragraph]:
    """Every paragraph of a ``.docx`` file in reading order, those in tables, content controls
    and text boxes included, numbered from 1 (empty ones counted, so that a number points at
    the paragraph a writer sees). Tracked insertions, fields and smart tags are read as
    text (deletions are not). Raises ``ValueError`` when the file is not a Word document, or
    is larger than any packet (:data:`MAX_DOCX_BYTES`, :data:`MAX_PARAGRAPHS`, and for every
    part of the archive :data:`MAX_DOCX_MEMBER_BYTES`, :data:`MAX_DOCX_TOTAL_BYTES`,
    :data:`MAX_DOCX_MEMBERS`), checked before it is read."""
    import docx  # python-docx: imported only when a .docx is read
    from docx.oxml.ns import qn
    from docx.text.run import Run

    _check_docx_archive(path)
    try:
        document = docx.Document(str(path))
    except Exception as exc:  # a zip that is not a document: BadZipFile, an XML error
        reason = str(exc).split(", try XML_PARSE_HUGE")[0]  # (libxml's hint is not the user's)
        raise ValueError(f"not a readable Word (.docx) document: {reason}") from None
    w_p, w_r = qn("w:p"), qn("w:r")
    paragraphs = []
    for number, p in enumerate(document.element.body.iter(w_p), start=1):
        if number > MAX_PARAGRAPHS:
            raise ValueError(f"too large for a packet: over {MAX_PARAGRAPHS:,} paragraphs")
        runs = []
        for r in p.iter(w_r):
            owner = r.getparent()
            while owner is not None and owner.tag != w_p:
                owner = owner.getparent()
            if owner is not p:
                continue  # a text box's paragraph inside this one: read as its own
            run = Run(r, None)  # type: ignore[arg-type]
            runs.append((_visible(_run_text(r)), bool(run.bold) or bool(run.underline)))
        ppr = p.pPr  # Word's list numbering sits in the paragraph's properties
        style = ppr.pStyle.val if ppr is not None and ppr.pStyle is not None else ""
        numbered = (ppr is not None and ppr.numPr is not None) or "ListNumber" in style.replace(
            " ", ""
        )
        text = "".join(t for t, _ in runs)
        paragraphs.append(Paragraph(number, text, "".join(_marked(runs)), numbered))
    return paragraphs


_RUN_TEXT = {"br": "\n", "cr": "\n", "tab": "\t", "ptab": "\t", "noBreakHyphen": "-"}


def _run_text(r: Any) -> str:
    """A run's text as python-docx reads it, but with a page or column break read as a line
    break (python-docx reads those as nothing, which glues the words on either side of a page
    break into one: "page" + "break" -> "pagebreak")."""
    pieces = []
    for child in r:
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "t":
            pieces.append(child.text or "")
        elif tag in _RUN_TEXT:
            pieces.append(_RUN_TEXT[tag])
    return "".join(pieces)


def _marked(runs: list[tuple[str, bool]]) -> Iterable[str]:
    """A paragraph's text with its bold or underlined stretches in ``<b>…</b>`` (adjacent runs
    merged: an answer line's required part split over two runs is one stretch)."""
    open_ = False
    for text, strong in runs:
        if strong and not open_ and text.strip():
            yield "<b>"
            open_ = True
        elif not strong and open_ and text.strip():
            yield "</b>"
            open_ = False
        yield text.replace("<", "‹").replace(">", "›")
    if open_:
        yield "</b>"


#: What shows nothing on a screen or in a terminal, or turns text around: control characters
#: (but tab and newline) and bidirectional overrides; a packet's text has no use for them.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(text: str) -> str:
    return _INVISIBLE.sub("", text)


_HEADING = re.compile(
    r"^\s*(?P<word>tossups?|bonus(?:es)?|tie-?breakers?|extras?(?:\s+questions?)?|overtime"
    r"|replacements?|spares?|extra\s+(?:tossups?|bonus(?:es)?))\s*[:.]?\s*$",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"^\s*(?:(?:TB|tiebreaker|extra|x)\s*)?\d{1,3}\s*[.)]\s*", re.IGNORECASE)
_ANSWER = re.compile(r"^\s*answers?\s*:\s*", re.IGNORECASE)
_PART = re.compile(r"^\s*\[\s*(\d{1,3})\s*([emhEMH])?\s*\]\s*")
_EDITOR_TAG = re.compile(r"^\s*<[^<>]+>\s*$")
_EMPTY_MARK = re.compile(r"<b>(\s*)</b>")
_EACH = re.compile(r"for\s+(?:\d+|ten|five|fifteen)\s+points\s+each\b[^.:]*[:.]?", re.IGNORECASE)


@dataclass
class _Part:
    paragraphs: list[Paragraph]  # its text, from the paragraph with its marker on
    value: int
    difficulty: str | None = None
    marked: bool = True  # it had a value marker ([10])
    answer: str | None = None

    def data(self) -> dict[str, Any]:
        part: dict[str, Any] = {
            "text": " ".join(p.text.strip() for p in self.paragraphs),
            "answer": self.answer or "",
            "value": self.value,
        }
        if self.difficulty:
            part["difficulty"] = self.difficulty.lower()
        return part


@dataclass
class _Question:
    start: int  # the paragraph it starts at
    extra: bool
    texts: list[Paragraph] = field(default_factory=list)  # text (tossup) or lead-in (bonus)
    answer: str | None = None
    parts: list[_Part] = field(default_factory=list)
    tag: str | None = None
    numbered: bool = False
    #: Why it cannot be read whole: (message, paragraph, part number or None, field).
    broken: list[tuple[str, int, int | None, str]] = field(default_factory=list)

    @property
    def awaiting_answer(self) -> bool:
        if self.parts:
            return self.parts[-1].answer is None
        return self.answer is None

    @property
    def is_bonus(self) -> bool:
        return bool(self.parts)


def _strip(pattern: re.Pattern[str], paragraph: Paragraph) -> tuple[str, str]:
    """``paragraph``'s text and marked text without the ``pattern`` they start with."""
    text = pattern.sub("", paragraph.text, count=1)
    marked = paragraph.marked
    match = pattern.match(_TAG.sub("", marked))
    if match:  # remove the same number of visible characters from the marked text
        left, out = match.end(), []
        for piece in re.split(r"(</?b>)", marked):
            if piece in ("<b>", "</b>") or left <= 0:
                out.append(piece)
            else:
                out.append(piece[left:])
                left -= min(left, len(piece))
        marked = "".join(out)
    return text, marked


#: What only a question says: "For 10 points", "FTP", a power mark.
_QUESTION_LIKE = re.compile(
    r"\bfor\s+(?:\d+|ten|five|fifteen|twenty)\s+points\b|\bftp\b|\(\*\)", re.IGNORECASE
)


def _first_words(text: str, n: int = 8) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


def from_paragraphs(paragraphs: Sequence[Paragraph], stem: str) -> Imported:
    """The questions of a document's paragraphs (see the module's docstring for the layout)."""
    imported = Imported({})
    done: list[_Question] = []
    header: list[Paragraph] = []
    section, extra = "tossups", False
    current: _Question | None = None
    last_answer: tuple[_Question, int | None] | None = None  # where a continuation goes
    started = False

    def unplaced(paragraph: Paragraph, why: str) -> None:
        imported.warnings.append(
            Warning_(f"{why}: {_first_words(paragraph.text)!r}", paragraph.number)
        )

    def finish() -> None:
        nonlocal current
        if current is None:
            return
        question, current = current, None
        for number, part in enumerate(question.parts, start=1):
            if part.answer is None:
                first = part.paragraphs[0] if part.paragraphs else None
                question.broken.append((
                    "no ANSWER line follows this part"
                    + (f": {_first_words(first.text)!r}" if first else ""),
                    first.number if first else question.start, number, "answer",
                ))  # fmt: skip
        if not question.parts and question.answer is None:
            text = " ".join(p.text for p in question.texts)
            if not (question.numbered or _QUESTION_LIKE.search(text)):
                # a note, a stray line: not a question that lost its answer line
                for paragraph in question.texts:
                    unplaced(paragraph, "no ANSWER line follows this paragraph; left out")
                return
            message = f"no ANSWER line follows this tossup: {_first_words(text)!r}"
            question.broken.append((message, question.start, None, "answer"))
        done.append(question)

    for paragraph in paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        heading = _HEADING.match(text)
        if heading:
            finish()
            word = heading.group("word").lower()
            section = "bonuses" if "bonus" in word else "tossups"
            extra = not word.startswith(("tossup", "bonus"))
            started = True
            last_answer = None
            continue
        if _EDITOR_TAG.match(text):
            if last_answer is not None:
                last_answer[0].tag = text.strip(" <>")
            else:
                unplaced(paragraph, "an editor's tag after no answer line, left out")
            continue
        if _ANSWER.match(text):
            _, marked = _strip(_ANSWER, paragraph)
            marked = _EMPTY_MARK.sub(r"\1", marked)  # (a bold "ANSWER:" label leaves <b></b>)
            if current is None and not started and header:
                # no heading and no number before it: the paragraph before is its question
                # (the ones before that are the packet's title and description)
                current = _Question(header[-1].number, extra, texts=[header.pop()])
                started = True
            if current is None or not current.awaiting_answer:
                # a question (or a bonus part) whose text is lost: refused, not guessed
                answer_of = f"an ANSWER line with no question before it: {_first_words(text)!r}"
                if current is not None and current.parts:
                    current.parts.append(_Part([], current.parts[-1].value, answer=marked))
                    number = len(current.parts)
                    message = f"an ANSWER line with no part before it: {_first_words(text)!r}"
                    current.broken.append((message, paragraph.number, number, "text"))
                    last_answer = (current, number - 1)
                    continue
                finish()
                current = _Question(paragraph.number, extra)
                started = True
                if section == "bonuses":
                    current.parts.append(_Part([], 10, answer=marked))
                    current.broken.append((answer_of, paragraph.number, 1, "text"))
                    last_answer = (current, 0)
                else:
                    current.answer = marked
                    current.broken.append((answer_of, paragraph.number, None, "text"))
                    last_answer = (current, None)
                continue
            if not current.parts and section == "bonuses":
                _as_bonus(current)
            if current.parts:
                current.parts[-1].answer = marked
                last_answer = (current, len(current.parts) - 1)
            else:
                current.answer = marked
                last_answer = (current, None)
            continue
        # a numbered paragraph starts a question, even one that opens with "(" or "["
        numbered = paragraph.numbered or bool(_NUMBER.match(text))
        if numbered:
            finish()
            body, _ = _strip(_NUMBER, paragraph)
            current = _Question(paragraph.number, extra, numbered=True)
            current.texts.append(Paragraph(paragraph.number, body, body))
            started = True
            last_answer = None
            continue
        if last_answer is not None and text[:1] in "[(" and not _PART.match(text):
            question, part = last_answer  # the answer line goes on
            more = _EMPTY_MARK.sub(r"\1", paragraph.marked.strip())
            if part is None:
                question.answer = f"{question.answer} {more}"
            else:
                going_on = question.parts[part]
                going_on.answer = f"{going_on.answer} {more}"
            continue
        part = _PART.match(text)
        if part:
            body, _ = _strip(_PART, paragraph)
            if current is None or (not current.parts and not current.awaiting_answer):
                finish()
                current = _Question(paragraph.number, extra)
                started = True
            value, difficulty = int(part.group(1)), part.group(2)
            current.parts.append(
                _Part([Paragraph(paragraph.number, body, body)], value, difficulty)
            )
            last_answer = None
            continue
        if current is not None and current.awaiting_answer:
            if current.parts:
                current.parts[-1].paragraphs.append(paragraph)
            else:
                current.texts.append(paragraph)
            continue
        if not started:
            header.append(paragraph)
            continue
        if (
            current is not None
            and current.is_bonus
            and len(current.parts) < 3
            and not _EACH.search(text)
        ):
            # a part without its value marker: the bonus's parts go on (after three, an
            # unnumbered paragraph is rather the next bonus's lead-in)
            current.parts.append(_Part([paragraph], current.parts[-1].value, marked=False))
            last_answer = None
            continue
        # an unnumbered question: a new one starts here
        finish()
        current = _Question(paragraph.number, extra)
        current.texts.append(paragraph)
        last_answer = None
    finish()
    imported.data = _document_data(done, header, stem, imported)
    return imported


def _as_bonus(question: _Question) -> None:
    """A question of the bonuses section that reached its first answer line without a part
    marker: its first paragraph is the lead-in, the rest its first part (or, in one
    paragraph, the lead-in ends at "For 10 points each: ...")."""
    first, *rest = question.texts
    if rest:
        question.texts, body = [first], rest
    else:
        each = _EACH.search(first.text)
        cut = each.end() if each else 0
        leadin, text = first.text[:cut].strip(), first.text[cut:].strip()
        question.texts = [Paragraph(first.number, leadin, leadin)] if leadin else []
        body = [Paragraph(first.number, text, text)]
    question.parts.append(_Part(body, 10, marked=False))  # (warned of once numbered)


def _fewer_parts(questions: list[_Question], imported: Imported) -> None:
    """Warn of a bonus with fewer parts than the packet's other bonuses have (a part lost
    whole, text and answer line, leaves nothing else to see)."""
    bonuses = [q for q in questions if q.is_bonus]
    counts = Counter(len(q.parts) for q in bonuses if not q.extra)
    if len(bonuses) < 3 or not counts:
        return
    usual, n = counts.most_common(1)[0]
    if n * 2 <= sum(counts.values()):
        return  # no count most bonuses share
    for position, question in enumerate(bonuses, start=1):
        if len(question.parts) < usual and not question.broken:
            imported.warnings.append(
                Warning_(f"the bonus has {len(question.parts)} part"
                         f"{'s' if len(question.parts) != 1 else ''}; the packet's other "
                         f"bonuses have {usual}", question.start, "bonus", position)
            )  # fmt: skip


def _document_data(
    questions: list[_Question], header: list[Paragraph], stem: str, imported: Imported
) -> dict[str, Any]:
    tossups: list[dict[str, Any]] = []
    bonuses: list[dict[str, Any]] = []
    counts = {"tossups": 0, "bonuses": 0, "extra-tossups": 0, "extra-bonuses": 0}
    for question in questions:
        kind = "bonuses" if question.is_bonus else "tossups"
        key = f"extra-{kind}" if question.extra else kind
        counts[key] += 1
        prefix = {"tossups": "tossup", "bonuses": "bonus"}[kind]
        number = counts[key]
        qid = f"extra-{prefix}-{number}" if question.extra else f"{prefix}-{number}"
        text = " ".join(p.text.strip() for p in question.texts)
        position = len(bonuses if question.is_bonus else tossups) + 1
        for message, paragraph, part_number, field_name in question.broken:
            imported.errors.append(
                Warning_(message, paragraph, prefix, position, part_number, field_name)
            )
        if question.is_bonus:
            parts = [part.data() for part in question.parts]
            item: dict[str, Any] = {"id": qid, "leadin": text, "parts": parts}
            imported.places[("bonus", len(bonuses))] = question.start
            for number, part in enumerate(question.parts, start=1):
                if not part.marked:
                    imported.warnings.append(
                        Warning_(
                            f"the part has no value marker ([10]); it is worth {part.value}",
                            part.paragraphs[0].number, "bonus", len(bonuses) + 1, number,
                        )
                    )  # fmt: skip
            bonuses.append(item)
        else:
            item = {"id": qid, "text": text, "answer": question.answer or ""}
            imported.places[("tossup", len(tossups))] = question.start
            tossups.append(item)
        _tagged(item, question.tag)
    _fewer_parts(questions, imported)
    title = header[0].text.strip() if header else stem
    data = _packet_data(stem, title, tossups, bonuses)
    if len(header) > 1:
        data["packet"]["description"] = " ".join(p.text.strip() for p in header[1:])
    return data
