"""The record is the only truth of the reading: pause, resume, the reading and every clock
derive from its events; a refused command changes nothing; a reopened match comes back as the
record says. The engine's part is pure (a clock the test controls); the server's is played
with a moderator and phones over real websockets."""

from __future__ import annotations

import time

from backends import on_both_backends
from engine_helpers import config, started_match
from live import Client, LiveServer, clients, moderator, player, two_teams

from grace_arena.core.commands import (
    AnswerPart,
    Buzz,
    GiveAnswer,
    Pause,
    Resume,
    Reveal,
    Rule,
    RulePart,
    StartTossup,
    TimeUp,
    UndoRuling,
)
from grace_arena.core.config import ScoringRules
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.events import Ruling
from grace_arena.core.match import Match
from grace_arena.core.packet import SAMPLE_PACKET_PATH
from grace_arena.core.phases import Phase
from grace_arena.server.app import Settings

# -- the engine ---------------------------------------------------------------------------------


def _reading(match: Match, now: float, words: int = 3) -> list:
    events = match.handle(StartTossup(), now=now)
    for _ in range(words):
        events += match.handle(Reveal(), now=now)
    return events


def _to_the_end(match: Match, now: float) -> None:
    spec = match.current_tossup
    match.handle(Reveal(to=spec.n_words), now=now)


def make_config(*, reading_mode: str = "read_aloud", bonuses: bool = False, **rules):
    return config(
        rules=ScoringRules(bonuses=bonuses, **rules),
        bonus_parts=(3, 3) if bonuses else (),
        reading_mode=reading_mode,
    )


def new_match(cfg):
    return started_match(cfg)


def test_a_pause_refused_while_a_player_holds_the_floor_changes_nothing():
    """The moderator presses pause as a buzz arrives: the buzz got the floor first, the pause is
    refused, and after the ruling the reading goes on as if it had never been sent."""
    match, events = new_match(make_config(answer_time=8.0))
    events += _reading(match, 100.0)
    events += match.handle(Buzz(team="red", player="red-1"), now=101.0)
    before = match.state
    try:
        match.handle(Pause(), now=101.5)
    except IllegalCommand as refused:
        assert "buzzed first" in str(refused)
    else:
        raise AssertionError("a pause while the floor is held is the ruling's to come first")
    assert match.state == before
    events += match.handle(Rule(ruling=Ruling.INCORRECT), now=102.0)
    assert match.game.reading
    assert Match.replay(events).state == match.state


def test_a_buzz_taken_while_paused_holds_its_answer_clock_and_the_pause_outlasts_the_ruling():
    match, events = new_match(make_config(answer_time=8.0))
    events += _reading(match, 100.0)
    events += match.handle(Pause(), now=100.5)
    events += match.handle(Buzz(team="red", player="red-1"), now=101.0)
    g = match.game
    assert g.phase is Phase.BUZZED and g.paused
    # the answer clock stands still with its whole time
    assert g.deadline is None and g.held == 8.0
    events += match.handle(Rule(ruling=Ruling.INCORRECT), now=200.0)
    g = match.game
    assert g.phase is Phase.READING and g.paused and not g.reading
    events += match.handle(Resume(), now=210.0)
    assert match.game.reading
    assert Match.replay(events).state == match.state


def test_a_refused_command_changes_nothing():
    match, _ = new_match(make_config())
    _reading(match, 100.0)
    before = match.state
    for command in (Resume(), TimeUp()):
        try:
            match.handle(command, now=101.0)
        except IllegalCommand:
            pass
        else:  # pragma: no cover - the test's premise
            raise AssertionError(f"{command} should be refused while reading")
    assert match.state == before and match.game.reading


def test_a_pause_in_the_buzz_window_holds_it_and_the_resume_gives_back_what_was_left():
    match, events = new_match(make_config(buzz_window=5.0))
    _reading(match, 100.0, words=0)
    _to_the_end(match, 100.0)
    assert match.game.phase is Phase.AWAITING and match.game.deadline == 105.0
    events += match.handle(Pause(), now=103.0)
    assert match.game.deadline is None and match.game.held == 2.0
    try:
        match.handle(TimeUp(), now=500.0)
    except IllegalCommand:
        pass
    else:
        raise AssertionError("a held buzz window does not run out")
    events += match.handle(Resume(), now=600.0)
    assert match.game.deadline == 602.0 and match.game.held is None
    with_events = match.handle(TimeUp(), now=602.5)
    assert match.game.phase is Phase.DEAD and with_events


