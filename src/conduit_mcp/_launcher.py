"""The `conduit-mcp` console script: the CLI when its extra is installed, one line when not.

The library itself needs neither typer nor rich; they come with the `cli` extra. Without them
the command says what to install on stderr and exits 2 (the CLI's exit code for input it
cannot act on) instead of raising `ModuleNotFoundError`.
"""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "conduit-mcp-client"

#: The top-level modules the `cli` extra provides (typer brings click).
CLI_MODULES = frozenset({"typer", "rich", "click"})


def install_command(extra: str) -> str:
    """The command line that adds `extra` (e.g. `"proxy"`) to this installation.

    The distribution is not on the package index, so `pip install conduit-mcp-client[extra]`
    finds nothing (or, were the name ever taken, another project's code). When this copy was
    installed from a local checkout, pip recorded its folder (PEP 610 `direct_url.json`) and
    the command names it; otherwise it names the distribution. `sys.executable` is the Python
    that runs this copy, so the extra lands beside it.

    Returns:
        A shell-quoted line, e.g. `/venv/bin/python -m pip install '/src/conduit-mcp[proxy]'`.
    """
    target = f"{DISTRIBUTION}[{extra}]"
    try:
        recorded = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        url = json.loads(recorded or "{}").get("url")
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        url = None
    if isinstance(url, str) and url.startswith("file://"):
        target = f"{unquote(urlsplit(url).path)}[{extra}]"
    return shlex.join([sys.executable, "-m", "pip", "install", target])


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
