"""The wire protocol: every message between the server and its clients, as typed models.

One module, used by the server, the moderator TUI and the tests; the browser clients follow
the same schema, documented in ``docs/protocol.md``. Every message is a JSON object with a
``type`` field. A client that sends something malformed or not allowed for its role gets an
``error`` reply; the connection stays open.

Times are seconds since the epoch (floats) on the sender's clock.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
    ValidationInfo,
    model_validator,
)
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from grace_arena.core.blanks import shows_nothing
from grace_arena.core.events import Ruling

PROTOCOL_VERSION = 1
Role = Literal["moderator", "player", "display"]
#: The largest id of a match: ids are INTEGER columns, 32-bit on PostgreSQL (which refuses to
#: compare them with a larger number), 64-bit on SQLite.
MAX_MATCH_ID = 2**31 - 1


class _Msg(BaseModel):
    # no NaN or infinity: 1e400 parses as inf, and neither has a place in the record or JSON
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _code(char: str) -> str:
    return f"U+{ord(char):04X}"


#: What no text from a client may hold: NUL, which a record in PostgreSQL cannot hold, and lone
#: surrogates, halves of a UTF-16 pair that JSON's escapes can carry (``"\ud800"``) but that
#: are no character and cannot be written as UTF-8 (the record, a reply) on any backend.
_NOT_TEXT = re.compile(r"[\x00\ud800-\udfff]")


def _well_formed(text: Any) -> Any:
    # before pydantic's own check of a string, which refuses a lone surrogate as "unable to
    # parse raw data as a unicode string"
    found = _NOT_TEXT.search(text) if isinstance(text, str) else None
    if found is None:
        return text
    if found[0] == "\x00":
        raise PydanticCustomError("malformed_text", "text may not contain NUL (U+0000) characters")
    raise PydanticCustomError(
        "malformed_text",
        "text may not contain a lone surrogate ({code}): half of an encoded character, not one",
        {"code": _code(found[0])},
    )


#: Text from a client that the record keeps or looks up (names, answers, titles...): refused
#: on every backend alike when it holds NUL or a lone surrogate (the pattern tells the OpenAPI
#: description, whose strings hold no surrogates; the validator says why).
Text = Annotated[
    str,
    BeforeValidator(_well_formed),
    Field(json_schema_extra={"pattern": r"^[^\x00]*$"}),
]

#: The longest name of a player (``join``, the survey) and of a team (a match's set-up).
PLAYER_NAME_MAX = 40
TEAM_NAME_MAX = 100

#: What a name may not hold, besides what no text may: control characters (category Cc: tab,
#: line feed, escape...) and the line and paragraph separators (a name is one line), and the
#: bidirectional embeddings, overrides and isolates, which reorder the text shown after them
#: (``"\u202eRed"`` shows as "deR", and so does whatever follows the name on the screen).
_NOT_IN_NAMES = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _invisible(char: str) -> bool:
    """Draws nothing by itself: whitespace, a combining mark (category M: it sits on the
    character before it), or what shows nothing (:mod:`grace_arena.core.blanks`: format
    characters, fillers, the blank Braille pattern...)."""
    return char.isspace() or unicodedata.category(char)[0] == "M" or shows_nothing(char)


def _name(text: str) -> str:
    """A name as it is kept: well-formed text (above), in Unicode's composed form (NFC: an
    accent typed as a letter and a combining mark is the same name as the accented letter),
    one space between words, no combining mark first (it would sit on whatever is shown before
    the name), and something visible in it."""
    text = _well_formed(text)
    found = _NOT_IN_NAMES.search(text)
    if found is not None:
        char = found[0]
        if char >= "\u202a":
            what = "a bidirectional control ({code}), which reorders the text shown after it"
        elif char >= "\u2028":
            what = "a line or paragraph separator ({code}): a name is one line"
        else:
            what = "a control character ({code})"
        raise PydanticCustomError(
            "malformed_name", f"a name may not contain {what}", {"code": _code(char)}
        )
    name = " ".join(unicodedata.normalize("NFC", text).split())
    start = 0
    while start < len(name) and (name[start] == " " or unicodedata.category(name[start])[0] == "M"):
        start += 1
    name = name[start:]
    if all(_invisible(char) for char in name):
        raise PydanticCustomError(
            "blank_name",
            "a name needs a visible character: spaces, zero-width and other invisible "
            "characters alone are no name",
        )
    return name


def _ranges(codes: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return ranges


def _class(ranges: list[tuple[int, int]]) -> str:
    def escaped(code: int) -> str:
        return (
            f"\\x{code:02x}"
            if code < 0x100
            else f"\\u{code:04x}"
            if code < 0x10000
            else f"\\U{code:08x}"
        )

    return "".join(escaped(a) if a == b else f"{escaped(a)}-{escaped(b)}" for a, b in ranges)


@functools.cache
def name_pattern() -> str:
    """The names ``Name`` accepts, as a regular expression for the OpenAPI description: no
    character a name may not hold, and one that is not invisible. Built from this Python's
    Unicode tables, like the validator, when the description is first asked for. Surrogates
    are left out: a JSON Schema string holds none, and validators that read the pattern as
    Unicode text (jsonschema-rs, which schemathesis uses) refuse to compile one."""
    refused, blank = [], []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        if _NOT_IN_NAMES.match(char):
            refused.append(code)
        elif _invisible(char):
            blank.append(code)
    anything = f"[^{_class(_ranges(refused))}]*"
    visible = f"[^{_class(_ranges(sorted(refused + blank)))}]"
    return f"^{anything}{visible}{anything}$"


def _name_schema(schema: dict[str, Any]) -> None:
    schema["pattern"] = name_pattern()


#: A player's or a team's name from a client. Refused: what ``Text`` refuses, control
#: characters, line separators, bidirectional controls, and a name with nothing visible. Kept
#: as ``_name`` says. Each field gives its length (:data:`PLAYER_NAME_MAX`, :data:`TEAM_NAME_MAX`).
Name = Annotated[
    str,
    BeforeValidator(_well_formed),
    AfterValidator(_name),
    Field(json_schema_extra=_name_schema),
]


#: What a title may not hold, besides what no text may: control characters (line feed,
#: carriage return, tab...) and the line and paragraph separators. A title is one line: files
#: that carry it a line each (SQBS) would read the rest as the next line.
_NOT_IN_TITLES = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    found = _NOT_IN_TITLES.search(text)
    if found is not None:
        char = found[0]
        what = (
            "a line break ({code}): a title is one line"
            if char in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
            else "a control character ({code})"
        )
        raise PydanticCustomError(
            "malformed_title", f"a title may not contain {what}", {"code": _code(char)}
        )
    return text


#: A title from a client (a match's, an event's): what ``Text`` takes, on one line.
Title = Annotated[
    str,
    BeforeValidator(_well_formed),
    AfterValidator(_one_line),
    Field(json_schema_extra={"pattern": r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"}),
]


def well_formed_title(text: str) -> str:
    """``text`` as a ``Title`` field takes it, for titles given another way (the command
    line); raises ``ValueError`` saying what is wrong."""
    return _one_line(_well_formed(text))


def well_formed_text(text: str) -> str:
    """``text`` as a ``Text`` field takes it, for text given another way (the command line);
    raises ``ValueError`` saying what is wrong."""
    return _well_formed(text)


def well_formed_name(text: str, *, max_length: int) -> str:
    """``text`` as a ``Name`` field keeps it, for names given another way (the command line);
    raises ``ValueError`` saying what is wrong."""
    name = _name(text)
    if len(name) > max_length:
        raise ValueError(f"a name has at most {max_length} characters ({len(name)} given)")
    return name


# ---------------------------------------------------------------------------------------------
# Client -> server


class Hello(_Msg):
    """First message on a connection: who is this."""

    type: Literal["hello"] = "hello"
    role: Role
    #: Players and displays; a moderator of an event's room may give the room's code instead
    #: of a match id (and then follows the room from match to match).
    join_code: Text | None = Field(default=None, max_length=32)
    match_id: int | None = Field(default=None, ge=1, le=MAX_MATCH_ID)  # moderators
    token: str | None = None  # moderator token, or a player's token to come back as that player
    version: int = PROTOCOL_VERSION
    #: Moderators: one controls a match at a time. ``take_over`` takes control from the one
    #: connected (who then watches); ``watch`` follows the match without acting. A moderator
    #: may say hello again on its connection: with ``take_over`` to take control (back).
    take_over: bool = False
    watch: bool = False
    #: Players and displays: the client takes a word revealed as a ``reveal`` (the change to
    #: the state it has: a few words) rather than a whole ``state`` (:class:`RevealMsg`).
    reveals: bool = False


class JoinTeam(_Msg):
    """A new player picks a team and a name (after ``hello`` without a token)."""

    type: Literal["join"] = "join"
    team: Text = Field(min_length=1, max_length=64)  # the team's id
    name: Name = Field(min_length=1, max_length=PLAYER_NAME_MAX)
    #: A name of the event's roster is taken only with its claim code (the organiser's).
    code: Text | None = Field(default=None, max_length=32)


#: A clock reading in seconds since the epoch, as a client gives it: finite and within ±1e12 s
#: (any clock, however wrong, of the last or next 30,000 years), so that the differences the
#: server takes of two readings stay finite (a pong at 1.7e308 made offsets that overflowed).
ClockTime = Annotated[float, Field(ge=-1e12, le=1e12, allow_inf_nan=False)]


class BuzzMsg(_Msg):
    type: Literal["buzz"] = "buzz"
    client_time: ClockTime | None = None  # when the button was pressed, on the client's clock


class AnswerMsg(_Msg):
    """A typed answer: to the buzz with the floor, or (``part``, 1-based, and ``bounceback``)
    the team's answer to the bonus part up. One for what is no longer up is refused."""

    type: Literal["answer"] = "answer"
    text: Text = Field(max_length=300)
    part: int | None = Field(default=None, ge=1, le=100)
    bounceback: bool | None = None


