"""Quizbowl answer lines: parse them, and judge a typed answer against one.

The judge only *suggests* a ruling; the moderator decides. It is built to be conservative: a
wrong ACCEPT costs a team points silently, while a wrong REJECT or PROMPT is seen and overruled.

Parsing (:func:`parse_answer_line`)
-----------------------------------
1. ``<b>``, ``<u>``, ``<strong>`` and ``<ins>`` mark required parts; every other tag is dropped;
   HTML entities are decoded; curly quotes become straight ones.
2. Top-level ``[...]`` and ``(...)`` groups are cut out of the main text. A group whose first
   clause starts with a directive word (or, accept, prompt, anti-prompt, reject, do not ...) is
   a *directive group*. Any other group is *optional text* (``Frédéric (François) Chopin``,
   ``(tuned) mass dampers``): forms are generated both without it and with it. A long trailing
   non-directive parenthetical (more than four words, or containing ``.`` or ``:``) is an editor's
   note and is dropped; a trailing non-directive ``[...]`` group is read as alternatives.
3. The main text is split on the word ``or`` into alternatives; the first one is ``main``.
4. Directive groups are split into clauses on ``;``. A clause's leading words give its directive:
   ``do not accept or prompt on`` / ``do not accept`` / ``do not prompt on`` / ``reject`` ->
   REJECT; ``anti-prompt (on)`` -> ACCEPT (the player is asked to be more specific, but the answer
   is right); ``prompt (on)`` -> PROMPT; ``accept`` / ``also accept`` / ``or`` / nothing -> ACCEPT.
   Whole-clause flags: ``prompt on partial (answers)`` -> ``prompt_on_partial``;
   ``accept either (underlined part)`` / ``accept any underlined part`` -> ``accept_either``;
   ``accept equivalents`` -> ``accept_equivalents`` (recorded only: the judge cannot know them);
   ``accept (other) word forms`` -> ``accept_word_forms``; an ``anti-prompt`` clause also sets
   ``anti_prompt``.
   A directed prompt (``prompt on X by asking "which one?"``, ``... with "which one?"``) keeps
   the quoted question. A clause lists answers separated by ``or`` and commas (outside quotes);
   trailing qualifiers (``before "X" is read``, ``until ...``, ``after it is read``, ``alone``)
   are cut off, surrounding quotes removed.
5. With ``accept_either``, each required part of the main answer becomes an accept form; when the
   main answer has a single required part, it is split on ``and`` / ``&`` / commas instead
   (``<b>Romeo and Juliet</b>`` -> ``Romeo``, ``Juliet``); when it has none (the underlining was
   lost, as in plain-text packets), it is split on ``and`` or else into words (``Lennie Small``
   -> ``Lennie``, ``Small``). ``accept ... in either order`` (flag ``accept_either_order``) adds
   ``Y and X`` for every accept form ``X and Y``.

Normalization (:func:`normalize`)
---------------------------------
HTML entities decoded; casefold; ``ø æ œ ł đ ð þ ı`` spelled out; NFKD with combining marks
removed (repeated to a fixed point, so ``Dvořák`` -> ``dvorak``); ``&`` -> ``and``; apostrophes
deleted (``40's`` -> ``40s``); every other non-word character -> space; runs of single letters
joined (``U. S.`` and ``U.S.`` -> ``us``); leading ``the`` / ``a`` / ``an`` dropped unless nothing
else is left; spaces collapsed. The function is idempotent.

For comparison each token is then *canonicalized*: number words and ordinals become digits
(``three`` -> ``3``, ``twenty-five`` -> ``25``, ``three hundred`` -> ``300``, ``second`` ->
``2nd``); roman numerals ``i``..``xxxix`` after the first word become digits (``World War II`` ->
``world war 2``); ``dr st mt ft jr sr vs`` are spelled out; ``WWII`` / ``WW2`` become ``world war
2``; a British ``-our`` ending of a word of six letters or more becomes ``-or`` (``honour`` =
``honor``). Tokens are stemmed with the Snowball English stemmer.

Judging (:func:`judge`)
-----------------------
Two tokens *match exactly* when their canonical forms are equal, or when their stems are equal and
what remains after their common prefix is an inflection (``'' s es ies y e ed d a on um is``:
``Romanovs``/``Romanov``, ``countries``/``country``; this keeps the stemmer from merging
``universe`` with ``university``); with ``accept_word_forms`` equal stems suffice. They *match
with tolerance* when they may also differ by a few typing errors: both contain no digit, they
start with the same letter, their Damerau-Levenshtein distance (rapidfuzz) is at most
``floor(len(reference token) / strictness)``, and the typo spares the ending, which often carries
the meaning: the last three letters agree, or one word is the other plus a final letter, or the
only error is one swap of neighbouring letters. With the default ``strictness=7`` a word needs
seven letters to allow one error (``Neitzsche``, ``Nietzche`` -> ``Nietzsche``; ``Shakespear``,
``Frankenstien``), so never ``Ra``/``Re``, ``Iran``/``Iraq``, ``Manet``/``Monet``,
``photon``/``proton`` or ``Athens``/``Athena``; the ending rule keeps ``chloride`` from
``chlorine``, ``benzine`` from ``benzene`` and ``hungry`` from ``Hungary``; the first-letter rule
keeps ``Russia`` from ``Prussia``. Numbers only ever match exactly (``1940s`` vs ``1950s``).

A given answer *matches a form* when its tokens match the form's tokens one to one, in order,
except that a middle initial of the form may be left out (``Ulysses Grant`` for ``Ulysses S.
Grant``) and that, in an answer of two or more words, a word of one to three letters may stand
for the initials of as many consecutive form words other than the last (``J. S. Bach``, ``U.S.
Grant``, ``US Navy``); or when both, run together without spaces, match exactly as one token
(``space walk`` = ``spacewalks``). It *matches a form's required part* when its tokens match, in
order, a subsequence of the form's tokens that contains every required token: ``Mendel`` and
``Gregor Mendel`` both match ``Gregor <b>Mendel</b>``, ``Gregor`` does not, and no answer with
words outside the form ever matches. With ``accept_either`` any one required part is enough
(``Lord Kelvin``).

The ruling is the first of these that applies:

1. Empty answer (after normalization) -> REJECT.
2. The answer equals a reject form after normalization and canonicalization -> REJECT. The one
   exception: it also equals an accept form letter for letter *before* leading articles are
   dropped (``[do not accept "The Invisible Man"]`` rejects ``The Invisible Man`` but not
   ``Invisible Man``).
3. Exact tier, articles kept: the answer equals an accept form -> ACCEPT, else a prompt form ->
   PROMPT (so ``whale`` is prompted in ``[or The Whale; prompt on whale]``).
4. Exact tier: the answer matches (exactly) an accept form or its required part -> ACCEPT; else a
   prompt form or its required part -> PROMPT with that rule's question.
5. Tolerant tier: the answer matches a reject form with typo tolerance -> REJECT (a misspelt
   rejected answer stays rejected; reject forms that are only an article away from an accept
   form are skipped here); else the same as 4 with typo tolerance.
6. ``prompt_on_partial``: the answer exactly matches, in order, a strict subsequence of an accept
   form's words (not only filler words like "of") -> PROMPT.
7. Otherwise -> REJECT.

The judge never accepts by subset: ``George Washington`` is not ``George Washington Carver`` and
``George Washington Carver`` is not ``George Washington``. There is deliberately no last-name
rule: without knowing that a form is a person's name it would accept ``Africa`` for ``South
Africa``. ``Washington`` is accepted for ``George <b>Washington</b>`` (a marked required part),
and prompted for an unmarked ``George Washington [prompt on partial answer]``.

``Judgement.score`` is rapidfuzz's normalized Indel similarity (``fuzz.ratio`` / 100) between the
normalized answer and the matched form (or the matched words of it); on a REJECT without a
matching reject form it is the best similarity to any accept form, for display.
"""

