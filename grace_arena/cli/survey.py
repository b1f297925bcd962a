"""``grace-arena survey``: serve the per-clue survey of a packet (GRACE §3.2.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli.options import DbOption, given_secret, redacted, resolve_db, secret_help
from grace_arena.cli.root import app
from grace_arena.server.lan import public_base


def print_survey_url(console, url: str, code: str) -> None:
    """The survey's code, URL and a QR code of the URL for phones.

    (``serve.print_join`` is for matches: it prints a match id and a moderator token.)
    """
    import io

    import segno

    console.print(f"survey code [bold]{code}[/]", highlight=False)
    console.print(f"players open: {url}", soft_wrap=True, highlight=False)
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    console.print(out.getvalue(), highlight=False, markup=False, soft_wrap=True)


@app.command("survey")
def survey(
    ctx: typer.Context,
    packet: Annotated[
        list[Path],
        typer.Argument(help="Packet file(s) to survey: one survey (and one code) per packet."),
    ],
    db: DbOption = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on (0.0.0.0: the whole LAN).")
    ] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    secret: Annotated[
        str | None,
        typer.Option(
            envvar="GRACE_ARENA_SECRET",
            help=secret_help(
                "Secret that signs the server token (for /api/survey/CODE/progress).",
                "GRACE_ARENA_SECRET",
                "--secret-file",
            ),
        ),
    ] = None,
    secret_file: Annotated[
        Path | None,
        typer.Option(
            help="A file whose first line is the secret that signs the server token (kept "
            "from ps).",
            dir_okay=False,
        ),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(help="URL players use to reach this server (default: LAN address)."),
    ] = None,
) -> None:
    """Serve the per-clue survey: a guess and a would-buzz answer after every clue.

    Players open the printed URL and give a name. Answers go to the record (survey_step)
    as they are given; players can stop and come back later. Running the command again on
    the same packet reopens the same survey (same code).
    """
    from rich.console import Console

    from grace_arena.core.packet import PacketError, load_packet
    from grace_arena.server.app import Settings, create_app, run

    console = Console()
    secret = given_secret(
        ctx,
        secret,
        secret_file,
        param="secret",
        option="--secret",
        envvar="GRACE_ARENA_SECRET",
        file_option="--secret-file",
    )
    for path in packet:
        try:
            load_packet(path)
        except (OSError, PacketError) as exc:
            console.print(f"error: {exc}", highlight=False, markup=False)
            raise typer.Exit(1) from None
    url = resolve_db(db)
    console.print(f"record: {redacted(url)}", soft_wrap=True, highlight=False)
    public = public_base(console, host, port, public_url)

    def ready(_arena, rooms) -> None:
        console.print(
            f"server token (for /api/survey/CODE/progress): {rooms.tokens.server()}",
            soft_wrap=True,
            highlight=False,
        )
        surveys = web.state.surveys
        for code, plan in surveys.plans.items():
            console.print(
                f"survey of {plan.title} — {len(plan.tossups)} questions, {plan.total} clues",
                highlight=False,
            )
            print_survey_url(console, surveys.url(code), code)
        console.print(f"listening on {public} — Ctrl+C stops", soft_wrap=True, highlight=False)

    settings = Settings(
        db_url=url,
        secret=secret,
        public_url=public,
        survey_packets=packet,
        token_scope="survey",
        on_ready=ready,
        freeze_gc=True,
    )
    web = create_app(settings)
    run(web, host=host, port=port)
