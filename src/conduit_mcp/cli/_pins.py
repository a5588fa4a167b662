"""`conduit-mcp pins`: approve, check, list, audit, revoke and prune the pins of a store, and
review what awaits approval.

Private to the CLI; loaded when the group is named (`cli._app`).
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Annotated, Any, Final

import typer
from rich.table import Table
from rich.text import Text

from .._program import APPROVER_PLACEHOLDER, program_name
from ..client import Error, Intake, Tool, fingerprint, parse_json
from ..pins import FieldChange, Pending, PinStore, redacted_location, schema_changes
from ._audit_stream import FollowOption, FormatOption, SinceOption
from ._calls import pins_calls_command
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
    name_column,
    short,
)
from ._store import open_store
from ._text import clipped, emit, json_text, show, visible, warn

app = typer_app(
    name="pins",
    help="Approved tools in a pin store: a sqlite file, or a postgresql:// URL for a team.",
    no_args_is_help=True,
)


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


def _store(location: str, *, create: bool = False) -> contextlib.AbstractContextManager[PinStore]:
    """The store for a `with` block (`_store.open_store`). Only `pins approve` passes
    `create=True` here (a proxy run with --pins, `policy set` and `console add-user` create one
    too); the others (list, check, changes, audit, and revoke, which has nothing to remove
    from a new store) open an existing store only."""
    return open_store(location, create=create)


def _page_tools(
    source: str,
    server_id: str,
    transport: str | None,
    version: str | None,
    only: list[str] | None,
) -> tuple[Intake, list[Tool], str]:
    """The accepted tools of a page (or only those named), and the protocol version used."""
    try:
        result, _, version = intake_page(source, server_id, transport, version)
    except BadInput as exc:
        fail(str(exc))
    tools = list(result.tools)
    if only:
        missing = [name for name in only if result.tool(name) is None]
        if missing:
            fail(f"{source}: no accepted tool named {', '.join(map(repr, missing))}")
        tools = [t for t in tools if t.name in only]
    return result, tools, version


@app.command(
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
    name_column(table, "server")
    name_column(table, "tool")
    fingerprint_column(table, "fingerprint")
    table.add_column("approver", overflow="fold")
    table.add_column("approved (UTC)", no_wrap=True)
    for row in rows:
        when = _utc(row["approved_at"])
        table.add_row(
            cell(row["server_id"]),
            cell(row["name"]),
            row["fingerprint"].removeprefix("jcs-sha256:")[:FINGERPRINT_WIDTH],
            cell(row["approver"] or "-"),
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
        emit("          " + change_line(change))


@app.command(
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
            help="With one --tool: approve only if the definition is this one (the fingerprint "
            "`pins pending` or the proxy's refusal showed): the pending definition, or the "
            "tool's on PAGE; otherwise nothing is approved, exit 2. With --instructions: the "
            "same for the server's instructions.",
        ),
    ] = None,
    instructions: Annotated[
        bool,
        typer.Option(
            "--instructions",
            help="Approve the server's pending instructions (what a guard held or blocked, "
            "shown by `pins pending`) instead of tools.",
        ),
    ] = False,
) -> None:
    """Approve tools, keeping each definition: the accepted tools of PAGE (or only --tool
    NAME ...), or, without a page, the pending definitions (--tool NAME ... or --all-pending).
    --fingerprint makes the approval of one pending tool exactly the definition reviewed.

    On a terminal the changes are shown (field by field, RFC 6901 pointers) and a
    confirmation is asked (--yes skips it). With a page, a sqlite store that does not exist yet
    is created; from the pending queue, the store must exist.
    """
    if instructions:
        if page is not None or tool or all_pending:
            raise typer.BadParameter(
                "--instructions goes without PAGE, --tool and --all-pending",
                param_hint="--instructions",
            )
        done = _approve_instructions(store, server_id, approver, yes, reviewed)
        if as_json:
            emit(json_text([{"kind": "instructions", "name": "instructions", "fingerprint": done}]))
        else:
            emit(f"approved {done}  instructions")
        return
    if page is not None and all_pending:
        raise typer.BadParameter("give a PAGE or --all-pending, not both", param_hint="PAGE")
    if page is None and not tool and not all_pending:
        raise typer.BadParameter(
            "give a PAGE, or --tool NAME / --all-pending to approve pending tools",
            param_hint="PAGE",
        )
    if reviewed is not None and (all_pending or len(tool or []) != 1):
        raise typer.BadParameter(
            "--fingerprint goes with one --tool NAME", param_hint="--fingerprint"
        )
    if reviewed is not None and not reviewed.startswith("jcs-sha256:"):
        reviewed = "jcs-sha256:" + reviewed
    if page is None:
        approved = _approve_pending(store, server_id, tool, approver, yes, reviewed)
    else:
        _, tools, version = _page_tools(page, server_id, transport, protocol_version, tool)
        if reviewed is not None:
            listed = tools[0].fingerprint or fingerprint(tools[0].raw)
            if listed != reviewed:
                fail(
                    f"{page}: the definition of {tools[0].name!r} there is {listed}, not the "
                    f"one reviewed ({reviewed}): nothing approved; review it again"
                )
        with _store(store, create=True) as pins:
            try:
                checks = pins.check_page(server_id, tools, audit=False)
            except Error as exc:
                fail(f"{page}: {exc}")
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


def _approve_instructions(
    store: str, server_id: str, approver: str, yes: bool, reviewed: str | None
) -> str:
    """Approve the server's pending instructions, exactly the text shown (and, with
    `reviewed`, only if it is still the one reviewed); the fingerprint approved."""
    with _store(store) as pins:
        found = pins.pending_instructions(server_id)
        if not found:
            fail(
                f"nothing pending for the instructions of {server_id!r}: they are queued when a "
                "guard sees them (a client connects through the guard), then see pins pending"
            )
        waiting = found[0]
        if reviewed is not None and reviewed.removeprefix(
            "jcs-sha256:"
        ) != waiting.fingerprint.removeprefix("jcs-sha256:"):
            fail(
                f"the pending instructions of {server_id!r} are now {waiting.fingerprint}, not "
                f"the ones reviewed ({reviewed}): nothing approved; review them again "
                "(pins pending)"
            )
        if not yes and _interactive():
            for line in _instructions_lines(waiting.instructions, waiting.approved):
                emit("          " + line)
        _confirm(f"Approve the instructions of {visible(server_id)} as {visible(approver)}?", yes)
        done = pins.approve_instructions(
            server_id, approver=approver, fingerprint=waiting.fingerprint
        )
        if done is None:
            fail("the pending instructions changed while you reviewed them: nothing approved")
    return done


def _instructions_lines(text: str, approved: str | None) -> list[str]:
    """What a person reads before approving instructions: the text (escaped, the first
    `_DESCRIPTION_CHARS` characters), and the approved text it would replace."""
    lines = [f"instructions: {clipped(text, _DESCRIPTION_CHARS)}"]
    if approved is not None:
        lines.append(f"approved now: {clipped(approved, _DESCRIPTION_CHARS)}")
    return lines


def _approve_pending(
    store: str,
    server_id: str,
    names: list[str] | None,
    approver: str,
    yes: bool,
    reviewed: str | None = None,
) -> list[tuple[str, str]]:
    """Approve the pending definitions of `names` (or all of the server's); each is exactly
    the definition read and shown (`PinStore.approve_pending` by its fingerprint), whatever
    the queue holds by the time the person answers. `reviewed`: the fingerprint the one named
    tool must have (a server may list another definition between a review and its approval).
    A definition that changed since it was read, or left the queue (its server went back to
    the approved one), is not approved: said, and exit code 1 after the others."""
    with _store(store) as pins:
        pending = {p.name: p for p in pins.pending(server_id)}
        wanted = list(names) if names else sorted(pending)
        missing = [name for name in wanted if name not in pending]
        if missing:
            fail(
                f"nothing pending for {', '.join(map(repr, missing))}: a tool is queued when a "
                "guard lists it (a revoked one too): have a client list the tools again through "
                "the guard, then see pins pending"
            )
        if reviewed is not None:
            now = pending[wanted[0]].fingerprint
            if now != reviewed:
                fail(
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
        done: list[str] = []
        moved: list[str] = []
        for name in wanted:
            value = pending[name].fingerprint
            try:
                taken = pins.approve_pending(server_id, name, fingerprint=value, approver=approver)
            except ValueError as exc:
                fail(f"{name!r}: {exc}")
            (done if taken else moved).append(name)
    for name in moved:
        emit(
            f"not approved {visible(name)}: its pending definition changed or left the queue "
            "since it was read (see pins pending)"
        )
    if moved and reviewed is not None:
        fail(
            f"the pending definition of {wanted[0]!r} changed while it was approved: nothing "
            "approved"
        )
    if moved:
        for name in done:
            emit(f"approved {pending[name].fingerprint}  {visible(name)}")
        raise typer.Exit(EXIT_FINDINGS)
    return [(name, pending[name].fingerprint) for name in done]


@app.command("pending", cls=PlainHelpCommand, short_help="List the tools awaiting approval.")
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
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Show every changed field whole (hidden characters escaped), not cut to a "
            "line: the whole injected text of a rewritten description.",
        ),
    ] = False,
) -> None:
    """List what awaits a person's approval: tools held or blocked as new (or revoked: new
    again since a person revoked the pin, with who did and when), changed or cosmetic, and a
    server's instructions held or blocked as new or changed (entry `instructions`), with
    what a reviewer needs (a new tool's description and inputSchema, a changed one's field
    changes), the whole fingerprint, first and last sighting (UTC), how often they were seen,
    and the command that approves each. Exit code 0 once the store is read (with --exit-code:
    1 when any tool waits)."""
    with _store(store) as pins:
        found = pins.pending(server_id)
        said = pins.pending_instructions(server_id)
        if server_id is not None and not found and not said:
            _refuse_unknown_server(pins, store, server_id)
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
            "kind": "tool",
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
    told = [
        {
            "kind": "instructions",
            "server_id": i.server_id,
            "name": "instructions",
            "status": i.status,
            "fingerprint": i.fingerprint,
            "pinned": i.pinned,
            "instructions": i.instructions,
            "approved": i.approved,
            "first_seen": i.first_seen,
            "last_seen": i.last_seen,
            "seen": i.seen,
            "protocol_version": i.protocol_version,
            "approve": _approve_instructions_command(store, i.server_id, i.fingerprint),
        }
        for i in said
    ]
    if as_json:
        emit(json_report({"pending": rows + told}))
    else:
        if not found and not said:
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
                emit("          " + change_line(change, sys.maxsize if full else 60))
            emit(f"          approve: {visible(row['approve'])}")
        for i, row in zip(said, told, strict=True):
            emit(
                f"{i.status:<9} {_short_fingerprint(i.fingerprint):<16}  server"
                f" {clipped(i.server_id)}  instructions  seen {i.seen}x"
                f" {_utc(i.first_seen)} .. {_utc(i.last_seen)}"
            )
            emit(f"          fingerprint {i.fingerprint}")
            for line in _instructions_lines(i.instructions, i.approved):
                emit("          " + line)
            emit(f"          approve: {visible(row['approve'])}")
    if exit_code and (found or said):
        raise typer.Exit(EXIT_FINDINGS)


def _refuse_unknown_server(pins: PinStore, store: str, server_id: str) -> None:
    """A `--server-id` the store does not know is a usage error (exit 2) naming the ids it
    knows (the closest first), never "nothing pending": a typo must not read as all clear."""
    import difflib

    known = [summary.server_id for summary in pins.servers()]
    if server_id in known:
        return
    where = clipped(redacted_location(store))
    if not known:
        fail(f"--server-id {clipped(server_id)}: {where} knows no server yet")
    close = difflib.get_close_matches(server_id, known, n=1, cutoff=0.6)
    hint = f" (did you mean {clipped(close[0])}?)" if close else ""
    listed = ", ".join(clipped(k, 60) for k in known[:20]) + (" ..." if len(known) > 20 else "")
    fail(f"--server-id {clipped(server_id)}: no such server in {where}{hint}; it knows: {listed}")


def _revocation_json(item: Pending) -> dict[str, Any] | None:
    """The revocation a pending tool is under, for --json: `at` (seconds since the Unix
    epoch), `by` (who revoked it) and `fingerprint` (the pin revoked); `None` when none."""
    if item.revoked_at is None:
        return None
    return {
        "at": item.revoked_at,
        "by": item.revoked_by,
        "fingerprint": item.revoked_fingerprint,
        "reason": item.revoked_reason,
    }


def _revocation_line(item: Pending) -> str:
    """Who revoked a pending tool's pin, when and why, and whether it lists the revoked
    definition again."""
    if item.revoked_at is None:
        return ""
    line = f"pin revoked {_utc(item.revoked_at)} by {clipped(item.revoked_by or '-')}"
    if item.revoked_reason:
        line += f" ({clipped(item.revoked_reason)})"
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
    if not isinstance(description, str):
        said = "(none)"
    elif description:
        said = clipped(description, _DESCRIPTION_CHARS)
    else:  # a line ending in "description: " reads as a display fault, not an empty text
        said = '"" (empty)'
    lines += [f"description: {said}", f"inputSchema: {_schema_summary(row['input_schema'])}"]
    if row["output_schema"] is not None:
        lines.append(f"outputSchema: {_schema_summary(row['output_schema'])}")
    if row["annotations"] is not None:
        lines.append(f"annotations: {short(row['annotations'], 200)}")
    return lines


#: Properties an inputSchema summary names before "+N more".
_SUMMARY_PROPERTIES = 12


def _schema_summary(schema: Any) -> str:
    """An inputSchema in one line: each property with its type (`*`: required), and what
    else constrains it (`additionalProperties`, composition keywords), escaped and clipped."""
    if not isinstance(schema, dict):
        return f"(not an object: {short(schema)})"
    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    parts: list[str] = []
    if isinstance(properties, dict) and properties:
        for name, sub in list(properties.items())[:_SUMMARY_PROPERTIES]:
            mark = "*" if name in needed else ""
            parts.append(f"{visible(name)}{mark}: {_property_kind(sub)}")
        if len(properties) > _SUMMARY_PROPERTIES:
            parts.append(f"+{len(properties) - _SUMMARY_PROPERTIES} more")
    else:
        parts.append("no properties")
    if "additionalProperties" in schema:
        parts.append(f"additionalProperties: {short(schema['additionalProperties'], 40)}")
    extra = [k for k in ("allOf", "anyOf", "oneOf", "not", "$ref", "if") if k in schema]
    if extra:
        parts.append("also " + ", ".join(extra))
    return clipped("; ".join(parts)) + ("  (* required)" if needed else "")


def _property_kind(schema: Any) -> str:
    """A property's type in brief: `string`, `string|null`, `one of ["c", "f"]`, `any`."""
    if not isinstance(schema, dict):
        return short(schema, 40)
    if "enum" in schema:
        return "one of " + short(schema["enum"], 40)
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
    return short(kind, 40)


