"""Writing against the model (``grace-arena write``): the pure verdicts and the packet saved,
then the screen driven with keys (``App.run_test`` + ``Pilot``) on a copy of the sample packet,
with the real offline TF-IDF guesser (trained once for the module) behind a spy that records
which prefixes it was asked about."""

from __future__ import annotations

import io
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static
from typer.testing import CliRunner

from grace_arena.cli import app as cli
from grace_arena.core.packet import (
    SAMPLE_PACKET_PATH,
    dump_packet,
    load_packet,
    validate_packet_file,
)
from grace_arena.core.tokenize import tokenize
from grace_arena.model.base import Guess, Prefix, packet_prefixes
from grace_arena.model.policy import BuzzPolicy
from moderator_tui.authoring import AuthoringScreen, make_authoring_app
from moderator_tui.authoring.draft import (
    Draft,
    GuessCache,
    editable_sentences,
    evaluate,
    packet_with_drafts,
    prefix_specs,
)
from moderator_tui.authoring.widgets import verdict_text
from moderator_tui.dialogs import ConfirmScreen

SIZE = (120, 40)
WIDE = {"COLUMNS": "200"}  # error boxes unwrapped
pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------------------------
# Pure parts


def test_editable_sentences_keep_markers_and_match_the_model_prefixes():
    """The writer's sentences rebuild the text exactly (power mark and guides kept), and the
    prefixes asked about are the ones ``grace-arena precompute`` asks about."""
    packet = load_packet(SAMPLE_PACKET_PATH)
    expected = iter(packet_prefixes(packet))
    for tossup in packet.tossups:
        sentences = editable_sentences(tossup)
        assert " ".join(sentences) == tossup.text
        assert tokenize(tossup.text, sentences).clue_ends == tossup.tokens().clue_ends
        assert sum("(*)" in s for s in sentences) == tossup.text.count("(*)")
        for spec in prefix_specs(sentences):
            prefix = next(expected)
            assert (spec.text, spec.word_index, spec.step) == (
                prefix.text,
                prefix.word_index,
                prefix.step,
            )
        assert Draft.of(tossup).same_as(tossup)


def _guess(name: str, logit: float | None, verbal: float | None = None) -> Guess:
    return Guess(guess=name, confidence_logit=logit, confidence_verbal=verbal)


SENTENCES = [
    "This man fought at Marengo.",
    "This man sold Louisiana.",
    "This man was crowned in 1804 at Notre-Dame.",
    "This man lost at Leipzig.",
    "This man was exiled to Elba.",
    "For 10 points, name this French emperor defeated at Waterloo.",
]


def test_evaluate_marks_the_buzz_adversarial_and_too_easy_clues():
    specs = [s for s in prefix_specs(SENTENCES) if s is not None]
    confidences = [
        ("Duke of Wellington", 0.8, None),  # confident and wrong: a good adversarial clue
        ("Napoleon", 0.3, 0.9),  # unconfident (logit)
        ("Napoleon Bonaparte", 0.7, None),  # confident and right three clues early: too easy
        ("Napoleon", 0.9, None),  # still before the last two: too easy
        ("Napoleon", 0.95, None),  # within the last two: fine
        ("Napoleon", 0.99, 0.99),
    ]
    guesses = {s.text: _guess(*c) for s, c in zip(specs, confidences, strict=True)}
    answer = "<b>Napoleon</b> Bonaparte [or Napoleon I]"
    verdicts, summary = evaluate(SENTENCES, answer, guesses, BuzzPolicy("logit", 0.5))
    assert [v.flag for v in verdicts] == ["adversarial", None, "too_easy", "too_easy", None, None]
    assert [v.buzz for v in verdicts] == [True, False, False, False, False, False]
    assert [v.correct for v in verdicts] == [False, True, True, True, True, True]
    assert summary.where().startswith("the model buzzes at clue 1 of 6 (word 5 of ")
    assert "“Duke of Wellington” — WRONG (logit ≥ 0.50)" in summary.where()
    assert summary.on_target is False
    assert summary.target().startswith("too easy for the model at sentence 3, 4")
    assert "1 good adversarial clue" in summary.target()
    shown = verdict_text(verdicts[0]).plain
    assert "✗ Duke of Wellington" in shown and "logit 0.80  verbal —" in shown
    assert "◀ BUZZ" in shown and "◆ good adversarial clue" in shown

    # The verbal confidence buzzes where it is given and never where it is missing.
    verdicts, summary = evaluate(SENTENCES, answer, guesses, BuzzPolicy("verbal", 0.5))
    assert [v.buzz for v in verdicts].index(True) == 1
    assert [v.flag for v in verdicts] == [None, "too_easy", None, None, None, None]

    # Above every confidence the model never buzzes; the last guess is still reported.
    verdicts, summary = evaluate(SENTENCES, answer, guesses, BuzzPolicy("logit", 1.0))
    assert not any(v.buzz for v in verdicts)
    assert summary.where() == (
        "the model never buzzes (logit ≥ 1.00); after the last clue it says “Napoleon” (right)"
    )
    assert summary.on_target is True

    # A missing prefix before the first confident one hides the buzz until it is known.
    partial = dict(guesses)
    del partial[specs[0].text]
    verdicts, summary = evaluate(SENTENCES, answer, partial, BuzzPolicy("logit", 0.5))
    assert not any(v.buzz for v in verdicts) and verdicts[0].pending
    assert summary.where() == "guessing 1 prefix…" and summary.on_target is None

    # With no answer line nothing is judged, so nothing is marked.
    verdicts, summary = evaluate(SENTENCES, "  ", guesses, BuzzPolicy("logit", 0.5))
    assert {v.correct for v in verdicts} == {None} and {v.flag for v in verdicts} == {None}
    assert "not judged: the answer line is empty" in summary.where()


