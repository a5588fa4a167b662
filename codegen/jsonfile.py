"""Read the generator's JSON inputs, and say where one is wrong: a file, a line, a JSON Pointer.

Every failure of `make generate` / `make bump` is one line naming the file and the place in it
(RFC 6901 pointer), never a traceback: `load` for JSON that does not parse (the pointer of the
member or item the parser stopped in), `dangling_refs` for a `$ref` to a definition that is not
there (the pointer of the `$ref` itself).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class InputError(Exception):
    """An input file of the generator is not what it must be; the message is one line."""


def pointer(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """RFC 6901: `["$defs", "a/b", 0]` -> `/$defs/a~1b/0`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def load_json_file(path: Path, shown: str | None = None) -> Any:
    """Parse one JSON file.

    Args:
        path: the file.
        shown: how to name it in a message (default: `path` as given).

    Raises:
        InputError: not readable as UTF-8 JSON; the message names the file, line and column,
            the parser's reason and the pointer of the place it stopped in
            (`schema/PINNED.json:16:5: invalid JSON (Expecting property name ...) in /schemas/0`).
    """
    name = shown or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    return load_json_bytes(data, name)


def load_json_bytes(data: bytes, shown: str) -> Any:
    """Parse JSON bytes read from the file named `shown` (see `load_json_file`).

    Raises:
        InputError: not UTF-8, or not JSON (line, column, reason, pointer).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: byte {exc.start}: not UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = pointer(_path_at(text, exc.pos)) or "the top level"
        raise InputError(
            f"{shown}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg}) in {where}"
        ) from None


def _path_at(text: str, end: int) -> list[str | int]:
    """The member / item path of the container open at offset `end` of `text` (a scan of the
    valid prefix: strings, brackets, keys and commas)."""
    stack: list[list[Any]] = []  # [kind, key or index, awaiting a key]
    i = 0
    last_string = ""
    while i < end and i < len(text):
        char = text[i]
        if char == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            try:
                last_string = json.loads(text[i : j + 1])
            except ValueError:
                last_string = text[i + 1 : j]
            if stack and stack[-1][0] == "{" and stack[-1][2]:
                stack[-1][1] = last_string
            i = j + 1
            continue
        if char in "{[":
            stack.append(["{", None, True] if char == "{" else ["[", 0, False])
        elif char in "}]":
            if stack:
                stack.pop()
        elif char == ":" and stack and stack[-1][0] == "{":
            stack[-1][2] = False
        elif char == "," and stack:
            if stack[-1][0] == "{":
                stack[-1][1], stack[-1][2] = None, True
            else:
                stack[-1][1] += 1
        i += 1
    return [frame[1] for frame in stack if frame[1] is not None]


def dangling_refs(schema: Any, defs_key: str) -> list[tuple[str, str]]:
    """Every local `$ref` of `schema` that names no definition.

    Returns:
        (pointer of the `$ref` member, its value), in document order; refs that do not start
        with `#/<defs_key>/` are not looked at (the MCP schemas use no others).
    """
    defs = schema.get(defs_key) if isinstance(schema, dict) else None
    names = set(defs) if isinstance(defs, dict) else set()
    prefix = f"#/{defs_key}/"
    found: list[tuple[str, str]] = []

    def walk(node: Any, parts: list[str | int]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith(prefix):
                    target = value[len(prefix) :].replace("~1", "/").replace("~0", "~")
                    if target not in names:
                        found.append((pointer([*parts, key]), value))
                else:
                    walk(value, [*parts, key])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, [*parts, index])

    walk(schema, [])
    return found
