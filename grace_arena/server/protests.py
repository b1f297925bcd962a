"""Protests and corrections on the server: the moderator's view of them (the cycles played
with their rulings in force, and the match's protests with what upholding each would do), a
pure function of the match that the moderator's state carries, and the match's command for a
moderator's ``protest`` or ``correct`` message. A TD resolves protests from the record
(``grace-arena protest``)."""

from __future__ import annotations

import weakref

from grace_arena.core import protests as filed
from grace_arena.core.commands import CorrectRuling, FileProtest
from grace_arena.core.events import Ruling
from grace_arena.core.match import Match, MatchState
from grace_arena.protocol import (
    CorrectMsg,
    CycleView,
    OfficiatingView,
    ProtestMsg,
    ProtestView,
    RulingInForceView,
)

__all__ = ["officiating_command", "officiating_view"]


#: The last view of each match, with what it was made of: the moderator's state is sent after
#: every change (every word read), and the view changes only with the rulings, the tossups
#: played and the protests (immutable objects, replaced when they change).
_LAST: weakref.WeakKeyDictionary[Match, tuple[tuple[object, ...], OfficiatingView]] = (
    weakref.WeakKeyDictionary()
)


def officiating_view(match: Match) -> OfficiatingView:
    """What the moderator needs to correct a cycle or see how the protests stand."""
    state = match.state
    made_of = (state.officiating, state.game.ledger, state.game.played, state.game.outcomes,
               state.players)  # fmt: skip
    last = _LAST.get(match)
    if last is not None and all(a is b for a, b in zip(last[0], made_of, strict=True)):
        return last[1]
    view = _view(state)
    _LAST[match] = (made_of, view)
    return view


def _view(state: MatchState) -> OfficiatingView:
    names = {t.id: t.name for t in state.config.teams}

    def ruling(r: filed.RulingInForce) -> RulingInForceView:
        name = state.players.get(r.team, {}).get(r.player, r.player) if r.player else None
        part = None if r.part is None else r.part + 1
        return RulingInForceView(
            seq=r.seq, team=r.team, player=r.player, player_name=name, ruling=r.ruling,
            points=r.points, part=part, bounceback=r.bounceback, corrected=r.corrected,
        )  # fmt: skip

    cycles = [
        CycleView(
            number=c.number,
            tossup_id=c.tossup_id,
            thrown_out=c.thrown_out,
            rulings=[ruling(r) for r in c.rulings],
        )
        for c in filed.cycles(state)
    ]
    protests = []
    for p in filed.protests(state):
        upheld = filed.impact(state, p.seq) if p.open else None
        protests.append(
            ProtestView(
                number=p.seq, team=p.team,
                question=filed.question_label(state, p.tossup_id, p.part),
                answer=p.answer, reason=p.reason,
                status="open" if p.decision is None else p.decision,  # type: ignore[arg-type]
                decided_by=p.decided_by,
                text=filed.describe_protest(state, p, names, upheld=upheld),
                changes_result=upheld is not None and upheld.changes_result,
            )
        )  # fmt: skip
    return OfficiatingView(cycles=cycles, protests=protests)


def officiating_command(msg: ProtestMsg | CorrectMsg) -> FileProtest | CorrectRuling:
    """The match's command for a moderator's ``protest`` or ``correct``."""
    if isinstance(msg, ProtestMsg):
        return FileProtest(team=msg.team, tossup=msg.tossup, part=msg.part, answer=msg.answer,
                           reason=msg.reason)  # fmt: skip
    ruling = Ruling(msg.ruling) if msg.ruling else None
    return CorrectRuling(seq=msg.seq, ruling=ruling, player=msg.player, reason=msg.reason)
