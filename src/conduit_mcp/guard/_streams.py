"""The stream pair the SDK talks through, and the per-connection state behind it.

Not a public module. `GuardedWriteStream.send` gates `tools/call` requests (a refusal is
queued as a local error response and never written); `GuardedReadStream.receive` reads every
server message before the SDK: `tools/list` pages and `tools/call` results are rewritten when a
decision says so, a response to a call the server was never sent is dropped, everything else is
handed on as received (the same object). Responses are matched to requests with the SDK's own
`coerce_request_id`, so every id spelling the SDK accepts is checked.

Structured concurrency: no task is started here. A local response wakes a reader parked on
the transport by cancelling the reader's own inner cancel scope; anyio delivers that
cancellation only to a task whose wait has not completed, so a message the transport already
handed over is never lost (memory object streams are cancel-safe).
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import orjson
from conduit_mcp_wire import VERSIONS as KNOWN_VERSIONS
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp_types import PROTOCOL_VERSION_META_KEY

from ..client import (
    Error,
    InputRequired,
    Intake,
    OutputValidation,
    PathItem,
    Tool,
    intake,
    parse_call_result,
    render_path,
    version_supports,
)
from . import _checks
from ._events import GuardEvent, logger
from ._guard import ToolState
from ._jsonrpc import (
    INVALID_RESULT_CODE,
    REFUSED_CALL_CODE,
    error_response,
    result_response,
    withheld_result,
)
from ._sdkcheck import sdk_refusals, sdk_result_refusal
from ._sdkschema import unsafe_output_schema

if TYPE_CHECKING:
    from ._guard import Guard, Transport

#: Requests remembered while their response is outstanding (oldest forgotten first).
MAX_PENDING: Final = 4096
#: tools/list pages whose intake a connection keeps for re-listings (most recent first kept).
_PAGE_CACHE_SIZE: Final = 8

_LIST: Final = "tools/list"
_CALL: Final = "tools/call"


class _Pending:
    __slots__ = ("cursor", "gating", "method", "name", "state", "tool")

    def __init__(
        self,
        method: str,
        name: str | None,
        tool: Tool | None,
        cursor: bool,
        state: ToolState | None = None,
        gating: bool = False,
    ) -> None:
        self.method = method
        self.name = name
        self.tool = tool
        self.cursor = cursor
        self.state = state  # the tool's state when the call went out (per-tool memos)
        #: the call is still being checked: not written, so no response can be its answer.
        self.gating = gating


class Connection:
    """One wrapped stream pair: its transport, negotiated version, requests in flight."""

    def __init__(self, guard: Guard, transport: Transport) -> None:
        self.guard = guard
        self.transport: Transport = transport
        self._version: str | None = None
        self._known: str | None = None
        self._structured = False  # outputSchema exists at the version (2025-06-18 on)
        self._result_type = False  # results carry resultType (2026-07-28 on)
        #: requests in flight, keyed by `coerce_request_id` of their id (as the SDK keys them).
        self.pending: dict[Any, _Pending] = {}
        #: ids of refused calls (answered locally, never written), most recent last.
        self.refused: collections.OrderedDict[Any, None] = collections.OrderedDict()
        self.local: collections.deque[SessionMessage] = collections.deque()
        self.reader: GuardedReadStream | None = None
        #: names of the listing being paged through (None: no listing in progress).
        self.listing: set[str] | None = None
        #: (version, page JSON bytes) -> (the page as parsed back, its Intake, tool indexes).
        self._pages: collections.OrderedDict[
            tuple[str, bytes | None], tuple[Any, Intake, list[int]]
        ] = collections.OrderedDict()

    # -- small helpers ---------------------------------------------------------------------

    def emit(self, kind: str, tool: str | None, reason: str, decision: str, **kw: Any) -> None:
        self.guard._emit(
            GuardEvent(kind, tool, reason, decision, server_id=self.guard.server_id, **kw)
        )

    def reject(
        self,
        into: list[tuple[int, GuardEvent]],
        index: int,
        kind: str,
        tool: str | None,
        reason: str,
        decision: str,
        **kw: Any,
    ) -> None:
        event = GuardEvent(kind, tool, reason, decision, server_id=self.guard.server_id, **kw)
        into.append((index, event))

    def inject(self, message: SessionMessage) -> None:
        self.local.append(message)
        if self.reader is not None:
            self.reader.wake()

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

    def _take_pending(self, request_id: Any) -> _Pending | None:
        """The request a response answers, keyed as the SDK keys it: mcp 2.3.0 correlates with
        `coerce_request_id` (`int(id)` for a string: " 5", "+5", "٥", "0005" are all 5), so
        the guard uses the SDK's own function and no spelling reaches the SDK unchecked."""
        return self.pending.pop(coerce_request_id(request_id), None)

    def _remember(self, request_id: Any, pending: _Pending) -> None:
        key = coerce_request_id(request_id)
        self.refused.pop(key, None)  # an id reused for a new request
        self.pending[key] = pending
        if len(self.pending) > MAX_PENDING:
            self.pending.pop(next(iter(self.pending)))

    def _forget_unsent(self, request_id: Any, pending: _Pending) -> None:
        """A gated call that will not be written (refused or cancelled): from now on a server
        response to its id is dropped."""
        key = coerce_request_id(request_id)
        if self.pending.get(key) is pending:
            del self.pending[key]
        self.refused[key] = None
        if len(self.refused) > MAX_PENDING:
            self.refused.popitem(last=False)

    # -- outbound ----------------------------------------------------------------------------

    async def outbound(self, message: Any) -> SessionMessage | None:
        """Look at a message the client sends; return a local response when it is refused."""
        if not isinstance(message, JSONRPCRequest):
            return None
        params = message.params if isinstance(message.params, dict) else {}
        meta = params.get("_meta")
        if isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta:
            self.learn_version(meta[PROTOCOL_VERSION_META_KEY])
        method = message.method
        if method == _LIST:
            cursor = params.get("cursor") is not None
            if not cursor:
                self.listing = set()
            self._remember(message.id, _Pending(method, None, None, cursor))
        elif method == _CALL:
            return await self._gate_call(message, params)
        elif method == "initialize":
            self._remember(message.id, _Pending(method, None, None, False))
        return None

    async def _gate_call(
        self, message: JSONRPCRequest, params: dict[str, Any]
    ) -> SessionMessage | None:
        name = params.get("name")
        if not isinstance(name, str):
            return None  # not a call the guard can read: the server answers it
        # Registered before the first await: the SDK already waits on this id, and a response
        # the read loop sees while the call is gated is a guess at an unsent request (dropped).
        pending = _Pending(_CALL, name, None, False, gating=True)
        self._remember(message.id, pending)
        try:
            refusal = await self._refusal(name, params)
        except Exception as exc:  # a bug here must not let the call through unchecked
            logger.exception("guard failed while gating tools/call")
            refusal = ("guard_internal_error", (), f"the guard failed ({type(exc).__name__})")
        except BaseException:  # cancelled while gated: never written, so never answered
            self._forget_unsent(message.id, pending)
            raise
        if refusal is None:
            state = self.guard._tools.get(name)
            pending.tool = state.tool if state is not None else None
            pending.state = state
            pending.gating = False
            return None
        self._forget_unsent(message.id, pending)
        reason, path, why = refusal
        self.emit(
            "call_refused",
            name,
            reason,
            "refused",
            path=path,
            message=why,
            details={"request_id": message.id},
        )
        return error_response(
            message.id,
            REFUSED_CALL_CODE,
            f"conduit-mcp guard refused the call: {why}",
            reason=reason,
            tool=name,
            path=path,
        )

    async def _refusal(
        self, name: str, params: dict[str, Any]
    ) -> tuple[str, tuple[PathItem, ...], str] | None:
        state = self.guard._tools.get(name)
        if state is None:
            return "unknown_tool", ("name",), "the tool was never listed by this server"
        if state.status != "ok":
            return _STATUS_REFUSAL[state.status](state)
        tool = state.tool
        if tool is None or not self.guard.policy.check_arguments:
            return None
        version = self.known_version()
        if version is None:
            self.emit(
                "unchecked",
                name,
                "unknown_protocol_version",
                "passed",
                message="arguments not checked: protocol version unknown",
            )
            return None
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return "invalid_arguments", ("arguments",), "arguments must be an object"
        linear = state.input_linear
        if linear is None:
            linear = state.input_linear = _checks.is_linear(tool, "inputSchema")
        try:
            if linear:  # linear in the arguments: checked inline, no thread hop
                verdict = _checks.check_arguments(tool, arguments, protocol_version=version)
            else:
                check = _bind(_checks.check_arguments, tool, arguments, protocol_version=version)
                verdict = await _checks.run_bounded(check, self.guard.policy.output_timeout)
        except _checks.Timeout:
            return (
                "argument_check_timeout",
                ("arguments",),
                f"the argument check did not finish within {self.guard.policy.output_timeout} s",
            )
        if verdict.outcome != "invalid":
            return None
        first = verdict.errors[0]
        path = ("arguments", *first.path)  # from the request's params, as in `data.path`
        return (
            "invalid_arguments",
            path,
            f"arguments fail the tool's inputSchema at {render_path(path)}: {first.message}",
        )

    # -- inbound -----------------------------------------------------------------------------

    async def inbound(self, item: Any) -> Any:
        """Decide on one item from the server; returns what the SDK receives, or `DROP` for a
        response to a call never written (the reader then reads on). Never raises (except
        cancellation)."""
        if not isinstance(item, SessionMessage):
            return item
        message = item.message
        try:
            if not isinstance(message, JSONRPCResponse | JSONRPCError):
                return item
            if self._unsent(message.id):
                return DROP
            pending = self._take_pending(message.id)
            if isinstance(message, JSONRPCError):
                return item
        except Exception:
            logger.exception("guard failed to match a response; passed on unchanged")
            return item
        if pending is None:
            return item
        try:
            if pending.method == "initialize":
                self.learn_version(message.result.get("protocolVersion"))
                return item
            if pending.method == _LIST:
                return await self._on_list(item, message, pending)
            if pending.method == _CALL:
                return await self._on_call_result(item, message, pending)
        except Exception:
            logger.exception("guard failed on a %s response; passed on unchanged", pending.method)
            self.emit(
                "unchecked",
                pending.name,
                "guard_internal_error",
                "passed",
                message=f"the guard failed on a {pending.method} response",
            )
            if pending.method == _LIST:
                self._distrust_page(message.result)
        return item

    def _unsent(self, request_id: Any) -> bool:
        """Whether a response answers a call the server was never sent (still being gated, or
        refused): it is dropped with an event, so the SDK's only answer to a refused call is
        the guard's refusal, and a gated call's answer is the one the server gives after it."""
        key = coerce_request_id(request_id)
        pending = self.pending.get(key)
        if pending is not None and pending.gating:
            name: str | None = pending.name
        elif key in self.refused:
            name = None
        else:
            return False
        self.emit(
            "response_dropped",
            name,
            "response_to_unsent_request",
            "dropped",
            message="a response to a tools/call the server was never sent: dropped",
            details={"request_id": str(request_id)[:64]},
        )
        return True

    def _distrust_page(self, result: Any) -> None:
        """After a failure on a tools/list page (which then reaches the SDK unchanged): every
        tool it names is blocked, so calls to them fail closed instead of running on what the
        guard knew before (a rug pull must not pass because checking it failed)."""
        try:
            tools = result.get("tools") if isinstance(result, dict) else None
            for raw in tools if isinstance(tools, list) else ():
                name = raw.get("name") if isinstance(raw, dict) else None
                if isinstance(name, str):
                    self.guard._tools[name] = ToolState("blocked", None, "unchecked")
        except Exception:  # never into the SDK's receive loop
            logger.exception("guard failed to block the tools of an unchecked page")

    async def _on_list(
        self, item: SessionMessage, message: JSONRPCResponse, pending: _Pending
    ) -> SessionMessage:
        guard = self.guard
        result = message.result
        version = self.known_version()
        if version is None:
            self.emit(
                "list_unreadable",
                None,
                "unknown_protocol_version",
                "passed",
                message="tools/list not checked: protocol version unknown",
                details={"version": str(self.version)[:64]},
            )
            return item
        try:
            page, positions = self._intake(result, version)
        except Error as exc:
            self.emit(
                "list_unreadable", None, exc.reason, "passed", path=exc.path, message=exc.message
            )
            return item
        raw_tools: list[Any] = result["tools"]
        removed: set[int] = set()
        rejected_names: set[str] = set()
        started = self.listing is not None  # this page belongs to a listing begun without a cursor
        listing = self.listing if self.listing is not None else set()
        rejections: list[tuple[int, GuardEvent]] = []
        hidden: set[int] = set()  # indexes of tools listed without their outputSchema
        for rejection in page.rejected:
            removed.add(rejection.index)
            self.reject(
                rejections,
                rejection.index,
                "tool_rejected",
                rejection.name,
                rejection.reason,
                "removed",
                path=rejection.path,
                message=rejection.message,
            )
            if rejection.name is not None:
                rejected_names.add(rejection.name)

        # Accepted tools, with their index in the page (intake keeps server order).
        accepted: list[tuple[int, Tool]] = []
        for index, tool in zip(positions, page.tools, strict=True):
            if tool.name in listing:  # named on an earlier page of this listing
                removed.add(index)
                self.reject(
                    rejections,
                    index,
                    "tool_rejected",
                    tool.name,
                    "duplicate_tool_name",
                    "removed",
                    path=("tools", index, "name"),
                    message="an earlier page of this listing has the same name; the first wins",
                )
                continue
            accepted.append((index, tool))

        # Tools the SDK's own model would refuse (they would sink the whole page there).
        refusals = sdk_refusals([tool for _, tool in accepted], version)
        if refusals:
            kept: list[tuple[int, Tool]] = []
            for local, (index, tool) in enumerate(accepted):
                if local in refusals:
                    removed.add(index)
                    rejected_names.add(tool.name)
                    self.reject(
                        rejections,
                        index,
                        "tool_rejected",
                        tool.name,
                        "sdk_rejects_tool",
                        "removed",
                        path=("tools", index, *refusals[local]),
                        message="the MCP SDK's model for this protocol version refuses this tool",
                    )
                else:
                    kept.append((index, tool))
            accepted = kept

        # Rejections in page order, whichever check found them.
        rejections.sort(key=lambda pair: pair[0])
        for _, event in rejections:
            guard._emit(event)

        policy = guard.policy
        verdicts = await self._pin_verdicts([t for _, t in accepted])
        for (index, tool), verdict in zip(accepted, verdicts, strict=True):
            name = tool.name
            listing.add(name)
            previous = guard._last_raw.get(name)
            guard._last_raw[name] = tool.raw
            status = verdict.status
            if status == "revoked":  # new="pin", but someone revoked this tool's pin
                self.emit(
                    "tool_new",
                    name,
                    "pin_revoked",
                    "blocked",
                    path=("tools", index),
                    message="the tool's pin was revoked in the store: not pinned again (blocked)",
                )
                removed.add(index)
                _set_state(guard._tools, name, "blocked", tool, "revoked")
                continue
            if status == "new":
                decision = _NEW_DECISIONS[policy.new]
                self.emit(
                    "tool_new",
                    name,
                    "new_tool",
                    decision,
                    path=("tools", index),
                    message=f"a tool never pinned for this server ({decision})",
                )
                if policy.new == "block":
                    removed.add(index)
                    _set_state(guard._tools, name, "blocked", tool, "new")
                    continue
                if policy.new == "hold":
                    _set_state(guard._tools, name, "held", tool, "new")
                    self._hide_output_schema(index, tool, hidden)
                    continue
            elif status == "changed":
                changes = verdict.changes or (
                    _checks.top_level_changes(previous, tool.raw) if previous is not None else ()
                )
                decision = {"block": "blocked", "allow": "pinned", "hold": "held"}[policy.changed]
                self.emit(
                    "tool_changed",
                    name,
                    "tool_definition_changed",
                    decision,
                    path=("tools", index),
                    changes=changes,
                    message=f"the definition differs from its pin ({decision})",
                )
                if policy.changed == "block":
                    removed.add(index)
                    _set_state(guard._tools, name, "blocked", tool, "changed")
                    continue
                if policy.changed == "hold":
                    _set_state(guard._tools, name, "held", tool, "changed")
                    self._hide_output_schema(index, tool, hidden)
                    continue
            elif status == "cosmetic":  # issue 11's PinStore: not material, re-pinned
                self.emit(
                    "tool_changed",
                    name,
                    "cosmetic_change",
                    "pinned",
                    path=("tools", index),
                    changes=verdict.changes,
                    message="the definition differs from its pin only cosmetically (re-pinned)",
                )
            _set_state(guard._tools, name, "ok", tool, "")
            self._hide_output_schema(index, tool, hidden)

        for name in rejected_names:
            if name not in listing:
                guard._tools[name] = ToolState("rejected", None, "rejected")
                listing.add(name)

        if page.next_cursor is None:
            self._finish_listing(listing, complete=started)

        if not removed and not hidden:
            return item
        kept_raw = [
            _without_output_schema(raw) if index in hidden else raw
            for index, raw in enumerate(raw_tools)
            if index not in removed
        ]
        return result_response(message.id, {**result, "tools": kept_raw})

    def _hide_output_schema(self, index: int, tool: Tool, hidden: set[int]) -> None:
        """Policy `sdk_output_schema`: mark a listed tool whose outputSchema the SDK's own
        output check must not see: every one under `invalid_output` "flag"/"pass" (the SDK
        would raise on the result the guard lets through), else one it cannot run safely;
        one event per tool definition."""
        guard = self.guard
        policy = guard.policy
        if not self._structured:
            self._hide_pre_output_schema(index, tool, hidden)
            return
        if policy.sdk_output_schema != "hide_unsafe":
            return
        if policy.invalid_output != "withhold":
            if tool.raw.get("outputSchema") is None:
                return
            hidden.add(index)
            if guard._hidden.get(tool.name, _NOT_HIDDEN) == tool.fingerprint:
                return
            guard._hidden[tool.name] = tool.fingerprint
            self.emit(
                "output_schema_hidden",
                tool.name,
                "sdk_output_recheck",
                "hidden",
                path=("tools", index, "outputSchema"),
                message=(
                    f"outputSchema left out of the SDK's listing: under invalid_output="
                    f"{policy.invalid_output!r} the SDK's own output check would raise on a "
                    "result the guard lets through"
                ),
                details={"invalid_output": policy.invalid_output},
            )
            return
        unsafe = unsafe_output_schema(tool)
        if unsafe is None:
            return
        hidden.add(index)
        if guard._hidden.get(tool.name, _NOT_HIDDEN) == tool.fingerprint:
            return  # already reported for this definition
        guard._hidden[tool.name] = tool.fingerprint
        self.emit(
            "output_schema_hidden",
            tool.name,
            "sdk_unsafe_output_schema",
            "hidden",
            path=("tools", index, "outputSchema", *unsafe.path),
            message=(
                f"outputSchema left out of the SDK's listing: its `{unsafe.keyword}` is unsafe "
                "for the SDK's own output check (Python jsonschema); the guard validates this "
                "tool's output itself"
            ),
            details={"keyword": unsafe.keyword},
        )

    def _hide_pre_output_schema(self, index: int, tool: Tool, hidden: set[int]) -> None:
        """Before 2025-06-18 a tool has no outputSchema (spec 2025-03-26 schema `Tool`), and
        the guard checks no output there; mcp 2.3.0 still validates structuredContent against
        any outputSchema it was listed (`ClientSession._validate_tool_result`, on every
        version), where a hostile schema hangs or raises. So the SDK never sees one, whatever
        the policy; one event per tool definition."""
        if tool.raw.get("outputSchema") is None:
            return
        hidden.add(index)
        guard = self.guard
        if guard._hidden.get(tool.name, _NOT_HIDDEN) == tool.fingerprint:
            return
        guard._hidden[tool.name] = tool.fingerprint
        self.emit(
            "output_schema_hidden",
            tool.name,
            "output_schema_not_in_version",
            "hidden",
            path=("tools", index, "outputSchema"),
            message=(
                f"outputSchema left out of the SDK's listing: protocol version {self.version} "
                "has no outputSchema (it begins at 2025-06-18), so neither the guard nor the "
                "SDK validates this tool's output"
            ),
            details={"version": str(self.version)[:64]},
        )

    def _intake(self, result: dict[str, Any], version: str) -> tuple[Intake, list[int]]:
        """`intake` of a page, and each accepted tool's index in it; a page that is exactly the
        JSON of one seen lately on this connection reuses that page's intake.

        Clients list the same tools again and again, and intake's per-tool fingerprint (RFC
        8785 bytes + SHA-256) is most of a page's cost. The cache key is the page's orjson
        bytes (which tell `1`, `1.0` and `true` apart) and, on a hit, Python equality with the
        cached page as well (orjson writes NaN and infinities as `null`; `==` tells them from
        `null`): a hit is the same JSON value, so intake's answer is the same.

        Raises:
            Error: as `intake` (never cached).
        """
        try:
            data: bytes | None = orjson.dumps(result)
        except (TypeError, orjson.JSONEncodeError):  # beyond orjson (huge ints, deep nesting)
            data = None
        key = (version, data)
        if data is not None:
            hit = self._pages.get(key)
            if hit is not None and hit[0] == result:
                self._pages.move_to_end(key)
                return hit[1], hit[2]
        page = intake(
            self.guard.server_id,
            result,
            transport=self.transport,
            protocol_version=version,
            trusted=self.guard.trusted,
        )
        by_identity = {id(raw): index for index, raw in enumerate(result["tools"])}
        positions = [by_identity[id(tool.raw)] for tool in page.tools]
        if data is not None:
            self._pages[key] = (orjson.loads(data), page, positions)
            if len(self._pages) > _PAGE_CACHE_SIZE:
                self._pages.popitem(last=False)
        return page, positions

    async def _pin_verdicts(self, tools: list[Tool]) -> list[_checks.PinVerdict]:
        """The pin verdict of each tool: from the store, in one worker-thread hop.

        With the guard's private store nobody else writes the pins, so a tool the guard
        already holds as `ok` under the same fingerprint is `approved` without asking it.
        """
        guard = self.guard
        verdicts: list[_checks.PinVerdict | None] = [None] * len(tools)
        ask: list[int] = []
        for i, tool in enumerate(tools):
            if guard._owns_pins and guard._pinned.get(tool.name) == tool.fingerprint:
                verdicts[i] = _APPROVED
            else:
                ask.append(i)
        if ask:
            policy = guard.policy
            answers = await anyio.to_thread.run_sync(
                _bind(
                    _checks.pin_page,
                    guard.pins,
                    guard.server_id,
                    [tools[i] for i in ask],
                    pin_new=policy.new == "pin",
                    pin_changed=policy.changed == "allow",
                    accept_cosmetic=policy.cosmetic == "accept",
                    protocol_version=self.known_version(),
                    revoked=frozenset(guard._revoked),
                )
            )
            for i, answer in zip(ask, answers, strict=True):
                verdicts[i] = answer
                if answer.status == "revoked":
                    guard._revoked.add(tools[i].name)
                if answer.status == "approved" or answer.pinned:
                    guard._pinned[tools[i].name] = tools[i].fingerprint
        return [v if v is not None else _APPROVED for v in verdicts]

    def _finish_listing(self, listing: set[str], *, complete: bool) -> None:
        self.listing = None
        if not complete:
            return
        tools = self.guard._tools
        for name in [n for n in tools if n not in listing]:
            state = tools.pop(name)
            if state.status != "rejected":
                self.emit(
                    "tool_removed",
                    name,
                    "tool_not_listed",
                    "removed",
                    message="listed before, missing from this complete listing",
                )

    async def _on_call_result(
        self, item: SessionMessage, message: JSONRPCResponse, pending: _Pending
    ) -> SessionMessage:
        guard = self.guard
        name = pending.name
        version = self.known_version()
        if version is None:
            self.emit(
                "unchecked",
                name,
                "unknown_protocol_version",
                "passed",
                message="tools/call result not checked: protocol version unknown",
            )
            return item
        try:
            parsed = parse_call_result(message.result, protocol_version=version)
        except Error as exc:
            self.emit(
                "result_invalid",
                name,
                exc.reason,
                "answered_error",
                path=exc.path,
                message=exc.message,
            )
            return error_response(
                message.id,
                INVALID_RESULT_CODE,
                f"conduit-mcp guard: the server's tools/call result is invalid: {exc.message}",
                reason=exc.reason,
                tool=name,
                path=exc.path,
            )
        refused = sdk_result_refusal(message.result, version)
        if refused is not None:  # the SDK's own model would raise out of call_tool
            where = tuple(refused)
            self.emit(
                "result_invalid",
                name,
                "sdk_rejects_result",
                "answered_error",
                path=where,
                message="the MCP SDK's model for this protocol version refuses this result",
            )
            return error_response(
                message.id,
                INVALID_RESULT_CODE,
                "conduit-mcp guard: the MCP SDK's model refuses the server's tools/call result "
                f"at {render_path(where)}",
                reason="sdk_rejects_result",
                tool=name,
                path=where,
            )
        if isinstance(parsed, InputRequired):
            return item
        tool = pending.tool
        policy = guard.policy
        if (
            tool is None
            or policy.invalid_output == "pass"
            or parsed.is_error
            or tool.raw.get("outputSchema") is None
            or not self._structured
        ):
            return item  # nothing to validate (validate_structured would skip it)
        state = pending.state
        linear = state.output_linear if state is not None else None
        if linear is None:
            linear = _checks.is_linear(tool, "outputSchema")
            if state is not None:
                state.output_linear = linear
        try:
            if linear:  # linear in the value: checked inline
                verdict: OutputValidation = _checks.validate_output(
                    parsed, tool, protocol_version=version
                )
            else:
                check = _bind(_checks.validate_output, parsed, tool, protocol_version=version)
                verdict = await _checks.run_bounded(check, policy.output_timeout)
        except _checks.Timeout:
            reason = "output_validation_timeout"
            why = (
                f"structuredContent could not be validated within {policy.output_timeout} s "
                "against the tool's outputSchema"
            )
            path: tuple[PathItem, ...] = ("structuredContent",)
            count = 0
        else:
            if verdict.outcome != "invalid":
                return item
            first = verdict.errors[0]
            reason = "invalid_structured_content"
            path = ("structuredContent", *first.path)
            count = len(verdict.errors)
            why = (
                f"structuredContent fails the tool's outputSchema ({count} issue(s); "
                f"first at {render_path(path)}: {first.message})"
            )
        decision = "withheld" if policy.invalid_output == "withhold" else "flagged"
        self.emit(
            "output_invalid",
            name,
            reason,
            decision,
            path=path,
            message=why,
            details={"issues": count},
        )
        if decision == "flagged":
            return item
        return result_response(
            message.id,
            withheld_result(
                f"conduit-mcp guard withheld this result: {why}",
                result_type=self._result_type,
            ),
        )


