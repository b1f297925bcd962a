"""Canonical tokenization: words, offsets, clue splitting, power index, converters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grace_arena.core.tokenize import Tokenized, strip_markers, tokenize


def clues_of(text: str) -> list[str]:
    return list(tokenize(text).clue_texts())


def words_of(text: str) -> list[str]:
    return [w.text for w in tokenize(text).words]


def assert_offsets_exact(t: Tokenized) -> None:
    for word in t.words:
        assert t.text[word.start : word.end] == word.text


# --- words ---------------------------------------------------------------------------------


def test_words_keep_attached_punctuation_and_hyphens() -> None:
    text = "In the U.S., the “Storm” hit Winston-Salem; it's well-known."
    assert words_of(text) == [
        "In", "the", "U.S.,", "the", "“Storm”", "hit", "Winston-Salem;", "it's", "well-known.",
    ]  # fmt: skip
    assert_offsets_exact(tokenize(text))


def test_standalone_punctuation_is_not_a_word() -> None:
    text = "This ruler — called the Great – won a war ... then died."
    assert words_of(text) == [
        "This", "ruler", "called", "the", "Great", "won", "a", "war", "then", "died.",
    ]  # fmt: skip


def test_symbols_spoken_aloud_are_words() -> None:
    assert words_of("Simon & Garfunkel sold $5 worth") == [
        "Simon", "&", "Garfunkel", "sold", "$5", "worth",
    ]  # fmt: skip


def test_power_mark_is_not_a_word_and_sets_power_index() -> None:
    text = "This novel's (*) narrator is Ishmael. For 10 points, name it."
    t = tokenize(text)
    assert "(*)" not in [w.text for w in t.words]
    assert t.power_index == 2  # "This", "novel's" are before the mark
    assert t.words[2].text == "narrator"
    assert t.words[2].start == text.index("narrator")  # offsets not shifted by the mark
    assert_offsets_exact(t)


def test_power_mark_glued_to_a_word() -> None:
    t = tokenize("He wrote Hamlet(*) and Lear.")
    assert [w.text for w in t.words] == ["He", "wrote", "Hamlet", "and", "Lear."]
    assert t.power_index == 3


def test_no_power_mark_gives_none() -> None:
    assert tokenize("No mark here.").power_index is None


def test_power_mark_at_start_and_end() -> None:
    assert tokenize("(*) Early mark.").power_index == 0
    assert tokenize("Late mark. (*)").power_index == 2


@pytest.mark.parametrize(
    "text",
    [
        'This thinker, Nietzsche ("NEE-chuh"), wrote it.',
        "This thinker, Nietzsche (“NEE-chuh”), wrote it.",
        'This thinker, Nietzsche ( "NEE-chuh" ), wrote it.',
        "This thinker, Nietzsche ('NEE-chuh'), wrote it.",
    ],
)
def test_pronunciation_guides_are_not_words(text: str) -> None:
    t = tokenize(text)
    assert [w.text for w in t.words] == ["This", "thinker,", "Nietzsche", "wrote", "it."]
    assert t.words[3].start == text.index("wrote")
    assert_offsets_exact(t)


def test_parentheses_without_quote_are_words() -> None:
    assert words_of("He wrote (in 1851) a novel.") == ["He", "wrote", "(in", "1851)", "a", "novel."]


def test_pronunciation_guide_before_sentence_end_keeps_the_boundary() -> None:
    text = "He met Khandarah (“KAHN-duh-RAH”). Then he left."
    t = tokenize(text)
    assert t.clue_texts() == ("He met Khandarah.", "Then he left.")
    assert [w.text for w in t.words] == ["He", "met", "Khandarah", "Then", "he", "left."]


# --- sentence splitting --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "This man visited the U.S. Senate and the U.K. Parliament. He later died.",
            ["This man visited the U.S. Senate and the U.K. Parliament.", "He later died."],
        ),
        (
            "Dr. Jekyll met Mr. Hyde and Mrs. Poole on St. James Street near Mt. Vesuvius.",
            ["Dr. Jekyll met Mr. Hyde and Mrs. Poole on St. James Street near Mt. Vesuvius."],
        ),
        (
            "Martin Luther King Jr. marched. This man spoke.",
            ["Martin Luther King Jr. marched.", "This man spoke."],
        ),
        ("Brown vs. Board was decided. It ended segregation.",
         ["Brown vs. Board was decided.", "It ended segregation."]),
        (
            "Some metals, e.g. Iron, rust; others, i.e. Gold, do not. This is true.",
            ["Some metals, e.g. Iron, rust; others, i.e. Gold, do not.", "This is true."],
        ),
        ("His Symphony No. 5 is famous. It opens with four notes.",
         ["His Symphony No. 5 is famous.", "It opens with four notes."]),
        ("J. R. R. Tolkien wrote it. John F. Kennedy read it.",
         ["J. R. R. Tolkien wrote it.", "John F. Kennedy read it."]),
        ("It ended World War I. This war was long.",
         ["It ended World War I.", "This war was long."]),
        ("Pi is about 3.14 and it cost $2.5 million. This is odd.",
         ["Pi is about 3.14 and it cost $2.5 million.", "This is odd."]),
        ("He said wait... then left. Then he returned.",
         ["He said wait... then left.", "Then he returned."]),
        ("He wrote the line \"...\". Then he stopped.",
         ["He wrote the line \"...\".", "Then he stopped."]),
        ("He paused... Then he spoke.", ["He paused...", "Then he spoke."]),
        ('He said "go." Then she went.', ['He said "go."', "Then she went."]),
        ("He said “go.” Then she went.", ["He said “go.”", "Then she went."]),
        ("He left (as one does.) Then she went.", ["He left (as one does.)", "Then she went."]),
        ("Who wrote this? It was him! Indeed.", ["Who wrote this?", "It was him!", "Indeed."]),
        ('He asked "why?" and left.', ['He asked "why?" and left.']),
        ("This happened in 1848. 1848 was a busy year.",
         ["This happened in 1848.", "1848 was a busy year."]),
    ],
)  # fmt: skip
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert clues_of(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "This man was born in the U.S. For 10 points, name this man.",
        "This man was born in the U.S. For ten points, name this man.",
        "This man was born in the U.S. FTP, name this man.",
        "This man was born in Washington, D.C. For 10 points, name this man.",
        "This man was born in Boston, Mass. (*) For 10 points, name this man.",
        "This man was born in Boston For 10 points, name this man.",
        "This man was born in Boston. For 10 points—name this man.",
    ],
)
def test_for_ten_points_always_starts_a_clue(text: str) -> None:
    t = tokenize(text)
    assert len(t.clue_ends) == 2
    last = t.clue_texts()[-1]
    assert last.startswith(("For 10 points", "For ten points", "FTP"))


def test_final_giveaway_is_its_own_clue() -> None:
    text = (
        "This novel's narrator is Ishmael. Its captain is Ahab. "
        "For 10 points, name this Herman Melville novel."
    )
    t = tokenize(text)
    assert t.clue_texts() == (
        "This novel's narrator is Ishmael.",
        "Its captain is Ahab.",
        "For 10 points, name this Herman Melville novel.",
    )
    assert t.clue_ends == (4, 8, 16)


def test_explicit_clues_set_boundaries_exactly() -> None:
    clues = ["One clue. With two sentences.", "Mr. Smith", "For 10 points, name it."]
    t = tokenize("", clues)
    assert t.text == " ".join(clues)
    assert t.clue_texts() == tuple(clues)
    assert t.clue_ends == (4, 6, 11)


def test_explicit_clues_must_match_text() -> None:
    assert tokenize(" ".join(["A b.", "C d."]), ["A b.", "C d."]).clue_ends == (1, 3)
    with pytest.raises(ValueError, match="joined"):
        tokenize("something else", ["A b.", "C d."])


def test_explicit_clue_without_words_is_rejected() -> None:
    with pytest.raises(ValueError, match="clue 1 has no words"):
        tokenize("", ["A clue.", "(*) —", "Another."])


def test_empty_text() -> None:
    t = tokenize("")
    assert len(t) == 0
    assert t.clue_ends == ()
    assert t.clue_texts() == ()
    assert t.fraction_revealed(-1) == 0.0
    assert t.clue_fraction(3) == 0.0


# --- converters ----------------------------------------------------------------------------


@pytest.fixture
def moby() -> Tokenized:
    # 4 + 4 + 7 words; (*) after "Its"
    return tokenize(
        "This novel's narrator: Ishmael. Its (*) captain is Ahab. "
        "For 10 points, name this long novel."
    )


def test_clue_of_and_prefix_end(moby: Tokenized) -> None:
    assert moby.clue_ends == (3, 7, 14)
    assert [moby.clue_of(i) for i in (0, 3, 4, 7, 8, 14)] == [0, 0, 1, 1, 2, 2]
    assert [moby.prefix_end(i) for i in range(3)] == [3, 7, 14]
    assert moby.clue_start(1) == 4
    with pytest.raises(IndexError):
        moby.clue_of(15)
    with pytest.raises(IndexError):
        moby.prefix_end(3)


def test_fraction_revealed(moby: Tokenized) -> None:
    assert len(moby) == 15
    assert moby.fraction_revealed(-1) == 0.0
    assert moby.fraction_revealed(0) == pytest.approx(1 / 15)
    assert moby.fraction_revealed(14) == 1.0
    assert moby.fraction_revealed(99) == 1.0


def test_clue_fraction(moby: Tokenized) -> None:
    assert moby.clue_fraction(-1) == 0.0
    assert moby.clue_fraction(0) == pytest.approx(1 / 3)
    assert moby.clue_fraction(4) == pytest.approx(2 / 3)
    assert moby.clue_fraction(14) == 1.0
    assert moby.clue_fraction(40) == 1.0


def test_char_offset_and_power(moby: Tokenized) -> None:
    assert moby.char_offset(5) == moby.text.index("captain")
    assert moby.power_index == 5
    assert moby.clue_texts()[1] == "Its captain is Ahab."
    assert moby.prefix_text(4) == "This novel's narrator: Ishmael. Its"


def test_strip_markers() -> None:
    assert (
        strip_markers('Nietzsche ("NEE-chuh"),  wrote   this (*) book (in 1883).')
        == "Nietzsche, wrote this book (in 1883)."
    )
    assert strip_markers("(*) Start") == "Start"
    assert strip_markers("word(*) next") == "word next"


# --- properties ----------------------------------------------------------------------------

_WORDS = st.sampled_from(
    [
        "This", "novel", "U.S.", "Dr.", "J.", "3.14", "wait...", '"go."', "(*)", '("NEE-chuh")',
        "—", "For", "10", "points,", "Mr.", "e.g.", "it.", "Why?", "(“KAHN”)", "end!", "the",
        "well-known", "It", "...", "a", "St.", "1848.", "“Storm”", "No.", "5", "(see", "above.)",
    ]
)  # fmt: skip
_SPACES = st.sampled_from([" ", "  ", "\n", " \t "])


@st.composite
def tossup_texts(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(_WORDS, max_size=40))
    return "".join(token + draw(_SPACES) for token in tokens)


def check_invariants(t: Tokenized) -> None:
    previous_end = -1
    for word in t.words:
        assert 0 <= word.start < word.end <= len(t.text)
        assert word.start > previous_end  # increasing, non-overlapping
        assert t.text[word.start : word.end] == word.text
        previous_end = word.end - 1
    if not t.words:
        assert t.clue_ends == ()
        return
    assert list(t.clue_ends) == sorted(set(t.clue_ends))  # strictly increasing
    assert t.clue_ends[-1] == len(t.words) - 1
    for i, word in enumerate(t.words):
        expected = next(c for c, end in enumerate(t.clue_ends) if end >= i)
        assert word.clue == expected == t.clue_of(i)
    assert len(t.clue_texts()) == len(t.clue_ends)
    if t.power_index is not None:
        assert 0 <= t.power_index <= len(t.words)


@given(tossup_texts())
def test_property_invariants_on_sentence_split(text: str) -> None:
    check_invariants(tokenize(text))


@given(st.text(max_size=200))
def test_property_invariants_on_any_text(text: str) -> None:
    check_invariants(tokenize(text))


@given(st.lists(tossup_texts().filter(lambda s: len(tokenize(s)) > 0), min_size=1))
def test_property_explicit_clues_give_exactly_those_clues(clues: list[str]) -> None:
    t = tokenize("", clues)
    check_invariants(t)
    assert len(t.clue_ends) == len(clues)
    # The words of each clue are the words of that clue tokenized alone.
    for i, clue in enumerate(clues):
        first, last = t.clue_start(i), t.prefix_end(i)
        assert [w.text for w in t.words[first : last + 1]] == [w.text for w in tokenize(clue).words]


@given(tossup_texts())
def test_property_markers_never_words(text: str) -> None:
    t = tokenize(text)
    for word in t.words:
        assert "(*)" not in word.text
        assert "NEE-chuh" not in word.text
        assert "KAHN" not in word.text


@given(tossup_texts())
def test_property_fractions_monotone(text: str) -> None:
    t = tokenize(text)
    fractions = [t.fraction_revealed(i) for i in range(-1, len(t) + 1)]
    clue_fractions = [t.clue_fraction(i) for i in range(-1, len(t) + 1)]
    assert fractions == sorted(fractions)
    assert clue_fractions == sorted(clue_fractions)
    assert all(0.0 <= f <= 1.0 for f in fractions + clue_fractions)
