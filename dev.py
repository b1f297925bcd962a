#!/usr/bin/env python3
"""Set up everything and run one task. Needs only Python 3.11+.

    python3 dev.py demo     # set up, then play the demo match
    python3 dev.py test     # set up, then run the whole test suite
    python3 dev.py check    # set up, then lint, format check, import contracts and tests
    python3 dev.py test-min # the same tests on the lowest versions pyproject.toml allows

Set-up is idempotent: a virtual environment in .venv with the project and its development
dependencies, reinstalled only when pyproject.toml changes. ``test-min`` sets up another one,
.venv-min, in which every runtime dependency with a lower bound is installed at exactly that
bound (the development tools resolve as usual), and runs the test suite there; CI runs both.
Extra arguments after the task go to the underlying command (pytest, or ``grace-arena demo``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
#: The environment of the lowest versions allowed (``test-min``).
VENV_MIN = ROOT / ".venv-min"


def run(*cmd: str | Path, check: bool = True) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check).returncode


def _installed(env: Path) -> bool:
    """Whether ``env`` was installed with this pyproject.toml."""
    stamp = env / ".grace-arena-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return stamp.exists() and stamp.read_text().strip() == wanted


def install(env: Path, *args: str) -> Path:
    """``pip install args`` into the virtual environment ``env`` (made first if need be),
    unless that was done with this pyproject.toml already; its Python."""
    if sys.version_info < (3, 11):  # noqa: UP036  (this script may run on an older Python)
        sys.exit(f"GRACE Arena needs Python 3.11 or newer (this is {sys.version.split()[0]}).")
    py = env / PY.relative_to(VENV)
    if _installed(env):
        return py
    if not py.exists():
        print(f"creating virtual environment in {env}", flush=True)
        venv.EnvBuilder(with_pip=True).create(env)
    run(py, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(py, "-m", "pip", "install", "--quiet", *args)
    (env / ".grace-arena-installed").write_text(
        hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    )
    return py


def setup() -> None:
    install(VENV, "-e", ".[dev]")


#: One dependency of pyproject.toml: name, extras, version specifiers, environment marker.
_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*"
    r"(?P<specs>[^;]*?)\s*(?P<marker>;.*)?$"
)


def lowest_versions(dependencies: list[str]) -> list[str]:
    """Pip constraints that pin each dependency with a lower bound (``>=``, ``~=`` or ``==``)
    to exactly that bound, keeping its environment marker; the others are left out.

    >>> lowest_versions(["numpy>=1.26,<3", "uvloop>=0.19,<1; sys_platform != 'win32'", "x"])
    ['numpy==1.26', "uvloop==0.19; sys_platform != 'win32'"]
    """
    pins = []
    for dependency in dependencies:
        found = _REQUIREMENT.match(dependency)
        if found is None:
            raise ValueError(f"cannot read the dependency {dependency!r}")
        for spec in found["specs"].split(","):
            operator, version = re.match(r"\s*([<>=!~]*)\s*(\S*)", spec).groups()
            if operator in (">=", "~=", "==") and "*" not in version:
                pins.append(f"{found['name']}=={version}{found['marker'] or ''}")
                break
    return pins


def setup_min() -> Path:
    """.venv-min: the project and its development tools, every runtime dependency with a
    lower bound at that bound. Made anew whenever pyproject.toml changes, so that nothing
    newer is left over from an earlier install."""
    import tomllib

    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = "\n".join(lowest_versions(dependencies)) + "\n"
    if VENV_MIN.exists() and not _installed(VENV_MIN):
        shutil.rmtree(VENV_MIN)
    VENV_MIN.mkdir(exist_ok=True)
    constraints = VENV_MIN / "lowest-versions.txt"
    constraints.write_text(pins)
    print(f"lowest versions allowed ({constraints}):\n{pins}", flush=True)
    return install(VENV_MIN, "-c", str(constraints), "-e", ".[dev]")


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
    if task not in ("demo", "test", "check", "setup", "test-min"):
        print(__doc__)
        return 2
    if task == "test-min":
        py = setup_min()
        ensure_browser()
        return run(py, "-m", "pytest", *rest, check=False)
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
