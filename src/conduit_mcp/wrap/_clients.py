"""Whose config a file is: each MCP client's file, the grammar that client reads, and the field
names of its server entries.

Not a public module. `client_for` names the client from the file's path (and, for VS Code, its
`servers` table); `CLIENTS` is the table, each row with the documentation it was read from. A
file of no known client is read as the clients that share `mcpServers` read it: strict JSON,
`url` for a Streamable HTTP server.

Grammars, as each client parses its file:
- JSON (RFC 8259): Claude Desktop and Claude Code (`JSON.parse`), Cursor, Windsurf (Go's
  `encoding/json`): no comment, no trailing comma;
- JSON with comments: Gemini CLI (`JSON.parse(stripJsonComments(text))`; strip-json-comments
  keeps trailing commas unless asked, and Gemini CLI does not ask);
- JSONC: VS Code (its `jsonc-parser`: comments and trailing commas);
- TOML 1.0: Codex (`config.toml`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

JSON: Final = "JSON"
JSON_COMMENTS: Final = "JSON with comments"
JSONC: Final = "JSONC"
TOML: Final = "TOML"


@dataclass(frozen=True, slots=True)
class Client:
    """One MCP client's config format.

    Attributes:
        name: the product, as its documentation names it.
        grammar: `JSON`, `JSON_COMMENTS`, `JSONC` or `TOML`.
        http_url: the field holding a Streamable HTTP server's URL.
        http_type: the `type` of a Streamable HTTP entry where the client has one (`"http"`).
        headers: the field holding a remote server's HTTP headers.
        sse_url: whether `url` names an SSE server (the 2024-11-05 transport) in this format.
        source: where the field names and the grammar were read.
    """

    name: str
    grammar: str
    http_url: str = "url"
    http_type: str | None = None
    headers: str = "headers"
    sse_url: bool = False
    source: str = ""


CLAUDE_DESKTOP: Final = Client(
    "Claude Desktop",
    JSON,
    source="https://modelcontextprotocol.io/quickstart/user (command, args, env; JSON.parse)",
)
CLAUDE_CODE: Final = Client(
    "Claude Code",
    JSON,
    http_type="http",
    source="https://docs.anthropic.com/en/docs/claude-code/mcp (type stdio/http/sse, url, headers)",
)
CURSOR: Final = Client(
    "Cursor",
    JSON,
    source="https://docs.cursor.com/context/model-context-protocol (command; url, headers)",
)
VSCODE: Final = Client(
    "VS Code",
    JSONC,
    http_type="http",
    source="https://code.visualstudio.com/docs/copilot/chat/mcp-servers (servers; type "
    "stdio/http/sse, url, headers; JSONC)",
)
WINDSURF: Final = Client(
    "Windsurf",
    JSON,
    http_url="serverUrl",
    source="https://docs.windsurf.com/windsurf/cascade/mcp (command; serverUrl, headers)",
)
GEMINI: Final = Client(
    "Gemini CLI",
    JSON_COMMENTS,
    http_url="httpUrl",
    sse_url=True,
    source="https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md "
    "(command; httpUrl = Streamable HTTP, url = SSE, headers); packages/cli/src/config/"
    "settings.ts (JSON.parse(stripJsonComments(content)))",
)
CODEX: Final = Client(
    "Codex",
    TOML,
    headers="http_headers",
    source="https://github.com/openai/codex/blob/main/docs/config.md (mcp_servers: command; "
    "url, http_headers, bearer_token_env_var)",
)
#: A file no client's name or place identifies (a copy, a renamed file): read as the clients
#: sharing `mcpServers` read it.
OTHER: Final = Client("an MCP client", JSON)

CLIENTS: Final = (CLAUDE_DESKTOP, CLAUDE_CODE, CURSOR, VSCODE, WINDSURF, GEMINI, CODEX)

#: Folders of Gemini CLI's settings.json: the user's and a project's `.gemini`, the system's
#: (`/etc/gemini-cli`, `C:\\ProgramData\\gemini-cli`, macOS `.../GeminiCli`).
_GEMINI_DIRS: Final = frozenset({".gemini", "gemini-cli", "GeminiCli"})


def client_for(path: Path, root: Any = None) -> Client:
    """The client whose config `path` is, from its name and folder (as the path is given, a
    symlink's own name), and for a JSON file without a known name its top-level keys `root`.

    Returns:
        A row of `CLIENTS`, or `OTHER`.
    """
    name, folder = path.name, path.parent.name
    if path.suffix == ".toml":
        return CODEX
    if name == "settings.json" and folder in _GEMINI_DIRS:
        return GEMINI
    if name == "mcp_config.json":  # ~/.codeium/windsurf/mcp_config.json
        return WINDSURF
    if name == "claude_desktop_config.json":
        return CLAUDE_DESKTOP
    if name in (".mcp.json", ".claude.json"):
        return CLAUDE_CODE
    if name == "mcp.json" and folder == ".cursor":
        return CURSOR
    if name == "mcp.json" and folder == ".vscode":
        return VSCODE
    if (
        isinstance(root, Mapping)
        and "mcpServers" not in root
        and ("servers" in root or "mcp" in root)
    ):
        return VSCODE  # a user-level mcp.json, or settings.json's "mcp": {"servers": ...}
    return OTHER


def refusal(
    client: Client, comment: int | None, trailing_comma: int | None
) -> tuple[int, str] | None:
    """Where a JSON-family file breaks its client's grammar, and why: the first comment where
    the client reads strict JSON, the first trailing comma where it reads JSON or JSON with
    comments; `None` when the file is one the client reads."""
    reader = (
        "no client is known by this file's name, so it is read as JSON"
        if client is OTHER
        else f"{client.name} reads {client.grammar}"
    )
    found: list[tuple[int, str]] = []
    if comment is not None and client.grammar == JSON:
        found.append((comment, f"a comment: {reader}, where none is allowed"))
    if trailing_comma is not None and client.grammar in (JSON, JSON_COMMENTS):
        found.append((trailing_comma, f"a trailing comma: {reader}, where none is allowed"))
    return min(found) if found else None
