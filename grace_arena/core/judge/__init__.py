"""Quizbowl answer lines: parse them, and judge a typed answer against one.

The judge only *suggests* a ruling; the moderator decides. It is built to be conservative: a
wrong ACCEPT costs a team points silently, while a wrong REJECT or PROMPT is seen and overruled.
An explicit reject in the line always wins over any looser accept or prompt.

Parsing (:func:`parse_answer_line`, in ``lines.py``)
----------------------------------------------------
1. ``<b>``, ``<u>``, ``<strong>`` and ``<ins>`` mark required parts; ``<i>`` marks a title (its
   commas belong to it); every other tag is dropped; HTML entities are decoded; curly quotes
   become straight ones; text that was UTF-8 read as Windows-1252 (``PellÃ©as``) is repaired
   with ftfy.
2. Top-level ``[...]`` and ``(...)`` groups are cut out of the main text. A group whose first
   clause starts with a directive word (or, accept, prompt, anti-prompt, reject, do not ...) is
   a *directive group*. Any other group is *optional text* (``Frédéric (François) Chopin``),
   unless it is a pronunciation guide (only a quotation) or a long trailing editor's note.
3. The main text is split on the word ``or`` into alternatives; the first one is ``main``.
4. Directive groups are split into clauses on ``;``, and a clause again where a second
   directive starts without one (``accept mitochondrion, prompt on organelle``; ``prompt on
   "acid" but reject "amino acid"``; ``accept X until read, but prompt after``). A clause's
   leading words give its directive: ``do not accept (or prompt on)`` / ``reject`` -> REJECT;
   ``anti-prompt (on)`` -> ACCEPT (flag ``anti_prompt``); ``prompt (on)`` -> PROMPT;
   ``accept`` / ``or`` / nothing -> ACCEPT. Whole-clause flags: ``prompt on partial (answers)``
   (what follows, ``or on "X"``, is still a prompt); ``accept either (underlined part | name)``,
   also inside ``... as well as X``; ``accept equivalents``; ``accept word forms``; ``in either
   order``. A clause that describes answers (``accept reasonable equivalents like "X" or "Y"``,
   ``accept answers such as X``, ``prompt on specific groups such as X``) names its examples,
   and so does one about subjects it lists with ``or`` (``accept any answer about the French
   Revolution, the Reign of Terror, or Robespierre``; ``answers mentioning X or Y``: each of at
   most five words, an item that only describes left out: ``or related concepts``, ``or the
   like``); one that only describes (``accept any answer indicating ...``, ``... both X and
   Y``), that excludes its subjects (``other than X or Y``, ``not``, ``except``, ``without``,
   ``a lack of``) or whose first subject may govern the next (``the children of Zeus or
   Hera``, ``Zeus's children or Hera``) names none. ``accept "X" in place of "Y"`` adds
   every accept form with Y replaced by X. A directed prompt (``prompt on X by asking "which
   one?"``) keeps its question. Trailing qualifiers (``before "X" is read``,
   ``until ...``, ``after ...``, ``alone``) are cut off, surrounding quotes removed.
5. A clause lists answers separated by ``or``, and by commas only when they make a list (``A, B,
   or C``, or every item quoted) and never inside quotes, a marked run, italics or parentheses:
   in ``accept Kaiser Wilhelm, King of Prussia`` and ``<b>Guns, Germs, and Steel</b>`` the
   commas are part of one answer.
6. ``accept either``: each required part becomes an accept form; a single required run is split
   on ``and`` / ``&`` / commas, else into its words (``<u>Ada Lovelace</u> [accept either
   name]``). Underlined initials (``<u>N</u>orth <u>A</u>tlantic ...``) add the acronym; a
   run that marks only part of a word (``<u>hippo</u>potamuses``) makes that part enough.

Normalization and tokens (``text.py``)
--------------------------------------
:func:`normalize`: entities decoded, casefold, ``ø æ œ ł`` spelled out, accents removed,
apostrophes deleted (``40's`` -> ``40s``), other punctuation -> space, runs of single letters
joined (``U. S.`` -> ``us``), leading articles dropped. For comparison each word is canonical:
number words and ordinals as digits (``twenty-five`` -> ``25``, ``the sixties`` -> ``60s``),
roman numerals of two letters or more after the first word as digits (a lone ``I`` or ``V`` is
as often an initial; it still matches 1 or 5), ``Louis the Fourteenth`` as ``louis 14``, ``Dr
St Mt Ft Jr Sr No`` and units (``cm``, ``kg``) spelled out, ``WWII`` as ``world war 2``,
British ``-our`` and ``-ise`` as ``-or`` and ``-ize``. Each word also carries the first member
of its one-word ``same`` group in ``data/equivalents.csv`` (British spellings,
transliterations such as ``Chaikovsky``, irregular plurals such as ``geese``): two words with
the same one match.

Two words *match exactly* when their canonical forms are equal; when their stems (Snowball
English) are equal and what remains after their common prefix is an inflection (``'' s es ies y
ys e ed d a on um is ing ings``, after a doubled consonant too: ``tunnelling``); when the answer
gives a decade's first year or drops its ``s`` (``1960`` for ``1960s``, ``80`` for ``80s``);
with ``accept word forms``, when their stems are equal or they differ only by derivational
endings (``Romantic``, ``Romanticism``). They *match with tolerance* when they may also differ
by a few typing errors: no digits, the same first letter, a Damerau-Levenshtein distance of at
most ``floor(len(reference) / strictness)``, and an ending spared by the typo (``chloride`` is
not ``chlorine``) unless the typo is a letter said as one sound with its neighbour, doubled or
the ``c`` of ``ck`` (``Alderwik``; a vowel is not: ``hungry``). With the default
``strictness=7`` a word needs seven letters to allow one error. In a form of three words and ten
letters or more (two words and fourteen letters), a shorter word may have a letter doubled or
undoubled or two letters after its first swapped (``Things Fall Appart``, ``Diet of Wroms``),
and a longer one's typo may touch its ending if it is one vowel, unless the word ends as a
chemical name does (``Gettysberg Address``, ``Crime and Punishmant``; not ``potassium
nitrite``). With tolerance, a name of five letters or more also matches its spelling in another
romanization (:func:`text.romanized`: ``Chaikovsky``, ``Tchaikowsky``, ``Diaghileff``,
``Haendel``, ``Sophokles``), a rewrite of the letters romanizations disagree on that keeps every
vowel (``Mailer`` is not ``Mahler``, ``Speer`` not ``Speyer``).

An answer *matches a form* when its words match the form's one to one, in order, except that a
middle initial may be left out and a short word may stand for the initials of consecutive words
(``J. S. Bach``); or when both, run together, match as one word (``space walk``); or, for one
word, when it is the form's initials (``wto``, ``ww2``). It *matches a form's required part*
when its words match, in order, a subsequence of the form's words holding every required word
(or the required words run together: ``antivax``). A pair of forms the data marks ``distinct``
(``George Bush``, ``George W. Bush``) is never accepted one for the other unless equal.

Forms a judge takes although the line does not write them (``forms.py``)
-------------------------------------------------------------------------
* Equivalents from ``data/equivalents.csv`` (each row with its reason): ``UK`` where the line
  says United Kingdom, ``Great War`` for World War I, ``Qur'an`` for Koran; ``alias`` rows work
  one way only (``Holland`` for the Netherlands). An equivalent of a rejected form is rejected.
* ``X, <place or title>`` -> X (``Atlanta, Georgia``; ``Johann Tserclaes, Graf von Tilly``).
* On a line with no underlining at all, as the convention is there: a title without its
  subtitle (``Bowling Alone: The Collapse ...``), a state without its style (``Republic of
  Senegal`` -> ``Senegal``), a name without the word saying what it is (``Danube River``,
  ``French language``, ``Ming dynasty``, ``House of Capet``; never ``Red`` for ``Red River``).
* Where the line writes a form without marking a part of it (an accept clause, an alternative,
  a line without underlining), the name without the word after it that says it is a state or a
  house (``Ottoman`` for ``Ottoman Empire``; ``dynasty``, ``caliphate``, ``sultanate``,
  ``khanate``, ``shogunate``), every word capitalized and not only common adjectives
  (``Eastern Roman``, not ``Eastern``). It is matched without typos (``Russia`` is not
  ``Russian``) and is only a prompt where the name also names a country's people (``Russian``
  for ``Russian Empire``).
* A form the line prompts on or rejects is never derived as an accept form (``accept Ottoman
  Empire; prompt on Ottoman``; ``Ming dynasty [do not accept Ming]``).
* A derived form that ``data/equivalents.csv`` marks ``distinct`` from the form it comes from
  (``Korea`` from ``Republic of Korea``, ``John Adams`` from ``John Quincy Adams``) is only a
  prompt.

Judging (:func:`judge`)
-----------------------
The ruling is the first of these that applies:

1. Empty answer -> REJECT.
2. The answer equals a reject form (or an equivalent of one) -> REJECT, unless it equals an
   accept form letter for letter before articles are dropped (``The Invisible Man``).
3. It equals an accept form with its articles -> ACCEPT, else a prompt form -> PROMPT.
4. Exact tier: it matches an accept form, its required part or its initials -> ACCEPT; else a
   prompt form -> PROMPT (with the directed question).
5. Tolerant tier: it matches a reject form with typos -> REJECT (unless that form is only an
   article away from an accept form); else as 4 with typos. Then an answer of two words or more
   with a word clipped as ``data/clippings.txt`` allows, for a word the form writes in lower
   case, that matches an accept form whole or its required part -> ACCEPT (``mass spec`` for
   ``mass spectrometry``, ``stat mech``; not ``Battle of Stal``, not ``long waves`` for
   ``longitudinal waves``).
6. It says more than a form in a way that only qualifies it: a title before a person's name
   (``King Juan Carlos I``), a state's style (``Republic of Iraq``) or ``language`` /
   ``dynasty`` after the name -> ACCEPT; anything else that only qualifies (``Louis XIII of
   France``, ``Thebes, Greece``, ``Danube River``, ``Book of Job``, a title before a word that
   is not a given name) -> PROMPT. A qualified answer that is a reject form is rejected.
7. A decade without its century (``60s``, ``the sixties`` for ``1960s``) -> PROMPT.
8. ``prompt on partial``: it matches a strict part of an accept form (not only filler words)
   -> PROMPT.
9. On a line with no underlining: if the form reads as a person's name (its first word is a
   given name in ``data/given_names.txt``, its words are capitalized, its last word does not
   make it a thing or a place), the surname alone or with given names -> ACCEPT (``Atwood``,
   ``Margaret Atwood`` for ``Margaret Eleanor Atwood``) and a given name alone -> PROMPT;
   otherwise a strict part of a form the line writes that keeps a word of substance (not only
   generic words, common adjectives or numerals), does not split a hyphenated word, does not
   drop a distinguishing word before it (``South`` of ``South Africa``), is not one side of an
   ``and`` and is not only the qualifier after a comma -> PROMPT (``uncertainty principle`` for
   ``Heisenberg uncertainty principle``); and a word or two before a one-word common noun
   (``electric current`` for ``current``) -> PROMPT.
10. Otherwise -> REJECT.

The judge never accepts by subset on a formatted line and never accepts a superset except by
rule 6: ``George Washington`` is not ``George Washington Carver`` and ``Booker T. Washington``
is not ``Washington``. ``Judgement.rule`` says which rule and form decided; ``score`` is
rapidfuzz's normalized Indel similarity between the answer and the matched form.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz

from grace_arena.core.judge import lexicon
from grace_arena.core.judge.forms import (
    COMMON_ADJECTIVES,
    DISTINGUISHING,
    GENERIC,
    TITLES,
    CompiledLine,
    Form,
    compile_line,
)
from grace_arena.core.judge.lines import AnswerLine, Directive, PromptRule, parse_answer_line
from grace_arena.core.judge.match import align, tokens_match
from grace_arena.core.judge.text import (
    FILLER,
    Prepared,
    Token,
    fold,
    make_token,
    normalize,
    prepare,
    prepared_from,
)

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


@dataclass(frozen=True)
class Judgement:
    """The judge's suggested ruling for one answer, and why."""

    directive: Directive
    prompt_question: str | None  # the question to ask on a directed prompt, else None
    matched: str | None  # which form matched (for display)
    score: float  # similarity in [0, 1] of the best match
    rule: str = field(default="", compare=False)  # which rule decided, in words


