"""`parse_call_result`: dispatch a `tools/call` result at the negotiated protocol version.

Not a public module: import `parse_call_result` and `InputRequired` from `conduit_mcp.client`.

The one rule this module keeps: a body that is not a complete result never comes back as a
`ToolResult`. An interim (`input_required`) or task result read as "the tool returned nothing"
would let a caller act on an answer the server never gave.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Final, Literal, NoReturn, overload

from . import _wire as w
from ._errors import Error, json_type_name, render_path, type_error
from ._jsoncopy import copy_json
from ._jsonrules import MISSING
from ._result import ToolResult
from ._versions import check_version, supports

JSONObject = dict[str, Any]

#: `resultType` values of the core protocol (2026-07-28 basic "ResultType").
COMPLETE: Final = "complete"
INPUT_REQUIRED: Final = "input_required"

#: `resultType` values each extension adds, by the extension's identifier (the key a client
#: advertises under `capabilities.extensions`). 2026-07-28 basic "ResultType": the supported
#: set "MUST be created from the set defined in the core protocol and include any additional
#: values of supported extensions that are advertised via capabilities"; extensions/tasks:
#: `CreateTaskResult` carries `resultType: "task"`.
EXTENSION_RESULT_TYPES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {"io.modelcontextprotocol/tasks": frozenset({"task"})}
)


@dataclass(frozen=True, slots=True)
class ExtensionResult:
    """A `tools/call` result of a type an advertised extension adds (e.g. a task handle).

    Immutable. Not a `ToolResult`: the call has not completed; the extension's own protocol
    says what comes next (for a task: poll it by `raw["task"]["taskId"]`). Its body is not
    checked beyond `resultType`: its shape is the extension's.

    Attributes:
        result_type: the `resultType` as sent (e.g. `"task"`).
        extension: the identifier of the advertised extension that adds it.
        raw: the result object as received. Never mutated.

    Spec: 2026-07-28 basic "ResultType" (extension values); extensions/tasks "CreateTaskResult".
    """

    result_type: str
    extension: str
    raw: JSONObject


#: Members of the other results a `tools/call` can get back instead of a `CallToolResult`:
#: 2025-11-25 `CreateTaskResult.task`; 2026-07-28 `InputRequiredResult.inputRequests` and
#: `.requestState`. A body with one of them and no `content` is not a complete result. (The
#: TypeScript SDK keys its refusal on the same three members: `TOOL_RESULT_FOREIGN_FAMILY_KEYS`.)
FOREIGN_RESULT_KEYS: Final = ("task", w.INPUT_REQUESTS, w.REQUEST_STATE)


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class InputRequired:
    """A `tools/call` the server cannot finish without more input (an `InputRequiredResult`).

    Immutable. Not a failure and not a `ToolResult`: the client gathers what `input_requests`
    asks for, then retries the original request with `inputResponses` and, when it is not
    `None`, exactly `request_state` (spec 2026-07-28 basic/patterns/mrtr "Client Requirements
    (Basic Workflow)": the client MUST echo back the exact value, MUST NOT inspect, parse or
    modify it, and MUST NOT send one when none was received).

    Attributes:
        input_requests: the `inputRequests` map as sent (key: server-assigned id, value: an
            `elicitation/create`, `sampling/createMessage` or `roots/list` request object), or a
            fresh `{}` when the key was absent. Not copied: a view into `raw`.
        request_state: the opaque `requestState` string exactly as sent, or `None` when absent.
        meta: the result's `_meta` when it is an object, else `{}`.
        raw: the result object as received (unknown keys included). Never mutated.
        result_type: always `"input_required"`.

    Spec: 2026-07-28 schema `InputRequiredResult`, `InputRequests`; basic/patterns/mrtr
    "InputRequiredResult".
    """

    result_type: ClassVar[Literal["input_required"]] = INPUT_REQUIRED

    input_requests: JSONObject
    request_state: str | None
    meta: JSONObject
    raw: JSONObject

    def __init__(
        self,
        *,
        input_requests: JSONObject,
        request_state: str | None,
        meta: JSONObject,
        raw: JSONObject,
    ) -> None:
        # Internal: use `from_wire` (or `parse_call_result`), which checks the shape. Written
        # out, not the dataclass's: one local setter is ~8% faster (as `ToolResult`).
        setter = object.__setattr__
        setter(self, "input_requests", input_requests)
        setter(self, "request_state", request_state)
        setter(self, "meta", meta)
        setter(self, "raw", raw)

    @classmethod
    def from_wire(cls, raw: object, *, copy: bool = False) -> InputRequired:
        """Take an `InputRequiredResult` off the wire, checking its shape.

        The object is handed over, not copied (pass `copy=True` for a defensive deep copy).
        What each input request asks for (its `params`) is not checked: answering it is the
        caller's job, and the caller must check it against the capabilities it declared.

        Args:
            raw: the `result` member of the response, as parsed from JSON.
            copy: deep-copy `raw` first (cost grows with its size).

        Returns:
            The `InputRequired`.

        Raises:
            Error: kind `"protocol"`:
                reason `"invalid_tool_result"` when `raw` is not an object (path `()`);
                reason `"invalid_result_type"` when `resultType` is not `"input_required"`
                (path `("resultType",)`);
                reason `"invalid_tool_result"` when `inputRequests` is present and not an object
                (path `("inputRequests",)`), one of its values is not an object (path
                `("inputRequests", key)`) or has no string `method` (path
                `("inputRequests", key, "method")`), when `requestState` is present and not a
                string (path `("requestState",)`), when neither `inputRequests` nor
                `requestState` is present (path `()`), or when `inputRequests` is `{}` and there
                is no `requestState` (path `("inputRequests",)`).

        Total: O(number of input requests); request bodies are not walked, so depth cannot make
        it fail.

        Spec: 2026-07-28 schema `InputRequiredResult` (`inputRequests`: object of
        `InputRequest`, `requestState`: string; "At least one of `inputRequests` or
        `requestState` MUST be present"); basic/patterns/mrtr "Server Requirements (Basic
        Workflow)": servers MUST include at least one of `inputRequests` or `requestState`, and
        each value MUST be an `ElicitRequest`, `CreateMessageRequest` or `ListRootsRequest`
        (each an object with a string `method`). conduit-defined, stricter than the schema: an
        empty `inputRequests` does not count as present (it requests nothing).
        """
        if not isinstance(raw, dict):
            raise type_error("invalid_tool_result", (), "an object", raw)
        result_type = raw.get(w.RESULT_TYPE, MISSING)
        if not isinstance(result_type, str) or result_type != INPUT_REQUIRED:
            _reject_result_type(result_type, expected=f'"{INPUT_REQUIRED}"')
        if copy:
            raw = copy_json(raw)
        requests = raw.get(w.INPUT_REQUESTS, MISSING)
        state = raw.get(w.REQUEST_STATE, MISSING)
        if requests is MISSING and state is MISSING:
            raise Error(
                "protocol",
                "invalid_tool_result",
                "an InputRequiredResult must carry inputRequests or requestState",
                details={"expected": "inputRequests or requestState", "got": "neither"},
            )
        if requests is MISSING:
            requests = {}
        else:
            _check_requests(requests)
        if state is MISSING:
            state = None
        elif not isinstance(state, str):
            raise type_error("invalid_tool_result", (w.REQUEST_STATE,), "a string", state)
        if not requests and state is None:
            # An empty map asks for nothing and leaves nothing to echo: the retry could only
            # repeat the request that produced this result (the Python SDK refuses it too).
            raise Error(
                "protocol",
                "invalid_tool_result",
                "an InputRequiredResult without requestState must carry a non-empty "
                "inputRequests",
                path=(w.INPUT_REQUESTS,),
                details={"expected": "a non-empty object or a requestState", "got": "{}"},
            )
        meta = raw.get(w.META)
        return cls(
            input_requests=requests,
            request_state=state,
            meta=meta if isinstance(meta, dict) else {},
            raw=raw,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InputRequired):
            return NotImplemented
        return self.raw == other.raw

    __hash__ = None  # type: ignore[assignment]  # holds dicts

    def __repr__(self) -> str:
        return (
            f"InputRequired(input_requests=<{len(self.input_requests)} requests>, "
            f"has_request_state={self.request_state is not None!r})"
        )


def _check_requests(requests: object) -> None:
    if not isinstance(requests, dict):
        raise type_error("invalid_tool_result", (w.INPUT_REQUESTS,), "an object", requests)
    for key, request in requests.items():
        if not isinstance(request, dict):
            raise type_error("invalid_tool_result", (w.INPUT_REQUESTS, key), "an object", request)
        method = request.get("method", MISSING)
        if not isinstance(method, str):
            path = (w.INPUT_REQUESTS, key, "method")
            if method is MISSING:
                raise Error(
                    "protocol",
                    "invalid_tool_result",
                    f"{render_path(path)} is required (a string)",
                    path=path,
                    details={"expected": "a string", "got": "missing"},
                )
            raise type_error("invalid_tool_result", path, "a string", method)


def _reject_result_type(result_type: object, *, expected: str) -> NoReturn:
    details: dict[str, Any] = {"expected": expected, "got": json_type_name(result_type)}
    if result_type is MISSING:
        details["got"] = "missing"
        message = (
            f"$.resultType is required at protocol 2026-07-28 and later ({expected}); "
            "only a server on an earlier revision may omit it"
        )
    elif isinstance(result_type, str):
        # The value is the peer's, but short and needed to debug; kept out of the message.
        details["value"] = result_type[:64]
        message = f"$.resultType is not a recognised result type (expected {expected})"
    else:
        message = f"$.resultType must be a string, got {details['got']}"
    raise Error("protocol", "invalid_result_type", message, path=(w.RESULT_TYPE,), details=details)


def _check_complete(raw: JSONObject) -> None:
    """Refuse a body that carries another result type's members and no `content`."""
    if w.CONTENT in raw:
        return
    for key in FOREIGN_RESULT_KEYS:
        if key in raw:
            raise Error(
                "protocol",
                "invalid_result_type",
                f"{render_path((key,))} belongs to another result type and there is no "
                "$.content: not a complete tools/call result",
                path=(key,),
                details={"expected": "a CallToolResult (content)", "got": key},
            )


@overload
def parse_call_result(
    raw: object, *, protocol_version: str, copy: bool = False
) -> ToolResult | InputRequired: ...


@overload
def parse_call_result(
    raw: object, *, protocol_version: str, copy: bool = False, extensions: Iterable[str]
) -> ToolResult | InputRequired | ExtensionResult: ...


def parse_call_result(
    raw: object, *, protocol_version: str, copy: bool = False, extensions: Iterable[str] = ()
) -> ToolResult | InputRequired | ExtensionResult:
    """Take a `tools/call` result off the wire and dispatch it at the negotiated version.

    On 2026-07-28 and later the result MUST carry `resultType`: `"complete"` gives a
    `ToolResult`, `"input_required"` an `InputRequired`; an absent `resultType`, any other value,
    or a value that is not a string is refused. Before 2026-07-28 `resultType` is not part of the
    protocol and is ignored (absent means complete): every result is a `ToolResult`.

    On every version, a body without `content` that carries a member of another result type
    (`task`, `inputRequests`, `requestState`) is refused, so an interim or task result never
    reads as "the tool returned nothing". A body without `content` and without those members
    still reads as `content: []`, as `ToolResult.from_wire` does.

    On 2026-07-28 and later a `resultType` that an extension in `extensions` adds
    (`EXTENSION_RESULT_TYPES`, e.g. `"task"` for `io.modelcontextprotocol/tasks`) gives an
    `ExtensionResult`; any other unrecognised value is still refused.

    Args:
        raw: the `result` member of the `tools/call` response, as parsed from JSON. Handed over,
            not copied (see `copy`); never mutated.
        protocol_version: the negotiated protocol revision (one of `KNOWN_VERSIONS`, e.g.
            `"2026-07-28"`).
        copy: deep-copy `raw` first (cost grows with its size).
        extensions: the identifiers of the extensions the client advertised in its
            capabilities (`capabilities.extensions` keys); default none.

    Returns:
        A `ToolResult` (the call completed; `is_error` tells whether the tool failed) or, on
        2026-07-28 and later only, an `InputRequired` (retry with the requested input) or an
        `ExtensionResult` (a result type of an advertised extension).

    Raises:
        TypeError: `protocol_version` is not a `str` (a caller bug).
        Error: kind `"policy"`, reason `"unknown_protocol_version"` when `protocol_version` is
            not a known revision (path `()`). Kind `"protocol"`:
            reason `"invalid_tool_result"` when `raw` is not an object (path `()`) or its shape
            is wrong (see `ToolResult.from_wire` and `InputRequired.from_wire`; this includes an
            `input_required` result with neither a non-empty `inputRequests` nor a
            `requestState`);
            reason `"invalid_result_type"` on 2026-07-28 and later when `resultType` is absent
            (`details["got"] == "missing"`), not a string, or a string other than
            `"complete"` / `"input_required"` (path `("resultType",)`; a string value is in
            `details["value"]`, truncated to 64 characters);
            reason `"invalid_result_type"` on every version when the body has no `content` and
            carries `task`, `inputRequests` or `requestState` (path `(that key,)`, the first
            in that order).

    Total: O(number of top-level keys, plus input requests); nothing is walked deeply.

    Spec: 2026-07-28 schema `Result.resultType` / `CallToolResult.resultType` ("Servers
    implementing this protocol version MUST include this field. For backward compatibility,
    when a client receives a result from a server implementing an earlier protocol version
    (which does not include `resultType`), the client MUST treat the absent field as
    `"complete"`": the bridge is scoped to earlier-revision servers, so at a negotiated
    2026-07-28 an absent field is a violation); 2026-07-28 basic "ResultType": "A `resultType`
    of any value unrecognized by the client MUST be considered invalid"; 2026-07-28 schema
    `CallToolResultResponse.result`: `InputRequiredResult` or `CallToolResult`, and
    `CallToolResult` requires `content` (every revision); basic/patterns/mrtr
    "InputRequiredResult"; 2025-11-25 schema `CreateTaskResult` (`task`, the answer to a
    task-augmented `tools/call`).

    >>> parse_call_result({"resultType": "complete", "content": []},
    ...                   protocol_version="2026-07-28").is_error
    False
    """
    check_version(protocol_version)
    if not isinstance(raw, dict):
        raise type_error("invalid_tool_result", (), "an object", raw)
    if supports(protocol_version, "result_type"):
        result_type = raw.get(w.RESULT_TYPE, MISSING)
        if isinstance(result_type, str) and result_type == INPUT_REQUIRED:
            return InputRequired.from_wire(raw, copy=copy)
        if isinstance(result_type, str) and result_type != COMPLETE:
            for extension in extensions:
                if result_type in EXTENSION_RESULT_TYPES.get(extension, ()):
                    body = copy_json(raw) if copy else raw
                    return ExtensionResult(result_type, extension, body)
        if not isinstance(result_type, str) or result_type != COMPLETE:
            _reject_result_type(result_type, expected=f'"{COMPLETE}" or "{INPUT_REQUIRED}"')
    _check_complete(raw)
    return ToolResult.from_wire(raw, copy=copy)
