"""Everything that happens in a match, as events: the record of the match.

Every accepted command produces one or more events; they are stored before anyone is told
about them, and a match is rebuilt exactly by replaying them (``Match.replay``). Each event
carries what the replay needs (points, positions, the judge's suggestion...), so replaying
never re-derives a decision from the rules or the clock.

Common fields: ``seq`` (1-based position in the match's record) and ``t`` (the ``now`` the
command was handled with, seconds since the epoch).

One event is not part of that sequence: ``BuzzRepeated``. A player who keeps pressing while
the floor is not theirs to take (a race already lost to the same buzz, a team locked out, no
tossup live) would otherwise add a whole ``BuzzRefused`` per press, and a phone pressed twenty
times a second by each of fifty players fills the record with copies of one refusal. So the
record keeps each player's first refused press per tossup, reason and holder of the floor in
full (a ``BuzzRefused``, with its timing, margin and clock estimate: every race stays
auditable), and of the presses that repeat it only a count and the time of the last
(``repeats`` and ``last_repeat_wall`` on that first refusal's ``buzz`` row). A
``BuzzRepeated`` takes no ``seq`` of its own (it carries the seq of the last stored event),
changes nothing in the match, is never stored as an event and never replayed: it is how the
engine tells the record to count a press, and the server to answer it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from grace_arena.core.config import MatchConfig, TeamKind


class Ruling(StrEnum):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    PROMPT = "prompt"


class RefusalReason(StrEnum):
    LOST_RACE = "lost_race"  # someone else has the floor
    LOCKED_OUT = "locked_out"  # the team already answered incorrectly on this tossup
    NOT_LIVE = "not_live"  # no tossup is being played


class TossupOutcome(StrEnum):
    ANSWERED = "answered"
    DEAD = "dead"
    THROWN_OUT = "thrown_out"


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    seq: int = 0
    t: float = 0.0


class MatchCreated(_Event):
    type: Literal["match_created"] = "match_created"
    config: MatchConfig


class PlayerJoined(_Event):
    type: Literal["player_joined"] = "player_joined"
    team: str
    player: str
    name: str
    kind: TeamKind = TeamKind.HUMAN


class TossupStarted(_Event):
    type: Literal["tossup_started"] = "tossup_started"
    tossup_id: str
    index: int  # 0-based number of this tossup in the match (throw-outs included)
    #: The tossup thrown out just before, which this one replaces (None: not a replacement).
    replaces: str | None = None


#: How the room came to hear a word: the voice's own timing of it (``speech``), the
#: moderator's key (``key``), or the reading pace's clock (``pace``).
WordSource = Literal["speech", "key", "pace"]
WORD_SOURCES: tuple[str, ...] = ("speech", "key", "pace")


class WordsRevealed(_Event):
    type: Literal["words_revealed"] = "words_revealed"
    tossup_id: str
    position: int  # index of the last word now revealed
    #: What timed the reveal (:data:`WORD_SOURCES`); None in a record written before it was kept.
    source: WordSource | None = None


class ReadingFinished(_Event):
    """Every word has been read; the buzz window after the end opens."""

    type: Literal["reading_finished"] = "reading_finished"
    tossup_id: str
    deadline: float


class ReadingPaused(_Event):
    type: Literal["reading_paused"] = "reading_paused"
    tossup_id: str


class ReadingResumed(_Event):
    type: Literal["reading_resumed"] = "reading_resumed"
    tossup_id: str


class PaceChanged(_Event):
    """The moderator changed the reading pace."""

    type: Literal["pace_changed"] = "pace_changed"
    wpm: int
    #: The reveal follows the moderator's keys alone from now (True), the pace again (False);
    #: None: as it was (a record written before it was kept, or a change of pace only).
    by_key: bool | None = None


class BuzzTiming(BaseModel):
    """When a buzz happened, as the server saw it and as the client reported it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    received_wall: float | None = None  # server wall clock at receipt
    received_mono: float | None = None  # server monotonic clock at receipt
    client_press: float | None = None  # client's clock at the press
    clock_offset: float | None = None  # estimated server - client clock offset
    rtt: float | None = None  # estimated round-trip time (median of the recent samples)
    min_rtt: float | None = None  # the shortest round trip measured on the connection
    #: How the race was decided: the first buzz to arrive, or (compensated mode) the earliest
    #: estimated press within a short window.
    #: ``arrival_fallback``: compensated mode, but this client's clock estimate was not
    #: plausible (``fallback`` says why), so its buzz counted as pressed when it arrived.
    arbitration: Literal["first_arrival", "compensated", "arrival_fallback"] = "first_arrival"
    #: Compensated mode: the press time on the server clock used to order the race.
    estimated_press: float | None = None
    #: The clock estimate behind it: how many ping/pong samples, and the spread (max - min)
    #: of the offsets they gave.
    clock_samples: int | None = None
    clock_spread: float | None = None
    fallback: str | None = None
    #: Compensated mode: seconds before its receipt the press was credited with (at most the
    #: connection's shortest round trip, the room's and the server's cap, plus the time the
    #: buzz may have waited for the server's loop; 0 for an arrival fallback).
    credit: float | None = None
    #: How long the buzz may have waited, already arrived, for the server's busy loop to read
    #: it (seconds; 0 when the loop was free).
    read_delay: float | None = None
    #: Compensated mode: the round trip of the room's phones (the median of their shortest)
    #: that bounded the credit.
    room_rtt: float | None = None


