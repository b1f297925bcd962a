"""Tossup phases and every legal move between them, in one table.

Rules of the table (read this before changing the match engine):

* A match is always in exactly one phase. ``IDLE`` is "between tossups" (also before the
  first one); ``ENDED`` is final: only the officials' amendments are legal there (a protest,
  a correction of a cycle, a protest's resolution: ``grace_arena.core.protests``).
* ``READING``: words are being revealed; any team that is not locked out may buzz.
* ``AWAITING``: every word has been read; the buzz window after the end is open until time
  runs out (then the tossup is ``DEAD``).
* ``BUZZED``: one player has the floor and must answer; everyone else who buzzes now loses the
  race (logged, not an error). ``PROMPTED`` is the same after the moderator prompted. A
  model team whose buzz position is reached takes the floor at once when the one before it
  is ruled wrong (``BUZZED`` after a ruling); that ruling may still be undone
  (:func:`~grace_arena.core.match.can_undo`), the ruling before any other newer buzz not.
* ``ANSWERED`` / ``DEAD`` / ``THROWN_OUT``: the tossup is over; the next one may start. A
  ruling in the finished tossup may still be undone (except after a throw-out).
* ``BONUS``: the team that answered the tossup correctly hears the packet's next unused bonus
  (only when the rules play bonuses). Its parts come one at a time: the team whose turn it is
  (the controlling team, or with bouncebacks the other team on a part it missed) may type an
  answer (the first of the team stands; a prompt allows another), and the moderator rules
  it; no ruling loses points. After the last part the cycle is ``ANSWERED``. Undo takes back
  the last part's ruling, or, before any, the tossup's (and the bonus goes back unused); a
  bonus thrown out is replaced by the packet's next unused extra (or the moderator's pick).
  Read aloud, ``read_part`` starts the part's conferral clock (it rules nothing). Under
  consult rules with a pre-answer window, ``consult_part`` opens it and ``pre_answer_part``
  records each player's own answer; ``time_up`` (or the last player's answer) reveals the
  model's, and until then the part may not be answered, abstained from or ruled.
* ``timeout``: a team calls one between tossups (as many as the format allows).
* ``substitute``: a player of the bench comes into a team's lineup, between cycles.
* ``pause`` is legal while a tossup is read, in its buzz window and in its bonus, not while a
  player has the floor (the floor is the moderator's to rule first: a pause that lands as a
  buzz takes the floor is refused and changes nothing, so the reading goes on after the
  ruling); ``resume`` whenever the match is paused. Paused, no word is read and every clock
  stands still (the buzz window, the answer clock of a buzz taken while paused, a bonus part's
  and the consult clock): each is held with the time it had left and runs again from the
  resume. A pause lasts until the resume or the end of the tossup (or of its bonus); a ruling
  or an undo leaves it as it is.
* A buzz is never an illegal command: when it cannot take the floor it is recorded as refused
  with its reason (``lost_race``, ``locked_out``, ``not_live``); a press that repeats a
  refusal of the tossup (same player, reason and holder of the floor) is counted on it
  (``buzz_repeated``) and leaves the phase as it was. Everything not listed below raises
  :class:`~grace_arena.core.errors.IllegalCommand`.

``TRANSITIONS[(phase, command)]`` is the set of phases the command may lead to; the engine
checks both that the pair is listed and that the phase it reached is in the set.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    IDLE = "idle"
    READING = "reading"
    AWAITING = "awaiting"
    BUZZED = "buzzed"
    PROMPTED = "prompted"
    ANSWERED = "answered"
    DEAD = "dead"
    THROWN_OUT = "thrown_out"
    BONUS = "bonus"
    ENDED = "ended"


#: Phases in which a tossup is being played (a buzz may be accepted or is being answered).
LIVE = frozenset({Phase.READING, Phase.AWAITING, Phase.BUZZED, Phase.PROMPTED})
#: Phases in which the floor is held by a buzzing player.
HAS_FLOOR = frozenset({Phase.BUZZED, Phase.PROMPTED})
#: Phases after a tossup is over, before the next one starts.
FINISHED = frozenset({Phase.ANSWERED, Phase.DEAD, Phase.THROWN_OUT})

_P = Phase
# BUZZED too: after a wrong answer, a model team whose buzz position has been reached buzzes
# at once (two model teams at the same word, one of them ruled wrong)
_AFTER_RULING = frozenset(
    {_P.ANSWERED, _P.READING, _P.AWAITING, _P.BUZZED, _P.DEAD, _P.PROMPTED, _P.BONUS}
)
_UNDO_TO = frozenset({_P.BUZZED, _P.PROMPTED, _P.BONUS})

# (phase, command) -> phases the command can lead to.
TRANSITIONS: dict[tuple[Phase, str], frozenset[Phase]] = {
    # between tossups
    (_P.IDLE, "join"): frozenset({_P.IDLE}),
    (_P.IDLE, "start_tossup"): frozenset({_P.READING}),
    (_P.IDLE, "end_match"): frozenset({_P.ENDED}),
    (_P.IDLE, "buzz"): frozenset({_P.IDLE}),  # refused: not_live
    # reading
    (_P.READING, "join"): frozenset({_P.READING}),
    (_P.READING, "reveal"): frozenset({_P.READING, _P.AWAITING, _P.BUZZED}),  # a model may buzz
    (_P.READING, "buzz"): frozenset({_P.BUZZED, _P.READING}),  # READING: refused, locked out
    (_P.READING, "pause"): frozenset({_P.READING}),
    (_P.READING, "resume"): frozenset({_P.READING}),
    (_P.READING, "undo"): _UNDO_TO,
    (_P.READING, "throw_out"): frozenset({_P.THROWN_OUT}),
    # every word read, buzz window open
    (_P.AWAITING, "join"): frozenset({_P.AWAITING}),
    (_P.AWAITING, "buzz"): frozenset({_P.BUZZED, _P.AWAITING}),
    (_P.AWAITING, "time_up"): frozenset({_P.DEAD}),
    (_P.AWAITING, "pause"): frozenset({_P.AWAITING}),
    (_P.AWAITING, "resume"): frozenset({_P.AWAITING}),
    (_P.AWAITING, "undo"): _UNDO_TO,
    (_P.AWAITING, "throw_out"): frozenset({_P.THROWN_OUT}),
    # a player has the floor
    (_P.BUZZED, "join"): frozenset({_P.BUZZED}),
    (_P.BUZZED, "buzz"): frozenset({_P.BUZZED}),  # refused: lost_race / locked_out
    (_P.BUZZED, "answer"): frozenset({_P.BUZZED}),
    (_P.BUZZED, "rule"): _AFTER_RULING,
    (_P.BUZZED, "time_up"): _AFTER_RULING - {_P.ANSWERED, _P.PROMPTED, _P.BONUS},
    (_P.BUZZED, "throw_out"): frozenset({_P.THROWN_OUT}),
    (_P.BUZZED, "resume"): frozenset({_P.BUZZED}),
    # only where a model took the floor at once on the ruling taken back (match.can_undo)
    (_P.BUZZED, "undo"): _UNDO_TO,
    (_P.PROMPTED, "join"): frozenset({_P.PROMPTED}),
    (_P.PROMPTED, "buzz"): frozenset({_P.PROMPTED}),
    (_P.PROMPTED, "answer"): frozenset({_P.PROMPTED}),
    (_P.PROMPTED, "rule"): _AFTER_RULING,
    (_P.PROMPTED, "time_up"): _AFTER_RULING - {_P.ANSWERED, _P.PROMPTED, _P.BONUS},
    (_P.PROMPTED, "undo"): _UNDO_TO,  # the ruling taken back may itself be a prompt
    (_P.PROMPTED, "throw_out"): frozenset({_P.THROWN_OUT}),
    (_P.PROMPTED, "resume"): frozenset({_P.PROMPTED}),
    # a bonus: parts answered and ruled one at a time
    (_P.BONUS, "join"): frozenset({_P.BONUS}),
    (_P.BONUS, "buzz"): frozenset({_P.BONUS}),  # refused: not_live
    (_P.BONUS, "answer_part"): frozenset({_P.BONUS}),
    (_P.BONUS, "answer"): frozenset({_P.BONUS}),  # one naming its part: answer_part
    (_P.BONUS, "rule_part"): frozenset({_P.BONUS, _P.ANSWERED}),
    (_P.BONUS, "consult_part"): frozenset({_P.BONUS}),
    (_P.BONUS, "pre_answer_part"): frozenset({_P.BONUS}),
    (_P.BONUS, "abstain_part"): frozenset({_P.BONUS, _P.ANSWERED}),
    (_P.BONUS, "rule"): frozenset({_P.BONUS, _P.ANSWERED}),  # the part up: rule_part
    (_P.BONUS, "time_up"): frozenset({_P.BONUS, _P.ANSWERED}),
    (_P.BONUS, "undo"): _UNDO_TO,
    (_P.BONUS, "throw_out_bonus"): frozenset({_P.BONUS, _P.ANSWERED}),
    (_P.BONUS, "throw_out"): frozenset({_P.THROWN_OUT}),  # the whole cycle
    (_P.BONUS, "end_match"): frozenset({_P.ENDED}),
    (_P.BONUS, "pause"): frozenset({_P.BONUS}),
    (_P.BONUS, "resume"): frozenset({_P.BONUS}),
    # the tossup is over
    (_P.ANSWERED, "join"): frozenset({_P.ANSWERED}),
    (_P.ANSWERED, "buzz"): frozenset({_P.ANSWERED}),  # refused: not_live
    (_P.ANSWERED, "undo"): _UNDO_TO,
    (_P.ANSWERED, "throw_out"): frozenset({_P.THROWN_OUT}),
    (_P.ANSWERED, "start_tossup"): frozenset({_P.READING}),
    (_P.ANSWERED, "end_match"): frozenset({_P.ENDED}),
    (_P.DEAD, "join"): frozenset({_P.DEAD}),
    (_P.DEAD, "buzz"): frozenset({_P.DEAD}),
    (_P.DEAD, "undo"): _UNDO_TO,
    (_P.DEAD, "throw_out"): frozenset({_P.THROWN_OUT}),
    (_P.DEAD, "start_tossup"): frozenset({_P.READING}),
    (_P.DEAD, "end_match"): frozenset({_P.ENDED}),
    (_P.THROWN_OUT, "join"): frozenset({_P.THROWN_OUT}),
    (_P.THROWN_OUT, "buzz"): frozenset({_P.THROWN_OUT}),
    (_P.THROWN_OUT, "start_tossup"): frozenset({_P.READING}),
    (_P.THROWN_OUT, "end_match"): frozenset({_P.ENDED}),
    # ENDED: nothing is legal (but the amendments below).
}


# The reading pace may change at any time until the match ends, and a clock that stood still
# while nobody served the match may resume at any time: neither changes the phase.
for _phase in Phase:
    if _phase is not Phase.ENDED:
        TRANSITIONS[(_phase, "set_pace")] = frozenset({_phase})
        TRANSITIONS[(_phase, "resume_clock")] = frozenset({_phase})
        # a timed half's clock runs out whatever is being played (core.officiating)
        TRANSITIONS[(_phase, "half_time_up")] = frozenset({_phase})

# A team may protest at any time, the match going on (an ended match too, right after it).
# Corrections of earlier cycles and the resolution of protests (``core.protests``) are made
# between cycles or after the match, never while a tossup or a bonus is being played.
for _phase in Phase:
    TRANSITIONS[(_phase, "protest")] = frozenset({_phase})
for _phase in (Phase.IDLE, *FINISHED, Phase.ENDED):
    TRANSITIONS[(_phase, "correct")] = frozenset({_phase})
    TRANSITIONS[(_phase, "resolve_protest")] = frozenset({_phase})


# A team calls a timeout between tossups (after a cycle's bonus too); the moderator starts the
# conferral clock of a bonus part once it is read.
for _phase in (Phase.IDLE, *FINISHED):
    TRANSITIONS[(_phase, "timeout")] = frozenset({_phase})
# Substitutions are made between cycles, at the moments the format allows (before the first
# tossup, at halftime, before overtime, in a timeout: ``grace_arena.core.lineups``).
for _phase in (Phase.IDLE, *FINISHED):
    TRANSITIONS[(_phase, "substitute")] = frozenset({_phase})
TRANSITIONS[(Phase.BONUS, "read_part")] = frozenset({Phase.BONUS})


#: Commands only the match's own game clock sends (a timed half ran out): legal, but nobody's
#: to ask for, so help screens and error messages leave them out.
CLOCK_ONLY = frozenset({"half_time_up"})


# Hybrid teams (``grace_arena.core.hybrid``), legal only in a match that has AI players: a
# team sets its AI players' modes between tossups (the engine allows it before the match and
# once at halftime), mutes one of them at any time but while it holds the floor, and a human
# presses a semi AI's key as a buzz.
AI_TRANSITIONS: dict[tuple[Phase, str], frozenset[Phase]] = {
    **{(p, "set_ai_modes"): frozenset({p}) for p in (Phase.IDLE, *FINISHED)},
    **{(p, "mute_ai"): frozenset({p}) for p in Phase if p is not Phase.ENDED},
    **{(p, "press_ai"): to for (p, cmd), to in TRANSITIONS.items() if cmd == "buzz"},
    (Phase.BUZZED, "buzz_source"): frozenset({Phase.BUZZED}),
}


def allowed_commands(phase: Phase, *, ai_players: bool = False) -> frozenset[str]:
    """The commands that are legal in ``phase`` (for help screens and error messages);
    ``ai_players``: in a match with hybrid teams."""
    table = {**TRANSITIONS, **AI_TRANSITIONS} if ai_players else TRANSITIONS
    return frozenset(cmd for (p, cmd) in table if p is phase and cmd not in CLOCK_ONLY)
