"""Tool intake: what a client does with a `tools/list` page before any tool reaches a model.

One bad tool never sinks the page: each tool is accepted (with its fingerprint and any
warnings) or rejected on its own, with a reason and a path.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import _wire as w
from ._contenthash import CONTENT_HASH_KEY, content_hash
from ._errors import Error, PathItem, render_path, type_error
from ._fingerprint import fingerprint_of
from ._headers import find_invalid_x_mcp_header
from ._jcs import canonical_json
from ._json import MAX_DEPTH, parse_json
from ._model_view import iter_model_text
from ._names import check_tool_name
from ._tool import Hints, Tool, check_server_id, check_tool_shape
from ._unicode import find_hidden
from ._validate import schema_warnings
from ._versions import check_version, supports
from ._warnings import IntakeWarning

Transport = Literal["stdio", "streamable-http"]
TRANSPORTS: Final = frozenset({"stdio", "streamable-http"})

#: x-mcp-header annotations are defined from this revision on.

_HEADER_KEY: Final = b'"x-mcp-header"'

#: At most this many invisible or control characters are listed per string (the count is always
#: exact).
MAX_LISTED_INVISIBLE: Final = 16


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
    accepted: list[Tool] = []
    rejected: list[Rejection] = []
    warnings: list[IntakeWarning] = []
    seen: set[str] = set()

    for index, raw in enumerate(tools):
        try:
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
        # The canonical bytes first: they refuse what is not JSON (a hand-built cycle among
        # them) before any other walk of the tool could meet it.
        not_json: Error | None = None
        try:
            canonical = canonical_json(raw)
        except Error as exc:
            not_json = exc
        if not_json is None:
            found = _warnings(raw, name, index)
            if found:
                warnings.extend(found)
            # Meta-schema check (issue 13): a warning, never a rejection; compiles into cache.
            warnings.extend(
                x.with_prefix(w.TOOLS, index) for x in schema_warnings(raw, protocol_version)
            )
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
        if not_json is not None:
            rejected.append(_rejection(index, name, not_json, (w.TOOLS, index)))
            continue
        # The canonical bytes hold every key literally, so a tool without the annotation's
        # name anywhere skips the schema walk.
        if check_headers and _HEADER_KEY in canonical:
            problem = find_invalid_x_mcp_header(raw[w.INPUT_SCHEMA])
            if problem is not None:
                rejected.append(_rejection(index, name, problem, (w.TOOLS, index, w.INPUT_SCHEMA)))
                continue
        if CONTENT_HASH_KEY in raw:
            warnings.extend(_content_hash_warnings(raw, index))
        accepted.append(Tool(server_id, raw, fingerprint_of(canonical)))

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
    return intake(
        server_id,
        unwrap_response(value),
        transport=transport,
        protocol_version=protocol_version,
        trusted=trusted,
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


def _warnings(raw: Mapping[str, Any], name: str, index: int) -> list[IntakeWarning] | None:
    """The warnings about one shape-checked tool, or `None` (the common case: no findings)."""
    found: list[IntakeWarning] | None = None
    by_name = check_tool_name(name)
    if by_name:
        found = [x.with_prefix(w.TOOLS, index) for x in by_name]
    schema_type = raw[w.INPUT_SCHEMA].get("type")
    if type(schema_type) is not str or schema_type != "object":
        if found is None:
            found = []
        found.append(
            IntakeWarning(
                "input_schema_root_type",
                (w.TOOLS, index, w.INPUT_SCHEMA),
                'inputSchema root lacks "type": "object"; kept verbatim',
                {"got": _describe_type(schema_type)},
            )
        )
    icons = raw.get(w.ICONS)
    if type(icons) is list and icons:
        unsafe = icon_warnings(icons, (w.TOOLS, index, w.ICONS))
        if unsafe:
            found = (found or []) + unsafe
    # One definition of what a model reads (`_model_view`): every string of it is scanned.
    for item in iter_model_text(raw, plain=False):  # printable ASCII hides nothing: skipped
        invisible, controls = find_hidden(item.text)
        if not invisible and not controls:
            continue
        if found is None:
            found = []
        path = (w.TOOLS, index, *item.path)
        if invisible:
            found.append(_hidden_warning("invisible_unicode", path, invisible, item.is_key))
        if controls:
            found.append(_hidden_warning("control_characters", path, controls, item.is_key))
    return found


#: A URI scheme (RFC 3986 section 3.1) at the start of an icon `src`.
_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def icon_src_is_safe(src: str) -> bool:
    """Whether an icon `src` may be shown: an absolute `https:` or `http:` URL, or a
    `data:image/...` URI. Everything else is unsafe (`javascript:`, `file:`, `ftp:`, `ws:`,
    app schemes, and relative references, which resolve against whatever base the host has).

    Spec: 2026-07-28 basic/index "Icons" (clients MUST reject icon URIs that use unsafe
    schemes, such as javascript:, file:, ftp:, ws:, or local app URI schemes); schema
    `Icon.src` ("May be an HTTP/HTTPS URL or a data: URI", format uri).
    """
    match = _SCHEME.match(src)
    if match is None:
        return False
    scheme = match.group(1).lower()
    if scheme in ("https", "http"):
        return src[match.end() : match.end() + 2] == "//"
    return scheme == "data" and src[match.end() :].lower().startswith("image/")


def icon_warnings(icons: list[Any], prefix: tuple[PathItem, ...]) -> list[IntakeWarning]:
    """`icon_unsafe_uri` for each icon of `icons` whose string `src` is not safe to show
    (`icon_src_is_safe`); the path is `prefix + (i, "src")`."""
    found = []
    for i, icon in enumerate(icons):
        src = icon.get("src") if isinstance(icon, dict) else None
        if isinstance(src, str) and not icon_src_is_safe(src):
            match = _SCHEME.match(src)
            found.append(
                IntakeWarning(
                    "icon_unsafe_uri",
                    (*prefix, i, "src"),
                    "icon src is not an https/http URL or a data:image URI; do not show it",
                    {"scheme": match.group(1).lower()[:32] if match else "relative"},
                )
            )
    return found


def _content_hash_warnings(raw: dict[str, Any], index: int) -> list[IntakeWarning]:
    """`content_hash_mismatch` when a sent `contentHash` is not the declaration's SEP-3140 hash.

    Runs after the fingerprint, so `raw` is known to be JSON and `content_hash` cannot raise.
    """
    sent = raw[CONTENT_HASH_KEY]
    expected = content_hash(raw)
    if type(sent) is str and sent == expected:
        return []
    return [
        IntakeWarning(
            "content_hash_mismatch",
            (w.TOOLS, index, CONTENT_HASH_KEY),
            "contentHash is not the SEP-3140 hash of this declaration",
            {"expected": expected, "got": sent[:80] if type(sent) is str else _describe_type(sent)},
        )
    ]


_HIDDEN_MESSAGES: Final = {
    "invisible_unicode": "invisible character(s) a person cannot see",
    "control_characters": "control character(s) or terminal escape(s) that hide or rewrite text",
}


def _hidden_warning(
    code: str, path: tuple[PathItem, ...], hits: list[tuple[int, int]], is_key: bool
) -> IntakeWarning:
    where = " in a property name" if is_key else ""
    return IntakeWarning(
        code,
        path,
        f"{len(hits)} {_HIDDEN_MESSAGES[code]}{where}",
        {
            "count": len(hits),
            "code_points": [f"U+{cp:04X}" for _, cp in hits[:MAX_LISTED_INVISIBLE]],
            "indexes": [i for i, _ in hits[:MAX_LISTED_INVISIBLE]],
        },
    )


def _describe_type(value: object) -> Any:
    if value is None:
        return "missing"
    if isinstance(value, str):
        return value[:64]
    if isinstance(value, list):
        return [v[:64] if isinstance(v, str) else type(v).__name__ for v in value[:8]]
    return type(value).__name__
