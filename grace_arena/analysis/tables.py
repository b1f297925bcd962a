"""Column tables of model steps and buzzes, and the plain-file formats that hold them.

The analysis runs on two tables, whichever source they come from (the record, or files):

* :class:`StepTable`: one row per model step (a guess on one clue prefix), the columns of
  ``--steps steps.csv``: ``model, question_id, step, word_index, correct, confidence_logit,
  confidence_verbal`` and optionally ``category``, ``n_words`` and ``would_buzz``.
* :class:`BuzzTable`: one row per ruled buzz, the columns of ``--buzzes buzzes.csv``:
  ``question_id, team, team_kind, word_index, correct`` and optionally ``match``,
  ``player``, ``n_words``, ``clue_index``, ``n_clues``. A file written by ``grace-arena
  export --format csv`` is a valid buzz file: rows that did not take the floor
  (``outcome`` other than ``won``), rows of thrown-out tossups (``thrown_out`` true) and
  rows without a correct/incorrect ruling are skipped.

Conventions: ``correct`` is 0/1 (a float array); a missing confidence is NaN; an unknown
integer (``n_words``, ``clue_index``...) is −1; ``word_index`` is 0-based over the canonical
words and, for a step, the last word of the prefix.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BUZZ_COLUMNS",
    "STEP_COLUMNS",
    "BuzzTable",
    "StepTable",
    "read_buzzes_csv",
    "read_steps_csv",
]

#: Required columns of a steps file, in order.
STEP_COLUMNS = (
    "model",
    "question_id",
    "step",
    "word_index",
    "correct",
    "confidence_logit",
    "confidence_verbal",
)
#: Required columns of a buzzes file, in order.
BUZZ_COLUMNS = ("question_id", "team", "team_kind", "word_index", "correct")

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
ObjArray = NDArray[np.object_]


def _obj(values: Iterable[Any]) -> ObjArray:
    items = list(values)
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr


@dataclass(frozen=True)
class StepTable:
    """Model steps as columns (all arrays have the same length)."""

    model: ObjArray
    question_id: ObjArray
    step: IntArray
    word_index: IntArray
    correct: FloatArray
    confidence_logit: FloatArray
    confidence_verbal: FloatArray
    category: ObjArray  # None when unknown
    n_words: IntArray  # -1 when unknown
    would_buzz: FloatArray  # 0/1, NaN when unknown

    def __len__(self) -> int:
        return int(self.step.size)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> StepTable:
        """From dicts with the :data:`STEP_COLUMNS` keys (plus the optional ones)."""
        rows = list(rows)

        def col(name: str, default: Any = None) -> list[Any]:
            return [r.get(name, default) for r in rows]

        def floats(name: str) -> FloatArray:
            return np.array([math.nan if v is None else float(v) for v in col(name)], dtype=float)

        return cls(
            model=_obj(str(v) for v in col("model")),
            question_id=_obj(str(v) for v in col("question_id")),
            step=np.array(col("step"), dtype=np.int64),
            word_index=np.array(col("word_index"), dtype=np.int64),
            correct=np.array([1.0 if v else 0.0 for v in col("correct")], dtype=float),
            confidence_logit=floats("confidence_logit"),
            confidence_verbal=floats("confidence_verbal"),
            category=_obj(col("category")),
            n_words=np.array([-1 if v is None else int(v) for v in col("n_words")], dtype=np.int64),
            would_buzz=floats("would_buzz"),
        )

    @classmethod
    def empty(cls) -> StepTable:
        return cls.from_rows([])

    def take(self, index: NDArray[Any]) -> StepTable:
        """The rows at ``index`` (an index array or boolean mask)."""
        return StepTable(**{f: getattr(self, f)[index] for f in self.__dataclass_fields__})

    def rows(self) -> list[dict[str, Any]]:
        """Plain dicts (NaN/−1/None for unknown values), for writing and for tests."""
        out = []
        for i in range(len(self)):
            out.append(
                {
                    "model": self.model[i],
                    "question_id": self.question_id[i],
                    "step": int(self.step[i]),
                    "word_index": int(self.word_index[i]),
                    "correct": int(self.correct[i]),
                    "confidence_logit": _none_if_nan(self.confidence_logit[i]),
                    "confidence_verbal": _none_if_nan(self.confidence_verbal[i]),
                    "category": self.category[i],
                    "n_words": None if self.n_words[i] < 0 else int(self.n_words[i]),
                    "would_buzz": None
                    if math.isnan(self.would_buzz[i])
                    else int(self.would_buzz[i]),
                }
            )
        return out


@dataclass(frozen=True)
class BuzzTable:
    """Ruled buzzes as columns, plus which questions each team heard.

    ``heard`` lists ``(match, team, question_id)`` for every question a team heard (its
    denominator in the buzz-rate curves and the player scores). When it is not given it is
    derived from the buzzes: every team of a match heard every question of that match that
    appears in the table.
    """

    question_id: ObjArray
    team: ObjArray
    team_kind: ObjArray  # "human" | "model"
    match: ObjArray  # "" when the source has no matches
    player: ObjArray  # the team name when unknown
    word_index: IntArray
    correct: FloatArray
    n_words: IntArray  # -1 when unknown
    clue_index: IntArray  # -1 when unknown
    n_clues: IntArray  # -1 when unknown
    heard: tuple[tuple[str, str, str], ...] = field(default=())

    def __len__(self) -> int:
        return int(self.word_index.size)

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Mapping[str, Any]],
        *,
        heard: Iterable[tuple[str, str, str]] | None = None,
        also_heard_from: Iterable[Mapping[str, Any]] = (),
    ) -> BuzzTable:
        """From dicts with the :data:`BUZZ_COLUMNS` keys (plus the optional ones).

        Without ``heard``, it is derived from ``rows`` and ``also_heard_from`` (rows that
        tell who played which question without being ruled buzzes).
        """
        rows = list(rows)

        def col(name: str, default: Any = None) -> list[Any]:
            return [r.get(name, default) for r in rows]

        def ints(name: str) -> IntArray:
            return np.array([-1 if v is None else int(v) for v in col(name)], dtype=np.int64)

        teams = [str(v) for v in col("team")]
        players = [
            str(p) if p not in (None, "") else t for p, t in zip(col("player"), teams, strict=False)
        ]
        matches = ["" if v is None else str(v) for v in col("match")]
        table = cls(
            question_id=_obj(str(v) for v in col("question_id")),
            team=_obj(teams),
            team_kind=_obj(str(v) for v in col("team_kind")),
            match=_obj(matches),
            player=_obj(players),
            word_index=np.array(col("word_index"), dtype=np.int64),
            correct=np.array([1.0 if v else 0.0 for v in col("correct")], dtype=float),
            n_words=ints("n_words"),
            clue_index=ints("clue_index"),
            n_clues=ints("n_clues"),
        )
        if heard is None:
            extra = [
                (
                    "" if r.get("match") is None else str(r["match"]),
                    str(r["team"]),
                    str(r["question_id"]),
                )
                for r in also_heard_from
            ]
            heard = derive_heard(
                [*zip(matches, teams, table.question_id.tolist(), strict=False), *extra]
            )
        return cls(**{**table.__dict__, "heard": tuple(sorted(set(heard)))})

    @classmethod
    def empty(cls) -> BuzzTable:
        return cls.from_rows([], heard=())

    @cached_property
    def heard_columns(self) -> tuple[ObjArray, ObjArray, ObjArray]:
        """``heard`` as three columns: match, team, question id (computed once)."""
        if not self.heard:
            empty = np.empty(0, dtype=object)
            return empty, empty, empty
        heard = np.array(self.heard, dtype=object)
        return heard[:, 0], heard[:, 1], heard[:, 2]

    def team_kinds(self) -> dict[str, str]:
        return dict(zip(self.team.tolist(), self.team_kind.tolist(), strict=True))

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "match": self.match[i],
                "question_id": self.question_id[i],
                "team": self.team[i],
                "team_kind": self.team_kind[i],
                "player": self.player[i],
                "word_index": int(self.word_index[i]),
                "correct": int(self.correct[i]),
                "n_words": None if self.n_words[i] < 0 else int(self.n_words[i]),
                "clue_index": None if self.clue_index[i] < 0 else int(self.clue_index[i]),
                "n_clues": None if self.n_clues[i] < 0 else int(self.n_clues[i]),
            }
            for i in range(len(self))
        ]


def derive_heard(triples: Iterable[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """Every team of a match heard every question of that match: the cross product per match."""
    teams: dict[str, set[str]] = {}
    questions: dict[str, set[str]] = {}
    for match, team, question in triples:
        teams.setdefault(match, set()).add(team)
        questions.setdefault(match, set()).add(question)
    return {(m, t, q) for m in teams for t in teams[m] for q in questions[m]}


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


# ---------------------------------------------------------------------------------------
# CSV files
# ---------------------------------------------------------------------------------------


class FileFormatError(ValueError):
    """A steps or buzzes file cannot be read; the message names the file, line and column."""


def _read_csv(path: Path, required: Sequence[str]) -> tuple[list[str], Iterable[dict[str, str]]]:
    handle = path.open(newline="", encoding="utf-8")
    reader = csv.DictReader(handle)
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in required if c not in header]
    if missing:
        handle.close()
        raise FileFormatError(
            f"{path}: missing column(s) {', '.join(missing)} (header: {', '.join(header)})"
        )
    reader.fieldnames = header

    def rows() -> Iterable[dict[str, str]]:
        with handle:
            yield from reader

    return header, rows()


def _read_parquet(
    path: Path, required: Sequence[str]
) -> tuple[list[str], Iterable[dict[str, str]]]:
    """A Parquet file's rows as text cells (null: empty), checked like a CSV file's, so both
    formats go through the same cell checks; row n is reported as line n + 1."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        raise FileFormatError(f"{path}: not a readable Parquet file ({exc})") from None
    header = [str(name) for name in table.column_names]
    missing = [c for c in required if c not in header]
    if missing:
        raise FileFormatError(
            f"{path}: missing column(s) {', '.join(missing)} (header: {', '.join(header)})"
        )
    columns = [table.column(name).to_pylist() for name in header]

    def text(value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        if isinstance(value, bool):
            return "1" if value else "0"
        return str(value)

    def rows() -> Iterable[dict[str, str]]:
        for values in zip(*columns, strict=True):
            yield {name: text(v) for name, v in zip(header, values, strict=True)}

    return header, rows()


def _read_rows(path: Path, required: Sequence[str]) -> tuple[list[str], Iterable[dict[str, str]]]:
    """The rows of a CSV file, or of a Parquet file (``.parquet`` or ``.pq``)."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return _read_parquet(path, required)
    return _read_csv(path, required)


def _cell(path: Path, line: int, column: str, value: str | None, kind: str) -> Any:
    text = (value or "").strip()
    if text == "":
        return None
    try:
        if kind == "int":
            return int(float(text)) if "." in text or "e" in text.lower() else int(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            lowered = text.lower()
            if lowered in ("1", "true", "yes", "1.0"):
                return 1
            if lowered in ("0", "false", "no", "0.0"):
                return 0
            raise ValueError(text)
    except ValueError:
        raise FileFormatError(
            f"{path}, line {line}: column {column!r} must be "
            f"{ {'int': 'an integer', 'float': 'a number', 'bool': '0 or 1'}[kind] }, "
            f"got {text!r}"
        ) from None
    return text


def _fast_steps(path: Path) -> StepTable | None:
    """Column-wise parse of a well-formed steps file; None if any cell needs a closer look
    (then the row-by-row reader finds it and names its line)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = [h.strip() for h in next(reader, [])]
        data = list(reader)
    if not data:
        return None
    try:
        cols = dict(zip(header, zip(*data, strict=True), strict=True))
    except ValueError:
        return None  # a row with a different number of cells

    def floats(name: str, *, blank: str = "nan") -> FloatArray:
        values = cols.get(name)
        if values is None:  # an optional column that is absent: every cell blank
            return np.full(len(data), float(blank))
        arr = np.array(values, dtype=object)
        arr[arr == ""] = blank
        return arr.astype(float)

    try:
        step, word = floats("step", blank="x"), floats("word_index", blank="x")
        correct, would = floats("correct", blank="x"), floats("would_buzz")
        logit, verbal = floats("confidence_logit"), floats("confidence_verbal")
        n_words = floats("n_words", blank="-1")
    except ValueError:
        return None
    ints = np.concatenate([step, word, n_words])
    known_would = would[~np.isnan(would)]
    confs = np.concatenate([logit, verbal])
    confs = confs[~np.isnan(confs)]
    if (
        np.any(ints != np.round(ints))
        or np.any((correct != 0) & (correct != 1))
        or np.any((known_would != 0) & (known_would != 1))
        or np.any((confs < 0) | (confs > 1))
    ):
        return None
    category = cols.get("category")
    return StepTable(
        model=_obj(cols["model"]),
        question_id=_obj(cols["question_id"]),
        step=step.astype(np.int64),
        word_index=word.astype(np.int64),
        correct=correct,
        confidence_logit=logit,
        confidence_verbal=verbal,
        category=_obj((c.strip() or None) for c in category)
        if category is not None
        else _obj([None] * len(data)),
        n_words=n_words.astype(np.int64),
        would_buzz=would,
    )


def read_steps_csv(path: str | Path) -> StepTable:
    """Read a steps file, CSV or Parquet (columns :data:`STEP_COLUMNS`, optional
    ``category``, ``n_words``, ``would_buzz``). An empty confidence is missing; ``correct``
    must be 0 or 1."""
    path = Path(path)
    _, rows = _read_rows(path, STEP_COLUMNS)
    if path.suffix.lower() not in (".parquet", ".pq"):
        for _ in rows:  # the header is right and there is at least one row: try the fast way
            fast = _fast_steps(path)
            if fast is not None:
                return fast
            break
        _, rows = _read_rows(path, STEP_COLUMNS)
    out = []
    for line, row in enumerate(rows, start=2):
        rec: dict[str, Any] = {"model": row["model"], "question_id": row["question_id"]}
        for name in ("step", "word_index"):
            rec[name] = _cell(path, line, name, row[name], "int")
            if rec[name] is None:
                raise FileFormatError(f"{path}, line {line}: column {name!r} is empty")
        rec["correct"] = _cell(path, line, "correct", row["correct"], "bool")
        if rec["correct"] is None:
            raise FileFormatError(f"{path}, line {line}: column 'correct' is empty")
        for name in ("confidence_logit", "confidence_verbal"):
            value = _cell(path, line, name, row[name], "float")
            if value is not None and not 0.0 <= value <= 1.0:
                raise FileFormatError(
                    f"{path}, line {line}: {name} must lie in [0, 1], got {value!r}"
                )
            rec[name] = value
        rec["category"] = (row.get("category") or "").strip() or None
        rec["n_words"] = _cell(path, line, "n_words", row.get("n_words"), "int")
        rec["would_buzz"] = _cell(path, line, "would_buzz", row.get("would_buzz"), "bool")
        out.append(rec)
    return StepTable.from_rows(out)


def read_buzzes_csv(path: str | Path) -> BuzzTable:
    """Read a buzzes file, CSV or Parquet (columns :data:`BUZZ_COLUMNS`, optional
    ``match``, ``player``, ``n_words``, ``clue_index``, ``n_clues``, and the export's
    ``outcome``/``thrown_out``)."""
    path = Path(path)
    _, rows = _read_rows(path, BUZZ_COLUMNS)
    kept: list[dict[str, Any]] = []
    played: list[dict[str, Any]] = []
    for line, row in enumerate(rows, start=2):
        if _cell(path, line, "thrown_out", row.get("thrown_out"), "bool"):
            continue
        kind = (row["team_kind"] or "").strip()
        if kind not in ("human", "model"):
            raise FileFormatError(
                f"{path}, line {line}: team_kind must be 'human' or 'model', got {kind!r}"
            )
        rec: dict[str, Any] = {
            "question_id": row["question_id"],
            "team": row["team"],
            "team_kind": kind,
            "match": (row.get("match") or "").strip(),
            "player": (row.get("player") or "").strip() or None,
        }
        played.append(rec)
        outcome = (row.get("outcome") or "won").strip()
        correct = _cell(path, line, "correct", row["correct"], "bool")
        if outcome != "won" or correct is None:
            continue
        rec = dict(rec)
        rec["correct"] = correct
        rec["word_index"] = _cell(path, line, "word_index", row["word_index"], "int")
        if rec["word_index"] is None:
            raise FileFormatError(f"{path}, line {line}: column 'word_index' is empty")
        for name in ("n_words", "clue_index", "n_clues"):
            rec[name] = _cell(path, line, name, row.get(name), "int")
        kept.append(rec)
    return BuzzTable.from_rows(kept, also_heard_from=played)
