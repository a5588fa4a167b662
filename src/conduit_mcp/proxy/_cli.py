"""The `conduit-mcp proxy` command (registered on the main `conduit-mcp` app).

Not a public module. Imports of the MCP SDK happen inside the command, so `conduit-mcp --help`
works without the proxy extra.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from .._cli_help import PlainHelpCommand
from ..client._install import install_command
from ._settings import HEADERS_ENV, GuardSettings, HttpUpstream

EXIT_USAGE = 2

ServerIdOption = Annotated[
    str,
    typer.Option(
        "--server-id",
        metavar="ID",
        help="The server's id: keys its pins (the key of its entry in a client config).",
    ),
]


def _policy(
    new: str | None,
    changed: str | None,
    check_arguments: bool | None,
    invalid_output: str | None,
    output_timeout: float | None,
    sdk_output_schema: str | None,
) -> dict[str, Any]:
    given = {
        "new": new,
        "changed": changed,
        "check_arguments": check_arguments,
        "invalid_output": invalid_output,
        "output_timeout": output_timeout,
        "sdk_output_schema": sdk_output_schema,
    }
    return {key: value for key, value in given.items() if value is not None}


def proxy_command(
    server_id: ServerIdOption,
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND",
            help="The server's command line, after -- (e.g. -- npx -y @scope/server /data).",
            show_default=False,
        ),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(
            "--upstream",
            metavar="URL",
            help="Proxy a Streamable HTTP server instead of a command (e.g. "
            "https://host/mcp). Headers for it (Authorization, ...) come from the environment "
            f"variable {HEADERS_ENV} (a JSON object) and --header.",
        ),
    ] = None,
    listen: Annotated[
        str | None,
        typer.Option(
            "--listen",
            metavar="HOST:PORT",
            help="Serve clients over Streamable HTTP at http://HOST:PORT/mcp instead of "
            "stdio (each session gets its own server process or upstream session).",
        ),
    ] = None,
    max_in_flight_per_client: Annotated[
        int | None,
        typer.Option(
            "--max-in-flight-per-client",
            metavar="N",
            min=1,
            help="With --listen: requests in flight per stateless (2026-07-28) client, listen "
            "streams included; a client is its Authorization credential, else its address "
            "(default: 256).",
        ),
    ] = None,
    max_listen_streams_per_client: Annotated[
        int | None,
        typer.Option(
            "--max-listen-streams-per-client",
            metavar="N",
            min=1,
            help="With --listen: open subscriptions/listen streams per stateless client "
            "(default: 32).",
        ),
    ] = None,
    max_listen_streams: Annotated[
        int | None,
        typer.Option(
            "--max-listen-streams",
            metavar="N",
            min=1,
            help="With --listen: open subscriptions/listen streams of all stateless clients "
            "together (default: 1024, a quarter of the guard's 4096 requests in flight).",
        ),
    ] = None,
    max_in_flight_per_address: Annotated[
        int | None,
        typer.Option(
            "--max-in-flight-per-address",
            metavar="N",
            min=1,
            help="With --listen: requests in flight from one address (the TCP peer), whatever "
            "credentials they carry: the proxy checks none (default: 1024).",
        ),
    ] = None,
    max_listen_streams_per_address: Annotated[
        int | None,
        typer.Option(
            "--max-listen-streams-per-address",
            metavar="N",
            min=1,
            help="With --listen: open subscriptions/listen streams from one address "
            "(default: 128).",
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            metavar="'NAME: VALUE'",
            help="A header for every upstream request (repeatable). Visible to other local "
            f"users in the process list: put credentials in {HEADERS_ENV} instead.",
        ),
    ] = None,
    pins: Annotated[
        str | None,
        typer.Option(
            "--pins",
            metavar="LOCATION",
            help="Pin store: a sqlite file (created if missing) or a postgresql:// URL. "
            "Default: pins in memory for this run (new tools pinned on first use).",
        ),
    ] = None,
    new: Annotated[
        str | None,
        typer.Option(
            "--new",
            metavar="pin|allow|hold|block",
            help="A tool never pinned (default: pin; hold with --pins).",
        ),
    ] = None,
    changed: Annotated[
        str | None,
        typer.Option(
            "--changed",
            metavar="block|allow|hold",
            help="A tool that differs from its pin (default: block).",
        ),
    ] = None,
    check_arguments: Annotated[
        bool | None,
        typer.Option(
            "--check-arguments/--no-check-arguments",
            help="Refuse a call whose arguments fail the tool's inputSchema (default: on).",
            show_default=False,
        ),
    ] = None,
    invalid_output: Annotated[
        str | None,
        typer.Option(
            "--invalid-output",
            metavar="withhold|flag|pass",
            help="Structured content that fails the tool's outputSchema: withhold (the client gets "
            "an isError result saying why), flag (logged, passed on) or pass (not checked) "
            "(default: withhold).",
        ),
    ] = None,
    output_timeout: Annotated[
        float | None,
        typer.Option(
            "--output-timeout",
            metavar="SECONDS",
            help="Longest an argument or output check may take; past it the call is refused, or "
            "the output counts as invalid (default: 2).",
        ),
    ] = None,
    sdk_output_schema: Annotated[
        str | None,
        typer.Option(
            "--sdk-output-schema",
            metavar="hide_unsafe|keep",
            help="hide_unsafe: list a tool without its outputSchema when it has pattern, "
            "patternProperties or uniqueItems, which a Python SDK client would re-check "
            "slowly or wrongly (the proxy still checks the output); keep: list it as sent "
            "(default: hide_unsafe).",
        ),
    ] = None,
    held_dir: Annotated[
        Path | None,
        typer.Option(
            "--held-dir",
            metavar="DIR",
            help="Where a held tool's definition is written for `conduit-mcp pins approve` "
            "(default: ~/.local/state/conduit-mcp/held).",
        ),
    ] = None,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            metavar="FILE",
            help="Write logs to FILE as JSON lines (default: text on stderr).",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            help="Log warnings and errors only: refused calls (on stderr once a minute per "
            "reason and tool; --log keeps all), and the one line a listing "
            "that holds tools leaves (how many, and the pins pending command: a client's "
            "only clue to an empty tool list).",
        ),
    ] = False,
) -> None:
    """Run an MCP server behind the guard: an MCP server on stdin/stdout to the client, the
    guard in the middle, the real server as a child process (after --) or a Streamable HTTP
    server (--upstream URL); with --listen, clients connect over Streamable HTTP instead.

    stdout carries protocol bytes only; the server's stderr is relayed; SIGINT and SIGTERM are
    sent on to the server; the exit code is the server's (127: it could not be started).
    """
    if bool(command) == bool(upstream):
        raise typer.BadParameter(
            "give the server's command after --, or --upstream URL (one of them)",
            param_hint="COMMAND",
        )
    if not server_id:
        raise typer.BadParameter("a server id must not be empty", param_hint="--server-id")
    if upstream is not None:
        _check_upstream(upstream)
    settings = GuardSettings(
        server_id=server_id,
        pins=pins,
        policy=_policy(
            new, changed, check_arguments, invalid_output, output_timeout, sdk_output_schema
        ),
        held_dir=held_dir,
    )
    target: list[str] | HttpUpstream = list(command or [])
    if upstream is not None:
        target = HttpUpstream(upstream, _headers(header or []))
    address = _address(listen) if listen is not None else None
    caps = {
        "max_in_flight_per_client": max_in_flight_per_client,
        "max_listen_streams_per_client": max_listen_streams_per_client,
        "max_listen_streams": max_listen_streams,
        "max_in_flight_per_address": max_in_flight_per_address,
        "max_listen_streams_per_address": max_listen_streams_per_address,
    }
    budget = {name: cap for name, cap in caps.items() if cap is not None}
    sys.exit(run(settings, target, log=log, quiet=quiet, listen=address, budget=budget))


def _loop_options() -> dict[str, bool]:
    """uvloop for the HTTP listener when it is installed (the event loop's own work is a large
    part of an HTTP round trip through the proxy), else asyncio's loop."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


