"""JSON (and JSONC: comments, trailing commas) parsed with the span of every value, so a client
config can be edited in place: only the server entries change, every other byte stays.

Not a public module. Grammar: RFC 8259, plus `//` and `/* */` comments and trailing commas as
VS Code's JSONC allows them; `Document` says where the first comment and the first trailing
comma are, so a client that reads strict JSON (or comments without trailing commas) can refuse
the file before anything is written. Positions are reported as 1-based line and column
(characters), as editors and Python's `json` count them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

#: RFC 8259 section 6 (ASCII digits: `\d` would take any Unicode digit).
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WS: Final = " \t\r\n"


class JsonSyntaxError(ValueError):
    """Text that is not JSON (or JSONC): `reason` says what, `pos` is the character offset."""

    def __init__(self, reason: str, pos: int) -> None:
        super().__init__(f"{reason} at offset {pos}")
        self.reason = reason
        self.pos = pos


def line_column(text: str, pos: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of offset `pos` in `text`."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


@dataclass(slots=True)
class Node:
    """A value with its span `[start, end)` in the text; an object's members by key."""

    value: Any
    start: int
    end: int
    members: dict[str, Node] = field(default_factory=dict)


@dataclass(slots=True)
class Document:
    """A parsed document: its root value, and the offsets of the first comment and the first
    trailing comma (`None`: there is none), the two things JSONC allows and JSON does not."""

    root: Node
    comment: int | None = None
    trailing_comma: int | None = None


def parse(text: str) -> Document:
    """Parse a whole document (JSON, or JSONC's comments and trailing commas).

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
    return Document(node, parser.comment, parser.trailing_comma)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.comment: int | None = None
        self.trailing_comma: int | None = None

    def skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text):
            char = text[pos]
            if char in _WS:
                pos += 1
            elif text.startswith("//", pos):
                if self.comment is None:
                    self.comment = pos
                newline = text.find("\n", pos)
                pos = len(text) if newline < 0 else newline + 1
            elif text.startswith("/*", pos):
                if self.comment is None:
                    self.comment = pos
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
            string, end = self.string(pos)
            return Node(string, pos, end)
        for word, value in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return Node(value, pos, pos + len(word))
        match = _NUMBER.match(text, pos)
        if match is None:
            raise JsonSyntaxError("expected a value", pos)
        try:
            number = json.loads(match.group())
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            raise JsonSyntaxError("a number too long", pos) from None
        return Node(number, pos, match.end())

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
            key, pos = self.string(pos)
            pos = self.skip(pos)
            if pos >= len(text) or text[pos] != ":":
                raise JsonSyntaxError("expected ':'", pos)
            node = self.value(self.skip(pos + 1))
            members[key] = node
            value[key] = node.value
            pos = self.skip(node.end)
            if pos < len(text) and text[pos] == ",":
                pos = self.after_comma(pos, "}")
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
                pos = self.after_comma(pos, "]")
            elif pos >= len(text) or text[pos] != "]":
                raise JsonSyntaxError("expected ',' or ']'", pos)

    def string(self, pos: int) -> tuple[str, int]:
        """The string starting with the quote at `pos`, and the offset after its end quote."""
        try:
            found: tuple[str, int] = json.decoder.scanstring(  # type: ignore[attr-defined]
                self.text, pos + 1
            )
        except json.JSONDecodeError as exc:  # an unterminated string, a control character
            reason = re.sub(r"( starting)? at$", "", exc.msg)
            raise JsonSyntaxError(reason[:1].lower() + reason[1:], exc.pos) from None
        return found

    def after_comma(self, comma: int, close: str) -> int:
        """The offset of what follows the comma at `comma`; a comma right before `close` is a
        trailing comma (JSONC), remembered."""
        pos = self.skip(comma + 1)
        if pos < len(self.text) and self.text[pos] == close and self.trailing_comma is None:
            self.trailing_comma = comma
        return pos


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
