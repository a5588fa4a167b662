"""conduit_mcp.wrap: a client's MCP configuration rewritten so each server runs through
`conduit-mcp proxy`, and put back.

`wrap_config` and `unwrap_config` are the `conduit-mcp wrap` and `unwrap` commands' work:
Claude Desktop, Claude Code, Cursor, Windsurf, Gemini CLI and VS Code configs (JSON, JSONC)
and Codex's (TOML) edited in place, every byte they do not change kept; `Outcome` says what
changed. The proxy's command lines are written as strings: this room builds on the core alone
and imports neither the proxy nor the guard nor an SDK (Codex's TOML needs tomlkit, from the
`proxy` extra). Checking a wrapped config (the coming `doctor`) belongs here too.

`_config.py`: the rewriting of each format; `_jsonspan.py`: JSON and JSONC parsed with the span
of every value, so an edit touches only the bytes of the entry it rewrites.
"""

from __future__ import annotations

from ._config import Outcome, unwrap_config, wrap_config

__all__ = ["Outcome", "unwrap_config", "wrap_config"]
