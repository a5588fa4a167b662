"""What the `conduit-mcp` command writes: server strings made visible, JSON made safe, and a
stdout that a closed pipe silences instead of failing.

Private to the CLI. Every string a server supplies reaches the terminal through `visible` (for
people) or `json_text` (for programs); neither interprets markup, and both are linear.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any

from rich.console import Console, RenderableType

from ..client import find_invisible

#: The JSON type of each value `parse_json` can produce, for values described, not echoed.
JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _escape(char: str, astral: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    if astral == "json":  # JSON has only \uXXXX: a UTF-16 surrogate pair (RFC 8259 section 7)
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\U{code:08x}"


def _hidden(text: str) -> set[int]:
    """Indexes of the characters a terminal would not show as themselves."""
    hidden = {index for index, _ in find_invisible(text)}
    # isprintable() is False for C0, DEL, C1, format (bidi, zero-width), separators other
    # than space, lone surrogates, private-use and unassigned code points.
    hidden.update(i for i, char in enumerate(text) if not char.isprintable())
    return hidden


def visible(text: object) -> str:
    """`text` as a person should see it: every hidden character as an escape, nothing else.

    Args:
        text: any value; `str(text)` is shown.

    Returns:
        The string with each character a terminal would not show as itself (control, C1,
        bidi, zero-width, tag and other invisible characters, lone surrogates) written
        `\\uXXXX` (or `\\UXXXXXXXX` above U+FFFF), and each backslash doubled so that an
        escape the server wrote itself cannot pass for one of these. Plain text is returned
        unchanged.

    Total: linear in the length of the text; never raises.
    """
    text = str(text)
    if text.isascii() and text.isprintable() and "\\" not in text:
        return text
    hidden = _hidden(text)
    return "".join(
        _escape(char, "display") if i in hidden else ("\\\\" if char == "\\" else char)
        for i, char in enumerate(text)
    )


#: Table cells show at most this many characters of a server string (`--json` has them all).
CELL_CHARS = 200


def clipped(text: object, limit: int = CELL_CHARS) -> str:
    """`visible(text)` of at most `limit` characters of `text`, saying how many were left out.

    A table is for people: a 400,000-character name would fold into 100,000 table lines.
    The cut is made before escaping, so an escape is never cut in half.
    """
    text = str(text)
    if len(text) <= limit:
        return visible(text)
    return f"{visible(text[:limit])}… ({len(text) - limit} more characters)"


def json_text(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON whose every character is visible and encodable as UTF-8.

    Args:
        value: a JSON-compatible value (`dict`, `list`, `str`, `int`, `float`, `bool`, `None`),
            at most ~900 levels deep (the report builders describe deeper server values).
        indent: as `json.dumps`.

    Returns:
        `json.dumps(value, ensure_ascii=False)` with C1 controls, DEL, bidi and other
        invisible characters, lone surrogates (a file name that is not UTF-8, as Python
        decodes it) and line/paragraph separators written as `\\uXXXX` escapes; other
        non-ASCII text stays readable. A program decoding it gets the same strings back.

    Total: linear in the size of the output.
    """
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    if text.isascii():
        return text.replace("\x7f", "\\u007f")
    hidden = _hidden(text)
    # Outside strings the text is ASCII; a raw newline can only be indent's (json.dumps escapes
    # the ones inside strings), so every hidden character is inside a string: escapable.
    return "".join(
        _escape(char, "json") if i in hidden and char != "\n" else char
        for i, char in enumerate(text)
    )


def emit(text: str) -> None:
    """Write one line to stdout; once the reader has gone (`| head -1`), write nothing more.

    A closed pipe is not an error of the command: the command still finishes and exits with
    its own code. stdout is pointed at the null device so that the interpreter's final flush
    does not report the pipe either.
    """
    _write(sys.stdout, text)


def warn(text: str) -> None:
    """Write one line to stderr (nothing when stderr is closed)."""
    _write(sys.stderr, text)


def _write(stream: Any, text: str) -> None:
    try:
        stream.write(text + "\n")
        stream.flush()
    except BrokenPipeError:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # not a real file (a test runner's buffer): nothing will flush to a pipe


#: The width a table is measured at when stdout is not a terminal (no real limit).
_UNBOUNDED = 1_000_000


def show(renderable: RenderableType) -> None:
    """Render a rich table (or other renderable) to stdout through `emit`.

    The console interprets no markup, emoji shortcodes or highlighting: every cell is built
    from `rich.text.Text` of `visible(...)` strings, shown as written. On a terminal the width
    is the terminal's and long cells fold; when stdout is not a terminal (a pipe, a file, a CI
    log) lines are as long as the table needs, at least 80 (or `COLUMNS`) characters, so no
    name or fingerprint is ever wrapped for a program or `grep` to find.
    """
    console = Console(markup=False, emoji=False, highlight=False)
    if not console.is_terminal:
        # Measured without the console's width, which would clamp the answer to it.
        widest = console.measure(
            renderable, options=console.options.update_width(_UNBOUNDED)
        ).maximum
        if widest > console.width:
            console = Console(markup=False, emoji=False, highlight=False, width=widest)
    with console.capture() as capture:
        console.print(renderable)
    emit(capture.get().rstrip("\n"))