def test_guess_cache_is_keyed_by_model_and_exact_text():
    cache = GuessCache()
    cache.put("tfidf", "This man", _guess("Napoleon", 0.4))
    cache.put("tfidf", "broken", Guess(guess=None, error="timeout"))
    assert cache.lookup("tfidf", "This man") is not None
    assert cache.lookup("tfidf", "This man ") is None  # a changed prefix is a miss
    assert cache.lookup("openai/gpt-4o-mini", "This man") is None
    assert cache.lookup("tfidf", "broken") is None  # failures are asked again
    assert (cache.hits, cache.misses, len(cache)) == (1, 3, 1)


def test_packet_with_drafts_keeps_text_layout_when_the_splitter_agrees():
    packet = load_packet(SAMPLE_PACKET_PATH)
    tossup = packet.tossups[0]
    draft = Draft.of(tossup)
    draft.sentences[1] = "Another chapter of this novel sorts whales by size."
    saved = packet_with_drafts(packet, {tossup.id: draft}, file="p.yaml")
    assert saved.tossups[0].clues is None  # still written as text
    assert saved.tossups[0].tokens().clue_texts()[1] == draft.sentences[1]
    assert saved.tossups[1:] == packet.tossups[1:]

    # Sentences the splitter would not find are kept as explicit clues.
    draft.sentences[1:2] = ["Another chapter of this novel", "sorts whales by size."]
    saved = packet_with_drafts(packet, {tossup.id: draft}, file="p.yaml")
    assert saved.tossups[0].clues == [
        " ".join(s.split()) for s in draft.sentences
    ]  # seven clues now


# ---------------------------------------------------------------------------------------------
# The screen


