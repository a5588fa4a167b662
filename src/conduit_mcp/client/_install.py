"""What to install for an extra: the line every "needs the ... extra" message prints.

Not a public module. A leaf of the core: it imports nothing of conduit_mcp, so every face may
name it (the console script, the CLI, the proxy, the pin store's PostgreSQL backend) without an
import cycle.
"""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "conduit-mcp-client"


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
