"""The per-clue survey (GRACE §3.2.1): players guess after every clue and say whether they
would buzz, at their own pace, and can stop and come back later.

Plain HTTP, because nothing here is realtime: every answer is one request, committed to the
record (``survey_step``) before the reply, and the reply carries the next clue.

* ``GET /survey?code=CODE`` is the page (``buzzer_client/survey.html``);
* ``GET /api/survey/{code}``: the survey's title and size;
* ``POST /api/survey/{code}/participants`` ``{name}`` → ``{participant_id, name, token}``;
* ``GET /api/survey/{code}/state`` (``Authorization: Bearer <token>``): where the participant
  is, with the clue to answer next;
* ``PUT /api/survey/{code}/answer`` (token) ``{tossup_id, step, guess, would_buzz}`` → the
  new state. Idempotent: the same answer again changes nothing, the latest answer may be
  changed (a retry, a typo), an earlier one may not, and a clue not yet shown is refused;
* ``GET /api/survey/{code}/progress`` (server token): every participant's count of answers.

A participant token is ``<participant id>.<random>``; the record keeps only its SHA-256, so
tokens survive a restart (a survey runs for days) and a copy of the record cannot be used to
answer in someone's name. The order of the clues is :class:`SurveyPlan` (no I/O).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.responses import FileResponse
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, func, select

from grace_arena.core.judge import Directive, judge
from grace_arena.core.packet import Packet
from grace_arena.protocol import (
    PLAYER_NAME_MAX,
    ApiError,
    SurveyAnswer,
    SurveyClue,
    SurveyGiven,
    SurveyInfo,
    SurveyJoin,
    SurveyJoined,
    SurveyProgress,
    SurveyState,
    well_formed_name,
)
from grace_arena.record.models import SurveyParticipantRow, SurveyRow, SurveyStepRow, utcnow
from grace_arena.record.schedule import new_join_code
from grace_arena.server.arena import CLIENT_DIR, Arena
from grace_arena.server.deps import ServerAuth, guess, wrong_guess

__all__ = ["SurveyPlan", "SurveyRefused", "Surveys", "router"]


class SurveyRefused(Exception):
    """An answer or request the survey does not accept; ``status`` is the HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class PlannedTossup:
    id: str
    category: str
    answer: str
    clues: tuple[str, ...]
    clue_ends: tuple[int, ...]  # last word index of each clue


Verdict = Literal["new", "revise", "unchanged"]