from __future__ import annotations

import html
import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

import snowballstemmer
from rapidfuzz import fuzz
from rapidfuzz.distance import DamerauLevenshtein

__all__ = [
    "DEFAULT_STRICTNESS",
    "AnswerLine",
    "Directive",
    "Judgement",
    "PromptRule",
    "judge",
    "normalize",
    "parse_answer_line",
]

DEFAULT_STRICTNESS = 7.0
"""Characters of a reference word per allowed typing error (higher is stricter)."""


class Directive(StrEnum):
    """A ruling: accept, prompt (ask for more) or reject."""

    ACCEPT = "accept"
    PROMPT = "prompt"
    REJECT = "reject"


@dataclass(frozen=True)
class PromptRule:
    """An answer to prompt on, and the question to ask when the prompt is directed."""

    answer: str
    question: str | None  # a directed prompt's question ("which one?"), else None
    required: tuple[str, ...] = ()  # the <b>/<u> parts of ``answer``, if marked


@dataclass(frozen=True)
class AnswerLine:
    """A parsed answer line; every form is kept as written, tags stripped."""

    raw: str
    main: str  # main answer, tags stripped
    required: tuple[str, ...]  # the <b>/<u> required parts of the main answer (may be empty)
    accept: tuple[str, ...]  # all acceptable forms: main first, then alternatives
    prompt: tuple[PromptRule, ...]
    reject: tuple[str, ...]
    flags: frozenset[str]
    accept_required: tuple[tuple[str, ...], ...] = ()  # required parts of each ``accept`` form


@dataclass(frozen=True)
class Judgement:
    """The judge's suggested ruling for one answer."""

    directive: Directive
    prompt_question: str | None  # the question to ask on a directed prompt, else None
    matched: str | None  # which form matched (for display)
    score: float  # similarity in [0, 1] of the best match