class SpyGuesser:
    """The real guesser, recording every prefix it is asked about."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.asked: list[Prefix] = []

    async def guess(self, prefix: Prefix) -> Guess:
        self.asked.append(prefix)
        return await self.inner.guess(prefix)


@pytest.fixture(scope="module")
def tfidf():
    from grace_arena.model.precompute import make_guesser

    return make_guesser("tfidf")


@pytest.fixture
def spy(tfidf) -> SpyGuesser:
    return SpyGuesser(tfidf)


@pytest.fixture
def packet_file(tmp_path) -> Path:
    path = tmp_path / "packet.yaml"
    shutil.copy(SAMPLE_PACKET_PATH, path)
    return path


async def until(pilot, check: Callable[[], object], what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)
    return value


def settled(screen: AuthoringScreen) -> bool:
    """Every prefix guessed and nothing waiting to be asked."""
    return not screen.guessing() and screen.summary is not None and screen.summary.pending == 0


def shown(screen: AuthoringScreen) -> list[str]:
    """What the verdict beside each sentence reads."""
    return [row.verdict_view.render().plain for row in screen.rows()]


def plain(renderable) -> str:
    console = Console(width=110, file=io.StringIO(), record=True)
    console.print(renderable)
    return console.export_text()


def summary_shown(screen: AuthoringScreen) -> str:
    return screen.query_one("#summary").render().plain


def make(path: Path, guesser, tossup: str = "lit-american-1", **kwargs):
    return make_authoring_app(path, tossup_id=tossup, guesser=guesser, debounce=0.3, **kwargs)


async def test_the_table_shows_guess_confidences_judge_buzz_and_marks(packet_file, spy):
    app = make(packet_file, spy, tossup="hist-american-1")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        rows = shown(screen)
        assert len(rows) == 6
        assert rows[0].splitlines() == [
            "✗ Pinckney's Treaty",
            "logit 0.99  verbal —",
            " ◀ BUZZ  ◆ good adversarial clue",
        ]
        assert rows[3].splitlines()[0] == "✓ Louisiana Purchase"
        assert rows[3].splitlines()[2] == "▲ too easy for the model"
        assert rows[5].splitlines()[:2] == ["✓ Louisiana Purchase", "logit 1.00  verbal —"]
        assert summary_shown(screen).splitlines() == [
            "The model buzzes at clue 1 of 6 (word 22 of 127) with “Pinckney's Treaty” — "
            "WRONG (logit ≥ 0.50)",
            "▲ too easy for the model at sentence 4: make the early clues harder · "
            "3 good adversarial clues",
        ]
        assert [r.has_class("-buzz") for r in screen.rows()] == [True] + [False] * 5
        assert "buzz at logit ≥ 0.50" in screen.query_one("#title").render().plain
        assert [p.step for p in spy.asked] == [0, 1, 2, 3, 4, 5]


async def test_editing_a_sentence_updates_the_guess(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        assert shown(screen)[0].startswith("✗ The Old Man and the Sea")
        assert app.focused is screen.rows()[0].editor
        await pilot.press("f7")  # select the whole sentence, then type over it
        await pilot.press(*"Ahab hunts a white whale.")
        assert screen.draft.sentences[0] == "Ahab hunts a white whale."
        await until(pilot, lambda: settled(screen), "the new guesses")
        first = shown(screen)[0].splitlines()
        assert first[0] == "✓ Moby-Dick"
        assert first[2] == " ◀ BUZZ  ▲ too easy for the model"
        assert summary_shown(screen).startswith(
            "The model buzzes at clue 1 of 6 (word 5 of 117) with “Moby-Dick” — correct"
        )
        assert "unsaved (1 tossup)" in screen.query_one("#title").render().plain


async def test_only_changed_prefixes_are_guessed_again(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        assert [p.step for p in spy.asked] == [0, 1, 2, 3, 4, 5]
        spy.asked.clear()
        hits = screen.cache.hits

        editor = screen.rows()[2].editor
        editor.focus()
        editor.move_cursor(editor.document.end)
        editor.insert(" Its sermon is about Jonah")  # one edit, as a paste makes it
        await until(pilot, lambda: "about Jonah" in screen.draft.sentences[2], "the edit")
        await until(pilot, lambda: settled(screen), "the new guesses")
        # Sentence 3 of 6 changed: prefixes 3..6 are new, prefixes 1 and 2 come from the cache.
        assert [p.step for p in spy.asked] == [2, 3, 4, 5]
        assert screen.cache.hits - hits == 2
        assert all("Its sermon is about Jonah" in p.text for p in spy.asked)

        # Undoing the edit brings back prefixes the model has already seen: no call at all.
        spy.asked.clear()
        await pilot.press("ctrl+z")
        await until(pilot, lambda: screen.draft.same_as(screen.packet.tossups[0]), "undo")
        await until(pilot, lambda: settled(screen), "the cached guesses")
        assert spy.asked == []
        assert shown(screen)[4].splitlines()[2].strip() == "◀ BUZZ"


async def test_threshold_keys_move_the_buzz_marker(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")

        def buzz_row() -> int | None:
            rows = [r.has_class("-buzz") for r in screen.rows()]
            return rows.index(True) + 1 if True in rows else None

        assert buzz_row() == 5  # logit 0.62 on clue 5 passes 0.50
        await pilot.press("f3", "f3", "f3")  # 0.65: clue 5 no longer passes
        assert screen.threshold == pytest.approx(0.65)
        assert buzz_row() == 6
        assert "buzz at logit ≥ 0.65" in screen.query_one("#title").render().plain
        await pilot.press(*["f3"] * 10)  # capped at 1.00: the model never buzzes
        assert screen.threshold == 1.0 and buzz_row() is None
        assert summary_shown(screen).startswith("The model never buzzes (logit ≥ 1.00)")
        await pilot.press(*["f2"] * 19)  # 0.05: the vague first clue passes, and it is wrong
        assert screen.threshold == pytest.approx(0.05)
        assert buzz_row() == 1
        assert screen.rows()[0].has_class("-adversarial")
        await pilot.press("f4")  # the TF-IDF model has no verbal confidence: it never buzzes
        assert screen.confidence == "verbal" and buzz_row() is None
        assert spy.asked and len(spy.asked) == 6  # changing the policy asks nothing


async def test_saved_packet_validates_and_round_trips(packet_file, spy, tmp_path):
    original = load_packet(packet_file)
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        editor = screen.rows()[1].editor
        editor.focus()
        editor.move_cursor((0, len("Another chapter of this novel")))
        await pilot.press("enter")  # split sentence 2 at the cursor: seven sentences
        assert len(screen.rows()) == 7
        assert app.focused is screen.rows()[2].editor
        assert screen.draft.sentences[1] == "Another chapter of this novel"
        await pilot.press("alt+up")  # and move the new one above its head
        assert screen.draft.sentences[1].startswith("sorts its subjects")
        assert app.focused is screen.rows()[1].editor
        await pilot.press("alt+down", "ctrl+r")  # back down, then delete it
        assert len(screen.draft.sentences) == 6
        assert screen.draft.sentences[1] == "Another chapter of this novel"
        await pilot.press("shift+tab", "shift+tab", "ctrl+e")  # the answer line
        assert app.focused is screen.query_one("#answer")
        await pilot.press(*" [accept Moby Dick]")
        await until(pilot, lambda: settled(screen), "the new guesses")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not screen.dirty_ids(), "the save")
        assert "saved" in screen.query_one("#title").render().plain

    assert validate_packet_file(packet_file) == []
    saved = load_packet(packet_file)
    tossup = saved.tossups[0]
    # "... this novel A preacher ...": the sentence splitter would not find the writer's
    # boundary there, so the tossup is written with explicit clues.
    assert tossup.clues is not None and len(tossup.clues) == 6
    assert tossup.clues[1] == "Another chapter of this novel"
    assert "(*)" in tossup.clues[3]
    assert tossup.answer.endswith("[or The Whale; prompt on whale] [accept Moby Dick]")
    assert saved.tossups[1:] == original.tossups[1:]
    assert saved.packet == original.packet
    again = tmp_path / "again.yaml"
    dump_packet(saved, again)
    assert load_packet(again) == saved


async def test_saving_with_an_empty_answer_is_refused_with_the_problem(packet_file, spy):
    before = packet_file.read_bytes()
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        screen.query_one("#answer").focus()
        await pilot.press("ctrl+e", "ctrl+u")  # delete the whole answer line
        assert screen.draft.answer == ""
        assert shown(screen)[0].startswith("· The Old Man and the Sea")  # nothing to judge by
        await pilot.press("ctrl+s")
        problems = screen.query_one("#problems")
        await until(pilot, lambda: problems.has_class("-shown"), "the problems")
        assert problems.render().plain.splitlines() == [
            "Not saved — fix these first:",
            "• lit-american-1 · answer: must not be empty",
        ]
        assert packet_file.read_bytes() == before
        assert "● unsaved" in screen.query_one("#title").render().plain

        # The list follows the edits, and a fixed packet saves.
        await pilot.press(*"Moby-Dick")
        assert not problems.has_class("-shown")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not screen.dirty_ids(), "the save")
    assert load_packet(packet_file).tossups[0].answer == "Moby-Dick"


async def test_saving_over_a_file_changed_on_disk_asks_first(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        await pilot.press("x")  # typed at the start of sentence 1
        theirs = load_packet(packet_file)  # meanwhile someone else saves the packet
        meta = theirs.packet.model_copy(update={"title": "Retitled"})
        dump_packet(theirs.model_copy(update={"packet": meta}), packet_file)
        stat = packet_file.stat()
        os.utime(packet_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        assert load_packet(packet_file).packet.title == "Retitled"
        assert screen.dirty_ids() == ["lit-american-1"]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: not screen.dirty_ids(), "the save")
    saved = load_packet(packet_file)
    assert saved.tossups[0].text.startswith("xA chapter of this novel")
    assert saved.packet.title == "GRACE Arena Sample Packet"  # overwritten, as confirmed


async def test_an_empty_sentence_is_not_guessed_and_blocks_the_save(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        editor = screen.rows()[5].editor
        editor.focus()
        editor.move_cursor(editor.document.end)
        await pilot.press("enter")  # a new, empty seventh sentence
        await until(pilot, lambda: settled(screen), "the guesses")
        assert shown(screen)[6] == "empty sentence: write a clue or delete it (ctrl+r)"
        assert len(spy.asked) == 6  # the empty sentence changes no prefix
        await pilot.press("ctrl+s")
        problems = screen.query_one("#problems")
        await until(pilot, lambda: problems.has_class("-shown"), "the problems")
        assert "clues: clue #7 must contain at least one word" in problems.render().plain
        await pilot.press("ctrl+r")
        assert not problems.has_class("-shown") and not screen.dirty_ids()


class FailsOnceGuesser(SpyGuesser):
    """The real guesser, except that the first question about the first prefix fails (as an
    LLM call does once litellm's retries are spent)."""

    failed = False

    async def guess(self, prefix: Prefix) -> Guess:
        if prefix.step == 0 and not self.failed:
            self.failed = True
            raise RuntimeError("provider unavailable")
        return await super().guess(prefix)


async def test_a_failed_guess_is_shown_and_asked_again_after_the_next_edit(packet_file, tfidf):
    flaky = FailsOnceGuesser(tfidf)
    app = make(packet_file, flaky)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: not screen.guessing() and screen.errors, "the failure")
        assert shown(screen)[0].splitlines() == [
            "✗ no guess: RuntimeError: provider unavailable",
            "(tried again after the next edit)",
        ]
        assert summary_shown(screen).startswith("1 prefix(es) could not be guessed")
        assert not any(r.has_class("-buzz") for r in screen.rows())  # unknown before clue 5
        editor = screen.rows()[5].editor
        editor.focus()
        editor.move_cursor(editor.document.end)
        await pilot.press("!")
        await until(pilot, lambda: settled(screen) and not screen.errors, "the retry")
        assert shown(screen)[0].startswith("✗ The Old Man and the Sea")
        assert [p.step for p in flaky.asked] == [1, 2, 3, 4, 5, 0, 5]


