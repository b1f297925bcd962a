"""The domain core stays importable without frameworks, and without I/O libraries."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ["textual", "fastapi", "sqlmodel", "sqlalchemy", "litellm", "uvicorn", "websockets"]


def test_core_imports_no_framework():
    code = (
        "import sys\n"
        "import grace_arena.core.match, grace_arena.core.packet, grace_arena.core.judge\n"
        "import grace_arena.core.tokenize, grace_arena.core.specs\n"
        f"print([m for m in {FRAMEWORKS!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_cli_help_is_fast_to_import():
    """``grace-arena --help`` must not pull in litellm (about 4 s to import)."""
    code = (
        "import sys\nfrom grace_arena.cli import app\n"
        "print('litellm' in sys.modules, 'textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