def test_a_last_word_buzz_ruled_incorrect_while_paused_holds_the_whole_buzz_window():
    match, _ = new_match(make_config(buzz_window=5.0, answer_time=None))
    _reading(match, 100.0, words=0)
    _to_the_end(match, 100.0)
    match.handle(Pause(), now=101.0)
    match.handle(Buzz(team="red", player="red-1"), now=102.0)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=300.0)
    g = match.game
    # back in the buzz window, which does not run while paused (it had run out by 300 s)
    assert g.phase is Phase.AWAITING and g.deadline is None and g.held == 5.0
    match.handle(Resume(), now=400.0)
    assert match.game.deadline == 405.0


def test_an_undo_keeps_the_match_paused():
    match, _ = new_match(make_config(answer_time=8.0))
    _reading(match, 100.0)
    match.handle(Buzz(team="red", player="red-1"), now=101.0)
    match.handle(Rule(ruling=Ruling.INCORRECT), now=102.0)
    match.handle(Pause(), now=103.0)
    match.handle(UndoRuling(), now=104.0)
    g = match.game
    assert g.phase is Phase.BUZZED and g.paused
    assert g.deadline is None and g.held == 8.0  # the answer clock restored, standing still


def test_the_bonus_part_clock_stands_still_while_paused():
    config = make_config(bonuses=True, reading_mode="screen", bonus_answer_time=10.0)
    match, _ = new_match(config)
    _reading(match, 100.0)
    match.handle(Buzz(team="red", player="red-1"), now=101.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=102.0)
    assert match.game.phase is Phase.BONUS and match.game.deadline == 112.0
    match.handle(Pause(), now=106.0)
    assert match.game.deadline is None and match.game.held == 6.0
    match.handle(Resume(), now=200.0)
    assert match.game.deadline == 206.0
    match.handle(AnswerPart(team="red", player="red-1", text="x"), now=201.0)
    match.handle(RulePart(ruling=Ruling.INCORRECT), now=202.0)
    assert match.game.deadline == 212.0


# -- the server ---------------------------------------------------------------------------------


def _settings(db_url: str, **setup) -> Settings:
    return Settings(
        db_url=db_url,
        packets=[SAMPLE_PACKET_PATH],
        secret="s3cret",
        first_match=two_teams(wpm=300, **setup),
    )


def _position(client: Client) -> int:
    return client.state(lambda s: s["tossup"] is not None)["tossup"]["position"]


def _reads_on(client: Client, beyond: int) -> dict:
    """The next state that shows a word beyond ``beyond``, read by the server by itself."""
    return client.state(lambda s: s["tossup"] and s["tossup"]["position"] > beyond, timeout=15)


@on_both_backends
def test_an_end_match_refused_while_a_tossup_is_read_leaves_the_reading_going(db_url):
    with LiveServer(_settings(db_url)) as server:
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        with clients(mod, red):
            mod.send(type="start_tossup")
            at = _position(red)
            mod.send(type="end_match")
            assert mod.wait(lambda m: m["type"] == "error")["code"] == "illegal"
            st = _reads_on(red, at + 2)
            assert st["match"]["phase"] == "reading" and not st["match"]["paused"]
            assert st["reading"]["running"]


