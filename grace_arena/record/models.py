"""The durable record's tables (SQLModel). The schema is created only by Alembic migrations.

An **event** (``arena_event``: a competition, a club night, a study) groups matches; its teams
(``event_team``) and players (``event_player``) keep their identity across its matches. Every
match belongs to one event (a match created on its own gets an event of its own). Buzzpoints
known only per tossup, pooled over rooms whose matches are unknown (GRACE's public data), are
``pooled_buzz`` rows of the event, each from one ``event_import``. An event run live has
rooms (``event_room``), rounds (``event_round``, a packet each) and a schedule of matches
(``event_game``: which teams meet in which round and room, and the match once created). A
tournament's structure is in phases (``event_phase``: prelims, playoffs, finals,
tiebreakers), each with pools of teams (``event_pool``); a round and a game belong to a phase
(and a game to a pool), a game may be a forfeit, carry over into later phases, or have a
result entered by its final score rather than played here.
``match_lease`` says which server process serves a match, when several share one record.

``event`` is the source of truth: every event of every match, in order. ``buzz`` and
``ruling`` are projections of those events, written in the same transaction, so that exports
and analysis can query buzzes directly. The one thing the ``buzz`` table holds that no event
does is the count of refused presses that repeated a refusal stored in full (``repeats``,
``last_repeat_wall``; :class:`grace_arena.core.events.BuzzRepeated`). ``model_step`` holds
every step of every model's guess trajectory (filled by ``grace-arena precompute``).
``survey_step`` is its human counterpart: a participant's guess and would-buzz after each clue
(``grace-arena survey``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class PacketRow(SQLModel, table=True):
    __tablename__ = "packet"
    id: str = Field(primary_key=True, max_length=100)
    title: str
    source_path: str | None = None
    content_sha256: str = Field(max_length=64)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    loaded_at: datetime = Field(default_factory=utcnow)


class TossupRow(SQLModel, table=True):
    __tablename__ = "tossup"
    packet_id: str = Field(primary_key=True, foreign_key="packet.id", max_length=100)
    tossup_id: str = Field(primary_key=True, max_length=100)
    position: int  # 0-based order in the packet
    category: str
    subcategory: str | None = None
    text: str
    answer: str
    n_words: int
    clue_ends: list[int] = Field(sa_column=Column(JSON, nullable=False))
    power_index: int | None = None


class ArenaEventRow(SQLModel, table=True):
    """An event: the matches (and imported pooled buzzpoints) analysed as one body of data."""

    __tablename__ = "arena_event"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=100, unique=True)  # what --event takes
    title: str
    created_at: datetime = Field(default_factory=utcnow)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class EventTeamRow(SQLModel, table=True):
    """A team registered in an event: the same team in every match of the event."""

    __tablename__ = "event_team"
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    team_id: str = Field(primary_key=True, max_length=64)
    name: str
    kind: str = Field(max_length=16)  # human | model
    model: str | None = None
    #: A model team's buzz policy in the event's matches (None: the defaults).
    threshold: float | None = None
    confidence: str | None = Field(default=None, max_length=16)
    #: Order of registration (the order teams are listed and paired in).
    position: int = 0


class EventPlayerRow(SQLModel, table=True):
    """A player registered in an event (on one of its teams). One name is one player of a
    team: ``name_key`` (the name case-folded, its spaces collapsed) is unique in the team, so
    that every server process and every concurrent join finds the same player."""

    __tablename__ = "event_player"
    __table_args__ = (
        UniqueConstraint("event_id", "team_id", "name_key", name="uq_event_player_name"),
    )
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    player_id: str = Field(primary_key=True, max_length=100)
    team_id: str = Field(max_length=64)
    name: str
    name_key: str = Field(max_length=200)
    kind: str = Field(max_length=16)
    #: "organiser": a player of the event's roster (registered before play, claimed on a phone
    #: with its code); None: a player who joined from a phone by typing a name (a walk-in).
    registered_by: str | None = Field(default=None, max_length=16)
    #: SHA-256 of the roster player's claim code (None: claimed by the name, as walk-ins are).
    claim_sha256: str | None = Field(default=None, max_length=64)
    #: When the organiser or the TD removed the player: the name is free again, the player's
    #: token opens nothing; the row stays, as the matches it played name it.
    removed_at: datetime | None = None


class EventRoomRow(SQLModel, table=True):
    """A room of an event: where its matches are read, one after another. Its join code and
    moderator tokens stay the same from round to round, so that a phone or a moderator's
    terminal that reconnects comes back to the room's next match."""

    __tablename__ = "event_room"
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    room_id: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=100)
    position: int
    join_code: str = Field(max_length=32, unique=True)
    #: SHA-256 of the room's valid moderator tokens, newest last.
    moderator_tokens: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class EventRoundRow(SQLModel, table=True):
    """A round of an event: the packet its matches are read from."""

    __tablename__ = "event_round"
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    number: int = Field(primary_key=True)  # 1-based
    packet_id: str = Field(max_length=100)
    #: The tossups to read, in order (None: the whole packet).
    tossup_ids: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: The phase the round belongs to (None: an event without phases).
    phase_id: str | None = Field(default=None, max_length=64)