async def test_quitting_with_unsaved_changes_asks_first(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        await pilot.press("x")
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.screen is screen and app.is_running
        await pilot.press("ctrl+q", "y")
        await until(pilot, lambda: not app.is_running, "the app to exit")


async def test_switching_tossups_and_help(packet_file, spy):
    app = make(packet_file, spy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.authoring
        await until(pilot, lambda: settled(screen), "the first guesses")
        await pilot.press("f1")
        help_text = plain(app.screen.query_one("#help-keys", Static).content)
        for key in ("ctrl+s", "ctrl+q", "f1", "ctrl+r", "alt+↑", "alt+↓", "f2", "f3", "f4"):
            assert key in help_text
        await pilot.press("escape")
        assert app.screen is screen
        screen.query_one("#tossups").focus()
        await pilot.press("down", "enter")
        await until(pilot, lambda: screen.current == "lit-british-1", "the second tossup")
        await until(pilot, lambda: settled(screen), "its guesses")
        assert len(screen.rows()) == 6 and len(spy.asked) == 12
        assert screen.query_one("#answer").value.startswith("<b>Frankenstein</b>")


def test_cli_refuses_an_unknown_tossup_and_an_invalid_packet(tmp_path):
    runner = CliRunner()
    path = tmp_path / "p.yaml"
    shutil.copy(SAMPLE_PACKET_PATH, path)
    result = runner.invoke(cli, ["write", str(path), "--tossup", "nope"], env=WIDE)
    assert result.exit_code == 2 and "no tossup 'nope'" in result.output
    path.write_text(path.read_text().replace("answer: ", "answer_line: ", 1))
    result = runner.invoke(cli, ["write", str(path)], env=WIDE)
    assert result.exit_code == 2
    assert "unknown key; did you mean 'answer'?" in result.output
