"""`Guard`: conduit-mcp between an MCP client and its transport, at the JSON-RPC message level.

Not a public module: import `Guard` from `conduit_mcp.guard`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final

from ..client import check_server_id
from ..pins import PinStore
from . import _checks
from ._base import _bind
from ._events import MAX_EVENTS, EventSink, GuardEvent
from ._policy import Policy, make_policy
from ._recheck import Recheck
from ._state import TRANSPORTS, Shared, ToolState, Transport

if TYPE_CHECKING:
    from ._engine import Engine

__all__ = ["Guard", "ToolState", "Transport"]


class Guard:
    """conduit-mcp between an MCP client and one server, at the JSON-RPC message level.

    The guard reads every message the server sends before any SDK model is built (a JSON-RPC
    response's `result` is still a plain dict at that level) and decides before the SDK does:

    - each `tools/list` page goes through `intake` with the negotiated version and transport;
      rejected tools, and tools the SDK's own model would refuse, are removed from the page the
      SDK sees (one bad tool never sinks the page); every listed tool is compared with its pin:
      a new one follows `new`, a changed one `changed`; a tool missing from a complete listing
      is recorded (`tool_removed`). `notifications/tools/list_changed` passes through and
      carries no trust: only the listing itself is compared.
    - each `tools/call` request is refused on the client side, never sent, when the tool is
      unknown, rejected, blocked or held, or (`check_arguments`) its arguments fail the tool's
      `inputSchema`. The SDK receives a JSON-RPC error response with the request's id:
      code `REFUSED_CALL_CODE` (-32602), `data` = `{"source": "conduit-mcp.guard", "reason",
      "tool", "path"}`.
    - each `tools/call` response goes through `parse_call_result` with the negotiated version
      (an `Error` becomes a JSON-RPC error response, code `INVALID_RESULT_CODE` (-32603): a
      non-result never reaches the SDK as success; an input-required result passes untouched),
      then `validate_structured` in a worker thread bounded by `output_timeout`. Invalid
      structured content is withheld by default: the SDK receives
      `{"content": [{"type": "text", "text": <why>}], "isError": true}`, saying why without
      echoing the value, so the SDK's own output check neither raises nor hangs.
    - the SDK validates `structuredContent` again after the guard, with Python's `jsonschema`
      (mcp 2.3.0 `ClientSession.validate_tool_result`), which can hang on a `pattern`
      (backtracking `re`, holding the GIL) or `uniqueItems` (pairwise) and raises on an
      ECMA-only pattern. By default (`sdk_output_schema="hide_unsafe"`) a tool whose
      outputSchema holds `pattern`, `patternProperties` or `uniqueItems: true` anywhere is
      listed to the SDK without `outputSchema` (event `output_schema_hidden`, once per
      definition): the guard has validated that output with a linear-time engine. Under
      `invalid_output="flag"` or `"pass"` every outputSchema is left out (reason
      `sdk_output_recheck`): the SDK would raise on the result the guard lets through.

    Every request is remembered until its response arrives or the client abandons it
    (`notifications/cancelled`); a response that answers nothing in flight is dropped, and
    with `MAX_OUTSTANDING` (4,096) requests in flight new ones are refused (reason
    `too_many_outstanding_requests`). Never raises into the SDK's receive loop and never
    waits on the server. It fails closed: a pin store error or timeout, or a bug, while
    checking a `tools/list` page withholds every tool of the page from the SDK and refuses
    their calls (`pin_store_unavailable`, `guard_internal_error`) until a listing the guard
    can check; a bug while gating a call refuses it. Under `new="hold"`/`changed="hold"` a
    held tool is left out of the listing until `approve`. Tool definitions inside a server's
    `sampling/createMessage` (and inside an `input_required` result's sampling requests) go
    through intake too. Guarantees and limits, in one list: docs/guard.md.

    Every decision is a `GuardEvent`, delivered in order to `events`, to `on_event` and to the
    stdlib logger `conduit_mcp.guard` (WARNING for refusals and rejections, INFO otherwise).

    Args:
        server_id: the operator-assigned id of the server (non-empty `str`); keys the pins.
        pins: a `PinStore` that persists across sessions (a file or URL), or `None` (default):
            a private in-memory store for the guard's life, so a rug pull within one session
            is still caught. A caller's store is never closed by the guard, and with one the
            default `new` policy is `"hold"` (new tools left out of the model's listing, calls
            refused, until `approve(name, approver=...)`): pass `new="pin"` to write
            trust-on-first-use pins into it (approver `"conduit-mcp guard"`).
        trusted: whether the operator trusts this server's self-description (passed to
            `intake`; affects `Intake.hints` only).
        on_event: called with each `GuardEvent`, synchronously, in order; what it raises is
            logged, never propagated.
        max_events: how many events `events` keeps (oldest dropped first).
        **policy: `new` ("pin" | "allow" | "hold" | "block"), `changed` ("block" | "allow" |
            "hold"), `cosmetic` ("accept" | "changed"; "changed" with a caller's store),
            `check_arguments` (bool), `invalid_output` ("withhold" | "flag" | "pass"),
            `output_timeout` (seconds), `sdk_output_schema` ("hide_unsafe" | "keep"),
            `tool_text` ("clean" | "block"), `result_text` ("clean" | "pass"), `model_text`
            ("clean" | "block" | "pass": instructions, prompts, resources, completions,
            elicitation, sampling and log messages), `max_tools` (int, the private store's
            bound per server); see `Policy` for meanings and defaults.

    Raises:
        TypeError: an unknown policy keyword, or an argument of the wrong type.
        ValueError: an empty `server_id`, or a policy value outside its choices.

    Spec: MCP 2026-07-28 server/tools ("Listing Tools", "Calling Tools", "Output Schema": the
    client SHOULD validate structured results; "Error Handling"; "Security Considerations":
    clients SHOULD validate tool results and treat annotations as untrusted);
    basic/lifecycle "Version Negotiation"; basic/transports "Custom Headers from Tool
    Parameters" (MUST exclude a tool with an invalid `x-mcp-header`).

    >>> guard = Guard("demo")
    >>> guard.policy.changed
    'block'
    """

    def __init__(
        self,
        server_id: str,
        *,
        pins: PinStore | None = None,
        trusted: bool = False,
        on_event: Callable[[GuardEvent], object] | None = None,
        max_events: int = MAX_EVENTS,
        **policy: Any,
    ) -> None:
        check_server_id(server_id)
        if pins is not None and not isinstance(pins, PinStore):
            raise TypeError(f"pins must be a PinStore or None, got {type(pins).__name__}")
        if not isinstance(trusted, bool):
            raise TypeError("trusted must be a bool")
        if on_event is not None and not callable(on_event):
            raise TypeError("on_event must be callable")
        if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1:
            raise ValueError("max_events must be a positive int")
        self.server_id: Final = server_id
        self.trusted: Final = trusted
        options = dict(policy)
        if pins is not None:
            # A caller's store may be a team's: never written without a person's name.
            options.setdefault("new", "hold")
            options.setdefault("cosmetic", "changed")
        self.policy: Final[Policy] = make_policy(options)
        self._owns_pins = pins is None
        self.pins: Final[PinStore] = pins if pins is not None else PinStore(":memory:")
        if self._owns_pins:
            weakref.finalize(self, self.pins.close)
        self._sink = EventSink(on_event, max_events)
        #: what every connection of this guard shares (tool states included).
        self._shared = Shared(
            server_id, trusted, self.policy, self.pins, self._owns_pins, self._sink
        )
        self._tools: dict[str, ToolState] = self._shared.book.tools
        #: a caller's store: after an outage, the tools listed again once it answers.
        if pins is not None:
            self._shared.recheck = Recheck(_bind(pins.pin, server_id, ""), _relist)
        #: a caller's store: approvals and revocations made elsewhere, within a second.
        self._watcher = _checks.watch_pins(self) if pins is not None else None
        if self._watcher is not None:
            weakref.finalize(self, self._watcher.close)

    # -- public ----------------------------------------------------------------------------

    @property
    def events(self) -> tuple[GuardEvent, ...]:
        """Every event so far (at most `max_events`, oldest first), as an immutable tuple."""
        return self._sink.events

    def wrap_streams(
        self, read_stream: Any, write_stream: Any, *, transport: Transport = "stdio"
    ) -> tuple[Any, Any]:
        """Wrap a transport's stream pair; returns the pair `mcp.ClientSession(read, write)` takes.

        Args:
            read_stream: the transport's receive stream of `SessionMessage | Exception`, of
                the installed SDK: mcp 2.x, or mcp 1.x (>= 1.24, whose `SessionMessage` holds
                a `JSONRPCMessage`). An item that is neither an exception nor one of that
                SDK's JSON-RPC messages is dropped (event `unchecked`, reason
                `unrecognized_message`).
            write_stream: the transport's send stream of `SessionMessage`; an item the guard
                does not recognise is never written (the same event).
            transport: `"stdio"` (default; also right for in-memory streams) or
                `"streamable-http"`; decides whether `x-mcp-header` rules apply (Streamable
                HTTP from 2026-07-28). The SDK-transport wrappers (`stdio_client`,
                `streamable_http_client`, `fastmcp_transport`) pass it for you.

        Returns:
            `(read, write)`: objects with the stream methods the SDK uses (`receive`, `send`,
            `aclose`, async iteration and context management), each forwarding to the one it
            wraps. The protocol version is learned from this connection's `initialize`
            response (or the `_meta` protocol version a 2026-07-28 client stamps on each
            request), never assumed. Until it is known (or when it is one this library does
            not know), a `tools/list` page passes unchanged with a `list_unreadable` event and
            its tools stay unknown, so calls to them are refused (fail closed).

        Raises:
            ValueError: `transport` is not one of the two transports.
        """
        from ._engine import Engine
        from ._streams import Connection, GuardedReadStream, GuardedWriteStream

        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {list(TRANSPORTS)}, got {transport!r}")
        connection = Connection(Engine(self._shared, transport))
        read = GuardedReadStream(read_stream, connection)
        write = GuardedWriteStream(write_stream, connection)
        connection.reader = read
        connection.server = write_stream
        return read, write

    def engine(self, *, transport: Transport = "stdio") -> Engine:
        """One connection's decisions over plain JSON-RPC 2.0 messages, for a seam that reads
        the wire itself (the stdio proxy parses each line once and relays the bytes).

        The seam hands the engine every message of the connection, in order: `await
        engine.outbound(message)` for each one the client writes, `await
        engine.inbound(message)` for each one the server sends (`message`: the JSON-RPC
        object as a `dict`, `id`, `method`, `params`, `result`, `error` as on the wire). Each
        returns a frozen `Verdict` that the seam must apply: `action` `"pass"` (send the
        message on as received), `"replace"` (send `Verdict.message` instead), `"drop"` (send
        nothing), `"answer"` (an outgoing request is not written; `Verdict.message`, a
        JSON-RPC response, goes back to the client as its answer). Neither method raises
        (except cancellation). `wrap_streams` is this engine behind the SDK's stream pair.

        From a task on the seam's event loop, `engine.send_notices_to(send)` hands the guard's
        own notifications (`notifications/tools/list_changed`) to `send(messages)`, and
        `engine.send_requests_to(write)` lets the guard write its own requests and responses
        to the server with `await write(message)` (its listing after a pin store outage, its
        refusal of a server request); their answers come back through `inbound`.

        Args:
            transport: `"stdio"` (default) or `"streamable-http"` (as `wrap_streams`).

        Returns:
            A new engine sharing this guard's tool states, pins, policy and events.

        Raises:
            ValueError: `transport` is not one of the two transports.
        """
        from ._engine import Engine

        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {list(TRANSPORTS)}, got {transport!r}")
        return Engine(self._shared, transport)

    def transport(
        self, inner: AbstractAsyncContextManager[Any], *, transport: Transport = "stdio"
    ) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """Wrap an SDK client transport: the result is a transport too.

        Use it where the SDK takes a transport, e.g. `mcp.Client(guard.transport(t))`, or
        `async with guard.transport(t) as (read, write): ClientSession(read, write)`.

        Args:
            inner: an async context manager yielding `(read_stream, write_stream)` (the SDK's
                `Transport`: `stdio_client(...)`, `streamable_http_client(...)`, your own).
            transport: as `wrap_streams` (`"stdio"` default, or `"streamable-http"`).

        Returns:
            An async context manager (single use, like the SDK's) yielding the guarded pair.

        Seam: mcp 2.3.0 `mcp.client._transport.Transport`.
        """
        from ._sdk import guarded_transport

        return guarded_transport(self, inner, transport)

    def stdio_client(
        self, server: Any, **kwargs: Any
    ) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """`mcp.client.stdio.stdio_client(server, **kwargs)`, guarded (transport `"stdio"`).

        Unless the caller set it, the server's `encoding_error_handler` is `"replace"` (on a
        copy; `server` is not changed): under the SDK's default `"strict"` one line of stdout
        that is not UTF-8 raises in the SDK's reader and ends the session before the guard sees
        a message; replaced, the line is just not JSON, and the SDK skips it. (A message
        nested deeper than the SDK's JSON parser allows, 200 arrays/objects with the
        JSON-RPC envelope, fails in the SDK the same way, before the guard: an SDK limit the
        guard cannot reach.)

        Args:
            server: an `mcp.StdioServerParameters`.
            **kwargs: passed on (e.g. `errlog`).

        Returns:
            The SDK transport, guarded: pass it to `mcp.Client(...)` or enter it yourself.
        """
        from mcp.client.stdio import stdio_client

        fields = getattr(type(server), "model_fields", {})
        if "encoding_error_handler" in fields and "encoding_error_handler" not in getattr(
            server, "model_fields_set", {"encoding_error_handler"}
        ):
            server = server.model_copy(update={"encoding_error_handler": "replace"})
        return self.transport(stdio_client(server, **kwargs), transport="stdio")

    def streamable_http_client(
        self, url: str, **kwargs: Any
    ) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        """`mcp.client.streamable_http.streamable_http_client(url, **kwargs)`, guarded
        (transport `"streamable-http"`).

        Returns:
            The SDK transport, guarded: pass it to `mcp.Client(...)` or enter it yourself.
        """
        from mcp.client.streamable_http import streamable_http_client

        return self.transport(streamable_http_client(url, **kwargs), transport="streamable-http")

    def fastmcp_transport(self, target: Any) -> Any:
        """A FastMCP client transport with the guard on its streams: `fastmcp.Client(it)`.

        Args:
            target: anything `fastmcp.Client(...)` accepts: a `ClientTransport`, a URL
                (Streamable HTTP), a script path (stdio), a FastMCP server (in memory), an MCP
                config dict.

        Returns:
            A `fastmcp.client.transports.ClientTransport` that delegates to the inferred
            transport; its transport kind is `"streamable-http"` for a
            `StreamableHttpTransport`, else `"stdio"`.

        Raises:
            ImportError: fastmcp is not installed.
            ValueError: as `fastmcp`'s `infer_transport` for a target it cannot use.

        Seam: fastmcp 4.1.6 `ClientTransport.connect_session(transport_options=...)`, whose
        `TransportOptions.session_class` every FastMCP transport instantiates over the SDK's
        stream pair.
        """
        from ._fastmcp import fastmcp_transport

        return fastmcp_transport(self, target)

    def approve(self, name: str, *, approver: str, fingerprint: str | None = None) -> bool:
        """Approve the current definition of a held or blocked tool: pin it and allow calls.

        Only a tool the guard holds (`tool_status(name)` is `"held"`) or blocked by policy
        (`"blocked"`: new, changed or revoked) is approved; anything else returns `False`
        and writes nothing (no pin, no audit row).

        Args:
            name: the tool name as listed.
            approver: who approves (required, e.g. `"alice@example.com"`): recorded with the
                pin and in the store's audit log, so a shared store says who trusted what.
            fingerprint: the fingerprint of the definition the person reviewed (the held
                event's `details["fingerprint"]`, or `pending_fingerprint(name)`). When given,
                a definition the server swapped in since (a re-listing after the review) is
                not approved: `False`, nothing written. Pass it whenever a person reviewed.

        Returns:
            `True` when the definition was pinned; `False` when the guard neither holds nor
            blocks a definition under that name (never listed, already allowed, rejected at
            intake, or blocked because the guard could not check its listing), or holds one
            whose fingerprint is not `fingerprint`.

        Raises:
            TypeError: `approver` is not a `str`.
            ValueError: `approver` is empty or holds a lone surrogate.
            sqlite3.Error, psycopg.Error: the pin store cannot be written (nothing changes).

        Spec: conduit-defined; serves MCP 2026-07-28 server/tools "Security Considerations"
        (clients SHOULD prompt for user confirmation on sensitive operations; MCP has no
        approval step of its own).
        """
        if not isinstance(approver, str):
            raise TypeError(f"approver must be a str, got {type(approver).__name__}")
        if not approver.strip():
            raise ValueError("approver must name who approves (non-empty)")
        state = self._tools.get(name)
        if (
            state is None
            or state.tool is None
            or state.status not in ("held", "blocked")
            or state.reason in ("guard_internal_error", "pin_store_unavailable")
        ):
            return False
        if fingerprint is not None and state.tool.fingerprint != fingerprint:
            return False  # not the definition the person reviewed
        self.pins.approve(self.server_id, state.tool, approver=approver)
        book = self._shared.book
        book.pinned[name] = state.tool.fingerprint
        if self._owns_pins:
            book.checked.add(name)  # a person's approval past `max_tools` is kept too
        book.revoked.discard(name)
        state.status = "ok"
        state.reason = ""
        self._shared.notices.changed(name)  # listed to the client from now on
        return True

    def approve_instructions(self, *, approver: str, fingerprint: str | None = None) -> bool:
        """Approve the server's instructions the guard holds or blocks (new or changed): pin
        them; clients see them from their next `initialize` (`server/discover`) on.

        Args:
            approver: who approves (required): recorded with the approval.
            fingerprint: the fingerprint of the text the person reviewed (the
                `instructions_new` / `instructions_changed` event's `details["fingerprint"]`,
                or `conduit-mcp pins pending`): when the server sent another text since,
                nothing is approved.

        Returns:
            `True` when the instructions were approved; `False` when none wait (none seen,
            already approved or passed) or they are not the text reviewed.

        Raises:
            TypeError: `approver` is not a `str`.
            ValueError: `approver` is empty or holds a lone surrogate.
            sqlite3.Error, psycopg.Error: the pin store cannot be written (nothing changes).

        Spec: conduit-defined; MCP 2025-11-25 basic/lifecycle (`InitializeResult.instructions`
        MAY be added to the model's system prompt: what the model is told, reviewed).
        """
        if not isinstance(approver, str):
            raise TypeError(f"approver must be a str, got {type(approver).__name__}")
        if not approver.strip():
            raise ValueError("approver must name who approves (non-empty)")
        state = self._shared.book.instructions
        if state is None or state.status not in ("held", "blocked"):
            return False
        if fingerprint is not None and fingerprint.removeprefix(
            "jcs-sha256:"
        ) != state.fingerprint.removeprefix("jcs-sha256:"):
            return False
        done = self.pins.approve_instructions(
            self.server_id, state.text, approver=approver, fingerprint=state.fingerprint
        )
        if done is None:
            return False
        state.status = "ok"
        state.reason = ""
        return True

    def pending_fingerprint(self, name: str) -> str | None:
        """The fingerprint of the definition held or blocked under `name` (what `approve`
        would pin), or `None` when the guard holds or blocks none."""
        state = self._tools.get(name)
        if state is None or state.tool is None or state.status not in ("held", "blocked"):
            return None
        return state.tool.fingerprint

    def awaiting_approval(self) -> dict[str, str]:
        """The tools held for approval now: name -> `"new"`, `"changed"`, `"lookalike"` (a
        new name that looks like a known one, held under `changed="hold"`) or `"limit"` (a
        new name past the private store's `max_tools`).

        A held tool is left out of the listing the SDK (and so the model) sees and its calls
        are refused (`tool_held`) until `approve(name, approver=...)`; the pin store's audit
        log holds a `"check"` row with the held definition's fingerprint (outcome `"new"` or
        `"changed"`). After approving, list again: the next listing shows the tool.

        Returns:
            A new dict, in the order the tools were first listed.
        """
        return {name: state.reason for name, state in self._tools.items() if state.status == "held"}

    def tool_status(self, name: str) -> str | None:
        """`"ok"`, `"rejected"`, `"blocked"`, `"held"`, or `None` for a name never listed."""
        state = self._tools.get(name)
        return None if state is None else state.status

    def close(self) -> None:
        """Close the private pin store (a caller's `PinStore` is left open; its change feed
        stops). Idempotent."""
        if self._watcher is not None:
            self._watcher.close()
        if self._shared.recheck is not None:
            self._shared.recheck.close()
        if self._owns_pins:
            self.pins.close()

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Guard(server_id={self.server_id!r}, policy={self.policy!r})"

    # -- internal --------------------------------------------------------------------------

    def _emit(self, event: GuardEvent) -> None:
        self._sink.emit(event)


def _relist(connections: list[Any]) -> None:
    """Once the pin store answers after an outage: each connection that withheld a page lists
    the tools again by itself (`_recheck`)."""
    for connection in connections:
        connection.relist_soon()