class EventPhaseRow(SQLModel, table=True):
    """A phase of an event (``grace_arena.core.schedule``): its kind (prelim, playoff,
    finals, tiebreaker), its place among the phases, and how it was made (``meta``: the
    seeding, tiers and wild cards it was bracketed with, a final's advantaged team)."""

    __tablename__ = "event_phase"
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    phase_id: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=100)
    kind: str = Field(max_length=16)
    position: int
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class EventPoolRow(SQLModel, table=True):
    """A pool of a phase: its teams, in seed order."""

    __tablename__ = "event_pool"
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    phase_id: str = Field(primary_key=True, max_length=64)
    pool_id: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=100)
    position: int
    teams: list[str] = Field(sa_column=Column(JSON, nullable=False))


class EventGameRow(SQLModel, table=True):
    """A scheduled match of an event (or a bye: one team, no room). ``match_id`` is set when
    the match is created in the record; from then on its round can no longer change."""

    __tablename__ = "event_game"
    __table_args__ = (Index("ix_event_game_room", "event_id", "room_id", "round", "slot"),)
    id: int | None = Field(default=None, primary_key=True)
    event_id: int = Field(foreign_key="arena_event.id")
    round: int
    room_id: str | None = Field(default=None, max_length=64)
    slot: int = 0  # order of the room's matches within the round
    teams: list[str] = Field(sa_column=Column(JSON, nullable=False))
    match_id: int | None = Field(default=None, foreign_key="match.id", unique=True)
    #: Its phase and pool (None: an event without phases).
    phase_id: str | None = Field(default=None, max_length=64)
    pool_id: str | None = Field(default=None, max_length=64)
    #: The team that forfeited the game: it is decided, and no match is played.
    forfeit: str | None = Field(default=None, max_length=64)
    #: The later phases whose standings count this game too (teams that meet again).
    carryover: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: A result entered by the director (a game not played here): each team's points, the
    #: tossups heard, and, where known, each team's and player's buzzes and bonus points.
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class MatchLeaseRow(SQLModel, table=True):
    """Which server process serves a match: one at a time (grace_arena.record.lease). The
    holder renews its lease while it serves the match and with every commit; another process
    takes the match over only once the lease was released, has lapsed (by the database's
    clock) or its holder is known to be dead; each take-over is a new ``generation``."""

    __tablename__ = "match_lease"
    match_id: int = Field(primary_key=True, foreign_key="match.id")
    holder: str = Field(max_length=200)  # host:pid:nonce of the serving process
    host: str = Field(max_length=200)
    pid: int
    url: str | None = Field(default=None, max_length=500)  # where that process serves
    #: Identifies the holder for certain on its own system (boot:pid namespace:pid:start).
    proc: str | None = Field(default=None, max_length=200)
    generation: int = Field(default=1)
    #: Given up by its holder (a clean stop, a match that moved on): free to take at once.
    released: bool = Field(default=False)
    acquired_at: float  # the database's clock
    renewed_at: float  # the database's clock
    #: The last moment the holder served the match, on the holder's own clock (the one its
    #: deadlines are on): a running clock resumes with what it had left then.
    served_until: float | None = None