class _BuzzFields(_Event):
    buzz_id: int
    tossup_id: str | None
    team: str
    player: str
    kind: TeamKind
    word_index: int
    clue_index: int | None
    char_offset: int | None
    fraction: float | None
    timing: BuzzTiming = Field(default_factory=BuzzTiming)
    #: How the word the buzz is stamped with was known to have been heard (the source of its
    #: reveal: :data:`WordSource`); None before any word, or in an older record.
    word_source: WordSource | None = None


class BuzzAccepted(_BuzzFields):
    """A buzz that took the floor."""

    type: Literal["buzz_accepted"] = "buzz_accepted"
    interrupt: bool  # True when the reading was not finished (an incorrect answer may be a neg)
    answer: str | None = None  # typed answer (screen mode) or the model's guess
    suggestion: str | None = None  # the automatic judge's directive for ``answer``
    prompt_question: str | None = None
    confidence: float | None = None  # a model's confidence at its buzz
    deadline: float | None = None


class BuzzRefused(_BuzzFields):
    """A buzz that did not take the floor; recorded so that every race can be audited."""

    type: Literal["buzz_refused"] = "buzz_refused"
    reason: RefusalReason
    holder_buzz_id: int | None = None  # for lost_race: the buzz that had the floor
    margin: float | None = None  # for lost_race: seconds after the winning buzz (monotonic)


class BuzzRepeated(_Event):
    """A refused press that repeats one already recorded in full: the same player, in the same
    tossup, refused for the same reason with the same buzz holding the floor (or none).

    Not stored as an event (see the module docstring): the record adds it to the count of
    ``buzz_id``'s buzz row. ``seq`` is that of the last stored event, not a new one."""

    type: Literal["buzz_repeated"] = "buzz_repeated"
    buzz_id: int  # the refusal recorded in full that this press repeats
    team: str
    player: str
    reason: RefusalReason
    word_index: int  # the word revealed when the press arrived
    received_wall: float | None = None  # server wall clock at receipt


class AnswerGiven(_Event):
    """The player with the floor typed an answer (first answer or after a prompt)."""

    type: Literal["answer_given"] = "answer_given"
    buzz_id: int
    team: str
    player: str
    text: str
    suggestion: str | None = None
    prompt_question: str | None = None


class Ruled(_Event):
    type: Literal["ruled"] = "ruled"
    buzz_id: int
    tossup_id: str
    team: str
    player: str
    ruling: Ruling
    points: int
    power: bool = False
    by: Literal["moderator", "timer"] = "moderator"
    #: Where play goes on (READING, AWAITING or PROMPTED), or None when the tossup ends (a
    #: ``TossupEnded`` follows).
    resume: str | None = None
    deadline: float | None = None  # the new answer deadline after a prompt