class ConsultMsg(_Msg):
    """Consult rules: the team whose turn it is looks at the model's answer to the part up
    (``part``, 1-based); ``draft`` is what the team had typed before, if anything. A player of
    that team sends it, or the moderator for the team (read aloud)."""

    type: Literal["consult"] = "consult"
    part: int | None = Field(default=None, ge=1, le=100)
    draft: Text | None = Field(default=None, max_length=300)


class PreAnswerMsg(_Msg):
    """Consult rules with a pre-answer window: a player of the team that asked for the model's
    answer writes their own answer to the part up (``part``, 1-based) before it is revealed."""

    type: Literal["pre_answer"] = "pre_answer"
    part: int | None = Field(default=None, ge=1, le=100)
    text: Text = Field(max_length=300)


class AbstainMsg(_Msg):
    """Consult rules: the team whose turn it is abstains on the part up (``part``, 1-based):
    scored at once. A player of that team sends it, or the moderator for the team."""

    type: Literal["abstain"] = "abstain"
    part: int | None = Field(default=None, ge=1, le=100)


class PressAiMsg(_Msg):
    """Hybrid teams (QANTA 2026): a player presses a semi AI teammate's key; the AI buzzes
    with its precomputed guess."""

    type: Literal["press_ai"] = "press_ai"
    ai: Text = Field(min_length=1, max_length=100)


class MuteAiMsg(_Msg):
    """Hybrid teams: a team's captain (a player of it), or the moderator for ``team``, mutes
    one of its AI players for the rest of the match (irrevocable)."""

    type: Literal["mute_ai"] = "mute_ai"
    ai: Text = Field(min_length=1, max_length=100)
    team: Text | None = Field(default=None, max_length=64)  # the moderator's: the AI's team


class BuzzSourceMsg(_Msg):
    """Hybrid teams (moderator): the buzz with the floor, a human's, goes to a semi AI of the
    same team, which answers with its latest guess (scored as the AI's)."""

    type: Literal["buzz_source"] = "buzz_source"
    ai: Text = Field(min_length=1, max_length=100)


class AiModesMsg(_Msg):
    """Hybrid teams: a team's AI players' modes for the coming half (before the match, or
    once at halftime): AI id -> autonomous or semi, and AI id -> its gate K. A player for
    their team, or the moderator for ``team``."""

    type: Literal["ai_modes"] = "ai_modes"
    modes: dict[Text, Literal["autonomous", "semi"]] = Field(default_factory=dict, max_length=8)
    ks: dict[Text, Annotated[int, Field(ge=1, le=10_000)]] = Field(
        default_factory=dict, max_length=8
    )
    team: Text | None = Field(default=None, max_length=64)


class Ping(_Msg):
    """Either side may ping; the other answers ``pong`` echoing ``sent``."""

    type: Literal["ping"] = "ping"
    sent: ClockTime


class Pong(_Msg):
    type: Literal["pong"] = "pong"
    sent: ClockTime  # the ping's ``sent``, echoed
    time: ClockTime  # the responder's clock when it answered


# Moderator commands


class StartTossupMsg(_Msg):
    type: Literal["start_tossup"] = "start_tossup"
    tossup_id: str | None = None


class RuleMsg(_Msg):
    """A ruling on what is up: the buzz with the floor, or in a bonus its current part. What
    it rules may be named (``buzz_id``, or ``part``, 1-based, and ``bounceback``): a ruling
    of what is no longer up (a key pressed twice, a timer that ruled first) is refused."""

    type: Literal["rule"] = "rule"
    ruling: Ruling
    buzz_id: int | None = Field(default=None, ge=1)
    part: int | None = Field(default=None, ge=1, le=100)
    bounceback: bool | None = None


class UndoMsg(_Msg):
    type: Literal["undo"] = "undo"


class ThrowOutBonusMsg(_Msg):
    """Throw out the bonus being played: the next unused one replaces it. (``rule`` during a
    bonus rules its current part; ``throw_out`` throws out the whole cycle.)"""

    type: Literal["throw_out_bonus"] = "throw_out_bonus"
    reason: Text = Field(default="thrown out by the moderator", max_length=200)
    #: The unused bonus to read instead (its id); None: the packet's next unused extra.
    replacement: str | None = Field(default=None, max_length=200)


class TimeoutMsg(_Msg):
    """A team calls a timeout (between tossups; as many as the format allows)."""

    type: Literal["timeout"] = "timeout"
    team: str = Field(min_length=1, max_length=64)


class SubstituteMsg(_Msg):
    """A player of the bench comes into the team's lineup for ``player_out`` (None: to a free
    place): before the first tossup, at halftime, before overtime or in a timeout."""

    type: Literal["substitute"] = "substitute"
    team: str = Field(min_length=1, max_length=64)
    player_in: str = Field(min_length=1, max_length=64)
    player_out: str | None = Field(default=None, min_length=1, max_length=64)


class ReadPartMsg(_Msg):
    """The moderator has read the bonus part up aloud: its conferral clock starts."""

    type: Literal["read_part"] = "read_part"


