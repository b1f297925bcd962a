"""The analysis' tables as pandas DataFrames, and the plain files (CSV, Parquet) that hold them.

Five tables, whichever source they come from (the record, or files):

* **steps**: one row per model step (a guess on one clue prefix), the columns of
  ``--steps``: ``model, question_id, step, word_index, correct, confidence_logit,
  confidence_verbal`` and optionally ``category``, ``n_words``, ``would_buzz`` and the policy
  behind it (``policy_confidence``, ``policy_threshold``).
* **buzzes**: one row per ruled buzz, the columns of ``--buzzes``: ``question_id, team,
  team_kind, word_index, correct`` and optionally ``match``, ``player``, ``n_words``,
  ``clue_index``, ``n_clues``, and a model team's ``model`` and ``threshold``. A file
  written by ``grace-arena export --format csv`` is a valid buzz file: rows that did not take
  the floor (``outcome`` other than ``won``), rows of thrown-out tossups (``thrown_out``
  true) and rows without a correct/incorrect ruling are skipped.
* **heard**: ``match, team, question_id`` for every question a team heard (the denominator
  of the buzz-rate curves and of the player scores), and ``team_kind`` where it is known (a
  team that heard questions but never buzzed is still a model or a human team). Files do not
  say it; it is derived: every team seen in a match heard every question seen in it
  (:func:`derive_heard`). A model team's ``model`` and ``threshold`` ride along: a team is
  keyed by its name, never by its model.
* **roster**: ``match, team, player``: who pressed a buzzer for a team in a match, a press
  that lost the race included (:func:`roster_frame`).
* **tossups**: one row per question: ``question_id`` and what is known of it
  (``packet_id``, ``tossup_id``, ``category``, ``n_words``, ``n_clues``).

Dtypes (what :func:`steps_frame` and :func:`buzzes_frame` give, whatever came in): names and
ids are pandas categoricals; ``correct`` is 0.0/1.0; a missing confidence is NaN;
``n_words``, ``clue_index`` and ``n_clues`` are nullable integers (``<NA>`` when unknown);
``would_buzz`` is 0.0/1.0 or NaN; ``match`` is ``""`` when the source has no matches and
``player`` is the team's name when unknown. ``word_index`` is 0-based over the canonical
words (the first word is 0; GRACE's buzzpoints and QBJ count from 0 too, the moderator's
screen from 1) and, for a step, the last word of the prefix.

pandas, not polars: the tables are small next to the computation (which runs on numpy arrays
in :mod:`~grace_arena.analysis.metrics`), and pandas is what scikit-learn, matplotlib and an
analyst's notebook already speak; with pyarrow it reads and writes Parquet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

__all__ = [
    "BUZZ_COLUMNS",
    "BUZZ_OPTIONAL",
    "FORMULA_STARTS",
    "HEARD_COLUMNS",
    "HEARD_OPTIONAL",
    "ROSTER_COLUMNS",
    "STEP_COLUMNS",
    "STEP_OPTIONAL",
    "STEP_POLICY",
    "TEAM_COLUMNS",
    "TOSSUP_COLUMNS",
    "BuzzTables",
    "FileFormatError",
    "buzzes_frame",
    "column_values",
    "derive_heard",
    "heard_frame",
    "read_buzz_tables",
    "read_buzzes",
    "read_steps",
    "read_table",
    "roster_frame",
    "spreadsheet_safe",
    "spreadsheet_text",
    "step_policies",
    "steps_frame",
    "tossups_frame",
    "tossups_from",
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
#: Optional columns of a steps file.
STEP_OPTIONAL = ("category", "n_words", "would_buzz")
#: Optional columns of a steps file: the buzz policy ``would_buzz`` was computed with (the
#: confidence kind and its threshold; the record stores it with each precomputed step).
STEP_POLICY = ("policy_confidence", "policy_threshold")
#: Required columns of a buzzes file, in order.
BUZZ_COLUMNS = ("question_id", "team", "team_kind", "word_index", "correct")
#: Optional columns of a buzzes file.
BUZZ_OPTIONAL = ("match", "player", "n_words", "clue_index", "n_clues")
HEARD_COLUMNS = ("match", "team", "question_id")
#: Optional columns of the heard table, for teams that never buzzed too: the team's kind and,
#: for a model team, its model and the threshold of its buzz policy (a team is one team
#: whatever its model: two teams of one model at two thresholds are two rows of every table).
HEARD_OPTIONAL = ("team_kind", "model", "threshold")
#: Columns that say what a team is (the same on every row of the team), in buzzes and heard.
TEAM_COLUMNS = HEARD_OPTIONAL
TOSSUP_COLUMNS = ("question_id", "packet_id", "tossup_id", "category", "n_words", "n_clues")
#: Columns of the roster: who pressed a buzzer for a team in a match, whatever came of it (a
#: player whose every press lost a race to another has no ruled buzz, but played).
ROSTER_COLUMNS = ("match", "team", "player")


class FileFormatError(ValueError):
    """A steps or buzzes file cannot be read; the message names the file, line and column."""


# ---------------------------------------------------------------------------------------
# Cell checks, shared by files and frames
# ---------------------------------------------------------------------------------------

_KIND_TEXT = {"int": "an integer", "float": "a number", "bool": "0 or 1"}
_TRUE = {"1", "true", "yes", "1.0"}
_FALSE = {"0", "false", "no", "0.0"}


class _Where:
    """Names a cell in error messages: a file's line (row i is line i + 2) or a frame's row."""

    def __init__(self, path: Path | None, name: str, rows: Sequence[int] | None = None) -> None:
        self.path, self.name, self.rows = path, name, rows

    def __call__(self, row: int) -> str:
        if self.rows is not None:  # the checked rows are some of the file's
            row = int(self.rows[row])
        if self.path is None:
            return f"{self.name} row {row}"
        return f"{self.path}, line {row + 2}"


def _blank(series: pd.Series) -> np.ndarray:
    if series.dtype.kind in "fiub":
        return series.isna().to_numpy()
    text = series.astype(object).where(series.notna(), "").astype(str).str.strip()
    return (text == "").to_numpy()


def _convert(series: pd.Series, column: str, kind: str, where: _Where) -> np.ndarray:
    """A column as float64 (NaN: blank), checked: the first bad cell raises, named."""
    blank = _blank(series)
    if kind == "bool":
        if series.dtype.kind == "b":
            return series.to_numpy(dtype=float)
        if series.dtype.kind in "fiu":
            values = series.to_numpy(dtype=float)
            text = None
        else:
            text = np.array([str(v).strip().lower() for v in series.astype(object).tolist()])
            values = np.where(np.isin(text, list(_TRUE)), 1.0, np.nan)
            values[np.isin(text, list(_FALSE))] = 0.0
        bad = ~blank & ~((values == 0.0) | (values == 1.0))
    else:
        if series.dtype.kind in "fiub":
            values = series.to_numpy(dtype=float, na_value=np.nan)
        else:
            stripped = series.astype(object).where(~blank, None)
            values = pd.to_numeric(
                pd.Series([None if v is None else str(v).strip() for v in stripped.tolist()]),
                errors="coerce",
            ).to_numpy(dtype=float)
        bad = ~blank & np.isnan(values)
        if kind == "int":
            bad |= ~blank & ~np.isnan(values) & (values != np.round(values))
    if bad.any():
        i = int(np.argmax(bad))
        got = series.iloc[i]
        raise FileFormatError(
            f"{where(i)}: column {column!r} must be {_KIND_TEXT[kind]}, got {str(got).strip()!r}"
        )
    return np.where(blank, np.nan, values)


def _required(values: np.ndarray, column: str, where: _Where) -> None:
    empty = np.isnan(values)
    if empty.any():
        raise FileFormatError(f"{where(int(np.argmax(empty)))}: column {column!r} is empty")


def _text(series: pd.Series | None, n: int, default: str = "") -> list[str]:
    if series is None:
        return [default] * n
    return [
        default if v is None or (isinstance(v, float) and np.isnan(v)) else str(v).strip()
        for v in series.astype(object).tolist()
    ]


def column_values(
    df: pd.DataFrame,
    column: str,
    kind: str,
    *,
    path: Path | None = None,
    name: str = "table",
    required: bool = False,
) -> np.ndarray:
    """``df[column]`` as float64 (NaN: blank, or an absent column), each cell checked as
    ``kind`` (``"int"``, ``"float"`` or ``"bool"``); the first bad cell raises
    :class:`FileFormatError` naming its line in ``path`` (or its row in ``name``)."""
    where = _Where(path, name)
    if column not in df:
        values = np.full(len(df), np.nan)
    else:
        values = _convert(df[column], column, kind, where)
    if required:
        _required(values, column, where)
    return values


def _nullable_int(values: np.ndarray) -> pd.Series:
    out = pd.array(np.where(np.isnan(values), 0, values).astype(np.int64), dtype="Int64")
    out[np.isnan(values)] = pd.NA
    return pd.Series(out)


def _missing(df: pd.DataFrame, required: Sequence[str], where: _Where) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        head = str(where.path) if where.path is not None else where.name
        raise FileFormatError(
            f"{head}: missing column(s) {', '.join(missing)} "
            f"(header: {', '.join(map(str, df.columns))})"
        )


# ---------------------------------------------------------------------------------------
# The four tables
# ---------------------------------------------------------------------------------------


def _frame(data: pd.DataFrame | Iterable[Mapping[str, Any]] | None) -> pd.DataFrame:
    if data is None:
        return pd.DataFrame()
    if isinstance(data, pd.DataFrame):
        return data.reset_index(drop=True)
    return pd.DataFrame(list(data))


def steps_frame(
    data: pd.DataFrame | Iterable[Mapping[str, Any]] | None = None,
    *,
    path: Path | None = None,
) -> pd.DataFrame:
    """Model steps with the documented columns and dtypes, checked.

    ``data`` is a DataFrame or rows (dicts) with the :data:`STEP_COLUMNS` (plus any of
    ``category``, ``n_words``, ``would_buzz``); other columns are kept after them. A bad
    cell raises :class:`FileFormatError` naming it (its line when ``path`` is given).

    >>> steps_frame([{"model": "m", "question_id": "q1", "step": 0, "word_index": 9,
    ...               "correct": True, "confidence_logit": 0.8,
    ...               "confidence_verbal": None}]).dtypes["correct"]
    dtype('float64')
    """
    df = _frame(data)
    where = _Where(path, "steps")
    if df.empty and not len(df.columns):
        df = pd.DataFrame({c: [] for c in STEP_COLUMNS})
    _missing(df, STEP_COLUMNS, where)
    n = len(df)
    step = _convert(df["step"], "step", "int", where)
    word = _convert(df["word_index"], "word_index", "int", where)
    correct = _convert(df["correct"], "correct", "bool", where)
    for values, name in ((step, "step"), (word, "word_index"), (correct, "correct")):
        _required(values, name, where)
    confs = {}
    for name in ("confidence_logit", "confidence_verbal"):
        values = _convert(df[name], name, "float", where)
        bad = ~np.isnan(values) & ((values < 0.0) | (values > 1.0))
        if bad.any():
            i = int(np.argmax(bad))
            raise FileFormatError(
                f"{where(i)}: {name} must lie in [0, 1], got {float(values[i])!r} at "
                f"model={str(df['model'].iloc[i])!r} question={str(df['question_id'].iloc[i])!r}"
            )
        confs[name] = values
    n_words = (
        _convert(df["n_words"], "n_words", "int", where) if "n_words" in df else np.full(n, np.nan)
    )
    would = (
        _convert(df["would_buzz"], "would_buzz", "bool", where)
        if "would_buzz" in df
        else np.full(n, np.nan)
    )
    category = [c or None for c in _text(df.get("category"), n)]
    out = pd.DataFrame(
        {
            "model": pd.Categorical(_text(df["model"], n)),
            "question_id": pd.Categorical(_text(df["question_id"], n)),
            "step": step.astype(np.int64),
            "word_index": word.astype(np.int64),
            "correct": correct,
            "confidence_logit": confs["confidence_logit"],
            "confidence_verbal": confs["confidence_verbal"],
            "category": pd.Categorical(category),
            "n_words": _nullable_int(n_words),
            "would_buzz": would,
        }
    )
    extra = [c for c in df.columns if c not in out.columns]
    if "policy_threshold" in extra:  # checked here, where a bad cell's line is known
        df = df.assign(
            policy_threshold=_convert(df["policy_threshold"], "policy_threshold", "float", where)
        )
    return pd.concat([out, df[extra]], axis=1) if extra else out


def buzzes_frame(
    data: pd.DataFrame | Iterable[Mapping[str, Any]] | None = None,
    *,
    path: Path | None = None,
) -> pd.DataFrame:
    """Ruled buzzes with the documented columns and dtypes, checked (as :func:`steps_frame`).

    Every row is taken as a ruled buzz that took the floor; :func:`read_buzzes` is the one
    that skips the other rows of an export file.
    """
    return _buzzes_frame(_frame(data), _Where(path, "buzzes"))


def _buzzes_frame(df: pd.DataFrame, where: _Where) -> pd.DataFrame:
    if df.empty and not len(df.columns):
        df = pd.DataFrame({c: [] for c in BUZZ_COLUMNS})
    _missing(df, BUZZ_COLUMNS, where)
    n = len(df)
    kinds = _text(df["team_kind"], n)
    bad = [i for i, k in enumerate(kinds) if k not in ("human", "model")]
    if bad:
        raise FileFormatError(
            f"{where(bad[0])}: team_kind must be 'human' or 'model', got {kinds[bad[0]]!r}"
        )
    word = _convert(df["word_index"], "word_index", "int", where)
    correct = _convert(df["correct"], "correct", "bool", where)
    _required(word, "word_index", where)
    _required(correct, "correct", where)
    teams = _text(df["team"], n)
    players = [p or t for p, t in zip(_text(df.get("player"), n), teams, strict=True)]

    def ints(name: str) -> pd.Series:
        if name not in df:
            return _nullable_int(np.full(n, np.nan))
        return _nullable_int(_convert(df[name], name, "int", where))

    out = pd.DataFrame(
        {
            "match": pd.Categorical(_text(df.get("match"), n)),
            "question_id": pd.Categorical(_text(df["question_id"], n)),
            "team": pd.Categorical(teams),
            "team_kind": pd.Categorical(kinds, categories=["human", "model"]),
            "player": pd.Categorical(players),
            "word_index": word.astype(np.int64),
            "correct": correct,
            "n_words": ints("n_words"),
            "clue_index": ints("clue_index"),
            "n_clues": ints("n_clues"),
        }
    )
    extra = [c for c in df.columns if c not in out.columns]
    return pd.concat([out, df[extra]], axis=1) if extra else out


def heard_frame(data: pd.DataFrame | Iterable[Sequence[str]] | None = None) -> pd.DataFrame:
    """``match, team, question_id`` rows (categoricals), with ``team_kind`` where the data
    has it (a column, or a fourth value in each row), without duplicates."""
    if data is None:
        df = pd.DataFrame({c: [] for c in HEARD_COLUMNS})
    elif isinstance(data, pd.DataFrame):
        df = data[[*HEARD_COLUMNS, *(c for c in HEARD_OPTIONAL if c in data.columns)]]
    else:
        rows = list(data)
        width = len(rows[0]) if rows else len(HEARD_COLUMNS)
        df = pd.DataFrame(rows, columns=[*HEARD_COLUMNS, *HEARD_OPTIONAL][:width])
    df = df.copy()
    threshold = column_values(df, "threshold", "float", name="heard") if "threshold" in df else None
    if threshold is not None:
        df = df.drop(columns="threshold")
    for c in ("team_kind", "model"):  # unknown (None, NaN, a blank cell): missing, not text
        if c in df and not _is_categorical(df[c]):
            text = _text(df[c], len(df))
            df[c] = pd.Categorical([t or None for t in text])
    df = df.astype({c: str for c in df.columns if not _is_categorical(df[c])})
    df = df.astype("category")
    if threshold is not None:
        df["threshold"] = threshold
    return df.drop_duplicates(ignore_index=True)


def roster_frame(data: pd.DataFrame | Iterable[Sequence[str]] | None = None) -> pd.DataFrame:
    """``match, team, player`` rows (categoricals) without duplicates: who played for which
    team in which match (:data:`ROSTER_COLUMNS`)."""
    if data is None:
        df = pd.DataFrame({c: [] for c in ROSTER_COLUMNS})
    elif isinstance(data, pd.DataFrame):
        df = data[list(ROSTER_COLUMNS)]
    else:
        df = pd.DataFrame(list(data), columns=list(ROSTER_COLUMNS))
    n = len(df)
    teams = _text(df["team"], n)
    out = pd.DataFrame(
        {
            "match": _text(df["match"], n),
            "team": teams,
            "player": [p or t for p, t in zip(_text(df["player"], n), teams, strict=True)],
        }
    )
    return out.drop_duplicates(ignore_index=True).astype("category")


def _is_categorical(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.CategoricalDtype)


def distinct_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct non-negative integer ``keys`` in increasing order and the rows of each:
    one counting pass where they span at most a few times as many values as rows (numpy's
    ``unique`` hashes and then sorts), else ``np.unique``."""
    if keys.size and int(keys.max()) <= 4 * keys.size + 1024:
        counts = np.bincount(keys)
        present = np.flatnonzero(counts)
        return present, counts[present]
    return np.unique(keys, return_counts=True)


