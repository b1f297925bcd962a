"""Quizbowl answer lines: ``Main Answer [or Alt; accept X; prompt on Y; do not accept Z]``.

:func:`parse_answer_line` turns a line into accept, prompt and reject forms and flags; see the
package's documentation for the rules.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

import ftfy

from grace_arena.core.judge.text import FILLER, normalize


class Directive(StrEnum):
    """A ruling: accept, prompt (ask for more) or reject."""

    ACCEPT = "accept"
    PROMPT = "prompt"
    REJECT = "reject"


Partials = tuple[tuple[str, str], ...]  # (underlined part, whole word): "<u>hippo</u>potamus"


@dataclass(frozen=True)
class PromptRule:
    """An answer to prompt on, and the question to ask when the prompt is directed."""

    answer: str
    question: str | None  # a directed prompt's question ("which one?"), else None
    required: tuple[str, ...] = ()  # the <b>/<u> parts of ``answer``, if marked
    partials: Partials = field(default=(), compare=False)
    source: str = field(default="prompt clause", compare=False)  # where the line says so


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
    # Why each accept form is there ("main answer", "accept clause", ...), for explanations.
    accept_sources: tuple[str, ...] = field(default=(), compare=False)
    accept_partials: tuple[Partials, ...] = field(default=(), compare=False)
    formatted: bool = field(default=False, compare=False)  # any <b>/<u> in the line


# ---------------------------------------------------------------------------------------------
# Marks

_OPEN, _CLOSE = "\x02", "\x03"  # required-part markers while parsing
_ITALIC_OPEN, _ITALIC_CLOSE = "\x04", "\x05"  # a title in italics: its commas are its own
_PLACEHOLDER = "\x00"  # brackets a group's number where the group was cut out
_MARKS = (_OPEN, _CLOSE, _ITALIC_OPEN, _ITALIC_CLOSE)
_REQUIRED_TAG = re.compile(r"<\s*(/?)\s*(?:b|u|strong|ins)\s*(?:\s[^<>]*)?>", re.IGNORECASE)
_ITALIC_TAG = re.compile(r"<\s*(/?)\s*(?:i|em|cite)\s*(?:\s[^<>]*)?>", re.IGNORECASE)
_OTHER_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][^<>]*>")
_QUOTES = str.maketrans(
    {"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "’": "'", "‘": "'", "{": "[", "}": "]"}
)
# UTF-8 read as Windows-1252 ("PellÃ©as"): a lead byte's letter followed by a continuation's.
_MOJIBAKE = re.compile(
    "[\u00c2-\u00ef][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6"
    "\u02dc\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]"
)


_WORD = re.compile(r"\w")
_QUOTED_SPAN = re.compile(r'"[^"]*"')
_SPACES = re.compile(r"\s+")
_FINAL_DOT = re.compile(r"(?<=\w\w)\.$")
_EDGE_QUOTES = re.compile(r"^[\"']+|[\"']+$")


def _mark_required(text: str) -> str:
    for reserved in (*_MARKS, _PLACEHOLDER):  # the parser's own marks, never the writer's
        text = text.replace(reserved, " ")
    if _MOJIBAKE.search(text):  # packets converted twice are common in old question sets
        text = ftfy.fix_encoding(text)
    text = _REQUIRED_TAG.sub(lambda m: _CLOSE if m.group(1) else _OPEN, text)
    text = _ITALIC_TAG.sub(lambda m: _ITALIC_CLOSE if m.group(1) else _ITALIC_OPEN, text)
    text = _OTHER_TAG.sub("", text)
    text = html.unescape(text).translate(_QUOTES)
    return text.replace("\xa0", " ")


def strip_marks(text: str) -> str:
    for mark in _MARKS:
        text = text.replace(mark, "")
    return text


def _strip_required(text: str) -> str:
    return text.replace(_OPEN, "").replace(_CLOSE, "")


# ---------------------------------------------------------------------------------------------
# Groups: [...] and (...)


@dataclass(frozen=True)
class _Group:
    content: str
    bracket: str  # "[" or "("
    trailing: bool  # nothing but spaces/punctuation follows it


def _split_groups(text: str) -> tuple[str, list[_Group]]:
    """Cut top-level bracket groups out of ``text``.

    Returns the main text, with a placeholder ``\\x00<n>\\x00`` where group ``n`` was (so optional
    words keep their place), and the groups.
    """
    if "[" not in text and "(" not in text and "]" not in text and ")" not in text:
        return text, []
    main: list[str] = []
    groups: list[tuple[str, str, int]] = []  # (content, bracket, end offset)
    i = 0
    while i < len(text):
        char = text[i]
        if char in "[(":
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
        _Group(content, bracket, not _WORD.search(text[end:])) for content, bracket, end in groups
    ]
    return "".join(main), parsed


_DIRECTIVE_START = re.compile(
    r"^\s*(?:or\b|accept|also\b|but\b|prompt|anti-?\s?prompt|reject|do\s+not|don'?t|not\s+"
    r"accept|allow\b)",
    re.IGNORECASE,
)


def _is_directive_group(group: _Group) -> bool:
    first = strip_marks(group.content).split(";")[0]
    if _DIRECTIVE_START.match(first):
        return True
    return group.bracket == "[" and group.trailing


def _is_note(group: _Group) -> bool:
    """An editor's note or a pronunciation guide, not part of any answer."""
    plain = strip_marks(group.content).strip()
    if re.fullmatch(r'"[^"]*"', plain):  # ("doo-BOISS")
        return True
    return group.trailing and (len(plain.split()) > 4 or bool(re.search(r"[.:]", plain)))