class ThrowOutMsg(_Msg):
    type: Literal["throw_out"] = "throw_out"
    reason: Text = Field(default="thrown out by the moderator", max_length=200)


class PauseMsg(_Msg):
    type: Literal["pause"] = "pause"


class ResumeMsg(_Msg):
    type: Literal["resume"] = "resume"


class StepMsg(_Msg):
    """Reveal the next word, or the rest of the current clue."""

    type: Literal["step"] = "step"
    unit: Literal["word", "clue"] = "word"


class SetPaceMsg(_Msg):
    type: Literal["set_pace"] = "set_pace"
    wpm: int = Field(ge=30, le=1200)
    #: The words follow the moderator's keys alone (true: the pace's clock stands by), or
    #: the pace again (false); absent: as they were.
    by_key: bool | None = None


class EndMatchMsg(_Msg):
    type: Literal["end_match"] = "end_match"


class ProtestMsg(_Msg):
    """A team protests a cycle's tossup (its id, or its number among the tossups played), or
    with ``part`` (1-based) a part of its bonus, with the answer it gave and its reason. The
    match goes on; a TD resolves it after the game."""

    type: Literal["protest"] = "protest"
    #: The team protesting: the moderator says which; a player's is their own (and may be
    #: left out).
    team: str | None = Field(default=None, min_length=1, max_length=64)
    tossup: str = Field(min_length=1, max_length=100)
    part: int | None = Field(default=None, ge=1, le=100)
    answer: Text = Field(default="", max_length=500)
    reason: Text = Field(default="", max_length=500)


class CorrectMsg(_Msg):
    """Correct a ruling in force of an earlier cycle (``seq``: its number in
    ``protests.cycles``): another ruling, or for a tossup another player (who buzzed)."""

    type: Literal["correct"] = "correct"
    seq: int = Field(ge=1)
    ruling: Literal["correct", "incorrect"] | None = None
    player: str | None = Field(default=None, max_length=64)
    reason: Text = Field(default="", max_length=500)


ClientMessage = Annotated[
    Hello
    | JoinTeam
    | BuzzMsg
    | AnswerMsg
    | Ping
    | Pong
    | StartTossupMsg
    | RuleMsg
    | UndoMsg
    | ThrowOutMsg
    | ThrowOutBonusMsg
    | ConsultMsg
    | PreAnswerMsg
    | AbstainMsg
    | PauseMsg
    | ResumeMsg
    | StepMsg
    | SetPaceMsg
    | EndMatchMsg
    | TimeoutMsg
    | ReadPartMsg
    | ProtestMsg
    | CorrectMsg
    | SubstituteMsg
    | PressAiMsg
    | MuteAiMsg
    | AiModesMsg
    | BuzzSourceMsg,
    Field(discriminator="type"),
]
CLIENT_MESSAGE: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
MODERATOR_ONLY = frozenset(
    {
        "start_tossup",
        "rule",
        "undo",
        "throw_out",
        "throw_out_bonus",
        "pause",
        "resume",
        "step",
        "set_pace",
        "end_match",
        "timeout",
        "read_part",
        "correct",
        "substitute",
        "buzz_source",
    }
)
PLAYER_ONLY = frozenset({"join", "buzz", "answer", "pre_answer", "press_ai"})
#: Sent by a player who joined, for their team, or by the moderator in control, for the team
#: whose turn it is (a protest: the team it names; a player's where the match takes protests
#: from phones).
PLAYER_OR_MODERATOR = frozenset({"consult", "abstain", "protest", "mute_ai", "ai_modes"})


# ---------------------------------------------------------------------------------------------
# Server -> client


class AiView(_Msg):
    """An AI player of a hybrid team (QANTA 2026): its model, weight class, buzz mode and
    autonomous gate K."""

    id: str
    name: str
    model: str
    weight_class: str
    mode: Literal["autonomous", "semi", "muted"]
    k: int


class TeamView(_Msg):
    id: str
    name: str
    kind: Literal["human", "model"]
    #: A hybrid team's AI players (QANTA 2026), seen by everyone.
    ais: list[AiView] = Field(default_factory=list)
    players: dict[str, str] = Field(default_factory=dict)  # id -> name (moderator only)
    size: int = 0  # how many players have joined the team
    score: int = 0
    locked_out: bool = False
    #: Timeouts the team may still call in this match (None: no limit).
    timeouts_left: int | None = None
    #: The names of the event's roster on this team (the join page lists them to pick).
    roster: list[str] = Field(default_factory=list)
    #: The ids of the players in the team's lineup now, for the moderator (None: the format
    #: fields every player who joins; ``grace_arena.core.lineups``).
    lineup: list[str] | None = None


class FloorView(_Msg):
    buzz_id: int
    team: str
    player: str
    player_name: str
    kind: Literal["human", "model"]
    word_index: int
    clue_index: int | None = None
    answer: str | None = None  # typed answer or model guess (hidden from displays until ruled)
    suggestion: str | None = None  # moderator only
    prompt_question: str | None = None  # moderator only
    confidence: float | None = None  # a model's confidence (moderator only)


class ModelGuessView(_Msg):
    """What a model player thinks at the current clue (moderator only)."""

    team: str
    model: str
    buzz_word: int | None  # where it will buzz on this tossup (None: never)
    guess: str | None = None
    confidence: float | None = None


class ConfidencePoint(_Msg):
    """One step of a model player's precomputed trajectory: its confidences once the prefix
    ending at ``word`` has been read."""

    word: int  # the prefix's last word (0-based)
    logit: float | None = None
    verbal: float | None = None
    #: Whether its guess there was right (the judge's verdict when it was precomputed): only
    #: once the tossup is over.
    correct: bool | None = None


class ModelCurveView(_Msg):
    """A model player's confidence over the words read, against its buzz threshold. Its guess
    is hidden until its buzz is ruled or the tossup is over (a spoiler guard)."""

    team: str
    name: str
    model: str
    confidence: str  # the kind its threshold applies to: logit or verbal
    threshold: float
    points: list[ConfidencePoint]  # the steps read so far (all of them once it is over)
    buzz_word: int | None = None  # where it buzzed, once it has
    guess: str | None = None  # at its buzz (once ruled) or where the reading stopped
    guess_confidence: float | None = None
    correct: bool | None = None  # the ruling of its buzz, or the judge's verdict on its guess


class BuzzMark(_Msg):
    """A buzz that took the floor on the tossup, at its word, with its ruling once given."""

    word: int
    team: str
    kind: Literal["human", "model"]
    ruling: str | None = None


class CurvesView(_Msg):
    """The model players' view of the tossup (GRACE's figure 3): each one's confidence
    against its threshold, and the buzzes of the room on the same axis of words.

    Displays get it during the reading only in an exhibition (``MatchSettings.exhibition``),
    and in every match once the tossup is over; players never; the moderator always.
    """

    tossup: str  # as the role knows it (``tossup-N`` for displays)
    n_words: int
    position: int  # the last word read
    over: bool  # the tossup has ended: whole trajectories
    curves: list[ModelCurveView]
    buzzes: list[BuzzMark] = Field(default_factory=list)


class TossupView(_Msg):
    id: str  # the packet's id for the moderator; ``tossup-N`` for players and displays
    number: int  # 1-based number in the match
    category: str | None = None
    n_words: int
    clue_ends: list[int]
    power_index: int | None = None
    position: int  # last revealed word, -1 before the first
    words: list[str] | None = None  # the revealed words (all words for the moderator)
    answer: str | None = None  # the answer line: moderator always, others once it is over
    #: Moderator only: word index -> what the packet has after that word that is not a word,
    #: for reading aloud: a pronunciation guide with the punctuation after it
    #: (``("ras-KOHL-nee-kuff"),``), a lone dash. The power mark is ``power_index``.
    guides: dict[int, str] = Field(default_factory=dict)


