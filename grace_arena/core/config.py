"""What a match is set up with: scoring rules, teams (human or model) and the tossups to play.

These are plain pydantic models so that they travel unchanged inside the ``MatchCreated``
event: a match is rebuilt from its events alone.
"""

from __future__ import annotations

from enum import StrEnum
from itertools import pairwise
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ConsultScoring(_Frozen):
    """Points of a bonus part when the team may consult a model (GRACE Arena's consult rules,
    15 / 10 / 5 by default; QANTA 2026's own are :class:`QantaRules`): answered correctly
    without looking at the model, after looking, and for an abstention when the model was
    wrong (no one had the right answer). A wrong answer, or an abstention when the model was
    right, scores 0; nothing is negative."""

    own_points: int = Field(default=15, ge=0)
    consult_points: int = Field(default=10, ge=0)
    abstain_points: int = Field(default=5, ge=0)
    #: Seconds each human of the team has to write an answer of their own on their phone once
    #: the team asks for the model's, before it is revealed (QANTA 2026: 2 s); None: the
    #: model's answer is revealed at once.
    pre_answer_time: float | None = Field(default=None, gt=0, le=60)


WeightClass = Literal["lightweight", "midweight", "heavyweight"]
DeflationMode = Literal["none", "static", "weighted"]
AiMode = Literal["autonomous", "semi", "muted"]
WEIGHT_CLASSES: tuple[WeightClass, ...] = ("lightweight", "midweight", "heavyweight")


class WeightClasses(_Frozen):
    """A number per AI weight class (lightweight, midweight, heavyweight)."""

    lightweight: float
    midweight: float
    heavyweight: float

    def of(self, weight_class: str) -> float:
        return float(getattr(self, weight_class))


class QantaRules(_Frozen):
    """QANTA 2026's settings for hybrid teams (humans and AI players on one team), as the
    organisers' tournament runner names them (``config/rule-presets/qanta26.json``, types in
    ``shared/types.ts``); what they score is :mod:`grace_arena.core.rules.qanta`.

    - ``ai_tossup_score_factors``, ``tossup_deflation_mode``, ``tossup_static_deflation``: an
      AI's correct tossup buzz scores the tossup's points times its weight class's factor
      (weighted), minus the static deflation (static), or in full (none).
    - ``autonomous_default_k``: an autonomous AI buzzes only on a decision made at token K or
      later (the runner's tokens, 0-based).
    - ``bonus_deflation_mode``, ``bonus_static_deflation``, ``bonus_weight_deflation``,
      ``bonus_ai_consult_factor``: a bonus part answered right after consulting the team's
      AIs scores the part's points minus the sum of the deflation of every AI on the team
      (weighted), minus the static deflation (static), in full (none), or, with no mode, times
      the consult factor (the runner's fallback).
    - ``bonus_abstain_points``: a right abstention (nobody, human or AI, had it)."""

    ai_tossup_score_factors: WeightClasses = WeightClasses(
        lightweight=1.0, midweight=0.8, heavyweight=0.4
    )
    tossup_deflation_mode: DeflationMode | None = "weighted"
    tossup_static_deflation: int = Field(default=5, ge=0)
    autonomous_default_k: int = Field(default=1, ge=1)
    bonus_ai_consult_factor: float = Field(default=0.5, ge=0)
    bonus_deflation_mode: DeflationMode | None = "weighted"
    bonus_static_deflation: int = Field(default=5, ge=0)
    bonus_weight_deflation: WeightClasses = WeightClasses(lightweight=1, midweight=2, heavyweight=3)
    bonus_abstain_points: int = Field(default=1, ge=0)


