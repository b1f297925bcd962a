"""An answer line compiled for judging: every form as tokens, with the forms a human judge
derives from the ones written (equivalent names, a dropped designation, a person's surname).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

from grace_arena.core.judge import lexicon
from grace_arena.core.judge.lines import AnswerLine, Directive, Partials
from grace_arena.core.judge.text import (
    FILLER,
    Prepared,
    Token,
    fold,
    make_token,
    prepare,
    prepared_from,
)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Honorifics and offices written before a name ("Queen Gertrude", "Sir George Etherege").
TITLES = _set(
    """
    king queen emperor empress tsar kaiser sultan shah pharaoh pope prince princess duke
    duchess count countess earl baron baroness lord lady sir dame dom dona president
    general colonel captain admiral marshal chancellor cardinal bishop archbishop reverend
    rabbi imam ayatollah sheikh caliph mr mrs ms miss doctor professor senator governor
    graf comte archduke archduchess mahatma
    """
)
# Words a form ends with that make it a thing, not a person, whatever its first word is.
GENERIC = _set(
    """
    war wars battle river party empire kingdom republic state states city language people
    peoples treaty act house church lake mount island islands sea ocean university college
    company society revolution dynasty law laws theory effect principle equation number
    system process movement period era age style school order family group disease
    syndrome series model function method rule type form reaction cell cells acid gas
    particle particles museum building bridge tower palace cathedral temple street square
    park hall canal bay gulf strait cape peninsula valley mountain mountains desert forest
    falls festival prize award medal cup doctrine plan affair incident massacre riot
    rebellion uprising crisis scandal campaign invasion expedition conference congress
    council convention agreement accord declaration constitution amendment bill speech
    letter novel poem play opera symphony concerto sonata painting sculpture album song
    film book story stories tale saga mission project program station province county
    region territory colony coast code test tests experiment hypothesis paradox constant
    distribution reactions bonds bond
    """
)
# Leading words whose omission names something else ("Africa" is not "South Africa").
DISTINGUISHING = _set(
    """
    north south east west northern southern eastern western new old upper lower greater
    lesser holy
    """
)
# Name particles, written in lower case inside a person's name.
PARTICLES = _set(
    """
    de da di del della der den des du la le van von y e bin ibn al el ben ter ten dos das
    """
)
# Adjectives that are the whole name once a designation is dropped ("Red River", "Rocky
# Mountains"): the designation is then part of the name.
COMMON_ADJECTIVES = _set(
    """
    red yellow black white green blue brown grey gray rocky great dead grand old new north
    south east west northern southern eastern western big long high low upper lower middle
    central golden silver little small painted blue smoky virgin
    """
)
_SUFFIXES = frozenset({"jr", "sr", "junior", "senior"})
_STATE = re.compile(
    r"^(?:the\s+)?(?:(?:islamic|arab|people'?s|democratic|federal|socialist|united|federative|"
    r"plurinational|bolivarian|hellenic|oriental|independent|sovereign|free)\s+)*"
    r"(?:republic|kingdom|state|commonwealth|principality|grand\s+duchy|duchy|sultanate|emirate|"
    r"empire)\s+of\s+(?:the\s+)?(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_DESIGNATION_SUFFIX = re.compile(
    r"^(?:the\s+)?(?P<rest>.+?)\s+(?:river|language|dynasty|family|clan|mountains|desert|people|peoples)$",
    re.I,
)
_HOUSE = re.compile(r"^(?:the\s+)?house\s+of\s+(?P<rest>\S.*)$", re.IGNORECASE)
_REGNAL_OF = re.compile(r"^(?P<name>.+\s[IVX]+)\s+of\s+(?P<place>.+)$")  # Louis XIII of France
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$|^(?:first|second|third|fourth|fifth)$", re.I)


@dataclass(frozen=True)
class Person:
    """Where the parts of a person's name are among a form's tokens."""

    first: int  # index of the first given name
    surname: tuple[int, int]  # [start, end) of the surname, particles included


@dataclass(frozen=True)
class Form:
    """One form of an answer line, ready to be matched."""

    text: str
    directive: Directive
    prepared: Prepared
    must: frozenset[int] | None  # the required words' indices; None: the whole form
    parts: tuple[frozenset[int], ...]  # with "accept either", each part alone is enough
    alts: tuple[Token | None, ...]  # the underlined part of a word, where only part is
    question: str | None
    source: str  # why the line has this form: "main answer", "accept clause", ...
    unformatted: bool = False  # the line marks no required part
    written: bool = True  # as the line writes it, not derived by a looser rule
    exact: bool = False  # matched without typos only ("Russia" is not "Russian")

    @property
    def person(self) -> Person | None:
        """Where the names are, if the form (on a line without underlining) reads as a
        person's name; computed when first needed, as most answers never ask."""
        return _person(self.text, self.prepared) if self.unformatted else None

    @property
    def head_length(self) -> int:
        """How many tokens come before a comma or colon that starts what only qualifies the
        form ("Atlanta, Georgia": 1); all of them when there is none, or when the form is
        derived."""
        return _head_length(self.text) if self.written else len(self.prepared.tokens)


