"""``grace-arena moderate``: the moderator's terminal UI on a running server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli.options import given_secret, secret_help
from grace_arena.cli.root import app


@app.command("moderate")
def moderate(
    ctx: typer.Context,
    server: Annotated[
        str, typer.Option(help="The server's address, as grace-arena serve prints it.")
    ] = "http://127.0.0.1:8000",
    token: Annotated[
        str | None,
        typer.Option(
            envvar="GRACE_ARENA_TOKEN",
            help=secret_help(
                "The server token (set up new matches, resume open ones, pick a room of "
                "--event), or with --match that match's moderator token, or with --room that "
                "room's moderator token. All are printed by grace-arena serve.",
                "GRACE_ARENA_TOKEN",
                "--token-file",
            ),
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(help="A file whose first line is the token (kept from ps).", dir_okay=False),
    ] = None,
    match: Annotated[
        int | None, typer.Option(help="Moderate this match now (skip the set-up screen).")
    ] = None,
    room: Annotated[
        str | None,
        typer.Option(
            help="Moderate this room of an event, by its join code (with the room's moderator "
            "token), or by its code or name with --event and the server token: its current "
            "match, then each next one."
        ),
    ] = None,
    event: Annotated[
        str | None,
        typer.Option(
            help="An event served by the server (grace-arena serve --event): pick the room to "
            "moderate (needs the server token)."
        ),
    ] = None,
    take_over: Annotated[
        bool,
        typer.Option(
            help="Take control of the match from a moderator connected to it (who then "
            "watches). Without it, a second moderator is asked: take over, watch or quit."
        ),
    ] = False,
) -> None:
    """Run a match from the terminal: set it up, read, rule on every buzz.

    A room of an event (--room, or --event to pick one) is followed from match to match.
    The server holds the match: closing this screen, or losing the network,
    ends nothing; run the same command again to carry on where it is.
    """
    from moderator_tui import make_tui

    token = given_secret(
        ctx,
        token,
        token_file,
        param="token",
        option="--token",
        envvar="GRACE_ARENA_TOKEN",
        file_option="--token-file",
    )
    base = server.rstrip("/")
    if "://" not in base:
        base = f"http://{base}"
    if not token:
        raise typer.BadParameter(
            "the server token (or a moderator token with --match or --room): set "
            "GRACE_ARENA_TOKEN, or give --token-file",
            param_hint="--token",
        )
    if match is not None and (room or event):
        raise typer.BadParameter("give --match, or --room/--event, not both", param_hint="--match")
    server_token: str | None = token
    moderator_token: str | None = None
    if room and not event:
        # The room's own moderator token; the server token needs --event to find the room's.
        if _is_server_token(base, token):
            raise typer.BadParameter(
                "that is the server token: add --event NAME to moderate a room with it, or give "
                "the room's moderator token (grace-arena serve --event prints it)",
                param_hint="--token",
            )
        server_token, moderator_token = None, token
    elif match is not None and not _is_server_token(base, token):
        # With --match the token may be the server token (then the match's moderator token
        # is looked up) or the match's own moderator token.
        server_token, moderator_token = None, token
    make_tui(
        base,
        token=server_token,
        match_id=match,
        moderator_token=moderator_token,
        take_over=take_over,
        room=room,
        event=event,
    ).run()


def _is_server_token(base: str, token: str) -> bool:
    from moderator_tui.api import ApiError, open_matches

    try:
        open_matches(base, token)
    except ApiError:
        return False
    return True
