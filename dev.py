#!/usr/bin/env python3
"""Set up everything and run one task. Needs only Python 3.11+.

    python3 dev.py demo     # set up, then play the demo match
    python3 dev.py test     # set up, then run the whole test suite
    python3 dev.py check    # set up, then lint, format check, import contracts and tests
    python3 dev.py test-min # the tests of the dependencies' APIs on the lowest versions allowed

Set-up is idempotent: a virtual environment in .venv with the project and its development
dependencies, reinstalled only when pyproject.toml changes. ``test-min`` sets up another one,
.venv-min, in which every runtime dependency with a lower bound is installed at exactly that
bound (the development tools resolve as usual), and runs there every test but those that drive
Chromium (marked ``browser``); CI runs both.

The tests run in two parts (:func:`pytest`): on parallel workers (pytest-xdist, one per CPU;
``GRACE_ARENA_TEST_WORKERS`` sets how many), every test but those marked ``alone``; then those,
by themselves (they stop the PostgreSQL server that the others use). The last line adds the two
up, as pytest's closing line does. Extra arguments after the task go to the underlying command
(pytest, both parts, or ``grace-arena demo``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
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
    """The browser tests drive Debian's Chromium, the demo test drives tmux, the reader's
    voice is espeak-ng's and the proxy's test runs HAProxy (in /usr/sbin): install them as
    root if they are missing."""
    missing = [tool for tool in ("chromium", "tmux", "espeak-ng") if not shutil.which(tool)]
    if not shutil.which("haproxy") and not shutil.which("haproxy", path="/usr/sbin"):
        missing.append("haproxy")
    if not missing:
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        run("apt-get", "update", "-qq", check=False)
        run("apt-get", "install", "-y", "-qq", *missing, check=False)
    else:
        print(f"note: {' and '.join(missing)} not installed: their tests will skip", flush=True)
        print(f"      (Debian/Ubuntu: sudo apt-get install {' '.join(missing)})", flush=True)


#: pytest's outcomes in the order of its closing line, with the word for one and for several
#: (not the tests deselected: pytest-xdist's workers deselect, and do not tell).
OUTCOMES = (
    ("failed", "failed", "failed"),
    ("passed", "passed", "passed"),
    ("skipped", "skipped", "skipped"),
    ("xfailed", "xfailed", "xfailed"),
    ("xpassed", "xpassed", "xpassed"),
    ("warnings", "warning", "warnings"),
    ("error", "error", "errors"),
)


def closing_line(counts: dict[str, int], seconds: float, width: int = 80) -> str:
    """pytest's closing line for ``counts`` (outcome -> how many) and a run of ``seconds``.

    >>> closing_line({"passed": 3, "failed": 1, "warnings": 1}, 75.5, width=61)
    '===== 1 failed, 3 passed, 1 warning in 75.50s (0:01:15) ====='
    """
    import datetime

    words = [
        f"{counts[key]} {one if counts[key] == 1 else several}"
        for key, one, several in OUTCOMES
        if counts.get(key)
    ]
    took = f"{seconds:.2f}s" + (
        f" ({datetime.timedelta(seconds=int(seconds))})" if seconds >= 60 else ""
    )
    return f" {', '.join(words) or 'no tests ran'} in {took} ".center(width, "=")


def exit_code(codes: list[int]) -> int:
    """One exit code for pytest runs that ended with ``codes``: the first that is not 0
    (all passed) or 5 (no tests ran); 5 if none ran anything.

    >>> exit_code([0, 5]), exit_code([5, 5]), exit_code([0, 1]), exit_code([1, 0])
    (0, 5, 1, 1)
    """
    failed = [code for code in codes if code not in (0, 5)]
    return failed[0] if failed else (5 if all(code == 5 for code in codes) else 0)


def pytest(py: Path, *args: str) -> int:
    """The tests of ``args`` in two parts: every test but those marked ``alone`` on parallel
    workers (pytest-xdist; a test file goes to one worker, so that its module's fixtures are
    made once), then the ``alone`` ones by themselves, with nothing running beside them. One
    exit code for both (:func:`exit_code`), and a closing line that adds up what both ran."""
    import json

    workers = os.environ.get("GRACE_ARENA_TEST_WORKERS", "auto")
    started = time.monotonic()
    codes: list[int] = []
    counts = dict.fromkeys((key for key, _, _ in OUTCOMES), 0)
    with tempfile.TemporaryDirectory() as folder:
        parts = (
            ("--part", "shared", "-n", workers, "--dist", "loadfile", *args),
            ("--part", "alone", *args, "-n", "0"),
        )
        for number, part in enumerate(parts):
            report = Path(folder) / f"part-{number}.json"
            code = run(py, "-m", "pytest", *part, "--counts-to", report, check=False)
            codes.append(code)
            if code not in (0, 1, 5):  # interrupted, an internal or a usage error: stop here
                return code
            if not report.exists():
                return code or 3
            for key, value in json.loads(report.read_text())["counts"].items():
                counts[key] = counts.get(key, 0) + value
    print("both parts together:", flush=True)
    width = shutil.get_terminal_size().columns
    print(closing_line(counts, time.monotonic() - started, width), flush=True)
    return exit_code(codes)


def main(argv: list[str]) -> int:
    task, rest = (argv[0], argv[1:]) if argv else ("", [])
    if task not in ("demo", "test", "check", "setup", "test-min"):
        print(__doc__)
        return 2
    if task == "test-min":
        # The lowest versions are there for the dependencies' APIs: every test reaches them
        # but the browser tests, which try the pages (our JavaScript) in Chromium against the
        # server that the other tests reach with websocket and HTTP clients.
        py = setup_min()
        ensure_browser()
        return pytest(py, "-m", "not browser", *rest)
    setup()
    if task == "setup":
        return 0
    if task == "demo":
        return run(BIN / "grace-arena", "demo", *rest, check=False)
    if task in ("test", "check"):
        ensure_browser()
    if task == "test":
        return pytest(PY, *rest)
    # check: everything, stopping at the first failure
    for cmd in (
        (BIN / "ruff", "check", "."),
        (BIN / "ruff", "format", "--check", "."),
        (BIN / "lint-imports",),
    ):
        if code := run(*cmd, check=False):
            return code
    return pytest(PY, *rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
