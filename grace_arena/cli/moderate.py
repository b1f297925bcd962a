"""``grace-arena moderate``: the moderator's terminal UI on a running server."""

from __future__ import annotations

from typing import Annotated

import typer

from grace_arena.cli import app


@app.command("moderate")
def moderate(
    server: Annotated[
        str, typer.Option(help="The server's address, as grace-arena serve prints it.")
    ] = "http://127.0.0.1:8000",
    token: Annotated[
        str | None,
        typer.Option(
            envvar="GRACE_ARENA_TOKEN",
            help="The server token (set up new matches, resume open ones), or with --match "
            "that match's moderator token. Both are printed by grace-arena serve.",
        ),
    ] = None,
    match: Annotated[
        int | None, typer.Option(help="Moderate this match now (skip the set-up screen).")
    ] = None,
    take_over: Annotated[
        bool,
        typer.Option(
            help="Take control of the match from a moderator connected to it (who then "
            "watches). Without it, a second moderator is refused."
        ),
    ] = False,
) -> None:
    """Run a match from the terminal: set it up, read, rule on every buzz.

    The server holds the match: closing this screen, or losing the network,
    ends nothing; run the same command again to carry on where it is.
    """
    from moderator_tui import make_tui
    from moderator_tui.api import ApiError, open_matches

    base = server.rstrip("/")
    if "://" not in base:
        base = f"http://{base}"
    if not token:
        raise typer.BadParameter(
            "the server token (or a moderator token with --match)", param_hint="--token"
        )
    server_token: str | None = token
    moderator_token: str | None = None
    if match is not None:
        # The token may be the server token (then the match's moderator token is looked up)
        # or the match's own moderator token.
        try:
            open_matches(base, token)
        except ApiError:
            server_token, moderator_token = None, token
    make_tui(
        base,
        token=server_token,
        match_id=match,
        moderator_token=moderator_token,
        take_over=take_over,
    ).run()
