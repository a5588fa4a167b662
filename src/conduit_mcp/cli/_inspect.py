"""`conduit-mcp inspect`, `diff` and `fingerprint`: what a tools/list page holds, how two
pages differ, and each tool's identity.

Private to the CLI; loaded when one of its commands is named (`cli._app`).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from conduit_mcp_wire import VERSIONS
from rich.table import Table
from rich.text import Text

from ..client import Error, Intake, Tool, conformance_violations, fingerprint
from ..client.headers import header_map, param_headers_apply
from ..pins import diff_tools
from ._help import PlainHelpCommand, typer_app
from ._shared import (
    EXIT_FINDINGS,
    FINGERPRINT_WIDTH,
    BadInput,
    JsonOption,
    TransportOption,
    VersionOption,
    cell,
    change_line,
    fail,
    fingerprint_column,
    intake_page,
    json_report,
    load_page,
    name_column,
)
from ._text import JSON_TYPES, clipped, emit, json_text, show, visible

app = typer_app()


def _check_fail_on(value: str) -> str:
    if value not in FAIL_ON:
        raise typer.BadParameter(f"'{visible(value)}' is not one of {', '.join(FAIL_ON)}")
    return value


#: `inspect --fail-on` levels: what makes the exit code 1.
FAIL_ON = ("rejection", "warning")


def _page(source: str) -> Any:
    """One input as a `tools/list` result (or a single tool): a JSON-RPC response unwrapped."""
    return load_page(source)[0]


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


def _print_inspect(report: dict[str, Any]) -> None:
    title = Text(
        f"{clipped(report['file'])} (server_id {clipped(report['server_id'])}, "
        f"{report['protocol_version']} over {report['transport']})"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("#", overflow="fold")
    name_column(table, "tool")
    fingerprint_column(table, "fingerprint")
    for column in ("warnings", "headers", "conformance"):
        table.add_column(column, overflow="fold")
    for tool in report["tools"]:
        failing = [v for v, found in tool["conformance"].items() if found]
        label = cell(tool["display_name"])
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
            result, used_transport, used_version = intake_page(
                f, server_id, transport, protocol_version
            )
            reports.append(_inspect_report(f, result, used_transport, used_version))
    except BadInput as exc:
        fail(str(exc))
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
        fail(f"{file}: {exc}")
    except BadInput as exc:
        fail(str(exc))
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
        baseline, _, _ = intake_page(old, "diff", transport, protocol_version)
        current, _, _ = intake_page(new, "diff", transport, protocol_version)
        drift = diff_tools(baseline.tools, current.tools)
    except BadInput as exc:
        fail(str(exc))
    except Error as exc:
        fail(str(exc))
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
        emit(json_report(report))
    else:
        if not drift.has_drift:
            emit("no drift")
        for label in ("added", "removed", "changed"):
            for name in report[label]:
                emit(f"{label:<8} {visible(name)}")
                for change in drift.changes.get(name, ()):
                    emit("         " + change_line(change))
    if drift.has_drift:
        raise typer.Exit(EXIT_FINDINGS)