class RulingUndone(_Event):
    type: Literal["ruling_undone"] = "ruling_undone"
    ruled_seq: int  # seq of the Ruled event taken back
    buzz_id: int
    tossup_id: str
    #: The answer clock restarts for the player who has the floor again (the deadline in the
    #: restored state may long have passed).
    deadline: float | None = None


class ClockResumed(_Event):
    """Nobody served the match from ``down_since`` until this event (a server process
    crashed and another reopened it, or the record could not be written): the clock that was
    running then resumes with the time it had left, until ``deadline`` (on the clock of the
    process that serves the match now). ``down_since`` is on the clock of the deadline it
    replaces."""

    type: Literal["clock_resumed"] = "clock_resumed"
    down_since: float
    deadline: float
    reason: str = "restart"  # restart | record


class TossupEnded(_Event):
    type: Literal["tossup_ended"] = "tossup_ended"
    tossup_id: str
    outcome: TossupOutcome
    reason: str  # correct_answer, all_locked_out, no_rebuzz, time_up, or the throw-out reason


class BonusStarted(_Event):
    """The tossup's team controls the next unused bonus; its first part is up."""

    type: Literal["bonus_started"] = "bonus_started"
    tossup_id: str  # the tossup answered correctly
    bonus_id: str
    team: str  # the controlling team
    index: int  # 0-based number of this bonus in the match (throw-outs included)
    deadline: float | None = None
    #: The bonus thrown out, which this one replaces (None: not a replacement).
    replaces: str | None = None


class BonusAnswerGiven(_Event):
    """A player of the team whose turn it is answered the current part."""

    type: Literal["bonus_answer_given"] = "bonus_answer_given"
    bonus_id: str
    part: int  # 0-based
    team: str
    player: str
    text: str
    suggestion: str | None = None
    prompt_question: str | None = None
    #: A model team's answer: its confidence (the policy's kind), as precomputed.
    confidence: float | None = None
    #: With consult rules: "own" (the team did not look at the model) or "consult".
    choice: Literal["own", "consult"] | None = None


class BonusPartConsulted(_Event):
    """The team whose turn it is looked at the model's answer to the current part (consult
    rules): what it was shown, and what the team had in mind before (``draft``, if typed)."""

    type: Literal["bonus_part_consulted"] = "bonus_part_consulted"
    bonus_id: str
    part: int  # 0-based
    team: str
    player: str | None = None  # None: recorded by the moderator
    model: str
    guess: str | None = None  # None: the model has no answer to this part
    confidence: float | None = None
    model_correct: bool | None = None  # the judge's verdict on the guess (not shown)
    draft: str | None = None
    draft_suggestion: str | None = None  # the judge's suggestion on the draft
    deadline: float | None = None


class BonusPreAnswerOpened(_Event):
    """Consult rules with a pre-answer window (``ConsultScoring.pre_answer_time``): the team
    whose turn it is asked for the model's answer to the current part; before it is revealed
    (a ``bonus_part_consulted`` at ``deadline``, or once every human of the team has written),
    each of its humans writes an answer of their own on their phone. ``player``: who asked
    (None: the moderator); ``draft``: what the team had typed before asking."""

    type: Literal["bonus_pre_answer_opened"] = "bonus_pre_answer_opened"
    bonus_id: str
    part: int  # 0-based
    team: str
    player: str | None = None
    draft: str | None = None
    deadline: float


class BonusPreAnswerGiven(_Event):
    """A human's own answer to the current part, written in the pre-answer window, before the
    model's answer was revealed (one each; the judge's suggestion on it, never shown to
    players)."""

    type: Literal["bonus_pre_answer_given"] = "bonus_pre_answer_given"
    bonus_id: str
    part: int  # 0-based
    team: str
    player: str
    text: str
    suggestion: str | None = None


