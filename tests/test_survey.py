"""The per-clue survey server: real HTTP clients against a real server on a free port.

Every answer must land in ``survey_step`` (one row per participant, question and clue, with the
prefix's last word and the judge's verdict) before the reply; a participant resumes where they
stopped, also after a restart; bad input gets a clear error and stores nothing.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest
from backends import on_both_backends
from live import LiveServer
from sqlmodel import Session, select

from grace_arena.core.packet import load_packet
from grace_arena.record.models import SurveyParticipantRow, SurveyStepRow
from grace_arena.server.app import Settings
from grace_arena.server.survey import SurveyPlan, SurveyRefused

PACKET = """\
format: grace-arena-packet/1
packet:
  id: {id}
  title: {title}
tossups:
  - id: whale
    category: Literature
    clues:
      - A chapter of this novel titled "The Gam" defines a meeting of two whaling ships.
      - A preacher in this novel climbs a rope ladder into a pulpit.
      - Name this Herman Melville novel that opens "Call me Ishmael."
    answer: <b>Moby-Dick</b> [or The Whale; prompt on whale]
  - id: monster
    category: Literature
    clues:
      - This novel is framed by letters to Margaret Saville.
      - Name this Mary Shelley novel about Victor and his creature.
    answer: <b>Frankenstein</b> [or The Modern Prometheus]
