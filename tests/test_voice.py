"""The reader's voice: the text espeak-ng says (pronunciation guides spoken, the power mark
not), each shown word's onset from the engine's own word events, and how the record says each
word came to be heard (the voice's timing, the moderator's key, the pace's clock) down to the
buzz stamped with it."""

from __future__ import annotations

import os

import pytest
from engine_helpers import config, started_match

from grace_arena.core.commands import Buzz, Pause, Reveal, StartTossup
from grace_arena.core.events import BuzzAccepted, WordsRevealed
from grace_arena.core.match import Match
from grace_arena.core.tokenize import tokenize
from grace_arena.server import voice
from grace_arena.server.arena import reading_guides

# -- what is said --------------------------------------------------------------------------------

TEXT = 'This novel\'s hero Raskolnikov ("ras-KOHL-nee-kuff") kills (*) a pawnbroker with an axe.'


def test_the_guide_is_spoken_after_its_word_and_the_power_mark_is_not():
    tossup = tokenize(TEXT)
    words = [w.text for w in tossup.words]
    text, starts = voice.spoken_text(words, reading_guides(tossup))
    assert "(*)" not in text and "*" not in text
    assert "Raskolnikov ras KOHL nee kuff kills" in text
    assert "(" not in text and '"' not in text
    # each shown word starts where it is said, in order
    assert [text[s : s + len(w)] for s, w in zip(starts, words, strict=True)] == words


def test_onsets_follow_the_engine_s_word_events():
    # a word said as two (a guide, a number) begins at its first; a word said as none
    # (a lone dash) with the next one; the last such, when the speech ends
    starts = [0, 5, 20, 22]
    events = [(0, 0), (5, 400), (11, 700), (22, 1500)]
    assert voice.onsets_of(starts, events, 2000) == (0, 400, 1500, 1500)
    assert voice.onsets_of([0, 3], [(0, 0)], 900) == (0, 900)


#: Skips where espeak-ng is missing, except in CI (``CI`` set), where .ci/run installs it.
needs_espeak = pytest.mark.skipif(
    voice.unavailable() is not None and not os.environ.get("CI"),
    reason="espeak-ng is not installed (apt-get install espeak-ng)",
)


#: The speech of TEXT with and without its guide, from a process of its own: the library's
#: state is the process's, and a server that spoke before in this process (another test) has
#: been seen to leave the last word without its word event.
_SPEAK_APART = """
import json, sys
from grace_arena.core.tokenize import tokenize
from grace_arena.server import voice
from grace_arena.server.arena import reading_guides
tossup = tokenize(sys.argv[1])
words = [w.text for w in tossup.words]
out = {}
for name, guides in (("with", reading_guides(tossup)), ("without", {})):
    s = voice.speak(words, guides)
    out[name] = {"head": s.wav[:4].decode(), "onsets": list(s.onsets_ms), "end": s.end_ms}
print(json.dumps(out))
"""


@needs_espeak
def test_espeak_says_every_word_with_its_guide_in_the_audio():
    import json
    import subprocess
    import sys

    tossup = tokenize(TEXT)
    words = [w.text for w in tossup.words]
    said = json.loads(
        subprocess.run(
            [sys.executable, "-c", _SPEAK_APART, TEXT], capture_output=True, text=True, check=True
        ).stdout
    )
    with_guide = voice.Speech(
        said["with"]["head"].encode(), tuple(said["with"]["onsets"]), said["with"]["end"]
    )
    without = voice.Speech(b"", tuple(said["without"]["onsets"]), said["without"]["end"])
    assert with_guide.wav[:4] == b"RIFF" and len(with_guide.onsets_ms) == len(words)
    assert list(with_guide.onsets_ms) == sorted(with_guide.onsets_ms)
    assert with_guide.onsets_ms[0] < with_guide.onsets_ms[-1] < with_guide.end_ms
    hero = words.index("Raskolnikov")
    # the guide is heard between its word and the next: that word lasts longer with it
    assert (
        with_guide.onsets_ms[hero + 1] - with_guide.onsets_ms[hero]
        > without.onsets_ms[hero + 1] - without.onsets_ms[hero]
    )
    assert with_guide.word_at(with_guide.onsets_ms[hero] + 1) == hero
    assert with_guide.word_at(-1) == -1


