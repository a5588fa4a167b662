"""`unwrap` after the config was edited gives each entry back in its client's own field names.

When the file is no longer what `wrap` wrote (an entry edited by hand, or by the client), unwrap
cannot give back the original bytes: it rebuilds each wrapped entry. Issue 30 item 7 measured
on main: Gemini CLI's `httpUrl` and Windsurf's `serverUrl` came back as `url`, which Gemini CLI
reads as an SSE server and Windsurf does not read at all; Codex's `http_headers` came back as
`headers`, which Codex ignores.

The expected entries are each product's documented fields (tests/wrap/configs/SOURCES.md), read
from the fixtures with independent parsers (json, the stdlib's tomllib), never from the code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLIENT_CONFIGS, conduit, copy_config
from .test_wrap import EXPECTED, PROXY, _jsonc, _load, _servers

EDIT = "x-edited"


def _edit_each_wrapped_entry(path: Path) -> None:
    """What a person (or the client) might do after wrap: one more field in every entry."""
    if path.suffix == ".toml":
        import tomlkit

        document = tomlkit.parse(path.read_text())
        for table in document["mcp_servers"].values():  # type: ignore[union-attr]
            table[EDIT] = True
        path.write_text(tomlkit.dumps(document))
        return
    document = _jsonc(path.read_text())
    for entry in _entry_objects(document):
        entry[EDIT] = True
    path.write_text(json.dumps(document, indent=2))


def _entry_objects(document: dict[str, Any]) -> list[dict[str, Any]]:
    tables = [document.get("mcpServers", {}), document.get("servers", {})]
    tables += [project.get("mcpServers", {}) for project in document.get("projects", {}).values()]
    return [entry for table in tables for entry in table.values()]


def _without_empty(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with an empty `args` or `env` left out: every client reads the two alike."""
    return {k: v for k, v in entry.items() if not (k in ("args", "env") and v in ([], {}))}


@pytest.mark.parametrize("backup", ["kept", "deleted"])
@pytest.mark.parametrize("client", sorted(CLIENT_CONFIGS))
def test_unwrap_after_an_edit_restores_each_clients_field_names(
    tmp_path: Path, client: str, backup: str
) -> None:
    """Real parts: each client's documented config, wrapped, every wrapped entry edited, then
    unwrapped (with the backup, or after it was lost): each entry is its original, in the
    original's fields (`httpUrl`, `serverUrl`, `http_headers`, `type: http`), plus the edit."""
    name = CLIENT_CONFIGS[client]
    path = copy_config(tmp_path, name)
    before = _servers(_load(path))
    conduit("wrap", str(path), "--proxy-command", PROXY)
    _edit_each_wrapped_entry(path)
    if backup == "deleted":
        path.with_name(path.name + ".conduit-mcp.bak").unlink()
    conduit("unwrap", str(path))
    after = _servers(_load(path))
    assert set(after) == set(before)
    for server, expected in EXPECTED[name].items():
        if expected is None:  # never wrapped: only the edit
            assert after[server] == {**before[server], EDIT: True}
        elif backup == "kept":  # the backup's entry names its fields: exactly the original
            assert after[server] == {**before[server], EDIT: True}
        else:  # rebuilt from the proxy's arguments and the client's format alone
            assert _without_empty(after[server]) == _without_empty({**before[server], EDIT: True})


def test_the_remote_fields_each_client_reads() -> None:
    """Spec-mandated (each product's documentation, SOURCES.md): the field of a Streamable HTTP
    server's URL in each fixture, as the round trip above restores it."""
    url_fields = {}
    for client, name in CLIENT_CONFIGS.items():
        for server, expected in EXPECTED[name].items():
            if isinstance(expected, tuple):
                entry = _servers(_load(Path(__file__).parent / "configs" / name))[server]
                url_fields[client] = sorted(k for k in entry if k.lower().endswith("url"))
    assert url_fields == {
        "Claude Code": ["url"],
        "Claude Code (user)": ["url"],
        "Cursor": ["url"],
        "VS Code": ["url"],
        "Windsurf": ["serverUrl"],
        "Gemini CLI": ["httpUrl"],
        "Codex": ["url"],
    }
