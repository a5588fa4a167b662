"""`conduit-mcp pins audit --format jsonl [--follow] [--since CURSOR]`: the audit log as JSON
lines in commit order, for shipping to a SIEM.

Private to the pins group. Each line is one entry (the fields of `pins audit --json`, `id`
first): its `id` is the cursor to resume from (`--since ID` writes the entries after it), so a
shipper that records the last id it forwarded loses nothing and repeats nothing across a
restart. Entries are read with `PinStore.audit_since`, whose ids ascend in commit order on both
databases (an entry committed later never has a smaller id). `--follow` keeps reading every
`interval` seconds until SIGINT or SIGTERM (exit 0), or until the reader goes (a closed pipe:
exit 0).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any, Final

import typer

from ..pins import AuditEntry, PinStore
from ._text import json_text, visible

#: Entries read per query.
BATCH: Final = 1000


def _check_format(value: str) -> str:
    if value not in ("text", "jsonl"):
        raise typer.BadParameter(f"{visible(value)!r} is not text or jsonl")
    return value


#: The options `pins audit` and `pins calls` share: the output, following, the cursor.
FormatOption = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="text|jsonl",
        callback=_check_format,
        help="jsonl: one JSON object a line, in commit order, for a log shipper.",
    ),
]
FollowOption = Annotated[
    bool,
    typer.Option("--follow", help="Keep writing what is committed next (jsonl) until stopped."),
]
SinceOption = Annotated[
    int,
    typer.Option("--since", metavar="CURSOR", min=0, max=2**63 - 1, help="Only after this id."),
]


def audit_kind(entry: AuditEntry) -> str:
    """What an audit entry is about: `"account"` (a console account: `name` is the account,
    no server), `"instructions"` (a server's instructions approved, held, or out of the queue: no
    tool) or `"tool"`."""
    if entry.action == "account":
        return "account"
    # approved, or held (action "check"); out of the queue: "instructions_approved"
    if entry.outcome in ("instructions", "instructions_approved"):
        return "instructions"
    return "tool"


def entry_row(entry: AuditEntry) -> dict[str, Any]:
    """The fields of one entry, as `pins audit --json` writes them."""
    return {
        "id": entry.id,
        "kind": audit_kind(entry),
        "at": entry.at,
        "server_id": entry.server_id,
        "name": entry.name,
        "action": entry.action,
        "outcome": entry.outcome,
        "fingerprint": entry.fingerprint,
        "previous_fingerprint": entry.previous_fingerprint,
        "approver": entry.approver,
        "protocol_version": entry.protocol_version,
        "definition": entry.definition,
        "reason": entry.reason,
    }


def _write_line(text: str) -> bool:
    """Write one line and flush; `False` once the reader has gone."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        return False
    return True


def stream(
    pins: PinStore,
    *,
    since: int,
    server_id: str | None,
    tools: Iterable[str] | None,
    follow: bool,
    interval: float = 0.25,
    write: Callable[[str], bool] = _write_line,
) -> int:
    """Write the entries after `since` as JSON lines; with `follow`, keep going. Returns the
    last id written or skipped (the cursor)."""
    wanted = set(tools) if tools else None

    def keep(entry: AuditEntry) -> bool:
        return (server_id is None or entry.server_id == server_id) and (
            wanted is None or (entry.name in wanted and audit_kind(entry) == "tool")
        )

    return stream_records(
        pins.audit_since,
        keep,
        lambda entry: json_text(entry_row(entry)),
        since=since,
        follow=follow,
        interval=interval,
        write=write,
    )


def stream_records(
    read: Callable[..., Sequence[Any]],
    keep: Callable[[Any], bool],
    line: Callable[[Any], Any],
    *,
    since: int,
    follow: bool,
    interval: float = 0.25,
    write: Callable[[Any], bool | None] = _write_line,
) -> int:
    """Write `line(record)` for each record after `since` that `keep` keeps, in commit order
    (`read(cursor, limit=N)`: records with an ascending `id`, as `PinStore.audit_since` and
    `calls_since`); with `follow`, keep reading every `interval` seconds until SIGINT or
    SIGTERM. `write` returns `False` once its reader has gone (then this stops; `None`, as
    `list.append` returns, goes on). Returns the last id written or skipped (the cursor)."""
    # A flag, not a `threading.Event`: a handler that sets an Event can land while this thread
    # holds the Event's own lock (inside `wait`) and wait for it forever (a follower that
    # SIGTERM never ended, once in a CI run).
    stopping: list[bool] = []

    def stop(*_: Any) -> None:
        stopping.append(True)

    previous = {}
    if follow and threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, stop)
    cursor = since
    try:
        while not stopping:
            batch = read(cursor, limit=BATCH)
            for record in batch:
                if keep(record) and write(line(record)) is False:
                    return cursor
                cursor = record.id
            if len(batch) == BATCH:
                continue
            if not follow:
                break
            time.sleep(interval)  # a signal's handler runs at once; the sleep then ends on time
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return cursor
