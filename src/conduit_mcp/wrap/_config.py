"""`conduit-mcp wrap` / `unwrap`: a client's MCP configuration rewritten so each server runs
behind the proxy, and back.

Not a public module; `wrap_config`, `unwrap_config` and `Outcome` are exported from
`conduit_mcp.wrap`.

Formats (each server entry keyed by its name, which becomes the proxy's `--server-id`):
- JSON `mcpServers`: Claude Desktop (`claude_desktop_config.json`), Claude Code (`.mcp.json`;
  the user config `~/.claude.json` also under `projects.<path>.mcpServers`), Cursor
  (`mcp.json`), Windsurf (`mcp_config.json`), Gemini CLI (`settings.json`);
- JSON `servers` (VS Code `mcp.json`, with comments) and `mcp.servers` (VS Code settings);
- TOML `[mcp_servers.<name>]` (Codex `config.toml`), edited with tomlkit so comments and
  layout stay.

A stdio entry (`command`) runs `conduit-mcp proxy --server-id NAME ... -- COMMAND ARGS...`,
its other fields (env, cwd, ...) unchanged. A Streamable HTTP entry (`url`, Windsurf's
`serverUrl`, Gemini's `httpUrl`) runs `conduit-mcp proxy --server-id NAME --upstream URL`,
its headers moved to the proxy's environment (`CONDUIT_MCP_UPSTREAM_HEADERS`, never its
argv). SSE entries (the 2024-11-05 transport) are left as they are.

The file is edited in place: only server entries change. Before the first change the
original bytes are copied to `CONFIG.conduit-mcp.bak`; `unwrap` puts them back byte for byte
when the file is still what `wrap` wrote, and otherwise restores each wrapped entry alone.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._program import HEADERS_ENV
from . import _jsonspan

BACKUP_SUFFIX: Final = ".conduit-mcp.bak"
_URL_FIELDS: Final = ("url", "serverUrl", "httpUrl")
_PROXY_NAMES: Final = frozenset({"conduit-mcp", "conduit-mcp.exe"})


@dataclass(slots=True)
class Outcome:
    """What `wrap_config` / `unwrap_config` did.

    Attributes:
        path: the config file.
        changed: `(server name, what)` for each entry rewritten (`"wrapped"`, `"unwrapped"`).
        skipped: `(server name, why)` for each entry left as it is.
        before, after: the file's text before and after (equal when nothing changed).
        backup: the backup written, if any.
        action: `"wrapped"` or `"unwrapped"`: what `after` is (the diff's label).
    """

    path: Path
    changed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    before: str = ""
    after: str = ""
    backup: Path | None = None
    action: str = "wrapped"

    def diff(self) -> str:
        """A unified diff from `before` to `after` ("" when equal), `after` labelled with
        what it is: `PATH (wrapped)` or `PATH (unwrapped)`."""
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=str(self.path),
                tofile=f"{self.path} ({self.action})" if self.changed else str(self.path),
            )
        )


def default_proxy_command() -> str:
    """The absolute path of the `conduit-mcp` program clients should launch (desktop clients
    start servers with a short PATH, so a bare name may not resolve)."""
    found = shutil.which("conduit-mcp")
    if found:
        return str(Path(found).resolve())
    here = Path(sys.argv[0])
    if here.name in _PROXY_NAMES:
        return str(here.resolve())
    return "conduit-mcp"


def is_wrapped(entry: Any) -> bool:
    """Whether a server entry already runs through `conduit-mcp proxy`."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    return (
        isinstance(command, str)
        and Path(command).name in _PROXY_NAMES
        and isinstance(args, list)
        and args[:1] == ["proxy"]
    )


