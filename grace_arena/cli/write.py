"""``grace-arena write``: write tossups against the model player, sentence by sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from grace_arena.cli.root import app


@app.command("write")
def write(
    packet: Annotated[
        Path, typer.Argument(help="The packet file to edit (YAML or JSON); saved in place.")
    ],
    tossup: Annotated[
        str | None, typer.Option(help="Open this tossup first (default: the first one).")
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="tfidf (offline, default) or any litellm model string such as "
            "openai/gpt-4o-mini or hosted_vllm/NAME.",
        ),
    ] = "tfidf",
    api_base: Annotated[
        str | None, typer.Option(help="Server URL for OpenAI-compatible or vLLM models.")
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Buzz when the confidence reaches this (f2/f3)."),
    ] = 0.5,
    confidence: Annotated[
        Literal["logit", "verbal"],
        typer.Option(help="Which confidence the buzz uses (f4 switches)."),
    ] = "logit",
) -> None:
    """Edit a packet's tossups while the model guesses after every sentence (GRACE §3.1).

    Beside each sentence: the model's guess, both confidences, the judge's verdict, the buzz.
    Aim for a model that stays wrong or unconfident until the last sentences.
    ctrl+s saves (after checking the packet); f1 lists every key.
    """
    from grace_arena.core.packet import PacketError
    from moderator_tui.authoring import make_authoring_app

    try:
        tui = make_authoring_app(
            packet,
            tossup_id=tossup,
            model=model,
            api_base=api_base,
            threshold=threshold,
            confidence=confidence,
        )
    except PacketError as exc:
        typer.echo(f"cannot open {packet}; fix these first:\n{exc}", err=True)
        raise typer.Exit(2) from None
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0]), param_hint="--tossup") from None
    tui.run()
