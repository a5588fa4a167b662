"""The root of the `conduit-mcp` command: its options and help, and the table of its commands,
each loaded from its group's module the first time it is named.

`conduit-mcp --help` lists the commands from `COMMANDS` without importing any group; `conduit-mcp
pins ...` imports `cli/_pins.py` and what it needs, nothing of the proxy, the guard or the other
groups. Each group module holds a typer app `app` with its commands and their help.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from ._help import typer_app

#: Each top-level command: the module of its group (relative to this package) and its line in
#: `conduit-mcp --help`, in the order listed there. A new group adds its commands here.
COMMANDS: Mapping[str, tuple[str, str]] = {
    "inspect": (
        "._inspect",
        "Show each tool's fingerprint, warnings, header map and conformance.",
    ),
    "fingerprint": ("._inspect", "Print the fingerprint of a tool, or of every tool of a page."),
    "diff": ("._inspect", "Show tools added, removed or changed between two pages."),
    "capture": (
        "._capture",
        "Save a server's tools/list pages with the negotiated version and transport.",
    ),
    "wrap": ("._wrap", "Run a client's MCP servers through the proxy."),
    "unwrap": ("._wrap", "Undo wrap: the client config as it was."),
    "doctor": ("._wrap", "Start each wrapped server of a client config: ok, held, or why not."),
    "proxy": ("._proxy", "Run an MCP server behind the guard (stdio or HTTP)."),
    "pins": ("._pins", "Approve, check, list, audit and revoke pinned tools."),
    "console": ("._console", "Review held tools in a web page: approve, reject, audit."),
    "policy": ("._policy", "Set and show which tools each caller may list and call."),
}


def load_command(name: str) -> Any:
    """The click command `name` of `COMMANDS`, its group's module imported (once per process),
    with its line of `COMMANDS` as its short help.

    A group module whose app is named `name` (`pins`) is that command; otherwise `name` is
    one of the module's top-level commands (`inspect`, `diff` and `fingerprint` share one).

    Raises:
        KeyError: `name` is not in `COMMANDS`.
    """
    where, line = COMMANDS[name]
    group = typer.main.get_command(importlib.import_module(where, __package__).app)
    command = group if group.name == name else group.commands[name]  # type: ignore[attr-defined]
    command.short_help = line
    return command


class _Commands(MutableMapping[str, Any]):
    """The root's commands by name: those of `COMMANDS` loaded on first lookup, in its order."""

    def __init__(self, registered: Mapping[str, Any]) -> None:
        self._loaded = dict(registered)

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            self._loaded[name] = load_command(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._loaded if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(name not in COMMANDS for name in self._loaded)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._loaded


class LazyGroup(TyperGroup):
    """The root group: a command's group is imported when the command is looked up (to run it,
    or for its own `--help`); the root's `--help` writes each command's line from `COMMANDS`."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command's name, in the order of `COMMANDS` (no group is imported)."""
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The Commands section of `--help`: name and line from `COMMANDS`, nothing loaded."""
        rows = [(name, line) for name, (_, line) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer_app(
    name="conduit-mcp", cls=LazyGroup, no_args_is_help=True, pretty_exceptions_enable=False
)


def _version_callback(value: bool) -> None:
    if value:
        from importlib import metadata

        from .._program import DISTRIBUTION
        from ._shared import EXIT_OK
        from ._text import emit

        emit(f"conduit-mcp {metadata.version(DISTRIBUTION)}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Show the version and exit.",
            is_eager=True,
            callback=_version_callback,
        ),
    ] = False,
) -> None:
    """Guard MCP servers and inspect their tools: run a server behind the guard (proxy), wrap
    a client's config, keep a team's pins, inspect and diff tools/list pages.

    Exit codes: 0 done, nothing that fails the command; 1 done, with a finding that fails it
    (inspect: a rejected tool, and any warning only under --fail-on warning; diff: drift; pins
    check: a tool not approved); 2 unusable input or a bad option. COMMAND -h shows the help
    of a command and what makes it exit 1.
    """
