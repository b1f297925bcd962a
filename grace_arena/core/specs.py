"""From a packet to what the match engine plays: tossup specs and a match configuration."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from grace_arena.core.config import (
    BonusPartSpec,
    BonusSpec,
    ConsultSpec,
    MatchConfig,
    ScoringRules,
    TeamSpec,
    TossupSpec,
)
from grace_arena.core.packet import Bonus, Packet, Tossup


def tossup_spec(tossup: Tossup) -> TossupSpec:
    """The engine's view of a packet tossup, from the canonical tokenization."""
    tokens = tossup.tokens()
    return TossupSpec(
        id=tossup.id,
        n_words=len(tokens.words),
        clue_ends=tokens.clue_ends,
        power_index=tokens.power_index,
        answer=tossup.answer,
        category=tossup.category,
        char_offsets=tuple(w.start for w in tokens.words),
    )


def bonus_spec(bonus: Bonus) -> BonusSpec:
    """The engine's view of a packet bonus."""
    return BonusSpec(
        id=bonus.id,
        leadin=bonus.leadin,
        parts=tuple(
            BonusPartSpec(text=p.text, answer=p.answer, value=p.value, difficulty=p.difficulty)
            for p in bonus.parts
        ),
        category=bonus.category,
    )


def match_config(
    packet: Packet,
    teams: Sequence[TeamSpec],
    *,
    rules: ScoringRules | None = None,
    tossup_ids: Iterable[str] | None = None,
    title: str | None = None,
    reading_mode: str = "read_aloud",
    wpm: int = 180,
    compensated: bool = False,
    consult: ConsultSpec | None = None,
    exhibition: bool = False,
    phone_protests: bool = False,
    voice: bool = False,
) -> MatchConfig:
    """A match on ``packet`` (all its tossups, or the chosen ones in the given order)."""
    chosen = (
        [packet.tossup(tid) for tid in tossup_ids] if tossup_ids is not None else packet.tossups
    )
    return MatchConfig(
        rules=rules or ScoringRules(),
        teams=tuple(teams),
        tossups=tuple(tossup_spec(t) for t in chosen),
        # the packet's bonuses in order (played when the rules play bonuses)
        bonuses=tuple(bonus_spec(b) for b in packet.bonuses),
        title=title or packet.packet.title,
        packet_id=packet.packet.id,
        reading_mode=reading_mode,
        wpm=wpm,
        compensated=compensated,
        consult=consult,
        exhibition=exhibition,
        phone_protests=phone_protests,
        voice=voice,
    )


def parse_tossups(spec: str, total: int) -> list[int]:
    """``"all"``, ``"1-8"``, ``"1,3,5-7"`` -> 0-based indices (in packet order, no repeats).

    Raises ``ValueError`` naming the part it cannot read.
    """
    spec = spec.strip().lower()
    if spec in ("", "all", "*"):
        return list(range(total))
    chosen: set[int] = set()
    for part in re.split(r"[,\s]+", spec):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if m is None:
            raise ValueError(f"cannot read {part!r}: use numbers and ranges like 1-8,10")
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if not 1 <= lo <= hi <= total:
            raise ValueError(f"{part!r} is outside 1-{total}")
        chosen.update(range(lo - 1, hi))
    if not chosen:
        raise ValueError("choose at least one tossup")
    return sorted(chosen)


def team_id(name: str, taken: Iterable[str] = ()) -> str:
    """A team id (``[A-Za-z0-9_-]``) from its name, unique among ``taken``
    (``"Model (tfidf)"`` -> ``"model-tfidf"``)."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "team"
    taken = set(taken)
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate
