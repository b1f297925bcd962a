"""``grace-arena packet ...``: check packet files and show how tossups are split into clues."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import SkipBrokenOption, echo_skipped, skippable
from grace_arena.cli.root import app

if TYPE_CHECKING:
    from grace_arena.core.packet import Bonus, Packet, Tossup

packet_app = command_group(
    help="Question packets: validate them, and show their clues and word positions.",
    no_args_is_help=True,
)
app.add_typer(packet_app, name="packet")

_PACKET_SUFFIXES = (".yaml", ".yml", ".json", ".docx")


def _packet_files(paths: list[Path]) -> list[Path]:
    """The files to check: each file as given, and the packet files directly inside a folder."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                p
                for p in sorted(path.iterdir())
                if p.suffix.lower() in _PACKET_SUFFIXES and not p.name.endswith(".schema.json")
            )
        else:
            files.append(path)
    return files


@packet_app.command("validate")
def validate(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Packet files (.yaml, .yml, .json: ours, MODAQ's or QB Reader's; .docx) or "
            "folders of them."
        ),
    ],
    skip_broken_questions: SkipBrokenOption = False,
) -> None:
    """Check packet files; print every problem found, each naming the file, the paragraph (of
    a .docx) or line, and the question's number. Exit status 1 if there is any (a .docx
    tossup with no ANSWER line is one), unless --skip-broken-questions leaves out every
    question with a problem: the count then says what a match on it plays."""
    from grace_arena.core.packet import PacketError, load_packet

    files = _packet_files(paths)
    if not files:
        typer.echo("no packet files found", err=True)
        raise typer.Exit(1)
    failed = False
    for file in files:
        try:
            packet = load_packet(file, skip_broken=skip_broken_questions)
        except PacketError as exc:
            failed = True
            for problem in exc.problems:
                typer.echo(str(problem))
            if not skip_broken_questions and skippable(exc.problems):
                typer.echo(
                    f"{file}: each problem is one question's: --skip-broken-questions plays "
                    "the packet without them"
                )
            count = sum(not p.warning for p in exc.problems)
            summary = f"{file}: {count} problem{'s' if count != 1 else ''}"
            typer.echo(typer.style(summary, fg=typer.colors.RED, bold=True))
        else:
            echo_skipped(packet)
            _echo_warnings(packet)
            count = len(packet.warnings)
            noticed = f", {count} warning{'s' if count != 1 else ''}" if count else ""
            skipped = packet.skipped_counts()
            summary = f"{file}: {packet.counts()}, OK" + (f" ({skipped})" if skipped else "")
            typer.echo(typer.style(summary + noticed, fg=typer.colors.GREEN))
    if failed:
        raise typer.Exit(1)


def _echo_warnings(packet: Packet) -> None:
    for warning in packet.warnings:
        typer.echo(typer.style(str(warning), fg=typer.colors.YELLOW))