class BonusPartView(_Msg):
    number: int  # 1-based
    value: int
    difficulty: str | None = None
    #: The part's text: the moderator's always; others' once the part is up (or over).
    text: str | None = None
    #: The answer line: the moderator's always; others' once the part is ruled.
    answer: str | None = None
    #: Once ruled: the ruling in force for the controlling team (and a bounceback's).
    ruling: str | None = None
    points: int = 0
    bounceback_team: str | None = None  # the team that answered it on a bounceback
    bounceback_points: int = 0
    #: Consult rules, once ruled: "own", "consult" or "abstain".
    choice: str | None = None


class ConsultedView(_Msg):
    """Consult rules: the model's answer to the current part, which the team looked at (the
    room sees it too, as on a projector)."""

    model: str
    guess: str | None = None  # None: the model has no answer to this part
    confidence: float | None = None
    draft: str | None = None  # moderator only: what the team had typed before


class PreAnswerView(_Msg):
    """Consult rules with a pre-answer window: the team whose turn it is asked for the
    model's answer; each of its players writes their own until ``deadline`` (server clock),
    when the model's is revealed."""

    deadline: float | None  # None: the match is paused (``seconds_left`` stand still)
    seconds_left: float
    written: int  # how many of the team's players have written
    players: int  # the team's players
    #: moderator only: what each wrote (player's name -> answer)
    answers: dict[str, str] | None = None


class BonusView(_Msg):
    """The bonus of this cycle: being played, or just played (its results stay on screen)."""

    id: str  # the packet's id for the moderator; ``bonus-N`` for players and displays
    number: int  # 1-based number of the bonus in the match
    category: str | None = None
    leadin: str
    team: str  # the controlling team
    part: int  # the current part, 0-based (the last one once the bonus is over)
    turn: str | None = None  # whose turn it is on the current part (None: the bonus is over)
    bounceback: bool = False
    parts: list[BonusPartView]
    #: The turn's typed answer: the room's (said aloud in a room, as the name of who typed
    #: it); the judge's suggestion is the moderator's alone.
    answer: str | None = None
    answered_by: str | None = None  # who typed it (a player's name)
    suggestion: str | None = None  # moderator only: the judge's suggestion
    prompt_question: str | None = None  # moderator only
    points: dict[str, int] = Field(default_factory=dict)  # this bonus's points by team
    done: bool = False
    prompted: bool = False  # the turn's answer was prompted: the team says (types) more
    #: Consult rules: the team whose turn it is may consult the model or abstain, for these
    #: points (a part answered alone and right, right after consulting, a right abstention).
    consult: bool = False
    consult_points: tuple[int, int, int] | None = None
    consulted: ConsultedView | None = None  # the model's answer, once the team looked
    #: The players' own answers being written before the model's is revealed.
    pre_answer: PreAnswerView | None = None


class ReadingView(_Msg):
    mode: Literal["read_aloud", "screen"]
    wpm: int
    #: Words are being read now (a tossup's reading, not paused): as the record says.
    running: bool
    #: The words follow the moderator's keys alone (``set_pace`` ``by_key``): the projector
    #: shows no word the reader has not reached.
    by_key: bool = False
    #: The match is read by the voice (``MatchSettings.voice``).
    voice: bool = False
    #: Why the voice is not heard although asked for (espeak-ng missing), in words.
    voice_note: str | None = None


class EventView(_Msg):
    """Where a match of an event stands in it (players, displays and the moderator)."""

    name: str
    title: str
    room: str
    join_code: str  # the room's: the same from round to round
    round: int
    rounds: int
    #: The match is over and the room's next one cannot start yet: a team of it still plays
    #: an earlier round elsewhere (what it waits for, in words).
    waiting: str | None = None


class RecordStatus(_Msg):
    """The record is not taking the room's changes now (another process holds it locked, its
    server restarts, the connection to it dropped): the room holds where it is, and tries
    again by itself."""

    message: str  # e.g. "record unavailable — retrying (database is locked)"
    since: float | None = None  # when it began (server clock)


class MatchResult(_Msg):
    """How a match ended (every role sees it once the match is over)."""

    winner: str | None  # the team ahead (its id); None: a tie at the top, or nothing played
    #: In words: "Red won 240–180", "Red and Blue tied 100–100", "Red won 120–100 in
    #: overtime", "Red won 30–0 (ended after 3 of 20 tossups)".
    text: str
    scores: dict[str, int]  # team id -> final points
    tied: bool = False
    overtime: bool = False
    early: bool = False  # ended before its tossups (or its regulation) were all played


class RulingInForceView(_Msg):
    """A ruling in force, as the officials may correct it (``seq``: what ``correct`` names)."""

    seq: int
    team: str
    player: str | None = None  # a tossup's (its id); None for a bonus part
    player_name: str | None = None
    ruling: str  # correct | incorrect
    points: int
    part: int | None = None  # a bonus part, 1-based
    bounceback: bool = False
    corrected: bool = False  # a correction of an earlier ruling


class CycleView(_Msg):
    """A tossup played (numbered as played) and its bonus: their rulings in force."""

    number: int
    tossup_id: str
    thrown_out: bool = False
    rulings: list[RulingInForceView] = Field(default_factory=list)


class ProtestView(_Msg):
    number: int  # what a TD resolves it by
    team: str
    question: str  # "tossup 3", "bonus part 2 of tossup 3"
    answer: str = ""
    reason: str = ""
    status: Literal["open", "upheld", "denied"] = "open"
    decided_by: str | None = None
    #: In words, how it stands: for an open one, what upholding it would do to the result.
    text: str = ""
    changes_result: bool = False  # an open one: upholding it would change the result


class OfficiatingView(_Msg):
    """The moderator's: the cycles played with their rulings in force (to correct one), and
    the match's protests."""

    cycles: list[CycleView] = Field(default_factory=list)
    protests: list[ProtestView] = Field(default_factory=list)


class MatchView(_Msg):
    id: int
    title: str
    join_code: str
    phase: str
    paused: bool
    tossups_total: int
    tossups_played: int
    tossup_ids: list[str]  # the match's tossups (the moderator's state only)
    #: The moderator may undo a ruling now (the last one of this tossup not yet undone).
    can_undo: bool = False
    #: The format (acf, pace, naqt, grace, custom) and its rules in one line.
    format: str | None = None
    rules: str | None = None
    bonuses: bool = False  # tossup–bonus cycles
    regulation_tossups: int | None = None
    tossups_heard: int = 0  # played and not thrown out (regulation counts these)
    #: Why the tossup just answered earns no bonus, where the rules play bonuses.
    no_bonus: str | None = None
    overtime: bool = False  # past regulation
    #: Where the match stands by its format (``grace_arena.core.officiating.Stage``):
    #: playing, halftime, tied (overtime proposed), overtime, sudden_death, decided.
    stage: str = "playing"
    #: The same in words for every screen: "Halftime (after 10 of 20 tossups)", "Tied after
    #: regulation: overtime (sudden death, no bonuses)".
    stage_text: str | None = None
    tossups_thrown_out: int = 0  # tossups thrown out (each replaced by another)
    #: Seconds to confer on a bonus part once it is read aloud (None: no conferral clock).
    conferral_time: float | None = None
    #: Players may file protests from their phones (``MatchSettings.phone_protests``).
    phone_protests: bool = False
    result: MatchResult | None = None  # once the match has ended


