"""How every command group of ``grace-arena`` is made, so that all of them show help alike."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup


class HelpGroup(TyperGroup):
    """A command group whose list of commands gives each one's first sentence whole, wrapped
    at the terminal's width like the rest, rather than cut short with "..."."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a record that cannot be opened or read (a file that is no
        database, a server that does not answer) is one line, not a traceback."""
        from sqlalchemy.exc import DatabaseError

        try:
            return super().invoke(ctx)
        except DatabaseError as exc:
            # the driver's own words, first line (never the URL: it may hold a password)
            said = str(exc.orig).strip().splitlines() if exc.orig is not None else []
            typer.echo(f"error: the record could not be read: {said[0] if said else exc}", err=True)
            raise typer.Exit(1) from None


def command_group(**options: Any) -> typer.Typer:
    """A typer app whose help is click's plain text (``rich_markup_mode=None``): it wraps
    whole words at the terminal's width with each option's help beside it, cuts nothing with
    "…", and shows no type beside a flag (typer's rich panels showed ``<bool>`` there and
    squeezed the help into a narrow column at 80 columns)."""
    return typer.Typer(rich_markup_mode=None, cls=HelpGroup, **options)