def _pack(items: list[str], width: int) -> list[str]:
    """Join items with spaces into lines of at most ``width`` characters, never splitting one."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 1 + len(item) <= width:
            lines[-1] += " " + item
        else:
            lines.append(item)
    return lines or [""]


def _show_tossup(position: int, tossup: Tossup, *, words: bool, width: int) -> None:
    tokens = tossup.tokens()
    category = tossup.category + (f" / {tossup.subcategory}" if tossup.subcategory else "")
    power = f", power before word {tokens.power_index}" if tokens.power_index is not None else ""
    header = f"#{position} {tossup.id}  [{category}]  {len(tokens)} words, "
    header += f"{tokens.n_clues} clues{power}"
    typer.echo(typer.style(header, bold=True))
    for i, clue_text in enumerate(tokens.clue_texts()):
        first, last = tokens.clue_start(i), tokens.prefix_end(i)
        label = f"  clue {i} (words {first}-{last}): "
        room = max(40, width - len(label))
        if words:
            items = [
                ("(*) " if w == tokens.power_index else "") + f"{w}:{tokens.words[w].text}"
                for w in range(first, last + 1)
            ]
            lines = _pack(items, room)
        else:
            lines = textwrap.wrap(clue_text, width=room) or [""]
        typer.echo(label + lines[0])
        for line in lines[1:]:
            typer.echo(" " * len(label) + line)
    typer.echo(f"  ANSWER: {tossup.answer}")
    if tossup.notes:
        typer.echo(f"  NOTES: {tossup.notes}")
    typer.echo("")


def _show_bonus(position: int, bonus: Bonus, *, width: int) -> None:
    category = bonus.category + (f" / {bonus.subcategory}" if bonus.subcategory else "")
    header = f"bonus #{position} {bonus.id}  [{category}]  {len(bonus.parts)} parts, "
    header += f"{bonus.value} points"
    typer.echo(typer.style(header, bold=True))
    if bonus.leadin:
        for line in textwrap.wrap(bonus.leadin, width=width - 2):
            typer.echo("  " + line)
    for number, part in enumerate(bonus.parts, start=1):
        marker = f"  [{part.value}{part.difficulty or ''}] "
        lines = textwrap.wrap(f"{number}. {part.text}", width=max(40, width - len(marker)))
        typer.echo(marker + lines[0])
        for line in lines[1:]:
            typer.echo(" " * len(marker) + line)
        typer.echo(" " * len(marker) + f"ANSWER: {part.answer}")
    if bonus.notes:
        typer.echo(f"  NOTES: {bonus.notes}")
    typer.echo("")


@packet_app.command("show")
def show(
    path: Annotated[Path, typer.Argument(help="Packet file.")],
    tossup: Annotated[
        str | None, typer.Option("--tossup", "-t", help="Show only the tossup with this id.")
    ] = None,
    bonus: Annotated[
        str | None, typer.Option("--bonus", "-b", help="Show only the bonus with this id.")
    ] = None,
    words: Annotated[
        bool, typer.Option("--words", "-w", help="Print every word with its index.")
    ] = False,
    width: Annotated[int, typer.Option(help="Wrap lines at this many characters.")] = 100,
) -> None:
    """Print tossups with their clue boundaries and word indices (positions used by buzzes),
    then bonuses with their parts, values and answers."""
    from grace_arena.core.packet import PacketError, load_packet

    try:
        packet = load_packet(path)
    except PacketError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(1) from None
    chosen = list(enumerate(packet.tossups, start=1))
    bonuses = list(enumerate(packet.bonuses, start=1))
    if tossup is not None or bonus is not None:
        chosen = [(i, t) for i, t in chosen if t.id == tossup]
        bonuses = [(i, b) for i, b in bonuses if b.id == bonus]
        for kind, wanted, found, questions in (
            ("tossup", tossup, chosen, packet.tossups),
            ("bonus", bonus, bonuses, packet.bonuses),
        ):
            if wanted is not None and not found:
                known = ", ".join(q.id for q in questions) or "none"
                typer.echo(f"{path}: no {kind} {wanted!r} (ids: {known})", err=True)
                raise typer.Exit(1)
    else:
        typer.echo(f"{packet.packet.title} ({packet.packet.id}): {packet.counts()}\n")
        _echo_warnings(packet)
    for position, item in chosen:
        _show_tossup(position, item, words=words, width=width)
    for position, item in bonuses:
        _show_bonus(position, item, width=width)


@packet_app.command("import")
def import_(
    path: Annotated[
        Path,
        typer.Argument(help="A .docx packet, or MODAQ's (YAPP's) or QB Reader's packet JSON."),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="The packet file to write (.yaml or .json); default: the "
            "input's name with .yaml, next to it.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Replace the output file if it exists.")] = False,
) -> None:
    """Read a packet as clubs have it and write it in this product's format, to read or edit.
    (Every command takes these files as they are: importing is only needed to edit them.)"""
    from grace_arena.core.packet import PacketError, dump_packet, load_packet

    target = output or path.with_suffix(".yaml")
    if target.resolve() == path.resolve():
        typer.echo(f"{target}: the output would replace the input; give --output", err=True)
        raise typer.Exit(1)
    if target.exists() and not force:
        typer.echo(f"{target} exists; give --force to replace it", err=True)
        raise typer.Exit(1)
    try:
        packet = load_packet(path)
    except PacketError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(1) from None
    _echo_warnings(packet)
    dump_packet(packet, target)
    typer.echo(f"{path}: {packet.counts()}; wrote {target}")


@packet_app.command("schema")
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of packet files (questions/packet.schema.json is this output)."""
    from grace_arena.core.packet import packet_json_schema

    text = json.dumps(packet_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")