def wrap_entry(
    name: str,
    entry: dict[str, Any],
    proxy: str,
    options: list[str],
    *,
    url_is_sse: bool = False,
) -> dict[str, Any]:
    """The wrapped form of one server entry (a new dict; `entry` is not changed).

    Args:
        name: the entry's key (the proxy's `--server-id`).
        entry: the server entry as the client reads it.
        proxy: the program the client is to launch.
        options: proxy options put before `--` / `--upstream`.
        url_is_sse: the format's `url` field means SSE (Gemini CLI; its Streamable HTTP field
            is `httpUrl`).

    Raises:
        ValueError: an entry that cannot run through the proxy (the reason is the message).
    """
    head = ["proxy", "--server-id", name, *options]
    if isinstance(entry.get("command"), str):
        original = entry.get("args", [])
        if not isinstance(original, list) or not all(isinstance(a, str) for a in original):
            raise ValueError("args is not a list of strings")
        wrapped = dict(entry)
        wrapped["command"] = proxy
        wrapped["args"] = [*head, "--", entry["command"], *original]
        return wrapped
    url_field = next((f for f in _URL_FIELDS if isinstance(entry.get(f), str)), None)
    if url_field is None:
        raise ValueError("neither a command nor a url")
    if entry.get("type") == "sse" or (url_field == "url" and url_is_sse):
        raise ValueError("an SSE server (the 2024-11-05 transport): not proxied")
    if "bearer_token_env_var" in entry or "env_http_headers" in entry:
        raise ValueError("its credentials come from the client's environment: not proxied")
    headers = entry.get("headers", entry.get("http_headers"))
    env = dict(entry.get("env") or {})
    if headers:
        env[HEADERS_ENV] = json.dumps(headers, ensure_ascii=False, separators=(",", ":"))
    wrapped = {}
    for key, value in entry.items():
        if key == url_field:
            wrapped["command"] = proxy
            wrapped["args"] = [*head, "--upstream", value]
            if env and "env" not in entry:
                wrapped["env"] = env
        elif key == "env":
            wrapped["env"] = env
        elif key == "type":
            wrapped["type"] = "stdio"
        elif key not in ("headers", "http_headers"):
            wrapped[key] = value
    return wrapped


