"""Tool intake: what a client does with a `tools/list` page before any tool reaches a model.

One bad tool never sinks the page: each tool is accepted (with its fingerprint and any
warnings) or rejected on its own, with a reason and a path.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import _wire as w
from ._cache import BoundedCache
from ._errors import Error, PathItem, render_path, type_error
from ._intake_tool import MAX_LISTED_INVISIBLE, memo_for, take_tool
from ._json import MAX_DEPTH, parse_json
from ._tool import Hints, Tool, build_tool, check_server_id, check_tool_shape
from ._versions import check_version, supports
from ._warnings import IntakeWarning

Transport = Literal["stdio", "streamable-http"]
TRANSPORTS: Final = frozenset({"stdio", "streamable-http"})

__all__ = [
    "MAX_LISTED_INVISIBLE",
    "TRANSPORTS",
    "Intake",
    "Rejection",
    "Transport",
    "intake",
    "intake_json",
    "unwrap_response",
]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A tool excluded from the page, and why.

    Attributes:
        index: the tool's index in the page's `tools` array.
        name: its `name` when that was a string, else `None`.
        kind: the `Error.kind` of the cause, the kind `REASONS` gives `reason` (`"protocol"`
            for every intake rule; `"policy"` for `limit_exceeded`).
        reason: the `Error.reason` (e.g. `invalid_tool`, `duplicate_tool_name`,
            `x_mcp_header_type`).
        path: from the root of the `tools/list` result, e.g. `("tools", 3, "inputSchema")`.
        message: one line for a person (and for the log line the spec asks clients to write).
    """

    index: int
    name: str | None
    kind: str
    reason: str
    path: tuple[PathItem, ...]
    message: str

    @property
    def json_path(self) -> str:
        """`path` rendered as a string, e.g. `$.tools[3].inputSchema`."""
        return render_path(self.path)


@dataclass(frozen=True, slots=True)
class Intake:
    """The outcome of `intake` for one `tools/list` page.

    Attributes:
        server_id: the operator-assigned id of the listing server.
        tools: the accepted tools in server order, each with `fingerprint` set.
        rejected: one `Rejection` per excluded tool, in server order.
        warnings: findings about accepted or rejected tools (SHOULD-level rules), each with a
            path from the page root (`("tools", i, ...)`), in server order.
        next_cursor: `nextCursor` as sent, or `None` when absent.
        ttl_ms: `ttlMs` as sent, or `None` when absent.
        cache_scope: `cacheScope` as sent, or `None` when absent.
        trusted: whether the caller trusts this server (see `hints`).
    """

    server_id: str
    tools: tuple[Tool, ...]
    rejected: tuple[Rejection, ...]
    warnings: tuple[IntakeWarning, ...]
    next_cursor: Any
    ttl_ms: Any
    cache_scope: Any
    trusted: bool

    def tool(self, name: str) -> Tool | None:
        """The accepted tool called `name` (exact match), or `None`."""
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None

    def hints(self, tool: Tool) -> Hints:
        """`tool.hints(trusted=self.trusted)`: the hints a client may act on for this server."""
        return tool.hints(self.trusted)

    def warnings_for(self, index: int) -> tuple[IntakeWarning, ...]:
        """The warnings about the tool at `index` of the page's `tools` array.

        O(log n + k) for n warnings: `warnings` is in server order (as `intake` builds it), so
        a binary search finds the run; calling this for every tool of a page stays linear.
        """
        warnings = self.warnings
        low = bisect.bisect_left(warnings, index, key=_tool_index)
        high = bisect.bisect_right(warnings, index, lo=low, key=_tool_index)
        return tuple(x for x in warnings[low:high] if x.path[:2] == (w.TOOLS, index))


def _tool_index(warning: IntakeWarning) -> int:
    # Every intake warning's path starts ("tools", i); anything else sorts first.
    step = warning.path[1] if len(warning.path) > 1 and warning.path[0] == w.TOOLS else -1
    return step if type(step) is int else -1


