"""`conduit-mcp proxy` as `wrap` writes it, read without typer: a desktop client's start is faster.

Private to the CLI (`cli.main` asks it first). typer builds a pydantic adapter per option of
`proxy` when it parses a command line (and imports pydantic for it): about half the CPU a
proxy spent before relaying its first byte (issue 33, row P3). The command line a wrapped
client config runs has one narrow shape,

    conduit-mcp proxy --server-id ID [--pins LOCATION] [--quiet] -- COMMAND [ARGS...]

(each option at most once, each value its own word), and that shape alone is read here, into
the same `conduit_mcp.proxy.run` call `cli._proxy.proxy_command` makes for it (the other
options at their defaults; tests/test_cli_proxy_fast.py compares the two calls). Any other
command line (another option, `--name=value`, `-h`/`--help`, a value that is empty or starts
with `-`, no `--`, no command, shell completion) is left to typer, so help, usage errors and
every other option keep one source.
"""

from __future__ import annotations

import os
from typing import Any

#: The options read here: option -> `proxy_command` parameter; `None` marks a flag.
_OPTIONS: dict[str, str | None] = {"--server-id": "server_id", "--pins": "pins", "--quiet": None}
_FLAGS: dict[str, str] = {"--quiet": "quiet"}


def parse(args: list[str]) -> dict[str, Any] | None:
    """The `proxy_command` arguments for `args` (the command line after the program), or
    `None` when typer is to read it.

    Returns:
        `{"server_id": str, "pins": str | None, "quiet": bool, "command": list[str]}`, or
        `None` for any command line outside the shape in the module's docstring.
    """
    if args[:1] != ["proxy"] or "--" not in args or "_CONDUIT_MCP_COMPLETE" in os.environ:
        return None
    end = args.index("--")
    command = args[end + 1 :]
    if not command:
        return None
    given: dict[str, Any] = {}
    words = args[1:end]
    index = 0
    while index < len(words):
        word = words[index]
        if word not in _OPTIONS:
            return None
        name = _OPTIONS[word]
        value: str | bool
        if name is None:
            name, value, index = _FLAGS[word], True, index + 1
        elif index + 1 < len(words) and words[index + 1] and words[index + 1][0] != "-":
            value, index = words[index + 1], index + 2
        else:
            return None
        if name in given:
            return None
        given[name] = value
    if "server_id" not in given:
        return None
    return {
        "server_id": given["server_id"],
        "pins": given.get("pins"),
        "quiet": given.get("quiet", False),
        "command": command,
    }


def run(parsed: dict[str, Any]) -> int:
    """Run the proxy `parse` read, as `proxy_command` runs it with those options; its exit code.

    A KeyboardInterrupt gives 130, as typer's main gives it.
    """
    from ..proxy import GuardSettings
    from ..proxy import run as run_proxy

    settings = GuardSettings(
        server_id=parsed["server_id"], pins=parsed["pins"], policy={}, held_dir=None
    )
    try:
        return run_proxy(
            settings,
            list(parsed["command"]),
            log=None,
            quiet=parsed["quiet"],
            listen=None,
            budget={},
            limits={},
            metrics_address=None,
            auth=None,
            public_url=None,
            policy_file=None,
            audit_calls=False,
            audit_arguments=False,
        )
    except KeyboardInterrupt:
        return 130
