"""``grace-arena proxy ...``: one address for an event served by several processes (HAProxy)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grace_arena.cli.groups import command_group
from grace_arena.cli.options import DbOption, existing_db, redacted
from grace_arena.cli.root import app

proxy_app = command_group(
    help="One address for an event: HAProxy in front of the server processes that share the "
    "record, routing each phone, display and moderator by join code to the process that serves "
    "its room, and following the rooms when one moves (a process stopped or died).",
    no_args_is_help=True,
)
app.add_typer(proxy_app, name="proxy")

HostOption = Annotated[
    str, typer.Option("--host", help="Address the proxy listens on (0.0.0.0: every network).")
]
PortOption = Annotated[int, typer.Option("--port", help="Port the proxy listens on.")]
DirOption = Annotated[
    Path,
    typer.Option("--dir", help="Folder for HAProxy's configuration, room map and admin socket."),
]
EventOption = Annotated[
    str | None,
    typer.Option(
        "--event", help="Route to the processes of this event only (default: every process)."
    ),
]
TtlOption = Annotated[
    float,
    typer.Option(
        "--lease-ttl",
        min=1.0,
        help="Seconds after which a process that did not renew its record is dead (as serve's "
        "--lease-ttl).",
    ),
]


def _runner(db: str | None, host: str, port: int, directory: Path, event: str | None, ttl: float):
    from grace_arena.record.db import open_engine
    from grace_arena.record.errors import RecordError
    from grace_arena.record.schedule import event_id_of
    from grace_arena.server.proxy import ProxyLayout, ProxyRunner

    url = existing_db(db)
    typer.echo(f"record: {redacted(url)}")
    engine = open_engine(url)
    events: tuple[int, ...] = ()
    if event is not None:
        try:
            events = (event_id_of(engine, event),)
        except RecordError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
    layout = ProxyLayout(host=host, port=port, directory=directory.resolve())
    try:
        return ProxyRunner(engine, layout, ttl=ttl, events=events)
    except FileNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


@proxy_app.command("config")
def config(
    db: DbOption = None,
    host: HostOption = "0.0.0.0",
    port: PortOption = 8080,
    directory: DirOption = Path("grace-arena-proxy"),
    event: EventOption = None,
    lease_ttl: TtlOption = 15.0,
) -> None:
    """Write HAProxy's configuration and room map for the processes live in the record now,
    check it with HAProxy, and print it (``proxy run`` also keeps it current)."""
    runner = _runner(db, host, port, directory, event, lease_ttl)
    table = runner.read()
    runner.write(table)
    try:
        runner.check()
    except RuntimeError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(runner.layout.config_path.read_text(), nl=False)
    typer.echo(
        f"# {len(table.servers)} server processes, {len(table.rooms)} rooms routed; "
        f"map: {runner.layout.map_path}\n# run: haproxy -W -f {runner.layout.config_path}"
    )


@proxy_app.command("run")
def run(
    db: DbOption = None,
    host: HostOption = "0.0.0.0",
    port: PortOption = 8080,
    directory: DirOption = Path("grace-arena-proxy"),
    event: EventOption = None,
    lease_ttl: TtlOption = 15.0,
    interval: Annotated[
        float, typer.Option(min=0.1, help="Seconds between reads of the record.")
    ] = 1.0,
) -> None:
    """Run HAProxy on the event's one address and keep it current: a room that moves to
    another process (a process stopped or died) is routed there within ``--interval``, a
    process that starts or stops reloads HAProxy. Start each ``serve --event`` with
    ``--proxy`` this address. Ctrl+C stops."""
    import signal
    import time

    def stop(_signum, _frame) -> None:  # a service manager's stop: HAProxy stops too
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    runner = _runner(db, host, port, directory, event, lease_ttl)
    try:
        runner.start()
    except RuntimeError as exc:
        typer.echo(f"error: {exc}", err=True)
        runner.stop()
        raise typer.Exit(1) from None
    table = runner.table
    typer.echo(
        f"proxy listening on {runner.address}: {len(table.servers)} server processes, "
        f"{len(table.rooms)} rooms routed — Ctrl+C stops",
    )
    try:
        while runner.proc is not None and runner.proc.poll() is None:
            time.sleep(interval)
            try:
                said = runner.refresh()
            except Exception as exc:  # the record unreachable for a moment: try again
                typer.echo(f"warning: the record could not be read ({exc}); trying again", err=True)
                continue
            if said:
                typer.echo(said)
    except KeyboardInterrupt:
        pass
    finally:
        runner.stop()
