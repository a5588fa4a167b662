"""The `conduit-mcp` command: capture and inspect tools/list pages, fingerprint tools, detect
drift, pins.

Exit codes (the same for every command):
    0  done, nothing to report (inspect: no tool rejected, and with `--fail-on warning` no
       warning; diff: no drift; pins check: every tool approved; pins changes: no change; pins
       revoke: every pin removed; capture: the pages were written)
    1  done, with findings (inspect: a tool was rejected, or with `--fail-on warning` warned
       about; diff: tools added, removed or changed; pins check/changes: a tool new, changed,
       cosmetic or rejected; pins revoke: no such pin)
    2  the input could not be read: missing file, not JSON, not a tools/list result or capture
       file, bad option, a pin store that cannot be opened or does not exist (only `pins
       approve` creates one); capture: the server could not be run or reached, or answered
       with an error

Every command that reads a page takes a capture file (`conduit-mcp capture`) too, and reads it
under the protocol version and transport it recorded unless an option says otherwise.

pins list, pins audit and pins pending exit 0 once the store is read (pins pending --exit-code:
1 while any tool waits for approval).

A bad option is a usage error naming the option (exit code 2). Bad input gives one line on
stderr (`conduit-mcp: <file>: <reason> at <path>: <message>`; text that is not UTF-8 or not
JSON says the line and column) and no traceback. `--json` writes one JSON document to stdout
for programs, with invisible and control characters escaped; without it, plain lines and
tables are written for people, with every server string shown as written (no markup, no emoji
shortcodes) and hidden characters as `\\uXXXX`. When the reader of stdout goes away
(`| head -1`), the command writes nothing more and exits with its own code.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import AsyncIterator, Iterator
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, Final, NoReturn

import click
import typer
from conduit_mcp_wire import LATEST, VERSIONS
from rich.table import Table
from rich.text import Text

from ._cli_capture import CaptureError, capture, is_capture, read_capture
from ._cli_help import PlainHelpCommand
from ._cli_text import JSON_TYPES, clipped, emit, json_text, show, visible, warn
from .client import (
    TRANSPORTS,
    Error,
    Intake,
    Tool,
    conformance_violations,
    fingerprint,
    header_map,
    intake,
    param_headers_apply,
    parse_json,
    unwrap_response,
)
from .client._install import DISTRIBUTION, program_name
from .pins import FieldChange, Pending, PinStore, diff_tools, redacted_location, schema_changes
from .proxy._cli import register as register_proxy_commands
from .proxy._settings import APPROVER_PLACEHOLDER

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2

app = typer.Typer(
    name="conduit-mcp",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        emit(f"conduit-mcp {metadata.version(DISTRIBUTION)}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Show the version and exit.",
            is_eager=True,
            callback=_version_callback,
        ),
    ] = False,
) -> None:
    """Guard MCP servers and inspect their tools: run a server behind the guard (proxy), wrap
    a client's config, keep a team's pins, inspect and diff tools/list pages.

    Exit codes: 0 done, nothing that fails the command; 1 done, with a finding that fails it
    (inspect: a rejected tool, and any warning only under --fail-on warning; diff: drift; pins
    check: a tool not approved); 2 unusable input or a bad option. COMMAND -h shows the help
    of a command and what makes it exit 1.
    """


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


def _check_fail_on(value: str) -> str:
    if value not in FAIL_ON:
        raise typer.BadParameter(f"'{visible(value)}' is not one of {', '.join(FAIL_ON)}")
    return value


#: `inspect --fail-on` levels: what makes the exit code 1.
FAIL_ON = ("rejection", "warning")

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


def _fail(message: str) -> NoReturn:
    warn(f"conduit-mcp: {visible(message)}")
    raise typer.Exit(EXIT_BAD_INPUT)


def _read(source: str) -> Any:
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


def _page(source: str) -> Any:
    """One input as a `tools/list` result (or a single tool): a JSON-RPC response unwrapped."""
    return _load(source)[0]


def _load(source: str) -> tuple[Any, str | None, str | None]:
    """One input as `(page, protocol_version, transport)`.

    A capture file (`conduit-mcp capture`) gives its pages as one listing and the version and
    transport it recorded; anything else (a `tools/list` result, a JSON-RPC response, a tool)
    gives `None` for both.
    """
    value = _read(source)
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


def _intake(
    source: str, server_id: str | None, transport: str | None, version: str | None
) -> tuple[Intake, str, str]:
    """Intake of one input, and the `(transport, protocol_version)` it was read under.

    An option given on the command line wins; else what a capture file recorded; else
    `DEFAULT_TRANSPORT` and `LATEST`.
    """
    page, recorded_version, recorded_transport = _load(source)
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


def _tool_report(tool: Tool, index: int, result: Intake, headers_apply: bool) -> dict[str, Any]:
    conformance = {
        version: [
            {"path": list(e.path), "json_path": e.json_path, "message": e.message}
            for e in conformance_violations(tool.raw, kind="tool", protocol_version=version)
        ]
        for version in VERSIONS
    }
    headers: dict[str, list[str]] = {}
    if headers_apply:
        try:
            headers = {name: list(path) for name, path in header_map(tool).items()}
        except Error:
            headers = {}
    return {
        "index": index,
        "name": tool.name,
        "display_name": tool.display_name,
        "fingerprint": tool.fingerprint,
        "warnings": [
            {"code": x.code, "json_path": x.json_path, "message": x.message}
            for x in result.warnings_for(index)
        ],
        "header_map": headers,
        "conformance": conformance,
    }


def _inspect_report(
    source: str, result: Intake, transport: str, protocol_version: str
) -> dict[str, Any]:
    indexes = _accepted_indexes(result)
    headers_apply = param_headers_apply(transport, protocol_version)
    return {
        "file": source,
        "server_id": result.server_id,
        "protocol_version": protocol_version,
        "transport": transport,
        "tools": [
            _tool_report(t, i, result, headers_apply)
            for t, i in zip(result.tools, indexes, strict=True)
        ],
        "rejected": [
            {
                "index": r.index,
                "name": r.name,
                "reason": r.reason,
                "json_path": r.json_path,
                "message": r.message,
                "warnings": [
                    {"code": x.code, "json_path": x.json_path, "message": x.message}
                    for x in result.warnings_for(r.index)
                ],
            }
            for r in result.rejected
        ],
        # nextCursor is a string by the schema; anything else is described, not echoed (a
        # server's 1,000-level value would otherwise reach json.dumps' recursive encoder).
        "next_cursor": (
            result.next_cursor
            if result.next_cursor is None or isinstance(result.next_cursor, str)
            else {"not_a_string": JSON_TYPES.get(type(result.next_cursor), "unknown")}
        ),
    }


def _accepted_indexes(result: Intake) -> list[int]:
    rejected = {r.index for r in result.rejected}
    total = len(result.tools) + len(result.rejected)
    return [i for i in range(total) if i not in rejected]


def _text(value: object) -> Text:
    """A table cell from a server string: `clipped`, and never read as markup."""
    return Text(clipped(value))


#: The fingerprint columns show the first 16 hex digits of the SHA-256, never wrapped or cut.
FINGERPRINT_WIDTH = 16


def _fingerprint_column(table: Table, header: str) -> None:
    table.add_column(header, no_wrap=True, min_width=FINGERPRINT_WIDTH)


def _name_column(table: Table, header: str) -> None:
    # On a terminal a long name folds; for a pipe `show` makes the table as wide as it needs.
    table.add_column(header, overflow="fold")


def _print_inspect(report: dict[str, Any]) -> None:
    title = Text(
        f"{clipped(report['file'])} (server_id {clipped(report['server_id'])}, "
        f"{report['protocol_version']} over {report['transport']})"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("#", overflow="fold")
    _name_column(table, "tool")
    _fingerprint_column(table, "fingerprint")
    for column in ("warnings", "headers", "conformance"):
        table.add_column(column, overflow="fold")
    for tool in report["tools"]:
        failing = [v for v, found in tool["conformance"].items() if found]
        label = _text(tool["display_name"])
        if tool["display_name"] != tool["name"]:
            label.append(f"\nname: {clipped(tool['name'])}", style="dim")
        table.add_row(
            str(tool["index"]),
            label,
            tool["fingerprint"].removeprefix("jcs-sha256:")[:FINGERPRINT_WIDTH],
            Text(
                "\n".join(f"{w['code']} {clipped(w['json_path'])}" for w in tool["warnings"]) or "-"
            ),
            Text(
                "\n".join(
                    f"{clipped(h)} <- {clipped('.'.join(p))}" for h, p in tool["header_map"].items()
                )
                or "-"
            ),
            "all versions" if not failing else "fails " + ", ".join(failing),
        )
    show(table)
    for rejection in report["rejected"]:
        emit(
            f"rejected #{rejection['index']} {visible(rejection['name'])}: "
            f"{rejection['reason']} at {visible(rejection['json_path'])}: "
            f"{visible(rejection['message'])}"
        )
        for warning in rejection["warnings"]:
            emit(f"  warning {warning['code']} at {visible(warning['json_path'])}")


@app.command(
    "inspect",
    cls=PlainHelpCommand,
    short_help="Show each tool's fingerprint, warnings, header map and conformance.",
)
def inspect_command(
    files: Annotated[
        list[str],
        typer.Argument(
            metavar="FILE", help="tools/list results or JSON-RPC responses; - is stdin."
        ),
    ],
    transport: TransportOption = None,
    protocol_version: VersionOption = None,
    server_id: Annotated[
        str | None,
        typer.Option(metavar="ID", help="Operator-assigned server id (default: the file name)."),
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="LEVEL",
            callback=_check_fail_on,
            help="Exit code 1 on: rejection (a tool intake rejected; the default) or warning "
            "(a rejection or any warning, e.g. invisible_unicode).",
        ),
    ] = "rejection",
    as_json: JsonOption = False,
) -> None:
    """Show each tool's display name, fingerprint, warnings, header map and conformance.

    FILE may be a capture file (conduit-mcp capture): its protocol version and transport are
    used unless --protocol-version or --transport say otherwise. Exit code 1 when intake
    rejected a tool (with --fail-on warning: also when it warned about one).
    """
    try:
        reports = []
        for f in files:
            result, used_transport, used_version = _intake(
                f, server_id, transport, protocol_version
            )
            reports.append(_inspect_report(f, result, used_transport, used_version))
    except BadInput as exc:
        _fail(str(exc))
    if as_json:
        emit(json_text(reports, indent=2))
    else:
        for report in reports:
            _print_inspect(report)
    if any(report["rejected"] for report in reports):
        raise typer.Exit(EXIT_FINDINGS)
    if fail_on == "warning" and any(
        tool["warnings"] for report in reports for tool in report["tools"]
    ):
        raise typer.Exit(EXIT_FINDINGS)


@app.command(
    "fingerprint",
    cls=PlainHelpCommand,
    short_help="Print the fingerprint of a tool, or of every tool of a page.",
)
def fingerprint_command(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE", help="A tool definition, or a tools/list result; - is stdin."
        ),
    ],
    as_json: JsonOption = False,
) -> None:
    """Print the fingerprint of a tool, or of every tool of a tools/list result.

    One line per tool: the whole fingerprint, two spaces, the name. Lines are never wrapped.
    """
    try:
        value = _page(file)
        if isinstance(value, dict) and isinstance(value.get("tools"), list):
            pairs = [
                (t.get("name") if isinstance(t, dict) else None, fingerprint(t))
                for t in value["tools"]
            ]
        elif isinstance(value, dict) and "inputSchema" in value:
            pairs = [(value.get("name"), fingerprint(value))]
        else:
            raise BadInput(f"{file}: neither a tool definition nor a tools/list result")
    except Error as exc:
        _fail(f"{file}: {exc}")
    except BadInput as exc:
        _fail(str(exc))
    if as_json:
        # A name that is not a string is null: a server's deep value is never echoed.
        rows = [{"name": n if isinstance(n, str) else None, "fingerprint": f} for n, f in pairs]
        emit(json_text(rows))
    else:
        for name, digest in pairs:
            emit(f"{digest}  {visible(name) if isinstance(name, str) else '-'}")


@app.command(
    "diff",
    cls=PlainHelpCommand,
    short_help="Show tools added, removed or changed between two pages.",
)
def diff_command(
    old: Annotated[str, typer.Argument(metavar="OLD", help="The baseline tools/list result.")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The current tools/list result.")],
    transport: TransportOption = None,
    protocol_version: VersionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show accepted tools added, removed or changed between two pages, field by field.

    Both pages go through the same intake as inspect: a tool that intake rejects is not part
    of either side. Each changed tool lists its changes as RFC 6901 JSON Pointers, marked
    material or cosmetic (title, icons, annotations.title). --json adds "changes" (name to a
    list of {path, op, old, new, material}) and "material" (the changed names with a material
    change). A capture file (conduit-mcp capture) is read under the protocol version and
    transport it recorded. Exit code 1 when anything was added, removed or changed.
    """
    try:
        baseline, _, _ = _intake(old, "diff", transport, protocol_version)
        current, _, _ = _intake(new, "diff", transport, protocol_version)
        drift = diff_tools(baseline.tools, current.tools)
    except BadInput as exc:
        _fail(str(exc))
    except Error as exc:
        _fail(str(exc))
    report: dict[str, Any] = {
        "added": list(drift.added),
        "removed": list(drift.removed),
        "changed": list(drift.changed),
        "material": list(drift.material),
        "changes": {
            name: [change.to_json() for change in drift.changes.get(name, ())]
            for name in drift.changed
        },
    }
    if as_json:
        emit(_json_report(report))
    else:
        if not drift.has_drift:
            emit("no drift")
        for label in ("added", "removed", "changed"):
            for name in report[label]:
                emit(f"{label:<8} {visible(name)}")
                for change in drift.changes.get(name, ()):
                    emit("         " + _change_line(change))
    if drift.has_drift:
        raise typer.Exit(EXIT_FINDINGS)


