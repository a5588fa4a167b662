"""`conduit-mcp wrap`, `unwrap` and `doctor`: a client's MCP config rewritten so each server
runs through `conduit-mcp proxy`, put back, and checked (the work itself: `conduit_mcp.wrap`).

Private to the CLI; loaded when one of its commands is named (`cli._app`). `wrap` refuses what
would leave a config whose servers cannot start (no proxy extra, a `--pins` folder that does
not exist); each refusal is one line and exit code 2.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .._program import PROXY_MODULES, install_command, missing_modules, program_name
from ..wrap import ConfigSyntaxError, ServerCheck, doctor_config, unwrap_config, wrap_config
from ._help import PlainHelpCommand, typer_app

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_USAGE = 2
#: What a wrapped entry's `conduit-mcp proxy` needs (`_program.PROXY_MODULES`), and tomlkit (a
#: Codex config), all from the `proxy` extra.
WRAP_MODULES = (*PROXY_MODULES, "tomlkit")

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
    (with its permission bits) before the first change; a symlinked config stays a symlink;
    entries already wrapped are left alone; SSE entries too. Refused (exit 2, nothing written):
    a config its client would not read (file:line:col), a --pins folder that does not exist,
    and, without --proxy-command, a conduit-mcp without the proxy extra.
    """
    if proxy_command is None:
        _require_proxy_extra("wrap")
    options: list[str] = []
    if pins is not None and _is_file_store(pins):
        # Desktop clients start servers in a folder of their own choosing: a relative sqlite
        # path would open (and create) another store there than the one `pins approve` is run
        # against. The config records the absolute path.
        pins = str(Path(pins).expanduser().resolve())
        _require_store_folder(pins)
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
    except ConfigSyntaxError as exc:
        _fail(str(exc))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _fail(f"{config}: {exc}")
    if not outcome.changed and not outcome.skipped:
        print(f"nothing to wrap: {config} has no server entries")
    _report(outcome, dry_run)


def _require_proxy_extra(command: str) -> None:
    """Exit 2 with the install line when the proxy cannot start here (a module of the proxy
    extra is missing): a config wrapped to it would name servers that never start."""
    missing = missing_modules(WRAP_MODULES)
    if missing:
        _fail(
            f"{command} needs the proxy extra (missing: {', '.join(missing)}); without it the "
            f"wrapped servers cannot start: {install_command('proxy')}"
        )


def _require_store_folder(store: str) -> None:
    """Exit 2 when a sqlite `--pins` file cannot be created where it is named: the proxy
    would fail at the client's next start, where only the client's log shows why."""
    path = Path(store)
    folder = path.parent
    if path.is_dir():
        _fail(f"--pins {store}: a folder, not a file (name the store's file in it)")
    if not folder.is_dir():
        _fail(f"--pins {store}: the folder {folder} does not exist (create it first)")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        _fail(f"--pins {store}: the folder {folder} cannot be written")


def _is_file_store(location: str) -> bool:
    """Whether a `--pins` location is a sqlite file path (not a URL, conninfo or `:memory:`)."""
    if location == ":memory:" or "://" in location:
        return False
    return not ("=" in location and " " in location.strip())  # a libpq conninfo string


@app.command("unwrap", cls=PlainHelpCommand)
def unwrap_command(config: ConfigArgument, dry_run: DryRunOption = False) -> None:
    """Undo `conduit-mcp wrap`: the original file back byte for byte when it is unchanged
    since, else each wrapped entry restored with its client's own field names."""
    try:
        outcome = unwrap_config(config, dry_run=dry_run)
    except ConfigSyntaxError as exc:
        _fail(str(exc))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _fail(f"{config}: {exc}")
    if not outcome.changed and not outcome.skipped:
        print(f"nothing to unwrap: no entry of {config} runs through conduit-mcp proxy")
    _report(outcome, dry_run)


@app.command("doctor", cls=PlainHelpCommand)
def doctor_command(
    config: ConfigArgument,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            min=0.1,
            help="How long each server has to answer initialize, and each tools/list page.",
        ),
    ] = 30.0,
) -> None:
    """Start each wrapped server of a client config as the client would, list its tools
    through the proxy, and print one line a server: ok, how many tools are held for approval
    (and the pins pending line that reviews them), or why it cannot start.

    The listing is the client's own: with a pin store, new tools are queued for review there.
    Exit codes: 0 every wrapped server started; 1 one cannot start, or none is wrapped; 2 the
    config cannot be read, or the proxy extra is missing.
    """
    from ._text import visible

    _require_proxy_extra("doctor")
    try:
        checks = doctor_config(config, timeout=timeout)
    except ConfigSyntaxError as exc:
        _fail(str(exc))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _fail(f"{config}: {exc}")
    failed = wrapped = 0
    for check in checks:
        wrapped += check.state != "not_wrapped"
        failed += check.state == "cannot_start"
        state = check.state.replace("_", " ")
        print(f"{state:<12} {visible(check.name)}{_details(check, visible)}", flush=True)
    if not wrapped:
        print(
            f"nothing to check: no entry of {config} runs through conduit-mcp proxy "
            f"(conduit-mcp wrap {shlex.quote(str(config))})"
        )
    sys.exit(EXIT_FINDING if failed or not wrapped else EXIT_OK)


def _details(check: ServerCheck, visible: Any) -> str:
    """The rest of a doctor line after the server's name."""
    if check.state == "not_wrapped":
        return ": its client starts it without the proxy"
    if check.state == "cannot_start":
        return f": {visible(check.why)}"
    listed = f"{check.listed} tool{'' if check.listed == 1 else 's'} listed"
    removed = f" ({check.rejected} malformed, removed)" if check.rejected else ""
    if check.state == "ok":
        return f": {listed}{removed}"
    waiting = [f"{len(check.held)} held"] if check.held else []
    waiting += [f"{len(check.blocked)} blocked (changed since approved)"] if check.blocked else []
    return f": {', '.join(waiting)}, {listed}{removed}; {_review(check)}"


def _review(check: ServerCheck) -> str:
    """How to review the held and blocked tools of a checked server."""
    if check.store is None or check.store == ":memory:":
        return "the proxy keeps its pins in memory: wrap with --pins FILE to approve them"
    if _is_file_store(check.store):
        store = str(Path(check.store).expanduser().resolve())
    else:
        from ..pins import redacted_location

        store = redacted_location(check.store)
    command = [program_name(), "pins", "pending", "--store", store]
    command += ["--server-id", check.server_id or check.name]
    return f"review them with: {shlex.join(command)}"


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
