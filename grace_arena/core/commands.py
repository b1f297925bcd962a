"""Commands the match engine takes. Each has a ``kind`` matching the transition table."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from grace_arena.core.events import BuzzTiming, Ruling


class Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: ClassVar[str]


class Join(Command):
    """A human player joins a team (or rejoins: joining again with the same id is harmless)."""

    kind: ClassVar[str] = "join"
    team: str
    player: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=100)
    #: The most human players the match takes (None: no limit). Decided with the joins
    #: before it, so that joins arriving together cannot pass it.
    limit: int | None = Field(default=None, ge=0)


class StartTossup(Command):
    """Start the given tossup, or the next one not yet played in packet order."""

    kind: ClassVar[str] = "start_tossup"
    tossup_id: str | None = None


class Reveal(Command):
    """Reveal words up to index ``to`` (default: the next word). Revealing past the last word
    finishes the reading and opens the buzz window. A model whose buzz position is reached
    buzzes there, and the reveal stops at that word."""

    kind: ClassVar[str] = "reveal"
    to: int | None = None
    #: The reader's reveal, at the match's pace: refused once the match is paused (a pause
    #: committed while it waited its turn), unlike the moderator's step, which is allowed then.
    paced: bool = False
    #: The rest of the current clue (from where the reading is when it is decided), not ``to``.
    clue: bool = False
    #: What timed it (``events.WordSource``): the voice's word timing (``speech``), else the
    #: pace's clock for a paced reveal and the moderator's key for any other.
    source: Literal["speech", "key", "pace"] | None = None

    @property
    def word_source(self) -> str:
        return self.source or ("pace" if self.paced else "key")


class Buzz(Command):
    kind: ClassVar[str] = "buzz"
    team: str
    player: str
    #: The word index the buzz is credited with; default the current reveal position. The
    #: server may pass an earlier one (compensated arbitration), never a later one.
    word_index: int | None = None
    timing: BuzzTiming = Field(default_factory=BuzzTiming)
    answer: str | None = None  # typed answer, when the client sends it with the buzz


class GiveAnswer(Command):
    """An answer: to the buzz that has the floor, or with ``part`` to the bonus part up (the
    player's team's turn). A client says what it answered (``part``, ``bounceback``); one that
    is no longer up is refused, never taken for what came after it."""

    kind: ClassVar[str] = "answer"
    team: str
    player: str
    text: str = Field(max_length=500)
    part: int | None = Field(default=None, ge=1)  # a bonus part, 1-based
    bounceback: bool | None = None


class Rule(Command):
    """A ruling on what is up: the buzz with the floor, or in a bonus its current part. A
    client says what it ruled (``buzz_id``, or ``part`` and ``bounceback``): a ruling of
    something no longer up (a second key press, a timer that ruled first) is refused."""

    kind: ClassVar[str] = "rule"
    ruling: Ruling
    buzz_id: int | None = None
    part: int | None = Field(default=None, ge=1)  # a bonus part, 1-based
    bounceback: bool | None = None


class TimeUp(Command):
    """The answer time (or the buzz window after the end) ran out."""

    kind: ClassVar[str] = "time_up"


class Pause(Command):
    kind: ClassVar[str] = "pause"


class Resume(Command):
    kind: ClassVar[str] = "resume"


class SetPace(Command):
    """The moderator changes the reading pace (words per minute)."""

    kind: ClassVar[str] = "set_pace"
    wpm: int = Field(ge=30, le=1200)
    #: The words follow the moderator's keys alone (a word, a clue), the pace's clock
    #: standing by (True), or the pace again (False); None leaves it as it is.
    by_key: bool | None = None


class ResumeClock(Command):
    """The match is served again after a time nobody served it (a crash and a reopening, the
    record unavailable) from ``down_since``: a clock that was running then (the answer time,
    the buzz window) goes on with what was left. ``down_since`` is on the clock of the running
    deadline (the process that set it)."""

    kind: ClassVar[str] = "resume_clock"
    down_since: float
    reason: str = Field(default="restart", max_length=200)


class UndoRuling(Command):
    kind: ClassVar[str] = "undo"


class ThrowOut(Command):
    kind: ClassVar[str] = "throw_out"
    reason: str = "thrown out by the moderator"


class EndMatch(Command):
    kind: ClassVar[str] = "end_match"


class AnswerPart(Command):
    """A player of the team whose turn it is answers the current bonus part (the team's first
    answer stands; after a prompt, one more). ``part``/``bounceback``: as ``GiveAnswer``."""

    kind: ClassVar[str] = "answer_part"
    team: str
    player: str
    text: str = Field(max_length=500)
    part: int | None = Field(default=None, ge=1)
    bounceback: bool | None = None


class RulePart(Command):
    """The moderator rules the current bonus part for the team whose turn it is.
    ``part``/``bounceback``: as ``Rule``."""

    kind: ClassVar[str] = "rule_part"
    ruling: Ruling
    part: int | None = Field(default=None, ge=1)
    bounceback: bool | None = None


class ConsultPart(Command):
    """The team whose turn it is looks at the model's answer to the current part (consult
    rules); ``draft`` is what it had in mind before, if typed. ``player`` None: the moderator
    records it for the team."""

    kind: ClassVar[str] = "consult_part"
    team: str
    player: str | None = None
    draft: str | None = Field(default=None, max_length=500)
    part: int | None = Field(default=None, ge=1)


class PreAnswerPart(Command):
    """Consult rules with a pre-answer window: a human of the team that asked for the model's
    answer writes their own before it is revealed (one each; ``part`` as ``Rule``)."""

    kind: ClassVar[str] = "pre_answer_part"
    team: str
    player: str
    text: str = Field(max_length=500)
    part: int | None = Field(default=None, ge=1)


class AbstainPart(Command):
    """The team whose turn it is abstains on the current part (consult rules): scored at once,
    by whether the model was right. ``player`` None: the moderator records it."""

    kind: ClassVar[str] = "abstain_part"
    team: str
    player: str | None = None
    part: int | None = Field(default=None, ge=1)


class ThrowOutBonus(Command):
    """The bonus being played is thrown out: the packet's next unused extra bonus replaces
    it (past regulation's bonuses; the next unused one when there is none), or the unused
    bonus ``replacement`` the moderator picks."""

    kind: ClassVar[str] = "throw_out_bonus"
    reason: str = Field(default="thrown out by the moderator", max_length=200)
    replacement: str | None = Field(default=None, max_length=200)


class ReadPart(Command):
    """The moderator has read the bonus part up aloud: the format's conferral clock starts."""

    kind: ClassVar[str] = "read_part"


class CallTimeout(Command):
    """A team calls a timeout between tossups (as many as the format allows per match)."""

    kind: ClassVar[str] = "timeout"
    team: str


class Substitute(Command):
    """A player of the bench comes into the team's lineup for one in it (``player_out``;
    None: to a free place), at a moment the format allows (``grace_arena.core.lineups``)."""

    kind: ClassVar[str] = "substitute"
    team: str
    player_in: str = Field(min_length=1, max_length=64)
    player_out: str | None = Field(default=None, min_length=1, max_length=64)


class HalfTimeUp(Command):
    """A timed half's game clock ran out (the server's timer sends it at the clock's end)."""

    kind: ClassVar[str] = "half_time_up"


# Officiating (grace_arena.core.protests): protests and corrections of earlier cycles.


class FileProtest(Command):
    """A team protests a cycle's tossup, or with ``part`` (1-based) a part of its bonus, with
    the answer it gave and its reason. ``tossup``: the tossup's id, or its number among the
    tossups played (1-based). The match goes on."""

    kind: ClassVar[str] = "protest"
    team: str
    tossup: str = Field(min_length=1, max_length=100)
    part: int | None = Field(default=None, ge=1, le=100)
    answer: str = Field(default="", max_length=500)
    reason: str = Field(default="", max_length=500)
    by: Literal["moderator", "player"] = "moderator"
    player: str | None = None


class ResolveProtest(Command):
    """A TD resolves an open protest: upheld (the ruling protested is reversed, and the score
    with it) or denied (it stands)."""

    kind: ClassVar[str] = "resolve_protest"
    protest: int = Field(ge=1)  # the protest's number: the seq of its protest_filed
    decision: Literal["upheld", "denied"]
    by: str = Field(min_length=1, max_length=100)
    reason: str = Field(default="", max_length=500)


class CorrectRuling(Command):
    """Correct a ruling in force of an earlier cycle (``seq``: the ruling's, as the
    officiating view lists it): another ruling (correct or incorrect), or for a tossup
    another player (who buzzed). Points follow the match's rules."""

    kind: ClassVar[str] = "correct"
    seq: int = Field(ge=1)
    ruling: Ruling | None = None
    player: str | None = Field(default=None, max_length=64)
    by: Literal["moderator", "td"] = "moderator"
    reason: str = Field(default="", max_length=500)


# Hybrid teams (QANTA 2026: grace_arena.core.hybrid).


class SetAiModes(Command):
    """A hybrid team's AI players' buzz modes for the coming half: before the match, or once
    at halftime. ``modes``: AI id -> ``autonomous`` or ``semi``; ``ks``: AI id -> its
    autonomous gate K. ``player``: the captain who sets them (None: the moderator)."""

    kind: ClassVar[str] = "set_ai_modes"
    team: str
    modes: dict[str, Literal["autonomous", "semi"]] = Field(default_factory=dict)
    ks: dict[str, int] = Field(default_factory=dict)
    player: str | None = None


class MuteAi(Command):
    """A team's captain mutes one of its AI players for the rest of the match (irrevocable)."""

    kind: ClassVar[str] = "mute_ai"
    team: str
    ai: str
    player: str | None = None


class PressAi(Command):
    """A human player presses a semi AI teammate's key: the AI buzzes with its latest
    precomputed guess."""

    kind: ClassVar[str] = "press_ai"
    team: str
    ai: str
    player: str
    timing: BuzzTiming = Field(default_factory=BuzzTiming)


class SetBuzzSource(Command):
    """The moderator hands the buzz with the floor (a human's of a hybrid team) to a semi AI
    of the same team, which answers with its latest guess."""

    kind: ClassVar[str] = "buzz_source"
    ai: str