def derive_heard(played: pd.DataFrame) -> pd.DataFrame:
    """Every team of a match heard every question of that match: the cross product per match
    of the ``match, team, question_id`` rows given.

    >>> derive_heard(pd.DataFrame({"match": ["", ""], "team": ["A", "B"],
    ...                            "question_id": ["q1", "q2"]})).shape
    (4, 3)
    """
    columns = {
        c: played[c] if _is_categorical(played[c]) else played[c].astype("category")
        for c in HEARD_COLUMNS
    }
    # codes + 1, so that a missing value (code -1) is a value of its own
    match, team, question = (columns[c].cat.codes.to_numpy(np.int64) + 1 for c in HEARD_COLUMNS)
    n_teams, n_questions = int(team.max(initial=0)) + 1, int(question.max(initial=0)) + 1
    pairs = distinct_counts(match * n_teams + team)[0]  # each (match, team) once, by match
    t_match, t_team = pairs // n_teams, pairs % n_teams
    pairs = distinct_counts(match * n_questions + question)[0]  # each (match, question) once
    q_match, q_question = pairs // n_questions, pairs % n_questions
    # every team of a match with every question of it
    per_match = np.bincount(q_match, minlength=int(match.max(initial=0)) + 1)
    first = np.cumsum(per_match) - per_match
    times = per_match[t_match]
    within = np.arange(times.sum()) - np.repeat(np.cumsum(times) - times, times)
    codes = {
        "match": np.repeat(t_match, times),
        "team": np.repeat(t_team, times),
        "question_id": q_question[np.repeat(first[t_match], times) + within],
    }
    heard = pd.DataFrame(
        {c: pd.Categorical.from_codes(codes[c] - 1, dtype=columns[c].dtype) for c in HEARD_COLUMNS}
    )
    last = played.drop_duplicates("team", keep="last").set_index("team")
    for c in TEAM_COLUMNS:  # each team's kind, model and threshold, as its last row gives them
        if c in played.columns:
            values = heard["team"].astype(object).map(last[c].astype(object).to_dict())
            heard[c] = (
                pd.to_numeric(values, errors="coerce").astype(float)
                if c == "threshold"
                else values.astype("category")
            )
    return heard