@dataclass(frozen=True)
class CompiledLine:
    line: AnswerLine
    accept: tuple[Form, ...]
    prompt: tuple[Form, ...]
    reject: tuple[Form, ...]
    initials: dict[str, Form]  # the initials of a form of several words -> that form


@lru_cache(maxsize=4096)
def compile_line(line: AnswerLine) -> CompiledLine:
    unformatted = not line.formatted
    either = "accept_either" in line.flags
    sources = line.accept_sources or ("accept form",) * len(line.accept)
    required = line.accept_required or ((),) * len(line.accept)
    partials = line.accept_partials or ((),) * len(line.accept)
    accept: list[Form] = []
    seen: set[str] = set()

    def add(form: Form | None) -> None:
        if form is not None and form.prepared.tokens and form.prepared.text not in seen:
            seen.add(form.prepared.text)
            accept.append(form)

    written = [
        _form(text, Directive.ACCEPT, req, part, None, source, either, unformatted)
        for text, req, part, source in zip(line.accept, required, partials, sources, strict=False)
    ]
    for form in written:
        add(form)
    for form in written:
        if form is None:
            continue
        for derived in _derived(form, unformatted):
            add(derived)
        add(_without_head(form))
        for derived in _equivalents(form):
            add(derived)
    prompt = [
        _form(
            rule.answer,
            Directive.PROMPT,
            rule.required,
            rule.partials,
            rule.question,
            rule.source,
            False,
            unformatted,
        )
        for rule in line.prompt
    ]
    reject = [
        _form(text, Directive.REJECT, (), (), None, "reject clause", False, False)
        for text in line.reject
    ]
    # An equivalent of a rejected answer is rejected too ("USSR" where "Soviet Union" is).
    reject += [d for form in list(reject) if form is not None for d in _equivalents(form)]
    # what the line says of a form wins over deriving it from another ("accept Ottoman
    # Empire; prompt on Ottoman", "Ming dynasty; do not accept Ming")
    said = {f.prepared.text for f in (*prompt, *reject) if f is not None}
    accept = [f for f in accept if f.written or f.prepared.text not in said]
    initials: dict[str, Form] = {}
    for form in accept:
        for letters in _initials_of(form):
            initials.setdefault(letters, form)
    return CompiledLine(
        line,
        tuple(accept),
        tuple(f for f in prompt if f is not None),
        tuple(f for f in reject if f is not None),
        initials,
    )


