"""The built wheel, installed away from the source tree, serves its pages and plays a buzz.

An editable install reads the pages, the sample packet and the corpus from the checkout; a
wheel must carry them. This builds the wheel, installs it (without dependencies: this
environment has them) into a folder of its own, and runs ``grace-arena serve`` from another
folder with only that installation on the path for the project's packages.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from live import Client, clients, free_port

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _installed_wheel(tmp_path: Path) -> Path:
    # build from a clean copy: setuptools' build/ folder in the checkout may hold stale files
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv*", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "*.db*"
        ),
    )
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], check=True)
    (wheel,) = wheels.glob("grace_arena-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True)
    return target


def test_the_installed_wheel_serves_its_pages_and_a_buzz(tmp_path: Path) -> None:
    site = _installed_wheel(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "GRACE_ARENA_SECRET": "s3cret"}
    env.pop("GRACE_ARENA_DB", None)
    port = free_port()
    code = (
        "import grace_arena; print('from', grace_arena.__file__, flush=True); "
        "from grace_arena.cli import app; app()"
    )
    cmd = [sys.executable, "-c", code, "serve", "--host", "127.0.0.1", "--port", str(port),
           "--db", f"sqlite:///{tmp_path / 'record.db'}", "--model", ""]  # fmt: skip
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=elsewhere, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        text = ""
        while "listening on" not in text:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
            text = log.read_text()
        # the packages came from the wheel, not from the checkout
        loaded = re.search(r"from (\S+)", text)
        assert loaded and str(site) in loaded.group(1), text
        base = f"http://127.0.0.1:{port}"
        for page in ("/", "/display", "/static/buzzer.js", "/replay", "/static/trajectory.js"):
            with urllib.request.urlopen(base + page, timeout=10) as r:
                assert r.status == 200 and len(r.read()) > 500, page
        join_code = re.search(r"join code (\w+)", text)
        token = re.search(r"moderator token: (\S+)", text)
        assert join_code and token, text
        mod, red = Client(f"ws://127.0.0.1:{port}/ws"), Client(f"ws://127.0.0.1:{port}/ws")
        with clients(mod, red):
            mod.send(type="hello", role="moderator", match_id=1, token=token.group(1))
            mod.wait("welcome")
            red.send(type="hello", role="player", join_code=join_code.group(1))
            red.wait("welcome")
            red.send(type="join", team="red", name="Ruth")
            red.wait("joined")
            mod.send(type="start_tossup")  # the sample packet, found in the wheel
            mod.state(lambda s: s["match"]["phase"] == "reading")
            red.send(type="buzz")
            assert red.wait("buzz_result")["outcome"] == "won"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_questions_folder_in_the_current_directory_does_not_hide_the_shipped_one(
    tmp_path: Path,
) -> None:
    """A folder named ``questions`` where the user works is a namespace package to Python;
    the sample packet and the corpus must still be found."""
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / "mine.yaml").write_text("format: grace-arena-packet/1\n")
    code = (
        "from grace_arena.core.packet import SAMPLE_PACKET_PATH, load_packet; "
        "from grace_arena.model.corpus import DEFAULT_CORPUS_PATH; "
        "print(load_packet(SAMPLE_PACKET_PATH).packet.id, DEFAULT_CORPUS_PATH.is_file())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["grace-arena-sample-1", "True"], out.stderr