def test_without_the_engine_the_voice_says_why(monkeypatch):
    monkeypatch.setattr(voice.ctypes.util, "find_library", lambda name: None)
    with pytest.raises(OSError, match="apt-get install espeak-ng"):
        voice.Engine()


# -- how each word was heard, in the record ------------------------------------------------------


def _sources(events: list) -> list[tuple[int, str | None]]:
    return [(e.position, e.source) for e in events if isinstance(e, WordsRevealed)]


def test_each_reveal_says_what_timed_it_and_a_buzz_the_word_s_source():
    match, created = started_match(config())
    now = 1000.0
    events = match.handle(StartTossup(), now=now)
    events += match.handle(Reveal(paced=True), now=now + 1)  # the pace's clock
    events += match.handle(Reveal(paced=True, source="speech"), now=now + 2)  # the voice
    events += match.handle(Pause(), now=now + 3)
    events += match.handle(Reveal(), now=now + 4)  # the moderator's key
    assert _sources(events) == [(0, "pace"), (1, "speech"), (2, "key")]
    buzz = match.handle(Buzz(team="red", player="red-1"), now=now + 5)
    accepted = next(e for e in buzz if isinstance(e, BuzzAccepted))
    assert (accepted.word_index, accepted.word_source) == (2, "key")
    # the record rebuilds it
    again = Match.replay([*created, *events, *buzz])
    assert again.game.heard_by == ((0, "pace"), (1, "speech"), (2, "key"))


def test_a_buzz_credited_with_an_earlier_word_is_stamped_with_that_word_s_source():
    match, _created = started_match(config())
    match.handle(StartTossup(), now=1000.0)
    match.handle(Reveal(paced=True), now=1001.0)
    match.handle(Reveal(paced=True, source="speech"), now=1002.0)
    # a compensated race credits the press with the word shown when it was pressed
    buzz = match.handle(Buzz(team="red", player="red-1", word_index=0), now=1003.0)
    accepted = next(e for e in buzz if isinstance(e, BuzzAccepted))
    assert (accepted.word_index, accepted.word_source) == (0, "pace")


def test_a_buzz_before_any_word_has_no_source():
    match, _ = started_match(config())
    match.handle(StartTossup(), now=1000.0)
    buzz = match.handle(Buzz(team="red", player="red-1"), now=1001.0)
    accepted = next(e for e in buzz if isinstance(e, BuzzAccepted))
    assert accepted.word_source is None


# -- without the engine ----------------------------------------------------------------------------


def test_a_match_asked_to_be_voiced_without_espeak_reads_at_its_pace_and_says_why(
    server, monkeypatch
):
    from live import clients, moderator, new_match, player

    note = "no voice: espeak-ng is not installed (apt-get install espeak-ng); shown at the pace"
    monkeypatch.setattr(voice, "unavailable", lambda: note)
    match_id, _code = new_match(server, reading_mode="screen", voice=True)
    with clients(moderator(server, match_id), player(server, "red", "Ann", match_id)) as (mod, ann):
        mod.send(type="start_tossup")
        state = ann.state(lambda s: s["tossup"] is not None and s["tossup"]["position"] >= 0)
        assert state["reading"]["voice"] is True
        assert state["reading"]["voice_note"] == note
    events = server.arena.store.events(match_id)
    assert {e.source for e in events if isinstance(e, WordsRevealed)} == {"pace"}


# -- the room's displays hear the voice ------------------------------------------------------------


