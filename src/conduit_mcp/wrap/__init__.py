"""conduit_mcp.wrap: a client's MCP configuration rewritten so each server runs through
`conduit-mcp proxy`, put back, and checked.

`wrap_config` and `unwrap_config` are the `conduit-mcp wrap` and `unwrap` commands' work:
Claude Desktop, Claude Code, Cursor, Windsurf, Gemini CLI and VS Code configs (JSON, JSONC)
and Codex's (TOML) edited in place, every byte they do not change kept; `Outcome` says what
changed; a file its client would not read is refused (`ConfigSyntaxError`, file:line:col).
`doctor_config` is `conduit-mcp doctor`: each wrapped entry started as its client starts it and
listed through the proxy (`ServerCheck`). The proxy's command lines are written and run as
strings: this room builds on the core alone and imports neither the proxy nor the guard nor an
SDK (Codex's TOML needs tomlkit, from the `proxy` extra).

`_config.py`: the rewriting of each format; `_clients.py`: whose config a file is (its grammar
and field names); `_jsonspan.py`: JSON and JSONC parsed with the span of every value, so an
edit touches only the bytes of the entry it rewrites; `_files.py`: writes that keep a file's
mode and symlink; `_doctor.py`: the check of a wrapped config.
"""

from __future__ import annotations

from ._config import ConfigSyntaxError, Outcome, unwrap_config, wrap_config
from ._doctor import ServerCheck, doctor_config

# Grouped by concept, not sorted: the groups are the map of the API.
__all__ = [  # noqa: RUF022
    # Rewriting: a client's config through the proxy, and back
    "wrap_config",
    "unwrap_config",
    "Outcome",
    # Reading: a config its client would not read
    "ConfigSyntaxError",
    # Checking: each wrapped server started and listed through the proxy
    "doctor_config",
    "ServerCheck",
]