# ---------------------------------------------------------------------------------------------
# Forms


def _clean_form(text: str) -> str:
    text = strip_marks(text)
    text = _SPACES.sub(" ", text).strip()
    text = _FINAL_DOT.sub("", text.strip(" ,;:")).strip()
    text = _EDGE_QUOTES.sub("", text).strip()
    return text


def _required_runs(text: str) -> tuple[tuple[str, ...], Partials]:
    """The marked runs of ``text``, each widened to whole words (``<b>fir</b>es`` -> ``fires``),
    and the runs that mark only part of one word, with that word (``("fir", "fires")``)."""
    if _OPEN not in text:
        return (), ()
    plain: list[str] = []
    mask: list[bool] = []
    depth = 0
    for char in strip_marks(text.replace(_OPEN, "\x06").replace(_CLOSE, "\x07")):
        if char == "\x06":
            depth += 1
        elif char == "\x07":
            depth = max(0, depth - 1)
        else:
            plain.append(char)
            mask.append(depth > 0)
    line = "".join(plain)
    partials: list[tuple[str, str]] = []
    for word in re.finditer(r"[\w'’]+", line):
        marked = mask[word.start() : word.end()]
        if any(marked):
            if not all(marked):
                part = "".join(c for c, m in zip(word.group(), marked, strict=True) if m)
                partials.append((part, word.group()))
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
    return tuple(run for run in cleaned if _WORD.search(run)), tuple(partials)


_OPTIONAL_GROUP = re.compile(r"\(([^()]*)\)")


def _expand_optional(text: str) -> list[str]:
    """``A (B) C`` -> [``A C``, ``A B C``]: parenthesized words that may be left out."""
    variants = [text]
    for _ in range(3):  # at most three optional groups per form
        expanded: list[str] = []
        changed = False
        for variant in variants:
            m = _OPTIONAL_GROUP.search(variant)
            if m is None or _DIRECTIVE_START.match(strip_marks(m.group(1))):
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


def _protected_spans(text: str) -> list[tuple[int, int]]:
    """Spans where a comma or an "or" belongs to one answer: quotes, marked runs, italics,
    parentheses."""
    spans = [m.span() for m in _QUOTED_SPAN.finditer(text)]
    for opener, closer in ((_OPEN, _CLOSE), (_ITALIC_OPEN, _ITALIC_CLOSE), ("(", ")")):
        start = None
        for i, char in enumerate(text):
            if char == opener and start is None:
                start = i
            elif char == closer and start is not None:
                spans.append((start, i + 1))
                start = None
    return spans


