#!/usr/bin/env python3
"""Set up everything and run one task. Needs only Python 3.11+.

    python3 dev.py demo     # set up what the project needs to run, then play the demo match
    python3 dev.py test     # set up everything, then run the whole test suite
    python3 dev.py check    # set up everything, then lint, format check, import contracts and tests
    python3 dev.py setup    # set up everything (the project and its development tools)
    python3 dev.py test-min # the tests of the dependencies' APIs on the lowest versions allowed
    python3 dev.py lock     # remake requirements/*.txt after pyproject.toml's dependencies change

Set-up is idempotent: a virtual environment in .venv, reinstalled only when pyproject.toml or
the lock files change. It installs the versions of the lock files (requirements/runtime.txt:
the project's dependencies; requirements/dev.txt: those and the development tools), checked
against their hashes, so that nothing is resolved at set-up; ``demo`` installs the first,
``test``, ``check`` and ``setup`` the second. The installer is uv (from PyPI, installed into
the environment with pip): it downloads in parallel and installs in seconds. Where uv cannot be
had, or with GRACE_ARENA_INSTALLER=pip, pip installs the same lock files. Where the lock files
were made from other dependencies than pyproject.toml's (edited since), set-up resolves
pyproject.toml itself and says so.

``test-min`` sets up another environment, .venv-min, in which every runtime dependency with a
lower bound is installed at exactly that bound (the development tools resolve as usual), and
runs there every test but those that drive Chromium (marked ``browser``); CI runs both.

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


def run(*cmd: str | Path, check: bool = True, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check, env=env).returncode


#: The lock files: every package set-up installs, at one version, with the hashes of its files,
#: for every platform and Python that pyproject.toml allows (``python3 dev.py lock`` makes them).
LOCKS = ROOT / "requirements"
#: The project's dependencies (what ``demo`` installs).
RUNTIME_LOCK = LOCKS / "runtime.txt"
#: Those and the development tools ([dev]) and pip, the same versions for what both lock.
DEV_LOCK = LOCKS / "dev.txt"
#: What set-up installs, from least to most: each one's lock file.
LEVELS = {"runtime": RUNTIME_LOCK, "dev": DEV_LOCK}
#: The installer set-up uses when it can have it.
UV = "uv==0.13.9"
#: The line of a lock file that names the dependencies it was made from.
_LOCK_INPUTS = re.compile(r"^# pyproject\.toml's dependencies: sha256:([0-9a-f]{64})$", re.M)


def dependencies_digest(pyproject: str) -> str:
    """A digest of what the lock files are made from: pyproject.toml's ``requires-python``,
    its dependencies and its [dev] extra, as written."""
    import json
    import tomllib

    project = tomllib.loads(pyproject)["project"]
    inputs = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "dev": project.get("optional-dependencies", {}).get("dev", []),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def lock_inputs(lock: Path) -> str | None:
    """The digest of the dependencies ``lock`` was made from (None: no lock file, or no digest)."""
    if not lock.exists():
        return None
    found = _LOCK_INPUTS.search(lock.read_text())
    return found[1] if found else None


def stale_locks(pyproject: str | None = None) -> list[Path]:
    """The lock files that were not made from pyproject.toml's dependencies as they are."""
    wanted = dependencies_digest(pyproject or (ROOT / "pyproject.toml").read_text())
    return [lock for lock in LEVELS.values() if lock_inputs(lock) != wanted]


def _env_file(env: Path, name: str) -> Path:
    """A program of the virtual environment ``env`` (its python, its uv)."""
    return env / BIN.relative_to(VENV) / (f"{name}.exe" if os.name == "nt" else name)


