"""What each role may see: pure functions of a match (and a few facts about its room), with
no sockets and no clock of their own, so that they are tested directly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grace_arena.core import hybrid
from grace_arena.core.config import MatchConfig, TeamKind
from grace_arena.core.events import Event, Ruled, event_to_dict
from grace_arena.core.match import BonusPlay, Match, bouncebacks_played, can_undo, in_overtime
from grace_arena.core.officiating import regulation_of, timeouts_left
from grace_arena.core.officiating import standing as match_standing
from grace_arena.core.phases import FINISHED, HAS_FLOOR, Phase
from grace_arena.core.rules import rule_set
from grace_arena.core.standings import Standing
from grace_arena.protocol import (
    AiView,
    BonusPartView,
    BonusView,
    BuzzMark,
    ConfidencePoint,
    ConsultedView,
    CurvesView,
    EventView,
    FloorView,
    GameClockView,
    MatchResult,
    MatchView,
    ModelCurveView,
    ModelGuessView,
    PreAnswerView,
    ReadingView,
    RecordStatus,
    ReplayBuzz,
    ReplayView,
    RevealMsg,
    Role,
    RoomStatus,
    ScheduledMatch,
    StandingRow,
    StandingsView,
    State,
    TeamView,
    TimeoutView,
    TossupView,
)
from grace_arena.server.protests import officiating_view

#: Keys of events that only the moderator may see.
SECRET_KEYS = (
    "suggestion", "prompt_question", "confidence", "model_correct", "draft", "draft_suggestion",
)  # fmt: skip
#: Events only the moderator gets; the others learn of these changes from the next state
#: (keeps the per-word fan-out to one message per client).
MODERATOR_EVENTS = frozenset(
    {
        "words_revealed",
        "reading_paused",
        "reading_resumed",
        "pace_changed",
        "player_joined",
        "match_created",
    }
)


@dataclass(frozen=True)
class ModelStep:
    """One precomputed step of a model player: its guess once the prefix ending at ``word``
    is read, its confidence of the kind its policy buzzes on, both kinds the record keeps,
    and the judge's verdict on the guess."""

    word: int
    guess: str | None
    confidence: float | None
    logit: float | None = None
    verbal: float | None = None
    correct: bool | None = None


@dataclass(frozen=True)
class ModelTrajectory:
    """A model team's precomputed steps on one tossup, in order."""

    steps: tuple[ModelStep, ...]


@dataclass(frozen=True)
class RoomFacts:
    """What a view needs of a live room besides its match."""

    match_id: int
    join_code: str
    words: Mapping[str, list[str]]  # tossup id -> its words as written
    wpm: int
    trajectories: Mapping[str, Mapping[str, ModelTrajectory]]
    tossup_log: Sequence[dict[str, Any]]
    event: EventView | None = None  # the event, room and round of a scheduled match
    #: tossup id -> word index -> what follows the word that is not a word (pronunciation
    #: guides): the moderator reads them aloud
    guides: Mapping[str, Mapping[int, str]] = field(default_factory=dict)
    #: The record is not taking the room's changes now (None: all is well).
    record: RecordStatus | None = None
    #: The match asked for the voice and it cannot speak here: why, in words.
    voice_note: str | None = None