def _form(
    text: str,
    directive: Directive,
    required: tuple[str, ...],
    partials: Partials,
    question: str | None,
    source: str,
    either: bool,
    unformatted: bool,
) -> Form | None:
    prepared = prepare(text)
    if not prepared.tokens:
        return None
    must = _required_indices(prepared, required)
    parts: tuple[frozenset[int], ...] = ()
    if either and must is not None and len(required) > 1:
        parts = tuple(p for part in required if (p := _required_indices(prepared, (part,))))
    alts: list[Token | None] = [None] * len(prepared.tokens)
    for part, word in partials:
        if len(part) < 2:
            continue  # a single underlined letter is an initial, not an answer
        word_tokens = prepare(word).tokens
        part_tokens = prepare(part).tokens
        if len(word_tokens) != 1 or len(part_tokens) != 1:
            continue
        for j, token in enumerate(prepared.tokens):
            if token.text == word_tokens[0].text and alts[j] is None:
                alts[j] = part_tokens[0]
                break
    return Form(
        text=text,
        directive=directive,
        prepared=prepared,
        must=must,
        parts=parts,
        alts=tuple(alts) if any(alts) else (),
        question=question,
        source=source,
        unformatted=unformatted,
    )


def _required_indices(form: Prepared, required: tuple[str, ...]) -> frozenset[int] | None:
    """Indices of the form's tokens that the required parts cover; None if not a strict part."""
    wanted = [t.text for part in required for t in prepare(part).tokens]
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
# Derived forms


def _derived_form(form: Form, text: str, source: str) -> Form | None:
    """``text``, derived from ``form`` by a looser rule, as an accept form (a prompt form when
    the equivalents data says the two name different things)."""
    prepared = prepare(text)
    if not prepared.tokens:
        return None
    pair = (prepared.text, form.prepared.text)
    directive = Directive.ACCEPT
    reason = lexicon.distinct_pairs().get(pair)
    if reason is not None:
        directive, source = Directive.PROMPT, f"{source}; but {reason}"
    return Form(
        text=text,
        directive=directive,
        prepared=prepared,
        must=None,
        parts=(),
        alts=(),
        question=None,
        source=f"{source} (from {form.text!r})",
        unformatted=form.unformatted,
        written=False,
    )


def _derived(form: Form, unformatted: bool) -> list[Form]:
    """Forms a judge takes for ``form`` although the line does not write them."""
    derived: list[Form | None] = []
    text = form.text
    if form.must is None and "," in text:
        head, tail = (part.strip() for part in text.split(",", 1))
        first = tail.split()[0].rstrip(".") if tail.split() else ""
        if head and (
            prepare(tail).text in lexicon.places()
            or fold(first) in TITLES
            or (_ORDINAL.match(first) and len(tail.split()) > 1)
        ):
            derived.append(_derived_form(form, head, f"{tail!r} after a comma qualifies it"))
    if not unformatted:
        return [d for d in derived if d is not None]
    words = text.split()
    if len(words) > 1 and fold(words[0].rstrip(".")) in TITLES:
        rest = " ".join(words[1:])
        if fold(words[1]) in lexicon.given_names():  # "Dom Pedro II", "Queen Gertrude"
            derived.append(_derived_form(form, rest, "the name without the title before it"))
    regnal = _REGNAL_OF.match(text)
    if regnal and prepare(regnal.group("place")).text in lexicon.places():
        derived.append(_derived_form(form, regnal.group("name"), "a ruler without the realm"))
    if ":" in text:
        head = text.split(":", 1)[0].strip()
        if re.search(r"\w", head):
            derived.append(_derived_form(form, head, "the title without its subtitle"))
    state = _STATE.match(text)
    if state and prepare(state.group("rest")).text in lexicon.places():
        derived.append(_derived_form(form, state.group("rest"), "the state without its style"))
    for pattern, why in (
        (_DESIGNATION_SUFFIX, "the name without the word that says what it is"),
        (_HOUSE, "the dynasty without 'House of'"),
    ):
        m = pattern.match(text)
        if m and _proper(m.group("rest")):
            derived.append(_derived_form(form, m.group("rest"), why))
    return [d for d in derived if d is not None]


# What a state or a house is, after its name: "Ottoman Empire", "Ming dynasty".
HEADS = _set("empire dynasty caliphate sultanate khanate shogunate")
_HEADED = re.compile(r"^(?:the\s+)?(?P<rest>.+?)\s+(?P<head>\w+)$", re.IGNORECASE)
_DEMONYM_ENDINGS = ("", "n", "an", "ian", "ese", "ish", "i")
# The names of peoples that the rule of _demonyms does not make from places.txt.
_IRREGULAR_DEMONYMS = _set(
    """
    american arab arabian british english french spanish dutch flemish swiss irish scottish
    welsh danish swedish finnish polish turkish greek persian portuguese roman frankish norse
    """
)


