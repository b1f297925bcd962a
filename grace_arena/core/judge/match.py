"""Whether two tokens match, and whether an answer's tokens match a form's."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from rapidfuzz.distance import DamerauLevenshtein

from grace_arena.core.judge.text import (
    FILLER,
    ROMANIZED_MIN_LENGTH,
    SINGLE_ROMAN,
    Token,
    romanized,
)

# What may remain of two words after their common prefix when their stems agree: an
# inflection, not a derivation (this keeps the stemmer from merging "universe" with
# "university"). "ing" lets "testing" stand for "test" and "bonding" for "bond".
INFLECTIONS = frozenset({"", "s", "es", "ies", "y", "e", "ed", "d", "a", "on", "um", "is"})
INFLECTIONS |= {"ys"}  # a plural misspelt: "flys", "citys"
INFLECTIONS |= {"ing", "ings"}


def _common_prefix_length(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _inflection(rest: str, word: str, k: int) -> bool:
    """Whether ``rest`` (what follows ``word[:k]``) is an inflection, allowing a doubled
    consonant before it (``tunnelling``/``tunneling``, ``running``/``run``)."""
    if rest in INFLECTIONS:
        return True
    return len(rest) > 1 and k > 0 and rest[0] == word[k - 1] and rest[1:] in INFLECTIONS


_DERIVATIONS = ("isms", "ism", "ists", "ist", "ically", "ical", "ic", "ity", "ness", "ians", "ian")


def _word_form_base(word: str) -> str:
    """``word`` without derivational endings, for ``accept word forms``: ``romanticism``,
    ``romantic`` -> ``romant``; ``impressionist`` -> ``impression``."""
    changed = True
    while changed:
        changed = False
        for ending in _DERIVATIONS:
            if word.endswith(ending) and len(word) - len(ending) >= 4:
                word, changed = word[: -len(ending)], True
                break
    return word


def tokens_match(
    given: Token,
    ref: Token,
    *,
    strictness: float | None,
    word_forms: bool,
    in_long_answer: bool = False,
) -> bool:
    """Whether two tokens match; ``strictness`` None means the exact tier (no typo tolerance).

    With tolerance, a name may also be spelled in another romanization (:func:`romanized`);
    and a word of a long answer (``in_long_answer``) too short for a typo of its own may have a
    letter doubled or undoubled, or two neighbours swapped, a slip that keeps how it is said
    (``Things Fall Appart``); and a longer word's typo there may touch its ending if it is one
    vowel (``Battle of Gettysberg``, not ``potassium nitrite``)."""
    g, r = given.text, ref.text
    if g == r or given.variant == ref.variant:
        return True
    if given.has_digit or ref.has_digit:
        # A decade's first year or its digits without the s: "1960" for "1960s", "80" for "80s".
        if r.endswith("0s") and r[:-1] == g:
            return True
        # A lone roman letter for its value: "Type I error" is "Type 1 error".
        return SINGLE_ROMAN.get(g) == r or SINGLE_ROMAN.get(r) == g
    if word_forms and g[:2] == r[:2] and _word_form_base(g) == _word_form_base(r):
        return True
    # Snowball stems keep the first two letters, so words that differ there differ in stem.
    if g[:2] == r[:2] and given.stem == ref.stem:
        if word_forms:
            return True
        k = _common_prefix_length(g, r)
        if _inflection(g[k:], g, k) and _inflection(r[k:], r, k):
            return True
    if strictness is None:
        return False
    if g[:1] == r[:1]:
        allowed = math.floor(len(r) / strictness)
        if allowed >= 1:
            if _same_ending(g, r):
                if DamerauLevenshtein.distance(g, r, score_cutoff=allowed) <= allowed:
                    return True
            elif _one_sound(g, r) or (
                in_long_answer
                and DamerauLevenshtein.distance(g, r, score_cutoff=allowed) <= allowed
                and _vowel_slip(g, r)
            ):
                return True
        elif in_long_answer and len(r) >= 3 and (_doubling(g, r) or _swapped(g, r)):
            return True
    # Romanizations of one name differ in length by three letters at most ("tsch", "ch"), and
    # in their first letter only where a rewrite starts ("Tchaikovsky", "Chaikovsky").
    return (
        len(r) >= ROMANIZED_MIN_LENGTH
        and -3 <= len(g) - len(r) <= 3
        and (g[0] == r[0] or (g[0] in _REWRITTEN_FIRST and r[0] in _REWRITTEN_FIRST))
        and _LAST.get(g[-1], g[-1]) == _LAST.get(r[-1], r[-1])  # as _last_sound, inlined
        and romanized(g) == romanized(r)
        and g.isalpha()
        and r.isalpha()
    )


_VOWELS = frozenset("aeiouy")
# Endings that name a compound or a class of them, where one vowel makes another answer
# (nitrate, nitrite; cyclohexane, cyclohexene; ethanol, ethanal).
_CHEMICAL_ENDING = re.compile(r"(?:ide|ine|ite|ate|ane|ene|yne|one|ose|ase|ol|al|yl)$")


def _vowel_slip(a: str, b: str) -> bool:
    """Whether the words differ by one vowel, put for another, left out or added (``Gettysberg``,
    ``Punishmant``, ``Educaton``), and neither ends as a chemical name does."""
    if _CHEMICAL_ENDING.search(a) or _CHEMICAL_ENDING.search(b):
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 and a[diff[0]] in _VOWELS and b[diff[0]] in _VOWELS
    short, long_ = sorted((a, b), key=len)
    if len(long_) != len(short) + 1:
        return False
    i = _common_prefix_length(short, long_)
    return long_[i] in _VOWELS and long_[i + 1 :] == short[i:]


_REWRITTEN_FIRST = frozenset("tckqzjpfxyis")  # first letters a romanization rewrite may change
# Last letters a romanization rewrite may turn into one another (y, ij: i; f, w, ph: v; c, q,
# kh: k; zh: j), as one class; x, which becomes ks, with s.
_LAST = dict.fromkeys("hvfwkcqiyj", "*") | {"x": "s"}


def _last_sound(word: str) -> str:
    """The last letter of ``word`` up to what :func:`romanized` may change: two words with one
    romanization have the same."""
    return _LAST.get(word[-1], word[-1])


def _doubling(a: str, b: str) -> bool:
    """Whether one word is the other with one letter doubled (``appart``, ``apart``)."""
    short, long_ = sorted((a, b), key=len)
    if len(long_) != len(short) + 1:
        return False
    i = _common_prefix_length(short, long_)
    return i > 0 and long_[i] == long_[i - 1] and long_[i + 1 :] == short[i:]


def _one_sound(a: str, b: str) -> bool:
    """Whether one word is the other with one letter more that is said as one sound with its
    neighbour, a letter doubled or the ``c`` of ``ck`` (``Alderwik``, ``Alderwick``): a slip
    of spelling that touches the ending without changing the word (a vowel dropped does:
    ``hungry``, ``Hungary``)."""
    short, long_ = sorted((a, b), key=len)
    if len(long_) != len(short) + 1:
        return False
    i = _common_prefix_length(short, long_)
    if long_[i + 1 :] != short[i:]:
        return False
    extra, before, after = long_[i], long_[i - 1 : i], long_[i + 1 : i + 2]
    return (
        (extra == before and extra not in _VOWELS)
        or (extra == "c" and after == "k")
        or (extra == "k" and before == "c")
    )


def _swapped(a: str, b: str) -> bool:
    """Whether the words differ by one swap of neighbouring letters after the first."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return (
        len(diff) == 2
        and diff[0] > 0
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


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


