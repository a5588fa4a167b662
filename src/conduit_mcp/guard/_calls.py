"""`tools/call`: the gate before a call is written, the checks on its result.

Not a public module. No SDK import.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from ..client import (
    Error,
    ExtensionResult,
    InputRequired,
    OutputValidation,
    PathItem,
    ToolResult,
    parse_call_result,
    render_path,
)
from . import _checks
from ._base import (
    _CALL,
    PASS,
    Verdict,
    _bind,
    _cause,
    _replace,
)
from ._events import logger
from ._jsonrpc import (
    INVALID_REQUEST_CODE,
    INVALID_RESULT_CODE,
    REFUSED_CALL_CODE,
    error_response,
    result_response,
    withheld_result,
)
from ._modeltext import clean_call_result
from ._scope import InputRefused, Scope
from ._sdkcheck import sdk_result_refusal
from ._sdkfast import surely_accepted
from ._state import (
    ID_IN_USE,
    Pending,
    ToolState,
)


class Calls(Scope):
    """The decisions on each `tools/call` of one connection."""

    def _not_tracked(self, request_id: Any, method: str, name: str | None, reason: str) -> Verdict:
        """The refusal of a request `Outstanding.add` did not take (`reason`: its answer):
        answered locally, never written. A reused id is JSON-RPC "Invalid Request"."""
        if reason == ID_IN_USE:
            why = (
                "a request with this id still awaits its response on this connection "
                "(request ids must not be reused within a session)"
            )
            code = INVALID_REQUEST_CODE
        else:
            why = (
                f"{self.outstanding.limit} requests already await their response on this connection"
            )
            code = REFUSED_CALL_CODE if method == _CALL else INVALID_RESULT_CODE
        self.emit(
            "call_refused" if method == _CALL else "request_refused",
            name,
            reason,
            "refused",
            message=why,
            details={"request_id": str(request_id)[:64], "method": method[:64]},
        )
        return Verdict(
            "answer",
            error_response(
                request_id,
                code,
                f"conduit-mcp guard refused the request: {why}",
                reason=reason,
                tool=name,
                path=(),
            ),
        )

    def _refuse_malformed_call(self, request_id: Any) -> Verdict:
        """A `tools/call` whose `params` is not an object or whose `name` is not a string:
        answered locally (-32602, reason `invalid_call`), never written."""
        why = "a tools/call must name its tool with a string in an object of params"
        self.emit(
            "call_refused",
            None,
            "invalid_call",
            "refused",
            path=("name",),
            message=why,
            details={"request_id": str(request_id)[:64]},
        )
        return Verdict(
            "answer",
            error_response(
                request_id,
                REFUSED_CALL_CODE,
                f"conduit-mcp guard refused the call: {why}",
                reason="invalid_call",
                tool=None,
                path=("name",),
            ),
        )

    def _gate_call_now(
        self, request_id: Any, params: dict[str, Any], extensions: tuple[str, ...]
    ) -> Verdict | Coroutine[Any, Any, Verdict]:
        """The verdict on a `tools/call` (its `params` an object with a string `name`), or,
        when its argument check must run in a worker thread, the rest of the decision as a
        coroutine to await at once (the call stays registered, gating, meanwhile)."""
        name: str = params["name"]
        # Registered before any wait: the SDK already waits on this id, and a response the
        # read loop sees while the call is gated is a guess at an unsent request (dropped).
        # Positional: a keyword makes CPython 3.11 build a dict for `__init__` (once a call).
        pending = Pending(_CALL, name, None, False, None, True)  # gating
        pending.extensions = extensions
        untracked = self.outstanding.add(request_id, pending)
        if untracked is not None:
            return self._not_tracked(request_id, _CALL, name, untracked)
        state = self.shared.book.tools.get(name)
        try:
            refusal = self._refusal_now(name, params, state)
        except Exception as exc:  # a bug here must not let the call through unchecked
            logger.exception("guard failed while gating tools/call")
            refusal = ("guard_internal_error", (), f"the guard failed ({type(exc).__name__})")
        except BaseException:  # never written, so never answered
            self.outstanding.forget_unsent(request_id, pending)
            raise
        if refusal is None:  # `_gated`'s pass, inline
            state = self.shared.book.tools.get(name)
            pending.tool = state.tool if state is not None else None
            pending.state = state
            pending.gating = False
            return PASS
        if type(refusal) is _Bounded:
            return self._gate_call_later(request_id, name, refusal, pending)
        return self._gated(request_id, name, pending, refusal)  # type: ignore[arg-type]

    async def _gate_call_later(
        self, request_id: Any, name: str, bounded: _Bounded, pending: Pending
    ) -> Verdict:
        """`_gate_call_now`'s decision after its argument check ran in a worker thread."""
        timeout = self.shared.policy.output_timeout
        refusal: _Refusal | None
        try:
            try:
                refusal = _argument_refusal(await _checks.bounded(bounded.check, timeout))
            except _checks.Timeout:
                refusal = (
                    "argument_check_timeout",
                    ("arguments",),
                    f"the argument check did not finish within {timeout} s",
                )
        except Exception as exc:  # a bug here must not let the call through unchecked
            logger.exception("guard failed while gating tools/call")
            refusal = ("guard_internal_error", (), f"the guard failed ({type(exc).__name__})")
        except BaseException:  # cancelled while gated: never written, so never answered
            self.outstanding.forget_unsent(request_id, pending)
            raise
        return self._gated(request_id, name, pending, refusal)

    def _gated(
        self, request_id: Any, name: str, pending: Pending, refusal: _Refusal | None
    ) -> Verdict:
        """The gate's verdict once `refusal` is known: the call goes out (its tool's state
        kept for its result), or it is answered locally (event `call_refused`)."""
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

    def _refusal_now(
        self, name: str, params: dict[str, Any], state: ToolState | None
    ) -> _Refusal | _Bounded | None:
        """Why the call may not go out (`None`: it may), or the argument check to run in a
        worker thread (a schema not linear in the arguments) that decides it; `state` is the
        tool's (`None`: never listed)."""
        if state is None:
            return "unknown_tool", ("name",), "the tool was never listed by this server"
        if state.status != "ok":
            return _STATUS_REFUSAL[state.status](state)
        tool = state.tool
        policy = self.shared.policy
        if tool is None or not policy.check_arguments:
            return None
        version = self._known
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
        elif type(arguments) is not dict and not isinstance(arguments, dict):
            return "invalid_arguments", ("arguments",), "arguments must be an object"
        linear = state.input_linear
        if linear is None:
            linear = state.input_linear = _checks.is_linear(tool, "inputSchema")
        if not linear:
            return _Bounded(
                _bind(_checks.check_arguments, tool, arguments, protocol_version=version)
            )
        # Linear in the arguments: checked inline. Valid arguments (the common case) are one
        # `is_valid` of the validator kept on the tool's state; anything else the full check.
        memo = state.input_check
        if memo is None or memo[0] is not tool or memo[1] != version:
            validator = _checks.arguments_validator(tool, protocol_version=version)
            memo = state.input_check = (tool, version, validator)
        validator = memo[2]
        if validator is not None:
            try:
                if validator.is_valid(arguments):
                    return None
            except BaseException:  # a panic included: the full check reports it (`collect`)
                pass
        return _argument_refusal(_checks.check_arguments(tool, arguments, protocol_version=version))

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

    def _call_response_now(
        self, request_id: Any, result: Any, pending: Pending
    ) -> Verdict | Coroutine[Any, Any, Verdict]:
        """The verdict on a `tools/call` response's `result`: the checks, then the cleaning of
        its text (`clean_call_result`); or, when its output check must run in a worker
        thread, the rest of the decision as a coroutine to await at once. A plain result
        (`_sdkfast.surely_accepted`: text blocks only) skips what is decided for it already:
        it parses as a complete `ToolResult` on every version and the SDK's models accept it;
        its structured content is still validated and its text still cleaned."""
        version = self._known
        plain = version is not None and surely_accepted(result, version)
        verdict = self._on_call_result_now(request_id, result, pending, version, plain)
        if type(verdict) is not Verdict:
            return self._cleaned_later(verdict, request_id, result, pending.name)
        if verdict is PASS and plain and _STRUCTURED not in result and _clean(result[_CONTENT]):
            return PASS  # text blocks of printable ASCII only: `clean_call_result` keeps it
        return clean_call_result(self, request_id, result, verdict, pending.name)

    async def _cleaned_later(
        self,
        checked: Coroutine[Any, Any, Verdict],
        request_id: Any,
        result: Any,
        name: str | None,
    ) -> Verdict:
        return clean_call_result(self, request_id, result, await checked, name)

    def _on_call_result_now(
        self, request_id: Any, result: Any, pending: Pending, version: str | None, plain: bool
    ) -> Verdict | Coroutine[Any, Any, Verdict]:
        name = pending.name
        if version is None:
            self.emit(
                "unchecked",
                name,
                "unknown_protocol_version",
                "passed",
                message="tools/call result not checked: protocol version unknown",
            )
            return PASS
        parsed: ToolResult | None = None
        if not plain:
            checked = self._checked_result(request_id, result, pending, version)
            if isinstance(checked, Verdict):
                return checked
            parsed = checked
        tool = pending.tool
        policy = self.shared.policy
        if (
            tool is None
            or policy.invalid_output == "pass"
            or (parsed.is_error if parsed is not None else result.get("isError") is True)
            or tool.raw.get("outputSchema") is None
            or not self._structured
        ):
            return PASS  # nothing to validate (validate_structured would skip it)
        if parsed is None:  # a plain result: a complete ToolResult on every version
            parsed = ToolResult.from_wire(result)
        state = pending.state
        linear = state.output_linear if state is not None else None
        if linear is None:
            linear = _checks.is_linear(tool, "outputSchema")
            if state is not None:
                state.output_linear = linear
        if not linear:
            return self._output_later(request_id, name, parsed, tool, version)
        try:  # linear in the value: checked inline
            verdict: OutputValidation | None = _checks.validate_output(
                parsed, tool, protocol_version=version
            )
        except _checks.Timeout:
            verdict = None
        return self._output_verdict(request_id, name, verdict)

    async def _output_later(
        self, request_id: Any, name: str | None, parsed: ToolResult, tool: Any, version: str
    ) -> Verdict:
        """The output check of `_on_call_result_now` in a worker thread, under the time bound."""
        check = _bind(_checks.validate_output, parsed, tool, protocol_version=version)
        try:
            verdict: OutputValidation | None = await _checks.bounded(
                check, self.shared.policy.output_timeout
            )
        except _checks.Timeout:
            verdict = None
        return self._output_verdict(request_id, name, verdict)

    def _output_verdict(
        self, request_id: Any, name: str | None, verdict: OutputValidation | None
    ) -> Verdict:
        """What an output check's `verdict` (`None`: it timed out) makes of the result."""
        policy = self.shared.policy
        if verdict is None:
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
                    reason=reason,
                ),
            )
        )

    def _checked_result(
        self, request_id: Any, result: Any, pending: Pending, version: str
    ) -> ToolResult | Verdict:
        """`result` parsed at `version` (a complete `ToolResult`), or the final verdict: an
        error for a result that is no result or that the SDK's models refuse, a pass for an
        extension's or an input-required result (its requests screened)."""
        name = pending.name
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
            try:
                screened = self._screen_input_requests(result, version)
            except InputRefused as refusal:
                return _replace(
                    error_response(
                        request_id,
                        INVALID_RESULT_CODE,
                        "conduit-mcp guard: the server's tools/call result asks for input whose "
                        "text holds invisible or control characters",
                        reason=refusal.reason,
                        tool=name,
                        path=refusal.path,
                    )
                )
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
        return parsed