def _split_outside(text: str, pattern: re.Pattern[str], *, quotes_only: bool = True) -> list[str]:
    """Split on ``pattern`` except inside double quotes (and, unless ``quotes_only``, inside
    marked runs, italics and parentheses)."""
    spans = (
        [m.span() for m in _QUOTED_SPAN.finditer(text)] if quotes_only else _protected_spans(text)
    )
    pieces: list[str] = []
    start = 0
    for m in pattern.finditer(text):
        if any(a < m.start() < b for a, b in spans):
            continue
        pieces.append(text[start : m.start()])
        start = m.end()
    pieces.append(text[start:])
    return pieces


# ---------------------------------------------------------------------------------------------
# Clauses

_CLAUSE_RULES: tuple[tuple[re.Pattern[str], Directive], ...] = tuple(
    (re.compile(r"^\s*(?:" + pattern + r")\b[\s:,]*", re.IGNORECASE), directive)
    for pattern, directive in (
        (r"(?:do\s+not|don'?t)\s+(?:accept|allow)\s+or\s+prompt(?:\s+on)?", Directive.REJECT),
        (r"(?:do\s+not|don'?t)\s+(?:accept|allow|prompt)(?:\s+on)?", Directive.REJECT),
        (r"not\s+accept(?:ing)?", Directive.REJECT),
        (r"(?:but\s+|and\s+|also\s+)?reject", Directive.REJECT),
        (r"(?:but\s+|also\s+|and\s+)?anti-?\s?prompt(?:\s+on)?", Directive.ACCEPT),
        (r"(?:but\s+|also\s+|and\s+)?prompt(?:\s+on)?", Directive.PROMPT),
        (r"(?:but\s+|also\s+|and\s+)?(?:accept|allow)", Directive.ACCEPT),
        (r"or|also", Directive.ACCEPT),
    )
)
_ANTI_PROMPT = re.compile(r"^\s*(?:but\s+|also\s+|and\s+)?anti-?\s?prompt", re.IGNORECASE)
_PARTIAL_FLAG = re.compile(
    r"^\s*(?:also\s+)?prompt\s+(?:on\s+)?(?:a\s+|any\s+)?partial(?:\s+answers?)?\b", re.I
)
_EITHER_FLAG = re.compile(
    r"^\s*(?:accept|allow)\s+(?:either|any|both)(?:\s+of\s+the)?"
    r"(?:\s+(?:underlined|bolded|required|two))?"
    r"(?:\s+(?:parts?|portions?|names?|answers?|ones?|halves|half|words?))?"
    r"(?:\s+(?:alone|by\s+itself|individually|separately))?\s*$",
    re.IGNORECASE,
)
_EITHER_ORDER_FLAG = re.compile(r"^\s*(?:accept|allow)?\b.*\bin\s+(?:either|any)\s+order\b", re.I)
# "accept (reasonable) equivalents", "or word forms", "accept answers like X or Y"
_DESCRIBED = re.compile(
    r"^(?:(?:any|other|all|reasonable|obvious|clear|similar|specific|descriptive)\s+)*"
    r"(?P<what>equivalents?|word\s+forms?|adjectival\s+forms?|forms?\s+of\s+the\s+word|"
    r"answers?|synonyms?|variations?|variants?|descriptions?|terms?|forms?|anything)\b"
    r"\s*,?\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# What follows "answers" when the clause describes answers rather than naming one.
_DESCRIPTIVE = re.compile(
    r"^(?:$|(?:like|such\s+as|including|e\.\s?g\.|for\s+example|indicating|mentioning|about|"
    r"that|which|involving|describing|referring|containing|with|of|expressing|implying|in\s+place|"
    r"instead|to\s+that\s+effect|along|listing|naming|where)\b)",
    re.IGNORECASE,
)
_EXAMPLES = re.compile(
    r"^(?:like|such\s+as|including|e\.\s?g\.,?|for\s+example,?)\s+(?P<examples>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_IN_PLACE_OF = re.compile(
    r"^(?:(?:answers?|anything)\s+(?:containing|with|that\s+contain)\s+)?(?P<new>.+?)\s+"
    r"(?:in\s+place\s+of|instead\s+of)\s+(?P<old>\".+)$",
    re.IGNORECASE | re.DOTALL,
)
_SUCH_AS = re.compile(r"^.*?\b(?:such\s+as|e\.\s?g\.,?)\s+", re.IGNORECASE | re.DOTALL)
_DIRECTED = re.compile(
    r"(?:,?\s*\b(?:by\s+asking|and\s+ask(?:ing)?|asking)\b[\s,:]*(?:from\s+)?(?P<a>.*)$)"
    r"|(?:\s+with\s+(?P<b>[\"'].*)$)",
    re.IGNORECASE | re.DOTALL,
)
_QUOTED = re.compile(r"\"([^\"]+)\"|(?<!\w)'([^']+)'(?!\w)")
# What cuts an answer short: "before X is read", "after it is read", "alone", "even though ...".
_QUALIFIER = re.compile(
    r"\s+(?:(?:before|until)\b.*"
    r"|after\s+(?:it|they|that|mention|[\"']|the\s+word|\S+\s+(?:is|are)\s+)\b.*"
    r"|(?:alone|by\s+itself|by\s+themselves|on\s+its\s+own|specifically)\s*"
    r"|(?:even\s+though|as\s+long\s+as|if|unless)\s+.*)$",
    re.IGNORECASE | re.DOTALL,
)
_ONLY_QUALIFIER = re.compile(r"^\s*(?:after|before|until|alone|afterwards?)\b", re.IGNORECASE)
# Where a clause holds a second directive: "accept X, prompt on Y", "prompt on X but reject Y".
_BOUNDARY = re.compile(
    r"(?:\s*[,;]\s*|\s+)(?:but\s+|and\s+|then\s+)?(?="
    r"(?:do\s+not|don'?t|not)\s+(?:accept|prompt|allow)\b|(?:also\s+)?reject\b|anti-?\s?prompt\b|"
    r"prompt\s+(?:on|after|before|until|with|for)\b|(?:also\s+)?accept\b|allow\b)",
    re.IGNORECASE,
)
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|n't)\s+(?:accept|allow|prompt)(?:\s+on)?(?:\s+or)?\s*$|\bnot\s*$|\bdo(?:es)?\s*$",
    re.IGNORECASE,
)
_AS_WELL_AS = re.compile(r"\s+as\s+well\s+as\s+|\s+and\s+also\s+", re.IGNORECASE)
_OR_SPLIT = re.compile(r"\s*,?\s+or\s+", re.IGNORECASE)
_COMMA = re.compile(r"\s*,\s*")
_MAIN_OR_SPLIT = re.compile(r"\s*,?\s+or,?\s+", re.IGNORECASE)
_EITHER_SPLIT = re.compile(r"\s+(?:and|&)\s+|\s*,\s*|\s*/\s*", re.IGNORECASE)