def intake(
    server_id: str,
    result: object,
    *,
    transport: Transport,
    protocol_version: str,
    trusted: bool = False,
) -> Intake:
    """Take in one `tools/list` page: accept, reject and warn per tool, fingerprint the accepted.

    A tool seen before (the same JSON value, member order included, at the same protocol
    version and transport rules) is not checked again: its outcome comes from a bounded memo
    (`_intake_memo`), so a re-listing costs one serialization per tool.

    Per tool, in order: the shape check of `Tool.from_wire` (`invalid_tool`); duplicate names
    (`duplicate_tool_name`: the first tool with a name wins, later ones are rejected — the spec
    says names SHOULD be unique within a server, and an ambiguous name is a rug-pull lever);
    on Streamable HTTP from 2026-07-28, the `x-mcp-header` rules (`x_mcp_header_*`); and the
    fingerprint of the whole raw definition (a tool holding a value that is not JSON, e.g. NaN,
    is rejected with `invalid_json`; this check runs before the header rules). A rejected tool
    claims its name whatever the reason (`invalid_tool` included, when its `name` is a string):
    the first occurrence of a name wins, so a later tool of that name is rejected as
    `duplicate_tool_name` rather than silently taking its place.

    Warnings never reject and never change `raw`: `tool_name_length`, `tool_name_charset`,
    `input_schema_root_type` (the root lacks `"type": "object"`; the schema is kept verbatim),
    and, for every string a model reads (`_model_view.iter_model_text`: `name`, `title`,
    `description`, `annotations.title`, and in `inputSchema`/`outputSchema` every `title` and
    `description`, property names, and strings in `enum`/`const`/`default`/`examples`), one
    warning per string and kind with the exact path: `invisible_unicode` (zero-width, bidi,
    tag and other default-ignorable or format characters — a tool-poisoning signature) and
    `control_characters` (C0 controls except tab, LF and CR; DEL; C1 controls; so every
    terminal escape sequence). Their `details`: `count` (exact), `code_points` and `indexes`
    (Python `str` indexes into that string; at most `MAX_LISTED_INVISIBLE` listed). Also
    `input_schema_invalid` / `output_schema_invalid` (the schema fails its dialect's
    meta-schema, names an unsupported dialect, or has an unresolved `$ref`; path into the
    schema), and, on an accepted tool that sends `contentHash`, `content_hash_mismatch` when it
    is not the tool's `content_hash` (proposed SEP-3140: a warning, since it is not yet the
    spec; a guard may block on it).

    Args:
        server_id: the operator-assigned id of the server (non-empty `str`).
        result: the `result` member of a `tools/list` response, as parsed from JSON (handed
            over: not copied, never mutated).
        transport: `"stdio"` or `"streamable-http"`. On stdio `x-mcp-header` annotations are
            ignored (the spec's MAY).
        protocol_version: the negotiated protocol version (required: which rules apply
            depends on it, and a silent default of the newest version misleads; e.g.
            `"2025-11-25"`, one of `conduit_mcp_wire.VERSIONS`).
        trusted: whether the operator trusts this server's self-description; recorded on the
            `Intake` for `Intake.hints`.

    Returns:
        An `Intake`.

    Raises:
        Error: kind `"protocol"`, reason `"invalid_tools_list"`, when `result` is not an
            object (path `()`) or `tools` is missing or not an array (path `("tools",)`); kind
            `"policy"`, reason `"unknown_protocol_version"` for a version this library does not
            know.
        TypeError, ValueError: `server_id` is not a non-empty `str`, or `transport` is not
            one of the two transports (caller bugs).

    Total: linear in the size of the page; every walk uses an explicit stack, so no depth
    raises `RecursionError`.

    Spec: 2026-07-28 server/tools "Listing Tools", "Tool Names" (SHOULD: warnings),
    "Security Considerations"; basic/transports "Custom Headers from Tool Parameters"
    (clients MUST exclude a tool with an invalid `x-mcp-header` and SHOULD log name and
    reason); schema `ListToolsResult`.
    """
    return _intake(server_id, result, transport, protocol_version, trusted, False, None)


