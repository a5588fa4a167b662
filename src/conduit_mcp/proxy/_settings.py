"""What the proxy passes to the guard (no MCP SDK import: the CLI parses options without it).

Not a public module; `GuardSettings` is exported from `conduit_mcp.proxy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """What the proxy passes to the guard.

    Attributes:
        server_id: the operator-assigned server id (keys the pins).
        pins: a pin store location (sqlite path or `postgresql://` URL), or `None` for a
            private in-memory store that lives as long as the proxy.
        policy: `Guard` policy keywords (`new`, `changed`, `check_arguments`,
            `invalid_output`, `output_timeout`, `sdk_output_schema`, `max_tools`); only
            those given.
        held_dir: where the definition of a held tool is written for `conduit-mcp pins
            approve` (one JSON page per tool).
    """

    server_id: str
    pins: str | None = None
    policy: dict[str, Any] = field(default_factory=dict)
    held_dir: Path | None = None


@dataclass(frozen=True, slots=True)
class HttpUpstream:
    """A Streamable HTTP server the proxy connects to.

    Attributes:
        url: the MCP endpoint (e.g. `https://host/mcp`).
        headers: sent with every request (e.g. `Authorization`); never logged.
    """

    url: str
    headers: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"HttpUpstream(url={self.url!r}, headers=<{len(self.headers)} hidden>)"
