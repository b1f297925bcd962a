"""Files shipped with the program (pages, the sample packet, the corpus), found with
``importlib.resources`` wherever the packages are installed: a source checkout, an editable
install or a wheel in any virtual environment."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

__all__ = ["command_prefix", "shipped_file", "shipped_folder"]


def shipped_folder(package: str) -> Path:
    """The folder of an installed package of data files (``buzzer_client``, ``questions``).

    It sits beside ``grace_arena`` in every layout this project is installed in; that copy
    is taken when the import system finds something else under the name first (a folder
    called ``questions`` in the current directory is a namespace package to Python) or the
    package is not importable (an editable install made before it became one).
    """
    beside = Path(__file__).resolve().parent.parent / package
    try:
        root = files(package)
    except (ModuleNotFoundError, NotADirectoryError, TypeError):
        root = None
    if isinstance(root, Path) and (root / "__init__.py").is_file():
        return root
    if (beside / "__init__.py").is_file():
        return beside
    raise RuntimeError(f"the {package} package is not installed as files on disk")


def shipped_file(package: str, name: str) -> Path:
    """One shipped file, by package and name."""
    return shipped_folder(package) / name


def command_prefix(
    *,
    cwd: Path | None = None,
    bin_dir: Path | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> str:
    """How to write ``grace-arena`` in a command printed for the user, so that it runs as
    printed from ``cwd`` (default: here): the bare name when the ``PATH`` finds this
    installation's script; else that script by its path from ``cwd`` (``.venv/bin/grace-arena``
    after ``python3 dev.py setup``, as the README writes it), or by its absolute path when it
    lies elsewhere. ``bin_dir``: where this installation's scripts are (default: beside the
    running Python)."""
    bin_dir = bin_dir if bin_dir is not None else Path(sys.executable).parent
    script = bin_dir / ("grace-arena.exe" if os.name == "nt" else "grace-arena")
    if not script.is_file():
        return "grace-arena"
    found = which("grace-arena")
    if found and Path(found).resolve() == script.resolve():
        return "grace-arena"
    here = Path(os.path.abspath(cwd if cwd is not None else Path.cwd()))
    absolute = Path(os.path.abspath(script))
    try:
        shown = str(absolute.relative_to(here))
    except ValueError:
        shown = str(absolute)
    return shlex.quote(shown)
