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