def _stamp(level: str, extra: str = "") -> str:
    """What an environment installed at ``level`` records: the level and a digest of
    pyproject.toml, the lock files and ``extra`` (test-min's constraints)."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for lock in LEVELS.values():
        digest.update(lock.read_bytes() if lock.exists() else b"")
    digest.update(extra.encode())
    return f"{level} {digest.hexdigest()}"


def _installed(env: Path, level: str = "dev", extra: str = "") -> bool:
    """Whether ``env`` holds ``level`` (or more) of this pyproject.toml and lock files."""
    stamp = env / ".grace-arena-installed"
    if not stamp.exists():
        return False
    done, _, digest = stamp.read_text().strip().partition(" ")
    levels = list(LEVELS)
    return (
        done in levels
        and levels.index(done) >= levels.index(level)
        and digest == _stamp(level, extra).partition(" ")[2]
    )


def bootstrap_uv(env: Path) -> Path | None:
    """uv in the virtual environment ``env``, installed there from PyPI if need be (by this
    Python's pip, or else by the environment's own); None if it cannot be had, or if
    GRACE_ARENA_INSTALLER=pip."""
    import importlib.util

    if os.environ.get("GRACE_ARENA_INSTALLER", "uv") == "pip":
        return None
    uv = _env_file(env, "uv")
    if uv.exists():
        return uv
    py = _env_file(env, "python")
    pip = ("pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps")
    # This Python's pip installs it into the environment (made by this Python: same layout),
    # whatever this Python has itself.
    here = (*pip, "--ignore-installed", "--no-warn-script-location", "--prefix", env, UV)
    if importlib.util.find_spec("pip") is not None:  # (as root too: a prefix of our own)
        run(
            sys.executable,
            "-m",
            *here,
            check=False,
            env=os.environ | {"PIP_ROOT_USER_ACTION": "ignore"},
        )
    if not uv.exists() and (_has_pip(py) or not run(py, "-m", "ensurepip", check=False)):
        run(py, "-m", *pip, UV, check=False)
    if uv.exists():
        return uv
    print("note: uv could not be installed: pip installs instead (slower)", flush=True)
    return None


def _has_pip(py: str | Path) -> bool:
    return (
        subprocess.run(
            [str(py), "-m", "pip", "--version"], capture_output=True, cwd=ROOT, check=False
        ).returncode
        == 0
    )


def install_commands(
    env: Path, uv: Path | None, level: str, constraints: Path | None = None
) -> list[list[str | Path]]:
    """The commands that install ``level`` into ``env``: the lock file's versions, checked
    against its hashes (uv checks every hash a requirements file gives; pip is told to require
    them), and the project itself (editable, nothing more); or, with ``constraints`` (test-min's
    lowest versions) or where the lock files are stale, what pip or uv resolve from
    pyproject.toml. With uv if it is given, else with pip."""
    py = _env_file(env, "python")
    if uv is not None:
        installer: list[str | Path] = [uv, "pip", "install", "--python", py]
    else:  # the modules compile when first imported, as uv leaves them
        installer = [py, "-m", "pip", "install", "--quiet", "--no-compile"]
    if constraints is not None or stale_locks():
        if constraints is not None:
            installer += ["-c", constraints]
        # (pip too at the dev level, as the lock file has it: the environment's own installer)
        return [[*installer, "-e", *((".[dev]", "pip") if level == "dev" else (".",))]]
    lock = LEVELS[level].relative_to(ROOT)
    if uv is not None:  # one command: the project builds while the lock's files download
        return [[*installer, "--no-deps", "-r", lock, "-e", "."]]
    return [
        [*installer, "--require-hashes", "--no-deps", "-r", lock],
        [*installer, "--no-deps", "-e", "."],
    ]


def install(env: Path, level: str = "dev", constraints: Path | None = None) -> Path:
    """Install ``level`` (:data:`LEVELS`) into the virtual environment ``env`` (made first if
    need be), unless that was done with this pyproject.toml and these lock files already; its
    Python."""
    if sys.version_info < (3, 11):  # noqa: UP036  (this script may run on an older Python)
        sys.exit(f"GRACE Arena needs Python 3.11 or newer (this is {sys.version.split()[0]}).")
    py = _env_file(env, "python")
    extra = constraints.read_text() if constraints is not None else ""
    if _installed(env, level, extra):
        return py
    if not py.exists():
        print(f"creating virtual environment in {env}", flush=True)
        venv.EnvBuilder(with_pip=False).create(env)
    if constraints is None and (stale := stale_locks()):
        names = " and ".join(str(lock.relative_to(ROOT)) for lock in stale)
        print(
            f"note: {names} not made from pyproject.toml's dependencies as they are: "
            "resolving pyproject.toml instead (python3 dev.py lock remakes them)",
            flush=True,
        )
    uv = bootstrap_uv(env)
    if uv is None and not _has_pip(py):
        run(py, "-m", "ensurepip", "--upgrade")
    for command in install_commands(env, uv, level, constraints):
        run(*command)
    (env / ".grace-arena-installed").write_text(_stamp(level, extra))
    return py


def setup(level: str = "dev") -> None:
    install(VENV, level)


def lock() -> int:
    """Make the lock files from pyproject.toml with uv (installed into .venv if need be):
    every platform, every Python from ``requires-python``'s lowest on; dev.txt first, then
    runtime.txt constrained to dev.txt's versions, so that both agree."""
    import tomllib

    pyproject = (ROOT / "pyproject.toml").read_text()
    requires = tomllib.loads(pyproject)["project"]["requires-python"]
    lowest = re.search(r">=\s*([0-9.]+)", requires)[1]
    py = _env_file(VENV, "python")
    if not py.exists():
        venv.EnvBuilder(with_pip=False).create(VENV)
    uv = bootstrap_uv(VENV)
    if uv is None:
        print("error: the lock files are made with uv, which could not be installed")
        return 1
    header = (
        "# The versions `python3 dev.py setup` installs, checked against these hashes.\n"
        "# Made by `python3 dev.py lock` (uv pip compile, every platform) from\n"
        f"# pyproject.toml's dependencies: sha256:{dependencies_digest(pyproject)}\n"
    )
    LOCKS.mkdir(exist_ok=True)
    compile_ = [uv, "pip", "compile", "--universal", "--python-version", lowest]
    compile_ += ["--generate-hashes", "--no-header", "--quiet", "pyproject.toml"]
    with tempfile.TemporaryDirectory() as folder:
        made = Path(folder) / "lock.txt"
        for lock_file, more in (
            (DEV_LOCK, ["--extra", "dev", "-"]),  # pip too: the environment's own installer
            (RUNTIME_LOCK, ["-c", DEV_LOCK.relative_to(ROOT)]),
        ):
            print("+", " ".join(map(str, [*compile_, *more, "-o", made])), flush=True)
            subprocess.run(
                [str(c) for c in (*compile_, *more, "-o", made)],
                input="pip\n" if "-" in more else "",
                text=True,
                cwd=ROOT,
                check=True,
            )
            lock_file.write_text(header + made.read_text())
            print(f"wrote {lock_file.relative_to(ROOT)}", flush=True)
    return 0


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
    if VENV_MIN.exists() and not _installed(VENV_MIN, "dev", pins):
        shutil.rmtree(VENV_MIN)
    VENV_MIN.mkdir(exist_ok=True)
    constraints = VENV_MIN / "lowest-versions.txt"
    constraints.write_text(pins)
    print(f"lowest versions allowed ({constraints}):\n{pins}", flush=True)
    return install(VENV_MIN, "dev", constraints)


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
    if task not in ("demo", "test", "check", "setup", "test-min", "lock"):
        print(__doc__)
        return 2
    if task == "lock":
        return lock()
    if task == "test-min":
        # The lowest versions are there for the dependencies' APIs: every test reaches them
        # but the browser tests, which try the pages (our JavaScript) in Chromium against the
        # server that the other tests reach with websocket and HTTP clients.
        py = setup_min()
        ensure_browser()
        return pytest(py, "-m", "not browser", *rest)
    if task == "demo":  # what the project needs to run; test, check and setup add the rest
        setup("runtime")
        return run(BIN / "grace-arena", "demo", *rest, check=False)
    setup()
    if task == "setup":
        return 0
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
