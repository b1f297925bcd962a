"""Question packets: the ``grace-arena-packet/1`` YAML format, its models, loader and checker.

The format is documented for writers in ``questions/README.md``; the JSON Schema generated from
the models below is committed as ``questions/packet.schema.json`` (a test keeps them equal).

Loading never stops at the first mistake: :func:`load_packet` raises one :class:`PacketError`
carrying every :class:`Problem` found, each naming the file, the tossup (id and 1-based
position) and the field, so a writer can fix a whole packet in one pass.

A question that cannot be used (a field's problem, or a question an imported file does not
hold whole: a tossup with no ANSWER line) refuses the packet. ``load_packet(path,
skip_broken=True)`` plays it without such questions instead, when nothing else is wrong; the
packet's :attr:`Packet.skipped` says which were left out, and why.
"""

from __future__ import annotations

import datetime
import difflib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from grace_arena.core import packet_layouts
from grace_arena.core.tokenize import POWER_MARK, Tokenized, tokenize
from grace_arena.resources import shipped_file

__all__ = [
    "CATEGORIES",
    "PACKET_FORMAT",
    "SAMPLE_PACKET_PATH",
    "Bonus",
    "BonusPart",
    "Packet",
    "PacketError",
    "PacketMeta",
    "Problem",
    "Tossup",
    "dump_packet",
    "load_packet",
    "packet_json_schema",
    "parse_packet",
    "validate_packet_file",
]

PACKET_FORMAT = "grace-arena-packet/1"
SAMPLE_PACKET_PATH: Path = shipped_file("questions", "sample_packet.yaml")
PACKET_SUFFIXES = (".yaml", ".yml", ".json", ".docx")

# GRACE appendix B.1 (the ACF distribution).
Category = Literal[
    "Literature",
    "History",
    "Science",
    "Fine Arts",
    "Religion",
    "Mythology",
    "Philosophy",
    "Social Science",
    "Geography",
    "Current Events",
    "Pop Culture",
    "Other Academic",
    # Not GRACE's: what a question of an imported packet (.docx, MODAQ or QB Reader JSON)
    # gets when its file names no category that maps to one of the above.
    "Uncategorized",
]
CATEGORIES: tuple[str, ...] = get_args(Category)
#: Part difficulties as packets mark them ([10e], [10m], [10h]): easy, medium, hard.
Difficulty = Literal["e", "m", "h"]
Identifier = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9._-]+$"),
    Field(description="Letters, digits, '.', '_' and '-' only.", examples=["lit-american-01"]),
]
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_TAG_RE = re.compile(r"<(/?)([A-Za-z]+)\s*>")


# --------------------------------------------------------------------------------------------
# Problems


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a packet file."""

    file: str
    tossup: str | None  # the question's id, when known (a tossup's, or a bonus's)
    field: str | None  # e.g. "answer", "clues", "packet.title"
    message: str
    position: int | None = None  # the question's 1-based position among its kind
    line: int | None = None  # 1-based line in the file, when known
    kind: Literal["tossup", "bonus"] = "tossup"  # what ``tossup`` and ``position`` name
    part: int | None = None  # a bonus part's 1-based number
    paragraph: int | None = None  # 1-based paragraph of a .docx file, when known
    #: A warning (the packet loads; e.g. a paragraph an imported file left unplaced).
    warning: bool = False

    def __str__(self) -> str:
        where = [f"{self.file}:{self.line}" if self.line is not None else self.file]
        if self.paragraph is not None:
            where.append(f"paragraph {self.paragraph}")
        if self.tossup is not None or self.position is not None:
            name = f"{self.kind} {self.tossup!r}" if self.tossup is not None else self.kind
            where.append(f"{name} (#{self.position})" if self.position is not None else name)
        if self.part is not None:
            where.append(f"part {self.part}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        if self.warning:
            where.append("warning")
        return ": ".join([*where, self.message])


class PacketError(ValueError):
    """A packet file could not be loaded; ``problems`` lists everything wrong with it."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


