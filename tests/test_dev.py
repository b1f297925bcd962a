"""dev.py's pins of the lowest versions allowed, which CI installs to run the suite on them."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dev():
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_lower_bound_is_pinned_with_its_marker(dev):
    assert dev.lowest_versions(
        [
            "numpy>=1.26,<3",
            "PyStemmer >= 2.2.0.2, <4",
            "psycopg[binary]>=3.1,<4",  # a constraint may not name extras
            "litellm==1.106.2",
            "ftfy~=6.1",
            "uvloop>=0.19,<1; sys_platform != 'win32'",
            "pyarrow<99",  # no lower bound: left to the resolver
            "something",
        ]
    ) == [
        "numpy==1.26",
        "PyStemmer==2.2.0.2",
        "psycopg==3.1",
        "litellm==1.106.2",
        "ftfy==6.1",
        "uvloop==0.19; sys_platform != 'win32'",
    ]
    with pytest.raises(ValueError, match="cannot read"):
        dev.lowest_versions(["[oops]"])


def test_every_runtime_dependency_has_a_lower_bound_that_ci_tests(dev):
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = {pin.split("==")[0] for pin in dev.lowest_versions(dependencies)}
    unpinned = [d for d in dependencies if dev._REQUIREMENT.match(d)["name"] not in pinned]
    assert unpinned == []


def test_the_two_parts_of_a_run_close_with_one_line_and_one_exit_code(dev):
    assert dev.exit_code([0, 0]) == 0
    assert dev.exit_code([0, 5]) == 0  # nothing marked alone among the tests asked for
    assert dev.exit_code([5, 0]) == 0
    assert dev.exit_code([5, 5]) == 5
    assert dev.exit_code([1, 0]) == dev.exit_code([0, 1]) == 1
    line = dev.closing_line({"passed": 2340, "failed": 1, "skipped": 9, "error": 2}, 598.7)
    assert line.strip("= ") == "1 failed, 2340 passed, 9 skipped, 2 errors in 598.70s (0:09:58)"
    assert len(line) == 80 and line.startswith("=") and line.endswith("=")
    assert dev.closing_line({}, 1.5).strip("= ") == "no tests ran in 1.50s"


# ---------------------------------------------------------------------------------------------
# The lock files set-up installs, and the installers that install them.


def _pins(lock: Path) -> list[tuple[str, str, str]]:
    """The packages of a lock file: (normalized name, version, environment marker)."""
    from packaging.utils import canonicalize_name

    pins = []
    for line in lock.read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            requirement, _, marker = line.rstrip(" \\").partition(";")
            name, _, version = requirement.partition("==")
            pins.append((canonicalize_name(name.strip()), version.strip(), marker.strip()))
    return pins


def test_the_lock_files_were_made_from_pyproject_toml_as_it_is(dev):
    stale = [str(lock.relative_to(ROOT)) for lock in dev.stale_locks()]
    assert stale == [], (
        f"{' and '.join(stale)} were not made from pyproject.toml's dependencies as they are: "
        "run `python3 dev.py lock` and commit requirements/"
    )


def test_a_change_of_the_dependencies_makes_the_lock_files_stale(dev):
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert dev.stale_locks(pyproject) == []
    # a comment or the tools' settings change nothing that is installed
    assert dev.stale_locks(pyproject.replace("[tool.ruff]", "# a note\n[tool.ruff]")) == []
    for changed in (
        pyproject.replace('"rapidfuzz>=3.9,<4",', '"rapidfuzz>=3.9,<4",\n    "attrs>=23",'),
        pyproject.replace('"rapidfuzz>=3.9,<4"', '"rapidfuzz>=3.10,<4"'),
        pyproject.replace('"ruff>=0.6,<1",', ""),
        pyproject.replace('requires-python = ">=3.11"', 'requires-python = ">=3.12"'),
    ):
        assert changed != pyproject
        assert dev.stale_locks(changed) == [dev.RUNTIME_LOCK, dev.DEV_LOCK]


def test_each_dependency_is_locked_at_a_version_it_allows(dev):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for lock, requirements in (
        (dev.RUNTIME_LOCK, project["dependencies"]),
        (dev.DEV_LOCK, project["dependencies"] + project["optional-dependencies"]["dev"]),
    ):
        locked: dict[str, list[str]] = {}
        for name, version, _ in _pins(lock):
            locked.setdefault(name, []).append(version)
        for text in requirements:
            requirement = Requirement(text)
            versions = locked.get(canonicalize_name(requirement.name))
            assert versions, f"{requirement.name} is not in {lock.name}"
            assert all(v in requirement.specifier for v in versions), (text, versions)
            for extra in requirement.extras:  # psycopg[binary]: psycopg-binary
                assert f"{canonicalize_name(requirement.name)}-{extra}" in locked, text
        every = [line for line in lock.read_text().splitlines() if "==" in line]
        assert all("--hash=sha256:" in line or line.endswith("\\") for line in every)


def test_the_runtime_lock_is_the_development_lock_less_the_tools(dev):
    runtime, everything = _pins(dev.RUNTIME_LOCK), _pins(dev.DEV_LOCK)
    assert set(runtime) < set(everything)
    tools = {name for name, _, _ in everything} - {name for name, _, _ in runtime}
    assert {"pytest", "ruff", "playwright", "pip"} <= tools
    assert "numpy" not in tools and "textual" not in tools


def test_set_up_installs_the_lock_with_uv_and_then_the_project(dev, tmp_path):
    env = tmp_path / "env"
    py, uv = dev._env_file(env, "python"), dev._env_file(env, "uv")
    lock = Path("requirements") / "runtime.txt"
    # uv checks every hash a requirements file gives (each line of the lock has them: tested
    # above), and builds the project while the files download
    assert dev.install_commands(env, uv, "runtime") == [
        [uv, "pip", "install", "--python", py, "--no-deps", "-r", lock, "-e", "."]
    ]
    assert dev.install_commands(env, uv, "dev")[0][-3] == Path("requirements") / "dev.txt"
    # test-min's lowest versions are resolved, not locked
    constraints = tmp_path / "lowest.txt"
    assert dev.install_commands(env, uv, "dev", constraints) == [
        [uv, "pip", "install", "--python", py, "-c", constraints, "-e", ".[dev]", "pip"]
    ]


def test_without_uv_pip_installs_the_same_lock(dev, tmp_path):
    env = tmp_path / "env"
    pip = [dev._env_file(env, "python"), "-m", "pip", "install", "--quiet", "--no-compile"]
    lock = Path("requirements") / "dev.txt"
    assert dev.install_commands(env, None, "dev") == [
        [*pip, "--require-hashes", "--no-deps", "-r", lock],
        [*pip, "--no-deps", "-e", "."],
    ]


def test_uv_that_cannot_be_installed_leaves_set_up_to_pip(dev, tmp_path, monkeypatch, capsys):
    import venv

    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    # no index, and no file to install: pip fails at once for this Python and for the env's own
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    assert dev.bootstrap_uv(env) is None
    assert "uv could not be installed: pip installs instead" in capsys.readouterr().out
    assert not dev._env_file(env, "uv").exists()
    assert dev._has_pip(dev._env_file(env, "python"))  # the env's own pip, for what follows
    monkeypatch.setenv("GRACE_ARENA_INSTALLER", "pip")  # asked for: uv is not even tried
    assert dev.bootstrap_uv(env) is None
    assert capsys.readouterr().out == ""


def test_an_install_is_done_once_per_level_and_lock(dev, tmp_path, monkeypatch):
    ran: list[tuple] = []
    monkeypatch.setenv("GRACE_ARENA_INSTALLER", "pip")
    monkeypatch.setattr(dev, "_has_pip", lambda py: True)
    monkeypatch.setattr(dev, "run", lambda *cmd, check=True, env=None: ran.append(cmd) or 0)
    env = tmp_path / "env"
    dev.install(env, "runtime")
    assert [cmd[-1] for cmd in ran] == [Path("requirements") / "runtime.txt", "."]
    ran.clear()
    dev.install(env, "runtime")
    assert ran == []  # done already
    dev.install(env, "dev")  # the development tools on top
    assert [cmd[-1] for cmd in ran] == [Path("requirements") / "dev.txt", "."]
    ran.clear()
    dev.install(env, "runtime")
    assert ran == []  # dev holds runtime
    assert dev._installed(env, "dev") and not dev._installed(env, "dev", "other constraints")