class GameClockView(_Msg):
    """A timed half's game clock (NAQT's option; ``grace_arena.core.officiating``)."""

    half: int  # 1 or 2
    length: float  # seconds in each half
    #: Running: when it runs out (server clock); None while it stands still.
    ends: float | None = None
    left: float  # seconds left (running: at the state's ``server_time``)
    expired: bool = False  # time is up: the cycle in play is finished, then the half ends


class TimeoutView(_Msg):
    """A team's timeout, on until ``ends`` (server clock) or the next tossup."""

    team: str
    number: int  # the team's 1st, 2nd... of the match
    ends: float


class State(_Msg):
    """The whole state as this client's role may see it; sent on connect and after every
    change. Every player gets the same state; their own identity came in ``joined``."""

    type: Literal["state"] = "state"
    role: Role
    match: MatchView
    teams: list[TeamView]
    tossup: TossupView | None = None
    floor: FloorView | None = None
    bonus: BonusView | None = None
    deadline: float | None = None
    #: While the match is paused: the seconds left on the clock that stands still (it runs
    #: again from the resume with that much; ``deadline`` is null meanwhile).
    held: float | None = None
    #: The bonus part's conferral clock once the part is read aloud: when it runs out (the
    #: moderator asks for the answer then), or while paused the seconds it has left.
    conferral: float | None = None
    conferral_held: float | None = None
    timeout: TimeoutView | None = None  # a timeout on now
    #: A timed half's game clock (None: untimed halves, or overtime).
    game_clock: GameClockView | None = None
    reading: ReadingView
    event: EventView | None = None  # a match of an event's schedule
    #: Set while the record is not taking changes (the room holds at its word meanwhile).
    record: RecordStatus | None = None
    models: list[ModelGuessView] = Field(default_factory=list)  # moderator only
    #: The model players' confidence curves: see :class:`CurvesView` for who gets them when.
    curves: CurvesView | None = None
    last_events: list[dict[str, Any]] = Field(default_factory=list)  # this tossup's log (moderator)
    #: The cycles played with their rulings in force, and the protests (moderator only).
    officiating: OfficiatingView | None = None
    #: The events of the change this state follows, as this role may see them (empty in the
    #: snapshot sent on connect). One message per change: the lock-out and its cause arrive
    #: together.
    events: list[dict[str, Any]] = Field(default_factory=list)
    server_time: float


class RevealMsg(_Msg):
    """Words revealed, as the change to the last state this client got: sent instead of a
    whole ``state`` to a player or display that said ``reveals`` in its hello, for a change
    that only reveals words. The client's state becomes that state with ``tossup.position``
    = ``position``, ``tossup.words`` extended by ``words`` (when it has words), and
    ``server_time``, ``game_clock``, ``timeout`` and ``events`` (empty) as given: exactly the
    ``state`` the server would have sent. It applies to a state whose tossup is ``tossup``
    at position ``after``; the server sends it to no other (a client that has another
    reconnects, and gets a whole state)."""

    type: Literal["reveal"] = "reveal"
    tossup: str  # the tossup's id as the client knows it (``tossup-N``)
    after: int  # the position of the state it applies to
    position: int  # the last word now revealed
    words: list[str] | None = None  # words after+1..position; None: the client shows no words
    game_clock: GameClockView | None = None
    timeout: TimeoutView | None = None
    server_time: float


def apply_reveal(state: dict[str, Any], reveal: dict[str, Any]) -> dict[str, Any] | None:
    """The state (as JSON) a client has after ``reveal`` (as JSON), or None when the reveal
    does not apply to ``state`` (another tossup or position). What the pages do
    (``buzzer_client/common.js``), for clients written in Python."""
    tossup = state.get("tossup")
    if not tossup or tossup["id"] != reveal["tossup"] or tossup["position"] != reveal["after"]:
        return None
    words = tossup.get("words")
    if words is not None and reveal.get("words") is not None:
        words = [*words, *reveal["words"]]
    return {
        **state,
        "tossup": {**tossup, "position": reveal["position"], "words": words},
        "game_clock": reveal.get("game_clock"),
        "timeout": reveal.get("timeout"),
        "events": [],
        "server_time": reveal["server_time"],
    }


class BuzzResult(_Msg):
    """Sent to the buzzing player only: what became of the buzz."""

    type: Literal["buzz_result"] = "buzz_result"
    buzz_id: int
    outcome: Literal["won", "lost_race", "locked_out", "not_live"]
    word_index: int
    margin: float | None = None  # lost_race: seconds behind the winner


class Welcome(_Msg):
    """Reply to ``hello``: what the client may do next (a ``state`` follows)."""

    type: Literal["welcome"] = "welcome"
    role: Role
    match_id: int
    needs_join: bool = False  # a player without a token must send ``join`` next
    watching: bool = False  # a moderator who may follow but not act
    teams: list[TeamView] = Field(default_factory=list)
    #: What the code opened, for the join page: the match's title, and for a room of an
    #: event the event, the room and the round (the holder of the code may know them).
    title: str | None = None
    event: EventView | None = None
    #: Whether a new player may join under a name of their own (not on the roster).
    walk_ins: bool = True


class Joined(_Msg):
    """A player joined: keep ``token`` to come back as the same player after a drop."""

    type: Literal["joined"] = "joined"
    player: str
    team: str
    name: str
    token: str


class NextMatch(_Msg):
    """The room moved on to its next match (or, for a player, the team plays elsewhere now):
    say ``hello`` again on this connection, to ``join_code`` with the same token."""

    type: Literal["next_match"] = "next_match"
    join_code: str
    room: str
    message: str


class Waiting(_Msg):
    """A player whose team has no match in this room now (it plays elsewhere later, or has a
    bye): the connection stays open and gets ``next_match`` when the team's next match opens
    on this server."""

    type: Literal["waiting"] = "waiting"
    team: str
    message: str
    #: The team has played all its matches: nothing more comes (the page says so, and does not
    #: ask to be kept open).
    done: bool = False


class Control(_Msg):
    """To a moderator who watches a match: whether another moderator controls it. Sent after
    the watcher's ``welcome`` and ``state``, and again whenever that changes (another
    moderator takes control, or the one in control leaves). A ``hello`` with ``take_over``,
    on the same connection, takes control."""

    type: Literal["control"] = "control"
    controlled: bool  # False: no moderator controls the match now
    message: str


class EventMsg(_Msg):
    """One event of the record, as this client may see it. The server sends events inside
    ``state.events``; this standalone form is kept for clients that read a stored log."""

    type: Literal["event"] = "event"
    event: dict[str, Any]


class ErrorMsg(_Msg):
    type: Literal["error"] = "error"
    code: Literal[
        "bad_message",
        "too_large",
        "rate_limited",
        "unauthorized",
        "not_allowed",
        "illegal",
        "not_found",
        "timeout",
        "server_error",
        "in_use",
        "taken_over",
        "elsewhere",  # the match is served by another server process (``url`` says where)
        "stopping",  # this server process is stopping: reconnect (here, or to ``servers``)
    ]
    message: str
    in_reply_to: str | None = None  # the ``type`` of the offending message, when known
    #: ``elsewhere``: the address of the server process that serves the match now (say
    #: ``hello`` there, as after a dropped connection), when known.
    url: str | None = None


class Servers(_Msg):
    """The other server processes that share this one's record and may serve this client's
    match (the event's, for a room of an event): where to say ``hello`` when this server
    cannot be reached (it crashed) — one of them takes its matches over. Sent after
    ``welcome``, and again when the list changes."""

    type: Literal["servers"] = "servers"
    urls: list[str]


