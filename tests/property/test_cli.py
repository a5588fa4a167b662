"""Property tests: the CLI's file reader and commands on any bytes."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.cli._inspect import _page
from conduit_mcp.cli._shared import BadInput, read_json
from conduit_mcp.cli._text import json_text, visible
from conduit_mcp.client import find_invisible
from tests.property.profiles import bounded
from tests.property.strategies import corrupted, json_values, real_or_mutated, real_pages

runner = CliRunner()
inputs = st.one_of(
    corrupted(),
    st.binary(max_size=40),
    real_or_mutated(real_pages()).map(lambda v: json.dumps(v).encode()),
    json_values(wire=True).map(lambda v: json.dumps(v).encode()),
)


@bounded(60)
@given(inputs)
def test_the_cli_reader_returns_a_value_or_bad_input(data: bytes) -> None:
    """conduit-defined (cli: bad input is one line and exit 2, never a traceback): `read_json`
    and `_page` of any file give a value or raise `BadInput`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.json"
        path.write_bytes(data)
        for reader in (read_json, _page):
            try:
                reader(str(path))
            except BadInput as exc:
                assert str(exc).startswith(str(path))


@pytest.mark.parametrize("command", [["inspect", "--json"], ["fingerprint"], ["inspect"]])
@bounded(20)
@given(data=inputs)
def test_cli_commands_exit_0_1_or_2_without_a_traceback(command: list[str], data: Any) -> None:
    """conduit-defined (cli module docstring: exit codes 0, 1, 2; no traceback): any stdin."""
    result = runner.invoke(app, [*command, "-"], input=data)
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("tool", "shown"),
    [
        ({"name": "a[/x]"}, "a[/x]"),
        ({"name": "b", "title": "[/dim][red]x"}, "[/dim][red]x"),
        ({"name": "c", "properties": {"[/b]": {"type": "string", "x-mcp-header": "X"}}}, "[/b]"),
    ],
)
def test_inspect_prints_rich_markup_from_the_server_literally(
    tool: dict[str, Any], shown: str
) -> None:
    """conduit-defined (regression, found by the cli fuzz target's seeds): rich markup in a
    name, title or property name printed a traceback (MarkupError) or restyled the table; it is
    shown as written."""
    fields = {k: v for k, v in tool.items() if k != "properties"}
    raw = {**fields, "inputSchema": {"type": "object", "properties": tool.get("properties", {})}}
    result = runner.invoke(app, ["inspect", "-"], input=json.dumps({"tools": [raw]}))
    assert (result.exit_code, result.exception) == (0, None), result.output
    assert shown in result.output


# -- what the CLI writes (issue 15 item 10) ---------------------------------------------------

_ESCAPE = re.compile(r"\\(\\|u[0-9a-f]{4}|U[0-9a-f]{8})")


def _undo_visible(shown: str) -> str:
    """An independent decoder of `visible`'s escapes: `\\\\`, `\\uXXXX`, `\\UXXXXXXXX`."""
    return _ESCAPE.sub(lambda m: "\\" if m[1] == "\\" else chr(int(m[1][1:], 16)), shown)


#: Any code point, lone surrogates included (a non-UTF-8 file name decodes to them).
any_text = st.text(st.characters(codec=None), max_size=60)


@bounded(200)
@given(any_text)
def test_visible_is_printable_unambiguous_and_linear(text: str) -> None:
    """conduit-defined: every character a terminal would hide is escaped (nothing left that
    `str.isprintable` or intake's invisible-character rule flags), the escapes decode back to
    the text (a server cannot forge one: its backslashes are doubled), and the output is at
    most 10 characters per input character."""
    shown = visible(text)
    assert shown.isprintable() and find_invisible(shown) == []
    assert _undo_visible(shown) == text
    assert len(shown) <= 10 * len(text)
    shown.encode("utf-8")  # no lone surrogate left


@bounded(200)
@given(
    st.recursive(
        any_text | st.integers() | st.booleans() | st.none(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
        max_leaves=12,
    ),
    st.sampled_from([None, 2]),
)
def test_json_text_is_valid_utf8_json_of_visible_characters(value: Any, indent: int | None) -> None:
    """conduit-defined: `--json` output decodes (by the standard library) to the same value,
    encodes as UTF-8, and every character in it is printable and not invisible (newlines of
    the indentation aside)."""
    text = json_text(value, indent=indent)
    assert json.loads(text) == value
    text.encode("utf-8")
    for line in text.split("\n"):
        assert line.isprintable() and find_invisible(line) == []
