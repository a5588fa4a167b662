"""The `conduit-mcp` console script: the CLI when its extra is installed, one line when not.

The library itself needs neither typer nor rich; they come with the `cli` extra. Without them
the command says what to install on stderr and exits 2 (the CLI's exit code for input it
cannot act on) instead of raising `ModuleNotFoundError`.
"""

from __future__ import annotations

import sys

from .client._install import DISTRIBUTION, install_command

__all__ = ["CLI_MODULES", "DISTRIBUTION", "install_command", "main"]

#: The top-level modules the `cli` extra provides (typer brings click).
CLI_MODULES = frozenset({"typer", "rich", "click"})


def main() -> None:
    """Run `conduit_mcp.cli.main`; without the `cli` extra print one line and exit 2.

    Raises:
        SystemExit: 2 when typer or rich is not installed; otherwise the CLI's own exit code.
        ModuleNotFoundError: a missing module other than the `cli` extra's (not ours to explain).
    """
    try:
        from .cli import main as cli_main
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in CLI_MODULES:
            raise
        print(
            f"conduit-mcp: the command needs the cli extra ({exc.name} is not installed):"
            f" {install_command('cli')}",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    cli_main()
