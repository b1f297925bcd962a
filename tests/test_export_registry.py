"""The export formats are a registry of renderers: the command line and ``export`` find a
format there, and a renderer added to it is a format of ``grace-arena export``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_helpers import config
from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.io.exports import FORMATS, RENDERERS, ExportScope, export, renderer


def test_every_format_is_one_renderer_registered_under_its_name() -> None:
    assert FORMATS == (
        "csv",
        "jsonl",
        "steps",
        "grace",
        "qbj",
        "parquet",
        "bonuses",
        "sqbs",
        "scoresheet",
    )
    for name, r in RENDERERS.items():
        assert r.name == name
        assert r.suffix == "" or r.suffix.startswith(".")
        assert callable(r.render)
    assert [n for n, r in RENDERERS.items() if r.notes_pooled_left_out] == ["qbj"]
    with pytest.raises(ValueError, match=r"format must be one of csv, jsonl, .*, got 'nope'"):
        renderer("nope")


class MatchIds:
    """A format that lists the ids of the matches in scope, one a line."""

    name, suffix, notes_pooled_left_out = "ids", ".txt", False

    def render(self, scope: ExportScope, out: Path) -> list[Path]:
        out.write_text("".join(f"{m.id}\n" for m in scope.matches), "utf-8")
        return [out]


def test_a_renderer_added_to_the_registry_is_a_format_of_the_command(
    store, db_url, tmp_path, monkeypatch
) -> None:
    for _ in range(2):
        store.create(config(), now=1000.0)
    monkeypatch.setitem(RENDERERS, "ids", MatchIds())
    out = tmp_path / "ids.txt"
    result = CliRunner().invoke(
        app, ["export", "--db", db_url, "--format", "ids", "--out", str(out), "--match", "2"]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text() == "2\n"
    assert export(store.engine, "ids", out) == [out] and out.read_text() == "1\n2\n"


def test_the_commands_help_describes_every_format() -> None:
    result = CliRunner().invoke(app, ["export", "--help"], terminal_width=400)
    assert result.exit_code == 0, result.output
    described = set(re.findall(r"[a-z]+", result.output))
    assert set(FORMATS) <= described, set(FORMATS) - described
