"""The `conduit-mcp` command loads one group: `conduit-mcp pins ...` imports the pins commands
and what they need, never the proxy, the guard, the MCP SDK or another group; `conduit-mcp
--help` imports no group at all (issue 28). Each run is a fresh interpreter, as the console
script is; what it imported is read from `sys.modules` when the command has exited.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conduit_mcp.cli._app import COMMANDS, load_command

#: Runs the command with the arguments given, then writes the modules loaded as a last line.
PROBE = (
    "import json, sys\n"
    "from conduit_mcp.cli import main\n"
    "sys.argv = ['conduit-mcp', *sys.argv[1:]]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write('\\n' + json.dumps(sorted(sys.modules)))\n"
)
GROUPS = sorted({module for module, _ in COMMANDS.values()})
#: What no group but the proxy's may load, and the proxy's not for its help either.
RUNNING_PROXY = ("conduit_mcp.proxy", "conduit_mcp.guard", "mcp", "httpx2", "uvicorn")


def _loaded(*args: str) -> tuple[str, set[str]]:
    """The command's stdout, and the modules it had loaded when it exited."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout, set(json.loads(done.stderr.rsplit("\n", 1)[1]))


def _groups(modules: set[str]) -> set[str]:
    return {m.removeprefix("conduit_mcp.cli") for m in modules if m.startswith("conduit_mcp.cli._")}


def _under(modules: set[str], *roots: str) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in roots or m.startswith(roots))


def test_help_alone_loads_no_group_and_no_face() -> None:
    """conduit-defined: the root's help lists every command from the table, nothing loaded."""
    out, modules = _loaded("--help")
    assert all(name in out for name in COMMANDS)
    assert _groups(modules) & set(GROUPS) == set()
    assert _under(modules, "conduit_mcp.client", "conduit_mcp.pins", "rich", "click") == []
    assert _under(modules, *RUNNING_PROXY, "conduit_mcp.wrap") == []


def test_pins_loads_the_pins_group_only() -> None:
    """conduit-defined: `pins --help` (and a pins subcommand's help) loads the pins group, no
    other group, and nothing of the proxy, the guard or the MCP SDK."""
    for args in (["pins", "--help"], ["pins", "pending", "--help"]):
        out, modules = _loaded(*args)
        assert "Usage: conduit-mcp pins" in out
        assert _groups(modules) & set(GROUPS) == {"._pins"}
        assert _under(modules, *RUNNING_PROXY) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_loads_its_own_group(command: str) -> None:
    """conduit-defined: a command's help loads its group and no other; only the proxy's group
    loads the proxy's (light) face, and no command's help loads the guard or the MCP SDK."""
    out, modules = _loaded(command, "--help")
    assert f"Usage: conduit-mcp {command}" in out
    assert _groups(modules) & set(GROUPS) == {COMMANDS[command][0]}
    assert _under(modules, "conduit_mcp.guard", "mcp", "uvicorn") == []
    if command != "proxy":
        assert _under(modules, "conduit_mcp.proxy") == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_table_row_names_a_command_of_its_module(command: str) -> None:
    """conduit-defined: every row of `COMMANDS` loads a command of that name whose short help
    is the row's line (the line `conduit-mcp --help` writes without loading it)."""
    loaded = load_command(command)
    assert loaded.name == command
    assert loaded.short_help == COMMANDS[command][1]