class BonusPartRuled(_Event):
    type: Literal["bonus_part_ruled"] = "bonus_part_ruled"
    bonus_id: str
    tossup_id: str
    part: int  # 0-based
    team: str  # the team whose answer was ruled
    ruling: Ruling
    points: int
    bounceback: bool = False  # the other team's answer to a part the controlling team missed
    by: Literal["moderator", "timer", "team"] = "moderator"  # "team": an abstention
    answer: str | None = None  # what the team answered, if it typed it
    #: With consult rules: "own", "consult" or "abstain" (then ``ruling`` is incorrect: the team
    #: gave no answer; ``points`` says whether the abstention was right).
    choice: Literal["own", "consult", "abstain"] | None = None
    #: What comes next: "prompt" (the same team answers again), "bounceback" (the other team
    #: on this part), "part" (the next part), or None (the bonus is over: BonusEnded follows).
    resume: Literal["prompt", "bounceback", "part"] | None = None
    deadline: float | None = None


class BonusPartUndone(_Event):
    type: Literal["bonus_part_undone"] = "bonus_part_undone"
    ruled_seq: int  # seq of the BonusPartRuled taken back
    bonus_id: str
    part: int
    deadline: float | None = None


class BonusEnded(_Event):
    type: Literal["bonus_ended"] = "bonus_ended"
    bonus_id: str
    tossup_id: str
    team: str  # the controlling team
    outcome: Literal["completed", "thrown_out"]
    reason: str = ""
    #: Points of this bonus by team (the controlling team's, and bouncebacks).
    points: dict[str, int] = Field(default_factory=dict)


class BonusPartRead(_Event):
    """The moderator finished reading the bonus part up (read aloud): the team confers until
    ``deadline`` (the format's conferral time), a clock shown to the room that stands still
    while the match is paused. It rules nothing: the moderator asks for the answer as it runs
    out."""

    type: Literal["bonus_part_read"] = "bonus_part_read"
    bonus_id: str
    part: int  # 0-based
    bounceback: bool = False
    deadline: float


class TimeoutCalled(_Event):
    """A team called a timeout between tossups (its ``number``-th of the match); it lasts
    until ``ends``, or until the next tossup starts."""

    type: Literal["timeout_called"] = "timeout_called"
    team: str
    number: int  # 1-based, the team's
    ends: float


class PlayerSubstituted(_Event):
    """``player_in`` comes into the team's lineup for ``player_out`` (None: to a place left
    free), at the moment the rules allow, which is QBJ's ``Lineup.reason`` (initial, halftime,
    before_overtime, own_timeout, other_timeout; ``grace_arena.core.lineups``)."""

    type: Literal["player_substituted"] = "player_substituted"
    team: str
    player_in: str
    player_out: str | None = None
    reason: str


class HalfTimeExpired(_Event):
    """A timed half's game clock ran out (``ScoringRules.half_time``): the cycle in play is
    finished (its tossup read to the end, both teams may answer, its bonus played), then the
    half is over (``grace_arena.core.officiating``)."""

    type: Literal["half_time_expired"] = "half_time_expired"
    half: int  # 1 or 2


class MatchEnded(_Event):
    type: Literal["match_ended"] = "match_ended"
    scores: dict[str, int]


# --------------------------------------------------------------------------------------------
# Officiating: protests and corrections (grace_arena.core.protests). They amend the record,
# never rewrite it: a correction names the ruling in force it replaces (``amends``), and that
# ruling stays in the record, superseded.


class ProtestFiled(_Event):
    """A team protests a tossup (a ruling on it) or a bonus part, with the answer it gave and
    its reason. The match goes on; a TD resolves the protest after the game."""

    type: Literal["protest_filed"] = "protest_filed"
    team: str  # the protesting team
    tossup_id: str  # the cycle's tossup
    part: int | None = None  # a bonus part (0-based) of that cycle; None: the tossup
    #: The ruling in force protested (its seq): the one an upheld protest changes; None when
    #: there is none to change (an upheld protest then changes no score).
    ruling_seq: int | None = None
    answer: str = ""  # the answer given, as the team says it
    reason: str = ""
    by: Literal["moderator", "player"] = "moderator"
    player: str | None = None  # the player who filed it from a phone