# ---------------------------------------------------------------------------------------------
# Normalization

_ARTICLES = frozenset({"the", "a", "an"})
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


def _fold(text: str) -> str:
    """Casefold and strip accents, repeated until nothing changes (NFKD can expose new cases)."""
    for _ in range(5):
        folded = unicodedata.normalize("NFKD", text.casefold().translate(_LETTERS))
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
        if folded == text:
            break
        text = folded
    return text


def _tokens(text: str, *, drop_articles: bool) -> list[str]:
    # Apostrophes go before folding (NFKD turns "´" into a space) and after (it makes "＇" "'").
    text = _APOSTROPHES.sub("", _fold(_APOSTROPHES.sub("", html.unescape(text))))
    text = text.replace("&", " and ")
    words = _NON_WORD.sub(" ", text).split()
    joined: list[str] = []
    in_run = False  # the last token is built from single letters: "u s" -> "us"
    for word in words:
        single = len(word) == 1 and word.isalpha()
        if single and in_run:
            joined[-1] += word
        else:
            joined.append(word)
            in_run = single
    if drop_articles:
        while len(joined) > 1 and joined[0] in _ARTICLES:
            joined.pop(0)
    return joined


def normalize(text: str) -> str:
    """Normalize for comparison: accents, case, quotes, punctuation, leading articles, spaces.

    >>> normalize("The  Dvořák ‘New World’ Symphony!")
    'dvorak new world symphony'
    """
    return " ".join(_tokens(text, drop_articles=True))