_BLOCKED_WHY: Final = {
    "changed": "the tool's definition changed since it was pinned",
    "revoked": "the tool's pin was revoked in the pin store",
}

_STATUS_REFUSAL: Final[dict[str, Callable[[ToolState], tuple[str, tuple[PathItem, ...], str]]]] = {
    "rejected": lambda s: ("tool_rejected", ("name",), "the tool was rejected when listed"),
    "blocked": lambda s: (
        ("guard_internal_error", ("name",), "the guard failed while checking this tool's listing")
        if s.reason == "unchecked"
        else (
            "tool_blocked",
            ("name",),
            (_BLOCKED_WHY.get(s.reason, "new tools are blocked for this server")),
        )
    ),
    "held": lambda s: (
        "tool_held",
        ("name",),
        (
            "the tool is new and awaits approval"
            if s.reason == "new"
            else "the tool changed and awaits approval"
        ),
    ),
}

_NEW_DECISIONS: Final = {"pin": "pinned", "allow": "allowed", "hold": "held", "block": "blocked"}


_APPROVED: Final = _checks.PinVerdict("approved", False)
#: What `Connection.inbound` returns for a message the SDK must not receive.
DROP: Final = object()
_NOT_HIDDEN: Final = object()


def _without_output_schema(raw: Any) -> Any:
    """A copy of a tool definition without `outputSchema` (the server's dict is left as is)."""
    return {key: value for key, value in raw.items() if key != "outputSchema"}


