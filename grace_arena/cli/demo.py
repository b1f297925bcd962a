"""``grace-arena demo``: a match on the embedded defaults, moderated from the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli.options import DbOption, SkipBrokenOption, check_packets, resolve_db
from grace_arena.cli.root import app


@app.command("demo")
def demo(
    db: DbOption = None,
    packet: Annotated[
        Path | None, typer.Option(help="Packet file (default: the sample packet).")
    ] = None,
    scripted: Annotated[
        bool,
        typer.Option(
            "--scripted",
            help="Play a scripted match in the terminal instead (no server, no keys).",
        ),
    ] = False,
    host: Annotated[
        str, typer.Option(help="Address to listen on (0.0.0.0: phones on the LAN can join).")
    ] = "0.0.0.0",
    port: Annotated[
        int | None,
        typer.Option(
            help="Port to listen on (default: 8000 if free, else the next free one up to 8009, "
            "else any; the screen says which)."
        ),
    ] = None,
    public_url: Annotated[
        str | None, typer.Option(help="URL players use to reach this server (default: LAN).")
    ] = None,
    tossups: Annotated[
        int | None,
        typer.Option(min=1, help="How many tossups to play (default: all; scripted: 4)."),
    ] = None,
    wpm: Annotated[
        int | None,
        typer.Option(
            min=0, help="Reading pace in words per minute (default 180; scripted: 600, 0: no wait)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the scripted players.")] = 7,
    skip_broken_questions: SkipBrokenOption = False,
) -> None:
    """Run a match on the sample packet from the moderator's terminal UI.

    Starts the game server in this process (a SQLite record, the sample packet,
    the offline model player 'tfidf') and opens the moderator's screen on it:
    set up the match, let players join from their phones (the join URL and QR
    code are on screen), read and rule. --scripted: two scripted teams play.
    """
    from grace_arena.core.packet import SAMPLE_PACKET_PATH

    url = resolve_db(db)
    packet_path = packet or SAMPLE_PACKET_PATH
    check_packets([packet_path], skip_broken=skip_broken_questions)
    if scripted:
        from grace_arena.demo import run_scripted_demo

        run_scripted_demo(
            db_url=url,
            packet_path=packet_path,
            n_tossups=tossups or 4,
            wpm=600 if wpm is None else wpm,
            seed=seed,
            skip_broken_questions=skip_broken_questions,
        )
        return
    from grace_arena.cli.serve import _check_port_free
    from grace_arena.demo import run_tui_demo

    if port is not None:  # asked for: in use is an error, said in one line
        _check_port_free(host, port)
    try:
        run_tui_demo(
            db_url=url,
            packet_path=packet_path,
            host=host,
            port=port,
            public_url=public_url,
            tossups=f"1-{tossups}" if tossups else "all",
            wpm=max(wpm or 180, 30),
            skip_broken_questions=skip_broken_questions,
        )
    except RuntimeError as exc:  # the server did not start: its log says why
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