"""


def write_packet(folder: Path, packet_id: str, title: str) -> Path:
    path = folder / f"{packet_id}.yaml"
    path.write_text(PACKET.format(id=packet_id, title=title), encoding="utf-8")
    return path


def two_packets(folder: Path) -> list[Path]:
    return [
        write_packet(folder, "survey-a", "Survey A"),
        write_packet(folder, "survey-b", "Survey B"),
    ]


# the ``server`` fixture's: a survey server of the two packets, written in the test's folder
pytestmark = pytest.mark.server(
    packets=[], first_match=None, secret="survey-tests", survey_packets=two_packets
)


@pytest.fixture
def packets(tmp_path) -> list[Path]:
    return two_packets(tmp_path)


def codes(server: LiveServer) -> dict[str, str]:
    """packet id -> survey code"""
    return {plan.packet_id: code for code, plan in server.app.state.surveys.plans.items()}


class Participant:
    """One person taking the survey over HTTP, as the page does."""

    def __init__(self, server: LiveServer, code: str, name: str | None = None) -> None:
        self.http = httpx.Client(base_url=server.http_url, timeout=20)
        self.code = code
        self.token: str | None = None
        self.id: str | None = None
        if name is not None:
            reply = self.http.post(f"/api/survey/{code}/participants", json={"name": name})
            assert reply.status_code == 201, reply.text
            self.token, self.id = reply.json()["token"], reply.json()["participant_id"]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def state(self) -> httpx.Response:
        return self.http.get(f"/api/survey/{self.code}/state", headers=self.headers)

    def answer(self, tossup_id: str, step: int, guess: str, buzz: bool, **extra) -> httpx.Response:
        body = {"tossup_id": tossup_id, "step": step, "guess": guess, "would_buzz": buzz}
        return self.http.put(
            f"/api/survey/{self.code}/answer", json={**body, **extra}, headers=self.headers
        )

    def close(self) -> None:
        self.http.close()


def stored(server: LiveServer) -> list[SurveyStepRow]:
    with Session(server.arena.engine) as session:
        return list(
            session.exec(
                select(SurveyStepRow).order_by(
                    SurveyStepRow.participant_id,  # type: ignore[arg-type]
                    SurveyStepRow.id,  # type: ignore[arg-type]
                )
            ).all()
        )


# What three players answer after each clue: (guess, would buzz).
SCRIPTS = {
    "Ann": [("moby dick", True), ("Moby-Dick", False), ("Moby-Dick", False),
            ("", False), ("Frankenstein", True)],
    "Bo": [("", False), ("whale", True), ("Moby Dick", True),
           ("Dracula", True), ("frankenstien", False)],
    "Cy": [("Billy Budd", False), ("Billy Budd", False), ("Moby-Dick", True),
           ("", False), ("", False)],
}  # fmt: skip
PLAN = [("whale", 0), ("whale", 1), ("whale", 2), ("monster", 0), ("monster", 1)]
# the judge's verdicts on those guesses (a prompt counts as incorrect)
EXPECTED = {
    "moby dick": ("accept", True),
    "Moby-Dick": ("accept", True),
    "Moby Dick": ("accept", True),
    "": ("reject", False),
    "Frankenstein": ("accept", True),
    "frankenstien": ("accept", True),  # one typo is tolerated
    "whale": ("prompt", False),
    "Dracula": ("reject", False),
    "Billy Budd": ("reject", False),
}


@on_both_backends
def test_several_players_answer_clue_by_clue_and_every_step_lands_in_the_record(server, packets):
    code = codes(server)["survey-a"]
    info = httpx.get(f"{server.http_url}/api/survey/{code.lower()}").json()
    assert info == {"code": code, "title": "Survey A", "n_tossups": 2, "n_steps": 5}
    clue_ends = {t.id: t.tokens().clue_ends for t in load_packet(packets[0]).tossups}
    people = {name: Participant(server, code, name) for name in SCRIPTS}
    errors: list[BaseException] = []

    def play(name: str) -> None:
        try:
            me = people[name]
            state = me.state().json()
            for (tossup, step), (guess, buzz) in zip(PLAN, SCRIPTS[name], strict=True):
                clue = state["clue"]
                assert (clue["tossup_id"], clue["step"]) == (tossup, step)
                assert len(clue["clues"]) == step + 1  # this clue and the ones before it
                assert clue["word_index"] == clue_ends[tossup][step]
                reply = me.answer(tossup, step, guess, buzz, client_latency_s=1.5)
                assert reply.status_code == 200, reply.text
                state = reply.json()
            assert state["done"] and state["clue"] is None
            assert (state["answered"], state["total"]) == (5, 5)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(name,)) for name in SCRIPTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    rows = stored(server)
    assert len(rows) == 15
    for name, me in people.items():
        mine = [r for r in rows if r.participant_id == me.id]
        assert [(r.tossup_id, r.step) for r in mine] == PLAN
        for r, (guess, buzz) in zip(mine, SCRIPTS[name], strict=True):
            assert r.packet_id == "survey-a"
            assert r.word_index == clue_ends[r.tossup_id][r.step]
            assert (r.guess, r.would_buzz) == (guess, buzz)
            assert (r.judge_directive, r.correct) == EXPECTED[guess], (name, guess)
            assert r.latency_s is not None and 0 <= r.latency_s < 30
            assert r.client_latency_s == 1.5 and r.revisions == 0
        me.close()


@on_both_backends
def test_a_player_resumes_where_they_stopped_also_after_a_restart(db_url, packets):
    settings = Settings(db_url=db_url, secret="first", survey_packets=packets)
    with LiveServer(settings) as server:
        code = codes(server)["survey-a"]
        me = Participant(server, code, "Dee")
        assert me.answer("whale", 0, "Ahab", False).status_code == 200
        assert me.answer("whale", 1, "Moby-Dick", True).status_code == 200
        token = me.token
        me.close()
        again = Participant(server, code)  # a new connection, the same token
        again.token = token
        state = again.state().json()
        assert state["name"] == "Dee" and state["answered"] == 2
        assert (state["clue"]["tossup_id"], state["clue"]["step"]) == ("whale", 2)
        assert state["clue"]["given"] == [
            {"step": 0, "guess": "Ahab", "would_buzz": False},
            {"step": 1, "guess": "Moby-Dick", "would_buzz": True},
        ]
        again.close()
    # a restart with another secret: the same survey code, the token still works
    settings = Settings(db_url=db_url, secret="second", survey_packets=packets)
    with LiveServer(settings) as server:
        assert codes(server)["survey-a"] == code
        back = Participant(server, code)
        back.token = token
        state = back.state().json()
        assert (state["clue"]["tossup_id"], state["clue"]["step"], state["answered"]) == (
            "whale",
            2,
            2,
        )
        reply = back.answer("whale", 2, "Moby-Dick", True)
        assert reply.json()["clue"]["tossup_id"] == "monster"
        assert len(stored(server)) == 3
        back.close()


@on_both_backends
def test_answering_again_updates_the_step_and_never_duplicates_it(server):
    code = codes(server)["survey-a"]
    me = Participant(server, code, "Eve")
    assert me.answer("whale", 0, "Ahab", False).status_code == 200
    again = me.answer("whale", 0, "Ahab", False)  # a retry after a lost reply
    assert again.status_code == 200 and again.json()["answered"] == 1
    changed = me.answer("whale", 0, "Moby-Dick", True)  # the latest answer may change
    assert changed.status_code == 200
    [row] = stored(server)
    assert (row.guess, row.would_buzz, row.correct, row.revisions) == ("Moby-Dick", True, True, 1)
    assert me.answer("whale", 1, "Moby-Dick", True).status_code == 200
    earlier = me.answer("whale", 0, "Ishmael", False)  # no longer the latest
    assert earlier.status_code == 409 and "only the latest" in earlier.json()["detail"]
    same = me.answer("whale", 0, "Moby-Dick", True)  # but repeating it is harmless
    assert same.status_code == 200
    rows = stored(server)
    assert [(r.step, r.guess, r.revisions) for r in rows] == [
        (0, "Moby-Dick", 1),
        (1, "Moby-Dick", 0),
    ]
    me.close()


@on_both_backends
def test_the_same_answer_sent_at_once_from_many_connections_is_stored_once(server):
    code = codes(server)["survey-a"]
    me = Participant(server, code, "Ida")
    replies: list[int] = []

    def send() -> None:
        with httpx.Client(base_url=server.http_url, timeout=20) as http:
            reply = http.put(
                f"/api/survey/{code}/answer",
                json={"tossup_id": "whale", "step": 0, "guess": "Ahab", "would_buzz": False},
                headers=me.headers,
            )
            replies.append(reply.status_code)

    threads = [threading.Thread(target=send) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert replies == [200] * 6
    [row] = stored(server)
    assert (row.step, row.guess, row.revisions) == (0, "Ahab", 0)
    me.close()


@on_both_backends
def test_bad_input_gets_a_clear_error_and_stores_nothing(server):
    code_a, code_b = codes(server)["survey-a"], codes(server)["survey-b"]
    http = httpx.Client(base_url=server.http_url, timeout=20)
    assert http.get("/api/survey/NOPE9").status_code == 404
    reply = http.post("/api/survey/NOPE9/participants", json={"name": "Zed"})
    assert reply.status_code == 404 and "no survey with code" in reply.json()["detail"]
    for bad_name in ({"name": "   "}, {"name": "x" * 41}, {}, {"name": "Zed", "admin": True}):
        assert http.post(f"/api/survey/{code_a}/participants", json=bad_name).status_code == 422

    me = Participant(server, code_a, "Fay")
    other = Participant(server, code_b, "Gus")

    def refused(reply: httpx.Response, status: int, words: str) -> None:
        assert reply.status_code == status, reply.text
        detail = reply.json()["detail"]
        text = detail if isinstance(detail, str) else " ".join(d["msg"] for d in detail)
        assert words in text, text

    refused(me.answer("whale", 1, "Moby-Dick", True), 409, "has not been shown yet")
    refused(me.answer("monster", 0, "Frankenstein", True), 409, "has not been shown yet")
    refused(me.answer("whale", 3, "Moby-Dick", True), 422, "there is no step 3")
    refused(me.answer("kraken", 0, "Moby-Dick", True), 404, "no tossup 'kraken'")
    refused(me.answer("whale", 0, "x" * 201, False), 422, "at most 200 characters")
    refused(me.answer("whale", 0, "   ", True), 422, "to buzz, give a guess")
    refused(me.answer("whale", -1, "Ahab", False), 422, "greater than or equal to 0")
    refused(me.answer("whale", 0, "Ahab", "maybe"), 422, "valid boolean")
    refused(me.answer("whale", 0, "Ahab", False, points=10), 422, "Extra inputs")
    malformed = me.http.put(
        f"/api/survey/{code_a}/answer",
        content=b'{"tossup_id": "whale", "step": 0,',
        headers={**me.headers, "Content-Type": "application/json"},
    )
    refused(malformed, 422, "JSON")
    unknown_code = me.http.put(
        "/api/survey/NOPE9/answer",
        json={"tossup_id": "whale", "step": 0, "guess": "Ahab", "would_buzz": False},
        headers=me.headers,
    )
    refused(unknown_code, 404, "no survey with code")

    anonymous = Participant(server, code_a)
    refused(anonymous.answer("whale", 0, "Ahab", False), 401, "token is needed")
    refused(anonymous.state(), 401, "token is needed")
    forged = Participant(server, code_a)
    forged.token = f"{me.id}.not-the-secret"
    refused(forged.answer("whale", 0, "Ahab", False), 401, "unknown participant token")
    borrowed = Participant(server, code_a)  # another survey's participant
    borrowed.token = other.token
    refused(borrowed.answer("whale", 0, "Ahab", False), 403, f"for survey {code_b}")

    assert stored(server) == []
    with Session(server.arena.engine) as session:
        names = session.exec(select(SurveyParticipantRow.name)).all()
        assert sorted(names) == ["Fay", "Gus"]
    # and the participant can still answer normally
    assert me.answer("whale", 0, "Ahab", False).status_code == 200
    assert len(stored(server)) == 1
    for client in (me, other, anonymous, forged, borrowed):
        client.close()
    http.close()


@on_both_backends
def test_a_name_or_a_guess_holding_a_nul_character_is_refused(server):
    """PostgreSQL's text columns cannot hold NUL: refused on every backend, nothing stored."""
    code = codes(server)["survey-a"]
    with httpx.Client(base_url=server.http_url, timeout=20) as http:
        reply = http.post(f"/api/survey/{code}/participants", json={"name": "Z\x00ed"})
        assert reply.status_code == 422, reply.text
    me = Participant(server, code, "Zed")
    assert me.answer("whale", 0, "Ah\x00ab", False).status_code == 422
    assert stored(server) == []
    assert me.answer("whale", 0, "Ahab", False).status_code == 200
    me.close()