@dataclass(frozen=True, slots=True)
class _PageOutcome:
    """What a page's JSON text gave, apart from the `Tool`s (rebuilt on the fresh dicts)."""

    size: int  # len(tools)
    accepted: tuple[tuple[int, str | None], ...]  # (index, fingerprint)
    rejected: tuple[Rejection, ...]
    warnings: tuple[IntakeWarning, ...]


#: The pages seen by `intake_json`, by their exact text: a re-listing with the same bytes (the
#: common case: servers list the same tools again and again) is parsed, and nothing else is
#: computed. At most `PAGE_MEMO_PAGES` pages and `PAGE_MEMO_BYTES` of text held.
PAGE_MEMO_PAGES: Final = 16
PAGE_MEMO_BYTES: Final = 16 << 20
_pages: BoundedCache[tuple[str, bool, bytes | str], _PageOutcome] = BoundedCache(
    PAGE_MEMO_PAGES, max_weight=PAGE_MEMO_BYTES, weigh=lambda key, _: len(key[2])
)


def clear_page_memo() -> None:
    """Forget every page text seen (for tests and benchmarks)."""
    _pages.clear()


def _intake(
    server_id: str,
    result: object,
    transport: Transport,
    protocol_version: str,
    trusted: bool,
    pure: bool,
    text: bytes | str | None,
) -> Intake:
    # `pure`: every value of `result` came from `parse_json` (only JSON types, no NaN), so a
    # memo hit on the tool's bytes needs no equality check. `text`: the JSON text `result`
    # was parsed from, exactly (the page memo's key), or None.
    check_server_id(server_id)
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {sorted(TRANSPORTS)}, got {transport!r}")
    check_version(protocol_version)
    if not isinstance(result, dict):
        raise type_error("invalid_tools_list", (), "an object", result)
    tools = result.get(w.TOOLS)
    if not isinstance(tools, list):
        if w.TOOLS not in result:
            raise Error(
                "protocol",
                "invalid_tools_list",
                "tools is required (an array)",
                path=(w.TOOLS,),
                details={"expected": "an array", "got": "missing"},
            )
        raise type_error("invalid_tools_list", (w.TOOLS,), "an array", tools)

    check_headers = transport == "streamable-http" and supports(protocol_version, "x_mcp_header")
    page_key = None if text is None else (protocol_version, check_headers, text)
    if page_key is not None:
        page = _pages.get(page_key, None)
        if page is not None and page.size == len(tools):
            return Intake(
                server_id=server_id,
                tools=tuple(build_tool(server_id, tools[i], fp) for i, fp in page.accepted),
                rejected=page.rejected,
                warnings=page.warnings,
                next_cursor=result.get(w.NEXT_CURSOR),
                ttl_ms=result.get(w.TTL_MS),
                cache_scope=result.get(w.CACHE_SCOPE),
                trusted=trusted,
            )
    memo = memo_for(protocol_version, check_headers)
    accepted: list[Tool] = []
    rejected: list[Rejection] = []
    warnings: list[IntakeWarning] = []
    seen: set[str] = set()

    for index, raw in enumerate(tools):
        try:
            # `check_tool_shape`'s common case inline (exact types); anything else is its call.
            if not (
                type(raw) is dict
                and type(raw.get(w.NAME)) is str
                and type(raw.get(w.INPUT_SCHEMA)) is dict
            ):
                check_tool_shape(raw)
        except Error as exc:
            name = raw.get(w.NAME) if isinstance(raw, dict) else None
            name = name if isinstance(name, str) else None
            prefix: tuple[PathItem, ...] = (w.TOOLS, index)
            rejected.append(_rejection(index, name, exc, prefix))
            if name is not None:
                seen.add(name)  # a rejected tool still claims its name (first one wins)
            continue
        name = raw[w.NAME]
        found = take_tool(raw, protocol_version, check_headers, pure, memo)
        if found.warnings:
            warnings.extend(x.with_prefix(w.TOOLS, index) for x in found.warnings)
        if name in seen:
            rejected.append(
                Rejection(
                    index,
                    name,
                    "protocol",
                    "duplicate_tool_name",
                    (w.TOOLS, index, w.NAME),
                    "an earlier tool in this page has the same name; the first one wins",
                )
            )
            continue
        seen.add(name)
        if found.refusal is not None:
            rejected.append(_rejection(index, name, found.refusal, (w.TOOLS, index)))
            continue
        if found.accepted_warnings:
            warnings.extend(x.with_prefix(w.TOOLS, index) for x in found.accepted_warnings)
        accepted.append(build_tool(server_id, raw, found.fingerprint))

    if page_key is not None:
        positions = {id(raw): index for index, raw in enumerate(tools)}
        fingerprints = tuple((positions[id(t.raw)], t.fingerprint) for t in accepted)
        _pages.put(
            page_key, _PageOutcome(len(tools), fingerprints, tuple(rejected), tuple(warnings))
        )
    return Intake(
        server_id=server_id,
        tools=tuple(accepted),
        rejected=tuple(rejected),
        warnings=tuple(warnings),
        next_cursor=result.get(w.NEXT_CURSOR),
        ttl_ms=result.get(w.TTL_MS),
        cache_scope=result.get(w.CACHE_SCOPE),
        trusted=trusted,
    )


