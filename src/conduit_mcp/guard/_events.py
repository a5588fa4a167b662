"""Guard events: every decision the guard takes, delivered to a list, a callback and logging.

Not a public module: import `GuardEvent`, `EVENT_KINDS` and `GUARD_REASONS` from
`conduit_mcp.guard`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..client import PathItem, render_path

#: The logger every event is written to (stdlib `logging`). A library adds only a
#: NullHandler: records go where the application's logging config sends them, and nowhere
#: (not to stderr through logging's last resort) when it configured none.
logger: Final = logging.getLogger("conduit_mcp.guard")
logger.addHandler(logging.NullHandler())

#: Every `GuardEvent.kind`. The kinds are public API.
EVENT_KINDS: Final = frozenset(
    {
        # tools/list
        "tool_rejected",  # intake (or the SDK's model) refused a tool: removed from the page
        "tool_new",  # a tool never pinned for this server
        "tool_changed",  # a pinned tool whose definition differs from its pin
        "tool_removed",  # a tool of the last complete listing is no longer listed
        "list_unreadable",  # a tools/list result the guard cannot read: passed on unchanged
        # the tool's outputSchema is left out of the listing the SDK sees (policy
        # sdk_output_schema="hide_unsafe"); once per tool definition, not per listing
        "output_schema_hidden",
        # hidden characters removed from a tool's text before the SDK sees it (policy
        # tool_text="clean"); once per tool definition
        "tool_text_cleaned",
        # an icon whose src intake found unsafe (icon_unsafe_uri) is left out of the listing
        "icon_removed",
        # tools/call
        "call_refused",  # answered locally with a JSON-RPC error; never sent to the server
        "output_invalid",  # structuredContent failed the outputSchema (or its check timed out)
        "result_invalid",  # the tools/call result is not a result: the SDK gets an error response
        # the guard could not check a message: passed (unknown protocol version), for a
        # tools/list page withheld (every tool of the page; cause in `details`), or a stream
        # item that is no JSON-RPC message of the SDK dropped (unrecognized_message)
        "unchecked",
        # a response to a tools/call still being checked or refused (never written): dropped
        "response_dropped",
        # hidden characters removed from a tools/call result's text (policy result_text="clean")
        "result_text_cleaned",
        # a request (not a tools/call) answered locally, never written (too many in flight)
        "request_refused",
        # hidden characters removed from what a model reads outside tools (policy model_text:
        # instructions, prompts, resources, completions, elicitation, sampling, log messages)
        "model_text_cleaned",
        # an item, answer, request, notification or the instructions left out for hidden
        # characters (model_text="block", or in a name the client sends back)
        "model_text_withheld",
        # the server's instructions never approved for it / differing from the approved ones
        "instructions_new",
        "instructions_changed",
        # after a pin store outage the store answers again: the guard listed the tools itself
        # (one event per page of its own listing; what it restored in `details`)
        "tools_rechecked",
    }
)

#: Reason codes the guard adds to those of `conduit_mcp.client.REASONS` (intake and result
#: reasons pass through as they are). Public API.
GUARD_REASONS: Final = frozenset(
    {
        "new_tool",  # tool_new
        "pin_revoked",  # tool_new, new="pin": the store's pin was revoked (blocked, not re-pinned)
        # tool_new: past the private store's `max_tools` names for the server (held)
        "too_many_tools",
        "tool_definition_changed",  # tool_changed
        "new_instructions",  # instructions_new
        "changed_instructions",  # instructions_changed
        # tool_changed: a new name that looks like a pinned or listed one (NFC/NFKC, trimmed,
        # UTS #39 skeleton): a rename, never a new tool
        "lookalike_name",
        # tool_text_cleaned / result_text_cleaned / model_text_cleaned: invisible or control
        # characters removed
        "hidden_characters_removed",
        # tool_rejected (tool_text="block"), model_text_withheld (model_text="block"): the text
        # hides some
        "hidden_characters",
        # tool_rejected, model_text_withheld: a name the client sends back hides some
        "hidden_characters_in_name",
        # tool_changed: only cosmetic fields changed (accepted beside the pin, policy cosmetic)
        "cosmetic_change",
        "tool_not_listed",  # tool_removed
        "sdk_rejects_tool",  # tool_rejected: the SDK's own model for the version refuses it
        "sdk_unsafe_output_schema",  # output_schema_hidden: pattern/patternProperties/uniqueItems
        "sdk_output_recheck",  # output_schema_hidden: invalid_output "flag"/"pass"
        # output_schema_hidden: the version predates outputSchema (before 2025-06-18)
        "output_schema_not_in_version",
        "sdk_rejects_result",  # result_invalid: the SDK's own model refuses the tools/call result
        "response_to_unsent_request",  # response_dropped
        # response_dropped: answers no request awaiting one (forged, duplicated, abandoned)
        "unmatched_response",
        # call_refused / request_refused: the connection's table of requests in flight is full
        "too_many_outstanding_requests",
        # call_refused / request_refused: a request of the connection awaiting its response
        # has the same id (a reused id would take the other's answer)
        "request_id_in_use",
        "unknown_tool",  # call_refused: never listed, or removed
        # call_refused: the tool was rejected at intake, or a person rejected its definition
        # in the pin store (`PinStore.reject`); tool_new / tool_changed: that definition was
        # listed again (blocked)
        "tool_rejected",
        "tool_blocked",  # call_refused: new/changed policy "block", or a revoked pin
        "tool_held",  # call_refused: new/changed policy "hold", awaiting `Guard.approve`
        "invalid_arguments",  # call_refused: arguments fail the tool's inputSchema
        # call_refused: a tools/call whose name is not a string, params not an object, or no id
        "invalid_call",
        "argument_check_timeout",  # call_refused: the argument check did not finish in time
        "invalid_structured_content",  # output_invalid
        "output_validation_timeout",  # output_invalid: the check did not finish in time
        "unknown_protocol_version",  # unchecked / list_unreadable
        # unchecked (a page's tools withheld) / call_refused: a bug inside the guard
        "guard_internal_error",
        # unchecked (a page's tools withheld) / call_refused: the pin store failed or timed out
        "pin_store_unavailable",
        # tools_rechecked: the pin store answers again after an outage
        "pin_store_available",
        # unchecked: a stream item the SDK seam does not recognise as one of its SDK's JSON-RPC
        # messages (either direction): dropped, never handed on; its type in `details`
        "unrecognized_message",
    }
)

#: Default number of events `Guard.events` keeps (oldest dropped first).
MAX_EVENTS: Final = 10_000


@dataclass(frozen=True, slots=True)
class GuardEvent:
    """One decision of the guard. Immutable.

    Attributes:
        kind: one of `EVENT_KINDS` (e.g. `"tool_rejected"`, `"call_refused"`).
        tool: the tool name the decision is about, or `None` (e.g. an unreadable page).
        reason: a snake_case code from `conduit_mcp.client.REASONS` or `GUARD_REASONS`.
        decision: what the guard did: `"removed"` (from the page the SDK sees), `"pinned"`,
            `"allowed"`, `"blocked"`, `"held"`, `"refused"`, `"withheld"`, `"flagged"`,
            `"answered_error"`, `"hidden"` (a part left out of what the SDK sees),
            `"cleaned"` (hidden characters removed from what the SDK sees),
            `"dropped"` (a message the SDK never receives) or `"passed"` (handed on unchanged).
        path: keys and indexes into the message the decision is about: from the `tools/list`
            result root (`("tools", 3, "inputSchema")`), from the call's `arguments`, or from
            `structuredContent`.
        message: one line for a person; names places and JSON types, never the payload.
        server_id: the operator-assigned id of the guarded server.
        changes: for `tool_changed`: what changed, field by field, as the pin store reports it
            (`FieldChange`s: RFC 6901 `path`, `op`, `old`, `new`, `material`), or, when the store
            has no detail, the top-level keys of the tool definition whose values differ from
            the last definition seen (`("description",)`).
        details: extra machine-readable facts (JSON-RPC request id, issue counts, ...).
    """

    kind: str
    tool: str | None
    reason: str
    decision: str
    path: tuple[PathItem, ...] = ()
    message: str = ""
    server_id: str = ""
    changes: tuple[Any, ...] = ()
    details: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def json_path(self) -> str:
        """`path` rendered as a string, e.g. `$.tools[3].inputSchema`."""
        return render_path(self.path)


_LEVELS: Final = {
    "tool_new": logging.INFO,
    "tool_removed": logging.INFO,
    "output_schema_hidden": logging.INFO,
    "unchecked": logging.INFO,
}


class EventSink:
    """Delivers events in order to a bounded list, an optional callback and the logger."""

    __slots__ = ("_callback", "_events")

    def __init__(
        self, callback: Callable[[GuardEvent], object] | None, max_events: int = MAX_EVENTS
    ) -> None:
        self._events: deque[GuardEvent] = deque(maxlen=max_events)
        self._callback = callback

    @property
    def events(self) -> tuple[GuardEvent, ...]:
        return tuple(self._events)

    def emit(self, event: GuardEvent) -> None:
        """Record `event`; a callback that raises is logged, never propagated."""
        self._events.append(event)
        level = (
            logging.WARNING
            if event.decision == "withheld"
            else _LEVELS.get(event.kind, logging.WARNING)
        )
        if logger.isEnabledFor(level):
            logger.log(
                level,
                "%s %s%s reason=%s at %s: %s",
                event.server_id,
                event.kind,
                "" if event.tool is None else f" tool={event.tool!r}",  # none for instructions
                event.reason,
                event.json_path,
                event.message,
                extra={"guard_event": event},
            )
        if self._callback is not None:
            try:
                self._callback(event)
            except Exception:
                # The callback is the caller's code: its failure must not reach the SDK.
                logger.exception("guard on_event callback raised")
