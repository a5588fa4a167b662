"""The `conduit-mcp` command: inspect tools/list pages, fingerprint tools, detect drift, pins.

Exit codes (the same for every command):
    0  done, nothing to report (inspect: no tool rejected; diff: no drift; pins check: every
       tool approved; pins changes: no change; pins revoke: every pin removed)
    1  done, with findings (inspect: a tool was rejected; diff: tools added, removed or changed;
       pins check/changes: a tool new, changed, cosmetic or rejected; pins revoke: no such pin)
    2  the input could not be read: missing file, not JSON, not a tools/list result, bad option,
       a pin store that cannot be opened

Bad input gives one line on stderr (`conduit-mcp: <file>: <reason> at <path>: <message>`) and
no traceback. `--json` writes one JSON document to stdout for programs; without it, rich
tables are written for people.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from conduit_mcp_wire import VERSIONS
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .client import (
    TRANSPORTS,
    Error,
    FieldChange,
    Intake,
    PinStore,
    Tool,
    conformance_violations,
    diff_tools,
    fingerprint,
    header_map,
    intake,
    parse_json,
)
from .client._errors import json_type_name
from .client._intake import HEADERS_SINCE, unwrap_response
from .client._pins import _redacted
from .client._unicode import is_invisible
from .client._versions import LATEST, at_least

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2

app = typer.Typer(
    name="conduit-mcp",
    help="Inspect MCP tools/list pages: fingerprints, warnings, rejections, drift.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

JsonOption = Annotated[bool, typer.Option("--json", help="Write JSON for programs.")]
TransportOption = Annotated[
    str, typer.Option(help=f"Transport the page came over: {', '.join(sorted(TRANSPORTS))}.")
]
VersionOption = Annotated[str, typer.Option(help="Negotiated protocol version.")]


class BadInput(Exception):
    """An input file that cannot be used; becomes one line on stderr and exit code 2."""


def visible(text: object) -> str:
    """`text` with invisible and control characters written as `\\uXXXX` escapes.

    A zero-width or bidi character in a tool name is the tampering signal this tool exists to
    show; printed raw, a terminal would hide it.
    """
    out = []
    for char in str(text):
        if char.isprintable() and not is_invisible(char):
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out)


def _cell(text: object) -> str:
    """`visible(text)` with rich markup escaped, for a table cell."""
    return escape(visible(text))


def _fail(message: str) -> NoReturn:
    typer.echo(f"conduit-mcp: {visible(message)}", err=True)
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
        raise BadInput(f"{source}: {exc}") from None


def _page(source: str) -> Any:
    try:
        value = unwrap_response(_read(source))
    except Error as exc:
        raise BadInput(f"{source}: {exc}") from None
    return value


def _intake(source: str, server_id: str | None, transport: str, version: str) -> Intake:
    page = _page(source)
    if isinstance(page, dict) and "tools" not in page and "inputSchema" in page:
        page = {"tools": [page]}  # a single tool definition
    try:
        return intake(
            server_id or Path(source).stem or "stdin",
            page,
            transport=transport,  # type: ignore[arg-type]
            protocol_version=version,
        )
    except Error as exc:
        raise BadInput(f"{source}: {exc}") from None


def _tool_report(tool: Tool, index: int, result: Intake, headers_apply: bool) -> dict[str, Any]:
    conformance = {
        version: [
            {"path": list(e.path), "json_path": e.json_path, "message": e.message}
            for e in conformance_violations(tool.raw, kind="tool", protocol_version=version)
        ]
        for version in VERSIONS
    }
    headers: dict[str, list[str]] = {}
    if headers_apply:  # x-mcp-header exists on Streamable HTTP from 2026-07-28 only
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
    headers_apply = transport == "streamable-http" and at_least(protocol_version, HEADERS_SINCE)
    return {
        "file": source,
        "server_id": result.server_id,
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
            else {"not_a_string": json_type_name(result.next_cursor)}
        ),
    }


def _accepted_indexes(result: Intake) -> list[int]:
    rejected = {r.index for r in result.rejected}
    total = len(result.tools) + len(result.rejected)
    return [i for i in range(total) if i not in rejected]


def _print_inspect(console: Console, report: dict[str, Any]) -> None:
    # Table cells are rich markup: a server's `[/x]` in a name would raise MarkupError (a
    # traceback), and `[red]` would restyle the row. Escape every string the input supplies.
    title = f"{_cell(report['file'])} (server_id {_cell(report['server_id'])})"
    table = Table(title=title, title_justify="left")
    for column in ("#", "tool", "fingerprint (sha256, first 16)", "warnings", "headers"):
        table.add_column(column, overflow="fold")
    table.add_column("conformance (--json for reasons)", overflow="fold")
    for tool in report["tools"]:
        failing = [v for v, found in tool["conformance"].items() if found]
        label = _cell(tool["display_name"])
        if tool["display_name"] != tool["name"]:
            label += f"\n[dim]name: {_cell(tool['name'])}[/dim]"
        table.add_row(
            str(tool["index"]),
            label,
            tool["fingerprint"].removeprefix("jcs-sha256:")[:16],
            "\n".join(f"{w['code']} {_cell(w['json_path'])}" for w in tool["warnings"]) or "-",
            "\n".join(f"{_cell(h)} <- {_cell('.'.join(p))}" for h, p in tool["header_map"].items())
            or "-",
            "all versions" if not failing else "fails " + ", ".join(failing),
        )
    console.print(table)
    for rejection in report["rejected"]:
        console.print(
            f"rejected #{rejection['index']} {visible(rejection['name'])}: "
            f"{rejection['reason']} at {visible(rejection['json_path'])}: "
            f"{visible(rejection['message'])}",
            markup=False,
            highlight=False,
        )
        for warning in rejection["warnings"]:
            console.print(
                f"  warning {warning['code']} at {visible(warning['json_path'])}",
                markup=False,
                highlight=False,
            )


@app.command("inspect")
def inspect_command(
    files: Annotated[
        list[str], typer.Argument(help="tools/list results or JSON-RPC responses; - is stdin.")
    ],
    transport: TransportOption = "streamable-http",
    protocol_version: VersionOption = LATEST,
    server_id: Annotated[
        str | None, typer.Option(help="Operator-assigned server id (default: the file name).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Show each tool's display name, fingerprint, warnings, header map and conformance."""
    if transport not in TRANSPORTS:
        _fail(f"--transport must be one of {', '.join(sorted(TRANSPORTS))}")
    try:
        reports = [
            _inspect_report(
                f, _intake(f, server_id, transport, protocol_version), transport, protocol_version
            )
            for f in files
        ]
    except BadInput as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(json.dumps(reports, ensure_ascii=False, indent=2))
    else:
        console = Console()
        for report in reports:
            _print_inspect(console, report)
    if any(report["rejected"] for report in reports):
        raise typer.Exit(EXIT_FINDINGS)


