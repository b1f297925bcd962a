"""Canonical tokenization of tossup text: the word positions every part of the app agrees on.

A position in a tossup is a 0-based index into ``tokenize(text).words`` (QBJ semantics: hearing
part of a word counts as hearing the whole word). The rules:

* The power mark ``(*)`` and pronunciation guides (a parenthesised group whose content starts
  with a quote, e.g. ``Nietzsche ("NEE-chuh")``) are not words. They are blanked out before
  splitting, so they never shift the character offsets of the remaining words: every offset
  refers to the original text, markers included.
* A word is a whitespace-separated token; punctuation stays attached (``"U.S.,"``, ``“Storm``)
  and hyphenated words are one word. A token made only of punctuation (a lone ``—``) is skipped.
* Clues are the packet's explicit clue list when given; otherwise sentences, found by the rules
  in :func:`_sentence_boundaries` (abbreviations, initials, decimals, ellipses, quotes).
  "For 10 points" / "For ten points" always starts a new clue.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Tokenized", "Word", "marker_spans", "strip_markers", "tokenize"]

POWER_MARK = "(*)"

_POWER_RE = re.compile(r"\(\*\)")
# A pronunciation guide: "(" then optional spaces, then a straight or curly quote, no nested
# parentheses, then ")". Example: ("NEE-chuh"), (“KAHN-duh-RAH”).
_GUIDE_RE = re.compile(r"\(\s*[\"“”„'‘’][^()]*\)")
_TOKEN_RE = re.compile(r"\S+")

_OPENERS = "\"'“‘«([{„"
_CLOSERS = "\"'”’»)]}"
_TERMINATORS = ".?!…"
# Symbols a reader says aloud, so a token made only of them is still a word.
_SPOKEN_PUNCTUATION = frozenset("&#%@")

# Abbreviations after which a sentence never ends (titles before a name, "vs.", "e.g.").
_NEVER_FINAL = frozenset(
    {
        "Mr", "Mrs", "Ms", "Messrs", "Dr", "St", "Mt", "Ft", "Prof", "Rev", "Gen", "Col", "Lt",
        "Sgt", "Capt", "Cpl", "Adm", "Gov", "Sen", "Rep", "Pres", "Hon", "Fr", "Msgr",
        "vs", "Vs", "v", "cf", "Cf", "viz", "e.g", "E.g", "i.e", "I.e", "approx",
    }
)  # fmt: skip
# Abbreviations that are not a sentence end when a number follows ("No. 5", "c. 1500").
_BEFORE_NUMBER = frozenset(
    {"No", "no", "Nos", "nos", "Op", "op", "Vol", "vol", "p", "pp", "c", "ca"}
)
# Abbreviations that may or may not end a sentence: they end one only when the next word is a
# typical sentence opener ("... in the U.S. This man ..." but "the U.S. Senate").
_AMBIGUOUS = frozenset({"Jr", "Sr", "Inc", "Co", "Corp", "Ltd", "Bros", "etc", "al", "Esq"})
# "U.S", "Ph.D", "D.C": initialisms with their final "." already cut off.
_INITIALISM_RE = re.compile(r"^(?:[A-Za-z]{1,3}\.)+[A-Za-z]{1,3}$")
_INITIAL_RE = re.compile(r"^[A-Z]$")
_SENTENCE_OPENERS = frozenset(
    {
        "This", "These", "That", "Those", "The", "A", "An", "In", "On", "At", "For", "He", "She",
        "It", "They", "His", "Her", "Its", "Their", "One", "Another", "After", "Before", "During",
        "When", "While", "Although", "Though", "Because", "Since", "With", "Like", "Unlike", "As",
        "Name", "Give", "Identify", "What", "Which", "Who", "Whose", "Many", "Some", "Several",
        "Later", "Then", "Also", "According", "Each", "Both", "We", "I", "You", "If", "Upon",
        "Under", "Over", "From", "By", "To", "Despite", "Following", "Among", "Such",
        "Members", "Followers", "Works", "Examples", "Ten", "Two", "Three", "Most", "Other",
    }
)  # fmt: skip
_POINTS_RE = re.compile(r"points\b")  # "points," "points—name" ...
_FOR_POINTS_VALUES = frozenset({"10", "ten", "15", "fifteen", "20", "twenty", "5", "five"})


@dataclass(frozen=True)
class Word:
    """One word of a tossup: its text as written and where it sits."""

    text: str  # as written, punctuation attached (e.g. "U.S.," or "“Storm")
    start: int  # char offset in the original text (inclusive)
    end: int  # char offset in the original text (exclusive)
    clue: int  # index of the clue this word belongs to


@dataclass(frozen=True)
class Tokenized:
    """A tossup's text split into words and clues. Word indices are the app's positions."""

    text: str  # original text, markers included
    words: tuple[Word, ...]
    clue_ends: tuple[int, ...]  # index of the last word of each clue; last == len(words) - 1
    power_index: int | None  # words before "(*)": a buzz at index < power_index earns power
    marker_spans: tuple[tuple[int, int], ...] = ()  # char spans of (*) and pronunciation guides

    def __len__(self) -> int:
        return len(self.words)

    @property
    def n_clues(self) -> int:
        return len(self.clue_ends)

    def clue_of(self, word_index: int) -> int:
        """Index of the clue containing word ``word_index``."""
        if not 0 <= word_index < len(self.words):
            raise IndexError(f"word index {word_index} out of range 0..{len(self.words) - 1}")
        return self.words[word_index].clue

    def fraction_revealed(self, word_index: int) -> float:
        """Share of words heard once word ``word_index`` is read: (index + 1) / len, in [0, 1].

        ``-1`` (nothing read yet) gives 0.0; an index past the end gives 1.0.
        """
        if not self.words:
            return 0.0
        return min(1.0, max(0.0, (word_index + 1) / len(self.words)))

    def clue_fraction(self, word_index: int) -> float:
        """Share of clues fully or partly heard at word ``word_index`` (GRACE's ``c``).

        ``(clue_of(word_index) + 1) / n_clues``; ``-1`` gives 0.0, past the end gives 1.0.
        """
        if not self.words or word_index < 0:
            return 0.0
        if word_index >= len(self.words):
            return 1.0
        return (self.clue_of(word_index) + 1) / len(self.clue_ends)

    def prefix_end(self, clue_index: int) -> int:
        """Index of the last word of clue ``clue_index`` (the end of the prefix through it)."""
        if not 0 <= clue_index < len(self.clue_ends):
            raise IndexError(f"clue index {clue_index} out of range 0..{len(self.clue_ends) - 1}")
        return self.clue_ends[clue_index]

    def clue_start(self, clue_index: int) -> int:
        """Index of the first word of clue ``clue_index``."""
        return 0 if clue_index == 0 else self.prefix_end(clue_index - 1) + 1

    def char_offset(self, word_index: int) -> int:
        """Character offset in :attr:`text` where word ``word_index`` starts."""
        if not 0 <= word_index < len(self.words):
            raise IndexError(f"word index {word_index} out of range 0..{len(self.words) - 1}")
        return self.words[word_index].start

    def clue_texts(self) -> tuple[str, ...]:
        """Each clue's text with markers removed, spacing inside a clue as in the original.

        A clue runs from its first word up to the next clue's first word, so trailing
        punctuation that is not itself a word (a "." after a pronunciation guide) stays with it.
        """
        texts = []
        for i in range(len(self.clue_ends)):
            start = self.words[self.clue_start(i)].start
            last = self.clue_ends[i]
            end = self.words[last + 1].start if last + 1 < len(self.words) else len(self.text)
            spans = [(s, e) for s, e in self.marker_spans if s >= start and e <= end]
            texts.append(_remove_spans(self.text, spans, start, end).strip())
        return tuple(texts)

    def prefix_text(self, word_index: int) -> str:
        """The original text up to and including word ``word_index`` (markers kept)."""
        if word_index < 0:
            return ""
        return self.text[: self.words[min(word_index, len(self.words) - 1)].end]


def marker_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character spans of power marks and of pronunciation guides in ``text``."""
    power = [(m.start(), m.end()) for m in _POWER_RE.finditer(text)]
    guides = [(m.start(), m.end()) for m in _GUIDE_RE.finditer(text)]
    return power, guides


def strip_markers(text: str) -> str:
    """``text`` without ``(*)`` and pronunciation guides, whitespace collapsed to single spaces."""
    power, guides = marker_spans(text)
    return " ".join(_remove_spans(text, sorted(power + guides), 0, len(text)).split())


def tokenize(text: str, clues: Sequence[str] | None = None) -> Tokenized:
    """Split a tossup into words and clues.

    With ``clues`` (explicit boundaries from a packet) the text is ``" ".join(clues)`` and the
    clue boundaries are exactly those; ``text`` must then be empty or equal to that join, and
    every clue must contain at least one word. Without ``clues`` the text is split into
    sentences. Raises ``ValueError`` for inconsistent ``text``/``clues`` or a clue with no words.

    >>> t = tokenize('Nietzsche ("NEE-chuh") wrote this (*) book. For 10 points, name it.')
    >>> [w.text for w in t.words][:4], t.power_index, t.clue_ends
    (['Nietzsche', 'wrote', 'this', 'book.'], 3, (3, 8))
    """
    if clues is not None:
        joined = " ".join(clues)
        if text and text != joined:
            raise ValueError("text must be empty or equal to the clues joined by single spaces")
        text = joined

    power, guides = marker_spans(text)
    spans = sorted(power + guides)
    masked = _mask(text, spans)
    tokens = [(m.start(), m.end()) for m in _TOKEN_RE.finditer(masked)]
    word_spans = [(s, e) for s, e in tokens if _is_word(text[s:e])]
    word_starts = [s for s, _ in word_spans]

    if clues is not None:
        starts, offset = [], 0
        for clue in clues:
            starts.append(offset)
            offset += len(clue) + 1
        boundaries = starts[1:]
    else:
        boundaries = _sentence_boundaries(text, tokens)

    # Clue of each word = number of boundaries at or before its start, renumbered densely so
    # that a boundary with no words after it (e.g. before a lone "—") yields no empty clue.
    raw_clues = [bisect_right(boundaries, s) for s in word_starts]
    if clues is not None:
        present = set(raw_clues)
        empty = [i for i in range(len(clues)) if i not in present]
        if empty:
            raise ValueError(f"clue {empty[0]} has no words")
    dense = {c: i for i, c in enumerate(sorted(set(raw_clues)))}
    words = tuple(
        Word(text[s:e], s, e, dense[c]) for (s, e), c in zip(word_spans, raw_clues, strict=True)
    )
    clue_ends = tuple(
        i for i in range(len(words)) if i == len(words) - 1 or words[i + 1].clue != words[i].clue
    )
    power_index = bisect_left(word_starts, power[0][0]) if power else None
    return Tokenized(text, words, clue_ends, power_index, tuple(spans))


def _mask(text: str, spans: Sequence[tuple[int, int]]) -> str:
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def _remove_spans(text: str, spans: Sequence[tuple[int, int]], start: int, end: int) -> str:
    """``text[start:end]`` with ``spans`` cut out, dropping the space left before each cut when
    the cut is followed by a space or punctuation (``"work (*) is"`` -> ``"work is"``)."""
    out: list[str] = []
    pos = start
    for s, e in spans:
        piece = text[pos:s]
        following = text[e : e + 1] if e < end else ""
        if following == "" or following.isspace() or following in ",.;:!?)]”’…":
            piece = piece.rstrip()
        out.append(piece)
        pos = e
    out.append(text[pos:end])
    return "".join(out)


def _is_word(token: str) -> bool:
    return any(
        ch in _SPOKEN_PUNCTUATION or not unicodedata.category(ch).startswith("P") for ch in token
    )


def _core(token: str) -> str:
    return token.lstrip(_OPENERS).rstrip(_CLOSERS)


def _bare(token: str) -> str:
    """A token without surrounding quotes, brackets and trailing punctuation: the word itself."""
    return token.lstrip(_OPENERS).rstrip(_CLOSERS + ".,;:?!…")


def _starts_sentence(token: str) -> bool:
    stripped = token.lstrip(_OPENERS)
    return bool(stripped) and (stripped[0].isupper() or stripped[0].isdigit())


def _is_for_points(text: str, tokens: Sequence[tuple[int, int]], i: int) -> bool:
    """True when tokens i.. read "For 10 points" / "For ten points" (or the token is "FTP")."""
    first = _bare(text[slice(*tokens[i])])
    if first == "FTP":
        return True
    if first != "For" or i + 2 >= len(tokens):
        return False
    value = _bare(text[slice(*tokens[i + 1])]).lower()
    return value in _FOR_POINTS_VALUES and bool(_POINTS_RE.match(text[slice(*tokens[i + 2])]))


def _ends_sentence(token: str, next_token: str) -> bool:
    """Whether a sentence ends after ``token``, given the token that follows it."""
    core = _core(token)
    if not core or core[-1] not in _TERMINATORS:
        return False
    if not _starts_sentence(next_token):
        return False
    if core[-1] in "?!…" or core.endswith(".."):
        return True
    word = core[:-1].lstrip(_OPENERS)  # the final "." cut off
    next_bare = _bare(next_token)
    next_is_opener = next_bare in _SENTENCE_OPENERS and not _INITIAL_RE.match(next_bare)
    if not word:
        return True  # a lone "." (e.g. after a removed pronunciation guide)
    if word in _NEVER_FINAL:
        return False
    if word in _BEFORE_NUMBER and next_token.lstrip(_OPENERS)[:1].isdigit():
        return False
    if _INITIAL_RE.match(word) or _INITIALISM_RE.match(word) or word in _AMBIGUOUS:
        # "J. R. R. Tolkien", "John F. Kennedy", "the U.S. Senate": not an end, unless what
        # follows is a typical opener ("World War I. This war", "in the U.S. This man").
        return next_is_opener
    return True


def _sentence_boundaries(text: str, tokens: Sequence[tuple[int, int]]) -> list[int]:
    """Character offsets where a new sentence starts (the start of its first token)."""
    boundaries: list[int] = []
    for i in range(1, len(tokens)):
        previous, current = text[slice(*tokens[i - 1])], text[slice(*tokens[i])]
        if _is_for_points(text, tokens, i) or _ends_sentence(previous, current):
            boundaries.append(tokens[i][0])
    return boundaries