def step_policies(steps: pd.DataFrame | None) -> dict[str, list[dict[str, Any]]]:
    """The buzz policies behind each model's ``would_buzz`` (:data:`STEP_POLICY`): per model,
    the distinct ``{"confidence", "threshold"}`` of its steps with a known ``would_buzz``
    (usually one; several when packets were precomputed under different policies). A model
    whose steps do not say is left out."""
    if steps is None or not set(STEP_POLICY) <= set(steps.columns) or "model" not in steps:
        return {}
    known = steps[steps["would_buzz"].notna()] if "would_buzz" in steps else steps
    # each (model, policy) once before anything is done per row: a million steps hold a few
    known = known[["model", *STEP_POLICY]].drop_duplicates(ignore_index=True)
    rows = pd.DataFrame(
        {
            "model": _text(known["model"], len(known)),
            "confidence": [c or None for c in _text(known["policy_confidence"], len(known))],
            "threshold": column_values(known, "policy_threshold", "float", name="steps"),
        }
    ).dropna(subset=["confidence", "threshold"])
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows.drop_duplicates().sort_values(["model", "confidence", "threshold"]).itertuples():
        out.setdefault(str(r.model), []).append(
            {"confidence": str(r.confidence), "threshold": float(r.threshold)}
        )
    return out


