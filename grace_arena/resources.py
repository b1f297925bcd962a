"""Files shipped with the program (pages, the sample packet, the corpus), found with
``importlib.resources`` wherever the packages are installed: a source checkout, an editable
install or a wheel in any virtual environment."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["shipped_file", "shipped_folder"]


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