def _subclauses(clause: str) -> list[str]:
    """A clause cut where a second directive starts without a ``;`` before it."""
    plain = clause
    quoted = [m.span() for m in _QUOTED_SPAN.finditer(plain)]
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(plain):
        if any(a < m.start() < b for a, b in quoted):
            continue
        before = plain[start : m.start()]
        if not _WORD.search(strip_marks(before)) or _NEGATED_BEFORE.search(before):
            continue
        pieces.append(before)
        start = m.end()
    pieces.append(plain[start:])
    return [piece for piece in pieces if _WORD.search(strip_marks(piece))]


def _answers(body: str) -> list[str]:
    """The answers a clause lists: split on "or", and on commas when the commas make a list
    ("A, B, or C"; or every item quoted), never inside quotes, marked runs, italics or
    parentheses (``Wilhelm II, King of Prussia`` and ``Guns, Germs, and Steel`` are one answer).
    """
    pieces = _split_outside(body, _OR_SPLIT)
    answers: list[str] = []
    for index, piece in enumerate(pieces):
        items = _split_outside(piece, _COMMA, quotes_only=False)
        bare = [re.sub(r"^\s*(?:and|or)\s+", "", item) for item in items]
        quoted = all(re.fullmatch(r'\s*"[^"]*"\s*', item) for item in bare if item.strip())
        listed = index < len(pieces) - 1 and not any(
            re.match(r"\s*(?:and|&)\s", item) for item in items[1:]
        )
        answers += bare if len(items) > 1 and (quoted or listed) else [piece]
    kept: list[str] = []
    for answer in answers:
        if _SUCH_AS.match(answer):  # "specific groups of Africans such as Igbo"
            answer = _SUCH_AS.sub("", answer, count=1)
        answer = _QUALIFIER.sub("", answer)
        if _WORD.search(strip_marks(answer)) and not _ONLY_QUALIFIER.match(answer):
            kept.append(answer)
    return kept