def _address(value: str) -> tuple[str, int]:
    host, colon, port = value.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise typer.BadParameter(f"expected HOST:PORT, got {value!r}", param_hint="--listen")
    return host.strip("[]"), int(port)


def _headers(options: list[str]) -> dict[str, str]:
    """Upstream headers: the JSON object in the environment, then each --header."""
    headers: dict[str, str] = {}
    raw = os.environ.get(HEADERS_ENV)
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise typer.BadParameter(f"{HEADERS_ENV} must be a JSON object of strings")
        headers.update(value)
    for option in options:
        name, colon, value = option.partition(":")
        if not colon or not name.strip():
            raise typer.BadParameter(f"expected 'NAME: VALUE', got {name.strip()!r}: ...")
        headers[name.strip()] = value.strip()
    return headers


def run(
    settings: GuardSettings,
    target: list[str] | HttpUpstream,
    *,
    log: Path | None = None,
    quiet: bool = False,
    listen: tuple[str, int] | None = None,
    budget: dict[str, int] | None = None,
) -> int:
    """Start the guard and the stdio proxy; returns the exit code (2 for a bad option or an
    unusable pin store, with one line on stderr). `budget`: `_budget.ClientBudget` caps for
    the listener's stateless clients (those not given keep their defaults)."""
    from ._logs import configure

    configure(log, logging.WARNING if quiet else logging.INFO)
    try:
        import anyio

        from ._seam import GuardSeam
        from ._stdio import run_stdio
    except ImportError as exc:
        _fail(f"the proxy needs the proxy extra: {install_command('proxy')} ({exc})")
    metrics = None
    if listen is not None:
        try:
            from ._metrics import Metrics
        except ImportError as exc:  # prometheus-client
            _fail(f"the proxy needs the proxy extra: {install_command('proxy')} ({exc})")
        metrics = Metrics(settings.server_id)
    try:
        seam = GuardSeam(
            settings,
            on_event=metrics.on_event if metrics else None,
            on_exchange=metrics.exchange if metrics else None,
        )
    except (TypeError, ValueError) as exc:
        _fail(str(exc))
    except Exception as exc:  # the pin store: FileNotFoundError, sqlite3.Error, psycopg.Error
        from ._seam import redacted

        where = redacted(settings.pins or "")
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        reason = reason.replace(settings.pins or "", where)
        _fail(f"--pins {where}: cannot open the pin store: {reason}")
    if listen is not None:
        from ._budget import ClientBudget
        from ._listen import serve

        caps = ClientBudget(**(budget or {}))
        try:
            return anyio.run(
                lambda: serve(seam, target, *listen, metrics=metrics, budget=caps),
                backend_options=_loop_options(),
            )
        except OSError as exc:
            _fail(f"--listen {listen[0]}:{listen[1]}: {exc.strerror or exc}")
        finally:
            seam.close()
    wire = _claim_stdout()
    try:
        if isinstance(target, HttpUpstream):
            return anyio.run(lambda: run_stdio(seam, None, upstream=target, stdout_fd=wire))
        return anyio.run(lambda: run_stdio(seam, target, stdout_fd=wire))
    finally:
        seam.close()