@app.command("fingerprint")
def fingerprint_command(
    file: Annotated[
        str, typer.Argument(help="A tool definition, or a tools/list result; - is stdin.")
    ],
    as_json: JsonOption = False,
) -> None:
    """Print the fingerprint of a tool, or of every tool of a tools/list result."""
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
        typer.echo(
            json.dumps([{"name": n, "fingerprint": f} for n, f in pairs], ensure_ascii=False)
        )
    else:
        for name, digest in pairs:
            typer.echo(f"{digest}  {visible(name) if isinstance(name, str) else '-'}")


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="The baseline tools/list result.")],
    new: Annotated[str, typer.Argument(help="The current tools/list result.")],
    transport: TransportOption = "streamable-http",
    protocol_version: VersionOption = LATEST,
    as_json: JsonOption = False,
) -> None:
    """Show accepted tools added, removed or changed between two pages, field by field.

    Both pages go through the same intake as `inspect`: a tool that intake rejects is not part
    of either side. Each changed tool lists its changes as RFC 6901 JSON Pointers, marked
    material or cosmetic (title, icons, annotations.title); `--json` adds `changes` (name ->
    [{path, op, old, new, material}]) and `material` (the changed names with a material change).
    """
    if transport not in TRANSPORTS:
        _fail(f"--transport must be one of {', '.join(sorted(TRANSPORTS))}")
    try:
        baseline = _intake(old, "diff", transport, protocol_version)
        current = _intake(new, "diff", transport, protocol_version)
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
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        console = Console()
        if not drift.has_drift:
            console.print("no drift")
        for label in ("added", "removed", "changed"):
            for name in report[label]:
                _line(console, f"{label:<8} {visible(name)}")
                for change in drift.changes.get(name, ()):
                    _line(console, "         " + _change_line(change))
    if drift.has_drift:
        raise typer.Exit(EXIT_FINDINGS)


