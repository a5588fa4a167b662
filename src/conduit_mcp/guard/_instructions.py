"""A server's instructions, pinned with the server: what the client sees of them.

Not a public module. No SDK import. The `instructions` of an `initialize` result
(`server/discover` from 2026-07-28) are a hint a client MAY put into the model's system
prompt (spec 2025-11-25 basic/lifecycle `InitializeResult`), so a server that changes them
changes what the model is told. They are checked against the pin store
(`PinStore.check_instructions`) as a tool's definition is, with the same policies and the
same table of outcomes (`_policy.OUTCOMES`): new ones follow `new`, changed ones `changed`;
while held or blocked the client sees the approved instructions, or none; a person approves
the waiting text with `Guard.approve_instructions` or `conduit-mcp pins approve
--instructions`. The pin keeps the text as sent; the client sees it under policy
`model_text` (hidden characters cleaned, or the instructions withheld under `"block"`).

When the store cannot answer, the instructions are withheld (fail closed: event `unchecked`,
reason `pin_store_unavailable`). The rest of the result goes through `model_text` too;
`"block"` withholds only the instructions there (the session must start).
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from ..client import Error
from . import _checks
from ._base import PASS, Verdict, _bind, _cause
from ._checks import GUARD_APPROVER
from ._jsonrpc import result_response
from ._policy import OUTCOMES
from ._reads import RESPONSES
from ._servertext import Screened, clean_json, mark, report, screen


@dataclass(slots=True)
class InstructionsState:
    """The instructions the server sent last, as the pin store judged them."""

    text: str
    fingerprint: str
    #: `"ok"` (approved or passed), `"held"` or `"blocked"` (awaiting a person).
    status: str
    #: `"new"` or `"changed"` while held or blocked.
    reason: str = ""


def on_initialized(
    conn: Any, request_id: Any, message: dict[str, Any], result: Any, method: str
) -> Verdict | Coroutine[Any, Any, Verdict]:
    """The verdict on an `initialize` or `server/discover` result: the rest of the result
    under `model_text`, and, when it has instructions, the rest of the decision as a
    coroutine (their pin check waits for the store)."""
    if not isinstance(result, dict):
        return PASS
    policy = conn.shared.policy.model_text
    # `block` would refuse the whole result and so the session: there it withholds the
    # instructions only, the rest is cleaned.
    screened = screen(result, RESPONSES[method], "clean" if policy == "block" else policy)
    if isinstance(result.get("instructions"), str):
        return _with_instructions(conn, request_id, message, result, method, screened)
    if result.get("instructions") is not None:  # not the spec's string: never pinned, never seen
        conn.emit(
            "model_text_withheld",
            None,
            "schema_violation",
            "withheld",
            path=("instructions",),
            message="the server's instructions are not a string: withheld",
            details={"method": method, "type": type(result["instructions"]).__name__},
        )
        screened.withheld.append(("instructions",))
        screened.reasons.append("schema_violation")
        value = {k: v for k, v in screened.value.items() if k != "instructions"}
        return _finish(conn, request_id, message, result, method, screened, value)
    return _finish(conn, request_id, message, result, method, screened, screened.value)


async def _with_instructions(
    conn: Any,
    request_id: Any,
    message: dict[str, Any],
    result: dict[str, Any],
    method: str,
    screened: Screened,
) -> Verdict:
    policy = conn.shared.policy.model_text
    value: dict[str, Any] = screened.value
    text = result["instructions"]
    shown = await _pinned(conn, text)
    if shown is not None and policy != "pass":
        cleaned, paths, flags = clean_json(shown)
        if paths and policy == "block":
            conn.emit(
                "model_text_withheld",
                None,
                "hidden_characters",
                "withheld",
                path=("instructions",),
                message=(
                    "the server's instructions hold invisible or control characters "
                    "(model_text='block'): withheld"
                ),
                details={"method": method},
            )
            screened.withheld.append(("instructions",))
            screened.reasons.append("hidden_characters")
            shown = None
        elif paths:
            shown = cleaned
            screened.cleaned.append(("instructions",))
            screened.flags |= flags
    if shown is None:
        value = {k: v for k, v in value.items() if k != "instructions"}
    elif value.get("instructions") is not shown:
        value = {**value, "instructions": shown}
    return _finish(conn, request_id, message, result, method, screened, value)


def _finish(
    conn: Any,
    request_id: Any,
    message: dict[str, Any],
    result: dict[str, Any],
    method: str,
    screened: Screened,
    value: dict[str, Any],
) -> Verdict:
    """Events, the `_meta` marker, and (initialize) the `listChanged` the guard declares."""
    report(conn, method, Screened(value, cleaned=screened.cleaned, flags=screened.flags), "cleaned")
    marked = mark(value, screened)
    if method == "initialize":
        declared: Verdict = conn._on_initialized(message, marked)
        if declared is not PASS:
            return declared
    if marked is result:
        return PASS
    return Verdict("replace", result_response(request_id, marked))


async def _pinned(conn: Any, text: str) -> str | None:
    """The instructions the client sees of `text` (as sent): `text` when approved, pinned or
    allowed now; else the approved text (or `None`) while the new one waits; `None` when the
    store cannot say (fail closed)."""
    shared = conn.shared
    policy = shared.policy
    queue = not shared.owns_pins or "hold" in (policy.new, policy.changed)
    check = _bind(
        shared.pins.check_instructions,
        shared.server_id,
        text,
        approver=GUARD_APPROVER,
        pin_new=policy.new == "pin",
        pin_changed=policy.changed == "allow",
        protocol_version=conn.known_version(),
        queue=queue,
    )
    try:
        found = await _checks.page_check(check)
    except Exception as exc:
        store = isinstance(exc, _checks.Timeout) or _checks.is_store_error(exc)
        reason = (
            "pin_store_unavailable"
            if store
            else (exc.reason if isinstance(exc, Error) else "guard_internal_error")
        )
        conn.emit(
            "unchecked",
            None,
            reason,
            "withheld",
            path=("instructions",),
            message="the server's instructions could not be checked against their pin: withheld",
            details=_cause(exc),
        )
        return None
    book = shared.book
    if found.status == "approved":
        book.instructions = InstructionsState(text, found.fingerprint, "ok")
        return text
    outcome = OUTCOMES[(found.status, policy.new if found.status == "new" else policy.changed)]
    held = outcome.status != "ok"
    book.instructions = InstructionsState(
        text, found.fingerprint, outcome.status, found.status if held else ""
    )
    if held:
        sees = "the approved instructions" if found.approved is not None else "no instructions"
        said = (
            f"{outcome.decision}: the client sees {sees} until a person approves these "
            "(Guard.approve_instructions, or conduit-mcp pins approve --instructions)"
        )
    else:
        said = str(outcome.decision)
    new = found.status == "new"
    conn.emit(
        "instructions_new" if new else "instructions_changed",
        None,
        "new_instructions" if new else "changed_instructions",
        outcome.decision,
        path=("instructions",),
        message=(
            "instructions never approved for this server"
            if new
            else "the instructions differ " "from the approved ones"
        )
        + f" ({said})",
        details={
            "fingerprint": found.fingerprint,
            "approved_fingerprint": found.approved_fingerprint,
            "awaiting_approval": held,
        },
    )
    if outcome.listed:
        return text
    approved: str | None = found.approved
    return approved