# --------------------------------------------------------------------------------------------
# Models


def _normalise_space(value: str) -> str:
    return " ".join(value.split())


def _answer_problem(answer: str) -> str | None:
    """Why an answer line is malformed (unbalanced brackets or <b>/<u> tags), or None."""
    stack: list[str] = []
    for ch in _TAG_RE.sub("", answer):
        if ch in _BRACKETS:
            stack.append(_BRACKETS[ch])
        elif ch in _BRACKETS.values() and (not stack or stack.pop() != ch):
            return f"unbalanced brackets: unexpected {ch!r}"
    if stack:
        return f"unbalanced brackets: missing {stack[-1]!r}"
    tags: list[str] = []
    for closing, name in _TAG_RE.findall(answer):
        name = name.lower()
        if not closing:
            tags.append(name)
        elif not tags or tags.pop() != name:
            return f"unbalanced tags: unexpected </{name}>"
    if tags:
        return f"unbalanced tags: missing </{tags[-1]}>"
    return None


@lru_cache(maxsize=4096)
def _tokens(text: str, clues: tuple[str, ...] | None) -> Tokenized:
    return tokenize(text, clues)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class PacketMeta(_Model):
    """The packet's own metadata (the ``packet:`` block)."""

    id: Identifier
    title: str = Field(min_length=1)
    author: str | None = None
    # A date when it reads as one (YAML 2026-11-22 or JSON "2026-11-22"), else free text.
    date: datetime.date | str | None = Field(default=None, union_mode="left_to_right")
    source: str | None = None
    license: str | None = None
    description: str | None = None


def _text_or_clues_schema(schema: dict[str, Any]) -> None:
    # In a file a tossup has text or clues (the model fills text in from clues).
    schema["required"] = [key for key in schema["required"] if key != "text"]
    schema["oneOf"] = [{"required": ["text"]}, {"required": ["clues"]}]


class Tossup(_Model):
    """One tossup. ``text`` is always the full text (built from ``clues`` when they are given)."""

    model_config = ConfigDict(json_schema_extra=_text_or_clues_schema)

    id: Identifier
    category: Category
    subcategory: str | None = None
    text: str = Field(
        description="The tossup text; may contain the power mark (*) and pronunciation guides. "
        "Give either text or clues, not both."
    )
    clues: list[str] | None = Field(
        default=None,
        description="Explicit clue boundaries, in reading order; the text is these joined by "
        "single spaces. Give either text or clues, not both.",
    )
    answer: str = Field(description="The answer line; <b>/<u> may mark the required part.")
    author: str | None = None
    source: str | None = None
    notes: str | None = Field(default=None, description="Notes for the moderator.")

    @model_validator(mode="before")
    @classmethod
    def _text_from_clues(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("clues"), list):
            return data
        clues = data["clues"]
        if not clues or not all(isinstance(c, str) for c in clues):
            return data  # the clues validation reports what is wrong
        joined = " ".join(_normalise_space(c) for c in clues)
        text = data.get("text")
        if text is not None and (not isinstance(text, str) or _normalise_space(text) != joined):
            raise PydanticCustomError("text_and_clues", "give either text or clues, not both")
        return {**data, "text": joined}

    @field_validator("text")
    @classmethod
    def _check_text(cls, text: str) -> str:
        text = _checked_words(text)
        if text.count(POWER_MARK) > 1:
            raise PydanticCustomError(
                "power_marks", "has {count} power marks (*); at most one is allowed",
                {"count": text.count(POWER_MARK)},
            )  # fmt: skip
        return text

    @field_validator("clues")
    @classmethod
    def _check_clues(cls, clues: list[str] | None) -> list[str] | None:
        if clues is None:
            return None
        if not clues:
            raise PydanticCustomError("no_clues", "must list at least one clue")
        clues = [_normalise_space(c) for c in clues]
        empty = [str(i) for i, c in enumerate(clues, start=1) if not tokenize(c).words]
        if empty:
            raise PydanticCustomError(
                "empty_clue", "clue #{numbers} must contain at least one word",
                {"numbers": ", #".join(empty)},
            )  # fmt: skip
        return clues

    @field_validator("answer")
    @classmethod
    def _check_answer(cls, answer: str) -> str:
        return _checked_answer(answer)

    def tokens(self) -> Tokenized:
        """The canonical words and clues of this tossup (cached)."""
        return _tokens(self.text, tuple(self.clues) if self.clues is not None else None)


