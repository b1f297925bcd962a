"""Normalization of answers and answer lines, and the tokens the judge compares.

:func:`normalize` is what a reader would call the same text: accents, case, quotes,
punctuation, leading articles and spaces do not count. :func:`prepare` goes further for
comparison: every word becomes a canonical :class:`Token` (numbers as digits, British spellings
as American ones, the usual transliterations and irregular plurals as one form).
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from grace_arena.core.judge.data import equivalence_groups

ARTICLES = frozenset({"the", "a", "an"})
# Words that say little on their own: a partial answer made only of these is no answer.
FILLER = frozenset({"of", "the", "a", "an", "and", "or", "in", "on", "to", "for", "de", "la"})

_LETTERS = str.maketrans(
    {
        "ø": "o",
        "æ": "ae",
        "œ": "oe",
        "ł": "l",
        "đ": "d",
        "ð": "d",
        "þ": "th",
        "ı": "i",
        "ħ": "h",
        "ŧ": "t",
        "ŀ": "l",
        "ĸ": "k",
    }
)
_APOSTROPHES = re.compile(r"['’‘`´ʻʼʹ′]")
_NON_WORD = re.compile(r"[\W_]+")
_SEPARATED = re.compile(r"([\W_]+)")
_HYPHENS = frozenset("-‐‑‒–—")


def fold(text: str) -> str:
    """Casefold and strip accents, repeated until nothing changes (NFKD can expose new cases)."""
    if text.isascii():  # most answers: nothing to decompose
        return text.lower()
    for _ in range(5):
        folded = unicodedata.normalize("NFKD", text.casefold().translate(_LETTERS))
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
        if folded == text:
            break
        text = folded
    return text


def split_words(text: str) -> list[tuple[str, bool]]:
    """Folded words of ``text``, each with whether a hyphen joins it to the word before.

    Runs of single letters are joined (``U. S.`` -> ``us``): they are initials.
    """
    # Apostrophes go before folding (NFKD turns "´" into a space) and after (it makes "＇" "'").
    text = _APOSTROPHES.sub("", fold(_APOSTROPHES.sub("", html.unescape(text))))
    text = text.replace("&", " and ")
    words: list[tuple[str, bool]] = []
    in_run = False  # the last word is built from single letters
    parts = _SEPARATED.split(text)  # word, separator, word, ...: separators at odd indices
    for index in range(0, len(parts), 2):
        word = parts[index]
        if not word:
            continue
        linked = bool(words) and index > 0 and parts[index - 1] in _HYPHENS
        single = len(word) == 1 and word.isalpha()
        if single and in_run:
            words[-1] = (words[-1][0] + word, words[-1][1])
        else:
            words.append((word, linked))
            in_run = single
    return words


def tokens(text: str, *, drop_articles: bool) -> list[str]:
    """The normalized words of ``text``; leading articles dropped unless nothing else is left."""
    words = [word for word, _ in split_words(text)]
    if drop_articles:
        while len(words) > 1 and words[0] in ARTICLES:
            words.pop(0)
    return words


def normalize(text: str) -> str:
    """Normalize for comparison: accents, case, quotes, punctuation, leading articles, spaces.

    >>> normalize("The  Dvořák ‘New World’ Symphony!")
    'dvorak new world symphony'
    """
    return " ".join(tokens(text, drop_articles=True))


# ---------------------------------------------------------------------------------------------
# Canonical words

# fmt: off
_UNITS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINAL_WORDS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth",
)
# fmt: on
_NUMBER_WORDS = {word: str(i) for i, word in enumerate(_UNITS)}
_NUMBER_WORDS |= {word: str(20 + 10 * i) for i, word in enumerate(_TENS)}
_NUMBER_WORDS |= {"hundred": "100", "thousand": "1000"}
# "the sixties" is a decade without its century ("60s"), as a player says it.
_NUMBER_WORDS |= {word[:-1] + "ies": f"{20 + 10 * i}s" for i, word in enumerate(_TENS)}
TENS_DIGITS = frozenset(str(20 + 10 * i) for i in range(len(_TENS)))
_ORDINALS = {
    word: f"{i}{'st' if i == 1 else 'nd' if i == 2 else 'rd' if i == 3 else 'th'}"
    for i, word in enumerate(_ORDINAL_WORDS, start=1)
}
_ABBREVIATIONS = {
    "dr": "doctor",
    "st": "saint",
    "mt": "mount",
    "ft": "fort",
    "jr": "junior",
    "sr": "senior",
    "vs": "versus",
    "no": "number",  # "Symphony No. 9"; a lone "no" is rare in an answer
    # Units, as a player may spell them out ("21 centimeter" for "21 cm line").
    "mm": "millimeter",
    "cm": "centimeter",
    "km": "kilometer",
    "nm": "nanometer",
    "mg": "milligram",
    "kg": "kilogram",
    "ml": "milliliter",
}
# Only numerals of two letters or more: a lone "i" or "v" is as often an initial or a word
# ("Maria V. Sabina", "Prestupleniye i nakazaniye"); matching lets it stand for 1 or 5 instead.
_ROMAN = re.compile(r"^(x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
SINGLE_ROMAN = {"i": "1", "v": "5", "x": "10"}


def roman_value(token: str) -> int | None:
    """The value of a roman numeral from ``i`` to ``xxxix``, else None."""
    if not token or not _ROMAN.match(token):
        return None
    total = 0
    for char, nxt in zip(token, [*token[1:], ""], strict=True):
        value = _ROMAN_VALUES[char]
        total += -value if nxt and _ROMAN_VALUES[nxt] > value else value
    return total


def canonical(word: str, position: int) -> str:
    """The canonical form of one normalized word at ``position`` in its answer (the
    equivalents data is applied later, as :attr:`Token.variant`)."""
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    if word in _ORDINALS:
        return _ORDINALS[word]
    if word in _ABBREVIATIONS and not (word == "no" and position == 0):
        return _ABBREVIATIONS[word]
    if position > 0 and len(word) > 1:
        value = roman_value(word)
        if value is not None:
            return str(value)
    if len(word) >= 6 and word.endswith("our"):  # British spelling: honour, colour, labour
        return word[:-3] + "or"
    if len(word) >= 7:  # British -ise/-isation: organise, realisation
        for ending, american in _ISE:
            if word.endswith(ending):
                return word[: -len(ending)] + american
    return word


_ISE = (("isation", "ization"), ("isations", "izations"), ("ised", "ized"), ("ising", "izing"))
_ISE += (("ises", "izes"), ("ise", "ize"))

_WORLD_WAR = re.compile(r"^ww(\d|[iv]+)$")


def _expand_world_wars(words: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``WWII`` / ``WW2`` / ``WW II`` -> ``world war ii``: the one abbreviation quizbowl players
    use for nearly every answer line it appears in."""
    expanded: list[tuple[str, bool]] = []
    for word, linked in words:
        m = _WORLD_WAR.match(word)
        if m:
            expanded += [("world", linked), ("war", False), (m.group(1), False)]
        elif expanded and expanded[-1][0] == "ww" and _WORLD_WAR.match("ww" + word):
            expanded[-1:] = [("world", expanded[-1][1]), ("war", False), (word, False)]
        else:
            expanded.append((word, linked))
    return expanded