class ScoringRules(_Frozen):
    """Per-match rules, as the record stores them. Defaults are PRODUCT.md's: +10, +15 power,
    -5 neg before the end. What they mean (what a buzz or a bonus part scores, whose turn comes
    next, what they write to QBJ and SQBS) is asked of their rule set,
    ``grace_arena.core.rules.rule_set(rules)``; formats are named in
    ``grace_arena.core.formats``."""

    correct_points: int = 10
    power_points: int | None = 15  # None: no powers even when the text has a (*) mark
    neg_points: int = -5  # 0 disables negs
    #: True: an incorrect answer costs ``neg_points`` only when the buzz interrupted the reading
    #: (before the end of the question); after the end it scores 0. False: always ``neg_points``.
    negs_only_before_end: bool = True
    #: True: only the first team to answer a tossup incorrectly is negged (NAQT's and ACF's
    #: rule); another team's incorrect answer after that neg scores 0, as one after the end
    #: does. False: every team's incorrect answer before the end costs ``neg_points`` (GRACE's
    #: game, PRODUCT.md's rule; a match recorded before this rule was named played so).
    neg_first_team_only: bool = False
    #: True: after an incorrect answer, the teams not locked out may still buzz. False: the first
    #: incorrect answer kills the tossup (one buzz per tossup).
    rebuzz: bool = True
    #: Seconds the player with the floor has to answer; None: no limit (the moderator rules).
    answer_time: float | None = 10.0
    #: Seconds to buzz after the last word has been read before the tossup goes dead.
    buzz_window: float = 5.0
    #: The format these rules came from (``grace_arena.core.formats``), for the record and
    #: the QBJ export; None: set by hand.
    format: str | None = None
    #: Tossup–bonus cycles: a tossup answered correctly earns its team the packet's next
    #: unused bonus. False: tossups only (GRACE's game).
    bonuses: bool = False
    #: A bonus part the controlling team missed goes to the other team (two-team matches).
    bouncebacks: bool = False
    #: Seconds a team has to answer a bonus part (a bounceback alike); None: no limit.
    bonus_answer_time: float | None = 10.0
    #: Tossups in regulation (20 in ACF and NAQT formats); None: the packet's.
    regulation_tossups: int | None = None
    #: Whether tossups past regulation (overtime) earn bonuses (no, in ACF, PACE and NAQT).
    overtime_bonuses: bool = False
    #: Overtime tossups read whatever the score before a tie is broken by the first tossup
    #: that ends with the teams apart (sudden death): 1 is sudden death from the first (ACF,
    #: PACE), 3 NAQT's three tossups then sudden death (QBJ's ``minimum_overtime_questions``).
    overtime_tossups: int = Field(default=1, ge=1)
    #: Timeouts each team may call in a match; None: no limit.
    timeouts: int | None = Field(default=None, ge=0)
    #: Seconds a timeout lasts (shown as a clock; the moderator resumes the match).
    timeout_seconds: float = Field(default=30.0, gt=0)
    #: Halftime comes after this many tossups heard (10 of 20); None: no halftime.
    halftime_after: int | None = Field(default=None, ge=1)
    #: The players a team fields at once (ACF, PACE, NAQT: 4); the others wait on the bench
    #: until a substitution (``grace_arena.core.lineups``). None: every player who joins.
    lineup_size: int | None = Field(default=None, ge=1)
    #: Seconds a team confers on a bonus part once it is read aloud (the moderator asks for
    #: an answer as it runs out); None: no conferral clock.
    conferral_time: float | None = Field(default=None, gt=0)
    #: Seconds of game clock in each half (NAQT's timed halves: 9 minutes, 540 s; the
    #: clock and where it stops: ``grace_arena.core.officiating``); None: untimed halves.
    half_time: float | None = Field(default=None, gt=0)
    #: Bonus parts where the team chooses to answer alone, consult a model or abstain, scored
    #: by these points instead of the parts' values; None: plain bonuses.
    consult: ConsultScoring | None = None
    #: QANTA 2026's rules for hybrid teams (AI tossup factors, consult deflation, abstention,
    #: the autonomous gate); None: no AI players' rules.
    qanta: QantaRules | None = None


class TeamKind(StrEnum):
    HUMAN = "human"
    MODEL = "model"


class ModelBuzz(_Frozen):
    """Where a model player buzzes on one tossup, decided beforehand by its buzz policy."""

    word_index: int = Field(ge=0)
    guess: str
    confidence: float | None = None