def judge(
    given: str, answer_line: str | AnswerLine, *, strictness: float = DEFAULT_STRICTNESS
) -> Judgement:
    """Suggest a ruling for ``given`` against ``answer_line``; see the module docstring.

    ``strictness`` is the number of letters of a reference word per allowed typing error; it
    must be positive (``math.inf`` turns typo tolerance off).

    >>> judge("Neitzsche", "<b>Friedrich Nietzsche</b> [accept Nietzsche]").directive
    <Directive.ACCEPT: 'accept'>
    >>> judge("Atwood", "Margaret Eleanor Atwood").rule
    "a person's surname, with or without given names, on a line without underlining: 'Margaret Eleanor Atwood' (main answer)"
    """  # noqa: E501
    if not strictness > 0:
        raise ValueError(
            f"strictness must be > 0 (math.inf disables typo tolerance), got {strictness!r}"
        )
    line = answer_line if isinstance(answer_line, AnswerLine) else parse_answer_line(answer_line)
    compiled = compile_line(line)
    answer = prepare(given)
    if not answer.tokens:
        return Judgement(Directive.REJECT, None, None, 0.0, "the answer is empty")
    verdict = _explicit(answer, compiled, strictness)
    if verdict is None:
        verdict = _implicit(given, answer, compiled, strictness)
    if verdict is not None:
        return verdict
    best = max((_score(answer, form.prepared.text) for form in compiled.accept), default=0.0)
    return Judgement(Directive.REJECT, None, None, best, "matches no form of the line")


