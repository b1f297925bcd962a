"""The ``grace-arena`` typer app, to which each command module adds its commands.

Apart from the package's ``__init__``, which imports the command modules: they import the app
from here, and nothing imports the package back.
"""

from __future__ import annotations

from grace_arena.cli.groups import command_group

__all__ = ["app"]

app = command_group(
    name="grace-arena",
    help="GRACE Arena: live human-vs-model quizbowl matches and calibration analysis.",
    no_args_is_help=True,
    add_completion=False,
)