def intake_json(
    server_id: str,
    data: bytes | bytearray | memoryview | str,
    *,
    transport: Transport,
    protocol_version: str,
    trusted: bool = False,
    max_depth: int = MAX_DEPTH,
) -> Intake:
    """`intake` from the JSON text of a `tools/list` result or of a whole JSON-RPC response.

    Args:
        data: UTF-8 bytes (or `str`) of either the `result` object, or a JSON-RPC response
            object whose `result` member is it.
        server_id, transport, protocol_version, trusted: as `intake`.
        max_depth: as `parse_json`: the deepest nesting accepted, 1 to 1,024 (the default).

    Returns:
        An `Intake`.

    Raises:
        Error: as `parse_json` (`invalid_json`; kind `"policy"`, `limit_exceeded`, with the
            path into the JSON text) and as `intake`. A JSON-RPC *error* response raises kind
            `"protocol"`, reason `"invalid_tools_list"`, path `("error",)`, with the JSON-RPC
            `code` and `message` in `details`.
        TypeError, ValueError: as `intake`, and as `parse_json` for a bad `max_depth`.

    Total: as `parse_json`, then as `intake`: linear in `len(data)`, no recursion.
    """
    value = parse_json(data, max_depth=max_depth)
    text = data if isinstance(data, (bytes, str)) else bytes(data)  # bytearray: copied
    return _intake(
        server_id, unwrap_response(value), transport, protocol_version, trusted, True, text
    )


def unwrap_response(value: Any) -> Any:
    """Return `value["result"]` for a JSON-RPC response, else `value` itself.

    Raises:
        Error: kind `"protocol"`, reason `"invalid_tools_list"`, path `("error",)`, when
            `value` is a JSON-RPC error response (`details`: its `code` and `message`).
    """
    if isinstance(value, dict) and value.get("jsonrpc") == "2.0":
        if "result" in value:
            return value["result"]
        error = value.get("error")
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            raise Error(
                "protocol",
                "invalid_tools_list",
                "the response is a JSON-RPC error, not a result",
                path=("error",),
                details={
                    "code": code if isinstance(code, int) else None,
                    "message": message[:200] if isinstance(message, str) else None,
                },
            )
    return value


# -- per-tool checks ------------------------------------------------------------------------------


def _rejection(
    index: int, name: str | None, error: Error, prefix: tuple[PathItem, ...]
) -> Rejection:
    return Rejection(index, name, error.kind, error.reason, prefix + error.path, error.message)
