"""The program as a person runs it: its name, the line that installs an extra, and the names
its printed command lines and client configs share.

Not a public module. A shared leaf of the package: it imports nothing of conduit_mcp, so every
room may name it (the CLI, the proxy, the config rewriting, the pin store's PostgreSQL backend)
without an import cycle or a reach into another room's private modules.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "conduit-mcp-client"

#: Who approves, in the approve lines of the proxy's refusals and of `conduit-mcp pins
#: pending`: the person who reviews fills it in (`conduit-mcp pins approve` refuses it as an
#: approver, so a line pasted unedited writes nothing).
APPROVER_PLACEHOLDER: Final = "WHO"

#: The environment variable holding an HTTP upstream's headers (a JSON object of strings):
#: credentials stay out of the proxy's command line (which other local users can read).
#: `conduit-mcp wrap` writes it into a client config; `conduit-mcp proxy` reads it.
HEADERS_ENV: Final = "CONDUIT_MCP_UPSTREAM_HEADERS"

#: What `conduit-mcp proxy` needs to serve every target, all from the `proxy` extra (and the
#: `mcp` one it includes): the MCP SDK and its wire types (the guard, an HTTP upstream,
#: `--listen`), anyio (the relay). Checked by name before the proxy starts (without importing
#: them: the stdio relay to a child imports no SDK), so a missing one is the install line, not
#: a traceback when the first request reaches the code that needs it.
PROXY_MODULES: Final = ("mcp", "mcp_types", "anyio")


def missing_modules(names: tuple[str, ...]) -> list[str]:
    """The names among `names` that cannot be imported here (found without importing them).

    Returns:
        The missing top-level module names, in the order given (empty when all are found).
    """
    from importlib.util import find_spec

    missing = []
    for name in names:
        try:
            found = find_spec(name)
        except (ImportError, ValueError):  # a parent package that is no package, no __spec__
            found = None
        if found is None:
            missing.append(name)
    return missing


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
    from importlib import metadata  # an error's line: not worth its import on every start

    target = f"{DISTRIBUTION}[{extra}]"
    try:
        recorded = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        url = json.loads(recorded or "{}").get("url")
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        url = None
    if isinstance(url, str) and url.startswith("file://"):
        target = f"{unquote(urlsplit(url).path)}[{extra}]"
    return shlex.join([sys.executable, "-m", "pip", "install", target])


PROGRAM: Final = "conduit-mcp"


def program_name() -> str:
    """The program a person types to run this installation's `conduit-mcp` (not quoted).

    `conduit-mcp` when `shutil.which` finds it on PATH and it is the same executable as the
    one running; otherwise the absolute path of the running console script (`sys.argv[0]`
    when it is `conduit-mcp`, else `conduit-mcp` beside `sys.executable`), so a line
    printed by a proxy a desktop client launched by its absolute path (after `wrap`) still
    runs in an operator's shell without the venv on PATH. Falls back to `conduit-mcp`.

    Returns:
        `"conduit-mcp"` or an absolute path; quote it with `shlex.join` / `shlex.quote`.
    """
    running = _running_script()
    found = shutil.which(PROGRAM)
    if found is not None and (running is None or _same_file(Path(found), running)):
        return PROGRAM
    return str(running) if running is not None else PROGRAM


def _running_script() -> Path | None:
    """The console script this process runs as (absolute), or `None` when none is found."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if here is not None and here.stem == PROGRAM and here.is_file():
        return here.resolve()
    beside = Path(sys.executable).parent / PROGRAM  # the venv's bin/, not resolved
    if beside.is_file():
        return beside.absolute()
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or a.samefile(b)
    except OSError:
        return False