def _json_report(report: dict[str, Any]) -> str:
    """`json_text(report)`, or exit 2 when a server value nests too deep to write."""
    try:
        return json_text(report)
    except RecursionError:
        _fail("a changed value nests too deeply to be written as JSON")


def _change_line(change: FieldChange) -> str:
    """One change for a person: pointer, kind, and short old/new values (escaped)."""
    kind = "material" if change.material else "cosmetic"
    where = visible(change.path) or "(whole definition)"
    old = "" if change.op == "add" else _short(change.old)
    new = "" if change.op == "remove" else _short(change.new)
    arrow = {"add": f"+ {new}", "remove": f"- {old}", "replace": f"{old} -> {new}"}[change.op]
    return f"{where}  [{kind}] {arrow}"


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = json_text(value)
    except (TypeError, ValueError, RecursionError):
        text = f"<{JSON_TYPES.get(type(value), 'unknown')}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- capture ---------------------------------------------------------------------------------


@app.command(
    "capture",
    cls=PlainHelpCommand,
    short_help="Save a server's tools/list pages with the negotiated version and transport.",
    context_settings={"allow_interspersed_args": False},
)
def capture_command(
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND",
            help="The stdio server to run, after --: program and arguments.",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="A Streamable HTTP server's MCP endpoint instead."),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=VALUE",
            help="An environment variable for the stdio server (repeatable; the SDK passes "
            "only a safe default set, e.g. PATH and HOME, otherwise).",
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            metavar="'NAME: VALUE'",
            help="An HTTP header for every request to --url (repeatable), e.g. "
            "'Authorization: Bearer ...'. Only its name is recorded in the file.",
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Where to write; - is stdout. Without it: stdout when that is a pipe or a "
            "file; on a terminal, a usage error (give -o FILE, or -o - to print it there).",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(metavar="SECONDS", min=0.1, help="Give up after this long in all."),
    ] = 60.0,
) -> None:
    """Run the MCP handshake with a server and save every tools/list page as it was sent.

    conduit-mcp capture -- npx -y @modelcontextprotocol/server-everything stdio
    conduit-mcp capture --url http://localhost:3000/mcp -o page.json

    The official MCP SDK runs the handshake; the file holds the raw tools/list results, the
    protocol version the server negotiated, the transport, the server's serverInfo and the
    command or URL. inspect, diff and the pins commands read such a file under the version and
    transport it recorded. Needs the mcp package. Exit code 2 when the server cannot be
    started or reached, or answers with an error.
    """
    if (url is None) == (not command):
        raise typer.BadParameter("give either -- COMMAND... or --url URL", param_hint="COMMAND")
    if output is None:
        if _stdout_is_terminal():  # a capture is a file to keep, not pages of JSON to scroll
            raise typer.BadParameter(  # "Invalid value for ..." would blame an unused -o
                "stdout is a terminal: give -o FILE to save the capture (or -o - to print it "
                "here, or pipe it)"
            )
        output = "-"
    try:
        document = _capture(command or [], url, env or [], header or [], timeout)
    except CaptureError as exc:
        _fail(f"capture: {exc}")
    try:
        text = json_text(document, indent=2)
    except (RecursionError, ValueError, TypeError):
        _fail("capture: the server's listing nests too deeply to be written as JSON")
    if output == "-":
        emit(text)
    else:
        try:
            Path(output).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            _fail(f"{output}: cannot write: {exc.strerror or exc}")
    tools = sum(len(page.get("tools") or ()) for page in document["pages"])
    warn(
        f"conduit-mcp: captured {len(document['pages'])} page(s), {tools} tool(s), protocol "
        f"{visible(document['protocol_version'])} over {document['transport']}"
        + ("" if output == "-" else f" -> {visible(output)}")
    )