def _line(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


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
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = f"<{json_type_name(value)}>"
    text = visible(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- pins -----------------------------------------------------------------------------------

pins_app = typer.Typer(
    name="pins",
    help="Approved tools in a pin store: a sqlite file, or a postgresql:// URL for a team.",
    no_args_is_help=True,
)
app.add_typer(pins_app)

StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        help="Pin store: a sqlite file path, or a postgresql:// URL (e.g. "
        "postgresql://pins@db.internal/gateway).",
    ),
]
ServerIdOption = Annotated[
    str, typer.Option("--server-id", help="Operator-assigned server id (never serverInfo.name).")
]
ToolsOption = Annotated[
    list[str] | None, typer.Option("--tool", help="Only this tool (repeatable; exact name).")
]
PageArgument = Annotated[str, typer.Argument(help="A tools/list result or response; - is stdin.")]


def _store(location: str) -> PinStore:
    """Open a store, or exit 2 with one line (the URL's password is never echoed)."""
    try:
        return PinStore(location)
    except Exception as exc:  # sqlite3.Error, psycopg.Error, ImportError, ValueError
        where = _redacted(location)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _fail(f"{where}: cannot open the pin store: {reason.replace(location, where)}")


def _page_tools(
    source: str, server_id: str, transport: str, version: str, only: list[str] | None
) -> tuple[Intake, list[Tool]]:
    if transport not in TRANSPORTS:
        _fail(f"--transport must be one of {', '.join(sorted(TRANSPORTS))}")
    try:
        result = _intake(source, server_id, transport, version)
    except BadInput as exc:
        _fail(str(exc))
    tools = list(result.tools)
    if only:
        missing = [name for name in only if result.tool(name) is None]
        if missing:
            _fail(f"{source}: no accepted tool named {', '.join(map(repr, missing))}")
        tools = [t for t in tools if t.name in only]
    return result, tools