@on_both_backends
def test_a_pause_that_lands_as_a_buzz_takes_the_floor_changes_nothing_and_reading_goes_on(db_url):
    with LiveServer(_settings(db_url)) as server:
        mod = moderator(server)
        red, blue = player(server, "red", "Ruth"), player(server, "blue", "Bo")
        with clients(mod, red, blue):
            mod.send(type="start_tossup")
            _position(red)
            red.send(type="buzz")
            assert red.wait("buzz_result")["outcome"] == "won"
            blue.state(lambda s: s["match"]["phase"] == "buzzed")
            mod.send(type="pause")  # the race: the buzz got in first
            refused = mod.wait(lambda m: m["type"] == "error")
            assert refused["code"] == "illegal" and refused["in_reply_to"] == "pause"
            mod.send(type="rule", ruling="incorrect")
            st = blue.state(lambda s: s["match"]["phase"] == "reading")
            assert not st["match"]["paused"] and st["reading"]["running"]
            _reads_on(blue, st["tossup"]["position"])
            # and a pause taken while reading holds on every screen until the resume
            mod.send(type="pause")
            st = blue.state(lambda s: s["match"]["paused"])
            assert not st["reading"]["running"]
            at = st["tossup"]["position"]
            time.sleep(0.5)
            assert server.room().match.game.position == at
            mod.send(type="resume")
            st = _reads_on(blue, at)
            assert not st["match"]["paused"] and st["reading"]["running"]


@on_both_backends
def test_a_match_reopened_while_a_player_holds_the_floor_reads_on_after_the_ruling(db_url):
    with LiveServer(_settings(db_url)) as server:
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        with clients(mod, red):
            mod.send(type="start_tossup")
            _position(red)
            red.send(type="buzz")
            assert red.wait("buzz_result")["outcome"] == "won"
            mod.state(lambda s: s["floor"] is not None)
    again = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s3cret")
    with LiveServer(again) as server:
        mod = moderator(server)
        blue = player(server, "blue", "Bo")
        with clients(mod, blue):
            st = next(m for m in reversed(blue.received) if m["type"] == "state")
            assert st["match"]["phase"] == "buzzed" and not st["match"]["paused"]
            mod.send(type="rule", ruling="incorrect")
            st = blue.state(lambda s: s["match"]["phase"] == "reading")
            assert not st["match"]["paused"] and st["reading"]["running"]
            _reads_on(blue, st["tossup"]["position"])


@on_both_backends
def test_a_pause_in_the_buzz_window_holds_it_on_a_real_server_until_the_resume(db_url):
    """The last word read while paused, the buzz window does not run however long the pause;
    resumed, it has what it had left, and only then does the tossup go dead."""
    with LiveServer(_settings(db_url, buzz_window=1.0)) as server:
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        with clients(mod, red):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            room = server.room()
            # every word read (as the moderator's steps would), then the pause
            server.run(room.command(Reveal(to=room.match.current_tossup.n_words)))
            mod.send(type="pause")
            st = red.state(lambda s: s["match"]["phase"] == "awaiting" and s["match"]["paused"])
            assert st["deadline"] is None and 0 < st["held"] <= 1.0
            time.sleep(1.5)  # longer than the whole window: it stands still
            assert server.room().match.game.phase.value == "awaiting"
            mod.send(type="resume")
            st = red.state(lambda s: not s["match"]["paused"])
            assert st["match"]["phase"] == "awaiting" and st["deadline"] is not None
            # (an order, not a duration: the tossup dies by its clock after the resume)
            st = red.state(lambda s: s["match"]["phase"] == "dead", timeout=15)
            mod.state(lambda s: s["match"]["phase"] == "dead", timeout=15)
            told = [e["event"]["type"] for e in mod.received if e["type"] == "event"]
            assert told.index("reading_resumed") < told.index("tossup_ended")


def test_the_readers_reveal_decided_after_a_pause_is_refused_and_the_moderators_step_is_not():
    """The reader queued its word as the moderator paused (or as a reopened match was paused):
    the pause is committed first, and the reader's word is then refused, not read."""
    match, _ = new_match(make_config())
    _reading(match, 100.0)
    match.handle(Pause(), now=101.0)
    at = match.game.position
    try:
        match.handle(Reveal(paced=True), now=101.1)
    except IllegalCommand as refused:
        assert "paused" in str(refused)
    else:
        raise AssertionError("the reader reads nothing while paused")
    assert match.game.position == at
    match.handle(Reveal(), now=102.0)  # the moderator's step
    assert match.game.position == at + 1