def _stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def _capture(
    command: list[str], url: str | None, env: list[str], header: list[str], timeout: float
) -> Any:
    """Run the capture under a time bound; every failure becomes a `CaptureError`."""
    try:
        import anyio
        import httpx2
        from mcp import StdioServerParameters
        from mcp.client.stdio import get_default_environment, stdio_client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as exc:
        raise CaptureError(f"needs the MCP Python SDK (pip install mcp): {exc}") from None
    if header and url is None:
        raise CaptureError("--header is for --url: a stdio server takes --env")
    headers: dict[str, str] = {}
    for item in header:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise CaptureError(f"--header {visible(item)}: expected 'NAME: VALUE'")
        headers[name.strip()] = value.strip()

    @contextlib.asynccontextmanager
    async def over_http(endpoint: str) -> AsyncIterator[Any]:
        # The SDK's own timeouts (30 s, 300 s to read a stream), with the operator's headers.
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        async with client, streamable_http_client(endpoint, http_client=client) as streams:
            yield streams

    def open_transport() -> Any:
        if url is not None:
            return over_http(url)
        variables = get_default_environment()
        for item in env:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise CaptureError(f"--env {visible(item)}: expected NAME=VALUE")
            variables[name] = value
        params = StdioServerParameters(
            command=command[0],
            args=command[1:],
            env=variables,
            encoding_error_handler="replace",  # one bad line is skipped, as under the guard
        )
        return stdio_client(params)

    server: dict[str, Any] = {"command": command}
    if url is not None:
        server = {"url": redacted_location(url), "headers": sorted(headers)}
    transport = "streamable-http" if url is not None else "stdio"

    async def run() -> Any:
        with anyio.fail_after(timeout):
            return await capture(open_transport, transport=transport, server=server)

    try:
        return anyio.run(run)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the SDK's transport, in task groups: one line, not a trace
        cause = _first_leaf(exc)
        if isinstance(cause, CaptureError):
            raise cause from None
        if isinstance(cause, TimeoutError):
            raise CaptureError(f"no complete answer within {timeout:g} s") from None
        text = str(cause).splitlines()[0] if str(cause) else ""
        message = f"{type(cause).__name__}: {text}" if text else type(cause).__name__
        if url is not None:  # an HTTP error may quote the URL: never its password
            message = message.replace(url, redacted_location(url))
        raise CaptureError(message) from None


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups, or `exc` itself."""
    inner = getattr(exc, "exceptions", None)  # an exception group (3.11+, or its backport)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


# -- pins -----------------------------------------------------------------------------------

pins_app = typer.Typer(
    name="pins",
    help="Approved tools in a pin store: a sqlite file, or a postgresql:// URL for a team.",
    short_help="Approve, check, list, audit and revoke pinned tools.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(pins_app)

_STORE_HELP = (
    "Pin store: a sqlite file path, or a postgresql:// URL (e.g. "
    "postgresql://pins@db.internal/gateway)."
)

StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        metavar="LOCATION",
        help=_STORE_HELP + " It must exist: this command never creates a store.",
    ),
]
NewStoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        metavar="LOCATION",
        help=_STORE_HELP + " A store that does not exist (a sqlite file, or the tables of a "
        "PostgreSQL database) is created.",
    ),
]


def _utf8_text(value: str) -> str:
    """`value` when it is UTF-8 text (argv that is not UTF-8 holds lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise typer.BadParameter(f"'{visible(value)}' is not UTF-8 text") from None
    return value


def _check_server_id(value: str | None) -> str | None:
    """A server id is non-empty Unicode text (argv that is not UTF-8 holds lone surrogates)."""
    if value is None:
        return value
    if not value:
        raise typer.BadParameter("a server id must not be empty")
    return _utf8_text(value)


ServerIdOption = Annotated[
    str,
    typer.Option(
        "--server-id",
        metavar="ID",
        callback=_check_server_id,
        help="Operator-assigned server id (never serverInfo.name).",
    ),
]
OnlyServerOption = Annotated[
    str | None,
    typer.Option(
        "--server-id",
        metavar="ID",
        callback=_check_server_id,
        help="Only this server (default: all).",
    ),
]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option("--tool", metavar="NAME", help="Only this tool (repeatable; exact name)."),
]
PageArgument = Annotated[
    str, typer.Argument(metavar="PAGE", help="A tools/list result or response; - is stdin.")
]