def tossups_frame(data: pd.DataFrame | Iterable[Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """One row per question with :data:`TOSSUP_COLUMNS` (unknown: missing)."""
    df = _frame(data)
    for c in TOSSUP_COLUMNS:
        if c not in df:
            df[c] = pd.NA
    out = df[list(TOSSUP_COLUMNS)].copy()
    out["question_id"] = out["question_id"].astype(str)
    for c in ("n_words", "n_clues"):
        out[c] = pd.array(out[c].astype("Float64"), dtype="Int64")
    for c in ("packet_id", "tossup_id", "category"):
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out.drop_duplicates("question_id").sort_values("question_id", ignore_index=True)


def tossups_from(steps: pd.DataFrame, buzzes: pd.DataFrame) -> pd.DataFrame:
    """The questions of steps and buzzes files, with what the rows tell of them (category:
    the first one a question's steps carry; lengths: the largest given)."""
    parts = []
    if len(steps):
        parts.append(
            steps[["question_id", "category", "n_words"]].astype(
                {"question_id": str, "category": object}
            )
        )
    if len(buzzes):
        b = buzzes[["question_id", "n_words", "n_clues"]].astype({"question_id": str})
        parts.append(b.assign(category=None))
    if not parts:
        return tossups_frame()
    rows = pd.concat(parts, ignore_index=True)
    for c in ("n_words", "n_clues"):
        if c not in rows:
            rows[c] = pd.NA
        rows[c] = rows[c].astype("Float64")
    grouped = rows.groupby("question_id", sort=True, observed=True)
    out = pd.DataFrame(
        {
            "question_id": grouped.size().index,
            "category": grouped["category"].first().to_numpy(),
            "n_words": grouped["n_words"].max().to_numpy(),
            "n_clues": grouped["n_clues"].max().to_numpy(),
        }
    )
    if len(steps) and "packet_id" in steps and "tossup_id" in steps:
        ids = (
            steps[["question_id", "packet_id", "tossup_id"]]
            .astype(str)
            .drop_duplicates("question_id")
        )
        out = out.merge(ids, on="question_id", how="left")
    return tossups_frame(out)


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------


#: How a cell that a spreadsheet would run as a formula begins (OWASP's list: ``=``, ``+``,
#: ``-``, ``@``, tab, carriage return). A text cell of a CSV file written here that begins so
#: gets a single quote in front (``'=HYPERLINK(…)``): a spreadsheet shows it as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _runs_in_a_spreadsheet(text: str) -> bool:
    # A text that begins with quotes before a formula's start is quoted once more, so that
    # reading a cell back (`spreadsheet_text`) takes off exactly the quote writing added.
    stripped = text.lstrip("'")
    return stripped.startswith(FORMULA_STARTS)


def spreadsheet_safe(text: str) -> str:
    """``text`` as a CSV cell that no spreadsheet runs as a formula: a single quote in front
    when it begins as one (:data:`FORMULA_STARTS`), or with quotes before that. For text
    cells only: a number (``-3``) is written as it is. :func:`spreadsheet_text` undoes it.

    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("Red")
    ("'=1+1", 'Red')
    """
    return f"'{text}" if _runs_in_a_spreadsheet(text) else text


def spreadsheet_text(cell: str) -> str:
    """The text of a cell written by :func:`spreadsheet_safe` (any other cell as it is)."""
    if cell.startswith("'") and _runs_in_a_spreadsheet(cell[1:]):
        return cell[1:]
    return cell


def read_table(path: str | Path, required: Sequence[str] = ()) -> pd.DataFrame:
    """A CSV file (every cell as text; empty cells stay empty) or a Parquet file (``.parquet``,
    ``.pq``; typed columns), with the ``required`` columns checked."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
            raise FileFormatError(f"{path}: not a readable Parquet file ({exc})") from None
    else:
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=False)
        except pd.errors.EmptyDataError:
            df = pd.DataFrame()
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise FileFormatError(f"{path}: not a readable CSV file ({exc})") from None
        df.columns = [str(c).strip() for c in df.columns]
        df = df.map(spreadsheet_text)  # a cell an export quoted (spreadsheet_safe) reads as given
    _missing(df, required, _Where(path, str(path)))
    return df


def read_steps(path: str | Path) -> pd.DataFrame:
    """Read a steps file, CSV or Parquet (:data:`STEP_COLUMNS`, optional ``category``,
    ``n_words``, ``would_buzz``). An empty confidence is missing; ``correct`` must be 0 or
    1 (``true``/``false`` too)."""
    path = Path(path)
    return steps_frame(read_table(path, STEP_COLUMNS), path=path)


class BuzzTables(NamedTuple):
    """What a buzzes file tells: the ruled buzzes, who heard what, and who played."""

    buzzes: pd.DataFrame
    heard: pd.DataFrame
    roster: pd.DataFrame


def read_buzzes(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a buzzes file, CSV or Parquet: ``(buzzes, heard)`` of :func:`read_buzz_tables`."""
    tables = read_buzz_tables(path)
    return tables.buzzes, tables.heard


def read_buzz_tables(path: str | Path) -> BuzzTables:
    """Read a buzzes file, CSV or Parquet: its buzzes, heard and roster tables.

    Rows of thrown-out tossups are left out; the others tell who heard what
    (:func:`derive_heard`) and who played (every row's player: a press that lost a race
    too); of those, the ruled buzzes that took the floor (``outcome`` is ``won`` or absent,
    ``correct`` not empty) are the buzzes.
    """
    path = Path(path)
    df = read_table(path, BUZZ_COLUMNS)
    where = _Where(path, str(path))
    n = len(df)
    thrown = (
        _convert(df["thrown_out"], "thrown_out", "bool", where)
        if "thrown_out" in df
        else np.zeros(n)
    )
    played = df[~(thrown == 1.0)]
    outcome = np.array([o or "won" for o in _text(played.get("outcome"), len(played))])
    correct_blank = _blank(played["correct"])
    ruled = played[(outcome == "won") & ~correct_blank]
    # checks (team_kind above all) run over every played row, line numbers kept
    kinds = _text(played["team_kind"], len(played))
    bad = [i for i, k in enumerate(kinds) if k not in ("human", "model")]
    if bad:
        raise FileFormatError(
            f"{where(int(played.index[bad[0]]))}: team_kind must be 'human' or 'model', "
            f"got {kinds[bad[0]]!r}"
        )
    buzzes = _buzzes_frame(ruled.reset_index(drop=True), _Where(path, str(path), ruled.index))
    seen = pd.DataFrame(
        {
            "match": _text(played.get("match"), len(played)),
            "team": _text(played["team"], len(played)),
            "question_id": _text(played["question_id"], len(played)),
            "team_kind": kinds,
        }
    )
    if "model" in played:  # a model team's model and threshold (an export file has them)
        seen["model"] = [m or None for m in _text(played["model"], len(played))]
    if "threshold" in played:
        where_played = _Where(path, str(path), played.index)
        seen["threshold"] = _convert(played["threshold"], "threshold", "float", where_played)
    roster = roster_frame(
        pd.DataFrame(
            {
                "match": seen["match"],
                "team": seen["team"],
                "player": _text(played.get("player"), len(played)),
            }
        )
    )
    return BuzzTables(buzzes, derive_heard(seen), roster)
