"""What the command groups share: exit codes, the common options, reading a page, table cells
and change lines.

Private to the CLI. Every group module builds on these, so a page is read, and a finding
reported, the same way by inspect, diff and the pins commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, NoReturn

import typer
from conduit_mcp_wire import LATEST, VERSIONS
from rich.table import Table
from rich.text import Text

from ..client import TRANSPORTS, Error, Intake, intake, parse_json, unwrap_response
from ._capture_file import CaptureError, is_capture, read_capture
from ._text import JSON_TYPES, clipped, json_text, visible, warn

if TYPE_CHECKING:
    from ..pins import FieldChange

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2


def _check_transport(value: str | None) -> str | None:
    if value is not None and value not in TRANSPORTS:
        raise typer.BadParameter(
            f"'{visible(value)}' is not one of {', '.join(sorted(TRANSPORTS))}"
        )
    return value


def _check_version(value: str | None) -> str | None:
    if value is not None and value not in VERSIONS:
        raise typer.BadParameter(f"'{visible(value)}' is not one of {', '.join(VERSIONS)}")
    return value


JsonOption = Annotated[bool, typer.Option("--json", help="Write JSON for programs.")]
#: What a page is read under when neither an option nor a capture file says.
DEFAULT_TRANSPORT = "streamable-http"
TransportOption = Annotated[
    str | None,
    typer.Option(
        metavar="TRANSPORT",
        callback=_check_transport,
        help=f"Transport the page came over: {', '.join(sorted(TRANSPORTS))} (default: the "
        f"capture file's, else {DEFAULT_TRANSPORT}).",
    ),
]
VersionOption = Annotated[
    str | None,
    typer.Option(
        metavar="VERSION",
        callback=_check_version,
        help=f"Negotiated protocol version: {', '.join(VERSIONS)} (default: the capture "
        f"file's, else {LATEST}).",
    ),
]


class BadInput(Exception):
    """An input file that cannot be used; becomes one line on stderr and exit code 2."""


#: What a command that never creates a pin store says of a location that holds none: what does.
NO_STORE: Final = (
    "no such pin store (a proxy run with --pins creates one, as do pins approve, policy set"
    " and console add-user)"
)


def fail(message: str) -> NoReturn:
    """One line on stderr, `conduit-mcp: ` and the message made visible; exit code 2."""
    warn(f"conduit-mcp: {visible(message)}")
    raise typer.Exit(EXIT_BAD_INPUT)


def read_json(source: str) -> Any:
    """Read and parse one input (`-` is stdin)."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise BadInput(f"{source}: cannot read: {exc.strerror or exc}") from None
    try:
        return parse_json(data)
    except Error as exc:
        where = _not_utf8(data)
        if where is None:
            raise BadInput(f"{source}: {exc}") from None
        raise BadInput(f"{source}: {exc.kind}/{exc.reason} at {exc.json_path}: {where}") from None


def _not_utf8(data: bytes) -> str | None:
    """Where `data` stops being UTF-8, by line and column, or `None` when it is UTF-8.

    The JSON parser reports bad UTF-8 at line 1 column 1 wherever it is; this finds the byte.
    Columns count characters, as the parser's do for text that is not JSON.
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
        return (
            f"not valid UTF-8: byte 0x{data[exc.start]:02x} ({exc.reason}) "
            f"at line {line} column {column} (byte {exc.start})"
        )
    return None


def load_page(source: str) -> tuple[Any, str | None, str | None]:
    """One input as `(page, protocol_version, transport)`.

    A capture file (`conduit-mcp capture`) gives its pages as one listing and the version and
    transport it recorded; anything else (a `tools/list` result, a JSON-RPC response, a tool)
    gives `None` for both.
    """
    value = read_json(source)
    if is_capture(value):
        try:
            return read_capture(value)
        except CaptureError as exc:
            raise BadInput(f"{source}: not a usable capture file: {exc}") from None
    try:
        return unwrap_response(value), None, None
    except Error as exc:
        code, message = exc.details.get("code"), exc.details.get("message")
        sent = f'message "{message}"' if message is not None else "no message"
        raise BadInput(f"{source}: {exc} (JSON-RPC error code {code}, {sent})") from None


def intake_page(
    source: str, server_id: str | None, transport: str | None, version: str | None
) -> tuple[Intake, str, str]:
    """Intake of one input, and the `(transport, protocol_version)` it was read under.

    An option given on the command line wins; else what a capture file recorded; else
    `DEFAULT_TRANSPORT` and `LATEST`.
    """
    page, recorded_version, recorded_transport = load_page(source)
    transport = transport or recorded_transport or DEFAULT_TRANSPORT
    version = version or recorded_version or LATEST
    if transport not in TRANSPORTS or version not in VERSIONS:
        raise BadInput(
            f"{source}: recorded transport {visible(transport)!r} or protocol version "
            f"{visible(version)!r} is not one this conduit-mcp knows; pass --transport and "
            "--protocol-version"
        )
    if isinstance(page, dict) and "tools" not in page and "inputSchema" in page:
        page = {"tools": [page]}  # a single tool definition
    try:
        result = intake(
            server_id or Path(source).stem or "stdin",
            page,
            transport=transport,  # type: ignore[arg-type]
            protocol_version=version,
        )
    except Error as exc:
        raise BadInput(f"{source}: {exc}") from None
    return result, transport, version


def cell(value: object) -> Text:
    """A table cell from a server string: `clipped`, and never read as markup."""
    return Text(clipped(value))


#: The fingerprint columns show the first 16 hex digits of the SHA-256, never wrapped or cut.
FINGERPRINT_WIDTH = 16


def fingerprint_column(table: Table, header: str) -> None:
    table.add_column(header, no_wrap=True, min_width=FINGERPRINT_WIDTH)


def name_column(table: Table, header: str) -> None:
    # On a terminal a long name folds; for a pipe `show` makes the table as wide as it needs.
    table.add_column(header, overflow="fold")


def json_report(report: dict[str, Any]) -> str:
    """`json_text(report)`, or exit 2 when a server value nests too deep to write."""
    try:
        return json_text(report)
    except RecursionError:
        fail("a changed value nests too deeply to be written as JSON")


def change_line(change: FieldChange, limit: int = 60) -> str:
    """One change for a person: pointer, kind, and old/new values (escaped), each cut to
    `limit` characters (`pins pending --full`: whole)."""
    kind = "material" if change.material else "cosmetic"
    where = visible(change.path) or "(whole definition)"
    old = "" if change.op == "add" else short(change.old, limit)
    new = "" if change.op == "remove" else short(change.new, limit)
    arrow = {"add": f"+ {new}", "remove": f"- {old}", "replace": f"{old} -> {new}"}[change.op]
    return f"{where}  [{kind}] {arrow}"


def short(value: Any, limit: int = 60) -> str:
    try:
        text = json_text(value)
    except (TypeError, ValueError, RecursionError):
        text = f"<{JSON_TYPES.get(type(value), 'unknown')}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"
