"""The `conduit-mcp` command: one module a group of commands, each imported only when one of
its commands is named (the console script's entry point is `main`).

Where each command lives:

    inspect, diff, fingerprint  `cli/_inspect.py`
    capture                     `cli/_capture.py` (the file it writes: `cli/_capture_file.py`)
    pins ...                    `cli/_pins.py`
    proxy                       `cli/_proxy.py` (the running proxy: `conduit_mcp.proxy`;
                                the command line `wrap` writes is read by `cli/_proxy_fast.py`
                                without typer, into the same run)
    wrap, unwrap                `cli/_wrap.py` (the config rewriting: `conduit_mcp.wrap`)

and beside them: `_app.py` the root (its options and help, and `COMMANDS`, the table of
commands, each loaded when named), `_shared.py` what the groups share (exit codes, options,
reading a page, table cells), `_text.py` what reaches a terminal, `_help.py` the plain help
layout. A new group (the coming `console` and `policy`) is one module `cli/_<group>.py` whose
typer app `app` (made with `_help.typer_app`) holds its commands with their help, and one row
per top-level command in `_app.COMMANDS`. The CLI uses the faces' public names only.

Exit codes (the same for every command):
    0  done, nothing to report (inspect: no tool rejected, and with `--fail-on warning` no
       warning; diff: no drift; pins check: every tool approved; pins changes: no change; pins
       revoke: every pin removed; capture: the pages were written)
    1  done, with findings (inspect: a tool was rejected, or with `--fail-on warning` warned
       about; diff: tools added, removed or changed; pins check/changes: a tool new, changed,
       cosmetic or rejected; pins revoke: no such pin)
    2  the input could not be read: missing file, not JSON, not a tools/list result or capture
       file, bad option, a pin store that cannot be opened or does not exist (a proxy run
       with --pins creates one, as do `pins approve`, `policy set` and `console add-user`);
       capture: the server could not be run or reached, or answered
       with an error

Every command that reads a page takes a capture file (`conduit-mcp capture`) too, and reads it
under the protocol version and transport it recorded unless an option says otherwise.

pins list, pins audit and pins pending exit 0 once the store is read (pins pending --exit-code:
1 while any tool waits for approval).

A bad option is a usage error naming the option (exit code 2). Bad input gives one line on
stderr (`conduit-mcp: <file>: <reason> at <path>: <message>`; text that is not UTF-8 or not
JSON says the line and column) and no traceback. `--json` writes one JSON document to stdout
for programs, with invisible and control characters escaped; without it, plain lines and
tables are written for people, with every server string shown as written (no markup, no emoji
shortcodes) and hidden characters as `\\uXXXX`. When the reader of stdout goes away
(`| head -1`), the command writes nothing more and exits with its own code.
"""

from __future__ import annotations

import sys
from importlib.util import find_spec
from typing import Any

__all__ = ["CLI_MODULES", "main"]

#: The top-level modules the `cli` extra provides.
CLI_MODULES = ("typer", "rich", "click")


def main() -> None:
    """Run the `conduit-mcp` command; without the `cli` extra print one line and exit 2.

    The library itself needs neither typer nor rich nor click; they come with the `cli` extra.
    Without one of them the command says what to install on stderr and exits 2 (the CLI's exit
    code for input it cannot act on) instead of raising `ModuleNotFoundError`.

    `conduit-mcp proxy --server-id ID [--pins LOCATION] [--quiet] -- COMMAND...` (what `wrap`
    writes) is read without typer (`_proxy_fast`), the same run as typer's; every other command
    line goes to the typer app.

    Raises:
        SystemExit: 2 when typer, rich or click is not installed; otherwise the command's own
            exit code.
    """
    missing = next((name for name in CLI_MODULES if find_spec(name) is None), None)
    if missing is not None:
        from .._program import install_command

        print(
            f"conduit-mcp: the command needs the cli extra ({missing} is not installed):"
            f" {install_command('cli')}",
            file=sys.stderr,
        )
        raise SystemExit(2)
    from ._proxy_fast import parse

    parsed = parse(sys.argv[1:])
    if parsed is not None:  # `proxy` as `wrap` writes it: no typer to build (row P3)
        from ._proxy_fast import run

        raise SystemExit(run(parsed))
    from ._app import app

    app()


def __getattr__(name: str) -> Any:
    # The root typer app (`typer.testing.CliRunner().invoke(app, ...)`): imported on first
    # use, so `main` can name the missing extra first.
    if name == "app":
        from ._app import app

        return app
    raise AttributeError(f"module 'conduit_mcp.cli' has no attribute {name!r}")
