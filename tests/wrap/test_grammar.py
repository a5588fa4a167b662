"""A config its client would not read is refused before anything is written: one line naming
FILE:LINE:COLUMN, exit code 2, the file untouched, no backup.

Issue 30 item 7 measured on main: a config with a trailing comma was wrapped silently (the
parser took JSONC for every client), so a client that reads strict JSON found a broken file
it had not broken; worse, wrap then wrote the comma on into every rewritten byte.

What each client reads (tests/wrap/configs/SOURCES.md and the sources named here): strict JSON
for Claude Desktop and Claude Code (`JSON.parse`), Cursor, Windsurf (Go's encoding/json);
comments but no trailing comma for Gemini CLI (`JSON.parse(stripJsonComments(text))`,
packages/cli/src/config/settings.ts; strip-json-comments' `trailingCommas` defaults to false);
both for VS Code (JSONC); TOML 1.0 for Codex. Positions are worked out here from the text
(1-based line and column, in characters, as Python's `json` and editors count them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import CLIENT_CONFIGS, conduit, copy_config
from .test_wrap import PROXY

#: What beyond RFC 8259 each JSON client reads (none: strict JSON).
EXTENSIONS = {"VS Code": {"comment", "trailing comma"}, "Gemini CLI": {"comment"}}
JSON_CLIENTS = sorted(client for client in CLIENT_CONFIGS if client != "Codex")


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _with_trailing_comma(text: str) -> tuple[str, int]:
    """`text` with a comma after the first value that closes its object or array."""
    found = re.search(r'("|\]|\}|\d|true|false|null)(\s*\n\s*[\]}])', text)
    assert found is not None
    at = found.end(1)
    return text[:at] + "," + text[at:], at


def _with_comment(text: str) -> tuple[str, int]:
    """`text` with a `//` comment line after its first brace."""
    at = text.index("{") + 1
    return text[:at] + "\n  // a note\n" + text[at:], at + 3


def _refused(path: Path, command: str, line: int, column: int) -> str:
    done = conduit(command, str(path), code=2)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith(f"conduit-mcp: {path}:{line}:{column}: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("defect", ["trailing comma", "comment"])
@pytest.mark.parametrize("client", JSON_CLIENTS)
def test_a_file_its_client_would_not_read_is_refused_untouched(
    tmp_path: Path, client: str, defect: str
) -> None:
    """Real parts: each client's documented config with a trailing comma or a comment added.
    Where the client reads it, wrap and unwrap work (byte for byte); where it does not, wrap,
    unwrap and doctor each print one line naming the file, line and column, exit 2, and
    change nothing."""
    path = copy_config(tmp_path, CLIENT_CONFIGS[client])
    text, offset = (_with_comment if defect == "comment" else _with_trailing_comma)(
        path.read_text(encoding="utf-8")
    )
    path.write_text(text, encoding="utf-8")
    original = path.read_bytes()
    backup = path.with_name(path.name + ".conduit-mcp.bak")
    if defect in EXTENSIONS.get(client, set()):
        conduit("wrap", str(path), "--proxy-command", PROXY)
        conduit("unwrap", str(path))
        assert path.read_bytes() == original
        return
    with pytest.raises(json.JSONDecodeError):  # the standard library agrees: not JSON
        json.loads(text)
    line, column = _position(text, offset)
    for command in ("wrap", "unwrap", "doctor"):
        message = _refused(path, command, line, column)
        assert defect in message and client.split(" (")[0] in message
        assert path.read_bytes() == original
        assert not backup.exists()


def test_codex_toml_that_is_not_toml_is_refused_at_its_place(tmp_path: Path) -> None:
    """Spec-mandated (TOML 1.0: an array's values are separated by single commas): Codex's
    config with `,,` in an array is refused at the second comma; the standard library's TOML
    reader refuses it too."""
    tomllib = pytest.importorskip("tomllib")
    path = copy_config(tmp_path, CLIENT_CONFIGS["Codex"])
    text = path.read_text(encoding="utf-8").replace('"4000"]', '"4000",,]', 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    line, column = _position(text, text.index(",,") + 1)
    for command in ("wrap", "unwrap"):
        assert "not TOML" in _refused(path, command, line, column)
    assert path.read_text(encoding="utf-8") == text


def test_a_config_that_is_not_utf8_is_refused_at_the_byte(tmp_path: Path) -> None:
    """Spec-mandated (RFC 8259 section 8.1: JSON exchanged between systems is UTF-8): a Latin-1
    byte in a value is named by line and column, nothing written."""
    path = copy_config(tmp_path, CLIENT_CONFIGS["Cursor"])
    data = path.read_bytes().replace(b'"value"', b'"caf\xe9"', 1)
    path.write_bytes(data)
    offset = data.index(b"\xe9")
    line, column = _position(data[:offset].decode("utf-8"), offset)
    assert "not UTF-8" in _refused(path, "wrap", line, column)
    assert path.read_bytes() == data