def unwrap_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The original form of a wrapped stdio entry, or of a wrapped HTTP entry as `url`.

    Raises:
        ValueError: the entry is not one `wrap_entry` writes.
    """
    args = entry.get("args")
    if not is_wrapped(entry) or not isinstance(args, list):
        raise ValueError("not a wrapped entry")
    if "--" in args:
        cut = args.index("--")
        if cut + 1 >= len(args):
            raise ValueError("no command after --")
        original = dict(entry)
        original["command"] = args[cut + 1]
        rest = args[cut + 2 :]
        if rest:
            original["args"] = rest
        else:
            original.pop("args")
        return original
    if "--upstream" in args:
        url = args[args.index("--upstream") + 1]
        restored: dict[str, Any] = {}
        for key, value in entry.items():
            if key == "command":
                restored["url"] = url
            elif key == "args":
                continue
            elif key == "type":
                restored["type"] = "http"
            elif key == "env":
                env = dict(value)
                headers = env.pop(HEADERS_ENV, None)
                if headers is not None:
                    restored["headers"] = json.loads(headers)
                if env:
                    restored["env"] = env
            else:
                restored[key] = value
        return restored
    raise ValueError("neither -- COMMAND nor --upstream URL in its args")


# -- files ------------------------------------------------------------------------------------


def backup_path(path: Path) -> Path:
    """Where `wrap` keeps the original bytes of `path`."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def log_name(server_id: str) -> str:
    """The file name of a server's event log under `wrap --log DIR`."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", server_id).lstrip(".") or "_"
    if safe != server_id:
        safe += "-" + hashlib.sha256(server_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe[:120] + ".log"


def wrap_config(
    path: Path,
    *,
    proxy: str | None = None,
    options: list[str] | None = None,
    dry_run: bool = False,
    log_dir: Path | None = None,
) -> Outcome:
    """Rewrite every server entry of the config at `path` to run through the proxy.

    Args:
        path: a client config (JSON, JSONC or Codex TOML; TOML by the `.toml` suffix).
        proxy: the program the client launches (default `default_proxy_command()`).
        options: proxy options put before `--` in every entry (e.g. `["--pins", "/p.db"]`).
        dry_run: compute and return the outcome; write nothing.
        log_dir: each entry's proxy gets `--log DIR/SERVER_ID.log` (its own event log; a
            server id with characters a file name should not hold is written with those as
            `_` and 8 hex digits of its SHA-256, so two ids never share a log).

    Returns:
        An `Outcome`; entries already wrapped are skipped ("already wrapped"), so running it
        twice changes nothing the second time.

    Raises:
        OSError: the file cannot be read or written.
        ValueError: the file is not JSON/JSONC/TOML, or holds no server table.
    """
    command = proxy or default_proxy_command()
    extra = list(options or [])
    gemini = _gemini(path)
    data = path.read_bytes()
    text = data.decode("utf-8")
    outcome = Outcome(path, before=text)

    def change(name: str, entry: Any) -> Any:
        if not isinstance(entry, dict):
            outcome.skipped.append((name, "not an object"))
            return None
        if is_wrapped(entry):
            outcome.skipped.append(
                (name, "already wrapped (to change its options: unwrap, then wrap)")
            )
            return None
        own = extra if log_dir is None else [*extra, "--log", str(log_dir / log_name(name))]
        try:
            wrapped = wrap_entry(name, entry, command, own, url_is_sse=gemini)
        except ValueError as exc:
            outcome.skipped.append((name, str(exc)))
            return None
        outcome.changed.append((name, "wrapped"))
        return wrapped

    outcome.after = _edit(path, text, change)
    if outcome.after != text and not dry_run:
        backup = backup_path(path)
        if not backup.exists():  # the first wrap's original is the one to restore
            backup.write_bytes(data)
            outcome.backup = backup
        _write(path, outcome.after)
    return outcome


def unwrap_config(path: Path, *, dry_run: bool = False) -> Outcome:
    """Undo `wrap_config`: the backup's bytes when the file is still exactly what wrapping the
    backup gives (byte for byte), else each wrapped entry restored alone (the backup's entry
    when it wraps to the current one, else rebuilt from the proxy's arguments).

    Raises:
        OSError: the file cannot be read or written.
        ValueError: the file is not JSON/JSONC/TOML, or holds no server table.
    """
    text = path.read_bytes().decode("utf-8")
    outcome = Outcome(path, before=text, action="unwrapped")
    backup = backup_path(path)
    original: dict[str, Any] = {}
    if backup.exists():
        saved = backup.read_bytes().decode("utf-8")
        for name, entry in _entries(path, saved):
            original[name] = entry

    def change(name: str, entry: Any) -> Any:
        if not is_wrapped(entry):
            return None
        try:
            restored = unwrap_entry(entry)
        except ValueError as exc:
            outcome.skipped.append((name, str(exc)))
            return None
        saved_entry = original.get(name)
        if isinstance(saved_entry, dict):
            proxy, options = _proxy_of(entry)
            try:
                if wrap_entry(name, saved_entry, proxy, options, url_is_sse=_gemini(path)) == entry:
                    restored = saved_entry
            except ValueError:
                pass
        outcome.changed.append((name, "unwrapped"))
        return restored

    outcome.after = _edit(path, text, change)
    if backup.exists():
        saved_text = backup.read_bytes().decode("utf-8")
        rewrapped = _edit(path, saved_text, _rewrap_like(text, path))
        if rewrapped == text:
            outcome.after = saved_text
    if not dry_run and outcome.after != text:
        _write(path, outcome.after)
    if (
        not dry_run
        and backup.exists()
        and not any(is_wrapped(e) for _, e in _entries(path, outcome.after))
    ):
        backup.unlink()
    return outcome


def _proxy_of(entry: dict[str, Any]) -> tuple[str, list[str]]:
    """The proxy program and the options `wrap` put before `--`/`--upstream` in an entry."""
    args = list(entry["args"])
    stop = len(args)
    for marker in ("--", "--upstream"):
        if marker in args:
            stop = min(stop, args.index(marker))
    return entry["command"], args[3:stop]


def _rewrap_like(current: str, path: Path) -> Any:
    """A `change` function that wraps each entry with the proxy and options the current file's
    entry of the same name uses (to test whether the file is untouched since `wrap`)."""
    wrapped = dict(_entries(path, current))

    def change(name: str, entry: Any) -> Any:
        now = wrapped.get(name)
        if not isinstance(entry, dict) or not isinstance(now, dict) or not is_wrapped(now):
            return None
        if is_wrapped(entry):
            return None
        proxy, options = _proxy_of(now)
        try:
            return wrap_entry(name, entry, proxy, options, url_is_sse=_gemini(path))
        except ValueError:
            return None

    return change


def _gemini(path: Path) -> bool:
    """Gemini CLI's settings (`.gemini/settings.json`), where `url` means SSE."""
    return path.parent.name == ".gemini"


def _write(path: Path, text: str) -> None:
    """Replace the file atomically, keeping its permission bits (configs may hold secrets)."""
    tmp = path.with_name(f".{path.name}.conduit-mcp.tmp")
    tmp.write_bytes(text.encode("utf-8"))
    os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)