def _without_head(form: Form) -> Form | None:
    """``Ottoman`` for ``Ottoman Empire`` where the line writes the form without marking a part
    of it (an accept clause, an alternative, a line without underlining): the name is what the
    player must know; the word after it only says what it names. Matched exactly, and only a
    prompt where the name is also a people's (``Russian`` for ``Russian Empire``: the empire,
    the language, the people?)."""
    if form.must is not None or (form.source == "main answer" and not form.unformatted):
        return None
    m = _HEADED.match(form.text)
    if not m or fold(m.group("head")) not in HEADS:
        return None
    rest = m.group("rest")
    words = rest.split()
    if (
        len(words) > 3
        or not all(word[:1].isupper() for word in words)
        or all(fold(word) in COMMON_ADJECTIVES | DISTINGUISHING for word in words)
        or re.search(r"\d", rest)
    ):
        return None
    derived = _derived_form(form, rest, f"the name without {m.group('head')!r} after it")
    if derived is None:
        return None
    directive = derived.directive
    source = derived.source
    if len(words) == 1 and fold(rest) in _demonyms():
        directive = Directive.PROMPT
        source = f"{source}; but {rest!r} also names a people"
    elif derived.prepared.text in lexicon.places():  # "Ghana" for "Ghana Empire": today's Ghana?
        directive = Directive.PROMPT
        source = f"{source}; but {rest!r} also names a country or state"
    return dataclasses.replace(derived, directive=directive, source=source, exact=True)


@lru_cache(maxsize=1)
def _demonyms() -> frozenset[str]:
    """The words that may name the people of a country in ``places.txt``: the name, or the name
    less its last one or two letters, with a demonym's ending (``russian``, ``chinese``,
    ``german``, ``mongol``)."""
    found: set[str] = set()
    for place in lexicon.places():
        if " " in place or len(place) < 4:
            continue
        for cut in (0, 1, 2):
            base = place[: len(place) - cut]
            found.update(base + ending for ending in _DEMONYM_ENDINGS if cut or ending)
    return frozenset(found) | _IRREGULAR_DEMONYMS


def _proper(text: str) -> bool:
    """Whether ``text`` reads as a proper name that stands alone ("Danube", not "Red")."""
    words = text.split()
    return bool(words) and words[0][:1].isupper() and fold(words[0]) not in COMMON_ADJECTIVES


def _equivalents(form: Form) -> list[Form]:
    """``form`` with a phrase replaced by an equivalent from the data file."""
    texts = [t.text for t in form.prepared.tokens]
    derived: list[Form] = []
    index = lexicon.phrase_index()
    for start, word in enumerate(texts):
        for member, group in index.get(word, ()):
            k = len(member)
            if tuple(texts[start : start + k]) == member:
                for other in group.members:
                    if other == member:
                        continue
                    tokens = [
                        *form.prepared.tokens[:start],
                        *(make_token(word) for word in other),
                        *form.prepared.tokens[start + k :],
                    ]
                    must = None
                    if form.must is not None:
                        shift = len(other) - k
                        inside = any(start <= i < start + k for i in form.must)
                        must = frozenset(
                            [i for i in form.must if i < start]
                            + [i + shift for i in form.must if i >= start + k]
                            + (list(range(start, start + len(other))) if inside else [])
                        )
                        if len(must) == len(tokens):
                            must = None
                    literal = " ".join(t.text for t in tokens)
                    derived.append(
                        Form(
                            text=" ".join([*texts[:start], *other, *texts[start + k :]]),
                            directive=form.directive,
                            prepared=prepared_from(literal, tokens),
                            must=must,
                            parts=(),
                            alts=(),
                            question=form.question,
                            source=f"equivalent: {group.reason} (from {form.text!r})",
                            unformatted=form.unformatted,
                            written=False,
                        )
                    )
    return derived