def _score(given: Prepared, target: str) -> float:
    return fuzz.ratio(given.text, target) / 100.0


def _verdict(form: Form, answer: Prepared, target: str, rule: str) -> Judgement:
    question = form.question if form.directive is Directive.PROMPT else None
    directive = form.directive
    distinct = lexicon.distinct_pairs().get((answer.text, form.prepared.text))
    if directive is Directive.ACCEPT and distinct is not None:  # "George Bush", "George W. Bush"
        directive, rule = Directive.PROMPT, f"{rule}; but {distinct}"
    return Judgement(directive, question, form.text, _score(answer, target), rule)


def _describe(form: Form) -> str:
    return f"{form.text!r} ({form.source})"


def _match_form(
    answer: Prepared, form: Form, *, strictness: float | None, word_forms: bool
) -> tuple[str, str] | None:
    """(matched text, how) if ``answer`` matches ``form`` whole or its required part."""
    prepared = form.prepared
    if strictness is not None and form.exact:
        return None
    typo = "" if strictness is None else ", allowing a typo"
    if align(
        answer.tokens,
        prepared.tokens,
        prepared.essential,
        strictness=strictness,
        word_forms=word_forms,
        alts=form.alts,
        in_long_answer=strictness is not None and _long(prepared, strictness),
    ):
        return prepared.text, f"matches the form {_describe(form)}{typo}"
    if tokens_match(answer.joined, prepared.joined, strictness=None, word_forms=word_forms):
        return prepared.text, f"is the form {_describe(form)} written as one word"
    if form.must is None:
        return None
    for must in (form.must, *form.parts):
        matched = align(
            answer.tokens,
            prepared.tokens,
            must,
            strictness=strictness,
            word_forms=word_forms,
            alts=form.alts,
        )
        part = " ".join(prepared.tokens[i].text for i in sorted(must))
        if matched is not None:
            return part, f"gives the required part {part!r} of {_describe(form)}{typo}"
        joined = make_token("".join(prepared.tokens[i].text for i in sorted(must)))
        if tokens_match(answer.joined, joined, strictness=None, word_forms=word_forms):
            return part, f"gives the required part {part!r} of {_describe(form)} as one word"
    return None