@dataclass
class _Builder:
    accept: list[tuple[str, tuple[str, ...], Partials, str]]  # (form, required, partials, source)
    prompt: list[PromptRule]
    reject: list[str]
    flags: set[str]
    substitutions: list[tuple[str, str]]  # (new, old): accept "new" in place of "old"
    marked: list[str] = field(default_factory=list)  # each accept form with its marks

    def add_accept(self, marked: str, source: str) -> None:
        for variant in _expand_optional(marked):
            text = _clean_form(variant)
            if text and all(text != existing for existing, *_ in self.accept):
                required, partials = _required_runs(variant)
                self.accept.append((text, required, partials, source))
                self.marked.append(variant)
                acronym = _underlined_initials(partials)
                if acronym and all(acronym != existing for existing, *_ in self.accept):
                    self.accept.append((acronym, (), (), f"the underlined initials of {text!r}"))
                    self.marked.append(acronym)

    def add_prompt(self, marked: str, question: str | None, source: str) -> None:
        for variant in _expand_optional(marked):
            text = _clean_form(variant)
            required, partials = _required_runs(variant)
            rule = PromptRule(text, question, required, partials, source)
            if text and rule not in self.prompt:
                self.prompt.append(rule)

    def add_reject(self, marked: str) -> None:
        for variant in _expand_optional(marked):
            text = _clean_form(variant)
            if text and text not in self.reject:
                self.reject.append(text)


def _underlined_initials(partials: Partials) -> str | None:
    """``NATO`` for ``<u>N</u>orth <u>A</u>tlantic <u>T</u>reaty <u>O</u>rganization``."""
    letters = [part for part, _ in partials if len(part) == 1 and part.isalpha()]
    if (
        len(letters) >= 2
        and len(letters) == len(partials)
        and all(word.startswith(part) for part, word in partials)
    ):
        return "".join(letters).upper()
    return None


def _parse_clause(clause: str, builder: _Builder) -> None:
    for sub in _subclauses(clause):
        _parse_subclause(sub, builder)


def _parse_subclause(clause: str, builder: _Builder) -> None:
    plain = strip_marks(clause)
    if _EITHER_ORDER_FLAG.match(plain):
        builder.flags.add("accept_either_order")
        clause = re.sub(r"\s*\bin\s+(?:either|any)\s+order\b", "", clause, flags=re.I)
        plain = strip_marks(clause)
        if not _WORD.search(re.sub(r"^\s*(?:accept|allow)\b", "", plain, flags=re.I)):
            return
    m = _PARTIAL_FLAG.match(plain)
    if m:
        builder.flags.add("prompt_on_partial")
        rest = re.sub(r"^\s*(?:or|and)?\s*(?:on\s+)?", "", plain[m.end() :])
        for answer in _answers(rest):  # "prompt on partial answers or on short-term memory"
            builder.add_prompt(answer, None, "prompt clause")
        return
    if _EITHER_FLAG.match(plain):
        builder.flags.add("accept_either")
        return
    directive = Directive.ACCEPT
    body = clause
    for pattern, rule_directive in _CLAUSE_RULES:
        rule = pattern.match(plain)
        if rule:
            directive = rule_directive
            body = _drop_prefix(clause, rule.end())
            if _ANTI_PROMPT.match(plain):
                builder.flags.add("anti_prompt")
            break
    parts = _split_outside(body, _AS_WELL_AS)
    for part in parts:
        if len(parts) > 1 and _EITHER_FLAG.match("accept " + strip_marks(part)):
            builder.flags.add("accept_either")  # "accept either underlined answer as well as X"
            continue
        _parse_body(part, directive, builder)


