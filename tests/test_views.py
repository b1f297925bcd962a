"""What each role may see, as pure functions of a match: no sockets."""

from __future__ import annotations

from engine_helpers import config, started_match

from grace_arena.core.commands import (
    Buzz,
    EndMatch,
    GiveAnswer,
    Reveal,
    Rule,
    StartTossup,
)
from grace_arena.core.config import ScoringRules
from grace_arena.core.events import Ruling, event_to_dict
from grace_arena.server.views import RoomFacts, events_for, public_tossup_id, state_view


def _facts(match, log) -> RoomFacts:
    words = {t.id: [f"w{i}" for i in range(t.n_words)] for t in match.config.tossups}
    return RoomFacts(
        match_id=7, join_code="ABCDE", words=words, wpm=180,
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
        match_id=7, join_code="ABCDE", words={"t0": words}, wpm=180,
        trajectories={}, tossup_log=[], guides={"t0": guides},
    )  # fmt: skip
    assert state_view(match, facts, "moderator", now=2.0).tossup.guides == guides
    assert state_view(match, facts, "moderator", now=2.0).tossup.words == words
    for role in ("player", "display"):
        assert state_view(match, facts, role, now=2.0).tossup.guides == {}


def _play(match, *moves) -> None:
    """Each move: ("win", team) a tossup won at its first word (power), ("neg", team, other)
    a neg, then the other team wins it (power)."""
    for move in moves:
        match.handle(StartTossup(), now=1.0)
        match.handle(Reveal(to=0), now=1.0)
        match.handle(Buzz(team=move[1], player=f"{move[1]}-1"), now=1.0)
        ruling = Ruling.CORRECT if move[0] == "win" else Ruling.INCORRECT
        match.handle(Rule(ruling=ruling), now=1.0)
        if move[0] == "neg":
            match.handle(Buzz(team=move[2], player=f"{move[2]}-1"), now=1.0)
            match.handle(Rule(ruling=Ruling.CORRECT), now=1.0)


def _result(match):
    return state_view(match, _facts(match, []), "player", now=9.0).match.result


def test_the_result_names_the_winner_and_the_final_score_once_the_match_ended():
    match, _ = started_match(config(n_tossups=2, rules=ScoringRules(answer_time=None)), now=0.0)
    _play(match, ("win", "red"), ("win", "red"))
    assert _result(match) is None  # not before it ended
    match.handle(EndMatch(), now=2.0)
    result = _result(match)
    assert result.text == "Red won 30–0" and result.winner == "red"
    assert result.scores == {"red": 30, "blue": 0} and not (result.tied or result.early)
    # every role sees it
    assert state_view(match, _facts(match, []), "display", now=9.0).match.result == result


def test_a_tie_an_early_end_and_a_match_with_no_tossup_say_so():
    match, _ = started_match(config(n_tossups=3, rules=ScoringRules(answer_time=None)), now=0.0)
    _play(match, ("win", "red"), ("win", "blue"))
    match.handle(EndMatch(), now=2.0)
    result = _result(match)
    assert result.text == "Red and Blue tied 15–15 (ended after 2 of 3 tossups)"
    assert result.winner is None and result.tied and result.early

    match, _ = started_match(config(n_tossups=3), now=0.0)
    match.handle(EndMatch(), now=2.0)
    assert _result(match).text == "The match ended before any tossup was played"

    # a negative score keeps its minus sign; three teams name the others
    rules = ScoringRules(answer_time=None)
    match, _ = started_match(config(n_tossups=1, humans=("red", "blue", "green"), rules=rules))
    _play(match, ("neg", "green", "blue"))
    match.handle(EndMatch(), now=2.0)
    assert _result(match).text == "Blue won with 15 (Red 0, Green −5)"

    match, _ = started_match(config(n_tossups=1, rules=rules))
    _play(match, ("neg", "blue", "red"))
    match.handle(EndMatch(), now=2.0)
    assert _result(match).text == "Red won 15 to −5"


def test_overtime_is_said_with_the_result():
    rules = ScoringRules(answer_time=None, regulation_tossups=1)
    match, _ = started_match(config(n_tossups=3, rules=rules), now=0.0)
    _play(match, ("win", "red"), ("win", "blue"), ("win", "blue"))
    match.handle(EndMatch(), now=2.0)
    result = _result(match)
    assert result.text == "Blue won 30–15 in overtime" and result.overtime and not result.early
