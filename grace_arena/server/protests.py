"""Protests and corrections on the server: the moderator's view of them (the cycles played
with their rulings in force, and the match's protests with what upholding each would do), a
pure function of the match that the moderator's state carries, and the match's command for a
moderator's ``protest`` or ``correct`` message. A TD resolves protests from the record
(``grace-arena protest``)."""

from __future__ import annotations

import weakref

from grace_arena.core import protests as filed
from grace_arena.core.commands import CorrectRuling, FileProtest
from grace_arena.core.errors import IllegalCommand
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

__all__ = [
    "PhoneProtests",
    "officiating_command",
    "officiating_view",
    "phone_protest",
    "phone_protest_refused",
]


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
        if msg.team is None:
            raise IllegalCommand("say which team protests (team)")
        return FileProtest(team=msg.team, tossup=msg.tossup, part=msg.part, answer=msg.answer,
                           reason=msg.reason)  # fmt: skip
    ruling = Ruling(msg.ruling) if msg.ruling else None
    return CorrectRuling(seq=msg.seq, ruling=ruling, player=msg.player, reason=msg.reason)


# --------------------------------------------------------------------------------------------
# Protests from phones

#: A player's phone files a protest at most once in this many seconds, and at most this many
#: in a match: a protest is a TD's time, and a phone is one tap away from a second one.
PHONE_PROTEST_GAP = 20.0
PHONE_PROTESTS_PER_PLAYER = 5


class PhoneProtests:
    """When each player of a match last filed a protest from a phone, and how many (per
    room, in this process: a restart forgets the times, the record keeps the protests)."""

    def __init__(self) -> None:
        self.filed: dict[tuple[str, str], list[float]] = {}

    def check(self, team: str, player: str, now: float) -> None:
        """``IllegalCommand`` in words when this player may not file another one now."""
        times = self.filed.get((team, player), [])
        if len(times) >= PHONE_PROTESTS_PER_PLAYER:
            raise IllegalCommand(
                f"you have filed {len(times)} protests in this match, the most a phone may: "
                "ask the moderator for another"
            )
        if times and now - times[-1] < PHONE_PROTEST_GAP:
            wait = PHONE_PROTEST_GAP - (now - times[-1])
            raise IllegalCommand(f"one protest at a time: try again in {wait:.0f} s")

    def note(self, team: str, player: str, now: float) -> None:
        self.filed.setdefault((team, player), []).append(now)

    def forget(self, team: str, player: str, now: float) -> None:
        """A protest the match refused (a part the team did not play...) counts for nothing."""
        times = self.filed.get((team, player), [])
        if now in times:
            times.remove(now)


_PHONES: weakref.WeakKeyDictionary[object, PhoneProtests] = weakref.WeakKeyDictionary()


def phone_protest(
    room: object, match: Match, team: str, player: str, msg: ProtestMsg, now: float
) -> FileProtest:
    """The match's command for a player's ``protest`` from a phone: refused where the match
    does not take them (``phone_protests``) and past the phone's limits (``PhoneProtests``);
    the match then checks what it is about (a tossup or a bonus part the team played), and
    a protest it refuses is forgotten (:func:`phone_protest_refused`)."""
    if not match.config.phone_protests:
        raise IllegalCommand(
            "this match takes protests from the moderator only: tell the moderator"
        )
    phones = _PHONES.setdefault(room, PhoneProtests())
    phones.check(team, player, now)
    phones.note(team, player, now)
    return FileProtest(team=team, tossup=msg.tossup, part=msg.part, answer=msg.answer,
                       reason=msg.reason, by="player", player=player)  # fmt: skip


def phone_protest_refused(room: object, command: FileProtest, now: float) -> None:
    """The match refused a phone's protest: it does not count against the phone's limits."""
    phones = _PHONES.get(room)
    if phones is not None and command.player is not None:
        phones.forget(command.team, command.player, now)