class ProtestResolved(_Event):
    """A TD resolved a protest: upheld (a correction of the ruling protested follows, when it
    changes one) or denied (the ruling stands). Who decided and why are kept either way."""

    type: Literal["protest_resolved"] = "protest_resolved"
    protest_seq: int
    decision: Literal["upheld", "denied"]
    by: str  # who decided (the TD's name)
    reason: str = ""


class RulingCorrected(_Event):
    """A tossup ruling in force (``amends``: a ``ruled`` or an earlier correction) is replaced
    by this one: another ruling, or another player (who buzzed). The fields are a ``ruled``
    event's, so whatever reads rulings in force reads a correction the same way."""

    type: Literal["ruling_corrected"] = "ruling_corrected"
    amends: int
    buzz_id: int
    tossup_id: str
    team: str
    player: str
    ruling: Ruling
    points: int
    power: bool = False
    by: Literal["moderator", "td"] = "moderator"
    reason: str = ""
    protest_seq: int | None = None  # the protest upheld that made it


class BonusPartCorrected(_Event):
    """A bonus part's ruling in force (``amends``) is replaced by this one. The fields are a
    ``bonus_part_ruled`` event's (``resume`` is always None: nothing follows a correction)."""

    type: Literal["bonus_part_corrected"] = "bonus_part_corrected"
    amends: int
    bonus_id: str
    tossup_id: str
    part: int  # 0-based
    team: str
    ruling: Ruling
    points: int
    bounceback: bool = False
    answer: str | None = None
    choice: Literal["own", "consult", "abstain"] | None = None
    resume: None = None
    by: Literal["moderator", "td"] = "moderator"
    reason: str = ""
    protest_seq: int | None = None


# --------------------------------------------------------------------------------------------
# Hybrid teams (QANTA 2026: ``grace_arena.core.hybrid``): AI players beside a team's humans.
# Their names, for whatever reads them (the statistics, the reliance analysis):
# ``ai_modes_set``, ``ai_muted``, ``ai_buzzed``, ``ai_answers_shown``,
# ``ai_buzz_source_set``. An AI's buzz is an
# ordinary ``buzz_accepted`` (its ``player`` the AI's id, ``kind`` model) followed at once
# by an ``ai_buzzed`` that says how it came to buzz; a bonus part a hybrid team answers is an
# ordinary ``bonus_part_ruled`` whose ``choice`` is own, consult or abstain.


class AiModesSet(_Event):
    """A hybrid team's AI players' buzz modes for a half: before the match (set as often as
    the team likes) or at halftime (once). ``modes``: AI id -> ``autonomous`` or ``semi``;
    ``ks``: AI id -> its autonomous gate K (absent: the rules' ``autonomous_default_k``). An
    AI not named keeps its mode; a muted one stays muted."""

    type: Literal["ai_modes_set"] = "ai_modes_set"
    team: str
    modes: dict[str, Literal["autonomous", "semi"]] = Field(default_factory=dict)
    ks: dict[str, int] = Field(default_factory=dict)
    half: int  # 1: before the match; 2: at halftime
    by: str | None = None  # the player (a captain) who set them; None: the moderator


class AiMuted(_Event):
    """A team's captain muted one of its AI players for the rest of the match (it never
    buzzes again; irrevocable)."""

    type: Literal["ai_muted"] = "ai_muted"
    team: str
    player: str  # the AI muted
    by: str | None = None  # the captain; None: the moderator for the team
    tossups_heard: int  # tossups heard when it was muted (one being read counts)


class AiBuzzed(_Event):
    """How an AI player's buzz (the ``buzz_accepted`` just before, ``buzz_id``) came about:
    by itself (``autonomous``, gate ``k``, at its decision at runner token ``token``) or a
    teammate pressed its key (``semi``, ``pressed_by``); its weight class scales its points."""

    type: Literal["ai_buzzed"] = "ai_buzzed"
    buzz_id: int
    tossup_id: str
    team: str
    player: str  # the AI
    model: str
    weight_class: str
    mode: Literal["autonomous", "semi"]
    k: int | None = None  # autonomous: its gate
    token: int | None = None  # the runner token of the decision it answers with
    pressed_by: str | None = None  # semi: the human who pressed its key