# -- formats ----------------------------------------------------------------------------------


def _edit(path: Path, text: str, change: Any) -> str:
    if path.suffix == ".toml":
        return _edit_toml(text, change)
    return _edit_json(text, change)


def _entries(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def collect(name: str, entry: Any) -> None:
        found.append((name, entry))

    _edit(path, text, collect)
    return iter(found)


def _json_tables(root: _jsonspan.Node) -> Iterator[_jsonspan.Node]:
    """The server tables of a client's JSON config."""
    members = root.members
    for key in ("mcpServers", "servers"):
        node = members.get(key)
        if node is not None and isinstance(node.value, dict):
            yield node
    mcp = members.get("mcp")
    if mcp is not None and "servers" in mcp.members and isinstance(mcp.value["servers"], dict):
        yield mcp.members["servers"]  # VS Code settings.json
    projects = members.get("projects")
    if projects is not None:  # Claude Code ~/.claude.json
        for project in projects.members.values():
            servers = project.members.get("mcpServers")
            if servers is not None and isinstance(servers.value, dict):
                yield servers


def _edit_json(text: str, change: Any) -> str:
    try:
        root = _jsonspan.parse(text)
    except _jsonspan.JsonSyntaxError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(root.value, dict):
        raise ValueError("not a JSON object")
    tables = list(_json_tables(root))
    if not tables:
        raise ValueError("no MCP server table (mcpServers, servers, mcp.servers)")
    edits: list[tuple[int, int, str]] = []
    for table in tables:
        for name, node in table.members.items():
            new = change(name, node.value)
            if new is not None:
                edits.append((node.start, node.end, _jsonspan.render(new, text, node)))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _edit_toml(text: str, change: Any) -> str:
    import tomlkit

    try:
        document = tomlkit.parse(text)
    except Exception as exc:  # tomlkit.exceptions.ParseError
        raise ValueError(f"not TOML: {exc}") from None
    servers = document.get("mcp_servers")
    if servers is None or not hasattr(servers, "items"):
        raise ValueError("no [mcp_servers] table")
    for name, table in list(servers.items()):
        new = change(name, table.unwrap() if hasattr(table, "unwrap") else table)
        if new is None:
            continue
        for key in [k for k in table if k not in new]:
            del table[key]
        for key, value in new.items():
            if key not in table or _plain(table[key]) != value:
                if isinstance(value, dict):  # `env = { ... }` on one line, as Codex documents
                    inline = tomlkit.inline_table()
                    inline.update(value)
                    value = inline
                table[key] = value
    return str(tomlkit.dumps(document))


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value
