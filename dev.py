#!/usr/bin/env python3
"""Set up everything and run one task. Needs only Python 3.11+.

    python3 dev.py demo     # set up, then play the demo match
    python3 dev.py test     # set up, then run the whole test suite
    python3 dev.py check    # set up, then lint, format check, import contracts and tests

Set-up is idempotent: a virtual environment in .venv with the project and its development
dependencies, reinstalled only when pyproject.toml changes. Extra arguments after the task go
to the underlying command (pytest, or ``grace-arena demo``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".grace-arena-installed"


def run(*cmd: str | Path, check: bool = True) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check).returncode


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036  (this script may run on an older Python)
        sys.exit(f"GRACE Arena needs Python 3.11 or newer (this is {sys.version.split()[0]}).")
    if not PY.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PY, "-m", "pip", "install", "--quiet", "-e", ".[dev]")
    STAMP.write_text(wanted)


def ensure_browser() -> None:
    """The browser tests drive Debian's Chromium and the demo test drives tmux: install them
    as root if they are missing."""
    missing = [tool for tool in ("chromium", "tmux") if not shutil.which(tool)]
    if not missing:
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        run("apt-get", "update", "-qq", check=False)
        run("apt-get", "install", "-y", "-qq", *missing, check=False)
    else:
        print(f"note: {' and '.join(missing)} not installed: their tests will skip", flush=True)
        print(f"      (Debian/Ubuntu: sudo apt-get install {' '.join(missing)})", flush=True)


def main(argv: list[str]) -> int:
    task, rest = (argv[0], argv[1:]) if argv else ("", [])
    if task not in ("demo", "test", "check", "setup"):
        print(__doc__)
        return 2
    setup()
    if task == "setup":
        return 0
    if task == "demo":
        return run(BIN / "grace-arena", "demo", *rest, check=False)
    if task in ("test", "check"):
        ensure_browser()
    if task == "test":
        return run(PY, "-m", "pytest", *rest, check=False)
    # check: everything, stopping at the first failure
    for cmd in (
        (BIN / "ruff", "check", "."),
        (BIN / "ruff", "format", "--check", "."),
        (BIN / "lint-imports",),
        (PY, "-m", "pytest", *rest),
    ):
        if code := run(*cmd, check=False):
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
