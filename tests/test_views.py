"""What each role may see, as pure functions of a match: no sockets."""

from __future__ import annotations

from engine_helpers import config, started_match

from grace_arena.core.commands import Buzz, GiveAnswer, Reveal, Rule, StartTossup
from grace_arena.core.config import ScoringRules
from grace_arena.core.events import Ruling, event_to_dict
from grace_arena.server.views import RoomFacts, events_for, public_tossup_id, state_view


def _facts(match, log) -> RoomFacts:
    words = {t.id: [f"w{i}" for i in range(t.n_words)] for t in match.config.tossups}
    return RoomFacts(
        match_id=7, join_code="ABCDE", words=words, wpm=180, running=True,
        trajectories={}, tossup_log=log,
    )  # fmt: skip


def test_each_role_sees_what_it_may():
    match, _ = started_match(config(rules=ScoringRules(answer_time=None)), now=0.0)
    log: list[dict] = []
    for command in (StartTossup(), Reveal(to=4), Buzz(team="red", player="red-1")):
        log += [event_to_dict(e) for e in match.handle(command, now=1.0)]
    answer = match.handle(GiveAnswer(team="red", player="red-1", text="secret guess"), now=2.0)
    log += [event_to_dict(e) for e in answer]
    facts = _facts(match, log)

    moderator = state_view(match, facts, "moderator", now=3.0)
    assert moderator.tossup.id == "t0" and moderator.match.tossup_ids == ["t0", "t1", "t2"]
    assert moderator.tossup.answer and moderator.tossup.words == facts.words["t0"]
    assert moderator.floor.answer == "secret guess"

    for role in ("player", "display"):
        view = state_view(match, facts, role, now=3.0)
        assert view.tossup.id == "tossup-1" and view.match.tossup_ids == []
        assert view.tossup.answer is None and view.floor.answer is None
        assert view.floor.suggestion is None and view.models == [] and view.last_events == []
        assert view.server_time == 3.0
    assert state_view(match, facts, "player", now=3.0).tossup.words is None  # read aloud
    assert state_view(match, facts, "display", now=3.0).tossup.words == facts.words["t0"][:5]

    # the guess is public once ruled on, not before
    public = events_for(match, answer, log)["player"]
    assert all("text" not in e and "answer" not in e for e in public)
    ruled = match.handle(Rule(ruling=Ruling.CORRECT), now=4.0)
    public = events_for(match, ruled, log)["player"]
    assert next(e for e in public if e["type"] == "ruled")["answer"] == "secret guess"
    assert all("suggestion" not in e for e in public)
    over = state_view(match, facts, "player", now=5.0)
    assert over.tossup.answer and over.tossup.words == facts.words["t0"][:5]


def test_a_repeated_press_is_shown_to_no_role():
    match, _ = started_match(config(), now=0.0)
    match.handle(StartTossup(), now=1.0)
    match.handle(Buzz(team="red", player="red-1"), now=1.0)
    first = match.handle(Buzz(team="blue", player="blue-1"), now=1.0)
    again = match.handle(Buzz(team="blue", player="blue-1"), now=1.0)
    assert [e.type for e in first + again] == ["buzz_refused", "buzz_repeated"]
    shown = events_for(match, first + again, [])
    assert shown["moderator"] == [event_to_dict(first[0])] and shown["player"] == []
    assert [e["type"] for e in shown["display"]] == ["buzz_refused"]
    assert events_for(match, again, []) == {"moderator": [], "player": [], "display": []}


def test_a_public_tossup_id_is_its_number_in_the_match():
    match, _ = started_match(config(), now=0.0)
    assert public_tossup_id(match, None) is None
    assert public_tossup_id(match, "t2") == "tossup-1"  # not played yet: the next number
    match.handle(StartTossup(tossup_id="t2"), now=1.0)
    assert public_tossup_id(match, "t2") == "tossup-1"


def test_the_moderator_gets_the_pronunciation_guides_to_read_aloud():
    from grace_arena.core.tokenize import tokenize
    from grace_arena.server.arena import reading_guides

    text = 'Raskolnikov ("ras-KOHL-nee-kuff"), uses an (*) axe — twice. For 10 points, name it.'
    tossup = tokenize(text)
    words = [w.text for w in tossup.words]
    assert words[:4] == ["Raskolnikov", "uses", "an", "axe"]  # the canonical words
    guides = reading_guides(tossup)
    assert guides == {0: '("ras-KOHL-nee-kuff"),', 3: "—"}  # no power mark: power_index

    match, _ = started_match(config(), now=0.0)
    match.handle(StartTossup(), now=1.0)
    facts = RoomFacts(
        match_id=7, join_code="ABCDE", words={"t0": words}, wpm=180, running=True,
        trajectories={}, tossup_log=[], guides={"t0": guides},
    )  # fmt: skip
    assert state_view(match, facts, "moderator", now=2.0).tossup.guides == guides
    assert state_view(match, facts, "moderator", now=2.0).tossup.words == words
    for role in ("player", "display"):
        assert state_view(match, facts, role, now=2.0).tossup.guides == {}
