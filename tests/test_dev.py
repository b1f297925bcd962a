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