@contextlib.contextmanager
def _store(location: str, *, create: bool = False) -> Iterator[PinStore]:
    """Open a store for the `with` block, or exit 2 with one line (the URL's password is never
    echoed); a failure while the block reads or writes it (a malformed row, a lost
    connection) is one line and exit 2 too, never a traceback.

    Only `pins approve` passes `create=True`. The others (list, check, changes, audit, and
    revoke, which has nothing to remove from a new store) open with `PinStore(...,
    create=False)` (sqlite's `mode=rw` open and the store's marker; a PostgreSQL database must
    hold the tables): a mistyped location, or a file that is not a pin store, is a usage error
    naming `--store`, and nothing is created or written.
    """
    # The store's own errors never hold the password (PinStore re-words the driver's); the
    # location is still replaced by its redacted form wherever a message repeats it.
    where = redacted_location(location)
    try:
        pins = PinStore(location, create=create)
    except FileNotFoundError:
        _fail(f"--store {where}: no such pin store (only pins approve creates one)")
    except Exception as exc:  # sqlite3.Error, psycopg.Error, ImportError, ValueError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _fail(f"{where}: cannot open the pin store: {reason.replace(location, where)}")
    try:
        with pins:
            yield pins
    except (
        typer.Exit,
        typer.Abort,
        click.exceptions.Exit,
        click.exceptions.ClickException,
        click.exceptions.Abort,
    ):
        raise
    except Exception as exc:  # a malformed row (ValueError), sqlite3.Error, psycopg.Error
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _fail(f"{where}: cannot use the pin store: {reason.replace(location, where)}")


def _page_tools(
    source: str,
    server_id: str,
    transport: str | None,
    version: str | None,
    only: list[str] | None,
) -> tuple[Intake, list[Tool], str]:
    """The accepted tools of a page (or only those named), and the protocol version used."""
    try:
        result, _, version = _intake(source, server_id, transport, version)
    except BadInput as exc:
        _fail(str(exc))
    tools = list(result.tools)
    if only:
        missing = [name for name in only if result.tool(name) is None]
        if missing:
            _fail(f"{source}: no accepted tool named {', '.join(map(repr, missing))}")
        tools = [t for t in tools if t.name in only]
    return result, tools, version


