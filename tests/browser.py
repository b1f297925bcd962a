"""What the browser tests share: Debian's Chromium driven by Playwright, on a phone viewport.

Playwright's own browser download is not available here, so Debian's ``chromium`` is used.
Without it a browser test module skips, except in CI (``CI`` set), where it must run:
``.ci/run`` installs it. Import this module before anything from ``playwright``; the
``browser`` fixture is in conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(os.environ.get("GRACE_ARENA_SCREENSHOTS", "/tmp"))

if not os.environ.get("CI"):
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing (install Debian's chromium package); "
            "these tests run in CI, where .ci/run installs it",
            allow_module_level=True,
        )
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e .[dev])")


def phone(pages):
    """A new page the size of a phone, touch and all (``pages``: the fixture)."""
    return pages(PHONE, is_mobile=True, has_touch=True)
