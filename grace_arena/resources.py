"""Files shipped with the program (pages, the sample packet, the corpus), found with
``importlib.resources`` wherever the packages are installed: a source checkout, an editable
install or a wheel in any virtual environment."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["shipped_file", "shipped_folder"]


def shipped_folder(package: str) -> Path:
    """The folder of an installed package of data files (``buzzer_client``, ``questions``)."""
    root = files(package)
    if not isinstance(root, Path):  # e.g. inside a zip: not how this project is installed
        raise RuntimeError(f"{package} is not installed as files on disk ({root!r})")
    return root


def shipped_file(package: str, name: str) -> Path:
    """One shipped file, by package and name."""
    return shipped_folder(package) / name