def _claim_stdout() -> int:
    """Keep fd 1 for protocol bytes only: the wire moves to a private descriptor and fd 1 then
    points at stderr, so a stray print from any library lands in the log, not in the stream."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    return wire


def _fail(message: str) -> Any:
    print(f"conduit-mcp: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


ConfigArgument = Annotated[
    Path,
    typer.Argument(
        metavar="CONFIG",
        help="A client's MCP config: claude_desktop_config.json, .mcp.json, ~/.claude.json, "
        "Cursor/Windsurf/VS Code mcp.json, Gemini settings.json, Codex config.toml.",
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the diff; change nothing.")]


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
    dry_run: DryRunOption = False,
) -> None:
    """Rewrite each MCP server entry of a client config to run through `conduit-mcp proxy`.

    The server id is the entry's key. The original file is copied to CONFIG.conduit-mcp.bak
    before the first change; entries already wrapped are left alone; SSE entries too.
    """
    from ._config import wrap_config

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
        outcome = wrap_config(config, proxy=proxy_command, options=options, dry_run=dry_run)
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


def unwrap_command(config: ConfigArgument, dry_run: DryRunOption = False) -> None:
    """Undo `conduit-mcp wrap`: the original file back byte for byte when it is unchanged
    since, else each wrapped entry restored."""
    from ._config import unwrap_config

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


def _check_upstream(url: str) -> None:
    """Refuse an `--upstream` that is no http(s) URL before anything starts (it was taken, and
    every request then failed with `UnsupportedProtocol`). Raises `typer.BadParameter`."""
    parsed = urlsplit(url)
    if parsed.scheme.lower() not in ("http", "https") or not parsed.netloc:
        raise typer.BadParameter(
            f"expected a Streamable HTTP server's http:// or https:// URL "
            f"(e.g. https://host/mcp), got {url!r}",
            param_hint="--upstream",
        )


def register(app: typer.Typer) -> None:
    """Add the `proxy`, `wrap` and `unwrap` commands to the `conduit-mcp` app."""
    app.command(
        "wrap", cls=PlainHelpCommand, short_help="Run a client's MCP servers through the proxy."
    )(wrap_command)
    app.command(
        "unwrap", cls=PlainHelpCommand, short_help="Undo wrap: the client config as it was."
    )(unwrap_command)
    app.command(
        "proxy",
        cls=PlainHelpCommand,
        short_help="Run an MCP server behind the guard (stdio or HTTP).",
        context_settings={"allow_interspersed_args": False},
    )(proxy_command)