LONG_ANSWER_LETTERS = {2: 14, 3: 10}
"""A form of two words and fourteen letters, or three words and ten letters, pins the answer
down: a short word of it may have a letter doubled or two letters swapped (``Things Fall
Appart``), a longer one a vowel slip in its ending (``Gettysberg Address``)."""


def _long(prepared: Prepared, strictness: float) -> bool:
    words = len(prepared.tokens)
    if words < 2:
        return False
    return prepared.letters >= LONG_ANSWER_LETTERS[min(words, 3)] and math.isfinite(strictness)


def _clipped(answer: Prepared, compiled: CompiledLine, word_forms: bool) -> Judgement | None:
    """A technical term of several words with some of them clipped (``mass spec`` for ``mass
    spectrometry``, ``stat mech``): each clipped word is one of ``data/clippings.txt`` and the
    start of a word the line writes in lower case (a name is not clipped: ``Battle of
    Stal``)."""
    if len(answer.tokens) < 2:
        return None
    clips = lexicon.clippings()
    if clips.keys().isdisjoint(t.text for t in answer.tokens):
        return None
    for form in compiled.accept:
        clip = _clip_rule(form, clips)
        for must in (form.prepared.essential, form.must):
            if must is None:
                continue
            matched = align(
                answer.tokens,
                form.prepared.tokens,
                must,
                strictness=None,
                word_forms=word_forms,
                clip=clip,
            )
            if matched is not None:
                words = " ".join(form.prepared.tokens[i].text for i in matched)
                why = f"gives {words!r} of {_describe(form)} with a word clipped"
                return _verdict(form, answer, words, why)
    return None