class ModelAnswer(_Frozen):
    """A model's answer to one bonus part, read from its precomputed parts."""

    guess: str | None = None
    confidence: float | None = None
    #: the judge's verdict on the guess when it was precomputed
    correct: bool | None = None


class AiStep(_Frozen):
    """One of an AI player's precomputed guesses on a tossup: once our word ``word_index``
    has been read (the runner's token ``token``, 0-based; our word index when the model was
    not imported), with its own decision to ``buzz``."""

    word_index: int = Field(ge=0)
    token: int = Field(ge=0)
    guess: str = ""
    confidence: float | None = None
    buzz: bool = False
    correct: bool | None = None


class AiPlayerSpec(_Frozen):
    """An AI player of a hybrid team: a model with a weight class, its precomputed guesses
    on each tossup (in order) and its answers to bonus parts."""

    id: str = Field(min_length=1, max_length=100)
    name: str = Field(min_length=1, max_length=100)
    model: str = Field(min_length=1, max_length=200)
    weight_class: WeightClass
    #: tossup id -> its guesses, in order
    steps: dict[str, tuple[AiStep, ...]] = Field(default_factory=dict)
    #: bonus id -> its answer to each part
    bonus_answers: dict[str, tuple[ModelAnswer, ...]] = Field(default_factory=dict)


class TeamSpec(_Frozen):
    id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=100)
    kind: TeamKind = TeamKind.HUMAN
    #: For a model team: the model's name (it is also the team's only player).
    model: str | None = None
    #: For a model team: tossup id -> where it buzzes (absent: it never buzzes on that tossup).
    buzzes: dict[str, ModelBuzz] = Field(default_factory=dict)
    #: For a model team: the buzz policy its buzzes came from (confidence kind, threshold).
    confidence: str | None = None
    threshold: float | None = None
    #: For a model team: bonus id -> its answer to each part (absent: it has none to give).
    bonus_answers: dict[str, tuple[ModelAnswer, ...]] = Field(default_factory=dict)
    #: A hybrid team (QANTA 2026): the AI players beside its human players.
    ai_players: tuple[AiPlayerSpec, ...] = ()

    @model_validator(mode="after")
    def _model_fields(self) -> TeamSpec:
        if self.ai_players and self.kind is TeamKind.MODEL:
            raise ValueError(
                f"model team {self.id!r} cannot have AI players: a hybrid team "
                "is a human team with AI players"
            )
        ids = [a.id for a in self.ai_players]
        if len(set(ids)) != len(ids):
            raise ValueError(f"team {self.id!r}: AI player ids must be unique: {ids}")
        if self.kind is TeamKind.MODEL and not self.model:
            raise ValueError(f"model team {self.id!r} needs a model name")
        if self.kind is TeamKind.HUMAN and (
            self.model or self.buzzes or self.confidence or self.bonus_answers
        ):
            raise ValueError(f"human team {self.id!r} cannot have a model or model buzzes")
        return self

    @property
    def model_player(self) -> str:
        """The player id a model team buzzes as."""
        return f"model:{self.model}"


class TossupSpec(_Frozen):
    """What the engine needs of a tossup: its length, clue ends, power mark and answer line."""

    id: str
    n_words: int = Field(gt=0)
    clue_ends: tuple[int, ...]  # last word index of each clue
    power_index: int | None = None  # words with index < power_index are in power
    answer: str = ""
    category: str | None = None
    char_offsets: tuple[int, ...] | None = None  # start of each word in the tossup's text

    @model_validator(mode="after")
    def _consistent(self) -> TossupSpec:
        ends = self.clue_ends
        if not ends or ends[-1] != self.n_words - 1 or any(b <= a for a, b in pairwise(ends)):
            raise ValueError(
                f"tossup {self.id!r}: clue_ends must increase and end at the last word"
            )
        if self.power_index is not None and not 0 <= self.power_index <= self.n_words:
            raise ValueError(f"tossup {self.id!r}: power_index out of range")
        if self.char_offsets is not None and len(self.char_offsets) != self.n_words:
            raise ValueError(f"tossup {self.id!r}: one char offset per word is needed")
        return self

    def clue_of(self, word_index: int) -> int:
        for i, end in enumerate(self.clue_ends):
            if word_index <= end:
                return i
        return len(self.clue_ends) - 1

    def char_offset(self, word_index: int) -> int | None:
        if self.char_offsets is None or not 0 <= word_index < len(self.char_offsets):
            return None
        return self.char_offsets[word_index]

    def fraction_revealed(self, word_index: int) -> float:
        return min(max((word_index + 1) / self.n_words, 0.0), 1.0)