def _merge_numbers(words: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Spelled-out compound numbers as digits: ``3 100`` -> ``300``, ``20 5`` -> ``25``,
    ``19 60s`` -> ``1960s``."""
    merged: list[tuple[str, bool]] = []
    for word, linked in words:
        last = merged[-1][0] if merged else ""
        if last.isdecimal() and word in ("100", "1000") and 0 < int(last) < 100:
            merged[-1] = (str(int(last) * int(word)), merged[-1][1])
        elif last in TENS_DIGITS and len(word) == 1 and word in "123456789":
            merged[-1] = (str(int(last) + int(word)), merged[-1][1])
        elif last in ("18", "19", "20") and re.fullmatch(r"\d0s", word):
            merged[-1] = (last + word, merged[-1][1])
        else:
            merged.append((word, linked))
    return merged


# ---------------------------------------------------------------------------------------------
# Tokens

_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()  # a Snowball stemmer object keeps state between calls


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a canonical word (digits and mixed words stay as they are)."""
    if not word.isalpha():
        return word
    with _STEMMER_LOCK:
        return _STEMMER.stemWord(word)


@dataclass(frozen=True, slots=True)
class Token:
    """One canonical word of an answer or a form."""

    text: str
    has_digit: bool
    linked: bool = False  # joined to the word before by a hyphen ("Moby-Dick")
    # The first word of its group in the equivalents data (a British spelling, a
    # transliteration, an irregular plural): "geese" -> "goose". The text itself is kept, so
    # that "mitochondrias" still matches "mitochondria" as a plural.
    variant: str = ""

    @property
    def stem(self) -> str:
        # Computed when first compared: most comparisons are settled before a stem is needed.
        return stem(self.text)


# How one name is spelled in several romanizations (Russian through English, French or German,
# Greek through Latin or directly, German umlauts written out), as rewrites to one spelling:
# two words with the same result are the same name ("Tchaikowsky", "Chaikovsky"; "Sophokles",
# "Sophocles"; "Haendel", "Handel"). A phonetic code (Soundex, Metaphone) would go too far: it
# drops vowels, so "Mailer" would be "Mahler" and "Alma" "Alamo"; these rewrites change only
# letters that romanizations disagree on and keep every vowel a speaker hears.
_ROMANIZATION: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"^t?sch|^tch", "ch"),  # Tschaikowsky, Tchaikovsky, Tchekhov (not "catches")
        (r"(?<=v)itch$", "ich"),  # Shostakovitch, Shostakovich
        (r"kh", "k"),  # Chekhov, Chekov
        (r"zh", "j"),  # Nizhinsky, Nijinsky
        (r"ph", "f"),  # Westphalia, Westfalia
        # a hard c: Sophocles, Sophokles; Qatar, Katar (a soft one is neither k nor s:
        # "cinematic" is not "kinematic", "cells" not "sells")
        (r"c(?![eiyh])|q(?!u)", "k"),
        (r"x", "ks"),  # Alexei, Aleksei
        (r"(?<=[aeiou])w(?![aeiou])", "v"),  # Tchaikowsky, Pavlow
        (r"(?<=[aeiou])ff?$", "v"),  # Rachmaninoff, Karamazof
        (r"(?<=[cs]h)[iy]?o(?=v)|(?<=j)[iy]?o(?=v)", "e"),  # Khrushchov, Gorbachov: the Russian yo
        (r"y", "i"),  # Dostoyevsky, Tolstoy
        # Dostoievsky, Mendeleiev, Tsvetaieva: the Russian ye before a v (not "Speyer", which
        # is not "Speer", nor "Bayer" "Baer")
        (r"(?<=[aeiou])i(?=[aeiou]v)", ""),
        (r"i[ij]$", "i"),  # Dostoevskii, Tchaikovskij
        (r"(?<=\w{5})os$", "us"),  # Asklepios, Asclepius (not "Minos", "Marcos")
        # German umlauts written out (Haendel, Goethe), between consonants; not "gue", "que"
        # (and not before a last letter: "statues" is not "status")
        (r"(?<=[^aeiou])([ao])e(?=[^aeiou]\w)|(?<=[^aeiougq])(u)e(?=[^aeiou]\w)", r"\1\2"),
    )
)
ROMANIZED_MIN_LENGTH = 5
"""Letters a word needs before its romanization counts: "Goya" is not "Goa"."""


