"""`conduit-mcp wrap` and `unwrap`: a client's MCP config rewritten so each server runs
through `conduit-mcp proxy`, and put back (the rewriting itself: `conduit_mcp.wrap`).

Private to the CLI; loaded when one of its commands is named (`cli._app`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .._program import install_command
from ..wrap import unwrap_config, wrap_config
from ._help import PlainHelpCommand, typer_app

EXIT_USAGE = 2

app = typer_app()

ConfigArgument = Annotated[
    Path,
    typer.Argument(
        metavar="CONFIG",
        help="A client's MCP config: claude_desktop_config.json, .mcp.json, ~/.claude.json, "
        "Cursor/Windsurf/VS Code mcp.json, Gemini settings.json, Codex config.toml.",
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the diff; change nothing.")]


@app.command("wrap", cls=PlainHelpCommand)
def wrap_command(
    config: ConfigArgument,
    pins: Annotated[
        str | None,
        typer.Option("--pins", metavar="LOCATION", help="Pin store every proxy uses."),
    ] = None,
    new: Annotated[
        str | None,
        typer.Option("--new", metavar="pin|allow|hold|block", help="Passed to every proxy."),
    ] = None,
    changed: Annotated[
        str | None,
        typer.Option("--changed", metavar="block|allow|hold", help="Passed to every proxy."),
    ] = None,
    proxy_command: Annotated[
        str | None,
        typer.Option(
            "--proxy-command",
            metavar="PATH",
            help="The conduit-mcp program clients launch (default: this one, absolute path).",
        ),
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            metavar="DIR",
            help="Each proxy writes its own event log, DIR/SERVER_ID.log (JSON lines).",
        ),
    ] = None,
    dry_run: DryRunOption = False,
) -> None:
    """Rewrite each MCP server entry of a client config to run through `conduit-mcp proxy`.

    The server id is the entry's key. The original file is copied to CONFIG.conduit-mcp.bak
    before the first change; entries already wrapped are left alone; SSE entries too.
    """
    options: list[str] = []
    if pins is not None and _is_file_store(pins):
        # Desktop clients start servers in a folder of their own choosing: a relative sqlite
        # path would open (and create) another store there than the one `pins approve` is run
        # against. The config records the absolute path.
        pins = str(Path(pins).expanduser().resolve())
    for flag, value in (("--pins", pins), ("--new", new), ("--changed", changed)):
        if value is not None:
            options += [flag, value]
    try:
        log_dir = None if log is None else log.expanduser().resolve()  # as --pins: absolute
        if log_dir is not None and not dry_run:
            log_dir.mkdir(parents=True, exist_ok=True)
        outcome = wrap_config(
            config, proxy=proxy_command, options=options, dry_run=dry_run, log_dir=log_dir
        )
    except ImportError as exc:  # tomlkit, for a Codex config
        _fail(f"wrap needs the proxy extra: {install_command('proxy')} ({exc})")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _fail(f"{config}: {exc}")
    _report(outcome, dry_run)


def _is_file_store(location: str) -> bool:
    """Whether a `--pins` location is a sqlite file path (not a URL, conninfo or `:memory:`)."""
    if location == ":memory:" or "://" in location:
        return False
    return not ("=" in location and " " in location.strip())  # a libpq conninfo string


@app.command("unwrap", cls=PlainHelpCommand)
def unwrap_command(config: ConfigArgument, dry_run: DryRunOption = False) -> None:
    """Undo `conduit-mcp wrap`: the original file back byte for byte when it is unchanged
    since, else each wrapped entry restored."""
    try:
        outcome = unwrap_config(config, dry_run=dry_run)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _fail(f"{config}: {exc}")
    _report(outcome, dry_run)


def _report(outcome: Any, dry_run: bool) -> None:
    if dry_run:
        sys.stdout.write(outcome.diff())
    for name, what in outcome.changed:
        print(f"{what + (' (dry run)' if dry_run else ''):<10} {name}")
    for name, why in outcome.skipped:
        print(f"skipped    {name}: {why}")
    if outcome.backup is not None:
        print(f"backup     {outcome.backup}")


def _fail(message: str) -> Any:
    print(f"conduit-mcp: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)
