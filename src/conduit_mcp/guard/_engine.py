"""The guard's decisions over parsed JSON-RPC messages: one `Engine` per connection.

Not a public module. No SDK import: a message is the plain JSON-RPC 2.0 dict (`id`, `method`,
`params`, `result`, `error`), and every decision comes back as a frozen `Verdict` that a seam
(`_streams`: the SDK's stream pair) applies. The bookkeeping lives in `_state` (tool states,
requests in flight, page cache); the status x policy outcomes in `_policy.OUTCOMES`. The
decisions by kind: `_listing` (tools/list pages), `_calls` (the call gate and call results),
`_scope` (tools inside sampling requests); `_base` holds `Verdict` and the shared helpers.

Requests are matched to responses as the SDK matches them (`_state.coerce_id`). A response
that answers no live request of the guard's own is dropped: the guard remembers every request
the client writes until its response arrives or the client abandons it
(`notifications/cancelled`), so the SDK waits on no id the guard has forgotten, and a forged
or late answer never reaches the SDK unchecked.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from typing import Any, Final

from ._base import (
    _CALL,
    _CANCELLED,
    _LIST,
    _SAMPLING,
    CLIENT_CAPABILITIES_META_KEY,
    DROP,
    PASS,
    PROTOCOL_VERSION_META_KEY,
    EngineBase,
    Verdict,
    _cause,
    _extension_ids,
    _replace,
)
from ._calls import Calls
from ._events import logger
from ._instructions import on_initialized
from ._jsonrpc import INVALID_RESULT_CODE, error_response
from ._listing import Listing
from ._modeltext import clean_call_error, clean_read_result
from ._notify import (
    ACKNOWLEDGED,
    LISTEN,
    SUBSCRIPTION_ID,
    declare_list_changed,
    declares_list_changed,
)
from ._reads import FROM_SERVER, RESPONSES
from ._servertext import screen_from_server, screen_response
from ._state import (
    Pending,
    coerce_id,
)
from ._waits import Later, finish, start

__all__ = ["DROP", "PASS", "Engine", "EngineBase", "Verdict"]

#: Answers whose text a client hands its model as a tool result: a task's deferred
#: tools/call result. Cleaned under `result_text` (its output is not validated: the guard
#: does not know which tool a task ran). Prompts, resources and the rest: `_reads.READS`.
_READ_BY_THE_MODEL: Final = frozenset({"tasks/result"})
#: The results that carry a server's instructions (`_instructions`).
_INSTRUCTED: Final = frozenset({"initialize", "server/discover"})


class Engine(Listing, Calls):
    """One connection's decisions: every message the client writes (`outbound`) and every one
    the server sends (`inbound`), each answered with a frozen `Verdict`."""

    # -- entries -----------------------------------------------------------------------------

    async def outbound(self, message: dict[str, Any]) -> Verdict:
        """Decide on one message the client writes. Never raises (except cancellation): a
        failure refuses a `tools/call` (`guard_internal_error`) and passes anything else."""
        return await finish(start(self._outbound(message)))

    async def inbound(self, message: dict[str, Any]) -> Verdict:
        """Decide on one message from the server. Never raises (except cancellation)."""
        return await finish(start(self._inbound(message)))

    def outbound_now(self, message: dict[str, Any]) -> Verdict | Later[Verdict]:
        """`outbound` on any thread, no event loop needed: the `Verdict`, or, when the
        decision must wait for a worker thread (an argument check too heavy to run inline),
        the decision stopped there as a `Later` that an event loop awaits to finish it
        (each of its remaining steps holding `lock`; its waits do not).

        Whoever decides on several threads holds `lock` around this call, so decisions never
        interleave."""
        decided = self._outbound_now(message)
        if type(decided) is Verdict:
            return decided
        return _locked(start(decided), self.lock)

    def inbound_now(self, message: dict[str, Any]) -> Verdict | Later[Verdict]:
        """`inbound` on any thread, as `outbound_now` (a `Later` for a result whose output
        check is too heavy to run inline, a listing whose pins the store must check, a
        look-alike name that needs the store's pins)."""
        decided = self._inbound_now(message)
        if type(decided) is Verdict:
            return decided
        return _locked(start(decided), self.lock)

    @property
    def lock(self) -> threading.RLock:
        """The lock under which the pin store's change feed applies approvals and
        revocations to the guard's tool states (`_checks.apply_pin_change`): a seam that
        decides on several threads holds it around each decision step, so a change from
        the feed lands wholly before or after a decision, and two decisions never
        interleave. Reentrant; shared by every connection of the guard."""
        return self.shared.book.feed_lock

    # -- outbound ----------------------------------------------------------------------------

    async def _outbound(self, message: dict[str, Any]) -> Verdict:
        decided = self._outbound_now(message)
        return decided if type(decided) is Verdict else await decided

    def _outbound_now(self, message: dict[str, Any]) -> Verdict | Coroutine[Any, Any, Verdict]:
        """The verdict on what the client writes, or, when it must wait, the rest of the
        decision as a coroutine to await at once."""
        method = message.get("method")
        if not isinstance(method, str):
            return PASS  # the client's answer to a server request
        raw_params = message.get("params")
        params = raw_params if isinstance(raw_params, dict) else {}
        if "id" not in message:
            if method == _CANCELLED:
                cancelled = params.get("requestId")
                # Only an id a request can have (JSON-RPC: a string or an integer): `true`
                # or `1.0` would cancel request 1 (equal in Python) while the listener's call
                # audit, reading ids as the SDK does, still waits for its answer.
                if type(cancelled) is int or isinstance(cancelled, str):
                    self.outstanding.cancel(cancelled)
                    self._stream_closed(cancelled)
            if method == _CALL:  # a tools/call without an id: nobody could be answered
                self.emit(
                    "call_refused",
                    None,
                    "invalid_call",
                    "dropped",
                    message="a tools/call without an id (a notification) is never written",
                )
                return DROP
            return PASS
        meta = params.get("_meta")
        extensions = self._extensions
        if isinstance(meta, dict):
            if PROTOCOL_VERSION_META_KEY in meta:
                self.learn_version(meta[PROTOCOL_VERSION_META_KEY])
                self._envelope = meta
            if CLIENT_CAPABILITIES_META_KEY in meta:
                extensions = _extension_ids(meta[CLIENT_CAPABILITIES_META_KEY])
        elif method == "initialize":
            self._extensions = extensions = _extension_ids(params.get("capabilities"))
        request_id = message["id"]
        if method == _CALL:
            if isinstance(params.get("name"), str) and raw_params is params:
                return self._gate_call_now(request_id, params, extensions)
            # A name that is not a string (a JavaScript server may coerce ["rm_rf"] to
            # "rm_rf") or params that are not an object: no tool the guard knows, never sent.
            return self._refuse_malformed_call(request_id)
        pending = Pending(method, cursor=params.get("cursor") is not None)
        untracked = self.outstanding.add(request_id, pending)
        if untracked is not None:
            return self._not_tracked(request_id, method, None, untracked)
        if method == _LIST and not pending.cursor:
            self.listing = set()
            self.notice.relisting()
        elif method == LISTEN:
            self._stream_opened(request_id, params)
        return PASS

    # -- inbound -----------------------------------------------------------------------------

    async def _inbound(self, message: dict[str, Any]) -> Verdict:
        decided = self._inbound_now(message)
        return decided if type(decided) is Verdict else await decided

    def _inbound_now(self, message: dict[str, Any]) -> Verdict | Coroutine[Any, Any, Verdict]:
        """The verdict on what the server sends, or, when it must wait, the rest of the
        decision as a coroutine to await at once."""
        if "method" in message:
            read = FROM_SERVER.get(message.get("method"))  # type: ignore[arg-type]
            if read is not None and message.get("method") != _SAMPLING:
                try:
                    return screen_from_server(self, message, read)
                except Exception as exc:  # fail closed: the client never sees it unread
                    logger.exception("guard failed on a server message's text; dropped")
                    self.emit(
                        "unchecked",
                        None,
                        "guard_internal_error",
                        "dropped",
                        path=("params",),
                        message=f"the guard failed on a {read.method}: dropped",
                        details=_cause(exc),
                    )
                    return DROP
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
            if message.get("method") in (ACKNOWLEDGED, _CANCELLED):
                return self._on_stream_notice(message)
            return PASS  # another server request, or a notification: no tools in it
        if "result" not in message and "error" not in message:
            return PASS  # not a response the SDK can read either
        request_id = message.get("id")
        try:
            pending = self.outstanding.take(request_id)
            if pending is not None and pending.gating:  # still being checked: it stays
                self.outstanding.restore(request_id, pending)
                return self._dropped(request_id, pending.name, "response_to_unsent_request")
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
        if pending.own:  # the answer to a listing of the guard's own: nobody else's
            return self._own_answer(request_id, message, pending)
        if pending.method == LISTEN:
            self._stream_closed(request_id)
        if "error" in message:
            if pending.method == _CALL:
                try:
                    return clean_call_error(self, message, pending.name)
                except Exception:  # never into the SDK's receive loop
                    logger.exception("guard failed to clean a tools/call error; dropped")
                    return self._withhold_result(request_id, pending.name, RuntimeError())
            return PASS
        result = message["result"]
        try:
            if pending.method == _CALL:  # the most common answer first (no other row has it)
                decided = self._call_response_now(request_id, result, pending)
                if type(decided) is Verdict:
                    return decided
                return self._call_later(decided, request_id, pending.name)
            if pending.method in _INSTRUCTED:
                if pending.method == "initialize" and isinstance(result, dict):
                    self.learn_version(result.get("protocolVersion"))
                decided = on_initialized(self, request_id, message, result, pending.method)
                if type(decided) is Verdict:
                    return decided
                return self._read_later(decided, request_id, pending.method)
            read = RESPONSES.get(pending.method)
            if read is not None:
                return screen_response(self, request_id, result, read)
            if pending.method == _LIST:
                return self._list_later(request_id, result, pending)
            if pending.method in _READ_BY_THE_MODEL:
                return clean_read_result(self, request_id, result, pending.method)
        except Exception as exc:
            if pending.method == _LIST:
                return self._withhold_page(request_id, result, exc)
            if pending.method == _CALL:
                return self._withhold_result(request_id, pending.name, exc)
            if pending.method in RESPONSES:
                return self._withhold_answer(request_id, pending.method, exc)
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

    async def _read_later(
        self, rest: Coroutine[Any, Any, Verdict], request_id: Any, method: str
    ) -> Verdict:
        """The rest of an `initialize` / `server/discover` verdict (the instructions' pin)."""
        try:
            return await rest
        except Exception as exc:
            return self._withhold_answer(request_id, method, exc)

    def _withhold_answer(self, request_id: Any, method: str, exc: Exception) -> Verdict:
        """Fail closed on an answer whose text the guard could not finish reading (a bug):
        the client receives JSON-RPC error -32603 (`guard_internal_error`), never the text
        unread."""
        logger.exception("guard failed on a %s response; answered as an error", method)
        self.emit(
            "unchecked",
            None,
            "guard_internal_error",
            "withheld",
            message=f"the guard failed while reading a {method} answer: withheld",
            details={**_cause(exc), "method": method},
        )
        return _replace(
            error_response(
                request_id,
                INVALID_RESULT_CODE,
                f"conduit-mcp guard could not read the server's {method} answer",
                reason="guard_internal_error",
                tool=None,
                path=(),
            )
        )

    async def _list_later(self, request_id: Any, result: Any, pending: Pending) -> Verdict:
        """A tools/list page's verdict (it may wait for the pin store): `_inbound_now`'s."""
        try:
            return await self._on_list(request_id, result, pending)
        except Exception as exc:
            return self._withhold_page(request_id, result, exc)

    async def _call_later(
        self, rest: Coroutine[Any, Any, Verdict], request_id: Any, name: str | None
    ) -> Verdict:
        """The rest of a tools/call result's checks (an output check in a worker thread)."""
        try:
            return await rest
        except Exception as exc:
            return self._withhold_result(request_id, name, exc)

    def _on_initialized(self, message: dict[str, Any], result: Any) -> Verdict:
        """The server's `initialize` result: when the guard may change the tools the client
        sees on its own (`Shared.changes_list_itself`) and the server offers tools, the client
        is told to expect `notifications/tools/list_changed` (docs/guard.md "Live approvals")."""
        declared = declare_list_changed(result) if self._announces() else None
        self.notice.declared = declared is not None or declares_list_changed(result)
        if declared is None:
            return PASS
        return _replace({**message, "result": declared})

    def _announces(self) -> bool:
        """Whether this connection can promise `notifications/tools/list_changed` of the
        guard's own: the guard may change the list by itself, and the seam delivers what the
        engine sends (a seam that never set `notice.deliver` is promised nothing)."""
        return self.shared.changes_list_itself and self.notice.deliver is not None

    # -- 2026-07-28 notification streams (`_notify`: where list_changed goes) ----------------

    def _stream_opened(self, request_id: Any, params: dict[str, Any]) -> None:
        try:
            self.notice.listen(coerce_id(request_id), request_id, params)
        except TypeError:  # an id that cannot be hashed: no stream the guard can name
            pass

    def _stream_closed(self, request_id: Any) -> None:
        try:
            self.notice.closed(coerce_id(request_id))
        except TypeError:
            pass

    def _on_stream_notice(self, message: dict[str, Any]) -> Verdict:
        """The server acknowledges a `subscriptions/listen` stream (the guard may add
        `toolsListChanged`: docs/guard.md "Live approvals"), or cancels one (it ended)."""
        params = message.get("params")
        if not isinstance(params, dict):
            return PASS
        if message.get("method") == _CANCELLED:
            self._stream_closed(params.get("requestId"))
            return PASS
        meta = params.get("_meta")
        stream = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        try:
            key = coerce_id(stream)
            rewritten = self.notice.acknowledged(key, message, self._announces())
        except TypeError:
            return PASS
        return PASS if rewritten is None else _replace(rewritten)

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


def _locked(decided: Verdict | Later[Verdict], lock: Any) -> Verdict | Later[Verdict]:
    return decided.under(lock) if isinstance(decided, Later) else decided