@needs_espeak
def test_a_display_is_cued_for_each_bonus_part_and_a_stepped_word_and_fetches_the_audio(db_url):
    import urllib.request

    from live import Client, LiveServer, clients, display_grant, moderator, player, two_teams

    from grace_arena.core.packet import SAMPLE_PACKET_PATH
    from grace_arena.server.app import Settings

    setup = two_teams(format="naqt", reading_mode="screen", voice=True, bonus_answer_time=60)
    settings = Settings(db_url=db_url, packets=[SAMPLE_PACKET_PATH], secret="s", first_match=setup)
    with LiveServer(settings) as server:
        mod, red = moderator(server), player(server, "red", "Ann")
        display = Client(server.ws_url)
        with clients(mod, red, display):
            code = server.room().join_code
            # the audio is the whole tossup: a code alone does not open a voiced room's display
            display.send(type="hello", role="display", join_code=code)
            refused = display.wait("error")
            assert refused["code"] == "unauthorized" and "voice" in refused["message"]
            display.send(type="hello", role="display", join_code=code,
                         token=display_grant(server, code))  # fmt: skip
            display.wait("welcome")
            # the moderator's step while paused: the voice says that word alone
            mod.send(type="start_tossup")
            first = display.wait("voice", timeout=20)
            assert (first["first_word"], first["from_ms"], first["until_ms"]) == (0, 0, None)
            mod.send(type="pause")
            position = mod.state(lambda s: s["match"]["paused"])["tossup"]["position"]
            mod.send(type="step", unit="word")
            step = display.wait("voice")
            assert step["first_word"] == position + 1
            onsets = step["onsets_ms"]
            assert (step["from_ms"], step["until_ms"]) == (
                onsets[position + 1],
                onsets[position + 2],
            )
            with urllib.request.urlopen(server.http_url + step["url"], timeout=10) as reply:
                assert reply.headers["Content-Type"] == "audio/wav"
                assert reply.read(4) == b"RIFF"
            # a guessed key is refused
            wrong = step["url"].replace(server.room().voice_key, "x" * 22)
            with pytest.raises(urllib.error.HTTPError, match="404"):
                urllib.request.urlopen(server.http_url + wrong, timeout=10)
            mod.send(type="resume")
            mod.state(lambda s: not s["match"]["paused"])
            # the bonus: each part is said as it comes up, the lead-in with the first
            red.send(type="buzz")
            red.wait("buzz_result")
            red.send(type="answer", text="Moby Dick")
            mod.state(lambda s: s["floor"] and s["floor"]["answer"] == "Moby Dick")
            mod.send(type="rule", ruling="correct")
            part = display.wait(lambda m: m["type"] == "voice" and m["bonus_part"] is not None)
            assert part["bonus_part"] == 0 and "/bonus/0/0.wav" in part["url"]
            with urllib.request.urlopen(server.http_url + part["url"], timeout=10) as reply:
                assert reply.read(4) == b"RIFF"


def test_words_that_follow_the_moderator_s_keys_are_not_revealed_by_the_pace():
    from grace_arena.core.commands import SetPace
    from grace_arena.core.errors import IllegalCommand

    match, created = started_match(config())
    events = match.handle(SetPace(wpm=180, by_key=True), now=1000.0)
    events += match.handle(StartTossup(), now=1001.0)
    with pytest.raises(IllegalCommand, match="follows the moderator's keys"):
        match.handle(Reveal(paced=True), now=1002.0)
    events += match.handle(Reveal(), now=1003.0)  # the key, while the reading runs
    events += match.handle(Reveal(paced=True, source="speech"), now=1004.0)  # a voice still times
    assert _sources(events) == [(0, "key"), (1, "speech")]
    # a change of pace alone leaves the keys leading; the record rebuilds it
    events += match.handle(SetPace(wpm=200), now=1005.0)
    again = Match.replay([*created, *events])
    assert again.state.by_key and again.state.pace == 200
    events += match.handle(SetPace(wpm=200, by_key=False), now=1006.0)
    assert _sources(match.handle(Reveal(paced=True), now=1007.0)) == [(2, "pace")]


def test_an_event_made_with_the_voice_keeps_it_for_its_matches(db_url):
    from typer.testing import CliRunner

    from grace_arena.cli import app
    from grace_arena.protocol import MatchSetup, TeamSetup
    from grace_arena.record.db import make_engine, upgrade
    from grace_arena.record.schedule import load_plan

    upgrade(db_url)
    made = CliRunner().invoke(
        app,
        ["event", "create", "night", "--team", "Red", "--team", "Blue", "--reading-mode",
         "screen", "--voice", "--db", db_url],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    engine = make_engine(db_url)
    defaults = load_plan(engine, "night").defaults
    engine.dispose()
    assert defaults["voice"] is True
    assert MatchSetup(packet_id="p", teams=[TeamSetup(id="red", name="Red")], **defaults).voice