def _parse_body(body: str, directive: Directive, builder: _Builder) -> None:
    source = {
        Directive.ACCEPT: "accept clause",
        Directive.PROMPT: "prompt clause",
        Directive.REJECT: "reject clause",
    }[directive]
    if directive is Directive.ACCEPT:  # "accept either Mandela or Madiba"
        body = re.sub(r"^\s*(?:either|both)\s+(?!underlined|part)", "", body, flags=re.IGNORECASE)
    described = _DESCRIBED.match(strip_marks(body).strip())
    if described and not _DESCRIPTIVE.match(described.group("rest")):
        described = None  # "accept Answer to Job" names an answer
    subjects = False  # the subjects an "accept any answer about" clause lists
    if described:
        what = described.group("what").lower()
        if directive is Directive.ACCEPT and what.startswith("equivalent"):
            builder.flags.add("accept_equivalents")
        if directive is Directive.ACCEPT and "form" in what:
            builder.flags.add("accept_word_forms")
        rest = described.group("rest")
        examples = _EXAMPLES.match(rest) or (
            re.match(r"^of\s+(?P<examples>.*)$", rest, re.DOTALL) if "form" in what else None
        )
        if examples is None and what.startswith(("answer", "anything")):
            examples = _listed_subjects(rest)  # not "equivalents mentioning X": X is no answer
            subjects = examples is not None
        if examples is None:
            swap = _IN_PLACE_OF.match(rest)
            if swap and directive is Directive.ACCEPT:
                builder.substitutions.append(_substitution(swap))
            return  # a description ("accept any answer indicating ...") names no answer
        body = examples.group("examples")
        source = f"example given in the {source}"
    elif directive is Directive.ACCEPT:
        swap = _IN_PLACE_OF.match(strip_marks(body).strip())
        if swap:
            builder.substitutions.append(_substitution(swap))
            return
    question: str | None = None
    if directive is Directive.PROMPT:
        m = _DIRECTED.search(body)
        if m:
            asked = (m.group("a") if m.group("a") is not None else m.group("b")) or ""
            quoted = _QUOTED.search(strip_marks(asked))
            question = (quoted.group(1) or quoted.group(2)) if quoted else strip_marks(asked)
            question = question.strip(" ,;:") or None
            body = body[: m.start()]
    for answer in _answers(body):
        if subjects and _NOT_A_SUBJECT.match(strip_marks(answer).strip()):
            continue  # "... or related concepts", "or the like": a description, no answer
        if directive is Directive.ACCEPT:
            builder.add_accept(answer, source)
        elif directive is Directive.PROMPT:
            builder.add_prompt(answer, question, source)
        else:
            builder.add_reject(answer)


