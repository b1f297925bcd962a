"""From a packet to what the match engine plays: tossup specs and a match configuration."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from grace_arena.core.config import MatchConfig, ScoringRules, TeamSpec, TossupSpec
from grace_arena.core.packet import Packet, Tossup


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
) -> MatchConfig:
    """A match on ``packet`` (all its tossups, or the chosen ones in the given order)."""
    chosen = (
        [packet.tossup(tid) for tid in tossup_ids] if tossup_ids is not None else packet.tossups
    )
    return MatchConfig(
        rules=rules or ScoringRules(),
        teams=tuple(teams),
        tossups=tuple(tossup_spec(t) for t in chosen),
        title=title or packet.packet.title,
        packet_id=packet.packet.id,
        reading_mode=reading_mode,
        wpm=wpm,
        compensated=compensated,
    )
