"""The engine's common part: the frozen `Verdict`, and what every decision reads (the
connection's version, requests in flight, page cache, the guard's shared state).

Not a public module. No SDK import.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, final

from conduit_mcp_wire import VERSIONS as KNOWN_VERSIONS

from ..client import (
    version_supports,
)
from ..pins import redacted_location
from ._events import GuardEvent
from ._notify import ListChangedNotice, loop_scheduler
from ._recheck import loop_spawner
from ._state import (
    Outstanding,
    PageCache,
    Shared,
    Transport,
)

_LIST: Final = "tools/list"
_CALL: Final = "tools/call"
_CANCELLED: Final = "notifications/cancelled"
_SAMPLING: Final = "sampling/createMessage"
#: `_meta` keys a 2026-07-28 client stamps on each request (spec 2026-07-28 basic/lifecycle).
PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY: Final = "io.modelcontextprotocol/clientCapabilities"

Action = Literal["pass", "replace", "drop", "answer"]


@final  # `type(v) is Verdict` tells a verdict from a decision that must wait
@dataclass(frozen=True, slots=True)
class Verdict:
    """What becomes of one message.

    `action`: `"pass"` (on as received), `"replace"` (the SDK receives `message` instead),
    `"drop"` (nobody receives it), `"answer"` (an outgoing request is not written; the SDK
    receives `message`, a JSON-RPC response, as its answer).
    """

    action: Action
    message: dict[str, Any] | None = None


PASS: Final = Verdict("pass")
DROP: Final = Verdict("drop")


def _replace(message: dict[str, Any]) -> Verdict:
    return Verdict("replace", message)


class EngineBase:
    """One connection's state and the helpers every kind of decision uses."""

    def __init__(self, shared: Shared, transport: Transport) -> None:
        self.shared = shared
        self.transport: Transport = transport
        self._version: str | None = None
        self._known: str | None = None
        self._structured = False  # outputSchema exists at the version (2025-06-18 on)
        self._result_type = False  # results carry resultType (2026-07-28 on)
        self.outstanding = Outstanding()
        #: names of the listing being paged through (None: no listing in progress).
        self.listing: set[str] | None = None
        self._pages = PageCache()
        #: extensions the client advertised at `initialize` (a 2026-07-28 client says so in
        #: each request's `_meta` instead).
        self._extensions: tuple[str, ...] = ()
        #: this connection's `notifications/tools/list_changed` (`_notify`).
        self.notice = ListChangedNotice()
        shared.notices.join(self.notice)
        #: how a request of the guard's own reaches the server (`send_requests_to`): the
        #: loop's spawner and the seam's writer; `None` until the seam gives one.
        self._requests: tuple[Any, Callable[[dict[str, Any]], Awaitable[None]]] | None = None
        #: the `_meta` of the client's last request stamped with the protocol version
        #: (2026-07-28): a request of the guard's own carries its envelope too.
        self._envelope: dict[str, Any] | None = None

    def send_notices_to(self, send: Callable[[list[dict[str, Any]]], None]) -> None:
        """Have this connection's own notifications of the guard (`notifications/tools/
        list_changed`, MCP "Tools: List Changed Notification") handed to `send` on the running
        event loop, as plain JSON-RPC dicts, for a seam that writes to the client itself.
        Call it once, from a task on the loop the seam runs on; outside a known loop nothing
        is delivered (the client sees the change at its next listing)."""
        notice = self.notice

        def due() -> None:
            messages = notice.take()
            if messages:
                send(messages)

        notice.deliver = loop_scheduler(due)

    def send_requests_to(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """Let this connection write requests of the guard's own to the server: `await
        send(message)` writes one plain JSON-RPC request, on the running event loop (the
        listing after a pin store outage, `_recheck`); its response comes back through the
        seam like any other and is kept from the client. Call it once, from a task on the
        loop the seam runs on; outside a known loop nothing is sent (the client's next
        listing restores what an outage withheld)."""
        spawn = loop_spawner()
        if spawn is not None:
            self._requests = (spawn, send)

    def answer_server(self, response: dict[str, Any]) -> bool:
        """Write `response` (a JSON-RPC response of the guard's own: a server request it
        refuses) to the server, on the connection's loop; `False` when the seam gave no way
        to (`send_requests_to`): the server's request then goes unanswered (its timeout)."""
        requests = self._requests
        if requests is None:
            return False
        spawn, send = requests
        try:
            spawn(lambda: send(response))
        except RuntimeError:  # the loop is closed
            return False
        return True

    # -- small helpers ---------------------------------------------------------------------

    def emit(self, kind: str, tool: str | None, reason: str, decision: str, **kw: Any) -> None:
        self.shared.emit(kind, tool, reason, decision, **kw)

    def _event(
        self, kind: str, tool: str | None, reason: str, decision: str, **kw: Any
    ) -> GuardEvent:
        return GuardEvent(kind, tool, reason, decision, server_id=self.shared.server_id, **kw)

    @property
    def version(self) -> str | None:
        """The protocol version learned on this connection (`None` until known)."""
        return self._version

    @version.setter
    def version(self, version: str | None) -> None:
        # What each message asks of the version is worked out once, here.
        self._version = version
        known = version if version in KNOWN_VERSIONS else None
        self._known = known
        self._structured = known is not None and version_supports(known, "output_schema")
        self._result_type = known is not None and version_supports(known, "result_type")

    def learn_version(self, version: object) -> None:
        if isinstance(version, str) and version and version != self._version:
            self.version = version

    def known_version(self) -> str | None:
        return self._known


def _extension_ids(capabilities: Any) -> tuple[str, ...]:
    """The identifiers under `capabilities.extensions` (strings only; none when malformed)."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    if not isinstance(extensions, dict):
        return ()
    return tuple(key for key in extensions if isinstance(key, str))


def _cause(exc: BaseException) -> dict[str, Any]:
    """An event's account of an exception: its type and first line, credentials redacted
    (a `scheme://user:password@` part is written `***`), at most 300 characters."""
    text = str(exc).strip().splitlines()
    first = redacted_location(text[0]) if text else ""
    return {"error": type(exc).__name__, "cause": first[:300]}


def _bind(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    def call() -> Any:
        return fn(*args, **kwargs)

    return call