def _checked_answer(answer: str) -> str:
    if not answer:
        raise PydanticCustomError("empty", "must not be empty")
    problem = _answer_problem(answer)
    if problem:
        raise PydanticCustomError("answer_format", problem)
    return answer


def _checked_words(text: str) -> str:
    text = _normalise_space(text)
    if not tokenize(text).words:
        raise PydanticCustomError("no_words", "must contain at least one word")
    return text


class BonusPart(_Model):
    """One part of a bonus: read after the lead-in (and the parts before it), answered alone."""

    text: str = Field(description="The part as read, without its value marker ([10]).")
    answer: str = Field(description="The answer line; <b>/<u> may mark the required part.")
    value: int = Field(default=10, ge=1, le=100, description="Points for a correct answer.")
    difficulty: Difficulty | None = Field(
        default=None, description="e, m or h (easy, medium, hard), as packets mark [10e]."
    )

    @field_validator("text")
    @classmethod
    def _check_text(cls, text: str) -> str:
        return _checked_words(text)

    @field_validator("answer")
    @classmethod
    def _check_answer(cls, answer: str) -> str:
        return _checked_answer(answer)

    @field_validator("difficulty", mode="before")
    @classmethod
    def _difficulty_words(cls, value: Any) -> Any:
        # "easy", "Medium", "H": what a writer types for e, m, h
        if isinstance(value, str) and value.strip().lower() in _DIFFICULTY_WORDS:
            return value.strip().lower()[0]
        return value


_DIFFICULTY_WORDS = {"e", "m", "h", "easy", "medium", "hard"}


class Bonus(_Model):
    """One bonus: a lead-in, then parts read one at a time to the team that controls it."""

    id: Identifier
    category: Category
    subcategory: str | None = None
    leadin: str = Field(
        default="", description="Read before the first part; may be empty (some bonuses have none)."
    )
    parts: list[BonusPart] = Field(min_length=1, description="In reading order; usually three.")
    author: str | None = None
    source: str | None = None
    notes: str | None = Field(default=None, description="Notes for the moderator.")

    @field_validator("leadin")
    @classmethod
    def _check_leadin(cls, leadin: str) -> str:
        return _normalise_space(leadin)

    @property
    def value(self) -> int:
        """Points for every part answered correctly (30 for the usual 3×10)."""
        return sum(part.value for part in self.parts)