def _initials(token: Token, form: Sequence[Token], j: int) -> int:
    """How many words of ``form`` from ``j`` the ``token`` abbreviates (``js`` for ``Johann
    Sebastian``), 0 if none. The form's last word is never abbreviated, and neither is a filler
    word ("a" is not the initial of "and")."""
    letters = token.text
    k = len(letters)
    if not (1 <= k <= 3 and letters.isalpha()) or j + k >= len(form):
        return 0
    words = [form[j + x].text for x in range(k)]
    if any(word in FILLER for word in words):
        return 0
    return k if all(word[:1] == letters[x] for x, word in enumerate(words)) else 0


def align(
    given: Sequence[Token],
    form: Sequence[Token],
    must: frozenset[int],
    *,
    strictness: float | None,
    word_forms: bool,
    alts: Sequence[Token | None] = (),
    initials: bool = True,
    in_long_answer: bool = False,
    clip: Callable[[Token, int], bool] | None = None,
) -> list[int] | None:
    """The form indices ``given`` matches, in order, in a subsequence of ``form`` holding every
    ``must`` index; None if there is no such match.

    ``ok[i][j]``: ``given[i:]`` can be matched inside ``form[j:]``. ``alts[j]``, where given, is
    another token the form's word ``j`` may be matched by (the underlined part of a word). With
    ``initials``, a short token of a several-word answer may stand for the first letters of
    consecutive form words. ``in_long_answer`` is passed on to :func:`tokens_match`. ``clip``,
    where given, says whether a given token may stand for form word ``j`` as its clipping.
    """
    n, m = len(given), len(form)
    if n == 0 or n > m:
        return None
    ok = [[False] * (m + 1) for _ in range(n + 1)]
    ok[n][m] = True
    for j in range(m - 1, -1, -1):
        ok[n][j] = ok[n][j + 1] and j not in must
    step: dict[tuple[int, int], int] = {}  # how many form words given[i] took at form[j]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if j not in must and ok[i][j + 1]:
                ok[i][j] = True
                continue
            if ok[i + 1][j + 1] and (
                tokens_match(
                    given[i],
                    form[j],
                    strictness=strictness,
                    word_forms=word_forms,
                    in_long_answer=in_long_answer,
                )
                or (
                    j < len(alts)
                    and (alt := alts[j]) is not None
                    and tokens_match(given[i], alt, strictness=strictness, word_forms=word_forms)
                )
                or (clip is not None and clip(given[i], j))
            ):
                ok[i][j], step[(i, j)] = True, 1
                continue
            k = _initials(given[i], form, j) if initials and n > 1 else 0
            if k > 0 and ok[i + 1][j + k]:
                ok[i][j], step[(i, j)] = True, k
    if not ok[0][0]:
        return None
    matched: list[int] = []
    i = j = 0
    while i < n:
        if (i, j) in step and ok[i + 1][j + step[(i, j)]] and not (j not in must and ok[i][j + 1]):
            matched += range(j, j + step[(i, j)])
            i, j = i + 1, j + step[(i, j)]
        else:
            j += 1
    return matched
