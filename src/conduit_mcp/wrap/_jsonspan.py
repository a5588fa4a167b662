"""JSON (and JSONC: comments, trailing commas) parsed with the span of every value, so a client
config can be edited in place: only the server entries change, every other byte stays.

Not a public module. Grammar: RFC 8259, plus `//` and `/* */` comments and trailing commas as
VS Code's JSONC allows them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WS: Final = " \t\r\n"


class JsonSyntaxError(ValueError):
    """Text that is not JSON (or JSONC): `pos` is the character offset."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(f"{message} at offset {pos}")
        self.pos = pos


@dataclass(slots=True)
class Node:
    """A value with its span `[start, end)` in the text; an object's members by key."""

    value: Any
    start: int
    end: int
    members: dict[str, Node] = field(default_factory=dict)


def parse(text: str) -> Node:
    """Parse a whole document.

    Raises:
        JsonSyntaxError: not JSON/JSONC (with the offset).
    """
    parser = _Parser(text)
    try:
        node = parser.value(parser.skip(0))
    except RecursionError:
        raise JsonSyntaxError("nested too deeply", 0) from None
    end = parser.skip(node.end)
    if end != len(text):
        raise JsonSyntaxError("extra data after the document", end)
    return node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.decoder = json.JSONDecoder()

    def skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text):
            char = text[pos]
            if char in _WS:
                pos += 1
            elif text.startswith("//", pos):
                newline = text.find("\n", pos)
                pos = len(text) if newline < 0 else newline + 1
            elif text.startswith("/*", pos):
                close = text.find("*/", pos + 2)
                if close < 0:
                    raise JsonSyntaxError("unterminated comment", pos)
                pos = close + 2
            else:
                break
        return pos

    def value(self, pos: int) -> Node:
        text = self.text
        if pos >= len(text):
            raise JsonSyntaxError("unexpected end", pos)
        char = text[pos]
        if char == "{":
            return self.object(pos)
        if char == "[":
            return self.array(pos)
        if char == '"':
            string, end = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            return Node(string, pos, end)
        for word, value in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return Node(value, pos, pos + len(word))
        match = _NUMBER.match(text, pos)
        if match is None:
            raise JsonSyntaxError("expected a value", pos)
        return Node(json.loads(match.group()), pos, match.end())

    def object(self, start: int) -> Node:
        text = self.text
        members: dict[str, Node] = {}
        value: dict[str, Any] = {}
        pos = self.skip(start + 1)
        while True:
            if pos < len(text) and text[pos] == "}":
                return Node(value, start, pos + 1, members)
            if pos >= len(text) or text[pos] != '"':
                raise JsonSyntaxError("expected a member name", pos)
            key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            pos = self.skip(pos)
            if pos >= len(text) or text[pos] != ":":
                raise JsonSyntaxError("expected ':'", pos)
            node = self.value(self.skip(pos + 1))
            members[key] = node
            value[key] = node.value
            pos = self.skip(node.end)
            if pos < len(text) and text[pos] == ",":
                pos = self.skip(pos + 1)
            elif pos >= len(text) or text[pos] != "}":
                raise JsonSyntaxError("expected ',' or '}'", pos)

    def array(self, start: int) -> Node:
        text = self.text
        items: list[Any] = []
        pos = self.skip(start + 1)
        while True:
            if pos < len(text) and text[pos] == "]":
                return Node(items, start, pos + 1)
            node = self.value(pos)
            items.append(node.value)
            pos = self.skip(node.end)
            if pos < len(text) and text[pos] == ",":
                pos = self.skip(pos + 1)
            elif pos >= len(text) or text[pos] != "]":
                raise JsonSyntaxError("expected ',' or ']'", pos)


def indent_unit(text: str) -> str:
    """The document's indentation step (the first indented line's leading white space; two
    spaces when nothing is indented)."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def render(value: Any, text: str, node: Node) -> str:
    """`value` as JSON text to put in place of `node`: one line when the old value was on one
    line, else indented as the document is, continuing from the old value's line."""
    if "\n" not in text[node.start : node.end]:
        return json.dumps(value, ensure_ascii=False)
    line_start = text.rfind("\n", 0, node.start) + 1
    base = re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]
    unit = indent_unit(text)
    if unit.startswith("\t"):
        dumped = json.dumps(value, ensure_ascii=False, indent="\t")
    else:
        dumped = json.dumps(value, ensure_ascii=False, indent=len(unit))
    return dumped.replace("\n", "\n" + base)
