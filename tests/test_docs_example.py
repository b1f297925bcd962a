"""The notebook example of docs/analysis.md runs as written, on an exported record."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from grace_arena.cli import app
from grace_arena.core.packet import SAMPLE_PACKET_PATH

DOC = Path(__file__).resolve().parents[1] / "docs" / "analysis.md"


def notebook_example() -> str:
    section = DOC.read_text(encoding="utf-8").split("## In a notebook", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]


def test_the_notebook_example_runs(db_url: str, tmp_path: Path, monkeypatch, private_cache):
    runner = CliRunner()
    done = runner.invoke(app, ["precompute", "--packet", str(SAMPLE_PACKET_PATH), "--db", db_url])
    assert done.exit_code == 0, done.output
    done = runner.invoke(
        app, ["export", "--db", db_url, "--format", "parquet", "--out", str(tmp_path / "tables")]
    )
    assert done.exit_code == 0, done.output
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(notebook_example(), str(DOC), "exec"), namespace)
    result = namespace["result"]
    assert set(result["models"]) == {"tfidf"}
    assert namespace["json_text"] == result.to_json()
    assert len(namespace["metrics"]) >= 4  # all and final, per confidence kind
