"""``grace-arena demo``: a match on the embedded defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli import app
from grace_arena.cli.options import DbOption, resolve_db


@app.command("demo")
def demo(
    db: DbOption = None,
    packet: Annotated[
        Path | None, typer.Option(help="Packet file (default: the sample packet).")
    ] = None,
    tossups: Annotated[int, typer.Option(min=1, help="How many tossups to play.")] = 4,
    wpm: Annotated[
        int, typer.Option(min=0, help="Reading pace in words per minute (0: no waiting).")
    ] = 600,
    seed: Annotated[int, typer.Option(help="Seed of the scripted players.")] = 7,
) -> None:
    """Play a scripted match on the sample packet and store it in the record.

    Two scripted human teams buzz and answer; the moderator's rulings follow the automatic
    judge's suggestion. Everything is stored in the record; the path is printed at the end.
    """
    from grace_arena.core.packet import SAMPLE_PACKET_PATH
    from grace_arena.demo import run_scripted_demo

    url = resolve_db(db)
    run_scripted_demo(
        db_url=url, packet_path=packet or SAMPLE_PACKET_PATH, n_tossups=tossups, wpm=wpm, seed=seed
    )