@lru_cache(maxsize=65536)
def romanized(word: str) -> str:
    """``word`` with the letters romanizations disagree on rewritten to one spelling.

    >>> romanized("tchaikowsky") == romanized("chaikovsky") == romanized("tchaikovskii")
    True
    >>> romanized("mahler") == romanized("mailer")
    False
    """
    for pattern, replacement in _ROMANIZATION:
        word = pattern.sub(replacement, word)
    return word


_DIGIT = re.compile(r"\d")


def make_token(text: str, linked: bool = False) -> Token:
    has_digit = _DIGIT.search(text) is not None
    return Token(text, has_digit, linked, word_variants().get(text, text))


@dataclass(frozen=True, slots=True)
class Prepared:
    """An answer or a form ready for comparison."""

    literal: str  # normalized with leading articles kept
    tokens: tuple[Token, ...]
    joined: Token  # all canonical tokens run together: "space walk" -> "spacewalk"
    essential: frozenset[int]  # every token index but middle initials ("Ulysses S. Grant")
    letters: int  # characters of the canonical tokens, spaces left out

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


@lru_cache(maxsize=16384)
def prepare(text: str) -> Prepared:
    """Canonical tokens of ``text`` (cached: answer lines repeat their forms)."""
    words = split_words(text)
    literal = " ".join(word for word, _ in words)
    while len(words) > 1 and words[0][0] in ARTICLES:
        words.pop(0)
    if words:
        words[0] = (words[0][0], False)
    words = _expand_world_wars(words)
    words = _merge_numbers([(canonical(w, i), linked) for i, (w, linked) in enumerate(words)])
    return prepared_from(literal, [make_token(w, linked) for w, linked in _regnal(words)])


_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def _regnal(words: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``Louis the Fourteenth`` -> ``louis 14``, as ``Louis XIV`` is."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(words):
        m = _ORDINAL_DIGITS.match(words[i + 1][0]) if i + 1 < len(words) else None
        if out and words[i][0] == "the" and m:
            out.append((m.group(1), False))
            i += 2
        else:
            out.append(words[i])
            i += 1
    return out


def prepared_from(literal: str, toks: list[Token]) -> Prepared:
    """A :class:`Prepared` from tokens already canonical (derived forms are built this way)."""
    joined = "".join(t.text for t in toks)
    n = len(toks)
    return Prepared(
        literal=literal,
        tokens=tuple(toks),
        joined=make_token(joined),
        letters=len(joined),
        essential=frozenset(
            i
            for i, t in enumerate(toks)
            if not (0 < i < n - 1 and len(t.text) == 1 and t.text.isalpha())
        ),
    )


@lru_cache(maxsize=1)
def word_variants() -> dict[str, str]:
    """One-word ``same`` groups as a map from every member to the group's first member."""
    variants: dict[str, str] = {}
    for group in equivalence_groups():
        words = [tokens(form, drop_articles=False) for form in group.forms]
        if group.relation != "same" or any(len(w) != 1 for w in words):
            continue
        for (word,) in words[1:]:
            variants[word] = words[0][0]
    return variants