class PlayerClaimRow(SQLModel, table=True):
    """Which server process has a player of an event in play now (grace_arena.record.claims):
    a player is on one device at a time, on any process sharing the record. The holder renews
    its claims while the player's connection is open; a claim not renewed for the lease's
    time, or whose holder is known to be dead, is free to take."""

    __tablename__ = "player_claim"
    event_id: int = Field(primary_key=True, foreign_key="arena_event.id")
    player_id: str = Field(primary_key=True, max_length=100)
    holder: str = Field(max_length=200)  # as in match_lease
    url: str | None = Field(default=None, max_length=500)
    proc: str | None = Field(default=None, max_length=200)
    renewed_at: float  # the database's clock


class ServerProcessRow(SQLModel, table=True):
    """A server process that shares the record, while it runs: where it serves, and which
    events. Its clients learn of the others here, to turn to when it cannot be reached."""

    __tablename__ = "server_process"
    holder: str = Field(primary_key=True, max_length=200)  # as in match_lease
    url: str | None = Field(default=None, max_length=500)
    #: Ids of the events whose rooms it serves (empty: matches of their own only).
    events: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    started_at: float  # the database's clock
    renewed_at: float  # the database's clock


class EventImportRow(SQLModel, table=True):
    """One file (or other record's data) imported into an event; importing it again is a
    no-op. ``meta`` keeps what is needed to write the file back exactly."""

    __tablename__ = "event_import"
    __table_args__ = (UniqueConstraint("event_id", "source", "source_key", name="uq_event_import"),)
    id: int | None = Field(default=None, primary_key=True)
    event_id: int = Field(foreign_key="arena_event.id", index=True)
    source: str = Field(max_length=32)  # grace | record
    source_key: str = Field(max_length=64)  # SHA-256 of the content
    name: str  # the file's name
    packet_id: str | None = Field(default=None, max_length=100)
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    imported_at: datetime = Field(default_factory=utcnow)


class PooledBuzzRow(SQLModel, table=True):
    """A buzzpoint known per tossup only (no match, no race, no ruling history): imported
    pooled data such as GRACE's, where every room's buzzes on a tossup are listed together."""

    __tablename__ = "pooled_buzz"
    __table_args__ = (Index("ix_pooled_buzz_question", "event_id", "packet_id", "tossup_id"),)
    id: int | None = Field(default=None, primary_key=True)
    event_id: int = Field(foreign_key="arena_event.id")
    import_id: int = Field(foreign_key="event_import.id", index=True)
    packet_id: str = Field(max_length=100)
    tossup_id: str = Field(max_length=100)
    seq: int  # place in the tossup's list of buzzpoints, as imported
    team_id: str = Field(max_length=64)
    team_kind: str = Field(max_length=16)  # human | model
    word_index: int  # canonical word (grace_arena.core.tokenize)
    clue_index: int
    fraction_revealed: float
    correct: bool
    source_word_index: int | None = None  # the file's own word index