def _approve_instructions_command(store: str, server_id: str, reviewed: str) -> str:
    """The command that approves a server's pending instructions as shown (`--fingerprint`),
    WHO standing for the approver (the store's password is never shown)."""
    import shlex

    return shlex.join(
        [
            *(program_name(), "pins", "approve", "--store", redacted_location(store)),
            *("--server-id", server_id, "--instructions", "--fingerprint", reviewed),
            *("--approver", APPROVER_PLACEHOLDER),
        ]
    )


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


@app.command(
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
    reason: Annotated[
        str | None,
        typer.Option(
            "--reason",
            metavar="TEXT",
            callback=lambda v: None if v is None else _utf8_text(v),
            help="Why (kept with the revocation, shown by pins pending and pins audit).",
        ),
    ] = None,
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
        try:
            missing = [
                n for n in tool if not pins.revoke(server_id, n, approver=approver, reason=reason)
            ]
        except ValueError as exc:  # a reason too long
            fail(f"--reason: {exc}")
    for name in tool:
        state = "no pin" if name in missing else "revoked"
        emit(f"{state:<8} {visible(name)}")
    if missing:
        raise typer.Exit(EXIT_FINDINGS)


@app.command(
    "reject", cls=PlainHelpCommand, short_help="Reject a pending definition: it stays blocked."
)
def pins_reject_command(
    store: StoreOption,
    server_id: ServerIdOption,
    tool: Annotated[
        str,
        typer.Option("--tool", metavar="NAME", callback=_utf8_text, help="The tool (exact name)."),
    ],
    reviewed: Annotated[
        str,
        typer.Option(
            "--fingerprint",
            metavar="FINGERPRINT",
            help="The pending definition's fingerprint, as `pins pending` showed it: nothing "
            "is rejected when another definition is pending now (exit 2).",
        ),
    ],
    approver: ApproverOption,
    reason: Annotated[
        str,
        typer.Option(
            "--reason",
            metavar="TEXT",
            callback=_utf8_text,
            help="Why (required; kept with the rejection and in the audit log).",
        ),
    ],
) -> None:
    """Reject the pending definition of one tool: it leaves the queue and stays blocked (a
    guard refuses its calls, reason tool_rejected); the same definition listed again does not
    come back to the queue, a different one does. Audited with the reason."""
    if not reviewed.startswith("jcs-sha256:"):
        reviewed = "jcs-sha256:" + reviewed
    if not reason.strip():
        raise typer.BadParameter("say why (it must not be empty)", param_hint="--reason")
    with _store(store) as pins:
        try:
            done = pins.reject(
                server_id, tool, fingerprint=reviewed, approver=approver, reason=reason
            )
        except ValueError as exc:
            fail(str(exc))
        if not done:
            now = pins.pending(server_id, tool)
            said = f"{now[0].fingerprint} is pending" if now else "nothing is pending for it"
            fail(
                f"{tool!r}: {said}, not the definition reviewed ({reviewed}): nothing "
                "rejected; review it again (pins pending)"
            )
    emit(f"rejected {reviewed}  {visible(tool)}")


#: The largest age `pins prune` takes (a million days: ages past it, `inf` among them, are
#: refused before the store is opened, so no half of the command runs).
_MAX_DAYS: Final = 1_000_000.0


@app.command(
    "prune", cls=PlainHelpCommand, short_help="Delete old check entries and old call records."
)
def pins_prune_command(
    store: StoreOption,
    older_than: Annotated[
        float | None,
        typer.Option(
            "--checks-older-than",
            metavar="DAYS",
            min=0,
            max=_MAX_DAYS,
            help="Delete check entries older than this many days (0: all of them).",
        ),
    ] = None,
    calls_older_than: Annotated[
        float | None,
        typer.Option(
            "--calls-older-than",
            metavar="DAYS",
            min=0,
            max=_MAX_DAYS,
            help="Delete call audit records older than this many days (0: all of them).",
        ),
    ] = None,
) -> None:
    """The retention of checks and calls: delete the audit log's check entries, and the call
    audit's records (`pins calls`), older than DAYS. Approvals and revocations are kept
    whatever their age (the database refuses to delete them); what awaits approval stays in
    the pending queue. Give --checks-older-than, --calls-older-than or both."""
    if older_than is None and calls_older_than is None:
        fail("give --checks-older-than DAYS, --calls-older-than DAYS or both")
    with _store(store) as pins:
        checks = None if older_than is None else pins.prune_checks(older_than * 86400.0)
        calls = None if calls_older_than is None else pins.prune_calls(calls_older_than * 86400.0)
    if checks is not None:
        emit(f"deleted {checks} check entr{'y' if checks == 1 else 'ies'}")
    if calls is not None:
        emit(f"deleted {calls} call record{'' if calls == 1 else 's'}")


def _checked(
    page: str,
    store: str,
    server_id: str,
    tool: list[str] | None,
    transport: str | None,
    protocol_version: str | None,
    audit: bool,
    decisions: bool = False,
) -> tuple[Intake, list[dict[str, Any]]]:
    """The page's checks as rows; with `decisions`, a tool new because a person revoked its
    pin says `revoked`, a definition a person rejected `rejected`."""
    result, tools, version = _page_tools(page, server_id, transport, protocol_version, tool)
    schemas: dict[str, dict[str, str]] = {}
    with _store(store) as pins:
        try:
            checks = pins.check_page(server_id, tools, protocol_version=version, audit=audit)
        except Error as exc:
            fail(f"{page}: {exc}")
        for check, listed in zip(checks, tools, strict=True):
            if check.status in ("changed", "cosmetic"):
                schemas[check.name] = _schema_moves(pins, server_id, check.name, listed.raw)
        # What a person decided: a revoked pin, a rejected definition.
        revoked = {r.name for r in pins.revocations(server_id)}
        rejected = {(r.name, r.fingerprint) for r in pins.rejections(server_id)}
    decided = {
        c.name: (
            "rejected"
            if (c.name, c.fingerprint) in rejected
            else "revoked" if c.status == "new" and c.name in revoked else c.status
        )
        for c in checks
    }
    return result, [
        {
            "name": c.name,
            "status": decided[c.name] if decisions else c.status,
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


@app.command("check", cls=PlainHelpCommand, short_help="Check a page against the pins of a server.")
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
    """Check a page against the pins: approved, new, changed (material) or cosmetic; revoked
    (new again: a person revoked its pin) or rejected (a person rejected this definition).

    Exit code 1 when a tool is not approved, or intake rejected one.
    """
    result, checks = _checked(
        page, store, server_id, tool, transport, protocol_version, audit, decisions=True
    )
    rejected = _rejections(result) if not tool else []
    if as_json:
        report = {"server_id": server_id, "tools": checks, "rejected": rejected}
        emit(json_report(report))
    else:
        for check in checks:
            emit(f"{check['status']:<9} {visible(check['name'])}")
        for rejection in rejected:
            emit(f"rejected  {visible(rejection['name'])}: {rejection['reason']}")
    if rejected or any(c["status"] != "approved" for c in checks):
        raise typer.Exit(EXIT_FINDINGS)


@app.command(
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
        emit(json_report(report))
    else:
        if not differing and not new:
            emit("no changes")
        for check in differing:
            emit(f"{check['status']:<9} {visible(check['name'])}")
            for line in _schema_lines(check["schemas"]):
                emit(line)
            for change in check["changes"]:
                emit("          " + change_line(_field_change(change)))
        for name in new:
            emit(f"new       {visible(name)}")
    if differing or new:
        raise typer.Exit(EXIT_FINDINGS)


@app.command(
    "audit", cls=PlainHelpCommand, short_help="Show the audit log: approvals, revocations, checks."
)
def pins_audit_command(
    store: StoreOption,
    server_id: OnlyServerOption = None,
    tool: ToolsOption = None,
    as_json: JsonOption = False,
    output: FormatOption = "text",
    follow: FollowOption = False,
    since: SinceOption = 0,
) -> None:
    """Show the audit log, oldest first: approvals, revocations, and checks not approved.

    One line per entry: when (UTC); the action (approve, revoke, or check with its outcome:
    new, changed, cosmetic, instructions for a held text; approved, rejected,
    instructions_approved when what waited left the queue); the fingerprint approved, revoked
    or listed (first 16 hex digits); server and tool (`account NAME` for a console account,
    `server S  instructions` for a server's instructions); the pin an approval replaced or a
    check compared with (`waited`: the one that left the queue); who approved or revoked.
    --json gives every field: id, kind (tool, instructions or account), at (seconds since the
    Unix epoch), server_id, name, action, outcome, fingerprint, previous_fingerprint, approver,
    protocol_version, definition (the approved definition as RFC 8785 canonical JSON text)
    and reason (a rejection's or revocation's; an account's role; why an entry left the
    queue). --format jsonl writes the same fields one entry a line; its id is the cursor:
    --since ID resumes after it, and --follow keeps writing new entries as they are committed
    (until SIGINT/SIGTERM).
    """
    from ._audit_stream import audit_kind, entry_row, stream

    if output == "jsonl" or follow:
        with _store(store) as pins:
            _past_the_end(pins, since)
            stream(pins, since=since, server_id=server_id, tools=tool, follow=follow)
        return
    with _store(store) as pins:
        _past_the_end(pins, since)
        entries = pins.audit_log(server_id)
    entries = tuple(e for e in entries if e.id > since)
    if tool:
        wanted = set(tool)
        entries = tuple(e for e in entries if e.name in wanted and audit_kind(e) == "tool")
    rows: list[dict[str, Any]] = [entry_row(e) for e in entries]
    if as_json:
        emit(json_text(rows))
        return
    if not rows:
        emit("no audit entries")
    for row in rows:
        emit(_audit_line(row))


def _past_the_end(pins: PinStore, since: int) -> None:
    """Say on stderr when `--since` is past the log's last entry (a cursor from another store,
    or a typo): nothing is written until an id passes it, so silence would hide the gap."""
    if since == 0:
        return
    last = pins.audit_log(limit=1)
    if not last or last[-1].id < since:
        end = f"its last entry is {last[-1].id}" if last else "it is empty"
        warn(
            f"conduit-mcp: --since {since} is past the end of the audit log ({end}): entries"
            f" are written once their id passes {since}"
        )


#: The check outcomes of an entry that left the pending queue (`previous_fingerprint`: the one
#: that waited).
_LEFT_QUEUE: Final = frozenset({"approved", "rejected", "instructions_approved"})


def _audit_line(row: dict[str, Any]) -> str:
    """One entry for a person: fixed-width fields first, the server's strings last (escaped).
    Its subject: `server S  tool T`, `server S  instructions`, or `account A` (no server)."""
    when = _utc(row["at"])
    action = row["action"] if row["outcome"] is None else f"{row['action']} {row['outcome']}"
    if row["kind"] == "account":
        subject = f"account {clipped(row['name'])}"
    elif row["kind"] == "instructions":
        subject = f"server {clipped(row['server_id'])}  instructions"
    else:
        subject = f"server {clipped(row['server_id'])}  tool {clipped(row['name'])}"
    line = f"{when}  {action:<14}  {_short_fingerprint(row['fingerprint']):<16}  {subject}"
    if row["previous_fingerprint"] is not None:
        label = "pinned" if row["action"] == "check" else "replaced"
        if row["action"] == "check" and row["outcome"] in _LEFT_QUEUE:
            label = "waited"  # the fingerprint that left the queue, not the pin
        line += f"  {label} {_short_fingerprint(row['previous_fingerprint'])}"
    if row["approver"] is not None:
        line += f"  by {clipped(row['approver'])}"
    if row.get("reason") and row["action"] in ("reject", "revoke"):
        line += f"  reason {clipped(row['reason'])}"
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


app.command(
    "calls", cls=PlainHelpCommand, short_help="Show the call audit: each call, caller, verdict."
)(pins_calls_command)
