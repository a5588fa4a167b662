"""`conduit-mcp pins calls`: the call audit (`proxy --audit-calls`) read back, for a person or a
log shipper.

Private to the pins group. Records come from `PinStore.calls_since`, whose ids ascend in commit
order on both databases: `--since ID` resumes after a record, `--format jsonl --follow` keeps
writing records as proxies commit them (`_audit_stream.stream_records`, as `pins audit`).
Every string in a record came from a caller's token or a server (subject, groups, tool, request
id): the text lines show hidden characters as escapes and cut long values, the JSON is
`json_text` (every character visible).
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from ..pins import CallRecord, PinStore
from ._audit_stream import FollowOption, FormatOption, SinceOption, _write_line, stream_records
from ._store import open_store
from ._text import clipped, emit, json_text, warn

#: The verdicts a record holds (`CallRecord.verdict`).
VERDICTS = ("passed", "refused", "withheld", "unanswered", "error")


def call_row(record: CallRecord) -> dict[str, Any]:
    """One record's fields, as `pins calls --json` and `--format jsonl` write them."""
    return {
        "id": record.id,
        "at": record.at,
        "server_id": record.server_id,
        "tool": record.tool,
        "subject": record.subject,
        "groups": list(record.groups),
        "verdict": record.verdict,
        "reason": record.reason,
        "arguments_digest": record.arguments_digest,
        "arguments": record.arguments,
        "request_id": record.request_id,
    }


def call_line(record: CallRecord) -> str:
    """One record for a person: time, verdict (and reason), server, tool, caller, the
    arguments' digest (first 16 hex digits), the record's id (the cursor)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(record.at))
    verdict = record.verdict if record.reason is None else f"{record.verdict} {record.reason}"
    caller = "no caller" if record.subject is None else f"subject {clipped(record.subject)}"
    if record.groups:
        caller += " (" + ", ".join(clipped(g) for g in record.groups) + ")"
    digest = record.arguments_digest.removeprefix("sha256:")[:16]
    return (
        f"{when}  {clipped(verdict):<22}  server {clipped(record.server_id)}  tool "
        f"{clipped(record.tool)}  {caller}  arguments {digest}  id {record.id}"
    )


def _check_verdict(value: str | None) -> str | None:
    if value is not None and value not in VERDICTS:
        raise typer.BadParameter(f"must be one of {', '.join(VERDICTS)}")
    return value


def pins_calls_command(
    store: Annotated[
        str,
        typer.Option(
            "--store",
            metavar="LOCATION",
            help="Pin store holding the call audit: a sqlite file path, or a postgresql:// URL."
            " It must exist.",
        ),
    ],
    server_id: Annotated[
        str | None,
        typer.Option("--server-id", metavar="ID", help="Only calls to this server."),
    ] = None,
    subject: Annotated[
        str | None,
        typer.Option("--subject", metavar="SUB", help="Only calls by this caller (token `sub`)."),
    ] = None,
    tool: Annotated[
        list[str] | None,
        typer.Option("--tool", metavar="NAME", help="Only calls of this tool (repeatable)."),
    ] = None,
    verdict: Annotated[
        str | None,
        typer.Option(
            "--verdict",
            metavar="passed|refused|withheld|unanswered|error",
            callback=_check_verdict,
            help="Only these.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for programs.")] = False,
    output: FormatOption = "text",
    follow: FollowOption = False,
    since: SinceOption = 0,
) -> None:
    """Show the call audit, oldest first: each `tools/call` a proxy with --audit-calls decided.

    One line per call: when (UTC); the verdict (passed; refused with its reason, the
    policy's policy_denied or the guard's, or session_closed / cancelled / caller_gone for a
    call a session ended or its client left before it was sent: never sent to the server;
    withheld with the guard's
    reason: the server answered, the guard kept its answer from the client; unanswered with
    why, cancelled, caller_gone, timeout or session_closed: sent to the server, no answer
    reached the client; error: the server answered with an error, or the upstream failed,
    upstream_http_401 or 403 among them); server and tool; the caller's subject and groups
    (no caller: a proxy without --auth); the first 16 hex digits of the SHA-256 of the
    arguments' RFC 8785 canonical JSON; the record's id. --json gives every field: id, at
    (seconds since the Unix epoch), server_id, tool, subject, groups, verdict, reason,
    arguments_digest, arguments (only when the proxy ran with --audit-arguments) and
    request_id. --format jsonl writes the same fields one record a line; its id is the cursor:
    --since ID resumes after it, and --follow keeps writing new records as they are committed
    (until SIGINT/SIGTERM).
    """
    wanted = set(tool) if tool else None

    def keep(record: CallRecord) -> bool:
        return (
            (server_id is None or record.server_id == server_id)
            and (subject is None or record.subject == subject)
            and (wanted is None or record.tool in wanted)
            and (verdict is None or record.verdict == verdict)
        )

    with open_store(store) as pins:  # an existing store only
        _said_past_the_end(pins, since)
        if output == "jsonl" or follow:
            stream_records(
                pins.calls_since,
                keep,
                lambda record: json_text(call_row(record)),
                since=since,
                follow=follow,
            )
            return
        if not as_json:  # one line a record as read: memory bounded by a batch, not the audit
            shown = 0

            def write(text: str) -> bool:
                nonlocal shown
                shown += 1
                return _write_line(text)

            stream_records(
                pins.calls_since, keep, call_line, since=since, follow=False, write=write
            )
            if not shown:
                emit("no calls recorded")
            return
        rows: list[Any] = []
        stream_records(
            pins.calls_since, keep, call_row, since=since, follow=False, write=rows.append
        )
    emit(json_text(rows))  # one array: the whole selection in memory (jsonl streams any size)


def _said_past_the_end(pins: PinStore, since: int) -> None:
    """Say on stderr when `--since` is past the last record (as `pins audit`)."""
    if since == 0 or pins.calls_since(since - 1, limit=1):
        return
    warn(
        f"conduit-mcp: --since {since} is past the end of the call audit (no record has id"
        f" {since} or more): records are written once their id passes {since}"
    )