# "accept any answer about X, Y, or Z": the subjects named are answers. Not "indicating" or
# "describing", which introduce a statement; not a list with "and", which may ask for both.
_ABOUT = re.compile(
    r"^(?:about|mentioning|naming|regarding|concerning|involving|referring\s+to)\s+"
    r"(?!(?:that|how|why|what|whether|which|who|when|where|both|either|the\s+idea)\b)"
    r"(?P<examples>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LIST_AND = re.compile(r"\band\b|&|\bwith\b|\bplus\b", re.IGNORECASE)
# Words that turn the subjects listed into what the answer is not, or is only related to:
# "composers other than Bach or Handel", "a lack of rain or water", "not Louis or Henry".
_NOT_LISTED = re.compile(
    r"\b(?:not|nor|neither|other\s+than|rather\s+than|instead\s+of|besides|except"
    r"|excluding|without|apart\s+from|lack|absence|opposite|but)\b",
    re.IGNORECASE,
)
# A first subject that is something of another ("the children of Zeus or Hera", "Zeus's
# children or Hera") may govern the subjects after it: "Hera" may be "the children of Hera".
# A name with "of" in it ("the Reign of Terror or Robespierre") governs nothing.
_GOVERNS = re.compile(r"\b[a-z][\w-]*\s+of\b|'s\b|\u2019s\b")  # not a name: "Reign of Terror"
# A listed item that describes rather than names ("Zeus, Hera, or other gods", "or related
# concepts", "or the like", "or anything else").
_NOT_A_SUBJECT = re.compile(
    r"^(?:the\s+)?(?:other|another|related|similar|such|like|anything|something|anyone"
    r"|someone|whatever|equivalents?|synonyms?|etc|their|its|his|her|more|less|any)\b",
    re.IGNORECASE,
)
SUBJECT_WORDS = 5
"""The most words a subject named in such a clause may have: a longer one is a statement."""


def _listed_subjects(rest: str) -> re.Match[str] | None:
    """The subjects of ``accept any answer about X, Y, or Z``, when they are a list of names."""
    m = _ABOUT.match(rest)
    if (
        m is None
        or _LIST_AND.search(m.group("examples"))
        or _NOT_LISTED.search(m.group("examples"))
    ):
        return None
    subjects = _answers(m.group("examples"))
    if (
        not subjects
        or (len(subjects) > 1 and _GOVERNS.search(subjects[0]))
        or any(len(normalize(strip_marks(s)).split()) > SUBJECT_WORDS for s in subjects)
    ):
        return None
    return m


def _substitution(swap: re.Match[str]) -> tuple[str, str]:
    """(new, old) from ``"new" in place of "old" until read``."""
    old = re.sub(r"\s+(?:until|before|after)\b.*$", "", swap.group("old"), flags=re.I)
    return _clean_form(swap.group("new")), _clean_form(old)


def _drop_prefix(marked: str, length: int) -> str:
    """Drop the first ``length`` characters of ``marked`` not counting the markers."""
    seen = 0
    for index, char in enumerate(marked):
        if seen >= length:
            return marked[index:]
        if char not in _MARKS:
            seen += 1
    return ""


# ---------------------------------------------------------------------------------------------
# The line


def parse_answer_line(line: str) -> AnswerLine:
    """Parse a quizbowl answer line into accept / prompt / reject forms and flags.

    >>> parse_answer_line("<b>Moby-Dick</b> [or The Whale; prompt on whale]").accept
    ('Moby-Dick', 'The Whale')
    """
    return _parse_cached(line)


@lru_cache(maxsize=4096)
def _parse_cached(line: str) -> AnswerLine:
    marked = _mark_required(line)
    formatted = _OPEN in marked
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
    builder = _Builder([], [], [], set(), [])
    alternatives = [
        alt for alt in _split_outside(main_text, _MAIN_OR_SPLIT) if _WORD.search(strip_marks(alt))
    ]
    for index, alternative in enumerate(alternatives):
        builder.add_accept(alternative, "main answer" if index == 0 else "alternative")
    main_marked = alternatives[0] if alternatives else ""
    main_variants = _expand_optional(main_marked)
    main = _clean_form(main_variants[0])
    required, _ = _required_runs(main_variants[0])

    for group in directive_groups:
        for clause in _split_outside(group.content, re.compile(r";")):
            if _WORD.search(strip_marks(clause)):
                _parse_clause(clause, builder)

    if "accept_either" in builder.flags and main:
        _add_either_parts(main, required, builder)
    if "accept_either_order" in builder.flags:
        for form, *_ in list(builder.accept):
            halves = re.split(r"\s+(?:and|&)\s+", form, maxsplit=1)
            if len(halves) == 2:
                builder.add_accept(f"{halves[1]} and {halves[0]}", "accept in either order")
    for new, old in builder.substitutions:
        pattern = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)", re.IGNORECASE)
        for form in list(builder.marked):
            if pattern.search(form):
                replaced = pattern.sub(new.replace("\\", "\\\\"), form)
                builder.add_accept(replaced, f"accept {new!r} in place of {old!r}")

    return AnswerLine(
        raw=line,
        main=main,
        required=required,
        accept=tuple(text for text, *_ in builder.accept),
        prompt=tuple(builder.prompt),
        reject=tuple(builder.reject),
        flags=frozenset(builder.flags),
        accept_required=tuple(req for _, req, _, _ in builder.accept),
        accept_sources=tuple(source for *_, source in builder.accept),
        accept_partials=tuple(partials for _, _, partials, _ in builder.accept),
        formatted=formatted,
    )


def _add_either_parts(main: str, required: tuple[str, ...], builder: _Builder) -> None:
    """``accept either (underlined part | name)``: each required part, or each name, alone."""
    if len(required) >= 2:
        parts: list[str] = list(required)
    else:
        source = required[0] if required else main
        parts = [p for p in _EITHER_SPLIT.split(source) if _WORD.search(p)]
        if len(parts) < 2:  # one run for a whole name ("<u>Ada Lovelace</u>"), or none at all
            parts = [w for w in source.split() if normalize(w) not in FILLER]
        if len(parts) < 2:
            parts = []
    for part in parts:
        builder.add_accept(part, "accept either part")