class Packet(_Model):
    """A packet file: format tag, metadata and tossups in reading order."""

    model_config = ConfigDict(title="GRACE Arena packet")

    format: Literal["grace-arena-packet/1"] = Field(
        description="Format tag; exactly 'grace-arena-packet/1'."
    )
    packet: PacketMeta
    tossups: list[Tossup] = Field(min_length=1)
    bonuses: list[Bonus] = Field(
        default_factory=list,
        description="The bonuses in reading order: the next unused one follows each tossup "
        "answered correctly.",
    )
    _path: Path | None = PrivateAttr(default=None)
    #: What loading noticed without refusing the file (an imported file's unplaced paragraphs).
    _warnings: list[Problem] = PrivateAttr(default_factory=list)
    #: The problems of the questions left out when it was loaded with ``skip_broken``.
    _skipped: list[Problem] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> Packet:
        for kind, questions in (("tossup", self.tossups), ("bonus", self.bonuses)):
            counts = Counter(q.id for q in questions)
            duplicates = sorted(i for i, n in counts.items() if n > 1)
            if duplicates:
                raise PydanticCustomError(
                    "duplicate_id", "duplicate {kind} ids: {ids}",
                    {"kind": kind, "ids": ", ".join(duplicates)},
                )  # fmt: skip
        return self

    def __eq__(self, other: object) -> bool:
        # Where a packet was loaded from is not part of its content.
        if not isinstance(other, Packet):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside; never hashable

    @property
    def path(self) -> Path | None:
        """The file this packet was loaded from, if any (never written to the file)."""
        return self._path

    @property
    def id(self) -> str:
        return self.packet.id

    @property
    def warnings(self) -> list[Problem]:
        """What loading noticed without refusing the file (never written to the file)."""
        return list(self._warnings)

    @property
    def skipped(self) -> list[Problem]:
        """The problems of the questions left out by ``load_packet(..., skip_broken=True)``
        (never written to the file)."""
        return list(self._skipped)

    def skipped_counts(self) -> str | None:
        """How many questions were left out, as every screen says it ("1 tossup skipped"),
        or None when none was."""
        tossups = {p.position for p in self._skipped if p.kind == "tossup"}
        bonuses = {p.position for p in self._skipped if p.kind == "bonus"}
        said = [
            f"{n} {word if n == 1 else plural} skipped"
            for n, word, plural in (
                (len(tossups), "tossup", "tossups"),
                (len(bonuses), "bonus", "bonuses"),
            )
            if n
        ]
        return ", ".join(said) or None

    def tossup(self, tossup_id: str) -> Tossup:
        """The tossup with this id; ``KeyError`` if there is none."""
        for tossup in self.tossups:
            if tossup.id == tossup_id:
                return tossup
        raise KeyError(f"packet {self.packet.id!r} has no tossup {tossup_id!r}")

    def bonus(self, bonus_id: str) -> Bonus:
        """The bonus with this id; ``KeyError`` if there is none."""
        for bonus in self.bonuses:
            if bonus.id == bonus_id:
                return bonus
        raise KeyError(f"packet {self.packet.id!r} has no bonus {bonus_id!r}")

    def counts(self) -> str:
        """What the packet holds, as ``packet validate`` says it: "20 tossups, 20 bonuses"."""

        def n(count: int, word: str, plural: str) -> str:
            return f"{count} {word if count == 1 else plural}"

        return f"{n(len(self.tossups), 'tossup', 'tossups')}, " + n(
            len(self.bonuses), "bonus", "bonuses"
        )


def packet_json_schema() -> dict[str, Any]:
    """The JSON Schema of a packet file (committed as ``questions/packet.schema.json``)."""
    schema = Packet.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
    }


# --------------------------------------------------------------------------------------------
# Reading