class BonusPartSpec(_Frozen):
    text: str
    answer: str
    value: int = 10
    difficulty: str | None = None


class BonusSpec(_Frozen):
    """What the engine needs of a bonus: its lead-in and parts, each with its answer line."""

    id: str
    leadin: str = ""
    parts: tuple[BonusPartSpec, ...] = Field(min_length=1)
    category: str | None = None


class ConsultSpec(_Frozen):
    """The model a team may consult on bonus parts, with its precomputed answers."""

    model: str = Field(min_length=1)
    #: bonus id -> the model's answer to each part
    answers: dict[str, tuple[ModelAnswer, ...]] = Field(default_factory=dict)

    def answer(self, bonus_id: str, part: int) -> ModelAnswer | None:
        parts = self.answers.get(bonus_id, ())
        return parts[part] if 0 <= part < len(parts) else None


class MatchConfig(_Frozen):
    rules: ScoringRules = Field(default_factory=ScoringRules)
    teams: tuple[TeamSpec, ...]
    tossups: tuple[TossupSpec, ...]
    #: The bonuses in the order they are given (played when ``rules.bonuses``).
    bonuses: tuple[BonusSpec, ...] = ()
    title: str = "Match"
    packet_id: str | None = None
    reading_mode: str = "read_aloud"  # or "screen"
    wpm: int = 180  # reading pace at the start (the moderator may change it)
    compensated: bool = False  # compensated buzz arbitration (see the server)
    #: The room display draws each model's confidence as the words are read (an exhibition:
    #: players who see the display learn when a model is about to buzz). Otherwise the
    #: trajectory appears once the tossup has ended.
    exhibition: bool = False
    #: Players may file a protest from their phone (the event allows it), on a tossup or a
    #: bonus part their team played; otherwise only the moderator files them.
    phone_protests: bool = False
    #: The reader's voice speaks each question and times its words' reveal (the server's).
    voice: bool = False
    #: The model teams consult on bonus parts (when ``rules.consult``).
    consult: ConsultSpec | None = None

    @model_validator(mode="after")
    def _unique(self) -> MatchConfig:
        team_ids = [t.id for t in self.teams]
        if not team_ids:
            raise ValueError("a match needs at least one team")
        if len(set(team_ids)) != len(team_ids):
            raise ValueError(f"team ids must be unique: {team_ids}")
        tossup_ids = [t.id for t in self.tossups]
        if len(set(tossup_ids)) != len(tossup_ids):
            raise ValueError("tossup ids must be unique")
        bonus_ids = [b.id for b in self.bonuses]
        if len(set(bonus_ids)) != len(bonus_ids):
            raise ValueError("bonus ids must be unique")
        if self.rules.consult is not None and self.consult is None:
            raise ValueError("consult rules need a model to consult (MatchConfig.consult)")
        if self.reading_mode not in ("read_aloud", "screen"):
            raise ValueError(
                f"reading_mode must be 'read_aloud' or 'screen', not {self.reading_mode!r}"
            )
        return self

    def team(self, team_id: str) -> TeamSpec | None:
        return next((t for t in self.teams if t.id == team_id), None)

    def tossup(self, tossup_id: str) -> TossupSpec | None:
        return next((t for t in self.tossups if t.id == tossup_id), None)

    def bonus(self, bonus_id: str) -> BonusSpec | None:
        return next((b for b in self.bonuses if b.id == bonus_id), None)