_BLOCKED_WHY: Final = {
    "changed": "the tool's definition changed since it was pinned",
    "revoked": "the tool's pin was revoked in the pin store",
}


_HELD_WHY: Final = {
    "new": "the tool is new and awaits approval",
    "limit": (
        "the tool is new and the guard's private store holds as many tool names of this "
        "server as it keeps (max_tools): it awaits approval"
    ),
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
                (
                    "tool_rejected",
                    ("name",),
                    "a person rejected this definition of the tool in the pin store",
                )
                if s.reason == "rejected"
                else (
                    "tool_blocked",
                    ("name",),
                    (_BLOCKED_WHY.get(s.reason, "new tools are blocked for this server")),
                )
            )
        )
    ),
    "held": lambda s: (
        "tool_held",
        ("name",),
        _HELD_WHY.get(s.reason, "the tool changed and awaits approval"),
    ),
}


_CONTENT: Final = "content"
_STRUCTURED: Final = "structuredContent"


def _clean(content: list[dict[str, str]]) -> bool:
    """Whether every text of a plain result's text blocks is printable ASCII (then
    `clean_result_text` finds nothing hidden in a result without `structuredContent`)."""
    for block in content:
        text = block["text"]
        if not (text.isascii() and text.isprintable()):
            return False
    return True


#: Why a call may not go out: `(reason, path, message)`.
_Refusal = tuple[str, tuple[PathItem, ...], str]


class _Bounded:
    """An argument check too heavy to run inline: `check()` runs in a worker thread under
    the policy's time bound (`_checks.bounded`)."""

    __slots__ = ("check",)

    def __init__(self, check: Callable[[], OutputValidation]) -> None:
        self.check = check


def _argument_refusal(verdict: OutputValidation) -> _Refusal | None:
    """The refusal an argument check's `verdict` gives (`None`: the arguments are valid)."""
    if verdict.outcome != "invalid":
        return None
    first = verdict.errors[0]
    path = ("arguments", *first.path)  # from the request's params, as in `data.path`
    return (
        "invalid_arguments",
        path,
        f"arguments fail the tool's inputSchema at {render_path(path)}: {first.message}",
    )
