"""Packets as the record holds them: a server process that shares a record reads the packets
of an event from it, without the files."""

from __future__ import annotations

from itertools import pairwise

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from grace_arena.core.packet import Packet
from grace_arena.core.tokenize import tokenize
from grace_arena.record.models import PacketRow, TossupRow


def packet_from_record(engine: Engine, packet_id: str) -> Packet:
    """The packet stored under ``packet_id``: as it was saved (``meta["document"]``), or, for
    a record written before packets were kept whole, rebuilt from its tossup rows (texts,
    answers, categories and clue boundaries; a tossup's author and notes are not in them).
    Raises ``LookupError`` when the record has no such packet."""
    with Session(engine) as session:
        row = session.get(PacketRow, packet_id)
        if row is None:
            known = session.exec(select(PacketRow.id).order_by(PacketRow.id)).all()
            raise LookupError(
                f"no packet {packet_id!r} in the record (packets: {', '.join(known) or 'none'})"
            )
        document = (row.meta or {}).get("document")
        if document is not None:
            return Packet.model_validate(document)
        tossups = session.exec(
            select(TossupRow).where(TossupRow.packet_id == packet_id).order_by(TossupRow.position)  # type: ignore[arg-type]
        ).all()
        header = {k: v for k, v in (row.meta or {}).items() if k != "document"}
        return Packet.model_validate(
            {
                "format": "grace-arena-packet/1",
                "packet": header or {"id": row.id, "title": row.title},
                "tossups": [_tossup_data(t) for t in tossups],
            }
        )


def _tossup_data(row: TossupRow) -> dict:
    data = {"id": row.tossup_id, "category": row.category, "answer": row.answer}
    if row.subcategory:
        data["subcategory"] = row.subcategory
    tokens = tokenize(row.text)
    words, ends = tokens.words, list(row.clue_ends)
    if tuple(ends) == tokens.clue_ends or len(words) != row.n_words:
        data["text"] = row.text
        return data
    # clue boundaries that were given explicitly: cut the text after each clue's last word
    cuts = [words[end + 1].start for end in ends[:-1]]
    bounds = [0, *cuts, len(row.text)]
    data["clues"] = [row.text[a:b].strip() for a, b in pairwise(bounds)]
    return data