@on_both_backends
def test_a_name_that_is_not_well_formed_is_refused_saying_why(server):
    """A lone surrogate (``"\\ud800"``, a valid JSON escape) used to answer 500 with a
    traceback, with no token needed; invisible names and right-to-left overrides were taken.
    Each is a 422 that says what is wrong, and nothing is stored."""
    code = codes(server)["survey-a"]
    with httpx.Client(base_url=server.http_url, timeout=20) as http:
        for raw, said in (
            ('"\\ud800"', "a lone surrogate (U+D800)"),
            ('"Ann\\udc00"', "a lone surrogate (U+DC00)"),
            ('"\\u0000\\ud800"', "NUL (U+0000)"),
            ('"\\u200b"', "a name needs a visible character"),
            ('" \\u200d\\ufeff "', "a name needs a visible character"),
            ('"\\u0301"', "a name needs a visible character"),
            ('"\\u202eNAJ"', "a bidirectional control (U+202E)"),
            ('"Ann\\u2067"', "a bidirectional control (U+2067)"),
            ('"Ann\\nLee"', "a control character (U+000A)"),
        ):
            reply = http.post(
                f"/api/survey/{code}/participants",
                content='{"name": ' + raw + "}",
                headers={"Content-Type": "application/json"},
            )
            assert reply.status_code == 422, reply.text
            (error,) = reply.json()["detail"]
            assert error["loc"] == ["body", "name"] and said in error["msg"], error
        with pytest.raises(SurveyRefused, match="a name needs a visible character"):
            server.app.state.surveys.join(code, "\u200b")  # (called from Python: checked too)
        assert participants(server) == []
        name = "Jose\u0301 \U0001f40b"
        reply = http.post(f"/api/survey/{code}/participants", json={"name": name})
        assert reply.status_code == 201, reply.text
        assert reply.json()["name"] == "Jos\u00e9 \U0001f40b"  # kept composed (NFC)
    assert participants(server) == ["Jos\u00e9 \U0001f40b"]