def _clip_rule(form: Form, clips: dict[str, frozenset[str]]) -> Callable[[Token, int], bool]:
    """Whether a given token is a clipping of the form's word ``j``."""
    tokens = form.prepared.tokens
    lower = _lower_case_words(form.text)

    def clip(given: Token, j: int) -> bool:
        word = tokens[j].text
        return word in clips.get(given.text, ()) and word in lower

    return clip


@lru_cache(maxsize=4096)
def _lower_case_words(text: str) -> frozenset[str]:
    """The words ``text`` writes in lower case, folded."""
    return frozenset(fold(word) for word in re.findall(r"[^\W\d_]+", text) if word[:1].islower())


def _explicit(answer: Prepared, compiled: CompiledLine, strictness: float) -> Judgement | None:
    """Rules 2 to 5: what the line's forms say."""
    word_forms = "accept_word_forms" in compiled.line.flags
    literal_accepts = {form.prepared.literal for form in compiled.accept}
    for form in compiled.reject:
        if form.prepared.text == answer.text and answer.literal not in literal_accepts:
            return Judgement(
                Directive.REJECT, None, form.text, 1.0, f"the line rejects {_describe(form)}"
            )
    for form in (*compiled.accept, *compiled.prompt):
        if form.prepared.literal == answer.literal:
            return _verdict(form, answer, form.prepared.text, f"is the form {_describe(form)}")

    accept_texts = {form.prepared.text for form in compiled.accept}
    tolerant_rejects = [f for f in compiled.reject if f.prepared.text not in accept_texts]
    for tier in (None, strictness):
        if tier is not None:
            for form in tolerant_rejects:
                if align(
                    answer.tokens,
                    form.prepared.tokens,
                    form.prepared.essential,
                    strictness=tier,
                    word_forms=False,
                ):
                    return Judgement(
                        Directive.REJECT,
                        None,
                        form.text,
                        _score(answer, form.prepared.text),
                        f"the line rejects {_describe(form)} (allowing a typo)",
                    )
        for form in compiled.accept:
            found = _match_form(answer, form, strictness=tier, word_forms=word_forms)
            if found is not None:
                return _verdict(form, answer, found[0], found[1])
        if tier is None and len(answer.tokens) == 1:
            form = compiled.initials.get(answer.tokens[0].text)
            if form is not None:
                return _verdict(form, answer, answer.text, f"is the initials of {_describe(form)}")
        for form in compiled.prompt:
            found = _match_form(answer, form, strictness=tier, word_forms=word_forms)
            if found is not None:
                return _verdict(form, answer, found[0], found[1])
    return _clipped(answer, compiled, word_forms)