def _initials_of(form: Form) -> list[str]:
    """The initials a player may give for a form of two words or more: of every word, and of
    the words that are not fillers ("wto", "nato"; "codc" and "cdc" for "Cabinet of Dr.
    Caligari"); digits stay whole ("ww2")."""
    tokens = form.prepared.tokens
    if form.must is not None:
        tokens = tuple(t for i, t in enumerate(tokens) if i in form.must)
    content = [t for t in tokens if t.text not in FILLER]
    found: list[str] = []
    for words in (tokens, content):
        if len(words) >= 2 and sum(not t.has_digit for t in words) >= 2:
            letters = "".join(t.text if t.has_digit else t.text[:1] for t in words)
            # a word of the form itself, or a word at most a letter longer that starts with
            # them ("us" of "U.S.A. San", whose first word is "usa"), is a part of the form
            if not any(
                t.text.startswith(letters) and len(t.text) <= len(letters) + 1 for t in tokens
            ):
                found.append(letters)
    return found


# ---------------------------------------------------------------------------------------------
# People


@lru_cache(maxsize=4096)
def _head_length(text: str) -> int:
    return len(prepare(re.split(r"[,:]", text, maxsplit=1)[0]).tokens)


@lru_cache(maxsize=4096)
def _person(text: str, prepared: Prepared) -> Person | None:
    """Where the given name and the surname are, if ``text`` reads as a person's name: a given
    name (or initials) first, then capitalized words, the last of which is not a word that
    makes it a thing or a place ("Victoria Falls", "Charles River")."""
    if re.search(r"[\d,:;/()\"]", text):
        return None
    words = [w for w in re.split(r"\s+", text.strip()) if w]
    tokens = prepared.tokens
    while words and fold(words[0].rstrip(".")) in TITLES:
        words = words[1:]
    while words and fold(words[-1].rstrip(".")) in _SUFFIXES:
        words = words[:-1]
    if not words or len(words) > 5 or any(t.has_digit for t in tokens):
        return None  # "Louis XIV", "Henry VIII": a regnal name has no surname
    if len(words) > 1 and len(words[-1].strip(".")) == 1:
        return None  # "Elizabeth I"
    first = fold(words[0].rstrip(".")).split("-")[0]  # "Jean-Paul"
    initials = bool(re.fullmatch(r"(?:[A-Z]\.\s?)+|[A-Z]{2,3}", words[0]))
    if first not in lexicon.given_names() and not initials:
        return None
    if any(re.search(r"['’]s$", word) for word in words[:-1]):
        return None  # "Hans Memling's The Last Judgment" is a work
    if any(fold(word) in FILLER for word in words[1:] if word[:1].isupper()):
        return None  # a capitalized "The" or "Of" inside: a title
    for word in words:
        bare = word.strip("'’.")
        if fold(bare) in PARTICLES or bare[:2].lower() in ("d'", "l'"):
            continue
        if not bare[:1].isupper():
            return None
    last = prepare(words[-1]).tokens
    if (
        not last
        or last[-1].text in GENERIC
        or prepare(" ".join(words[-2:])).text in (lexicon.places())
    ):
        return None
    # Locate the words among the form's tokens: the first given name and the surname.
    texts = [t.text for t in tokens]
    first_tokens = [t.text for t in prepare(words[0]).tokens]
    surname_words = [words[-1]]
    for word in reversed(words[1:-1]):
        if fold(word) in PARTICLES:
            surname_words.insert(0, word)
        else:
            break
    surname_tokens = [t.text for t in prepare(" ".join(surname_words)).tokens]
    if initials or not first_tokens:
        first_index = 0 if texts[0] not in TITLES else 1
    elif first_tokens[0] in texts:
        first_index = texts.index(first_tokens[0])
    else:
        return None
    k = len(surname_tokens)
    for start in range(len(texts) - k, first_index - 1, -1):
        if texts[start : start + k] == surname_tokens:
            if start == first_index and len(words) > 1:
                return None
            return Person(first_index, (start, start + k))
    return None