@dataclass(frozen=True)
class SurveyPlan:
    """Every clue of every tossup of a packet, in the order a participant answers them.

    Positions run over all steps: tossup 0's clues 0..n₀−1, then tossup 1's, and so on. A
    participant's answers always form a prefix of the plan (:meth:`verdict` keeps it so).
    """

    code: str
    title: str
    packet_id: str
    tossups: tuple[PlannedTossup, ...]

    @classmethod
    def of(cls, code: str, title: str, packet: Packet) -> SurveyPlan:
        tossups = []
        for t in packet.tossups:
            tokens = t.tokens()
            tossups.append(
                PlannedTossup(t.id, t.category, t.answer, tokens.clue_texts(), tokens.clue_ends)
            )
        return cls(code, title, packet.packet.id, tuple(tossups))

    @property
    def total(self) -> int:
        return sum(len(t.clues) for t in self.tossups)

    def steps(self) -> list[tuple[int, int]]:
        """(tossup number, step) of every position, in order."""
        return [(i, s) for i, t in enumerate(self.tossups) for s in range(len(t.clues))]

    def tossup_number(self, tossup_id: str) -> int:
        for i, t in enumerate(self.tossups):
            if t.id == tossup_id:
                return i
        raise SurveyRefused(404, f"no tossup {tossup_id!r} in survey {self.code}")

    def position(self, tossup_id: str, step: int) -> int:
        number = self.tossup_number(tossup_id)
        n_clues = len(self.tossups[number].clues)
        if not 0 <= step < n_clues:
            raise SurveyRefused(
                422, f"tossup {tossup_id!r} has clues 0..{n_clues - 1}; there is no step {step}"
            )
        return sum(len(t.clues) for t in self.tossups[:number]) + step

    def next_position(self, answered: set[tuple[str, int]]) -> int:
        """The first position not answered (``total`` when every clue is answered)."""
        for position, (number, step) in enumerate(self.steps()):
            if (self.tossups[number].id, step) not in answered:
                return position
        return self.total

    def verdict(
        self, answered: set[tuple[str, int]], tossup_id: str, step: int, *, same: bool
    ) -> Verdict:
        """What to do with an answer to ``(tossup_id, step)``; raises :class:`SurveyRefused`.

        ``same``: an answer is stored for this step and equals the one given.
        """
        position = self.position(tossup_id, step)
        next_up = self.next_position(answered)
        if position > next_up:
            raise SurveyRefused(
                409, f"clue {step + 1} of tossup {tossup_id!r} has not been shown yet"
            )
        if position == next_up:
            return "new"
        if same:
            return "unchanged"
        if position == next_up - 1:
            return "revise"
        raise SurveyRefused(
            409,
            f"clue {step + 1} of tossup {tossup_id!r} was answered already; only the latest "
            "answer can be changed",
        )


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Surveys:
    """The surveys a server hosts: one per packet, found again in the record after a restart."""

    def __init__(self, arena: Arena, packet_paths: list[Path]) -> None:
        self.arena = arena
        self.engine = arena.engine
        self.plans: dict[str, SurveyPlan] = {}
        # when this process first sent each clue to each participant (for ``latency_s``)
        self._shown: dict[tuple[str, str, int], float] = {}
        arena.load_packets(packet_paths)
        for path in packet_paths:
            from grace_arena.core.packet import load_packet

            packet = load_packet(path)
            code = self._ensure(packet)
            self.plans[code] = SurveyPlan.of(code, packet.packet.title, packet)

    def _ensure(self, packet: Packet) -> str:
        """The code of this packet's survey, created on first use."""
        with Session(self.engine) as session:
            row = session.exec(
                select(SurveyRow)
                .where(SurveyRow.packet_id == packet.packet.id)
                .order_by(SurveyRow.created_at)  # type: ignore[arg-type]
            ).first()
            if row is not None:
                return row.code
            while True:
                code = new_join_code()
                taken = session.get(SurveyRow, code) is not None
                if not taken and self.arena.store.find_by_join_code(code) is None:
                    break
            session.add(SurveyRow(code=code, packet_id=packet.packet.id, title=packet.packet.title))
            session.commit()
            return code

    def url(self, code: str) -> str:
        return f"{self.arena.settings.public_url.rstrip('/')}/survey?code={code}"

    def plan(self, code: str) -> SurveyPlan:
        plan = self.plans.get(code.strip().upper())
        if plan is None:
            raise SurveyRefused(404, f"no survey with code {code!r}")
        return plan

    # -- participants -------------------------------------------------------------------------

    def join(self, code: str, name: str) -> SurveyJoined:
        plan = self.plan(code)
        try:  # (the route's body was checked already; a caller in Python was not)
            name = well_formed_name(name, max_length=PLAYER_NAME_MAX)
        except ValueError as exc:
            raise SurveyRefused(422, str(exc)) from None
        participant = f"s-{secrets.token_hex(5)}"
        token = f"{participant}.{secrets.token_urlsafe(24)}"
        with Session(self.engine) as session:
            session.add(
                SurveyParticipantRow(
                    id=participant, survey_code=plan.code, name=name, token_sha256=_hash(token)
                )
            )
            session.commit()
        return SurveyJoined(participant_id=participant, name=name, token=token)

    def participant(self, code: str, token: str | None) -> SurveyParticipantRow:
        plan = self.plan(code)
        if not token:
            raise SurveyRefused(401, "a participant token is needed (join the survey first)")
        participant_id, _, _ = token.partition(".")
        with Session(self.engine) as session:
            row = session.get(SurveyParticipantRow, participant_id)
        if row is None or not hmac.compare_digest(row.token_sha256, _hash(token)):
            raise SurveyRefused(401, "unknown participant token; join the survey again")
        if row.survey_code != plan.code:
            raise SurveyRefused(403, f"this token is for survey {row.survey_code}, not {plan.code}")
        return row

    # -- answers ------------------------------------------------------------------------------

    def _steps(self, session: Session, plan: SurveyPlan, participant: str) -> list[SurveyStepRow]:
        return list(
            session.exec(
                select(SurveyStepRow).where(
                    SurveyStepRow.participant_id == participant,
                    SurveyStepRow.packet_id == plan.packet_id,
                )
            ).all()
        )

    def state(self, plan: SurveyPlan, who: SurveyParticipantRow) -> SurveyState:
        with Session(self.engine) as session:
            rows = self._steps(session, plan, who.id)
        return self._state(plan, who, rows)

    def _state(
        self, plan: SurveyPlan, who: SurveyParticipantRow, rows: list[SurveyStepRow]
    ) -> SurveyState:
        answered = {(r.tossup_id, r.step) for r in rows}
        position = plan.next_position(answered)
        clue = None
        if position < plan.total:
            number, step = plan.steps()[position]
            tossup = plan.tossups[number]
            given = sorted((r for r in rows if r.tossup_id == tossup.id), key=lambda r: r.step)
            clue = SurveyClue(
                tossup_id=tossup.id,
                number=number + 1,
                n_tossups=len(plan.tossups),
                category=tossup.category,
                step=step,
                n_clues=len(tossup.clues),
                clues=list(tossup.clues[: step + 1]),
                word_index=tossup.clue_ends[step],
                given=[
                    SurveyGiven(step=r.step, guess=r.guess, would_buzz=r.would_buzz) for r in given
                ],
            )
            self._shown.setdefault((who.id, tossup.id, step), time.monotonic())
        return SurveyState(
            code=plan.code,
            title=plan.title,
            participant_id=who.id,
            name=who.name,
            answered=len(answered & {(plan.tossups[n].id, s) for n, s in plan.steps()}),
            total=plan.total,
            done=clue is None,
            clue=clue,
        )

    def answer(self, plan: SurveyPlan, who: SurveyParticipantRow, msg: SurveyAnswer) -> SurveyState:
        """Judge and store one answer (committed before this returns); the new state."""
        received = time.monotonic()
        guess = " ".join(msg.guess.split())
        if msg.would_buzz and not guess:
            raise SurveyRefused(422, "to buzz, give a guess")
        tossup = plan.tossups[plan.tossup_number(msg.tossup_id)]
        plan.position(msg.tossup_id, msg.step)  # checks the step exists
        directive = judge(guess, tossup.answer).directive if guess else Directive.REJECT
        shown = self._shown.get((who.id, tossup.id, msg.step))
        for attempt in range(2):
            with Session(self.engine) as session:
                rows = self._steps(session, plan, who.id)
                old = next(
                    (r for r in rows if r.tossup_id == tossup.id and r.step == msg.step), None
                )
                same = old is not None and (old.guess, old.would_buzz) == (guess, msg.would_buzz)
                verdict = plan.verdict(
                    {(r.tossup_id, r.step) for r in rows}, tossup.id, msg.step, same=same
                )
                if verdict == "unchanged":
                    return self._state(plan, who, rows)
                row = old or SurveyStepRow(
                    participant_id=who.id,
                    packet_id=plan.packet_id,
                    tossup_id=tossup.id,
                    step=msg.step,
                    word_index=tossup.clue_ends[msg.step],
                    guess=guess,
                    would_buzz=msg.would_buzz,
                    correct=False,
                    judge_directive=directive.value,
                )
                row.guess, row.would_buzz = guess, msg.would_buzz
                row.correct = directive is Directive.ACCEPT  # a prompt counts as incorrect
                row.judge_directive = directive.value
                row.client_latency_s = msg.client_latency_s
                if verdict == "revise":
                    row.revisions += 1
                    row.updated_at = utcnow()
                else:
                    row.latency_s = None if shown is None else received - shown
                session.add(row)
                try:
                    session.commit()
                except IntegrityError:  # the same answer raced in twice: look again
                    if attempt:
                        raise
                    continue
                session.refresh(row)
                rows = [r for r in rows if r is not old] + [row]
                return self._state(plan, who, rows)
        raise AssertionError("unreachable")

    def progress(self, plan: SurveyPlan) -> list[SurveyProgress]:
        with Session(self.engine) as session:
            people = session.exec(
                select(SurveyParticipantRow)
                .where(SurveyParticipantRow.survey_code == plan.code)
                .order_by(SurveyParticipantRow.created_at)  # type: ignore[arg-type]
            ).all()
            counts = dict(
                session.exec(
                    select(SurveyStepRow.participant_id, func.count())
                    .where(SurveyStepRow.packet_id == plan.packet_id)
                    .group_by(SurveyStepRow.participant_id)  # type: ignore[arg-type]
                ).all()
            )
        return [
            SurveyProgress(
                participant_id=p.id, name=p.name, answered=counts.get(p.id, 0), total=plan.total
            )
            for p in people
        ]