# Rule 6: what an answer may say beyond a form.
_TITLE_WORDS = "|".join(sorted(TITLES | {"saint", "st"}))
_GIVEN_TITLE = re.compile(rf"^(?:(?:{_TITLE_WORDS})\s+)+(?P<rest>\S.*)$")
_GIVEN_STATE = re.compile(
    r"^(?:(?:islamic|arab|peoples|democratic|federal|socialist|united|federative|plurinational|"
    r"bolivarian|hellenic|oriental|independent|sovereign|free)\s+)*(?:republic|kingdom|state|"
    r"commonwealth|principality|grand\s+duchy|duchy|sultanate|emirate|empire)\s+of\s+"
    r"(?:the\s+)?(?P<rest>\S.*)$"
)
_GIVEN_NAME_SUFFIX = re.compile(r"^(?P<rest>.+?)\s+(?:language|dynasty)$")
_GIVEN_QUALIFIER_SUFFIX = re.compile(
    r"^(?P<rest>.+?)\s+(?:river|mountains|desert|people|peoples|lake|island|islands|sea|empire|"
    r"city|province|region|tribe|family)$"
)
_GIVEN_OF = re.compile(r"^(?P<rest>.+?)\s+of\s+\S.*$")
_GIVEN_NUMERAL = re.compile(r"^(?P<rest>.+?)\s+(?:[ivx]+|\d+(?:st|nd|rd|th)?)$")
_GIVEN_PREFIX = re.compile(
    r"^(?:battle|siege|sack|fall|book|gospel|epistle|treaty|council|battles|the\s+\w+)\s+of\s+"
    r"(?:the\s+)?(?P<rest>\S.*)$"
)