def test_an_answer_typed_while_paused_stops_the_held_clock_for_good():
    """The typed answer stops the answer clock: the resume gives back no clock to time it out."""
    match, _ = new_match(make_config(answer_time=6.0, reading_mode="screen"))
    _reading(match, 100.0)
    match.handle(Pause(), now=100.5)
    match.handle(Buzz(team="red", player="red-1"), now=101.0)
    assert match.game.held == 6.0
    match.handle(GiveAnswer(team="red", player="red-1", text="Moby Dick"), now=102.0)
    assert match.game.held is None and match.game.deadline is None
    match.handle(Resume(), now=103.0)
    assert match.game.deadline is None and match.game.phase is Phase.BUZZED


def test_a_buzz_with_no_answer_clock_taken_while_the_window_is_held_is_not_timed():
    """Read aloud, the floor has no clock: a buzz in a held buzz window takes the floor with
    none, and the window's held time does not come back as one on the resume."""
    match, _ = new_match(make_config(answer_time=None, buzz_window=3.0))
    _reading(match, 100.0, words=0)
    _to_the_end(match, 100.0)
    match.handle(Pause(), now=101.0)
    assert match.game.held == 2.0
    match.handle(Buzz(team="red", player="red-1"), now=102.0)
    assert match.game.held is None
    match.handle(Resume(), now=200.0)
    assert match.game.deadline is None and match.game.phase is Phase.BUZZED


def test_a_bonus_answer_typed_while_paused_stops_the_held_part_clock():
    config = make_config(bonuses=True, reading_mode="screen", bonus_answer_time=6.0)
    match, _ = new_match(config)
    _reading(match, 100.0)
    match.handle(Buzz(team="red", player="red-1"), now=101.0)
    match.handle(Rule(ruling=Ruling.CORRECT), now=102.0)
    match.handle(Pause(), now=103.0)
    match.handle(AnswerPart(team="red", player="red-1", text="part 0"), now=104.0)
    match.handle(Resume(), now=105.0)
    assert match.game.deadline is None and match.game.held is None


@on_both_backends
def test_pause_and_resume_sent_together_are_taken_in_order(db_url):
    """Each is decided in the order it came, against what the one before it left: none is
    dropped for what the record said as it arrived."""
    with LiveServer(_settings(db_url)) as server:
        mod = moderator(server)
        red = player(server, "red", "Ruth")
        with clients(mod, red):
            mod.send(type="start_tossup")
            _position(red)
            mod.send(type="pause")
            mod.send(type="resume")
            st = _reads_on(red, _position(red) + 1)
            assert not st["match"]["paused"]
            mod.send(type="resume")
            mod.send(type="pause")
            # (read to the end: the moderator's first paused state is an earlier one)
            told: list[str] = []
            while told.count("reading_paused") < 2:
                mod.wait("event")
                told = [e["event"]["type"] for e in mod.received if e["type"] == "event"]
            time.sleep(0.5)
            game = server.room().match.game
            assert game.paused and not game.reading
            mod.drain(0.3)
            told = [e["event"]["type"] for e in mod.received if e["type"] == "event"]
            assert told.count("reading_paused") == 2 and told.count("reading_resumed") == 1
            # the one resume sent while reading is refused, and says so
            errors = [m for m in mod.received if m["type"] == "error"]
            assert [e["in_reply_to"] for e in errors] == ["resume"]


@on_both_backends
def test_clue_steps_sent_in_a_burst_each_reveal_one_more_clue(db_url):
    with LiveServer(_settings(db_url)) as server:
        mod = moderator(server)
        with clients(mod):
            mod.send(type="start_tossup")
            mod.state(lambda s: s["match"]["phase"] == "reading")
            mod.send(type="pause")
            mod.state(lambda s: s["match"]["paused"])
            spec = server.room().match.current_tossup
            at = server.room().match.game.position
            for _ in range(3):
                mod.send(type="step", unit="clue")
            ends = [e for e in spec.clue_ends if e > at][:3]
            mod.state(lambda s: s["tossup"]["position"] == ends[-1])
            assert not [m for m in mod.received if m["type"] == "error"]