def participants(server: LiveServer) -> list[str]:
    with Session(server.arena.engine) as session:
        return list(session.exec(select(SurveyParticipantRow.name)).all())


def test_progress_needs_the_server_token(server):
    code = codes(server)["survey-a"]
    me = Participant(server, code, "Hal")
    me.answer("whale", 0, "Ahab", False)
    url = f"{server.http_url}/api/survey/{code}/progress"
    assert httpx.get(url).status_code == 401
    reply = httpx.get(url, headers={"Authorization": f"Bearer {server.events.tokens.server()}"})
    assert reply.status_code == 200
    assert reply.json() == [{"participant_id": me.id, "name": "Hal", "answered": 1, "total": 5}]
    page = httpx.get(f"{server.http_url}/survey?code={code}")
    assert page.status_code == 200 and "survey.js" in page.text
    me.close()


def test_the_server_without_surveys_has_no_survey_routes(db_url):
    with LiveServer(Settings(db_url=db_url)) as server:
        assert httpx.get(f"{server.http_url}/api/survey/ABCDE").status_code == 404
        assert httpx.get(f"{server.http_url}/survey").status_code == 404


def test_the_plan_accepts_answers_only_in_order(packets):
    plan = SurveyPlan.of("CODE1", "Survey A", load_packet(packets[0]))
    assert plan.total == 5 and plan.position("monster", 1) == 4
    answered: set[tuple[str, int]] = set()
    assert plan.verdict(answered, "whale", 0, same=False) == "new"
    with pytest.raises(SurveyRefused, match="not been shown"):
        plan.verdict(answered, "whale", 1, same=False)
    answered = {("whale", 0), ("whale", 1)}
    assert plan.next_position(answered) == 2
    assert plan.verdict(answered, "whale", 1, same=False) == "revise"
    assert plan.verdict(answered, "whale", 0, same=True) == "unchanged"
    with pytest.raises(SurveyRefused, match="only the latest"):
        plan.verdict(answered, "whale", 0, same=False)
    done = {(t, s) for t, s in PLAN}
    assert plan.next_position(done) == plan.total