@pins_app.command(
    "list", cls=PlainHelpCommand, short_help="List the pins of a store (or of one server)."
)
def pins_list_command(
    store: StoreOption,
    server_id: OnlyServerOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the pins: server, tool, fingerprint, approver and time of approval (--json: also
    the protocol version and whether the definition is kept). A revoked tool has no pin: `pins
    audit` shows the revocation, `pins pending` the tool once a server lists it again."""
    with _store(store) as pins:
        found = pins.pins(server_id)
    rows: list[dict[str, Any]] = [
        {
            "server_id": p.server_id,
            "name": p.name,
            "fingerprint": p.fingerprint,
            "approver": p.approver,
            "approved_at": p.approved_at,
            "protocol_version": p.protocol_version,
            "has_definition": p.definition is not None,
        }
        for p in found
    ]
    if as_json:
        emit(json_text(rows))
        return
    if not rows:  # an empty table reads as a rendering fault
        scope = "" if server_id is None else f" for server {clipped(server_id)}"
        emit(f"no pins in {clipped(redacted_location(store))}{scope}")
        return
    title = Text(f"pins in {clipped(redacted_location(store))}")
    table = Table(title=title, title_justify="left")
    _name_column(table, "server")
    _name_column(table, "tool")
    _fingerprint_column(table, "fingerprint")
    table.add_column("approver", overflow="fold")
    table.add_column("approved (UTC)", no_wrap=True)
    for row in rows:
        when = _utc(row["approved_at"])
        table.add_row(
            _text(row["server_id"]),
            _text(row["name"]),
            row["fingerprint"].removeprefix("jcs-sha256:")[:FINGERPRINT_WIDTH],
            _text(row["approver"] or "-"),
            when,
        )
    show(table)


def _check_approver(value: str | None) -> str | None:
    """Who approves or revokes: non-empty UTF-8 text (from --approver or CONDUIT_MCP_APPROVER)."""
    if value is None:
        return value
    if not value.strip():
        raise typer.BadParameter("name who approves or revokes (it must not be empty)")
    if value.strip() == APPROVER_PLACEHOLDER:
        raise typer.BadParameter(
            f"{APPROVER_PLACEHOLDER} stands for the person approving: put your name in its place"
            " (or set CONDUIT_MCP_APPROVER and leave --approver out)"
        )
    return _utf8_text(value)


ApproverOption = Annotated[
    str,
    typer.Option(
        "--approver",
        metavar="WHO",
        envvar="CONDUIT_MCP_APPROVER",
        show_envvar=True,
        callback=_check_approver,
        help="Who approves or revokes (a person, e.g. alice@example.com), recorded with the "
        "pin and in the audit log. This option or CONDUIT_MCP_APPROVER must name one: a store "
        "a team shares is never written without a person's name.",
    ),
]
YesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="Do not ask. Implied when stdin or stdout is not a terminal; on a terminal the "
        "changes are shown and a confirmation is asked first.",
    ),
]


def _interactive() -> bool:
    """Whether a person can be asked: stdin and stdout are both terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _confirm(question: str, yes: bool) -> None:
    """Ask on a terminal (unless --yes); a refusal writes nothing and exits 1."""
    if yes or not _interactive():
        return
    if not typer.confirm(question, default=False):
        emit("nothing written")
        raise typer.Exit(EXIT_FINDINGS)


def _show_changes(status: str, name: str, fingerprint: str, changes: list[FieldChange]) -> None:
    emit(f"{status:<9} {visible(name)}  {_short_fingerprint(fingerprint)}")
    for change in changes:
        emit("          " + _change_line(change))


@pins_app.command(
    "approve", cls=PlainHelpCommand, short_help="Approve tools: from a page or the pending queue."
)
def pins_approve_command(
    store: NewStoreOption,
    server_id: ServerIdOption,
    approver: ApproverOption,
    page: Annotated[
        str | None,
        typer.Argument(
            metavar="[PAGE]",
            help="A tools/list result or response (- is stdin). Without it, --tool NAME or "
            "--all-pending approves the definitions the store's pending queue holds.",
        ),
    ] = None,
    tool: ToolsOption = None,
    all_pending: Annotated[
        bool,
        typer.Option("--all-pending", help="Approve every pending tool of the server."),
    ] = False,
    yes: YesOption = False,
    transport: TransportOption = None,
    protocol_version: VersionOption = None,
    as_json: JsonOption = False,
    reviewed: Annotated[
        str | None,
        typer.Option(
            "--fingerprint",
            metavar="FINGERPRINT",
            help="With one --tool and no PAGE: approve only if the pending definition is still "
            "this one (the fingerprint `pins pending` showed); otherwise nothing is approved, "
            "exit 2.",
        ),
    ] = None,
) -> None:
    """Approve tools, keeping each definition: the accepted tools of PAGE (or only --tool
    NAME ...), or, without a page, the pending definitions (--tool NAME ... or --all-pending).
    --fingerprint makes the approval of one pending tool exactly the definition reviewed.

    On a terminal the changes are shown (field by field, RFC 6901 pointers) and a
    confirmation is asked (--yes skips it). With a page, a sqlite store that does not exist yet
    is created; from the pending queue, the store must exist.
    """
    if page is not None and all_pending:
        raise typer.BadParameter("give a PAGE or --all-pending, not both", param_hint="PAGE")
    if page is None and not tool and not all_pending:
        raise typer.BadParameter(
            "give a PAGE, or --tool NAME / --all-pending to approve pending tools",
            param_hint="PAGE",
        )
    if reviewed is not None and (page is not None or all_pending or len(tool or []) != 1):
        raise typer.BadParameter(
            "--fingerprint goes with one --tool NAME from the pending queue (no PAGE)",
            param_hint="--fingerprint",
        )
    if page is None:
        approved = _approve_pending(store, server_id, tool, approver, yes, reviewed)
    else:
        _, tools, version = _page_tools(page, server_id, transport, protocol_version, tool)
        with _store(store, create=True) as pins:
            try:
                checks = pins.check_page(server_id, tools, audit=False)
            except Error as exc:
                _fail(f"{page}: {exc}")
            differing = [c for c in checks if c.status != "approved"]
            if differing and not yes and _interactive():
                for check in differing:
                    _show_changes(check.status, check.name, check.fingerprint, list(check.changes))
            _confirm(f"Approve {len(tools)} tool(s) as {visible(approver)}?", yes)
            pins.approve_all(server_id, tools, approver=approver, protocol_version=version)
        approved = [(t.name, t.fingerprint or fingerprint(t.raw)) for t in tools]
    if as_json:
        emit(json_text([{"name": name, "fingerprint": value} for name, value in approved]))
    else:
        for name, value in approved:
            emit(f"approved {value}  {visible(name)}")


def _approve_pending(
    store: str,
    server_id: str,
    names: list[str] | None,
    approver: str,
    yes: bool,
    reviewed: str | None = None,
) -> list[tuple[str, str]]:
    """Approve the pending definitions of `names` (or all of the server's); each is exactly
    what was shown, whatever the queue holds by the time the person answers. `reviewed`: the
    fingerprint the one named tool must still have (a server may re-list another definition
    between a review and its approval)."""
    with _store(store) as pins:
        pending = {p.name: p for p in pins.pending(server_id)}
        wanted = list(names) if names else sorted(pending)
        missing = [name for name in wanted if name not in pending]
        if missing:
            _fail(
                f"nothing pending for {', '.join(map(repr, missing))}: a tool is queued when a "
                "guard lists it (a revoked one too): have a client list the tools again through "
                "the guard, then see pins pending"
            )
        if reviewed is not None:
            now = pending[wanted[0]].fingerprint
            if now.removeprefix("jcs-sha256:") != reviewed.removeprefix("jcs-sha256:"):
                _fail(
                    f"the pending definition of {wanted[0]!r} is now {now}, not the one "
                    f"reviewed ({reviewed}): nothing approved; review it again (pins pending)"
                )
        if not wanted:
            emit("nothing pending")
            return []
        if not yes and _interactive():
            for name in wanted:
                item = pending[name]
                status = "revoked" if item.revoked_at is not None else item.status
                _show_changes(status, name, item.fingerprint, list(item.changes))
                if item.revoked_at is not None:  # a person took it back: say who, before asking
                    emit("          " + _revocation_line(item))
        _confirm(f"Approve {len(wanted)} pending tool(s) as {visible(approver)}?", yes)
        tools: list[Tool] = []
        for name in wanted:
            item = pending[name]
            if item.definition is None:  # checked by fingerprint alone
                pins.approve(
                    server_id,
                    name,
                    item.fingerprint,
                    approver=approver,
                    protocol_version=item.protocol_version,
                )
                continue
            raw = parse_json(item.definition)
            if not isinstance(raw, dict) or fingerprint(raw) != item.fingerprint:
                _fail(f"the pending definition of {name!r} does not match its fingerprint")
            tools.append(Tool.from_wire(server_id, raw))
        if tools:
            pins.approve_all(server_id, tools, approver=approver)
    return [(name, pending[name].fingerprint) for name in wanted]


@pins_app.command("pending", cls=PlainHelpCommand, short_help="List the tools awaiting approval.")
def pins_pending_command(
    store: StoreOption,
    server_id: OnlyServerOption = None,
    as_json: JsonOption = False,
    exit_code: Annotated[
        bool,
        typer.Option(
            "--exit-code",
            help="Exit code 1 when any tool waits, 0 when none (as git diff --exit-code).",
        ),
    ] = False,
) -> None:
    """List what awaits a person's approval: tools held or blocked as new (or revoked: new
    again since a person revoked the pin, with who did and when), changed or cosmetic, with
    what a reviewer needs (a new tool's description and inputSchema, a changed one's field
    changes), the whole fingerprint, first and last sighting (UTC), how often they were seen,
    and the command that approves each. Exit code 0 once the store is read (with --exit-code:
    1 when any tool waits)."""
    with _store(store) as pins:
        found = pins.pending(server_id)
        moves = {
            (p.server_id, p.name): _schema_moves(
                pins,
                p.server_id,
                p.name,
                None if p.definition is None else parse_json(p.definition),
            )
            for p in found
            if p.status in ("changed", "cosmetic")
        }
    rows = [
        {
            "server_id": p.server_id,
            "name": p.name,
            "status": p.status,
            "fingerprint": p.fingerprint,
            "pinned": p.pinned,
            "changes": [change.to_json() for change in p.changes],
            "first_seen": p.first_seen,
            "last_seen": p.last_seen,
            "seen": p.seen,
            "protocol_version": p.protocol_version,
            "schemas": moves.get((p.server_id, p.name), {}),
            "revoked": _revocation_json(p),
            **_reviewed(p.definition),
            "approve": _approve_command(store, p.server_id, p.name, p.fingerprint),
        }
        for p in found
    ]
    if as_json:
        emit(_json_report({"pending": rows}))
    else:
        if not found:
            emit("nothing pending")
        for p, row in zip(found, rows, strict=True):
            status = "revoked" if p.revoked_at is not None else p.status
            emit(
                f"{status:<9} {_short_fingerprint(p.fingerprint):<16}  server"
                f" {clipped(p.server_id)}  tool {clipped(p.name)}  seen {p.seen}x"
                f" {_utc(p.first_seen)} .. {_utc(p.last_seen)}"
            )
            emit(f"          fingerprint {p.fingerprint}")
            if p.revoked_at is not None:
                emit("          " + _revocation_line(p))
            if p.status == "new":
                for line in _new_tool_lines(row, p.definition is not None):
                    emit("          " + line)
            for line in _schema_lines(moves.get((p.server_id, p.name), {})):
                emit(line)
            for change in p.changes:
                emit("          " + _change_line(change))
            emit(f"          approve: {visible(row['approve'])}")
    if exit_code and found:
        raise typer.Exit(EXIT_FINDINGS)


def _revocation_json(item: Pending) -> dict[str, Any] | None:
    """The revocation a pending tool is under, for --json: `at` (seconds since the Unix
    epoch), `by` (who revoked it) and `fingerprint` (the pin revoked); `None` when none."""
    if item.revoked_at is None:
        return None
    return {"at": item.revoked_at, "by": item.revoked_by, "fingerprint": item.revoked_fingerprint}


def _revocation_line(item: Pending) -> str:
    """Who revoked a pending tool's pin and when, and whether it lists the revoked definition
    again (the store keeps no reason for a revocation)."""
    if item.revoked_at is None:
        return ""
    line = f"pin revoked {_utc(item.revoked_at)} by {clipped(item.revoked_by or '-')}"
    if item.revoked_fingerprint == item.fingerprint:
        return line + " (the server lists the revoked definition again)"
    if item.revoked_fingerprint is not None:
        return line + f" (it was {_short_fingerprint(item.revoked_fingerprint)})"
    return line


#: The members of a pending definition a reviewer reads (stored name -> --json key).
_REVIEWED: Final = {
    "title": "title",
    "description": "description",
    "inputSchema": "input_schema",
    "outputSchema": "output_schema",
    "annotations": "annotations",
}
#: Characters of a description shown before the rest is counted (a reviewer reads it whole;
#: the bound only keeps a hostile megabyte off the terminal).
_DESCRIPTION_CHARS: Final = 4000


def _reviewed(definition: str | None) -> dict[str, Any]:
    """A pending definition's `title`, `description`, `inputSchema`, `outputSchema` and
    `annotations` (as stored; `None` when absent), for a reviewer."""
    raw = None if definition is None else parse_json(definition)
    if not isinstance(raw, dict):
        return {key: None for key in _REVIEWED.values()}
    return {key: raw.get(member) for member, key in _REVIEWED.items()}


def _new_tool_lines(row: dict[str, Any], stored: bool) -> list[str]:
    """What a person reads before approving a new tool: its title, its whole description
    (escaped), its inputSchema and outputSchema in brief and its annotations (all whole in
    --json), or that the store keeps only its fingerprint."""
    if not stored:
        return ["(checked by fingerprint alone: the store holds no definition to show)"]
    lines = []
    if row["title"] is not None:
        lines.append(f"title: {clipped(row['title'])}")
    description = row["description"]
    said = clipped(description, _DESCRIPTION_CHARS) if isinstance(description, str) else "(none)"
    lines += [f"description: {said}", f"inputSchema: {_schema_summary(row['input_schema'])}"]
    if row["output_schema"] is not None:
        lines.append(f"outputSchema: {_schema_summary(row['output_schema'])}")
    if row["annotations"] is not None:
        lines.append(f"annotations: {_short(row['annotations'], 200)}")
    return lines


#: Properties an inputSchema summary names before "+N more".
_SUMMARY_PROPERTIES = 12


def _schema_summary(schema: Any) -> str:
    """An inputSchema in one line: each property with its type (`*`: required), and what
    else constrains it (`additionalProperties`, composition keywords), escaped and clipped."""
    if not isinstance(schema, dict):
        return f"(not an object: {_short(schema)})"
    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    parts: list[str] = []
    if isinstance(properties, dict):
        for name, sub in list(properties.items())[:_SUMMARY_PROPERTIES]:
            mark = "*" if name in needed else ""
            parts.append(f"{visible(name)}{mark}: {_property_kind(sub)}")
        if len(properties) > _SUMMARY_PROPERTIES:
            parts.append(f"+{len(properties) - _SUMMARY_PROPERTIES} more")
    else:
        parts.append("no properties")
    if "additionalProperties" in schema:
        parts.append(f"additionalProperties: {_short(schema['additionalProperties'], 40)}")
    extra = [k for k in ("allOf", "anyOf", "oneOf", "not", "$ref", "if") if k in schema]
    if extra:
        parts.append("also " + ", ".join(extra))
    return clipped("; ".join(parts)) + ("  (* required)" if needed else "")


def _property_kind(schema: Any) -> str:
    """A property's type in brief: `string`, `string|null`, `one of ["c", "f"]`, `any`."""
    if not isinstance(schema, dict):
        return _short(schema, 40)
    if "enum" in schema:
        return "one of " + _short(schema["enum"], 40)
    kind = schema.get("type")
    if isinstance(kind, str):
        return visible(kind)
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return visible("|".join(kind))
    if kind is None:
        for keyword in ("anyOf", "oneOf", "allOf"):
            arms = schema.get(keyword)
            if isinstance(arms, list):
                return f"{keyword}[{', '.join(_property_kind(arm) for arm in arms[:6])}]"
        return "any"
    return _short(kind, 40)


def _approve_command(store: str, server_id: str, name: str, reviewed: str) -> str:
    """The command that approves one pending tool as shown (`--fingerprint`: not another
    definition the server lists later), WHO standing for the approver (the store's password
    is never shown)."""
    import shlex

    return shlex.join(
        [
            *(program_name(), "pins", "approve", "--store", redacted_location(store)),
            *("--server-id", server_id, "--tool", name, "--fingerprint", reviewed),
            *("--approver", APPROVER_PLACEHOLDER),
        ]
    )


@pins_app.command(
    "revoke", cls=PlainHelpCommand, short_help="Remove pins: the tools check as new again."
)
def pins_revoke_command(
    store: StoreOption,
    server_id: ServerIdOption,
    tool: Annotated[
        list[str],
        typer.Option("--tool", metavar="NAME", help="The tool to revoke (repeatable)."),
    ],
    approver: ApproverOption,
    yes: YesOption = False,
) -> None:
    """Remove pins (the tools check as new again; a guard never pins them automatically until
    a person approves again); exit code 1 when a tool had no pin.

    On a terminal the pins are shown and a confirmation is asked (--yes skips it). The store
    must exist: a mistyped path is a usage error, not "no pin".
    """
    with _store(store) as pins:
        if not yes and _interactive():
            for name in tool:
                pin = pins.pin(server_id, name)
                if pin is not None:
                    emit(
                        f"pinned    {visible(name)}  {_short_fingerprint(pin.fingerprint)}"
                        f"  by {clipped(pin.approver or '-')}"
                    )
        _confirm(f"Revoke {len(tool)} pin(s) as {visible(approver)}?", yes)
        missing = [n for n in tool if not pins.revoke(server_id, n, approver=approver)]
    for name in tool:
        state = "no pin" if name in missing else "revoked"
        emit(f"{state:<8} {visible(name)}")
    if missing:
        raise typer.Exit(EXIT_FINDINGS)


@pins_app.command(
    "prune", cls=PlainHelpCommand, short_help="Delete old check entries of the audit log."
)
def pins_prune_command(
    store: StoreOption,
    older_than: Annotated[
        float,
        typer.Option(
            "--checks-older-than",
            metavar="DAYS",
            min=0,
            help="Delete check entries older than this many days (0: all of them).",
        ),
    ],
) -> None:
    """The retention of checks: delete the audit log's check entries older than DAYS.
    Approvals and revocations are kept whatever their age (the database refuses to delete
    them); what awaits approval stays in the pending queue."""
    with _store(store) as pins:
        count = pins.prune_checks(older_than * 86400.0)
    emit(f"deleted {count} check entr{'y' if count == 1 else 'ies'}")


def _checked(
    page: str,
    store: str,
    server_id: str,
    tool: list[str] | None,
    transport: str | None,
    protocol_version: str | None,
    audit: bool,
) -> tuple[Intake, list[dict[str, Any]]]:
    result, tools, version = _page_tools(page, server_id, transport, protocol_version, tool)
    schemas: dict[str, dict[str, str]] = {}
    with _store(store) as pins:
        try:
            checks = pins.check_page(server_id, tools, protocol_version=version, audit=audit)
        except Error as exc:
            _fail(f"{page}: {exc}")
        for check, listed in zip(checks, tools, strict=True):
            if check.status in ("changed", "cosmetic"):
                schemas[check.name] = _schema_moves(pins, server_id, check.name, listed.raw)
    return result, [
        {
            "name": c.name,
            "status": c.status,
            "fingerprint": c.fingerprint,
            "pinned": c.pinned,
            "changes": [change.to_json() for change in c.changes],
            "schemas": schemas.get(c.name, {}),
        }
        for c in checks
    ]


def _schema_moves(pins: PinStore, server_id: str, name: str, listed: Any) -> dict[str, str]:
    """Which way each changed schema of a tool moved from its approved definition (narrows,
    widens, both, unknown); `{}` without an approved definition to compare with."""
    pin = pins.pin(server_id, name)
    if pin is None or pin.definition is None or not isinstance(listed, dict):
        return {}
    try:
        approved = parse_json(pin.definition)
    except Error:
        return {}
    if not isinstance(approved, dict):
        return {}
    return dict(schema_changes(approved, listed))


def _schema_lines(moves: dict[str, str]) -> list[str]:
    return [f"          {member} {move}" for member, move in moves.items()]


def _rejections(result: Intake) -> list[dict[str, Any]]:
    return [
        {"index": r.index, "name": r.name, "reason": r.reason, "json_path": r.json_path}
        for r in result.rejected
    ]


AuditOption = Annotated[
    bool, typer.Option("--audit/--no-audit", help="Log outcomes other than approved.")
]


@pins_app.command(
    "check", cls=PlainHelpCommand, short_help="Check a page against the pins of a server."
)
def pins_check_command(
    page: PageArgument,
    store: StoreOption,
    server_id: ServerIdOption,
    tool: ToolsOption = None,
    transport: TransportOption = None,
    protocol_version: VersionOption = None,
    audit: AuditOption = True,
    as_json: JsonOption = False,
) -> None:
    """Check a page against the pins: approved, new, changed (material) or cosmetic.

    Exit code 1 when a tool is not approved, or intake rejected one.
    """
    result, checks = _checked(page, store, server_id, tool, transport, protocol_version, audit)
    rejected = _rejections(result) if not tool else []
    if as_json:
        report = {"server_id": server_id, "tools": checks, "rejected": rejected}
        emit(_json_report(report))
    else:
        for check in checks:
            emit(f"{check['status']:<9} {visible(check['name'])}")
        for rejection in rejected:
            emit(f"rejected  {visible(rejection['name'])}: {rejection['reason']}")
    if rejected or any(c["status"] != "approved" for c in checks):
        raise typer.Exit(EXIT_FINDINGS)


@pins_app.command(
    "changes", cls=PlainHelpCommand, short_help="Show what changed since each tool was approved."
)
def pins_changes_command(
    page: PageArgument,
    store: StoreOption,
    server_id: ServerIdOption,
    tool: ToolsOption = None,
    transport: TransportOption = None,
    protocol_version: VersionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show what changed, field by field, since each tool was approved (RFC 6901 pointers).

    Exit code 1 when a tool changed or is new.
    """
    _, checks = _checked(page, store, server_id, tool, transport, protocol_version, False)
    differing = [c for c in checks if c["status"] in ("changed", "cosmetic")]
    new = [c["name"] for c in checks if c["status"] == "new"]
    if as_json:
        report = {
            "server_id": server_id,
            "changes": {c["name"]: c["changes"] for c in differing},
            "status": {c["name"]: c["status"] for c in differing},
            "schemas": {c["name"]: c["schemas"] for c in differing if c["schemas"]},
            "new": new,
        }
        emit(_json_report(report))
    else:
        if not differing and not new:
            emit("no changes")
        for check in differing:
            emit(f"{check['status']:<9} {visible(check['name'])}")
            for line in _schema_lines(check["schemas"]):
                emit(line)
            for change in check["changes"]:
                emit("          " + _change_line(_field_change(change)))
        for name in new:
            emit(f"new       {visible(name)}")
    if differing or new:
        raise typer.Exit(EXIT_FINDINGS)


@pins_app.command(
    "audit", cls=PlainHelpCommand, short_help="Show the audit log: approvals, revocations, checks."
)
def pins_audit_command(
    store: StoreOption,
    server_id: OnlyServerOption = None,
    tool: ToolsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the audit log, oldest first: approvals, revocations, and checks not approved.

    One line per entry: when (UTC); the action (approve, revoke, or check with its outcome:
    new, changed, cosmetic); the fingerprint approved, revoked or listed (first 16 hex digits);
    server; tool; the pin an approval replaced or a check compared with; who approved or
    revoked. --json gives every field: id, at (seconds since the Unix epoch), server_id, name,
    action, outcome, fingerprint, previous_fingerprint, approver, protocol_version and
    definition (the approved definition as RFC 8785 canonical JSON text).
    """
    with _store(store) as pins:
        entries = pins.audit_log(server_id)
    if tool:
        wanted = set(tool)
        entries = tuple(e for e in entries if e.name in wanted)
    rows: list[dict[str, Any]] = [
        {
            "id": e.id,
            "at": e.at,
            "server_id": e.server_id,
            "name": e.name,
            "action": e.action,
            "outcome": e.outcome,
            "fingerprint": e.fingerprint,
            "previous_fingerprint": e.previous_fingerprint,
            "approver": e.approver,
            "protocol_version": e.protocol_version,
            "definition": e.definition,
        }
        for e in entries
    ]
    if as_json:
        emit(json_text(rows))
        return
    if not rows:
        emit("no audit entries")
    for row in rows:
        emit(_audit_line(row))


def _audit_line(row: dict[str, Any]) -> str:
    """One entry for a person: fixed-width fields first, the server's strings last (escaped)."""
    when = _utc(row["at"])
    action = row["action"] if row["outcome"] is None else f"{row['action']} {row['outcome']}"
    line = (
        f"{when}  {action:<14}  {_short_fingerprint(row['fingerprint']):<16}"
        f"  server {clipped(row['server_id'])}  tool {clipped(row['name'])}"
    )
    if row["previous_fingerprint"] is not None:
        label = "pinned" if row["action"] == "check" else "replaced"
        line += f"  {label} {_short_fingerprint(row['previous_fingerprint'])}"
    if row["approver"] is not None:
        line += f"  by {clipped(row['approver'])}"
    return line


def _utc(seconds: float) -> str:
    """Seconds since the Unix epoch as UTC date and time; a value no calendar holds as is."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return repr(seconds)


def _short_fingerprint(value: str | None) -> str:
    return "-" if value is None else value.removeprefix("jcs-sha256:")[:FINGERPRINT_WIDTH]


def _field_change(item: dict[str, Any]) -> FieldChange:
    return FieldChange(item["path"], item["op"], item.get("old"), item.get("new"), item["material"])


register_proxy_commands(app)


def main() -> None:
    """Console-script entry point (`conduit-mcp`)."""
    app()