def _given_variants(given: str, compiled: CompiledLine) -> list[tuple[str, Directive, str]]:
    """The answer with what only qualifies it removed: (rest, directive if it then matches,
    why)."""
    numbered = any(form.prepared.tokens[-1].has_digit for form in compiled.accept)
    text = normalize(given)
    variants: list[tuple[str, Directive, str]] = []
    m = _GIVEN_TITLE.match(text)
    if m:
        rest = m.group("rest")
        named = rest.split()[0] in lexicon.given_names()
        variants.append(
            (
                rest,
                Directive.ACCEPT if named else Directive.PROMPT,
                "a title before the name" if named else "a title before the answer",
            )
        )
    m = _GIVEN_STATE.match(text)
    if m:
        variants.append((m.group("rest"), Directive.ACCEPT, "the state's style before its name"))
    m = _GIVEN_NAME_SUFFIX.match(text)
    if m:
        variants.append(
            (m.group("rest"), Directive.ACCEPT, "the word saying what the name is, after it")
        )
    for pattern, why in (
        (_GIVEN_QUALIFIER_SUFFIX, "a word saying what it is after the answer"),
        (_GIVEN_OF, "a qualifier with 'of' after the answer"),
        (None if numbered else _GIVEN_NUMERAL, "a number after the answer"),
        (_GIVEN_PREFIX, "a qualifier before the answer"),
    ):
        m = pattern.match(text) if pattern is not None else None
        if m:
            variants.append((m.group("rest"), Directive.PROMPT, why))
    words = text.split()
    names = lexicon.given_names()
    untitled = [
        w
        for i, w in enumerate(words)
        if not (w in TITLES and i + 1 < len(words) and words[i + 1] in names)
    ]
    if len(untitled) < len(words) and not _GIVEN_TITLE.match(text):  # "... of Archduke Franz ..."
        variants.append((" ".join(untitled), Directive.ACCEPT, "a title before a name"))
    places = lexicon.place_names()
    for k in (2, 1):  # "Thebes, Greece", "Atlanta Georgia"
        if len(words) > k and " ".join(words[-k:]) in places:
            variants.append((" ".join(words[:-k]), Directive.PROMPT, "a place after the answer"))
            break
    for k in (3, 2, 1):  # "United States Secretary of the Interior"
        if len(words) > k and " ".join(words[:k]) in places:
            variants.append((" ".join(words[k:]), Directive.PROMPT, "a place before the answer"))
            break
    return variants


def _implicit(
    given: str, answer: Prepared, compiled: CompiledLine, strictness: float
) -> Judgement | None:
    """Rules 6 to 9: what a judge reads into the line."""
    word_forms = "accept_word_forms" in compiled.line.flags
    reject_texts = {form.prepared.text for form in compiled.reject}
    variants = _given_variants(given, compiled) if len(answer.tokens) > 1 else []
    for rest, directive, why in variants:
        variant = prepare(rest)
        if not variant.tokens:
            continue
        if variant.text in reject_texts:
            return Judgement(
                Directive.REJECT, None, rest, 1.0, f"{why}, and the line rejects {rest!r}"
            )
        for tier in (None, strictness):
            for form in compiled.accept:
                found = _match_form(variant, form, strictness=tier, word_forms=word_forms)
                if found is None:
                    continue
                outcome = directive
                note = ""
                if form.directive is Directive.PROMPT:
                    outcome = Directive.PROMPT
                distinct = lexicon.distinct_pairs().get((answer.text, form.prepared.text))
                if distinct is not None:
                    outcome, note = Directive.PROMPT, f"; but {distinct}"
                return Judgement(
                    outcome,
                    None,
                    form.text,
                    _score(answer, found[0]),
                    f"{why}: the rest {found[1]}{note}",
                )

    decade = _decade_prompt(answer, compiled, word_forms)
    if decade is not None:
        return decade

    if "prompt_on_partial" in compiled.line.flags and any(
        t.text not in FILLER for t in answer.tokens
    ):
        for form in compiled.accept:
            tokens = form.prepared.tokens
            if len(answer.tokens) < len(tokens) and align(
                answer.tokens,
                tokens,
                frozenset(),
                strictness=None,
                word_forms=word_forms,
                initials=False,
            ):
                return _prompt(form, answer, "the line prompts on a partial answer")

    for tier in (None, strictness):
        for form in compiled.accept:
            if not form.unformatted or form.directive is not Directive.ACCEPT:
                continue
            verdict = _unformatted(answer, form, tier, word_forms)
            if verdict is not None:
                return verdict
    for form in compiled.accept:
        # "electric current" for "current": a common noun made more specific by a word before
        # it is worth a prompt on a line without underlining.
        tokens = form.prepared.tokens
        if (
            form.unformatted
            and len(tokens) == 1
            and form.text[:1].islower()
            and 2 <= len(answer.tokens) <= 3
            and not {t.text for t in answer.tokens[:-1]} & FILLER
            and tokens_match(answer.tokens[-1], tokens[0], strictness=None, word_forms=word_forms)
        ):
            return _prompt(form, answer, "a word before a common noun that makes it specific")
    return None