class VoiceCue(_Msg):
    """The reader's voice, to the room's displays (a match read by the voice): play the
    audio at ``url`` from ``from_ms`` (to ``until_ms``, or its end) ``delay`` seconds after
    this message arrives; the server reveals word ``i`` when the audio reaches ``onsets_ms[i]``.
    A cue replaces the one before it; the voice stops, at once, when the state says the
    reading is not running (a buzz, a pause), and the next cue resumes it where it stopped."""

    type: Literal["voice"] = "voice"
    url: str
    from_ms: int
    until_ms: int | None = None
    delay: float
    #: The first word this cue reads and each word's onset in the audio (milliseconds).
    first_word: int
    onsets_ms: list[int]
    #: A bonus part's voice (0-based part): it stops when that part is no longer up, not
    #: with the tossup's reading.
    bonus_part: int | None = None


ServerMessage = Annotated[
    Welcome
    | Joined
    | State
    | RevealMsg
    | BuzzResult
    | NextMatch
    | Waiting
    | Control
    | Servers
    | VoiceCue
    | EventMsg
    | ErrorMsg
    | Ping
    | Pong,
    Field(discriminator="type"),
]
SERVER_MESSAGE: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)


def parse_client(raw: str | bytes) -> ClientMessage:
    """Parse one client message; raises ``pydantic.ValidationError`` (a ``ValueError``)."""
    return CLIENT_MESSAGE.validate_json(raw)


def parse_server(raw: str | bytes) -> ServerMessage:
    return SERVER_MESSAGE.validate_json(raw)


# ---------------------------------------------------------------------------------------------
# HTTP API bodies (match set-up)


class AiSetup(_Msg):
    """An AI player of a hybrid team (QANTA 2026): a model in the record (imported outputs or
    precomputed), its name on the screens, and its weight class (default: the one it was
    imported with)."""

    model: Text = Field(min_length=1, max_length=200)
    name: Name | None = Field(default=None, max_length=TEAM_NAME_MAX)
    weight_class: Literal["lightweight", "midweight", "heavyweight"] | None = None


class TeamSetup(_Msg):
    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    name: Name = Field(min_length=1, max_length=TEAM_NAME_MAX)
    kind: Literal["human", "model"] = "human"
    model: Text | None = None  # a precomputed model in the record
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    confidence: Literal["logit", "verbal"] = "logit"
    #: A human team's AI players (a hybrid team, QANTA 2026: ``--rules qanta26``).
    ais: list[AiSetup] = Field(default_factory=list, max_length=8)