class MatchRow(SQLModel, table=True):
    __tablename__ = "match"
    id: int | None = Field(default=None, primary_key=True)
    #: The event the match belongs to (never None once stored).
    event_id: int | None = Field(
        default=None, foreign_key="arena_event.id", index=True, nullable=False
    )
    title: str
    packet_id: str | None = Field(default=None, max_length=100)
    created_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    join_code: str | None = Field(default=None, index=True, max_length=32)
    #: Where an imported match came from ("grace", ...); None for a match played here.
    source: str | None = Field(default=None, max_length=32)
    #: Identity of the imported file (its SHA-256), so that importing it again is a no-op.
    source_key: str | None = Field(default=None, index=True, max_length=64)
    #: What the import keeps to write the file back exactly (original ids, texts, positions).
    source_meta: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: SHA-256 (hex) of each moderator token issued for the match, newest last; the tokens
    #: themselves are never stored.
    moderator_tokens: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class TeamRow(SQLModel, table=True):
    __tablename__ = "team"
    match_id: int = Field(primary_key=True, foreign_key="match.id")
    team_id: str = Field(primary_key=True, max_length=64)
    name: str
    kind: str = Field(max_length=16)  # human | model
    model: str | None = None


class PlayerRow(SQLModel, table=True):
    __tablename__ = "player"
    match_id: int = Field(primary_key=True, foreign_key="match.id")
    player_id: str = Field(primary_key=True, max_length=100)
    team_id: str = Field(max_length=64)
    name: str
    kind: str = Field(max_length=16)
    joined_at: datetime = Field(default_factory=utcnow)


class EventRow(SQLModel, table=True):
    __tablename__ = "event"
    match_id: int = Field(primary_key=True, foreign_key="match.id")
    seq: int = Field(primary_key=True)
    type: str = Field(max_length=32)
    t: float
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    stored_at: datetime = Field(default_factory=utcnow)


class BuzzRow(SQLModel, table=True):
    """Every buzz, won or not, with everything needed to audit the race and the ruling."""

    __tablename__ = "buzz"
    match_id: int = Field(primary_key=True, foreign_key="match.id")
    buzz_id: int = Field(primary_key=True)
    event_seq: int
    tossup_id: str | None = Field(default=None, max_length=100)
    team_id: str = Field(max_length=64)
    player_id: str = Field(max_length=100)
    player_kind: str = Field(max_length=16)
    word_index: int
    clue_index: int | None = None
    char_offset: int | None = None
    fraction_revealed: float | None = None
    received_wall: float | None = None
    received_mono: float | None = None
    client_press: float | None = None
    clock_offset: float | None = None
    rtt: float | None = None
    #: Compensated races: seconds before its arrival the press was credited with.
    credit: float | None = None
    outcome: str = Field(max_length=16)  # won | lost_race | locked_out | not_live
    interrupt: bool | None = None
    holder_buzz_id: int | None = None
    margin: float | None = None
    answer: str | None = None
    suggestion: str | None = Field(default=None, max_length=16)
    model_confidence: float | None = None
    ruling: str | None = Field(default=None, max_length=16)  # the ruling in force
    points: int | None = None
    power: bool | None = None
    thrown_out: bool = False  # the tossup was thrown out: the buzz no longer counts
    #: A refused buzz: the presses that repeated it later in its tossup (same player, reason
    #: and holder of the floor), counted here rather than stored each as a buzz and an event,
    #: and the server wall clock at the last of them.
    repeats: int = 0
    last_repeat_wall: float | None = None


class RulingRow(SQLModel, table=True):
    """Every ruling ever made, including the ones later undone (``undone_seq``)."""

    __tablename__ = "ruling"
    match_id: int = Field(primary_key=True, foreign_key="match.id")
    seq: int = Field(primary_key=True)
    buzz_id: int
    tossup_id: str = Field(max_length=100)
    team_id: str = Field(max_length=64)
    ruling: str = Field(max_length=16)
    points: int
    power: bool = False
    by: str = Field(max_length=16)
    undone_seq: int | None = None