def events_for(
    match: Match, events: Sequence[Event], tossup_log: Sequence[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """The events of one change as each role may see them (``tossup_log``: the tossup's
    events so far, to reveal a guess with its ruling). A repeated press is nobody's: its
    player hears of it from its buzz result."""
    events = [ev for ev in events if ev.type != "buzz_repeated"]
    public = [
        public_event(match, ev, tossup_log) for ev in events if ev.type not in MODERATOR_EVENTS
    ]
    return {
        "moderator": [event_to_dict(ev) for ev in events],
        # a phone learns of its own refused buzz from its buzz_result; the others' refusals
        # (hundreds in a storm, decided with the buzz that takes the floor) are not its business
        "player": [e for e in public if e["type"] != "buzz_refused"],
        "display": public,
    }


def public_tossup_id(match: Match, tossup_id: str | None) -> str | None:
    """What players and displays know a tossup by: its number in the match (a packet's
    ids may name the answer)."""
    if tossup_id is None:
        return None
    played = match.game.played
    number = played.index(tossup_id) + 1 if tossup_id in played else len(played) + 1
    return f"tossup-{number}"


def public_bonus_id(match: Match, bonus_id: str) -> str:
    """What players and displays know a bonus by: its number in the match."""
    used = match.game.bonuses_used
    number = used.index(bonus_id) + 1 if bonus_id in used else len(used) + 1
    return f"bonus-{number}"


def bonus_view(match: Match, role: Role, *, now: float | None = None) -> BonusView | None:
    """The cycle's bonus as ``role`` may see it: the lead-in and the parts up so far (all of
    them for the moderator), each part's answer line once it is ruled, the typed answer (said
    aloud in a room, so the room sees it; the judge's suggestion is the moderator's)."""
    game = match.game
    play, spec = game.bonus, match.current_bonus
    if play is None or spec is None:
        return None
    moderator = role == "moderator"
    parts = []
    for number, part in enumerate(spec.parts):
        ruled = [r for r in play.results if r.part == number]
        controlled = next((r for r in ruled if not r.bounceback), None)
        bounced = next((r for r in ruled if r.bounceback), None)
        up = number <= play.part or play.done
        parts.append(
            BonusPartView(
                number=number + 1,
                value=part.value,
                difficulty=part.difficulty,
                text=part.text if moderator or up else None,
                # (a part is over once play moved past it, bounceback included)
                answer=part.answer if moderator or number < play.part or play.done else None,
                ruling=controlled.ruling.value if controlled else None,
                points=controlled.points if controlled else 0,
                bounceback_team=bounced.team if bounced else None,
                bounceback_points=bounced.points if bounced else 0,
                choice=controlled.choice if controlled else None,
            )
        )  # fmt: skip
    names = match.state.players
    typed = play.answer
    turn = None if play.done or game.phase is not Phase.BONUS else match.bonus_turn()
    return BonusView(
        id=spec.id if moderator else public_bonus_id(match, spec.id),
        number=play.index + 1,
        category=spec.category,
        leadin=spec.leadin,
        team=play.team,
        part=play.part,
        turn=turn,
        bounceback=play.bounceback,
        parts=parts,
        answer=typed.text if typed else None,
        answered_by=names.get(typed.team, {}).get(typed.player, typed.player) if typed else None,
        suggestion=typed.suggestion if typed and moderator else None,
        prompt_question=typed.prompt_question if typed and moderator else None,
        points={t.id: play.points(t.id) for t in match.config.teams},
        done=play.done,
        prompted=play.prompted,
        consult=(rules := rule_set(match.config.rules).bonuses).consults,
        consult_points=rules.consult_points,
        consulted=None
        if play.consulted is None
        else ConsultedView(
            model=play.consulted.model,
            guess=play.consulted.guess,
            confidence=play.consulted.confidence,
            draft=play.consulted.draft if moderator else None,
        ),
        pre_answer=_pre_answer_view(match, play, moderator, now),
    )


def _pre_answer_view(
    match: Match, play: BonusPlay, moderator: bool, now: float | None
) -> PreAnswerView | None:
    """The pre-answer window open on the current part (None: none is)."""
    window = play.pre_answer
    if window is None:
        return None
    names = match.state.players.get(match.bonus_turn() or play.team, {})
    game = match.game  # the window's clock is the game's (held while paused)
    if game.deadline is None:
        left = game.held or 0.0
    else:
        left = game.deadline - (now if now is not None else game.deadline)
    return PreAnswerView(
        deadline=game.deadline, seconds_left=max(0.0, left), written=len(window.answers),
        players=len(names),
        answers={names.get(p, p): text for p, text in window.answers} if moderator else None,
    )  # fmt: skip


def public_event(match: Match, ev: Event, tossup_log: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``ev`` as players and displays may see it."""
    data = event_to_dict(ev)
    for key in SECRET_KEYS:
        data.pop(key, None)
    if ev.type == "ai_answers_shown":  # the judge's verdict on each AI's answer is not shown
        data["answers"] = [
            {k: v for k, v in a.items() if k not in ("correct", *SECRET_KEYS)}
            for a in data["answers"]
        ]
    if "tossup_id" in data:
        data["tossup_id"] = public_tossup_id(match, data["tossup_id"])
    if "bonus_id" in data:
        data["bonus_id"] = public_bonus_id(match, data["bonus_id"])
    if ev.type in ("buzz_accepted", "answer_given", "bonus_pre_answer_given"):
        data.pop("answer", None)
        data.pop("text", None)
    if isinstance(ev, Ruled):
        # The guess or typed answer is revealed with the ruling.
        buzz = next(
            (
                e
                for e in reversed(tossup_log)
                if e.get("buzz_id") == ev.buzz_id and e["type"] in ("buzz_accepted", "answer_given")
            ),
            None,
        )
        if buzz is not None:
            data["answer"] = buzz.get("answer", buzz.get("text"))
    return data


def team_views(match: Match, role: Role) -> list[TeamView]:
    """The match's teams as ``role`` may see them (players' names for the moderator only)."""
    game, roster = match.game, match.state.players
    return [
        TeamView(
            id=t.id,
            name=t.name,
            kind=t.kind.value,
            players=dict(roster.get(t.id, {})) if role == "moderator" else {},
            size=len(roster.get(t.id, {})),
            score=game.scores[t.id],
            locked_out=t.id in game.locked_out,
            timeouts_left=timeouts_left(match.config, match.state.timeouts, t.id),
            lineup=list(match.state.lineups.get(t.id, ()))
            if role == "moderator" and match.config.rules.lineup_size is not None
            else None,
            ais=[
                AiView(
                    id=a.id,
                    name=a.name,
                    model=a.model,
                    weight_class=a.weight_class,
                    mode=hybrid.mode_of(match.state, a.id),
                    k=hybrid.k_of(match.state, a.id),
                )
                for a in t.ai_players
            ],  # a hybrid team's AI players (core.hybrid)
        )
        for t in match.config.teams
    ]


def state_view(
    match: Match,
    room: RoomFacts,
    role: Role,
    events: list[dict[str, Any]] | None = None,
    *,
    now: float,
) -> State:
    """What ``role`` may see of ``match`` now: the moderator everything; players and displays
    no packet ids, no answer line before the tossup is over, no judge's suggestion, no model's
    guess; players the words only in screen mode or once the tossup is over."""
    game = match.game
    config = match.config
    # (during its bonus, the cycle's tossup is over: its words and answer line are everyone's)
    finished = game.phase in FINISHED or game.phase in (Phase.BONUS, Phase.ENDED)
    teams = team_views(match, role)
    tossup = None
    spec = match.current_tossup
    if spec is not None:
        words = room.words.get(spec.id, [])
        if role == "moderator":
            shown = words
        elif role == "display" or config.reading_mode == "screen" or finished:
            shown = words[: game.position + 1]
        else:
            shown = None
        tossup = TossupView(
            id=spec.id if role == "moderator" else (public_tossup_id(match, spec.id) or ""),
            number=len(game.played),
            category=spec.category,
            n_words=spec.n_words,
            clue_ends=list(spec.clue_ends),
            power_index=spec.power_index,
            position=game.position,
            words=shown,
            answer=spec.answer if role == "moderator" or finished else None,
            guides=dict(room.guides.get(spec.id, {})) if role == "moderator" else {},
        )
    floor = None
    if game.floor is not None and (game.phase in HAS_FLOOR or game.phase is Phase.ANSWERED):
        f = game.floor
        names = match.state.players.get(f.team, {})
        ai = hybrid.ai_of(match.config, f.team, f.player)  # a hybrid team's AI: by its name
        names = {**names, f.player: ai.name} if ai is not None else names
        secret = role == "moderator"
        floor = FloorView(
            buzz_id=f.buzz_id,
            team=f.team,
            player=f.player,
            player_name=names.get(f.player, f.player),
            kind=f.kind.value,
            word_index=f.word_index,
            clue_index=spec.clue_of(f.word_index) if spec else None,
            answer=f.answer if secret or game.phase is Phase.ANSWERED else None,
            suggestion=f.suggestion if secret else None,
            confidence=None,
        )
    models = (
        model_views(match, room.trajectories, spec.id if spec else None, game.position)
        if role == "moderator"
        else []
    )
    # the models' curves: never a player's; a display's live only in an exhibition, and
    # everyone's once the tossup is over
    curves = None
    if (
        tossup is not None
        and spec is not None
        and game.phase is not Phase.IDLE
        and any(t.kind is TeamKind.MODEL for t in config.teams)
        and (role == "moderator" or (role == "display" and (finished or config.exhibition)))
    ):
        curves = curves_view(
            config,
            room.trajectories,
            spec.id,
            tossup.id,
            position=game.position,
            over=finished,
            tossup_log=room.tossup_log,
        )
    rules = rule_set(config.rules)
    return State(
        role=role,
        match=MatchView(
            id=room.match_id,
            title=config.title,
            join_code=room.join_code,
            phase=game.phase.value,
            paused=game.paused,
            tossups_total=len(config.tossups),
            tossups_played=len(game.played),
            tossup_ids=[t.id for t in config.tossups] if role == "moderator" else [],
            can_undo=role == "moderator" and can_undo(game),
            format=rules.format,
            rules=rules.describe(bouncebacks=bouncebacks_played(config)),
            bonuses=rules.bonuses.played,
            regulation_tossups=rules.regulation,
            tossups_heard=match.game.heard,
            no_bonus=_no_bonus(match),
            overtime=in_overtime(config, game, match.state.half_clock),
            **_officiating(match),
            result=match_result(match),
        ),
        teams=teams,
        tossup=tossup,
        floor=floor,
        bonus=bonus_view(match, role, now=now) if game.phase is not Phase.ENDED else None,
        deadline=game.deadline,
        held=game.held,
        conferral=game.conferral,
        conferral_held=game.conferral_held,
        timeout=timeout_view(match, now),
        game_clock=game_clock_view(match, now),
        reading=ReadingView(
            mode=config.reading_mode,
            wpm=room.wpm,
            running=game.reading,
            by_key=match.state.by_key,
            voice=config.voice,
            voice_note=room.voice_note if config.voice else None,
        ),
        event=room.event,
        record=room.record,
        models=models,
        curves=curves,
        last_events=list(room.tossup_log[-50:]) if role == "moderator" else [],
        officiating=officiating_view(match) if role == "moderator" else None,
        events=events or [],
        server_time=now,
    )


#: The roles that may be sent a word revealed as a ``reveal`` (the moderator's state changes
#: with every word in more than its words: the models' guesses, the log).
REVEAL_ROLES = frozenset({"player", "display"})


def reveal_view(
    match: Match, room: RoomFacts, role: Role, shown: tuple[str, int], *, now: float
) -> RevealMsg | None:
    """The change from the state ``role`` was sent last (its tossup and position: ``shown``)
    to its state now, as a ``reveal``, for a change that only revealed words; None when a
    reveal cannot say it (another tossup, no new word, not a tossup being read, a display
    that shows the models' curves live): the client gets a whole state."""
    game, config = match.game, match.config
    spec = match.current_tossup
    if role not in REVEAL_ROLES or spec is None or game.phase is not Phase.READING:
        return None
    if role == "display" and config.exhibition:  # (the curves move with every word)
        return None
    tossup_id, after = shown
    if tossup_id != public_tossup_id(match, spec.id) or not -1 <= after < game.position:
        return None
    words = None
    if role == "display" or config.reading_mode == "screen":
        words = room.words.get(spec.id, [])[after + 1 : game.position + 1]
    return RevealMsg(
        tossup=tossup_id,
        after=after,
        position=game.position,
        words=words,
        game_clock=game_clock_view(match, now),
        timeout=timeout_view(match, now),
        server_time=now,
    )


def _officiating(match: Match) -> dict[str, Any]:
    """Where the match stands by its format, and the questions thrown out (and replaced)."""
    game, config = match.game, match.config
    where = match_standing(config, game, match.state.half_clock)
    return {
        "stage": where.stage.value,
        "stage_text": where.text,
        "tossups_thrown_out": len(game.played) - game.heard,
        "conferral_time": config.rules.conferral_time,
        "phone_protests": config.phone_protests,
    }


def game_clock_view(match: Match, now: float) -> GameClockView | None:
    """A timed half's game clock, for every screen (None: untimed, or past regulation)."""
    length = match.config.rules.half_time
    clock = match.state.half_clock
    if length is None or clock.regulation_heard is not None or match.phase is Phase.ENDED:
        return None
    return GameClockView(half=clock.half, length=length, ends=clock.ends(length),
                         left=clock.left(length, now), expired=clock.expired)  # fmt: skip


def timeout_view(match: Match, now: float) -> TimeoutView | None:
    """The timeout on now: called since the last tossup started, and not run out."""
    state = match.state
    taken = state.timeouts[-1] if state.timeouts else None
    if taken is None or taken.after != state.tossups_started or taken.ends <= now:
        return None
    number = sum(1 for t in state.timeouts if t.team == taken.team)
    return TimeoutView(team=taken.team, number=number, ends=taken.ends)


def _points(n: int) -> str:
    return f"−{-n}" if n < 0 else str(n)


def match_result(match: Match) -> MatchResult | None:
    """How the match ended, in words, once it has: the team ahead and the final score, a tie,
    overtime, a match ended before its tossups (or its regulation) were all played."""
    game, config = match.game, match.config
    if game.phase is not Phase.ENDED:
        return None
    scores = {t.id: game.scores[t.id] for t in config.teams}
    ranked = sorted(config.teams, key=lambda t: -scores[t.id])  # (stable: ties keep order)
    overtime = in_overtime(config, game, match.state.half_clock)
    regulation = rule_set(config.rules).regulation
    if config.rules.half_time is not None:  # timed halves: regulation is what time allowed
        regulation = regulation_of(config, match.state.half_clock)
    if regulation is not None:
        early = game.heard < regulation
    else:
        early = len(game.played) < len(config.tossups)
    if not game.played:
        return MatchResult(
            winner=None,
            text="The match ended before any tossup was played",
            scores=scores,
            early=True,
        )
    top = scores[ranked[0].id]
    leaders = [t for t in ranked if scores[t.id] == top]
    rest = ranked[len(leaders) :]
    tied = len(leaders) > 1
    if len(ranked) == 2:
        second = scores[ranked[1].id]
        # (a dash between two numbers, one of them negative, reads as a minus: "to")
        final = f"{_points(top)}{'–' if second >= 0 else ' to '}{_points(second)}"
        text = (
            f"{ranked[0].name} and {ranked[1].name} tied {final}"
            if tied
            else f"{ranked[0].name} won {final}"
        )
    else:
        others = ", ".join(f"{t.name} {_points(scores[t.id])}" for t in rest)
        names = " and ".join(t.name for t in leaders)
        text = f"{names} tied on {_points(top)}" if tied else f"{names} won with {_points(top)}"
        text += f" ({others})" if others else ""
    if overtime:
        text += " in overtime"
    if early:
        # of regulation: heard, as it counts them (a thrown-out tossup is not, its replacement
        # is); else read, of the match's list
        done, of = (
            (game.heard, regulation) if regulation else (len(game.played), len(config.tossups))
        )
        text += f" (ended after {done} of {of} tossups)"
    return MatchResult(
        winner=None if tied else ranked[0].id,
        text=text,
        scores=scores,
        tied=tied,
        overtime=overtime,
        early=early,
    )


def _no_bonus(match: Match) -> str | None:
    """Why the tossup just answered correctly has no bonus, where the rules play bonuses."""
    game, config = match.game, match.config
    if (
        not rule_set(config.rules).bonuses.played
        or game.phase is not Phase.ANSWERED
        or game.bonus is not None
        or game.floor is None
    ):
        return None
    if game.floor.kind is TeamKind.MODEL:
        return "a model player's tossup earns no bonus"
    if not rule_set(config.rules).bonuses.earned(
        overtime=in_overtime(config, game, match.state.half_clock)
    ):
        return "no bonus in overtime"
    if all(b.id in game.bonuses_used for b in config.bonuses):
        return "every bonus of the packet has been used"
    return None


def model_views(
    match: Match,
    trajectories: Mapping[str, Mapping[str, ModelTrajectory]],
    tossup_id: str | None,
    position: int,
) -> list[ModelGuessView]:
    """Each model team's buzz and latest revealed guess (the moderator's model panel)."""
    views = []
    for team in match.config.teams:
        if team.kind is not TeamKind.MODEL:
            continue
        buzz = team.buzzes.get(tossup_id) if tossup_id else None
        guess = confidence = None
        trajectory = trajectories.get(team.id, {}).get(tossup_id or "")
        if trajectory is not None:
            # the latest step whose prefix has been revealed (else the first one)
            seen = [s for s in trajectory.steps if s.word <= max(position, 0)]
            step = seen[-1] if seen else (trajectory.steps[0] if trajectory.steps else None)
            if step is not None:
                guess, confidence = step.guess, step.confidence
        views.append(
            ModelGuessView(
                team=team.id,
                model=team.model or team.name,
                buzz_word=buzz.word_index if buzz else None,
                guess=guess,
                confidence=confidence,
            )
        )
    return views


def standings_view(
    event: str,
    title: str,
    rounds: int,
    rows: Sequence[Standing],
    rooms: Sequence[RoomStatus] = (),
    schedule: Sequence[ScheduledMatch] = (),
    *,
    pools: Sequence[str | None] = (),
    **scope: Any,
) -> StandingsView:
    """An event's standings as everyone may see them (nothing in them is secret). ``pools``:
    each row's pool (the standings of a phase, pool after pool); ``scope``: the view's
    ``phase``, ``pool`` and ``phases``."""
    return StandingsView(
        event=event,
        title=title,
        rounds=rounds,
        rows=[
            StandingRow(
                rank=s.rank,
                team=s.team,
                name=s.name,
                kind="model" if s.kind == "model" else "human",
                played=s.played,
                won=s.won,
                lost=s.lost,
                tied=s.tied,
                live=s.live,
                points=s.points,
                points_against=s.points_against,
                tossups_heard=s.tossups_heard,
                points_per_tossup=s.points_per_tossup,
                correct=s.correct,
                powers=s.powers,
                incorrect=s.incorrect,
                negs=s.negs,
                bonuses_heard=s.bonuses_heard,
                bonus_points=s.bonus_points,
                points_per_bonus=s.points_per_bonus,
                bounceback_points=s.bounceback_points,
                points_per_game=s.points_per_game,
                points_per_20_tuh=s.points_per_20_tuh,
                live_points=s.live_points,
                pool=pool,
            )
            for s, pool in zip(rows, pools or [None] * len(rows), strict=True)
        ],
        rooms=list(rooms),
        schedule=list(schedule),
        **scope,
    )


# ---------------------------------------------------------------------------------------------
# The model players' view of a tossup (GRACE's figure 3), live and replayed


@dataclass
class _TossupBuzz:
    """A buzz that took the floor on a tossup, followed through its log."""

    buzz_id: int
    word: int
    team: str
    player: str
    kind: str
    answer: str | None
    confidence: float | None
    #: the rulings given, as (seq, ruling, points); the last one is in force
    rulings: list[tuple[int, str, int]] = field(default_factory=list)

    @property
    def ruling(self) -> str | None:
        return self.rulings[-1][1] if self.rulings else None

    @property
    def points(self) -> int | None:
        return self.rulings[-1][2] if self.rulings else None


def _tossup_buzzes(log: Sequence[Mapping[str, Any]]) -> list[_TossupBuzz]:
    """The buzzes that took the floor in one tossup's events, with their rulings in force."""
    buzzes: dict[int, _TossupBuzz] = {}
    for ev in log:
        kind = ev.get("type")
        if kind == "buzz_accepted":
            buzzes[ev["buzz_id"]] = _TossupBuzz(
                buzz_id=ev["buzz_id"],
                word=ev["word_index"],
                team=ev["team"],
                player=ev["player"],
                kind=str(ev.get("kind", "human")),
                answer=ev.get("answer"),
                confidence=ev.get("confidence"),
            )
        elif kind == "answer_given" and ev.get("buzz_id") in buzzes:
            buzzes[ev["buzz_id"]].answer = ev.get("text")
        elif kind == "ruled" and ev.get("buzz_id") in buzzes:
            buzzes[ev["buzz_id"]].rulings.append(
                (ev.get("seq", 0), str(ev["ruling"]), int(ev["points"]))
            )
        elif kind == "ruling_undone" and ev.get("buzz_id") in buzzes:
            rulings = buzzes[ev["buzz_id"]].rulings
            undone = [r for r in rulings if r[0] == ev.get("ruled_seq")]
            if undone:
                rulings.remove(undone[-1])
            elif rulings:
                rulings.pop()
    return list(buzzes.values())


def curves_view(
    config: MatchConfig,
    trajectories: Mapping[str, Mapping[str, ModelTrajectory]],
    tossup_id: str,
    shown_id: str,
    *,
    position: int,
    over: bool,
    tossup_log: Sequence[Mapping[str, Any]],
) -> CurvesView:
    """Each model team's confidence on tossup ``tossup_id`` (known to the role as
    ``shown_id``) over the words read up to ``position`` — every step once the tossup is
    ``over`` — with its threshold, and the buzzes of the room from the tossup's log.

    The spoiler guard: a model's guess (and whether it was right) is given once its buzz has
    been ruled on, or once the tossup is over (then, without a buzz, its guess where the
    reading stopped); a step's verdict only once the tossup is over."""
    spec = config.tossup(tossup_id)
    buzzes = _tossup_buzzes(tossup_log)
    curves = []
    for team in config.teams:
        if team.kind is not TeamKind.MODEL:
            continue
        trajectory = trajectories.get(team.id, {}).get(tossup_id)
        steps = trajectory.steps if trajectory is not None else ()
        points = [
            ConfidencePoint(
                word=s.word, logit=s.logit, verbal=s.verbal, correct=s.correct if over else None
            )
            for s in steps
            if over or s.word <= position
        ]
        own = next((b for b in buzzes if b.team == team.id), None)
        guess = confidence = correct = None
        if own is not None and (own.ruling is not None or over):
            guess, confidence = own.answer, own.confidence
            correct = {"correct": True, "incorrect": False}.get(own.ruling or "")
        elif own is None and over:
            read = [s for s in steps if s.word <= max(position, 0)]
            if read:
                guess, confidence, correct = read[-1].guess, read[-1].confidence, read[-1].correct
        curves.append(
            ModelCurveView(
                team=team.id,
                name=team.name,
                model=team.model or team.name,
                confidence=team.confidence or "logit",
                threshold=team.threshold if team.threshold is not None else 0.5,
                points=points,
                buzz_word=own.word if own is not None else None,
                guess=guess,
                guess_confidence=confidence,
                correct=correct,
            )
        )
    return CurvesView(
        tossup=shown_id,
        n_words=spec.n_words if spec is not None else 0,
        position=position,
        over=over,
        curves=curves,
        buzzes=[
            BuzzMark(
                word=b.word,
                team=b.team,
                kind="model" if b.kind == "model" else "human",
                ruling=b.ruling,
            )
            for b in buzzes
        ],
    )


class ReplayRefused(LookupError):
    """A replay that cannot be shown: ``status`` is the HTTP status that says why (404: no
    such tossup; 409: not over yet)."""

    def __init__(self, status: int, message: str, *, wrong_code: bool = False) -> None:
        super().__init__(message)
        self.status = status
        #: The match and code asked for open nothing (counted as a wrong guess).
        self.wrong_code = wrong_code


def replay_view(
    match_id: int,
    events: Sequence[Event],
    number: int,
    words: Mapping[str, list[str]],
    trajectories: Mapping[str, Mapping[str, ModelTrajectory]],
) -> ReplayView:
    """Tossup ``number`` (1-based) of a match as its stored ``events`` tell it, once it has
    ended: the words, every buzz that took the floor with its answer and ruling in force, the
    model players' whole trajectories. Raises :class:`ReplayRefused`."""
    config: MatchConfig | None = None
    names: dict[str, str] = {}
    started: list[int] = []
    for i, ev in enumerate(events):
        if ev.type == "match_created":
            config = ev.config  # type: ignore[attr-defined]
        elif ev.type == "player_joined":
            names[ev.player] = ev.name  # type: ignore[attr-defined]
        elif ev.type == "tossup_started":
            started.append(i)
    if config is None:
        raise ReplayRefused(404, f"no match {match_id}")
    if not 1 <= number <= len(started):
        played = len(started)
        raise ReplayRefused(
            404,
            f"match {match_id} has no tossup {number}: "
            + (f"{played} played so far" if played else "none played yet"),
        )
    begin = started[number - 1]
    end = started[number] if number < len(started) else len(events)
    own = events[begin:end]
    tossup_id = own[0].tossup_id  # type: ignore[attr-defined]
    # (undoing the ruling that ended it puts the tossup back under way)
    ended: Event | None = None
    for ev in own:
        if ev.type == "tossup_ended":
            ended = ev
        elif ev.type == "ruling_undone":
            ended = None
    if ended is None:
        raise ReplayRefused(
            409,
            f"tossup {number} of match {match_id} is still being played: its replay opens "
            "once it has ended",
        )
    spec = config.tossup(tossup_id)
    assert spec is not None
    log = [event_to_dict(ev) for ev in own]
    buzzed = _tossup_buzzes(log)
    position = max(
        [d["position"] for d in log if d["type"] == "words_revealed"] + [b.word for b in buzzed],
        default=-1,
    )
    teams = {t.id: t for t in config.teams}
    buzzes = []
    for b in buzzed:
        team = teams.get(b.team)
        is_model = team is not None and team.kind is TeamKind.MODEL
        buzzes.append(
            ReplayBuzz(
                buzz_id=b.buzz_id,
                word=b.word,
                team=b.team,
                team_name=team.name if team else b.team,
                kind="model" if b.kind == "model" else "human",
                player_name=(team.model or team.name)
                if is_model and team is not None
                else names.get(b.player, b.player),
                answer=b.answer,
                ruling=b.ruling,
                points=b.points,
            )
        )
    return ReplayView(
        match_id=match_id,
        title=config.title,
        tossup=number,
        tossups_played=len(started),
        category=spec.category,
        words=list(words.get(tossup_id, [])),
        clue_ends=list(spec.clue_ends),
        # (a format without powers has no power part, whatever the packet marks)
        power_index=spec.power_index if config.rules.power_points is not None else None,
        answer=spec.answer,
        outcome=ended.reason,  # type: ignore[attr-defined]
        buzzes=buzzes,
        curves=curves_view(
            config,
            trajectories,
            tossup_id,
            f"tossup-{number}",
            position=position,
            over=True,
            tossup_log=log,
        ),
    )