class _PacketLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys and remembers where each mapping starts."""


class _Located(dict):
    """A mapping read from YAML that knows its 1-based starting line and those of its keys."""

    def __init__(self, mapping: dict, line: int, key_lines: dict[Any, int] | None = None) -> None:
        super().__init__(mapping)
        self.line = line
        self.key_lines = key_lines or {}


def _construct_mapping(loader: _PacketLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark,
                "found a list or mapping used as a key", key_node.start_mark,
            ) from None  # fmt: skip
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark,
                f"found duplicate key {key!r}", key_node.start_mark,
            )  # fmt: skip
        seen[key] = key_node
    mapping = loader.construct_mapping(node, deep=deep)
    key_lines = {key: key_node.start_mark.line + 1 for key, key_node in seen.items()}
    return _Located(mapping, node.start_mark.line + 1, key_lines)


_PacketLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _parse(text: str, file: str, suffix: str) -> tuple[Any, list[Problem]]:
    try:
        return _parse_text(text, file, suffix)
    except RecursionError:
        return None, [Problem(file, None, None, "nested too deeply to be a packet")]


def _parse_text(text: str, file: str, suffix: str) -> tuple[Any, list[Problem]]:
    if suffix == ".json":
        try:
            return json.loads(text), []
        except json.JSONDecodeError as exc:
            message = f"JSON syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            return None, [Problem(file, None, None, message, line=exc.lineno)]
    try:
        return yaml.load(text, Loader=_PacketLoader), []  # SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            return None, [Problem(file, None, None, f"YAML syntax error: {what}")]
        line, column = mark.line + 1, mark.column + 1
        kind = (
            "YAML error"
            if isinstance(exc, yaml.constructor.ConstructorError)
            else "YAML syntax error"
        )
        message = f"{kind} at line {line}, column {column}: {what}"
        if exc.context and exc.context_mark is not None and exc.context_mark is not mark:
            context = exc.context_mark
            message += f" ({exc.context} at line {context.line + 1}, column {context.column + 1})"
        return None, [Problem(file, None, None, message, line=line)]
    except yaml.YAMLError as exc:
        return None, [Problem(file, None, None, f"YAML error: {exc}")]


def _tossup_name(data: Any, index: int, key: str = "tossups") -> str | None:
    """The id of the ``index``-th question under ``key`` (tossups or bonuses), when it has one."""
    questions = data.get(key) if isinstance(data, dict) else None
    raw = questions[index] if isinstance(questions, list) and index < len(questions) else None
    if isinstance(raw, dict):
        question_id = raw.get("id")
        if isinstance(question_id, str | int) and not isinstance(question_id, bool):
            return str(question_id)
    return None


def _line_of(container: Any, key: Any = None) -> int | None:
    """The line where ``container`` (or its ``key``, when given and known) starts."""
    if key is not None and key in getattr(container, "key_lines", {}):
        return container.key_lines[key]
    return getattr(container, "line", None)


def _message(error: Any, model: type[BaseModel] | None, field: str | None) -> str:
    kind = error["type"]
    if kind == "missing":
        if field == "text" and model is Tossup:
            return "required: give the tossup text (or its clues)"
        if field == "parts" and model is Bonus:
            return "required: give the bonus's parts"
        return "required field is missing"
    if kind == "extra_forbidden":
        allowed = list(model.model_fields) if model is not None else []
        guess = difflib.get_close_matches(field or "", allowed, n=1)
        hint = f"; did you mean {guess[0]!r}?" if guess else ""
        return f"unknown key{hint} (allowed: {', '.join(allowed)})"
    if kind == "literal_error" and field == "category":
        given = str(error.get("input"))
        guess = difflib.get_close_matches(given, CATEGORIES, n=1, cutoff=0.5) or [
            c for c in CATEGORIES if c.lower() == given.lower()
        ]
        hint = f"; did you mean {guess[0]!r}?" if guess else ""
        return f"{given!r} is not a GRACE category{hint} (one of: {', '.join(CATEGORIES)})"
    if kind == "literal_error" and field == "format":
        return f"must be exactly {PACKET_FORMAT!r}"
    if kind == "string_pattern_mismatch":
        return f"{error.get('input')!r} may contain only letters, digits, '.', '_' and '-'"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "too_short" and field == "tossups":
        return "must list at least one tossup"
    if kind == "too_short" and field == "parts":
        return "must list at least one part"
    if kind == "literal_error" and field == "difficulty":
        return f"{error.get('input')!r} is not a difficulty (one of: e, m, h)"

    if kind == "string_type":
        return f"must be a string, not {type(error.get('input')).__name__} (quote it in YAML)"
    if kind in {"list_type", "model_type", "dict_type", "model_attributes_type"}:
        expected = "a list" if kind == "list_type" else "a mapping of keys to values"
        return f"must be {expected}, not {type(error.get('input')).__name__}"
    message = str(error["msg"])
    return message[:1].lower() + message[1:]


def _problems_from_validation(file: str, data: Any, exc: ValidationError) -> Iterator[Problem]:
    for error in exc.errors():
        loc = list(error["loc"])
        if error["type"] in {"duplicate_id", "text_and_clues"}:
            continue  # reported from the raw data by _cross_checks, with the right position
        tossup = position = None
        prefix = ""
        model: type[BaseModel] | None = Packet
        line = _line_of(data)
        field: str | None
        if loc[:1] == ["tossups"] and len(loc) >= 2 and isinstance(loc[1], int):
            index = loc[1]
            tossup, position, model = _tossup_name(data, index), index + 1, Tossup
            raw = data["tossups"][index]
            rest = loc[2:]
            field = str(rest[0]) if rest else None
            line = _line_of(raw, field) or line
            if field == "text" and isinstance(raw, dict) and "text" not in raw and "clues" in raw:
                if error["type"] == "missing":
                    continue  # the clues were unusable; their own error says why
                field = "clues"  # the text was built from the clues
            if field == "clues" and len(rest) > 1 and isinstance(rest[1], int):
                prefix = f"clue #{rest[1] + 1}: "
        elif loc[:1] == ["bonuses"] and len(loc) >= 2 and isinstance(loc[1], int):
            index = loc[1]
            tossup, position, model = _tossup_name(data, index, "bonuses"), index + 1, Bonus
            raw = data["bonuses"][index]
            rest = loc[2:]
            field = str(rest[0]) if rest else None
            line = _line_of(raw, field) or line
            if field == "parts" and len(rest) > 1 and isinstance(rest[1], int):
                parts = raw.get("parts") if isinstance(raw, dict) else None
                part_raw = parts[rest[1]] if isinstance(parts, list) else None
                field = str(rest[2]) if len(rest) > 2 else None
                model = BonusPart
                line = _line_of(part_raw, field) or line
                name = field
                message = _message(error, model, name)
                yield Problem(
                    file, tossup, field, message, position, line, kind="bonus", part=rest[1] + 1
                )
                continue
            name = field
            yield Problem(
                file, tossup, field, _message(error, model, name), position, line, kind="bonus"
            )
            continue
        elif loc[:1] == ["packet"]:
            model = PacketMeta if len(loc) > 1 else Packet
            line = _line_of(data.get("packet"), loc[1] if len(loc) > 1 else None) or line
            field = ".".join(str(p) for p in loc)
        else:
            field = ".".join(str(p) for p in loc) or None
            line = _line_of(data, loc[0] if loc else None)
        name = field.rsplit(".", 1)[-1] if field else None
        message = prefix + _message(error, model, name)
        yield Problem(file, tossup, field, message, position, line)


def _cross_checks(file: str, data: Any) -> tuple[Any, list[Problem]]:
    """Rules spanning several keys, checked on the raw data so that they are reported even when
    other fields of the same tossup are wrong. Returns the data with the offending ``text``
    keys removed (so the rest of each tossup is still checked) and the problems found."""
    problems: list[Problem] = []
    tossups = data.get("tossups")
    if not isinstance(tossups, list):
        return data, problems
    cleaned = []
    for index, raw in enumerate(tossups):
        if isinstance(raw, dict) and "text" in raw and "clues" in raw:
            name, line = _tossup_name(data, index), _line_of(raw, "text")
            message = "give either text or clues, not both"
            problems.append(Problem(file, name, "text", message, index + 1, line))
            raw = _Located(
                {k: v for k, v in raw.items() if k != "text"},
                _line_of(raw) or 0,
                getattr(raw, "key_lines", None),
            )
        cleaned.append(raw)
    for key, kind in (("tossups", "tossup"), ("bonuses", "bonus")):
        questions = data.get(key)
        if not isinstance(questions, list):
            continue
        first: dict[str, int] = {}
        for index in range(len(questions)):
            question_id = _tossup_name(data, index, key)
            if question_id is None:
                continue
            if question_id in first:
                message = f"duplicate id (also used by {kind} #{first[question_id] + 1})"
                line = _line_of(questions[index], "id")
                problems.append(
                    Problem(file, question_id, "id", message, index + 1, line, kind=kind)  # type: ignore[arg-type]
                )
            else:
                first[question_id] = index
    cleaned_data = _Located(
        {**data, "tossups": cleaned}, _line_of(data) or 1, getattr(data, "key_lines", None)
    )
    return cleaned_data, problems


def _check_text(
    text: str, file: str, suffix: str, stem: str = "packet", *, skip_broken: bool = False
) -> tuple[Packet | None, list[Problem]]:
    if not text.strip():
        return None, [Problem(file, None, None, "file is empty")]
    data, problems = _parse(text, file, suffix)
    if problems:
        return None, problems
    if data is None:
        return None, [Problem(file, None, None, "file is empty (no YAML document)")]
    if packet_layouts.is_question_json(data):  # MODAQ's (YAPP's) or QB Reader's
        imported = packet_layouts.from_question_json(data, stem)
        return _check_imported(imported, file, skip_broken=skip_broken)
    packet, problems = _check_data(data, file)
    if packet is None and skip_broken:
        return _without_broken(data, file, problems)
    return packet, problems


def _check_data(data: Any, file: str) -> tuple[Packet | None, list[Problem]]:
    if not isinstance(data, dict):
        message = f"must be a mapping with keys format, packet, tossups; got {type(data).__name__}"
        return None, [Problem(file, None, None, message)]
    data, problems = _cross_checks(file, data)
    try:
        packet = Packet.model_validate(data)
    except ValidationError as exc:
        problems.extend(_problems_from_validation(file, data, exc))
        packet = None
    return (None if problems else packet), _sorted(problems)


_LISTS = {"tossup": "tossups", "bonus": "bonuses"}


def _check_imported(
    imported: packet_layouts.Imported, file: str, *, skip_broken: bool = False
) -> tuple[Packet | None, list[Problem]]:
    """A foreign packet read into our data, checked as ours; each problem (and warning) named
    by the paragraph its question starts at, when the file has paragraphs. A question the
    reader could not read whole is a problem too (said as the reader saw it, not as the empty
    field it left); with ``skip_broken``, the questions with problems are left out when
    nothing else is wrong (:func:`_without_broken`)."""
    packet, problems = _check_data(imported.data, file)
    errors = [
        Problem(
            file,
            _tossup_name(imported.data, e.position - 1, _LISTS[e.kind])
            if e.kind and e.position
            else None,
            e.field,
            e.message,
            e.position,
            kind=e.kind or "tossup",  # type: ignore[arg-type]
            part=e.part,
            paragraph=e.paragraph,
        )
        for e in imported.errors
    ]
    explained = {(e.kind, e.position, e.part, e.field) for e in errors}
    problems = [  # (lines are those of data made here, not of the file)
        replace(p, line=None, paragraph=imported.places.get((p.kind, (p.position or 0) - 1)))
        for p in problems
        if (p.kind, p.position, p.part, p.field) not in explained
    ] + errors
    packet = packet if not errors else None
    warnings = [
        Problem(
            file,
            _tossup_name(imported.data, w.position - 1, _LISTS[w.kind])
            if w.kind and w.position
            else None,
            None,
            w.message,
            w.position,
            kind=w.kind or "tossup",  # type: ignore[arg-type]
            part=w.part,
            paragraph=w.paragraph,
            warning=True,
        )
        for w in imported.warnings
    ]
    if packet is None and skip_broken:
        packet, _ = _without_broken(imported.data, file, _sorted(problems))
        if packet is not None:
            packet._warnings = warnings
            return packet, []
    if packet is not None:
        packet._warnings = warnings
        return packet, _sorted(problems)
    # refused: what was left unplaced is said with what is wrong (both to fix in one pass)
    return None, _sorted([*problems, *warnings])


def _without_broken(
    data: Any, file: str, problems: list[Problem]
) -> tuple[Packet | None, list[Problem]]:
    """The packet without the questions ``problems`` name, when every problem names one and
    what is left is a packet (else refused with ``problems``): its :attr:`Packet.skipped`
    says what was left out. Every other question keeps its id and place."""
    errors = [p for p in problems if not p.warning]
    if not errors or any(p.position is None for p in errors) or not isinstance(data, dict):
        return None, problems
    broken = {(p.kind, p.position - 1) for p in errors if p.position is not None}
    kept = dict(data)
    for kind, key in _LISTS.items():
        questions = data.get(key)
        if isinstance(questions, list):
            kept[key] = [q for i, q in enumerate(questions) if (kind, i) not in broken]
    packet, left = _check_data(kept, file)
    if packet is None:
        return None, problems
    packet._skipped = errors
    return packet, left


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(
        dict.fromkeys(problems),  # de-duplicated, first occurrence kept
        key=lambda p: (
            p.kind == "bonus",
            p.position or 0,
            p.position is not None,
            p.part or 0,
            p.line or 0,
        ),
    )


def _check_file(
    path: str | Path, *, skip_broken: bool = False
) -> tuple[Packet | None, list[Problem]]:
    file = str(path)
    path = Path(path)
    if not path.exists():
        return None, [Problem(file, None, None, "file not found")]
    if not path.is_file():
        return None, [Problem(file, None, None, "not a file")]
    suffix = path.suffix.lower()
    if suffix not in PACKET_SUFFIXES:
        message = f"unsupported file type {path.suffix!r}; use .yaml, .yml, .json or .docx"
        return None, [Problem(file, None, None, message)]
    if suffix == ".docx":
        try:
            paragraphs = packet_layouts.read_docx(path)
        except ValueError as exc:
            return None, [Problem(file, None, None, str(exc))]
        packet, problems = _check_imported(
            packet_layouts.from_paragraphs(paragraphs, path.stem), file, skip_broken=skip_broken
        )
        if packet is not None:
            packet._path = path
        return packet, problems
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(file, None, None, f"not UTF-8 text: {exc.reason}")]
    except OSError as exc:
        return None, [Problem(file, None, None, f"cannot read: {exc.strerror}")]
    packet, problems = _check_text(text, file, suffix, path.stem, skip_broken=skip_broken)
    if packet is not None:
        packet._path = path
    return packet, problems


def parse_packet(text: str, *, file: str = "<string>", suffix: str = ".yaml") -> Packet:
    """Parse packet text (YAML, or JSON with ``suffix=".json"``); ``PacketError`` if invalid."""
    packet, problems = _check_text(text, file, suffix)
    if packet is None:
        raise PacketError(problems)
    return packet


def load_packet(path: str | Path, *, skip_broken: bool = False) -> Packet:
    """Load and check a packet file; ``PacketError`` lists every problem found.

    ``skip_broken``: leave out each question that cannot be used (when every problem is one
    question's) rather than refuse the packet; :attr:`Packet.skipped` says which.
    """
    packet, problems = _check_file(path, skip_broken=skip_broken)
    if packet is None:
        raise PacketError(problems)
    return packet


def validate_packet_file(path: str | Path) -> list[Problem]:
    """Every problem with a packet file (empty when it is fine). Never raises for content."""
    return _check_file(path)[1]


# --------------------------------------------------------------------------------------------
# Writing


class _PacketDumper(yaml.SafeDumper):
    """Indents list items under their key, as packets are written by hand."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def packet_to_data(packet: Packet) -> dict[str, Any]:
    """The packet as plain data in file layout: unset keys left out, ``text`` omitted when the
    tossup was written as ``clues``."""
    data = packet.model_dump(mode="python", exclude_none=True)
    for tossup in data["tossups"]:
        if "clues" in tossup:
            del tossup["text"]
    if not data["bonuses"]:
        del data["bonuses"]  # a tossup-only packet is written as it was
    return data


def dump_packet(packet: Packet, path: str | Path) -> None:
    """Write ``packet`` to ``path`` (YAML, or JSON for a ``.json`` path), replacing it atomically.

    ``load_packet(path)`` gives back an equal packet.
    """
    path = Path(path)
    data = packet_to_data(packet)
    if path.suffix.lower() == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    else:
        text = yaml.dump(
            data, Dumper=_PacketDumper, sort_keys=False, allow_unicode=True, width=96, indent=2
        )
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
