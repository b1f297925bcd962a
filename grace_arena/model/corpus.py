"""Corpora of past questions: what the TF-IDF guesser learns from and exemplars come from.

Four formats are read, chosen from the content, not the file name:

- **practice** (JSON lines, our shipped ``questions/practice_corpus.jsonl``): one object per line,
  ``{"id", "page", "answer", "category", "text"}``; ``page`` is the canonical answer.
- **QANTA** (``.json`` or ``.json.gz``): a list of objects, or ``{"questions": [...]}``, with
  ``text``, ``answer``, ``page`` (Wikipedia title, underscores for spaces), ``category`` and
  ``qanta_id``.
- **GRACE** public buzzpoints: a list of ``{tossup_index, category, question, answer, ...}``;
  the answer line's main answer stands in for the page.
- **our packet format** (``.yaml``/``.yml`` or a JSON object with ``format:
  grace-arena-packet/1``): each tossup; the answer line's main answer is the page.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grace_arena.core.judge import parse_answer_line
from grace_arena.core.packet import load_packet
from grace_arena.core.packet_layouts import is_question_json
from grace_arena.resources import shipped_file

__all__ = [
    "DEFAULT_CORPUS_PATH",
    "CorpusEntry",
    "corpus_from_packet",
    "load_corpus",
]

DEFAULT_CORPUS_PATH: Path = shipped_file("questions", "practice_corpus.jsonl")


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    """One past question: its text and the canonical answer (``page``) it is about."""

    id: str
    page: str
    text: str
    answer: str = ""  # the full answer line, when known
    category: str | None = None


def _main_answer(line: str) -> str:
    main = parse_answer_line(line).main if line else ""
    return main or line


def _page(raw: Any, answer: str) -> str:
    page = str(raw).replace("_", " ").strip() if raw not in (None, "", "None") else ""
    return page or _main_answer(answer)


def _from_objects(objects: Iterable[dict[str, Any]], source: str) -> list[CorpusEntry]:
    entries: list[CorpusEntry] = []
    for i, obj in enumerate(objects):
        if not isinstance(obj, dict):
            raise ValueError(f"{source}: entry {i} is not an object")
        if "question" in obj and "tossup_index" in obj:  # GRACE buzzpoints
            text, answer = str(obj["question"]), str(obj.get("answer", ""))
            qid = str(obj["tossup_index"])
            page = _page(obj.get("page"), answer)
        elif "text" in obj:  # practice or QANTA
            text, answer = str(obj["text"]), str(obj.get("answer", ""))
            qid = str(obj.get("id") or obj.get("qanta_id") or f"{Path(source).stem}-{i}")
            page = _page(obj.get("page"), answer)
        else:
            raise ValueError(f"{source}: entry {i} has neither 'text' nor 'question'")
        if not text.strip() or not page:
            continue
        category = obj.get("category")
        entries.append(CorpusEntry(qid, page, text, answer, str(category) if category else None))
    return entries


def corpus_from_packet(packet: Any) -> list[CorpusEntry]:
    """A packet's tossups as corpus entries (id ``<packet>/<tossup>``)."""
    return [
        CorpusEntry(
            f"{packet.packet.id}/{t.id}", _main_answer(t.answer), t.text, t.answer, t.category
        )
        for t in packet.tossups
    ]


def load_corpus(path: str | Path | None = None) -> list[CorpusEntry]:
    """Read a corpus in any of the supported formats (default: the shipped practice corpus)."""
    path = Path(path) if path is not None else DEFAULT_CORPUS_PATH
    name = path.name.lower()
    if name.endswith((".yaml", ".yml", ".docx")):
        return corpus_from_packet(load_packet(path))
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        raw = fh.read()
    stripped = raw.lstrip()
    if name.endswith((".jsonl", ".jsonl.gz")) or (stripped.startswith("{") and "\n{" in stripped):
        try:
            objects = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except json.JSONDecodeError:
            objects = None
        if objects is not None:
            return _from_objects(objects, str(path))
    data = json.loads(raw)
    if (
        isinstance(data, dict) and data.get("format") == "grace-arena-packet/1"
    ) or is_question_json(data):  # ours, or MODAQ's or QB Reader's
        return corpus_from_packet(load_packet(path))
    if isinstance(data, dict) and isinstance(data.get("questions"), list):
        data = data["questions"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: not a corpus (expected a list of questions)")
    return _from_objects(data, str(path))


def pages(entries: Sequence[CorpusEntry]) -> list[str]:
    """The distinct pages, in first-seen order."""
    return list(dict.fromkeys(e.page for e in entries))