class ModelStepRow(SQLModel, table=True):
    """One step of a model's guess trajectory: its guess after one clue prefix."""

    __tablename__ = "model_step"
    __table_args__ = (
        UniqueConstraint("model", "packet_id", "tossup_id", "step", name="uq_model_step"),
        Index("ix_model_step_question", "packet_id", "tossup_id"),
    )
    id: int | None = Field(default=None, primary_key=True)
    model: str = Field(max_length=200)
    packet_id: str = Field(max_length=100)
    tossup_id: str = Field(max_length=100)
    step: int  # clue index (0-based) of the prefix's last clue
    word_index: int  # last word index of the prefix
    guess: str | None = None
    confidence_logit: float | None = None  # arithmetic mean of exp(token logprob)
    confidence_logit_geo: float | None = None  # geometric mean
    sequence_prob: float | None = None  # product of token probabilities
    confidence_verbal: float | None = None
    correct: bool | None = None
    judge_directive: str | None = Field(default=None, max_length=16)
    would_buzz: bool | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    exemplars: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    extra: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class ModelBonusPartRow(SQLModel, table=True):
    """A model's answer to one bonus part, given the lead-in and the parts before it with their
    answers (as they are read in play); stored like a tossup step."""

    __tablename__ = "model_bonus_part"
    __table_args__ = (
        UniqueConstraint("model", "packet_id", "bonus_id", "part", name="uq_model_bonus_part"),
        Index("ix_model_bonus_part_bonus", "packet_id", "bonus_id"),
    )
    id: int | None = Field(default=None, primary_key=True)
    model: str = Field(max_length=200)
    packet_id: str = Field(max_length=100)
    bonus_id: str = Field(max_length=100)
    part: int  # 0-based
    guess: str | None = None
    confidence_logit: float | None = None
    confidence_logit_geo: float | None = None
    sequence_prob: float | None = None
    confidence_verbal: float | None = None
    correct: bool | None = None
    judge_directive: str | None = Field(default=None, max_length=16)
    #: whether the policy's confidence passes its threshold (the model answers either way)
    confident: bool | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    exemplars: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    extra: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class SurveyRow(SQLModel, table=True):
    """A per-clue survey of one packet (GRACE §3.2.1): players guess after every clue."""

    __tablename__ = "survey"
    code: str = Field(primary_key=True, max_length=16)  # what players type or scan
    # no foreign key: reloading an edited packet replaces its ``packet`` row
    packet_id: str = Field(index=True, max_length=100)
    title: str
    created_at: datetime = Field(default_factory=utcnow)


class SurveyParticipantRow(SQLModel, table=True):
    """One person taking a survey. Only a hash of their token is kept: a copy of the record
    cannot be used to answer in their name."""

    __tablename__ = "survey_participant"
    id: str = Field(primary_key=True, max_length=32)
    survey_code: str = Field(foreign_key="survey.code", index=True, max_length=16)
    name: str = Field(max_length=40)
    token_sha256: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow)


class SurveyStepRow(SQLModel, table=True):
    """A participant's answer after one clue prefix: the human counterpart of ``model_step``
    (same key and meaning of ``step``, ``word_index``, ``guess``, ``correct``, ``would_buzz``)."""

    __tablename__ = "survey_step"
    __table_args__ = (
        UniqueConstraint("participant_id", "packet_id", "tossup_id", "step", name="uq_survey_step"),
        Index("ix_survey_step_question", "packet_id", "tossup_id"),
    )
    id: int | None = Field(default=None, primary_key=True)
    participant_id: str = Field(foreign_key="survey_participant.id", index=True, max_length=32)
    packet_id: str = Field(max_length=100)
    tossup_id: str = Field(max_length=100)
    step: int  # clue index (0-based) of the prefix's last clue
    word_index: int  # last word index of the prefix
    guess: str = Field(max_length=200)  # may be empty: no idea yet
    would_buzz: bool
    correct: bool  # judged; a prompt counts as incorrect, as for models
    judge_directive: str = Field(max_length=16)
    latency_s: float | None = None  # server-measured: clue sent -> answer received
    client_latency_s: float | None = None  # as the browser measured it
    revisions: int = 0  # times the answer was changed after it was first given
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