# ---------------------------------------------------------------------------------------------
# Routes (mounted by ``create_app`` when ``Settings.survey_packets`` is set)


def get_surveys(request: Request) -> Surveys:
    return request.app.state.surveys


SurveysDep = Annotated[Surveys, Depends(get_surveys)]


def _bearer(authorization: Annotated[str | None, Header()] = None) -> str | None:
    return authorization.removeprefix("Bearer ").strip() if authorization else None


TokenDep = Annotated[str | None, Depends(_bearer)]


def _guessing(request: Request) -> str:
    """The address of a request that tries a survey's code or a participant's token (429 while
    it is held for guessing: grace_arena.server.guard)."""
    return guess(request, request.app.state.arena)


GuessDep = Annotated[str, Depends(_guessing)]


def _refused(exc: SurveyRefused, surveys: Surveys, address: str) -> HTTPException:
    if exc.status in (401, 403, 404):  # a code or a token that opens nothing
        wrong_guess(address, surveys.arena)
    return HTTPException(status_code=exc.status, detail=exc.message)


router = APIRouter()


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The error responses of a route, for the OpenAPI description (429: too many wrong codes
    or tokens from the address, on every route that takes one)."""
    return {status: {"model": ApiError} for status in (*statuses, 429)}


@router.get("/survey", include_in_schema=False)
def survey_page() -> FileResponse:
    return FileResponse(CLIENT_DIR / "survey.html", headers={"Cache-Control": "no-cache"})


@router.get("/api/survey/{code}", responses=_errors(404))
def survey_info(code: str, surveys: SurveysDep, address: GuessDep) -> SurveyInfo:
    try:
        plan = surveys.plan(code)
    except SurveyRefused as exc:
        raise _refused(exc, surveys, address) from None
    return SurveyInfo(
        code=plan.code, title=plan.title, n_tossups=len(plan.tossups), n_steps=plan.total
    )


@router.post("/api/survey/{code}/participants", status_code=201, responses=_errors(400, 404, 422))
def survey_join(
    code: str, body: SurveyJoin, surveys: SurveysDep, address: GuessDep
) -> SurveyJoined:
    try:
        return surveys.join(code, body.name)
    except SurveyRefused as exc:
        raise _refused(exc, surveys, address) from None


@router.get("/api/survey/{code}/state", responses=_errors(401, 403, 404))
def survey_state(code: str, surveys: SurveysDep, token: TokenDep, address: GuessDep) -> SurveyState:
    try:
        who = surveys.participant(code, token)
        return surveys.state(surveys.plan(code), who)
    except SurveyRefused as exc:
        raise _refused(exc, surveys, address) from None


@router.put("/api/survey/{code}/answer", responses=_errors(400, 401, 403, 404, 409, 422))
def survey_answer(
    code: str, body: SurveyAnswer, surveys: SurveysDep, token: TokenDep, address: GuessDep
) -> SurveyState:
    try:
        who = surveys.participant(code, token)
        return surveys.answer(surveys.plan(code), who, body)
    except SurveyRefused as exc:
        raise _refused(exc, surveys, address) from None


@router.get("/api/survey/{code}/progress", responses=_errors(401, 404))
def survey_progress(
    code: str, surveys: SurveysDep, _: ServerAuth, address: GuessDep
) -> list[SurveyProgress]:
    try:
        return surveys.progress(surveys.plan(code))
    except SurveyRefused as exc:
        raise _refused(exc, surveys, address) from None