# ---------------------------------------------------------------------------------------------
# Tokens for comparison

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
_TENS_DIGITS = frozenset(str(20 + 10 * i) for i in range(len(_TENS)))
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
}
_ROMAN = re.compile(r"^(x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
_INFLECTIONS = frozenset({"", "s", "es", "ies", "y", "e", "ed", "d", "a", "on", "um", "is"})
_FILLER = frozenset({"of", "the", "a", "an", "and", "or", "in", "on", "to", "for", "de", "la"})


def _roman_value(token: str) -> int | None:
    if not token or not _ROMAN.match(token):
        return None
    total = 0
    for char, nxt in zip(token, [*token[1:], ""], strict=True):
        value = _ROMAN_VALUES[char]
        total += -value if nxt and _ROMAN_VALUES[nxt] > value else value
    return total


def _canonical(token: str, position: int) -> str:
    if token in _NUMBER_WORDS:
        return _NUMBER_WORDS[token]
    if token in _ORDINALS:
        return _ORDINALS[token]
    if token in _ABBREVIATIONS:
        return _ABBREVIATIONS[token]
    if position > 0:
        value = _roman_value(token)
        if value is not None:
            return str(value)
    if len(token) >= 6 and token.endswith("our"):  # British spelling: honour, colour, labour
        return token[:-3] + "or"
    return token


_WORLD_WAR = re.compile(r"^ww(\d|[iv]+)$")


def _expand_world_wars(words: list[str]) -> list[str]:
    """``WWII`` / ``WW2`` / ``WW II`` -> ``world war ii``: the one abbreviation quizbowl players
    use for nearly every answer line it appears in."""
    expanded: list[str] = []
    for word in words:
        m = _WORLD_WAR.match(word)
        if m:
            expanded += ["world", "war", m.group(1)]
        elif expanded and expanded[-1] == "ww" and _WORLD_WAR.match("ww" + word):
            expanded[-1:] = ["world", "war", word]
        else:
            expanded.append(word)
    return expanded


_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()  # a Snowball stemmer object keeps state between calls


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    if not token.isalpha():
        return token
    with _STEMMER_LOCK:
        return _STEMMER.stemWord(token)


@dataclass(frozen=True)
class _Token:
    text: str  # canonical form
    stem: str
    has_digit: bool


@dataclass(frozen=True)
class _Prepared:
    literal: str  # normalized with leading articles kept
    tokens: tuple[_Token, ...]
    joined: _Token  # all canonical tokens run together: "space walk" -> "spacewalk"
    essential: frozenset[int]  # every token index but middle initials ("Ulysses S. Grant")

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


@lru_cache(maxsize=8192)
def _prepare(text: str) -> _Prepared:
    words = _expand_world_wars(_tokens(text, drop_articles=True))
    tokens = tuple(
        _Token(canon, _stem(canon), any(c.isdigit() for c in canon))
        for canon in _merge_numbers([_canonical(w, i) for i, w in enumerate(words)])
    )
    joined = "".join(t.text for t in tokens)
    return _Prepared(
        literal=" ".join(_tokens(text, drop_articles=False)),
        tokens=tokens,
        joined=_Token(joined, _stem(joined), any(t.has_digit for t in tokens)),
        essential=frozenset(
            i
            for i, t in enumerate(tokens)
            if not (0 < i < len(tokens) - 1 and len(t.text) == 1 and t.text.isalpha())
        ),
    )


def _merge_numbers(words: list[str]) -> list[str]:
    """Spelled-out compound numbers as digits: ``3 100`` -> ``300``, ``20 5`` -> ``25``."""
    merged: list[str] = []
    for word in words:
        last = merged[-1] if merged else ""
        if last.isdecimal() and word in ("100", "1000") and 0 < int(last) < 100:
            merged[-1] = str(int(last) * int(word))
        elif last in _TENS_DIGITS and len(word) == 1 and word in "123456789":
            merged[-1] = str(int(last) + int(word))
        else:
            merged.append(word)
    return merged


def _common_prefix_length(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _tokens_match(
    given: _Token, ref: _Token, *, strictness: float | None, word_forms: bool
) -> bool:
    """Whether two tokens match; ``strictness`` None means the exact tier (no typo tolerance)."""
    if given.text == ref.text:
        return True
    if given.has_digit or ref.has_digit:
        return False
    if given.stem == ref.stem:
        if word_forms:
            return True
        k = _common_prefix_length(given.text, ref.text)
        if given.text[k:] in _INFLECTIONS and ref.text[k:] in _INFLECTIONS:
            return True
    if strictness is None or given.text[:1] != ref.text[:1]:
        return False
    allowed = math.floor(len(ref.text) / strictness)
    if allowed < 1 or not _same_ending(given.text, ref.text):
        return False
    return DamerauLevenshtein.distance(given.text, ref.text, score_cutoff=allowed) <= allowed


def _same_ending(a: str, b: str) -> bool:
    """Whether a typo between ``a`` and ``b`` spares the ending, which often carries the meaning
    (chloride/chlorine, ethane/ethene, Athens/Athena, Hungary/hungry): the last three letters
    agree, or one word is the other plus a final letter (Shakespear), or the words differ by one
    swap of neighbouring letters (Frankenstien)."""
    if a[-3:] == b[-3:]:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(long_) == len(short) + 1 and long_.startswith(short):
        return True
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(diff) != 2 or diff[1] != diff[0] + 1:
        return False
    i, j = diff
    return a[i] == b[j] and a[j] == b[i]


def _initials(token: _Token, form: Sequence[_Token], j: int) -> int:
    """How many words of ``form`` from ``j`` the ``token`` abbreviates (``js`` for ``Johann
    Sebastian``), 0 if none. The form's last word is never abbreviated, and neither is a filler
    word ("a" is not the initial of "and")."""
    letters = token.text
    k = len(letters)
    if not (1 <= k <= 3 and letters.isalpha()) or j + k >= len(form):
        return 0
    words = [form[j + x].text for x in range(k)]
    if any(word in _FILLER for word in words):
        return 0
    return k if all(word[:1] == letters[x] for x, word in enumerate(words)) else 0


def _align(
    given: Sequence[_Token],
    form: Sequence[_Token],
    must: frozenset[int],
    *,
    strictness: float | None,
    word_forms: bool,
    initials: bool = True,
) -> bool:
    """Whether ``given`` matches, in order, a subsequence of ``form`` holding every ``must`` index.

    ``ok[i][j]``: ``given[i:]`` can be matched inside ``form[j:]``. With ``initials``, a short
    token of a several-word answer may stand for the first letters of consecutive form words.
    """
    n, m = len(given), len(form)
    if n == 0 or n > m:
        return False
    ok = [[False] * (m + 1) for _ in range(n + 1)]
    ok[n][m] = True
    for j in range(m - 1, -1, -1):
        ok[n][j] = ok[n][j + 1] and j not in must
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            skip = j not in must and ok[i][j + 1]
            take = ok[i + 1][j + 1] and _tokens_match(
                given[i], form[j], strictness=strictness, word_forms=word_forms
            )
            k = _initials(given[i], form, j) if initials and n > 1 and not (skip or take) else 0
            ok[i][j] = skip or take or (k > 0 and ok[i + 1][j + k])
    return ok[0][0]


def _required_indices(form: _Prepared, required: Iterable[str]) -> frozenset[int] | None:
    """Indices of the form's tokens that the required parts cover; None if not a strict part."""
    wanted = [t.text for part in required for t in _prepare(part).tokens]
    if not wanted:
        return None
    indices: list[int] = []
    j = 0
    for word in wanted:  # leftmost embedding of the required words in the form's words
        while j < len(form.tokens) and form.tokens[j].text != word:
            j += 1
        if j == len(form.tokens):
            return None
        indices.append(j)
        j += 1
    if len(indices) == len(form.tokens):
        return None
    return frozenset(indices)


# ---------------------------------------------------------------------------------------------
# Parsing

_OPEN, _CLOSE = "\x02", "\x03"  # required-part markers while parsing
_PLACEHOLDER = "\x00"  # brackets a group's number where the group was cut out
_REQUIRED_TAG = re.compile(r"<\s*(/?)\s*(?:b|u|strong|ins)\s*(?:\s[^<>]*)?>", re.IGNORECASE)
_OTHER_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][^<>]*>")
_QUOTES = str.maketrans(
    {"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "’": "'", "‘": "'", "{": "[", "}": "]"}
)

_DIRECTIVE_START = re.compile(
    r"^\s*(?:or\b|accept|also\b|but\b|prompt|anti-?\s?prompt|reject|do\s+not|don'?t|not\s+"
    r"accept|allow\b)",
    re.IGNORECASE,
)
_CLAUSE_RULES: tuple[tuple[re.Pattern[str], Directive], ...] = tuple(
    (re.compile(r"^\s*(?:" + pattern + r")\b[\s:,]*", re.IGNORECASE), directive)
    for pattern, directive in (
        (r"(?:do\s+not|don'?t)\s+(?:accept|allow)\s+or\s+prompt(?:\s+on)?", Directive.REJECT),
        (r"(?:do\s+not|don'?t)\s+(?:accept|allow|prompt)(?:\s+on)?", Directive.REJECT),
        (r"not\s+accept(?:ing)?", Directive.REJECT),
        (r"(?:but\s+)?reject", Directive.REJECT),
        (r"(?:but\s+|also\s+|and\s+)?anti-?\s?prompt(?:\s+on)?", Directive.ACCEPT),
        (r"(?:but\s+|also\s+|and\s+)?prompt(?:\s+on)?", Directive.PROMPT),
        (r"(?:but\s+|also\s+|and\s+)?(?:accept|allow)", Directive.ACCEPT),
        (r"or|also", Directive.ACCEPT),
    )
)
_ANTI_PROMPT = re.compile(r"^\s*(?:but\s+|also\s+|and\s+)?anti-?\s?prompt", re.IGNORECASE)
_FLAG_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), flag)
    for pattern, flag in (
        (r"^\s*prompt\s+(?:on\s+)?(?:a\s+|any\s+)?partial\b", "prompt_on_partial"),
        (
            r"^\s*(?:accept|allow)\s+(?:either|any|both)(?:\s+of\s+the)?"
            r"(?:\s+(?:underlined|bolded|required|two))?"
            r"(?:\s+(?:parts?|portions?|names?|answers?|ones?|halves|half|words?))?"
            r"(?:\s+(?:alone|by\s+itself|individually|separately))?\s*$",
            "accept_either",
        ),
        (
            r"^\s*(?:or|accept|allow)?\s*(?:any\s+|other\s+|all\s+)?(?:reasonable\s+|clear\s+)?"
            r"equivalent",
            "accept_equivalents",
        ),
        (
            r"^\s*(?:or|accept|allow)?\s*(?:any\s+|other\s+|all\s+)?(?:other\s+)?"
            r"(?:word\s+forms?|forms?\s+of\s+the\s+word|adjectival\s+forms?)",
            "accept_word_forms",
        ),
        (r"^\s*(?:accept|allow)?\b.*\bin\s+(?:either|any)\s+order\b", "accept_either_order"),
    )
)
_DIRECTED = re.compile(
    r"(?:,?\s*\b(?:by\s+asking|and\s+ask(?:ing)?|asking)\b[\s,:]*(?:from\s+)?(?P<a>.*)$)"
    r"|(?:\s+with\s+(?P<b>[\"'].*)$)",
    re.IGNORECASE | re.DOTALL,
)
_QUOTED = re.compile(r"\"([^\"]+)\"|(?<!\w)'([^']+)'(?!\w)")
_QUALIFIERS = (
    re.compile(r"\s+(?:before|until)\b.*$", re.IGNORECASE | re.DOTALL),
    re.compile(
        r"\s+after\s+(?:it|they|that|mention|[\"']|the\s+word|\S+\s+(?:is|are)\s+)\b.*$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(r"\s+(?:alone|by\s+itself|by\s+themselves|on\s+its\s+own)\s*$", re.IGNORECASE),
)
_OR_SPLIT = re.compile(r"\s*,?\s+or\s+|\s*,\s*", re.IGNORECASE)
_MAIN_OR_SPLIT = re.compile(r"\s*,?\s+or,?\s+", re.IGNORECASE)
_EITHER_SPLIT = re.compile(r"\s+(?:and|&)\s+|\s*,\s*|\s*/\s*", re.IGNORECASE)
_OPTIONAL_GROUP = re.compile(r"\(([^()]*)\)")


@dataclass(frozen=True)
class _Group:
    content: str
    bracket: str  # "[" or "("
    trailing: bool  # nothing but spaces/punctuation follows it


def _mark_required(text: str) -> str:
    for reserved in (_OPEN, _CLOSE, _PLACEHOLDER):  # the parser's own marks, never the writer's
        text = text.replace(reserved, " ")
    text = _REQUIRED_TAG.sub(lambda m: _CLOSE if m.group(1) else _OPEN, text)
    text = _OTHER_TAG.sub("", text)
    text = html.unescape(text).translate(_QUOTES)
    return text.replace("\xa0", " ")


def _split_groups(text: str) -> tuple[str, list[_Group]]:
    """Cut top-level bracket groups out of ``text``.

    Returns the main text, with a placeholder ``\\x00<n>\\x00`` where group ``n`` was (so optional
    words keep their place), and the groups.
    """
    closers = {"[": "]", "(": ")"}
    main: list[str] = []
    groups: list[tuple[str, str, int]] = []  # (content, bracket, end offset)
    i = 0
    while i < len(text):
        char = text[i]
        if char in closers:
            depth, j = 0, i
            while j < len(text):
                if text[j] in "[(":
                    depth += 1
                elif text[j] in "])":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            groups.append((text[i + 1 : j], char, j + 1))
            main.append(f"{_PLACEHOLDER}{len(groups) - 1}{_PLACEHOLDER}")
            i = j + 1
        elif char in "])":
            i += 1
        else:
            main.append(char)
            i += 1
    parsed = [
        _Group(content, bracket, not re.search(r"\w", text[end:]))
        for content, bracket, end in groups
    ]
    return "".join(main), parsed


def _strip_markers(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def _clean_form(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"(?<=\w\w)\.$", "", text.strip(" ,;:")).strip()
    text = re.sub(r"^[\"']+|[\"']+$", "", _strip_markers(text)).strip()
    return text


def _required_runs(text: str) -> tuple[str, ...]:
    """The marked runs of ``text``, each widened to whole words (``<b>fir</b>es`` -> ``fires``)."""
    plain: list[str] = []
    mask: list[bool] = []
    depth = 0
    for char in text:
        if char == _OPEN:
            depth += 1
        elif char == _CLOSE:
            depth = max(0, depth - 1)
        else:
            plain.append(char)
            mask.append(depth > 0)
    line = "".join(plain)
    for word in re.finditer(r"[\w'’-]+", line):
        if any(mask[word.start() : word.end()]):
            mask[word.start() : word.end()] = [True] * (word.end() - word.start())
    runs: list[str] = []
    current: list[str] = []
    for char, marked in zip(line, mask, strict=True):
        if marked:
            current.append(char)
        elif current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    cleaned = (_clean_form(run) for run in runs)
    return tuple(run for run in cleaned if re.search(r"\w", run))


def _expand_optional(text: str) -> list[str]:
    """``A (B) C`` -> [``A C``, ``A B C``]: parenthesized words that may be left out."""
    variants = [text]
    for _ in range(3):  # at most three optional groups per form
        expanded: list[str] = []
        changed = False
        for variant in variants:
            m = _OPTIONAL_GROUP.search(variant)
            if m is None or _DIRECTIVE_START.match(_strip_markers(m.group(1))):
                expanded.append(variant)
                continue
            changed = True
            before, after = variant[: m.start()], variant[m.end() :]
            expanded.append(before + " " + after)
            expanded.append(before + " " + m.group(1) + " " + after)
        variants = expanded
        if not changed:
            break
    return [re.sub(r"[()]", " ", v) for v in variants]


def _split_outside_quotes(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split on ``pattern`` except inside double quotes."""
    pieces: list[str] = []
    start = 0
    quoted_spans = [m.span() for m in re.finditer(r'"[^"]*"', text)]
    for m in pattern.finditer(text):
        if any(a < m.start() < b for a, b in quoted_spans):
            continue
        pieces.append(text[start : m.start()])
        start = m.end()
    pieces.append(text[start:])
    return pieces


def _clause_answers(body: str) -> list[str]:
    answers: list[str] = []
    for piece in _split_outside_quotes(body, _OR_SPLIT):
        for qualifier in _QUALIFIERS:
            piece = qualifier.sub("", piece)
        if re.match(r"^\s*(?:but|and)\s+(?:prompt|accept|reject|not)\b", _strip_markers(piece)):
            continue
        if re.search(r"\w", _strip_markers(piece)):
            answers.append(piece)
    return answers


@dataclass
class _Builder:
    accept: list[tuple[str, tuple[str, ...]]]
    prompt: list[PromptRule]
    reject: list[str]
    flags: set[str]

    def add_accept(self, marked: str) -> None:
        for variant in _expand_optional(marked):
            text = _clean_form(variant)
            if text and all(text != existing for existing, _ in self.accept):
                self.accept.append((text, _required_runs(variant)))

    def add_prompt(self, marked: str, question: str | None) -> None:
        for variant in _expand_optional(marked):
            text = _clean_form(variant)
            rule = PromptRule(text, question, _required_runs(variant))
            if text and rule not in self.prompt:
                self.prompt.append(rule)

    def add_reject(self, marked: str) -> None:
        for variant in _expand_optional(marked):
            text = _clean_form(variant)
            if text and text not in self.reject:
                self.reject.append(text)


def _parse_clause(clause: str, builder: _Builder) -> None:
    plain = _strip_markers(clause)
    for pattern, flag in _FLAG_RULES:
        if pattern.match(plain):
            builder.flags.add(flag)
            return
    directive = Directive.ACCEPT
    body = clause
    for pattern, rule_directive in _CLAUSE_RULES:
        m = pattern.match(plain)
        if m:
            directive = rule_directive
            body = _drop_prefix(clause, m.end())
            if _ANTI_PROMPT.match(plain):
                builder.flags.add("anti_prompt")
            break
    if directive is Directive.ACCEPT:  # "accept either Mandela or Madiba"
        body = re.sub(r"^\s*(?:either|both)\s+(?!underlined|part)", "", body, flags=re.IGNORECASE)
    question: str | None = None
    if directive is Directive.PROMPT:
        m = _DIRECTED.search(body)
        if m:
            asked = (m.group("a") if m.group("a") is not None else m.group("b")) or ""
            quoted = _QUOTED.search(_strip_markers(asked))
            question = (quoted.group(1) or quoted.group(2)) if quoted else _strip_markers(asked)
            question = question.strip(" ,;:") or None
            body = body[: m.start()]
    for answer in _clause_answers(body):
        if directive is Directive.ACCEPT:
            builder.add_accept(answer)
        elif directive is Directive.PROMPT:
            builder.add_prompt(answer, question)
        else:
            builder.add_reject(answer)


def _drop_prefix(marked: str, length: int) -> str:
    """Drop the first ``length`` characters of ``marked`` not counting the markers."""
    seen = 0
    for index, char in enumerate(marked):
        if seen >= length:
            return marked[index:]
        if char not in (_OPEN, _CLOSE):
            seen += 1
    return ""


def _is_directive_group(group: _Group) -> bool:
    first = _strip_markers(group.content).split(";")[0]
    if _DIRECTIVE_START.match(first):
        return True
    return group.bracket == "[" and group.trailing


def _is_note(group: _Group) -> bool:
    plain = _strip_markers(group.content)
    return group.trailing and (len(plain.split()) > 4 or bool(re.search(r"[.:]", plain)))


def parse_answer_line(line: str) -> AnswerLine:
    """Parse a quizbowl answer line into accept / prompt / reject forms and flags.

    >>> parse_answer_line("<b>Moby-Dick</b> [or The Whale; prompt on whale]").accept
    ('Moby-Dick', 'The Whale')
    """
    return _parse_cached(line)


@lru_cache(maxsize=4096)
def _parse_cached(line: str) -> AnswerLine:
    marked = _mark_required(line)
    main_text, groups = _split_groups(marked)
    directive_groups: list[_Group] = []

    def restore(m: re.Match[str]) -> str:
        group = groups[int(m.group(1))]
        if _is_directive_group(group):
            directive_groups.append(group)
            return " "
        if _is_note(group):
            return " "
        return f"({group.content})"

    main_text = re.sub(f"{_PLACEHOLDER}(\\d+){_PLACEHOLDER}", restore, main_text)
    builder = _Builder([], [], [], set())
    alternatives = [
        alt
        for alt in _split_outside_quotes(main_text, _MAIN_OR_SPLIT)
        if re.search(r"\w", _strip_markers(alt))
    ]
    for alternative in alternatives:
        builder.add_accept(alternative)
    main_marked = alternatives[0] if alternatives else ""
    main_variants = _expand_optional(main_marked)
    main = _clean_form(main_variants[0])
    required = _required_runs(main_variants[0])

    for group in directive_groups:
        for clause in _split_outside_quotes(group.content, re.compile(r";")):
            if re.search(r"\w", clause):
                _parse_clause(clause, builder)

    if "accept_either" in builder.flags and main:
        if len(required) >= 2:
            parts: list[str] = list(required)
        else:
            source = required[0] if required else main
            parts = [p for p in _EITHER_SPLIT.split(source) if re.search(r"\w", p)]
            if len(parts) < 2 and not required:  # the underlining was lost: "Lennie Small"
                parts = [w for w in main.split() if normalize(w) not in _FILLER]
            if len(parts) < 2:
                parts = []
        for part in parts:
            builder.add_accept(part)
    if "accept_either_order" in builder.flags:
        for form, _ in list(builder.accept):
            halves = re.split(r"\s+(?:and|&)\s+", form, maxsplit=1)
            if len(halves) == 2:
                builder.add_accept(f"{halves[1]} and {halves[0]}")

    return AnswerLine(
        raw=line,
        main=main,
        required=required,
        accept=tuple(text for text, _ in builder.accept),
        prompt=tuple(builder.prompt),
        reject=tuple(builder.reject),
        flags=frozenset(builder.flags),
        accept_required=tuple(req for _, req in builder.accept),
    )


# ---------------------------------------------------------------------------------------------
# Judging


def _score(given: _Prepared, target: str) -> float:
    return fuzz.ratio(given.text, target) / 100.0


def _match_form(
    given: _Prepared,
    form: str,
    required: tuple[str, ...],
    *,
    strictness: float | None,
    word_forms: bool,
    either: bool = False,
) -> str | None:
    """The matched text of ``form`` (whole or required part) if ``given`` matches it, else None."""
    prepared = _prepare(form)
    if not prepared.tokens:
        return None
    if _tokens_match(given.joined, prepared.joined, strictness=None, word_forms=word_forms):
        return prepared.text
    if _align(
        given.tokens,
        prepared.tokens,
        prepared.essential,
        strictness=strictness,
        word_forms=word_forms,
    ):
        return prepared.text
    # With "accept either", each required part stands alone ("Lord Kelvin").
    alternatives = [required, *((part,) for part in required)] if either else [required]
    for parts in alternatives:
        must = _required_indices(prepared, parts)
        if must is not None and _align(
            given.tokens, prepared.tokens, must, strictness=strictness, word_forms=word_forms
        ):
            return " ".join(prepared.tokens[i].text for i in sorted(must))
    return None


def judge(
    given: str, answer_line: str | AnswerLine, *, strictness: float = DEFAULT_STRICTNESS
) -> Judgement:
    """Suggest a ruling for ``given`` against ``answer_line``; see the module docstring.

    ``strictness`` is the number of letters of a reference word per allowed typing error; it
    must be positive (``math.inf`` turns typo tolerance off).

    >>> judge("Neitzsche", "<b>Friedrich Nietzsche</b> [accept Nietzsche]").directive
    <Directive.ACCEPT: 'accept'>
    """
    if not strictness > 0:
        raise ValueError(
            f"strictness must be > 0 (math.inf disables typo tolerance), got {strictness!r}"
        )
    line = answer_line if isinstance(answer_line, AnswerLine) else parse_answer_line(answer_line)
    answer = _prepare(given)
    if not answer.tokens:
        return Judgement(Directive.REJECT, None, None, 0.0)
    word_forms = "accept_word_forms" in line.flags
    either = "accept_either" in line.flags
    accept_required = line.accept_required or tuple(() for _ in line.accept)

    # 2. Reject forms win, unless the answer is letter for letter an accept form.
    literal_accepts = {_prepare(form).literal for form in line.accept}
    for form in line.reject:
        if _prepare(form).text == answer.text and answer.literal not in literal_accepts:
            return Judgement(Directive.REJECT, None, form, 1.0)

    # 3. Literal equality, leading articles kept.
    for form in line.accept:
        if _prepare(form).literal == answer.literal:
            return Judgement(Directive.ACCEPT, None, form, 1.0)
    for rule in line.prompt:
        if _prepare(rule.answer).literal == answer.literal:
            return Judgement(Directive.PROMPT, rule.question, rule.answer, 1.0)

    # 4-5. Exact tier, then tolerant tier. A misspelt reject form is still rejected ("Australa"),
    # unless it is only an article away from an accept form ("The Invisible Man").
    accept_texts = {_prepare(form).text for form in line.accept}
    tolerant_rejects = [form for form in line.reject if _prepare(form).text not in accept_texts]
    for tier in (None, strictness):
        if tier is not None:
            for form in tolerant_rejects:
                if _match_form(answer, form, (), strictness=tier, word_forms=False):
                    return Judgement(
                        Directive.REJECT, None, form, _score(answer, _prepare(form).text)
                    )
        for form, required in zip(line.accept, accept_required, strict=False):
            target = _match_form(
                answer, form, required, strictness=tier, word_forms=word_forms, either=either
            )
            if target is not None:
                return Judgement(Directive.ACCEPT, None, form, _score(answer, target))
        for rule in line.prompt:
            target = _match_form(
                answer, rule.answer, rule.required, strictness=tier, word_forms=word_forms
            )
            if target is not None:
                return Judgement(
                    Directive.PROMPT, rule.question, rule.answer, _score(answer, target)
                )

    # 6. A strict part of an accept form, when the line prompts on partial answers.
    if "prompt_on_partial" in line.flags and any(t.text not in _FILLER for t in answer.tokens):
        for form in line.accept:
            prepared = _prepare(form)
            if len(answer.tokens) < len(prepared.tokens) and _align(
                answer.tokens,
                prepared.tokens,
                frozenset(),
                strictness=None,
                word_forms=word_forms,
                initials=False,
            ):
                return Judgement(Directive.PROMPT, None, form, _score(answer, prepared.text))

    best = max((_score(answer, _prepare(form).text) for form in line.accept), default=0.0)
    return Judgement(Directive.REJECT, None, None, best)
