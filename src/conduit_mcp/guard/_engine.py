"""The guard's decisions over parsed JSON-RPC messages: one `Engine` per connection.

Not a public module. No SDK import: a message is the plain JSON-RPC 2.0 dict (`id`, `method`,
`params`, `result`, `error`), and every decision comes back as a frozen `Verdict` that a seam
(`_streams`: the SDK's stream pair) applies. The bookkeeping lives in `_state` (tool states,
requests in flight, page cache); the status x policy outcomes in `_policy.OUTCOMES`.

Requests are matched to responses as the SDK matches them (`_state.coerce_id`). A response
that answers no live request of the guard's own is dropped: the guard remembers every request
the client writes until its response arrives or the client abandons it
(`notifications/cancelled`), so the SDK waits on no id the guard has forgotten, and a forged
or late answer never reaches the SDK unchecked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson
from conduit_mcp_wire import VERSIONS as KNOWN_VERSIONS

from ..client import (
    Error,
    ExtensionResult,
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
from ..pins import FieldChange, redacted_location
from . import _checks
from ._events import GuardEvent, logger
from ._jsonrpc import (
    INVALID_RESULT_CODE,
    REFUSED_CALL_CODE,
    error_response,
    result_response,
    withheld_result,
)
from ._policy import OUTCOMES
from ._sdkcheck import sdk_refusals, sdk_result_refusal
from ._sdkschema import unsafe_output_schema
from ._state import (
    Outstanding,
    PageCache,
    Pending,
    Shared,
    ToolState,
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


class Engine:
    """One connection's decisions: its transport, negotiated version, requests in flight."""

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

    # -- outbound ----------------------------------------------------------------------------

    async def outbound(self, message: dict[str, Any]) -> Verdict:
        """Decide on one message the client writes. Never raises (except cancellation): a
        failure refuses a `tools/call` (`guard_internal_error`) and passes anything else."""
        method = message.get("method")
        if not isinstance(method, str):
            return PASS  # the client's answer to a server request
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if "id" not in message:
            if method == _CANCELLED:
                self.outstanding.cancel(params.get("requestId"))
            return PASS
        meta = params.get("_meta")
        extensions = self._extensions
        if isinstance(meta, dict):
            if PROTOCOL_VERSION_META_KEY in meta:
                self.learn_version(meta[PROTOCOL_VERSION_META_KEY])
            if CLIENT_CAPABILITIES_META_KEY in meta:
                extensions = _extension_ids(meta[CLIENT_CAPABILITIES_META_KEY])
        elif method == "initialize":
            self._extensions = extensions = _extension_ids(params.get("capabilities"))
        request_id = message["id"]
        if method == _CALL and isinstance(params.get("name"), str):
            return await self._gate_call(request_id, params, extensions)
        pending = Pending(method, cursor=params.get("cursor") is not None)
        if not self.outstanding.add(request_id, pending):
            return self._too_many(request_id, method, None)
        if method == _LIST and not pending.cursor:
            self.listing = set()
        return PASS

    def _too_many(self, request_id: Any, method: str, name: str | None) -> Verdict:
        limit = self.outstanding.limit
        why = f"{limit} requests already await their response on this connection"
        self.emit(
            "call_refused" if method == _CALL else "request_refused",
            name,
            "too_many_outstanding_requests",
            "refused",
            message=why,
            details={"request_id": str(request_id)[:64], "method": method[:64]},
        )
        code = REFUSED_CALL_CODE if method == _CALL else INVALID_RESULT_CODE
        return Verdict(
            "answer",
            error_response(
                request_id,
                code,
                f"conduit-mcp guard refused the request: {why}",
                reason="too_many_outstanding_requests",
                tool=name,
                path=(),
            ),
        )

    async def _gate_call(
        self, request_id: Any, params: dict[str, Any], extensions: tuple[str, ...]
    ) -> Verdict:
        name: str = params["name"]
        # Registered before the first await: the SDK already waits on this id, and a response
        # the read loop sees while the call is gated is a guess at an unsent request (dropped).
        pending = Pending(_CALL, name, gating=True)
        pending.extensions = extensions
        if not self.outstanding.add(request_id, pending):
            return self._too_many(request_id, _CALL, name)
        try:
            refusal = await self._refusal(name, params)
        except Exception as exc:  # a bug here must not let the call through unchecked
            logger.exception("guard failed while gating tools/call")
            refusal = ("guard_internal_error", (), f"the guard failed ({type(exc).__name__})")
        except BaseException:  # cancelled while gated: never written, so never answered
            self.outstanding.forget_unsent(request_id, pending)
            raise
        if refusal is None:
            state = self.shared.book.tools.get(name)
            pending.tool = state.tool if state is not None else None
            pending.state = state
            pending.gating = False
            return PASS
        self.outstanding.forget_unsent(request_id, pending)
        reason, path, why = refusal
        self.emit(
            "call_refused",
            name,
            reason,
            "refused",
            path=path,
            message=why,
            details={"request_id": request_id},
        )
        return Verdict(
            "answer",
            error_response(
                request_id,
                REFUSED_CALL_CODE,
                f"conduit-mcp guard refused the call: {why}",
                reason=reason,
                tool=name,
                path=path,
            ),
        )

    async def _refusal(
        self, name: str, params: dict[str, Any]
    ) -> tuple[str, tuple[PathItem, ...], str] | None:
        state = self.shared.book.tools.get(name)
        if state is None:
            return "unknown_tool", ("name",), "the tool was never listed by this server"
        if state.status != "ok":
            return _STATUS_REFUSAL[state.status](state)
        tool = state.tool
        policy = self.shared.policy
        if tool is None or not policy.check_arguments:
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
                verdict = await _checks.run_bounded(check, policy.output_timeout)
        except _checks.Timeout:
            return (
                "argument_check_timeout",
                ("arguments",),
                f"the argument check did not finish within {policy.output_timeout} s",
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

    async def inbound(self, message: dict[str, Any]) -> Verdict:
        """Decide on one message from the server. Never raises (except cancellation)."""
        if "method" in message:
            if message.get("method") == _SAMPLING and "id" in message:
                try:
                    return self._on_sampling_request(message)
                except Exception as exc:  # fail closed: the model sees none of the tools
                    logger.exception("guard failed on a sampling request; its tools withheld")
                    self.emit(
                        "unchecked",
                        None,
                        "guard_internal_error",
                        "withheld",
                        path=("params", "tools"),
                        message="the guard failed on a sampling request's tools: withheld",
                        details=_cause(exc),
                    )
                    params = message.get("params")
                    if not isinstance(params, dict):
                        return PASS
                    return _replace({**message, "params": {**params, "tools": []}})
            return PASS  # another server request, or a notification: no tools in it
        if "result" not in message and "error" not in message:
            return PASS  # not a response the SDK can read either
        request_id = message.get("id")
        try:
            pending = self.outstanding.peek(request_id)
            if pending is not None and pending.gating:
                return self._dropped(request_id, pending.name, "response_to_unsent_request")
            pending = self.outstanding.take(request_id)
        except Exception:  # an id that cannot even be hashed: nothing the SDK waits on
            logger.exception("guard failed to match a response; dropped")
            return DROP
        if pending is None:
            if "error" in message and request_id is None:
                return PASS  # JSON-RPC's answer to what could not be parsed: the SDK logs it
            reason = (
                "response_to_unsent_request"
                if self.outstanding.was_refused(request_id)
                else "unmatched_response"
            )
            return self._dropped(request_id, None, reason)
        if "error" in message:
            return PASS
        result = message["result"]
        try:
            if pending.method == "initialize":
                if isinstance(result, dict):
                    self.learn_version(result.get("protocolVersion"))
                return PASS
            if pending.method == _LIST:
                return await self._on_list(request_id, result, pending)
            if pending.method == _CALL:
                verdict = await self._on_call_result(request_id, result, pending)
                return self._result_text(request_id, result, verdict)
        except Exception as exc:
            if pending.method == _LIST:
                return self._withhold_page(request_id, result, exc)
            if pending.method == _CALL:
                return self._withhold_result(request_id, pending.name, exc)
            logger.exception("guard failed on a %s response; passed on unchanged", pending.method)
            self.emit(
                "unchecked",
                pending.name,
                "guard_internal_error",
                "passed",
                message=f"the guard failed on a {pending.method} response",
                details=_cause(exc),
            )
        return PASS

    def _withhold_result(self, request_id: Any, name: str | None, exc: Exception) -> Verdict:
        """Fail closed on a tools/call result the guard could not finish checking (a bug):
        the SDK receives JSON-RPC error -32603, reason `guard_internal_error`, never the
        unchecked result."""
        logger.exception("guard failed on a tools/call result; answered as an error")
        self.emit(
            "unchecked",
            name,
            "guard_internal_error",
            "withheld",
            message="the guard failed while checking this tools/call result: withheld",
            details=_cause(exc),
        )
        return _replace(
            error_response(
                request_id,
                INVALID_RESULT_CODE,
                "conduit-mcp guard could not check the server's tools/call result",
                reason="guard_internal_error",
                tool=name,
                path=(),
            )
        )

    # -- tool definitions outside tools/list ------------------------------------------------

    def screen_tools(
        self, tools: list[Any], version: str | None, prefix: tuple[PathItem, ...]
    ) -> list[Any] | None:
        """The same intake as a listing's for tool definitions a server sends elsewhere (the
        `tools` of a `sampling/createMessage`, 2025-11-25 on): rejected tools are removed,
        with `tool_rejected` events whose paths start at `prefix` (the path of the object
        holding `tools`, e.g. `("params",)`). Returns the tools to hand
        on, or `None` when every tool passes unchanged. With the version unknown nothing can
        be checked, so every tool is removed (event `unchecked`, decision `withheld`).

        These tools are offered to the client's own model for one sampling call, not tools
        the client can call on the server: they are neither pinned nor callable.
        """
        version = version if version is not None else self.known_version()
        if version is None:
            self.emit(
                "unchecked",
                None,
                "unknown_protocol_version",
                "withheld",
                path=(*prefix, "tools"),
                message="tool definitions not checked (protocol version unknown): withheld",
            )
            return []
        shared = self.shared
        try:
            page = intake(
                shared.server_id,
                {"tools": tools},
                transport=self.transport,
                protocol_version=version,
                trusted=shared.trusted,
            )
        except Error as exc:
            self.emit(
                "list_unreadable",
                None,
                exc.reason,
                "withheld",
                path=(*prefix, *exc.path),
                message=exc.message,
            )
            return []
        if not page.rejected:
            return None
        for rejection in page.rejected:
            self.emit(
                "tool_rejected",
                rejection.name,
                rejection.reason,
                "removed",
                path=(*prefix, *rejection.path),
                message=rejection.message,
            )
        dropped = {rejection.index for rejection in page.rejected}
        return [raw for index, raw in enumerate(tools) if index not in dropped]

    def _on_sampling_request(self, message: dict[str, Any]) -> Verdict:
        """A server's `sampling/createMessage` with `tools` (spec 2025-11-25 client/sampling
        "Tools in Sampling"): its tool definitions go through `screen_tools` before the
        client's sampling callback (and its model) sees them."""
        params = message.get("params")
        tools = params.get("tools") if isinstance(params, dict) else None
        if not isinstance(tools, list) or not tools:
            return PASS
        kept = self.screen_tools(tools, None, ("params",))
        if kept is None:
            return PASS
        assert isinstance(params, dict)
        return _replace({**message, "params": {**params, "tools": kept}})

    def _screen_input_requests(self, result: Any, version: str) -> dict[str, Any] | None:
        """An `input_required` result (2026-07-28 basic/patterns/mrtr) whose `inputRequests`
        hold `sampling/createMessage` requests with `tools`: each goes through
        `screen_tools`. Returns the result to hand on, or `None` when nothing changed."""
        requests = result.get("inputRequests") if isinstance(result, dict) else None
        if not isinstance(requests, dict):
            return None
        changed: dict[str, Any] = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or request.get("method") != _SAMPLING:
                continue
            params = request.get("params")
            tools = params.get("tools") if isinstance(params, dict) else None
            if not isinstance(tools, list) or not tools:
                continue
            kept = self.screen_tools(tools, version, ("inputRequests", key, "params"))
            if kept is not None:
                assert isinstance(params, dict)
                changed[key] = {**request, "params": {**params, "tools": kept}}
        if not changed:
            return None
        return {**result, "inputRequests": {**requests, **changed}}

    def _dropped(self, request_id: Any, name: str | None, reason: str) -> Verdict:
        """A response the SDK must not receive: it answers a call the server was never sent
        (still being gated, or refused: the SDK's only answer is the guard's), or no request
        the client has outstanding (forged, duplicated, or abandoned by the client)."""
        why = (
            "a response to a tools/call the server was never sent: dropped"
            if reason == "response_to_unsent_request"
            else "a response to no request awaiting one: dropped"
        )
        self.emit(
            "response_dropped",
            name,
            reason,
            "dropped",
            message=why,
            details={"request_id": str(request_id)[:64]},
        )
        return DROP

    def _withhold_page(self, request_id: Any, result: Any, exc: BaseException) -> Verdict:
        """Fail closed on a tools/list page the guard could not finish checking (the pin store
        failed or did not answer in time, or a bug): the SDK receives the page without any
        of its tools, and every tool it names is blocked (calls refused with the cause's
        reason) until a listing the guard can check, which restores them with no action."""
        store = isinstance(exc, _checks.StoreUnavailable)
        reason = "pin_store_unavailable" if store else "guard_internal_error"
        if not store:
            logger.exception("guard failed on a tools/list page; its tools are withheld")
        names: list[str] = []
        try:
            tools = result.get("tools") if isinstance(result, dict) else None
            for raw in tools if isinstance(tools, list) else ():
                name = raw.get("name") if isinstance(raw, dict) else None
                if isinstance(name, str):
                    self.shared.book.tools[name] = ToolState("blocked", None, reason)
                    names.append(name)
        except Exception:  # never into the SDK's receive loop
            logger.exception("guard failed to block the tools of an unchecked page")
        self.listing = None  # an unchecked page says nothing about which tools are gone
        origin = exc.__cause__ if store and exc.__cause__ is not None else exc
        details = _cause(origin)
        if not details["cause"]:  # e.g. a timeout, which has no text of its own
            details["cause"] = _cause(exc)["cause"]
        if store:
            details["store"] = repr(self.shared.pins)[:200]
        self.emit(
            "unchecked",
            None,
            reason,
            "withheld",
            path=("tools",),
            message=(
                f"tools/list page not checked ({details['error']}): its {len(names)} tool(s) "
                "withheld from the SDK and their calls refused until a listing the guard "
                "can check"
            ),
            details={**details, "tools": len(names)},
        )
        if isinstance(result, dict):
            return _replace(result_response(request_id, {**result, "tools": []}))
        return _replace(
            error_response(
                request_id,
                INVALID_RESULT_CODE,
                "conduit-mcp guard could not check the server's tools/list result",
                reason=reason,
                tool=None,
                path=(),
            )
        )

    async def _on_list(self, request_id: Any, result: Any, pending: Pending) -> Verdict:
        shared = self.shared
        book = shared.book
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
            return PASS
        try:
            page, positions = self._intake(result, version)
        except Error as exc:  # not a tools/list result: the SDK's model would raise on it
            self.emit(
                "list_unreadable",
                None,
                exc.reason,
                "answered_error",
                path=exc.path,
                message=exc.message,
            )
            return _replace(
                error_response(
                    request_id,
                    INVALID_RESULT_CODE,
                    f"conduit-mcp guard: the server's tools/list result is invalid: {exc.message}",
                    reason=exc.reason,
                    tool=None,
                    path=exc.path,
                )
            )
        raw_tools: list[Any] = result["tools"]
        rewritten = self._listing_text(page, raw_tools)
        removed: set[int] = set()
        rejected_names: set[str] = set()
        started = self.listing is not None  # this page belongs to a listing begun without a cursor
        listing = self.listing if self.listing is not None else set()
        rejections: list[tuple[int, GuardEvent]] = []
        hidden: set[int] = set()  # indexes of tools listed without their outputSchema
        for rejection in page.rejected:
            removed.add(rejection.index)
            rejections.append(
                (
                    rejection.index,
                    self._event(
                        "tool_rejected",
                        rejection.name,
                        rejection.reason,
                        "removed",
                        path=rejection.path,
                        message=rejection.message,
                    ),
                )
            )
            if rejection.name is not None:
                rejected_names.add(rejection.name)

        # Accepted tools, with their index in the page (intake keeps server order).
        accepted: list[tuple[int, Tool]] = []
        for index, tool in zip(positions, page.tools, strict=True):
            if tool.name in listing:  # named on an earlier page of this listing
                removed.add(index)
                rejections.append(
                    (
                        index,
                        self._event(
                            "tool_rejected",
                            tool.name,
                            "duplicate_tool_name",
                            "removed",
                            path=("tools", index, "name"),
                            message=(
                                "an earlier page of this listing has the same name; "
                                "the first wins"
                            ),
                        ),
                    )
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
                    rejections.append(
                        (
                            index,
                            self._event(
                                "tool_rejected",
                                tool.name,
                                "sdk_rejects_tool",
                                "removed",
                                path=("tools", index, *refusals[local]),
                                message=(
                                    "the MCP SDK's model for this protocol version refuses "
                                    "this tool"
                                ),
                            ),
                        )
                    )
                else:
                    kept.append((index, tool))
            accepted = kept

        # Rejections in page order, whichever check found them.
        rejections.sort(key=lambda pair: pair[0])
        for _, event in rejections:
            shared.sink.emit(event)

        policy = shared.policy
        verdicts = await self._pin_verdicts([t for _, t in accepted])
        for (index, tool), verdict in zip(accepted, verdicts, strict=True):
            name = tool.name
            listing.add(name)
            previous = book.tools.get(name)
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
                _set_state(book.tools, name, "blocked", tool, "revoked")
                continue
            if status == "new":
                outcome = OUTCOMES[("new", policy.new)]
                self.emit(
                    "tool_new",
                    name,
                    "new_tool",
                    outcome.decision,
                    path=("tools", index),
                    message=f"a tool never pinned for this server ({_said(outcome)})",
                    details=_awaiting(outcome, tool),
                )
            elif status == "changed":
                outcome = OUTCOMES[("changed", policy.changed)]
                old_raw = previous.tool.raw if previous and previous.tool else None
                changes = _excerpts(verdict.changes) or (
                    _checks.top_level_changes(old_raw, tool.raw) if old_raw is not None else ()
                )
                self.emit(
                    "tool_changed",
                    name,
                    "tool_definition_changed",
                    outcome.decision,
                    path=("tools", index),
                    changes=changes,
                    message=f"the definition differs from its pin ({_said(outcome)})",
                    details=_awaiting(outcome, tool),
                )
            else:
                outcome = OUTCOMES[("approved", "")]
                if status == "cosmetic":  # the pin store's verdict: not material, re-pinned
                    self.emit(
                        "tool_changed",
                        name,
                        "cosmetic_change",
                        "pinned",
                        path=("tools", index),
                        changes=_excerpts(verdict.changes),
                        message="the definition differs from its pin only cosmetically (re-pinned)",
                    )
            _set_state(book.tools, name, outcome.status, tool, outcome.reason)
            if not outcome.listed:
                removed.add(index)
                continue
            self._hide_output_schema(index, tool, hidden)

        for name in rejected_names:
            if name not in listing:
                book.tools[name] = ToolState("rejected", None, "rejected")
                listing.add(name)

        if page.next_cursor is None:
            self._finish_listing(listing, complete=started)

        icons = self._unsafe_icons(page, raw_tools, removed)
        if not removed and not hidden and not icons and not rewritten:
            return PASS
        kept_raw = [
            _sdk_copy(rewritten.get(index, raw), index in hidden, icons.get(index))
            for index, raw in enumerate(raw_tools)
            if index not in removed
        ]
        return _replace(result_response(request_id, {**result, "tools": kept_raw}))

    # -- text the model reads: where hidden/control character cleaning plugs in -------------

    def _listing_text(self, page: Intake, raw_tools: list[Any]) -> dict[int, Any]:
        """One call per `tools/list` page, after intake: index -> the tool definition the SDK
        sees instead of `raw_tools[index]` (e.g. with hidden characters removed). None yet:
        every definition is handed on as the server sent it."""
        return {}

    def _result_text(self, request_id: Any, result: Any, verdict: Verdict) -> Verdict:
        """One call per `tools/call` result, after its checks: the verdict to apply (e.g. one
        whose text blocks were cleaned). As decided yet: `verdict` unchanged."""
        return verdict

    def _unsafe_icons(
        self, page: Intake, raw_tools: list[Any], removed: set[int]
    ) -> dict[int, set[int]]:
        """Tool index -> indexes of its icons whose `src` intake found unsafe
        (`icon_unsafe_uri`): left out of what the SDK sees, one event per icon of a listed
        tool. Spec 2026-07-28 basic/index "Icons": clients MUST reject unsafe icon URIs."""
        drops: dict[int, set[int]] = {}
        for warning in page.warnings:
            if warning.code != "icon_unsafe_uri" or len(warning.path) < 4:
                continue
            index, icon = warning.path[1], warning.path[3]
            if not isinstance(index, int) or not isinstance(icon, int) or index in removed:
                continue
            drops.setdefault(index, set()).add(icon)
            raw = raw_tools[index] if index < len(raw_tools) else None
            name = raw.get("name") if isinstance(raw, dict) else None
            self.emit(
                "icon_removed",
                name if isinstance(name, str) else None,
                "icon_unsafe_uri",
                "hidden",
                path=warning.path,
                message="an icon whose src is not an https/http URL or a data:image URI: "
                "left out of what the SDK sees",
                details=dict(warning.details),
            )
        return drops

    def _hide_output_schema(self, index: int, tool: Tool, hidden: set[int]) -> None:
        """Policy `sdk_output_schema`: mark a listed tool whose outputSchema the SDK's own
        output check must not see: every one under `invalid_output` "flag"/"pass" (the SDK
        would raise on the result the guard lets through), else one it cannot run safely;
        one event per tool definition."""
        policy = self.shared.policy
        if not self._structured:
            self._hide_pre_output_schema(index, tool, hidden)
            return
        if policy.sdk_output_schema != "hide_unsafe":
            return
        if policy.invalid_output != "withhold":
            if tool.raw.get("outputSchema") is None:
                return
            hidden.add(index)
            if not self._first_hide(tool):
                return
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
        if not self._first_hide(tool):
            return  # already reported for this definition
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

    def _first_hide(self, tool: Tool) -> bool:
        """Whether this definition's outputSchema is hidden for the first time (one event)."""
        hidden = self.shared.book.hidden
        if hidden.get(tool.name, _NOT_HIDDEN) == tool.fingerprint:
            return False
        hidden[tool.name] = tool.fingerprint
        return True

    def _hide_pre_output_schema(self, index: int, tool: Tool, hidden: set[int]) -> None:
        """Before 2025-06-18 a tool has no outputSchema (spec 2025-03-26 schema `Tool`), and
        the guard checks no output there; mcp 2.3.0 still validates structuredContent against
        any outputSchema it was listed (`ClientSession._validate_tool_result`, on every
        version), where a hostile schema hangs or raises. So the SDK never sees one, whatever
        the policy; one event per tool definition."""
        if tool.raw.get("outputSchema") is None:
            return
        hidden.add(index)
        if not self._first_hide(tool):
            return
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

    def _intake(self, result: Any, version: str) -> tuple[Intake, list[int]]:
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
        key = PageCache.key(version, data) if data is not None else None
        if key is not None:
            hit = self._pages.get(key, result)
            if hit is not None:
                return hit
        shared = self.shared
        page = intake(
            shared.server_id,
            result,
            transport=self.transport,
            protocol_version=version,
            trusted=shared.trusted,
        )
        by_identity = {id(raw): index for index, raw in enumerate(result["tools"])}
        positions = [by_identity[id(tool.raw)] for tool in page.tools]
        if key is not None and data is not None:
            # A reference to the server's page: the guard never mutates it, and its accepted
            # tools are kept anyway (the tool states hold their raw definitions).
            self._pages.put(key, len(data), result, page, positions)
        return page, positions

    async def _pin_verdicts(self, tools: list[Tool]) -> list[_checks.PinVerdict]:
        """The pin verdict of each tool: from the store, in one worker-thread hop.

        With the guard's private store nobody else writes the pins, so a tool the guard
        already holds as `ok` under the same fingerprint is `approved` without asking it.
        """
        shared = self.shared
        book = shared.book
        verdicts: list[_checks.PinVerdict | None] = [None] * len(tools)
        ask: list[int] = []
        for i, tool in enumerate(tools):
            if shared.owns_pins and book.pinned.get(tool.name) == tool.fingerprint:
                verdicts[i] = _APPROVED
            else:
                ask.append(i)
        if ask:
            policy = shared.policy
            check = _bind(
                _checks.pin_page,
                shared.pins,
                shared.server_id,
                [tools[i] for i in ask],
                pin_new=policy.new == "pin",
                pin_changed=policy.changed == "allow",
                protocol_version=self.known_version(),
                revoked=frozenset(book.revoked),
                revocations=book.revocations,
                # The guard's private store: "check" rows nobody reads would grow with every
                # tool ever listed; a held tool's row says what waits, so those stay.
                audit=not shared.owns_pins or "hold" in (policy.new, policy.changed),
            )
            try:
                answers = await _checks.run_page_check(check)
            except _checks.Timeout as exc:
                raise _checks.StoreUnavailable(
                    f"the pin store did not answer within {_checks.PAGE_TIMEOUT} s"
                ) from exc
            except Exception as exc:
                if _checks.is_store_error(exc):
                    raise _checks.StoreUnavailable(str(exc)) from exc
                raise
            for i, answer in zip(ask, answers, strict=True):
                verdicts[i] = answer
                if answer.status == "revoked":
                    book.revoked.add(tools[i].name)
                if answer.status == "approved" or answer.pinned:
                    book.pinned[tools[i].name] = tools[i].fingerprint
        return [v if v is not None else _APPROVED for v in verdicts]

    def _finish_listing(self, listing: set[str], *, complete: bool) -> None:
        self.listing = None
        if not complete:
            return
        book = self.shared.book
        book.forget(listing)
        tools = book.tools
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

    async def _on_call_result(self, request_id: Any, result: Any, pending: Pending) -> Verdict:
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
            return PASS
        try:
            parsed = parse_call_result(
                result, protocol_version=version, extensions=pending.extensions
            )
        except Error as exc:
            self.emit(
                "result_invalid",
                name,
                exc.reason,
                "answered_error",
                path=exc.path,
                message=exc.message,
            )
            return _replace(
                error_response(
                    request_id,
                    INVALID_RESULT_CODE,
                    f"conduit-mcp guard: the server's tools/call result is invalid: {exc.message}",
                    reason=exc.reason,
                    tool=name,
                    path=exc.path,
                )
            )
        if isinstance(parsed, ExtensionResult):
            return PASS  # an advertised extension's result: the client's extension resolves it
        screened = None
        if isinstance(parsed, InputRequired):
            screened = self._screen_input_requests(result, version)
            if screened is not None:
                result = screened
        refused = sdk_result_refusal(result, version)
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
            return _replace(
                error_response(
                    request_id,
                    INVALID_RESULT_CODE,
                    "conduit-mcp guard: the MCP SDK's model refuses the server's tools/call "
                    f"result at {render_path(where)}",
                    reason="sdk_rejects_result",
                    tool=name,
                    path=where,
                )
            )
        if isinstance(parsed, InputRequired):
            return PASS if screened is None else _replace(result_response(request_id, screened))
        tool = pending.tool
        policy = self.shared.policy
        if (
            tool is None
            or policy.invalid_output == "pass"
            or parsed.is_error
            or tool.raw.get("outputSchema") is None
            or not self._structured
        ):
            return PASS  # nothing to validate (validate_structured would skip it)
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
                return PASS
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
            return PASS
        return _replace(
            result_response(
                request_id,
                withheld_result(
                    f"conduit-mcp guard withheld this result: {why}",
                    result_type=self._result_type,
                ),
            )
        )


_BLOCKED_WHY: Final = {
    "changed": "the tool's definition changed since it was pinned",
    "revoked": "the tool's pin was revoked in the pin store",
}

_STATUS_REFUSAL: Final[dict[str, Callable[[ToolState], tuple[str, tuple[PathItem, ...], str]]]] = {
    "rejected": lambda s: ("tool_rejected", ("name",), "the tool was rejected when listed"),
    "blocked": lambda s: (
        ("guard_internal_error", ("name",), "the guard failed while checking this tool's listing")
        if s.reason == "guard_internal_error"
        else (
            (
                "pin_store_unavailable",
                ("name",),
                "the pin store could not be read when this tool was listed",
            )
            if s.reason == "pin_store_unavailable"
            else (
                "tool_blocked",
                ("name",),
                (_BLOCKED_WHY.get(s.reason, "new tools are blocked for this server")),
            )
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

_APPROVED: Final = _checks.PinVerdict("approved", False)


#: Longest value an event's field change keeps whole (characters of its JSON text).
EXCERPT_CHARS: Final = 200


def _excerpts(changes: tuple[Any, ...]) -> tuple[Any, ...]:
    """The pin store's field changes with each `old` / `new` value cut to an excerpt: an
    event keeps the path and what a person needs to see, never two whole definitions (a
    20 MB description rewritten ten times must not stay in memory twenty times)."""
    return tuple(
        (
            dataclasses.replace(change, old=_excerpt(change.old), new=_excerpt(change.new))
            if isinstance(change, FieldChange)
            else change
        )
        for change in changes
    )


def _excerpt(value: Any) -> Any:
    """`value` when its JSON is short; else the first `EXCERPT_CHARS` characters of its JSON
    text (a string, for containers too) followed by "…"."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if len(value) <= EXCERPT_CHARS else value[:EXCERPT_CHARS] + "…"
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return f"<{type(value).__name__}>"
    return value if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


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


def _said(outcome: Any) -> str:
    """The decision in an event's message; a held tool says how it is released."""
    if outcome.status == "held":
        return "held: not listed to the model and not callable until Guard.approve"
    return str(outcome.decision)


def _awaiting(outcome: Any, tool: Tool) -> dict[str, Any]:
    """An event's details for a tool that waits for approval: which definition waits."""
    if outcome.status != "held":
        return {}
    return {"awaiting_approval": True, "fingerprint": tool.fingerprint}


_NOT_HIDDEN: Final = object()


def _sdk_copy(raw: Any, hide_output: bool, drop_icons: set[int] | None) -> Any:
    """The tool definition the SDK sees: `raw` itself, or a shallow copy without
    `outputSchema` and/or without the icons at `drop_icons` (the server's dict is left as
    is)."""
    if not hide_output and not drop_icons:
        return raw
    copy = {key: value for key, value in raw.items() if not (hide_output and key == "outputSchema")}
    if drop_icons:
        icons = raw.get("icons")
        if isinstance(icons, list):
            copy["icons"] = [icon for i, icon in enumerate(icons) if i not in drop_icons]
    return copy


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