def _prompt(form: Form, answer: Prepared, why: str) -> Judgement:
    return Judgement(
        Directive.PROMPT,
        None,
        form.text,
        _score(answer, form.prepared.text),
        f"{why}: part of {_describe(form)}",
    )


_CENTURYLESS = re.compile(r"^\d0s$")


def _decade_prompt(answer: Prepared, compiled: CompiledLine, word_forms: bool) -> Judgement | None:
    """Rule 7: ``60s`` for ``1960s``."""
    spots = [i for i, t in enumerate(answer.tokens) if _CENTURYLESS.match(t.text)]
    if not spots:
        return None
    for form in compiled.accept:
        for token in form.prepared.tokens:
            if not (
                re.fullmatch(r"\d{3}0s", token.text)
                and token.text[-3:] in {answer.tokens[i].text for i in spots}
            ):
                continue
            tokens = [
                token if i in spots and t.text == token.text[-3:] else t
                for i, t in enumerate(answer.tokens)
            ]
            full = prepared_from(answer.literal, tokens)
            if _match_form(full, form, strictness=None, word_forms=word_forms):
                return _prompt(form, answer, "a decade without its century")
    return None


def _unformatted(
    answer: Prepared, form: Form, strictness: float | None, word_forms: bool
) -> Judgement | None:
    """Rule 9, for a form of a line that marks no required part."""
    tokens = form.prepared.tokens
    matched = align(
        answer.tokens,
        tokens,
        frozenset(),
        strictness=strictness,
        word_forms=word_forms,
        initials=False,
    )
    if matched is None or len(matched) == len(tokens):
        return None
    person = form.person
    if person is not None:
        end = person.surname[1]
        if end - 1 in matched and all(person.first <= i < end for i in matched):
            distinct = lexicon.distinct_pairs().get((answer.text, form.prepared.text))
            if distinct is not None:
                return _prompt(form, answer, f"a shorter name; but {distinct}")
            return Judgement(
                Directive.ACCEPT,
                None,
                form.text,
                _score(answer, " ".join(tokens[i].text for i in matched)),
                "a person's surname, with or without given names, on a line without "
                f"underlining: {_describe(form)}",
            )
        if matched == [person.first]:
            return _prompt(form, answer, "a person's given name without the surname")
        return None
    if not form.written or form.source.startswith("example"):
        return None  # only a term the line writes is taken apart, not a derived one or an example
    words = {tokens[i].text for i in matched}
    substance = words - FILLER - GENERIC - COMMON_ADJECTIVES
    numbered = len(matched) > 1 and any(w.isdecimal() for w in substance)  # "Symphony No. 40"
    if not numbered and not {w for w in substance if len(w) > 1 and not w.isdecimal()}:
        return None  # "war" of "Seven Years' War", "Red" of "Red River", "I" of "Elizabeth I"
    chosen = set(matched)
    for i in chosen:
        if i > 0 and i - 1 not in chosen and tokens[i - 1].text in DISTINGUISHING:
            return None  # "Africa" is not "South Africa"
    if min(matched) >= form.head_length:
        return None  # "Georgia" of "Atlanta, Georgia": what qualifies the answer, alone
    if [t.text for t in tokens].count("and") == 1:
        split = [t.text for t in tokens].index("and")
        if all(i < split for i in matched) or all(i > split for i in matched):
            return None  # "Russia" of "Russia and Ukraine": one of two answers is not a part
    for i, token in enumerate(tokens):
        if token.linked and ((i in chosen) != (i - 1 in chosen)):
            return None  # "Dick" of "Moby-Dick"
    return _prompt(form, answer, "part of the answer, on a line without underlining")