@pins_app.command("list")
def pins_list_command(
    store: StoreOption,
    server_id: Annotated[
        str | None, typer.Option("--server-id", help="Only this server (default: all).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the pins: server, tool, fingerprint, approver, time, protocol version."""
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
        typer.echo(json.dumps(rows, ensure_ascii=False))
        return
    table = Table(title=f"pins in {_cell(_redacted(store))}", title_justify="left")
    for column in ("server", "tool", "fingerprint (first 16)", "approver", "approved (UTC)"):
        table.add_column(column, overflow="fold")
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(row["approved_at"]))
        table.add_row(
            _cell(row["server_id"]),
            _cell(row["name"]),
            row["fingerprint"].removeprefix("jcs-sha256:")[:16],
            _cell(row["approver"] or "-"),
            when,
        )
    Console().print(table)


@pins_app.command("approve")
def pins_approve_command(
    page: PageArgument,
    store: StoreOption,
    server_id: ServerIdOption,
    tool: ToolsOption = None,
    approver: Annotated[
        str | None, typer.Option(help="Who approves (recorded in the audit log).")
    ] = None,
    transport: TransportOption = "streamable-http",
    protocol_version: VersionOption = LATEST,
    as_json: JsonOption = False,
) -> None:
    """Approve the accepted tools of a page (or only --tool NAME ...), keeping each definition."""
    _, tools = _page_tools(page, server_id, transport, protocol_version, tool)
    with _store(store) as pins:
        try:
            pins.approve_all(server_id, tools, approver=approver, protocol_version=protocol_version)
        except Error as exc:
            _fail(f"{page}: {exc}")
    approved = [{"name": t.name, "fingerprint": t.fingerprint} for t in tools]
    if as_json:
        typer.echo(json.dumps(approved, ensure_ascii=False))
    else:
        for item in approved:
            typer.echo(f"approved {item['fingerprint']}  {visible(item['name'])}")


@pins_app.command("revoke")
def pins_revoke_command(
    store: StoreOption,
    server_id: ServerIdOption,
    tool: Annotated[list[str], typer.Option("--tool", help="The tool to revoke (repeatable).")],
    approver: Annotated[
        str | None, typer.Option(help="Who revokes (recorded in the audit log).")
    ] = None,
) -> None:
    """Remove pins (the tools check as new again); exit 1 when a tool had no pin."""
    with _store(store) as pins:
        missing = [n for n in tool if not pins.revoke(server_id, n, approver=approver)]
    for name in tool:
        state = "no pin" if name in missing else "revoked"
        _line(Console(), f"{state:<8} {visible(name)}")
    if missing:
        raise typer.Exit(EXIT_FINDINGS)


def _checked(
    page: str,
    store: str,
    server_id: str,
    tool: list[str] | None,
    transport: str,
    protocol_version: str,
    audit: bool,
) -> tuple[Intake, list[dict[str, Any]]]:
    result, tools = _page_tools(page, server_id, transport, protocol_version, tool)
    with _store(store) as pins:
        try:
            checks = pins.check_page(
                server_id, tools, protocol_version=protocol_version, audit=audit
            )
        except Error as exc:
            _fail(f"{page}: {exc}")
    return result, [
        {
            "name": c.name,
            "status": c.status,
            "fingerprint": c.fingerprint,
            "pinned": c.pinned,
            "changes": [change.to_json() for change in c.changes],
        }
        for c in checks
    ]


def _rejections(result: Intake) -> list[dict[str, Any]]:
    return [
        {"index": r.index, "name": r.name, "reason": r.reason, "json_path": r.json_path}
        for r in result.rejected
    ]


AuditOption = Annotated[
    bool, typer.Option("--audit/--no-audit", help="Log outcomes other than approved.")
]


@pins_app.command("check")
def pins_check_command(
    page: PageArgument,
    store: StoreOption,
    server_id: ServerIdOption,
    tool: ToolsOption = None,
    transport: TransportOption = "streamable-http",
    protocol_version: VersionOption = LATEST,
    audit: AuditOption = True,
    as_json: JsonOption = False,
) -> None:
    """Check a page against the pins: approved, new, changed (material) or cosmetic."""
    result, checks = _checked(page, store, server_id, tool, transport, protocol_version, audit)
    rejected = _rejections(result) if not tool else []
    if as_json:
        report = {"server_id": server_id, "tools": checks, "rejected": rejected}
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        console = Console()
        for check in checks:
            _line(console, f"{check['status']:<9} {visible(check['name'])}")
        for rejection in rejected:
            _line(console, f"rejected  {visible(rejection['name'])}: {rejection['reason']}")
    if rejected or any(c["status"] != "approved" for c in checks):
        raise typer.Exit(EXIT_FINDINGS)


@pins_app.command("changes")
def pins_changes_command(
    page: PageArgument,
    store: StoreOption,
    server_id: ServerIdOption,
    tool: ToolsOption = None,
    transport: TransportOption = "streamable-http",
    protocol_version: VersionOption = LATEST,
    as_json: JsonOption = False,
) -> None:
    """Show what changed, field by field, since each tool was approved (RFC 6901 pointers)."""
    _, checks = _checked(page, store, server_id, tool, transport, protocol_version, False)
    differing = [c for c in checks if c["status"] in ("changed", "cosmetic")]
    new = [c["name"] for c in checks if c["status"] == "new"]
    if as_json:
        report = {
            "server_id": server_id,
            "changes": {c["name"]: c["changes"] for c in differing},
            "status": {c["name"]: c["status"] for c in differing},
            "new": new,
        }
        typer.echo(json.dumps(report, ensure_ascii=False))
    else:
        console = Console()
        if not differing and not new:
            console.print("no changes")
        for check in differing:
            _line(console, f"{check['status']:<9} {visible(check['name'])}")
            for change in check["changes"]:
                _line(console, "          " + _change_line(_field_change(change)))
        for name in new:
            _line(console, f"new       {visible(name)}")
    if differing or new:
        raise typer.Exit(EXIT_FINDINGS)


def _field_change(item: dict[str, Any]) -> FieldChange:
    return FieldChange(item["path"], item["op"], item.get("old"), item.get("new"), item["material"])


def main() -> None:
    """Console-script entry point (`conduit-mcp`)."""
    app()