@dataclass(frozen=True)
class _Within:
    """A match setting's range: told to the OpenAPI description (``minimum``, ``maximum``) and
    in the refusal, which names the field and the whole range (pydantic's names one bound)."""

    low: int
    high: int
    unit: str
    otherwise: str = ""  # what else the field may be
    #: The field's name, for the refusal (pydantic before 2.12 does not tell a validator of
    #: an annotation the name of its field).
    field: str = ""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.with_info_wrap_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return {**handler(schema), "minimum": self.low, "maximum": self.high}

    def _check(
        self, value: Any, handler: core_schema.ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> float:
        # a number is checked before it is parsed too: -1e20 as an integer is refused for its
        # size, in words that do not say the range
        if isinstance(value, int | float) and not isinstance(value, bool):
            self._refuse_outside(value, info)
        value = handler(value)
        self._refuse_outside(value, info)
        return value

    def _refuse_outside(self, value: float, info: ValidationInfo) -> None:
        if not self.low <= value <= self.high:
            raise PydanticCustomError(
                "out_of_range",
                "{field} must be from {low} to {high} {unit}{otherwise}, not {value}",
                {
                    "field": info.field_name or self.field or "the value",
                    "low": self.low,
                    "high": self.high,
                    "unit": self.unit,
                    "otherwise": self.otherwise,
                    "value": f"{value:g}",
                },
            )


class MatchSettings(_Msg):
    """How a match is read and scored: a match's set-up, and an event's defaults for its
    matches (``grace-arena event create``).

    The ranges leave room for any quizbowl format and none for settings that break a match.
    They are checked where settings come in, not by the engine's ``ScoringRules``, so that a
    record made before them still replays.
    """

    reading_mode: Literal["read_aloud", "screen"] = "read_aloud"
    #: 30 words a minute is dictation; 1200 is four times a fast reader's pace.
    wpm: Annotated[int, _Within(30, 1200, "words a minute", field="wpm")] = 180
    #: A tossup is worth 10 in NAQT and ACF rules (4 in Science Bowl), a power 15 (20 for some
    #: superpowers), a neg -5; 0 disables negs. No format gives a correct answer nothing, or
    #: more than 100; within these, scores stay far from what the record's integers hold.
    correct_points: Annotated[int, _Within(1, 100, "points", field="correct_points")] = 10
    power_points: (
        Annotated[int, _Within(1, 100, "points", " or none (no powers)", field="power_points")]
        | None
    ) = 15
    neg_points: Annotated[int, _Within(-100, 0, "points", field="neg_points")] = -5
    negs_only_before_end: bool = True
    #: Only the first team to answer a tossup incorrectly is negged (NAQT's and ACF's rule,
    #: on in those formats); off, every incorrect interrupt is (GRACE's game).
    neg_first_team_only: bool = False
    rebuzz: bool = True
    #: Quizbowl asks a player to begin answering within a few seconds of buzzing; typing on a
    #: phone takes longer (10 s by default on screen). Under 1 s every buzz times out before
    #: an answer can arrive; past 2 minutes the room waits on one player. None: no limit (the
    #: moderator rules). Read aloud, none unless given: the player answers out loud and only
    #: the moderator knows when (a clock that ran out would rule a neg nobody ruled).
    answer_time: (
        Annotated[float, _Within(1, 120, "seconds", " or none (no limit)", field="answer_time")]
        | None
    ) = 10.0
    #: Moderators wait a few seconds after the last word before calling time (5 s by default);
    #: 0 ends the tossup at its last word. Past a minute, a tossup nobody buzzes on stalls
    #: the match.
    buzz_window: Annotated[float, _Within(0, 60, "seconds", field="buzz_window")] = 5.0
    compensated: bool = False  # hold each race for a short window, award the earliest press
    #: An exhibition: the room display draws each model player's confidence live, as the
    #: words are read. Off, its trajectory is drawn once the tossup has ended (players who
    #: see a rising curve know when to buzz: not what a study of their buzzes should measure).
    exhibition: bool = False
    #: Players may protest a tossup or a bonus part their team played from their phone (with
    #: the answer given and the reason); otherwise only the moderator files protests.
    phone_protests: bool = False
    #: The reader's voice: the server speaks each question (espeak-ng) on the room display,
    #: and the words are revealed as they are said (``grace_arena.server.voice``). Where the
    #: engine is missing, the words are shown at ``wpm`` and the display says why.
    voice: bool = False
    #: A format's rules (``grace_arena.core.formats``: acf, pace, naqt, grace). A rule
    #: given beside it (present in the JSON, even at its default) replaces the format's, and
    #: the match's format is then "custom" if it differs; a rule not given is the format's.
    #: None: GRACE's game with the rules given.
    format: Literal["grace", "acf", "pace", "naqt", "qanta26", "custom"] | None = None
    #: Tossup–bonus cycles (the packet's bonuses); bouncebacks to the other team.
    bonuses: bool = False
    bouncebacks: bool = False
    #: Seconds a team has for a bonus part on screen (read aloud, the moderator rules).
    bonus_answer_time: (
        Annotated[
            float,
            _Within(1, 120, "seconds", " or none (no limit)", field="bonus_answer_time"),
        ]
        | None
    ) = 10.0
    #: Tossups in regulation: past them, overtime (no bonuses unless ``overtime_bonuses``).
    regulation_tossups: (
        Annotated[int, _Within(1, 100, "tossups", " or none", field="regulation_tossups")] | None
    ) = None
    overtime_bonuses: bool = False
    #: Officiating (a format's own unless given; ``grace_arena.core.officiating``): overtime's
    #: tossups before sudden death, timeouts per team per match (none: no limit) and their
    #: seconds, halftime after this many tossups, seconds to confer on a part read aloud.
    overtime_tossups: Annotated[int, _Within(1, 10, "tossups", field="overtime_tossups")] = 1
    timeouts: (
        Annotated[int, _Within(0, 10, "timeouts", " or none (no limit)", field="timeouts")] | None
    ) = None
    timeout_seconds: Annotated[float, _Within(5, 300, "seconds", field="timeout_seconds")] = 30.0
    halftime_after: (
        Annotated[int, _Within(1, 100, "tossups", " or none", field="halftime_after")] | None
    ) = None
    conferral_time: (
        Annotated[float, _Within(1, 60, "seconds", " or none (no clock)", field="conferral_time")]
        | None
    ) = None
    #: The players a team fields at once (the format's: ACF, PACE, NAQT 4; none: everyone).
    lineup_size: (
        Annotated[int, _Within(1, 20, "players", " or none (everyone)", field="lineup_size")] | None
    ) = None
    #: Timed halves (NAQT's option): seconds of game clock in each half (540: 9 minutes).
    half_time: (
        Annotated[float, _Within(5, 3600, "seconds", " or none (untimed)", field="half_time")]
        | None
    ) = None
    #: GRACE Arena's consult rules on bonus parts (not QANTA 2026's, which are the qanta26
    #: format's): the model a team may consult (its bonus
    #: parts precomputed in the record), and the points of each choice.
    consult_model: Text | None = Field(default=None, max_length=200)
    consult_points: tuple[
        Annotated[int, _Within(0, 100, "points", field="consult_points")],
        Annotated[int, _Within(0, 100, "points", field="consult_points")],
        Annotated[int, _Within(0, 100, "points", field="consult_points")],
    ] = (15, 10, 5)
    #: With a model to consult: seconds each human of the team has to write an answer of
    #: their own, once the team asks for the model's, before it is revealed (QANTA 2026: 2);
    #: None: revealed at once.
    consult_pre_answer: (
        Annotated[float, _Within(1, 60, "seconds", " or none", field="consult_pre_answer")] | None
    ) = None

    #: The fields that are rules of the game (the others say how the match is read).
    SCORING: ClassVar[tuple[str, ...]] = (
        "correct_points", "power_points", "neg_points", "negs_only_before_end",
        "neg_first_team_only", "rebuzz", "answer_time", "buzz_window", "bonuses", "bouncebacks",
        "bonus_answer_time", "regulation_tossups", "overtime_bonuses", "overtime_tossups",
        "timeouts", "timeout_seconds", "halftime_after", "conferral_time", "lineup_size",
        "half_time",
    )  # fmt: skip

    @model_validator(mode="before")
    @classmethod
    def _no_clock_read_aloud(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("reading_mode", "read_aloud") == "read_aloud" and "answer_time" not in data:
            return {**data, "answer_time": None}
        return data

    def scoring(self) -> dict[str, Any]:
        """The rules given explicitly (a format's own apply to the others); with a model to
        consult, the consult rules (own, consult, abstain points), which play bonuses."""
        rules = {k: getattr(self, k) for k in self.SCORING if k in self.model_fields_set}
        if self.consult_model:
            own, consult, abstain = self.consult_points
            rules["consult"] = {
                "own_points": own, "consult_points": consult, "abstain_points": abstain,
                "pre_answer_time": self.consult_pre_answer,
            }  # fmt: skip
            rules["bonuses"] = True
        return rules


class MatchSetup(MatchSettings):
    """``POST /api/matches`` (server token): a new match on a loaded packet."""

    packet_id: Text
    title: Title | None = None
    tossup_ids: list[Text] | None = None
    teams: list[TeamSetup] = Field(min_length=1)


class MatchCreatedReply(_Msg):
    match_id: int
    join_code: str
    join_url: str
    moderator_token: str
    #: What the match is, so that a moderator offered an open match knows whose it is: its
    #: title, packet and teams, the tossups started so far and when it was created (UTC,
    #: ``GET /api/matches`` only).
    title: str | None = None
    packet_id: str | None = None
    teams: list[str] = []
    tossups_started: int = 0
    created_at: datetime | None = None
    #: ``POST /api/matches`` only: a model team that would (almost) never buzz, and what to do
    warnings: list[str] = []


class Health(_Msg):
    """``GET /api/health``."""

    ok: bool
    matches: int  # live matches
    connections: int = 0  # websockets open
    #: The last durable (synced) commits of this process to the record (up to 10,000): how
    #: many, and the p50 and p99 of the time each took, in milliseconds.
    synced_commits: int = 0
    commit_p50_ms: float | None = None
    commit_p99_ms: float | None = None
    #: The same commits' time in the record alone (the worker thread's call), without the
    #: waits for a thread and for the busy loop to resume the room.
    commit_record_p50_ms: float | None = None
    commit_record_p99_ms: float | None = None
    #: Computations of event standings made by this process (one per change of an event
    #: whose standings it computes; the other processes of the event read them).
    standings_computations: int = 0
    #: The p50 and p99 of the time each of the last computations took (up to 1,000), from
    #: its start to its snapshot published to this process's clients, in milliseconds.
    standings_p50_ms: float | None = None
    standings_p99_ms: float | None = None
    #: Notices of the other processes' changes this process was told by the record
    #: (PostgreSQL's; None: the record tells none, and the process reads it every so often).
    record_notices: int | None = None
    #: The garbage collector's passes in this process since it was set for serving
    #: (``grace_arena.server.collector``; None: not set, e.g. an app in another program's
    #: process): how many full passes, and the p99 and the longest time a pass of any
    #: generation held the process, in milliseconds (of the last 1,000 of each generation).
    gc_full_passes: int | None = None
    gc_pause_p99_ms: float | None = None
    gc_pause_max_ms: float | None = None


class TossupInfo(_Msg):
    id: str
    category: str | None = None


class PacketInfo(_Msg):
    """``GET /api/packets``: a loaded packet for the set-up, never its questions or answers."""

    id: str
    title: str | None = None
    tossups: list[TossupInfo]
    #: The name of the file it was loaded from (no folder): two packets of the same title are
    #: told apart by it.
    file: str | None = None


class JoinInfo(_Msg):
    """``GET /api/join/{code}``: the match a join code opens."""

    match_id: int
    title: str
    join_code: str
    join_url: str = ""  # what players open (the server's public address)


class ApiError(_Msg):
    """An HTTP error's body: what went wrong, or (422) where each field is malformed."""

    detail: str | list[dict[str, Any]]


class StandingRow(_Msg):
    """One team in an event's standings (``grace_arena.core.standings``)."""

    rank: int
    team: str
    name: str
    kind: Literal["human", "model"]
    played: int
    won: int
    lost: int
    tied: int
    live: int  # matches under way
    points: int  # finished matches' and those under way's (``live_points``)
    points_against: int
    tossups_heard: int
    points_per_tossup: float | None
    correct: int
    powers: int
    incorrect: int
    negs: int
    #: Bonuses (formats that play them): heard (controlled), points on them, PPB, and points
    #: on the other teams' bonuses (bouncebacks).
    bonuses_heard: int = 0
    bonus_points: int = 0
    points_per_bonus: float | None = None
    bounceback_points: int = 0
    #: Points per game and per 20 tossups heard, of finished matches
    #: (``grace_arena.core.stats``).
    points_per_game: float | None = None
    points_per_20_tuh: float | None = None
    #: Points in play: scored in the matches under way (in ``points`` too); every other
    #: figure is of finished matches.
    live_points: int = 0
    #: The pool the row stands in, in the standings of a phase shown pool after pool.
    pool: str | None = None


class RoomStatus(_Msg):
    """What an event's room is playing now."""

    room: str
    join_code: str
    round: int | None  # None: the room has played all its matches
    match_id: int | None = None
    teams: list[str] = Field(default_factory=list)  # names
    scores: dict[str, int] = Field(default_factory=dict)  # name -> points
    phase: str | None = None
    join_url: str = ""  # what players open (the server's public address)
    #: Why its next match has not started, while it waits for teams still playing elsewhere
    #: (known where this process serves the room).
    waiting: str | None = None
    #: Tossups started in its live match (0: its lobby, before the first tossup).
    tossups_played: int | None = None


class ScheduledMatch(_Msg):
    """A match of an event's schedule as the projector lists it (the current round's, and
    the next round's)."""

    round: int
    room: str
    teams: list[str]  # names
    #: "played" (over), "playing" (opened), "next" (the room's next match after the one it
    #: plays), "later"
    status: Literal["played", "playing", "next", "later"]


class PhaseInfo(_Msg):
    """A phase of an event and its pools, by name (``StandingsView.phases``)."""

    name: str
    kind: str
    pools: list[str] = Field(default_factory=list)


class StandingsView(_Msg):
    """``GET /api/events/{name}/standings``: the standings after every ruling so far."""

    event: str
    title: str
    rounds: int
    rows: list[StandingRow]
    rooms: list[RoomStatus] = Field(default_factory=list)
    #: The matches of the event's current round and of the next, by round and room.
    schedule: list[ScheduledMatch] = Field(default_factory=list)
    #: The record's version of these standings (``grace_arena.server.standings_feed``): it
    #: grows with every change; ask with ``?after=VERSION`` to wait for a newer one.
    version: int = 0
    #: The phase (and pool) the rows are of, when one was asked for (``?phase=&pool=``):
    #: their games and those carried over into the phase, each pool ranked apart; ``phases``
    #: names the event's phases and their pools, for a projector to offer.
    phase: str | None = None
    pool: str | None = None
    phases: list[PhaseInfo] = Field(default_factory=list)


class EventRoomInfo(_Msg):
    """``GET /api/events/{name}/rooms`` (server token): a room and how to moderate it."""

    room: str
    join_code: str
    join_url: str
    moderator_token: str
    round: int | None
    match_id: int | None
    teams: list[str]
    served_here: bool  # this process serves the room now
    #: The room's projector: its display with the room's grant (``token``).
    display_url: str = ""


class BuzzRecord(_Msg):
    """One accepted or refused buzz of a match, as the record holds it (the end-of-match
    summary)."""

    buzz_id: int
    tossup_id: str | None
    team: str
    player: str
    kind: Literal["human", "model"]
    word_index: int
    clue_index: int | None = None
    outcome: str  # won | lost_race | locked_out | not_live
    answer: str | None = None  # typed answer or model guess
    suggestion: str | None = None  # the automatic judge's directive
    confidence: float | None = None  # a model's confidence at its buzz
    ruling: str | None = None  # the ruling in force
    points: int | None = None
    thrown_out: bool = False
    #: Compensated races: seconds before its arrival the press was credited with.
    credit: float | None = None


class MatchSummary(_Msg):
    """``GET /api/matches/{id}/summary`` (server token or that match's moderator token)."""

    match_id: int
    title: str
    ended: bool
    scores: dict[str, int]
    buzzes: list[BuzzRecord]
    record: str  # the record's database URL (password hidden)


class ReplayBuzz(_Msg):
    """A buzz of a replayed tossup (one that took the floor) and what became of it."""

    buzz_id: int
    word: int
    team: str
    team_name: str
    kind: Literal["human", "model"]
    player_name: str  # who buzzed (a model player: the model)
    answer: str | None = None  # the typed answer or the model's guess
    ruling: str | None = None  # the ruling in force (None: none was given)
    points: int | None = None


class ReplayView(_Msg):
    """``GET /api/replay?match=ID&tossup=N&code=CODE`` (``CODE``: the match's join code): one
    tossup of a match, once it has ended, as the record holds it: its text with every buzz of
    the room, each model player's trajectory against its threshold, and the rulings."""

    match_id: int
    title: str
    tossup: int  # 1-based number in the match
    tossups_played: int
    category: str | None = None
    words: list[str]
    clue_ends: list[int]
    power_index: int | None = None
    answer: str
    outcome: str  # how it ended: correct_answer, all_locked_out, time_up... or a throw-out
    buzzes: list[ReplayBuzz]
    curves: CurvesView


# ---------------------------------------------------------------------------------------------
# HTTP API bodies (the per-clue survey; see docs/survey.md)


class SurveyProgress(_Msg):
    """``GET /api/survey/{code}/progress`` (server token): one participant's progress."""

    participant_id: str
    name: str
    answered: int
    total: int


class SurveyInfo(_Msg):
    """``GET /api/survey/{code}``: what a survey is, before joining it."""

    code: str
    title: str
    n_tossups: int
    n_steps: int  # clues over all tossups: one answer each


class SurveyJoin(_Msg):
    """``POST /api/survey/{code}/participants``: a new participant gives a name."""

    name: Name = Field(min_length=1, max_length=PLAYER_NAME_MAX)


class SurveyJoined(_Msg):
    participant_id: str
    name: str
    token: str  # ``Authorization: Bearer <token>`` on the participant's requests


class SurveyAnswer(_Msg):
    """``PUT /api/survey/{code}/answer`` (participant token): the guess after one clue.

    ``step`` is the clue index (0-based). Giving the same answer again changes nothing;
    the latest answer may be changed; an earlier one may not; a clue not yet shown is refused.
    """

    tossup_id: str = Field(min_length=1, max_length=100)
    step: int = Field(ge=0, le=1000)
    guess: Text = Field(max_length=200)  # empty: no idea yet
    would_buzz: bool
    client_latency_s: float | None = Field(default=None, ge=0.0, le=86400.0)


class SurveyGiven(_Msg):
    """An answer already given on the current tossup."""

    step: int
    guess: str
    would_buzz: bool


class SurveyClue(_Msg):
    """The clue to answer next, with the clues before it."""

    tossup_id: str
    number: int  # 1-based position of the tossup in the survey
    n_tossups: int
    category: str
    step: int  # the clue to answer (0-based)
    n_clues: int
    clues: list[str]  # texts of clues 0..step
    word_index: int  # last word of the prefix
    given: list[SurveyGiven]  # this tossup's answers so far


class SurveyState(_Msg):
    """A participant's place in a survey (``GET .../state``, and the reply to an answer)."""

    code: str
    title: str
    participant_id: str
    name: str
    answered: int
    total: int
    done: bool
    clue: SurveyClue | None  # None when done
