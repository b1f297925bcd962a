"""``grace-arena judge``: how the automatic judge rules an answer against an answer line, and why.

For moderators (why did the suggestion say prompt?) and for writers (does my answer line say
what I mean?).
"""

from __future__ import annotations

from typing import Annotated

import typer

from grace_arena.cli.root import app


@app.command("judge")
def judge_command(
    answer_line: Annotated[
        str,
        typer.Argument(help='The answer line as written in the packet (<b>, <u> and "[...]" too).'),
    ],
    given: Annotated[str, typer.Argument(help="The answer to judge.")],
    forms: Annotated[
        bool, typer.Option("--forms", help="Also list every form the judge reads in the line.")
    ] = False,
    strictness: Annotated[
        float,
        typer.Option(help="Letters of a word per typing error allowed (higher is stricter)."),
    ] = 7.0,
) -> None:
    """How the judge rules on GIVEN against ANSWER_LINE, and which rule and form decided.

    Prints the directive (accept, prompt with its question, or reject), the rule in words, the
    form of the line that matched and the similarity; with --forms, every form the judge reads
    in the line, derived ones too, each with where it comes from.
    """
    from grace_arena.core.judge import judge, parse_answer_line
    from grace_arena.core.judge.forms import compile_line

    if not strictness > 0:
        raise typer.BadParameter("must be > 0", param_hint="--strictness")
    line = parse_answer_line(answer_line)
    verdict = judge(given, line, strictness=strictness)
    asked = f' (ask: "{verdict.prompt_question}")' if verdict.prompt_question else ""
    typer.echo(f"{verdict.directive.value}{asked}")
    typer.echo(f"why: {verdict.rule}")
    if verdict.matched is not None:
        typer.echo(f"form: {verdict.matched}")
    typer.echo(f"similarity: {verdict.score:.2f}")
    if not forms:
        return
    compiled = compile_line(line)
    for title, listed in (
        ("accept", compiled.accept),
        ("prompt", compiled.prompt),
        ("reject", compiled.reject),
    ):
        typer.echo(f"{title} forms:")
        for form in listed:
            extra = f' (ask: "{form.question}")' if form.question else ""
            directive = "" if form.directive.value == title else f" [{form.directive.value}]"
            typer.echo(f"  {form.text}{directive}{extra}  <- {form.source}")
        if not listed:
            typer.echo("  (none)")
    typer.echo(f"flags: {', '.join(sorted(line.flags)) or '(none)'}")
    typer.echo(f"underlining: {'yes' if line.formatted else 'none (the looser conventions apply)'}")