class AiBuzzSourceSet(_Event):
    """The moderator handed the buzz with the floor, a human's, to a semi AI of the same team
    (the runner's "buzz source"): the AI answers with its latest guess and is scored as the
    AI."""

    type: Literal["ai_buzz_source_set"] = "ai_buzz_source_set"
    buzz_id: int
    tossup_id: str
    team: str
    from_player: str  # the human who buzzed
    player: str  # the AI
    answer: str = ""
    confidence: float | None = None
    token: int | None = None


class AiShown(BaseModel):
    """One AI player's answer to a bonus part, as a hybrid team was shown it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    player: str
    model: str
    weight_class: str
    guess: str | None = None
    confidence: float | None = None
    correct: bool | None = None  # the judge's verdict (not shown)


class AiAnswersShown(_Event):
    """A hybrid team consulted its AI players on its bonus part: every AI's answer was shown
    (the part then scores the consult's points when right)."""

    type: Literal["ai_answers_shown"] = "ai_answers_shown"
    bonus_id: str
    part: int  # 0-based
    team: str
    player: str | None = None  # who asked; None: the moderator for the team
    answers: tuple[AiShown, ...] = ()
    deadline: float | None = None


#: The events that carry a tossup ruling (as ruled, or as corrected), and a bonus part's.
TOSSUP_RULINGS = (Ruled, RulingCorrected)
PART_RULINGS = (BonusPartRuled, BonusPartCorrected)


Event = Annotated[
    MatchCreated
    | PlayerJoined
    | TossupStarted
    | WordsRevealed
    | ReadingFinished
    | ReadingPaused
    | ReadingResumed
    | PaceChanged
    | BuzzAccepted
    | BuzzRefused
    | BuzzRepeated
    | AnswerGiven
    | Ruled
    | RulingUndone
    | ClockResumed
    | TossupEnded
    | BonusStarted
    | BonusAnswerGiven
    | BonusPartConsulted
    | BonusPreAnswerOpened
    | BonusPreAnswerGiven
    | BonusPartRuled
    | BonusPartUndone
    | BonusEnded
    | BonusPartRead
    | TimeoutCalled
    | HalfTimeExpired
    | MatchEnded
    | ProtestFiled
    | ProtestResolved
    | RulingCorrected
    | BonusPartCorrected
    | PlayerSubstituted
    | AiModesSet
    | AiMuted
    | AiBuzzed
    | AiAnswersShown
    | AiBuzzSourceSet,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def tossups_heard(events: Iterable[Event]) -> list[str]:
    """The tossups a match's teams heard, in the order they were started, each once: every
    tossup started and not thrown out (one being read counts: it is being heard).

    A tossup may end more than once: a ruling that ended it can be taken back and another
    made (a second ``TossupEnded``), and a tossup that ended may then be thrown out. Its
    last end is the one in force (nothing undoes a throw-out), so the tossup counts once, or
    not at all once thrown out. The standings, the QBJ export and the analysis all count
    tossups heard (read) by this.
    """
    started: dict[str, None] = {}
    thrown_out: set[str] = set()
    for ev in events:
        if isinstance(ev, TossupStarted):
            started[ev.tossup_id] = None
        elif isinstance(ev, TossupEnded):
            if ev.outcome is TossupOutcome.THROWN_OUT:
                thrown_out.add(ev.tossup_id)
            else:
                thrown_out.discard(ev.tossup_id)
    return [t for t in started if t not in thrown_out]


def event_to_dict(event: Event) -> dict:
    """JSON-ready dict of an event (its ``type`` included)."""
    return event.model_dump(mode="json")


def event_from_dict(data: dict) -> Event:
    """Inverse of :func:`event_to_dict`; raises ``pydantic.ValidationError`` on bad data."""
    return EVENT_ADAPTER.validate_python(data)
