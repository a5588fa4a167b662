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

The file is edited in place: only server entries change. A file its client would not read
(a trailing comma where the client reads strict JSON, a comment, TOML that does not parse) is
refused with `ConfigSyntaxError` (file:line:col) before anything is written. Before the first
change the original bytes are copied to `CONFIG.conduit-mcp.bak`, with the original's
permission bits; the file itself is replaced atomically through a symlink, keeping its bits
(`_files.py`). `unwrap` puts the original bytes back when the file is still what `wrap` wrote,
and otherwise restores each wrapped entry alone, with its client's own field names
(`_clients.py`: Gemini CLI's `httpUrl`, Windsurf's `serverUrl`, Codex's `http_headers`).
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
from . import _files, _jsonspan
from ._clients import OTHER, Client, client_for, refusal

if sys.version_info >= (3, 11):
    import tomllib  # Codex's TOML checked as TOML 1.0 (Python 3.10: tomlkit's checks alone)

BACKUP_SUFFIX: Final = ".conduit-mcp.bak"
_URL_FIELDS: Final = ("url", "serverUrl", "httpUrl")
_HEADER_FIELDS: Final = ("headers", "http_headers")
_PROXY_NAMES: Final = frozenset({"conduit-mcp", "conduit-mcp.exe"})


class ConfigSyntaxError(ValueError):
    """A config file its client would not read: where, and why.

    Attributes:
        path: the file (as given; for a backup, the backup).
        line, column: 1-based, the column in characters (as editors and Python's `json` count).
        reason: what is wrong there, e.g. "a trailing comma: Cursor reads JSON, where none is
            allowed".

    `str()` is `PATH:LINE:COLUMN: REASON`, one line.
    """

    def __init__(self, path: Path, line: int, column: int, reason: str) -> None:
        super().__init__(f"{path}:{line}:{column}: {reason}")
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason


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
    headers = next((entry[f] for f in _HEADER_FIELDS if f in entry), None)
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
        elif key not in _HEADER_FIELDS:
            wrapped[key] = value
    return wrapped


def unwrap_entry(entry: dict[str, Any], client: Client = OTHER, like: Any = None) -> dict[str, Any]:
    """The original form of a wrapped entry: a stdio entry's command line back in `command` and
    `args`; a wrapped HTTP entry's URL, headers and type back in the fields its client reads.

    Args:
        entry: a wrapped entry (`is_wrapped`).
        client: whose config it is: the URL field (`url`, Windsurf's `serverUrl`, Gemini CLI's
            `httpUrl`), the headers field (`headers`, Codex's `http_headers`) and the `type`
            of an HTTP entry where the client has one.
        like: the entry of the same name in the backup, if any: its own URL field, headers
            field and `type` win over the client's (the entry as it was written).

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
        if rest or (isinstance(like, dict) and "args" in like):  # `"args": []` as written
            original["args"] = rest
        else:
            original.pop("args")
        return original
    if "--upstream" in args:
        at = args.index("--upstream") + 1
        if at >= len(args) or not isinstance(args[at], str):
            raise ValueError("no URL after --upstream")
        url_field, headers_field, http_type = _remote_fields(client, like)
        restored: dict[str, Any] = {}
        for key, value in entry.items():
            if key == "command":
                restored[url_field] = args[at]
            elif key == "args":
                continue
            elif key == "type":
                restored["type"] = http_type
            elif key == "env" and isinstance(value, dict):
                env = dict(value)
                headers = env.pop(HEADERS_ENV, None)
                if headers is not None:
                    restored[headers_field] = json.loads(headers)
                if env or "env" in (like if isinstance(like, dict) else {}):
                    restored["env"] = env
            else:
                restored[key] = value
        return restored
    raise ValueError("neither -- COMMAND nor --upstream URL in its args")


def _remote_fields(client: Client, like: Any) -> tuple[str, str, str]:
    """The URL field, headers field and HTTP `type` value to restore a remote entry with: the
    backup's entry's own where it has them, else the client's."""
    url_field, headers_field = client.http_url, client.headers
    http_type = client.http_type or "http"
    if isinstance(like, dict):
        url_field = next((f for f in _URL_FIELDS if isinstance(like.get(f), str)), url_field)
        headers_field = next((f for f in _HEADER_FIELDS if f in like), headers_field)
        if isinstance(like.get("type"), str) and like["type"] != "stdio":
            http_type = like["type"]
    return url_field, headers_field, http_type


# -- files ------------------------------------------------------------------------------------


def backup_path(path: Path) -> Path:
    """Where `wrap` keeps the original bytes of `path`: beside the file (for a symlink, beside
    the file it points to, so that any path naming the config finds it)."""
    target = _files.target_of(path) if path.is_symlink() else path
    return target.with_name(target.name + BACKUP_SUFFIX)


def _existing_backup(path: Path) -> Path | None:
    """The backup of `path` if there is one: beside the file, else beside the path as given
    (where a symlinked config's backup was kept before)."""
    for candidate in (backup_path(path), path.with_name(path.name + BACKUP_SUFFIX)):
        if candidate.is_file():
            return candidate
    return None


def read_config(path: Path) -> str:
    """The text of a config file (UTF-8, as every client reads it).

    Raises:
        OSError: the file cannot be read.
        ConfigSyntaxError: a byte that is not UTF-8 (its line and column).
    """
    return _decode(path, path.read_bytes())


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
        reason = f"not UTF-8 (byte 0x{data[exc.start]:02x})"
        raise ConfigSyntaxError(path, line, column, reason) from None


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
        path: a client config (JSON, JSONC or Codex TOML; TOML by the `.toml` suffix); a
            symlink is followed: its target is rewritten and the link stays.
        proxy: the program the client launches (default `default_proxy_command()`).
        options: proxy options put before `--` in every entry (e.g. `["--pins", "/p.db"]`).
        dry_run: compute and return the outcome; write nothing.
        log_dir: each entry's proxy gets `--log DIR/SERVER_ID.log` (its own event log; a
            server id with characters a file name should not hold is written with those as
            `_` and 8 hex digits of its SHA-256, so two ids never share a log).

    Returns:
        An `Outcome`; entries already wrapped are skipped ("already wrapped"), so running it
        twice changes nothing the second time. The first change copies the original bytes to
        `backup_path(path)` with the original's permission bits; the file keeps its own.

    Raises:
        OSError: the file cannot be read or written.
        ConfigSyntaxError: the file is not one its client reads (file:line:col); untouched.
        ValueError: the file holds no server table.
    """
    command = proxy or default_proxy_command()
    extra = list(options or [])
    data = path.read_bytes()
    text = _decode(path, data)
    client = _client(path, text)
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
            wrapped = wrap_entry(name, entry, command, own, url_is_sse=client.sse_url)
        except ValueError as exc:
            outcome.skipped.append((name, str(exc)))
            return None
        outcome.changed.append((name, "wrapped"))
        return wrapped

    outcome.after = _edit(path, text, change)
    if outcome.after != text and not dry_run:
        if _existing_backup(path) is None:  # the first wrap's original is the one to restore
            backup = backup_path(path)
            if _files.create(backup, data, os.stat(path)):
                outcome.backup = backup
        _files.replace(path, outcome.after.encode("utf-8"))
    return outcome


def unwrap_config(path: Path, *, dry_run: bool = False) -> Outcome:
    """Undo `wrap_config`: the backup's bytes when the file is still exactly what wrapping the
    backup gives (byte for byte), else each wrapped entry restored alone (the backup's entry
    when it wraps to the current one, else rebuilt from the proxy's arguments with the field
    names its client reads, or those of the backup's entry of that name).

    Returns:
        An `Outcome` (`changed` empty and `skipped` empty: no entry runs through the proxy).

    Raises:
        OSError: the file cannot be read or written.
        ConfigSyntaxError: the file is not one its client reads (file:line:col); untouched.
        ValueError: the file holds no server table.
    """
    text = read_config(path)
    client = _client(path, text)
    outcome = Outcome(path, before=text, action="unwrapped")
    backup = _existing_backup(path)
    saved_text: str | None = None
    original: dict[str, Any] = {}
    if backup is not None:
        try:
            saved_text = read_config(backup)
            original = dict(_entries(path, saved_text, where=backup))
        except ValueError:  # a backup edited since: each entry rebuilt from its arguments
            saved_text = None

    def change(name: str, entry: Any) -> Any:
        if not is_wrapped(entry):
            return None
        saved_entry = original.get(name)
        try:
            restored = unwrap_entry(entry, client, saved_entry)
        except ValueError as exc:
            outcome.skipped.append((name, str(exc)))
            return None
        if isinstance(saved_entry, dict):
            proxy, options = _proxy_of(entry)
            try:
                wrapped = wrap_entry(name, saved_entry, proxy, options, url_is_sse=client.sse_url)
            except ValueError:
                wrapped = None
            if wrapped == entry:
                restored = saved_entry
        outcome.changed.append((name, "unwrapped"))
        return restored

    outcome.after = _edit(path, text, change)
    if saved_text is not None and outcome.changed:
        rewrapped = _edit(path, saved_text, _rewrap_like(text, path, client), where=backup)
        if rewrapped == text:
            outcome.after = saved_text
    if not dry_run and outcome.after != text:
        _files.replace(path, outcome.after.encode("utf-8"))
    if (
        not dry_run
        and backup is not None
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


def _rewrap_like(current: str, path: Path, client: Client) -> Any:
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
            return wrap_entry(name, entry, proxy, options, url_is_sse=client.sse_url)
        except ValueError:
            return None

    return change


# -- formats ----------------------------------------------------------------------------------


def _client(path: Path, text: str) -> Client:
    if path.suffix == ".toml":
        return client_for(path)
    _, client = _parse_json(path, text, path)
    return client


def _edit(path: Path, text: str, change: Any, where: Path | None = None) -> str:
    """`text` with each server entry `change(name, entry)` returns in its place (`None`: kept
    as it is), every other byte unchanged. `where` names the file in errors (default `path`)."""
    if path.suffix == ".toml":
        return _edit_toml(text, change, where or path)
    return _edit_json(path, text, change, where or path)


def config_entries(path: Path, text: str) -> list[tuple[str, Any]]:
    """Every server entry of the config `text` (the file at `path`): (name, entry as parsed).

    Raises:
        ConfigSyntaxError: the text is not one its client reads.
        ValueError: no server table.
    """
    return list(_entries(path, text))


def _entries(path: Path, text: str, where: Path | None = None) -> Iterator[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def collect(name: str, entry: Any) -> None:
        found.append((name, entry))

    _edit(path, text, collect, where)
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


def _parse_json(path: Path, text: str, where: Path) -> tuple[_jsonspan.Node, Client]:
    """The root of a JSON-family config and its client, refused (`ConfigSyntaxError`, at the
    first place its client would stop) when that client would not read it."""
    try:
        document = _jsonspan.parse(text)
    except _jsonspan.JsonSyntaxError as exc:
        line, column = _jsonspan.line_column(text, exc.pos)
        grammar = client_for(path).grammar
        raise ConfigSyntaxError(where, line, column, f"not {grammar}: {exc.reason}") from None
    client = client_for(path, document.root.value)
    found = refusal(client, document.comment, document.trailing_comma)
    if found is not None:
        line, column = _jsonspan.line_column(text, found[0])
        raise ConfigSyntaxError(where, line, column, found[1])
    if not isinstance(document.root.value, dict):
        line, column = _jsonspan.line_column(text, document.root.start)
        raise ConfigSyntaxError(where, line, column, "not a JSON object")
    return document.root, client


def _edit_json(path: Path, text: str, change: Any, where: Path) -> str:
    root, _ = _parse_json(path, text, where)
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


_TOMLLIB_AT: Final = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


def _check_toml(text: str, where: Path) -> None:
    """Refuse text that is not TOML 1.0 (what Codex reads), with the line and column the
    standard library's strict reader (`tomllib`, Python 3.11+) names; on Python 3.10 tomlkit's
    own checks alone (`_edit_toml`)."""
    if sys.version_info >= (3, 11):
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            at = _TOMLLIB_AT.search(message)
            if at is not None and at.group(1):
                line, column = int(at.group(1)), int(at.group(2))
            else:  # at the end of the document
                line, column = _jsonspan.line_column(text, len(text))
            reason = message[: at.start()] if at is not None else message
            raise ConfigSyntaxError(where, line, column, f"not TOML: {reason}") from None


def _edit_toml(text: str, change: Any, where: Path) -> str:
    _check_toml(text, where)
    import tomlkit
    from tomlkit.exceptions import ParseError, TOMLKitError

    try:
        document = tomlkit.parse(text)
    except ParseError as exc:  # tomlkit's column is 0-based
        raise ConfigSyntaxError(where, exc.line, exc.col + 1, f"not TOML: {exc}") from None
    except TOMLKitError as exc:  # a key defined twice, ...: no position
        raise ConfigSyntaxError(where, 1, 1, f"not TOML: {exc}") from None
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