def _set_state(
    tools: dict[str, ToolState], name: str, status: str, tool: Tool, reason: str
) -> None:
    """Record a listed tool's state; an unchanged one (same status, same definition) keeps its
    state object, so its per-tool memos and the validators compiled for its schema objects
    stay warm across listings."""
    old = tools.get(name)
    if (
        old is not None
        and old.status == status
        and old.reason == reason
        and old.tool is not None
        and tool.fingerprint is not None
        and old.tool.fingerprint == tool.fingerprint
    ):
        return
    tools[name] = ToolState(status, tool, reason)  # type: ignore[arg-type]


def _bind(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    def call() -> Any:
        return fn(*args, **kwargs)

    return call


# -- the streams ----------------------------------------------------------------------------


class _GuardedStream:
    """What both guarded ends share: the wrapped stream, the connection, closing."""

    def __init__(self, inner: Any, connection: Connection) -> None:
        self._inner = inner
        self._connection = connection

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()

    async def __aenter__(self: _S) -> _S:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


_S = TypeVar("_S", bound=_GuardedStream)


class GuardedReadStream(_GuardedStream):
    """The receive side the SDK reads: server messages after the guard's decisions."""

    def __init__(self, inner: Any, connection: Connection) -> None:
        super().__init__(inner, connection)
        self._waiting: anyio.CancelScope | None = None
        #: the sender's contextvars snapshot for the last item (Streamable HTTP), for the SDK.
        self.last_context: Any = None

    def wake(self) -> None:
        scope = self._waiting
        if scope is not None:
            scope.cancel()

    async def receive(self) -> Any:
        connection = self._connection
        while True:
            if connection.local:
                self.last_context = None
                return connection.local.popleft()
            got = False
            item: Any = None
            with anyio.CancelScope() as scope:
                self._waiting = scope
                try:
                    item = await self._inner.receive()
                    got = True
                finally:
                    self._waiting = None
            if not got:
                continue  # woken for a local response
            self.last_context = getattr(self._inner, "last_context", None)
            decided = await connection.inbound(item)
            if decided is not DROP:
                return decided

    def __aiter__(self) -> GuardedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class GuardedWriteStream(_GuardedStream):
    """The send side the SDK writes: refused `tools/call` requests stop here."""

    async def send(self, item: Any, /) -> None:
        connection = self._connection
        if isinstance(item, SessionMessage):
            try:
                local = await connection.outbound(item.message)
            except Exception:
                logging.getLogger("conduit_mcp.guard").exception(
                    "guard failed on an outgoing message"
                )
                local = None
            if local is not None:
                connection.inject(local)
                return
        await self._inner.send(item)
