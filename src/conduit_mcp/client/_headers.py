"""`x-mcp-header` checks and the `Mcp-Param-{Name}` / `Mcp-Name` header values of a `tools/call`.

Spec: 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters"
("Schema Extension", "Value Encoding", "Client Behavior") and server/tools "x-mcp-header".

Not a public module: import from `conduit_mcp.client`.
"""

from __future__ import annotations

import binascii
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from . import _wire as w
from ._errors import Error, PathItem, cycle_error, json_type_name
from ._jsonrules import MAX_SAFE_INTEGER, MISSING, Link, link_keys
from ._tool import Tool
from ._versions import supports

_X: Final = w.X_MCP_HEADER
_PROPERTIES: Final = "properties"
_TYPE: Final = "type"

# RFC 9110 section 5.6.2: token = 1*tchar; tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" /
# "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA (ASCII only, no controls).
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NOT_TCHAR: Final = re.compile(r"[^!#$%&'*+\-.^_`|~0-9A-Za-z]")

#: The property types an `x-mcp-header` may sit on ("integer, string, boolean"; not `number`).
HEADER_PROPERTY_TYPES: Final = frozenset({"integer", "string", "boolean"})
_OTHER_TYPES: Final = frozenset({"number", "object", "array", "null"})


# Keywords whose values are instance data or plain names, never schemas: nothing below them is
# an annotation (`x-mcp-header` itself included: its value is checked, not walked). `example`
# is OpenAPI's singular form, which tool schemas converted from OpenAPI carry.
_DATA_KEYWORDS: Final = frozenset(
    {
        _X,
        "default",
        "const",
        "enum",
        "examples",
        "example",
        "required",
        "dependentRequired",
        "$vocabulary",
    }
)
# Keywords whose value is a map from names to schemas (the keys are names, not keywords).
# `properties` is the one that keeps a position statically reachable; it is handled apart.
_SCHEMA_MAPS: Final = frozenset(
    {"patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

_B64_PREFIX: Final = w.HEADER_B64_PREFIX
_B64_SUFFIX: Final = w.HEADER_B64_SUFFIX
_B64_MIN_LEN: Final = len(_B64_PREFIX) + len(_B64_SUFFIX)

_ROOT: Final[Any] = object()  # the step of the root, which has no link
_UNSET: Final[Any] = object()


def _left_chain_at(path: tuple[PathItem, ...]) -> PathItem | None:
    # Up to the first break a path is ("properties", name)*; report the step that broke it.
    for i in range(0, len(path), 2):
        if path[i] != _PROPERTIES:
            return path[i]
    return _PROPERTIES if path else None


def _check_annotation(
    node: Mapping[str, Any], link: Link, chain: bool, seen: dict[str, Link]
) -> Error | None:
    value = node[_X]
    if not chain or link is None:
        path = link_keys(link)
        via = _left_chain_at(path)
        if via is None:
            message = "x-mcp-header sits on the schema root, not on a property"
        else:
            message = (
                "x-mcp-header is not statically reachable: its path leaves the chain of "
                "`properties` keys"
            )
        return Error(
            "protocol",
            "x_mcp_header_unreachable",
            message,
            path=(*path, _X),
            details={"via": via},
        )
    if not isinstance(value, str):
        got = json_type_name(value)
        return _invalid_name(link, f"must be a string, got {got}", {"problem": "not_a_string"})
    if not value:
        return _invalid_name(link, "must not be empty", {"problem": "empty"})
    if _TOKEN.fullmatch(value) is None:
        bad = _NOT_TCHAR.search(value)
        assert bad is not None  # not a token and not empty: some character is not a tchar
        index = bad.start()
        code = ord(bad.group())
        control = code < 0x20 or 0x7F <= code <= 0x9F  # C0, DEL, C1
        problem = "control_character" if control else "not_a_token"
        codepoint = f"U+{code:04X}"
        return _invalid_name(
            link,
            f"must be an RFC 9110 token; {codepoint} at index {index} is not a tchar",
            {"problem": problem, "index": index, "codepoint": codepoint},
        )
    declared = node.get(_TYPE, MISSING)
    if not isinstance(declared, str) or declared not in HEADER_PROPERTY_TYPES:
        if declared is MISSING:
            got = said = "missing"
        elif isinstance(declared, str):
            got = declared
            # Name only the known type names in the message; any string stays in details.
            said = repr(declared) if declared in _OTHER_TYPES else "an unknown type name"
        else:
            got = json_type_name(declared)
            said = f"a JSON {got}"
        return Error(
            "protocol",
            "x_mcp_header_type",
            "x-mcp-header is on a property whose `type` is not one of integer, string, "
            f"boolean (got {said})",
            path=(*link_keys(link), _X),
            details={"expected": "integer, string or boolean", "got": got},
        )
    folded = value.lower()  # tokens are ASCII: lower() is exact ASCII case-folding
    first = seen.get(folded, MISSING)
    if first is not MISSING:
        path = (*link_keys(link), _X)
        first_path = (*link_keys(first), _X)
        return Error(
            "protocol",
            "x_mcp_header_duplicate",
            "x-mcp-header repeats, case-insensitively, the header name of an earlier "
            "annotation (details: first_path)",
            path=path,
            details={"header": value, "first_path": first_path},
        )
    seen[folded] = link
    return None


def _invalid_name(link: Link, what: str, details: dict[str, Any]) -> Error:
    path = (*link_keys(link), _X)
    return Error(
        "protocol",
        "x_mcp_header_invalid_name",
        f"x-mcp-header {what}",
        path=path,
        details=details,
    )


def _scan(root: object, collect: bool) -> tuple[Error | None, list[tuple[str, Link]]]:
    """Walk every schema position of `root` in document order; stop at the first bad annotation.

    Returns the error (or `None`) and, when `collect`, every valid annotation seen before it
    as `(header name, link to its property schema)`.

    Raises:
        Error: `root` contains itself (`cycle_error`: kind `"protocol"`, `"invalid_json"`).
    """
    found: list[tuple[str, Link]] = []
    seen: dict[str, Link] = {}
    on_path: set[int] = set()  # ids of the containers being walked: a revisit is a cycle
    # Entries are (node, parent link, step, chain); a node's own link (parent, step) is built
    # only when needed, so a leaf costs one small tuple. Children are pushed in reverse
    # document order, so they pop in document order.
    stack: list[Any] = [(root, None, _ROOT, True)]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if item.__class__ is int:  # exit marker: the container with this id is done
            on_path.discard(item)
            continue
        node, parent, step, chain = item
        node_id = id(node)
        if node_id in on_path:
            link = None if step is _ROOT else (parent, step)
            raise cycle_error(link_keys(link))
        mark = len(stack)
        link = _UNSET
        if isinstance(node, dict):
            # Every object not under a data keyword or a name map is a schema position.
            if _X in node:
                link = None if step is _ROOT else (parent, step)
                error = _check_annotation(node, link, chain, seen)
                if error is not None:
                    return error, found
                if collect:
                    found.append((node[_X], link))
            for key, value in reversed(node.items()):
                if not isinstance(value, (dict, list)) or key in _DATA_KEYWORDS:
                    continue
                if link is _UNSET:
                    link = None if step is _ROOT else (parent, step)
                if isinstance(value, dict) and (key == _PROPERTIES or key in _SCHEMA_MAPS):
                    keeps_chain = chain and key == _PROPERTIES
                    map_link = (link, key)
                    for name, sub in reversed(value.items()):
                        if sub.__class__ is dict and _X not in sub:
                            # Fast path for the common leaf (no annotation, no container
                            # value): nothing below it to visit, so do not push it.
                            for sub_value in sub.values():
                                if sub_value.__class__ is dict or sub_value.__class__ is list:
                                    break
                            else:
                                continue
                        if isinstance(sub, (dict, list)):
                            push((sub, map_link, name, keeps_chain))
                else:
                    # A schema-valued keyword, an array of schemas, or a keyword this library
                    # does not know: off the chain, and still searched (the spec rejects an
                    # annotation "anywhere else").
                    push((value, link, key, False))
        elif isinstance(node, list):  # each element is a position off the chain
            for index in range(len(node) - 1, -1, -1):
                sub = node[index]
                if isinstance(sub, (dict, list)):
                    if link is _UNSET:
                        link = None if step is _ROOT else (parent, step)
                    push((sub, link, index, False))
        if len(stack) > mark:
            # Keep this container on the path until all its children are done.
            on_path.add(node_id)
            stack.insert(mark, node_id)
    return None, found


def find_invalid_x_mcp_header(input_schema: object) -> Error | None:
    """Find the first invalid `x-mcp-header` annotation in a tool's `inputSchema`.

    Every schema position is visited, in document order, at any depth: the values of
    `properties`, `patternProperties`, `$defs`, `definitions`, `dependentSchemas` and
    `dependencies` maps, of `items`, `prefixItems`, `additionalProperties`, `allOf`/`anyOf`/
    `oneOf`/`not`, `if`/`then`/`else`, `contains`, `propertyNames`, `unevaluated*`,
    `contentSchema`, and of any keyword this library does not know (a custom vocabulary may make
    it an applicator). Not visited: the values of `default`, `const`, `enum`, `examples`,
    `example`, `required`, `dependentRequired`, `$vocabulary` (instance data and names), and the
    keys of name maps (a property *named* `x-mcp-header` is not an annotation). `$ref` is never
    dereferenced (and never fetched); an annotation under `$defs` is unreachable wherever it is
    referenced from.

    Args:
        input_schema: the tool's `inputSchema` as parsed from JSON (any JSON value; a
            non-container has no annotations). Not mutated.

    Returns:
        `None` when every annotation is valid (or there is none); else the `Error` for the
        first invalid one, not raised, with kind `"protocol"`, a path inside `input_schema`
        ending at the annotation key (e.g. `("properties", "a", "items", "x-mcp-header")`;
        intake prefixes `("tools", i, "inputSchema")`), and one of these reasons, checked in
        this order for each annotation:

        - `x_mcp_header_unreachable`: the annotation is on the schema root or on a position
          not reached by a chain of `properties` keys alone. `details["via"]`: the first step
          off the chain (e.g. `"items"`), `None` for the root.
        - `x_mcp_header_invalid_name`: the value is not a string, is empty, or is not an RFC
          9110 token (this also excludes CR, LF, TAB and every other control character,
          spaces, `:` and non-ASCII). `details["problem"]`: `"not_a_string"`, `"empty"`,
          `"control_character"` (C0, DEL or C1) or `"not_a_token"`, with `"index"` and
          `"codepoint"` of the first offending character.
        - `x_mcp_header_type`: the property's `type` is not exactly one of the strings
          `"integer"`, `"string"`, `"boolean"`: `"number"`, `"object"`, `"array"`, `"null"`,
          a missing `type`, and a list of types (even `["string", "null"]`) are all rejected.
          `details["got"]`: the type string, `"missing"`, or the JSON type of the value.
        - `x_mcp_header_duplicate`: the name equals an earlier annotation's name
          ASCII-case-insensitively. `details`: `"header"` (this name) and `"first_path"`
          (the earlier annotation's path, inside `input_schema`).

    Raises:
        Error: kind `"protocol"`, reason `"invalid_json"`, `details["got"] == "cycle"`, path
            into `input_schema`, when it contains itself (a Python reference cycle; no JSON
            parser produces one). Shared, acyclic sub-objects are walked once per occurrence.

    Total: an explicit stack, no recursion, so any depth works (10,000 levels and more); time
    and memory are linear in the size of the JSON text `input_schema` would serialize to.

    Spec: 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters" /
    "Schema Extension": `x-mcp-header` values MUST NOT be empty, MUST match HTTP field-name
    token syntax (`1*tchar`, RFC 9110 section 5.1), MUST NOT contain control characters, MUST be
    case-insensitively unique, MUST only be applied to parameters with primitive types
    (integer, string, boolean; `number` is not permitted), and MUST only be applied to
    properties statically reachable from the schema root via a chain consisting solely of
    `properties` keys ("An `x-mcp-header` annotation anywhere else makes the annotation -- and
    thus the tool definition -- invalid"). Clients on Streamable HTTP MUST reject (exclude) such
    a tool and SHOULD log its name and the reason; other transports MAY ignore annotations
    (choosing is the caller's job).

    >>> find_invalid_x_mcp_header(
    ...     {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    ... ).reason
    'x_mcp_header_type'
    """
    error, _ = _scan(input_schema, collect=False)
    return error


def param_headers_apply(transport: str, protocol_version: str) -> bool:
    """Whether `x-mcp-header` annotations are in force on a connection.

    Args:
        transport: `"stdio"` or `"streamable-http"`.
        protocol_version: the negotiated protocol version, one of the known revisions.

    Returns:
        `True` on Streamable HTTP from revision 2026-07-28 on: the client then sends the
        `Mcp-Param-{Name}` headers (`mcp_param_headers`) and `intake` rejects a tool with an
        invalid annotation. `False` on stdio (the annotations are ignored) and on earlier
        revisions (the extension does not exist there).

    Raises:
        Error: reason `"unknown_protocol_version"` for a version this library does not know.
        TypeError: `protocol_version` is not a `str` (a caller bug).

    Spec: 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters"
    (Streamable HTTP only; a stdio client MAY ignore the annotations).
    """
    # Imported here: intake imports this module, and the revision has its one home there.

    return transport == "streamable-http" and supports(protocol_version, "x_mcp_header")


def header_map(tool: Tool) -> dict[str, tuple[str, ...]]:
    """Map each `x-mcp-header` name of a tool to the property path whose value it mirrors.

    Args:
        tool: the tool; its `inputSchema` is read, never changed.

    Returns:
        `{header name as written in the annotation: property path}`, in document order; the
        property path is the chain of `properties` keys from the schema root (e.g. `("region",)`
        or `("options", "limit")`). `{}` when the tool has no annotations. The header sent is
        `"Mcp-Param-" + name`.

    Raises:
        Error: the first invalid annotation, as `find_invalid_x_mcp_header` finds it (same
            kind, reason and details), with its path prefixed by `("inputSchema",)` so that it
            is rooted at the tool.
        TypeError: `tool` is not a `Tool` (a caller bug).
        Error: kind `"protocol"`, reason `"invalid_json"`, when the schema contains itself
            (see `find_invalid_x_mcp_header`), path prefixed by `("inputSchema",)` likewise.

    Total: as `find_invalid_x_mcp_header`; the result costs the summed lengths of the paths.

    Spec: 2026-07-28 basic/transports/streamable-http "Custom Headers from Tool Parameters":
    "Header extraction is defined as reading the instance value at the exact property path of
    the annotated property (the chain of `properties` keys leading to it)."

    >>> header_map(Tool.from_wire("s", {"name": "q", "inputSchema": {"type": "object",
    ...     "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}))
    {'Region': ('region',)}
    """
    if not isinstance(tool, Tool):
        raise TypeError(f"tool must be a Tool, got {type(tool).__name__}")
    try:
        error, found = _scan(tool.input_schema, collect=True)
    except Error as exc:  # a cycle: rooted at the tool, like the annotation errors
        raise exc.with_prefix(w.INPUT_SCHEMA) from None
    if error is not None:
        raise error.with_prefix(w.INPUT_SCHEMA)
    result: dict[str, tuple[str, ...]] = {}
    for name, link in found:
        # A valid annotation's full path is ("properties", key)*: keep the keys.
        keys: tuple[Any, ...] = link_keys(link)[1::2]
        result[name] = keys
    return result


def encode_header_value(value: object) -> str:
    """Encode one value for an `Mcp-Param-{Name}` or `Mcp-Name` header.

    Type conversion first: a string as-is; an integer in decimal (`42`, `-7`); a boolean as
    `true` / `false`; a float with no fractional part (JSON `42.0`, which JSON Schema counts as
    an integer) as that integer in decimal. Then the string is sent plain when every character
    is visible ASCII or space (0x20-0x7E), it neither starts nor ends with a space, and it does
    not both start with `=?base64?` and end with `?=`; otherwise it is sent as
    `=?base64?{Base64 of its UTF-8 bytes, standard alphabet, padded}?=`. A tab is a control
    character, so it always takes the Base64 form. The empty string is sent plain (empty).

    Args:
        value: a `str`, `bool`, `int` or integral `float`.

    Returns:
        The header value (ASCII only, safe for any HTTP stack).

    Raises:
        Error: kind `"policy"`, reason `"header_value_unencodable"`, path `()`, when `value`
            is an integer (or integral float) outside -(2^53-1)..2^53-1, a non-integral,
            infinite or NaN float, any other type (`None`, list, dict, ...), or a string that
            is not valid Unicode text (a lone surrogate has no UTF-8 form).
            `details["problem"]`: `"integer_out_of_range"`, `"not_an_integer"`,
            `"unsupported_type"` or `"not_unicode"`; `details["got"]`: the JSON type of the
            value as passed (`"number"` for any float, so `1e300` is reported as a number
            out of range, not as an integer).

    Total: linear in the length of the value.

    Spec: 2026-07-28 basic/transports/streamable-http "Value Encoding" (clients MUST encode;
    MUST use the Base64 form for non-ASCII, control characters and leading/trailing
    whitespace; MUST also Base64-encode a plain value that matches the sentinel pattern; "The
    same encoding rule applies to the `Mcp-Name` header value") and "Schema Extension"
    (integer values MUST be within -2^53+1 .. 2^53-1).

    >>> encode_header_value("Hello, 世界")
    '=?base64?SGVsbG8sIOS4lueVjA==?='
    """
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = _integer_text(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _unencodable("not_an_integer", value, "a non-finite number")
        if not value.is_integer():
            raise _unencodable("not_an_integer", value, "a number with a fraction")
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            # Said of the float as sent: int(1e300) would report a 301-digit integer.
            raise _unencodable("integer_out_of_range", value, "a number outside -(2^53-1)..2^53-1")
        text = str(int(value))
    else:
        raise _unencodable("unsupported_type", value, f"a JSON {json_type_name(value)}")
    if (
        text.isascii()
        and text.isprintable()  # for ASCII: exactly 0x20-0x7E, so no tab or other control
        and (not text or (text[0] != " " and text[-1] != " "))
        and not (text.startswith(_B64_PREFIX) and text.endswith(_B64_SUFFIX))
    ):
        return text
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raise _unencodable("not_unicode", value, "a string with a lone surrogate") from None
    import base64  # only a value that needs it pays the module's import (with struct)

    return _B64_PREFIX + base64.b64encode(raw).decode("ascii") + _B64_SUFFIX


def _integer_text(number: int) -> str:
    if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        return str(number)
    raise _unencodable("integer_out_of_range", number, "an integer outside -(2^53-1)..2^53-1")


def _unencodable(problem: str, value: object, what: str) -> Error:
    return Error(
        "policy",
        "header_value_unencodable",
        f"{what} cannot be carried in an MCP header",
        details={"problem": problem, "got": json_type_name(value)},
    )


def decode_header_value(value: str) -> str:
    """Undo `encode_header_value` for a string (for tests, logs and servers).

    Args:
        value: a header value as sent.

    Returns:
        The payload of a `=?base64?...?=` value decoded from Base64 and UTF-8; any other value
        unchanged. (`encode_header_value` of a non-string gives its string form back, e.g.
        `"42"`, `"true"`.)

    Raises:
        TypeError: `value` is not a `str`.
        ValueError: the value has the sentinel form but its payload is not valid Base64 or
            the bytes are not UTF-8.

    Spec: 2026-07-28 basic/transports/streamable-http "Value Encoding" (the prefix `=?base64?`
    and suffix `?=` are case-sensitive and mark a Base64-encoded value).
    """
    if not isinstance(value, str):
        raise TypeError(f"value must be a str, got {type(value).__name__}")
    if (
        len(value) < _B64_MIN_LEN
        or not value.startswith(_B64_PREFIX)
        or not value.endswith(_B64_SUFFIX)
    ):
        return value
    payload = value[len(_B64_PREFIX) : len(value) - len(_B64_SUFFIX)]
    import base64  # only a value in the Base64 form pays the module's import

    try:
        return base64.b64decode(payload, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise ValueError("header value has the Base64 form but does not decode") from exc


def mcp_name_header(name: str) -> str:
    """The `Mcp-Name` header value for a `tools/call` (the tool name) or `resources/read` (URI).

    Args:
        name: `params.name` (or `params.uri`), exactly as it goes in the body.

    Returns:
        `encode_header_value(name)`: the name itself when it is plain header-safe ASCII, else
        its `=?base64?...?=` form.

    Raises:
        TypeError: `name` is not a `str` (a caller bug).
        Error: kind `"policy"`, reason `"header_value_unencodable"`, when `name` holds a lone
            surrogate (it has no UTF-8 form).

    Spec: 2026-07-28 basic/transports/streamable-http "Standard Request Headers" (if the
    `Mcp-Name` source value cannot be safely represented as a plain ASCII header value, clients
    MUST encode it using the Base64 sentinel format) and "Value Encoding".
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    return encode_header_value(name)


def mcp_param_headers(
    tool: Tool | Mapping[str, tuple[str, ...]], arguments: Mapping[str, Any] | None
) -> dict[str, str]:
    """Build the `Mcp-Param-{Name}` headers of a `tools/call` from its arguments.

    For each annotation, the value at its property path in `arguments` is encoded with
    `encode_header_value`; a missing value, a JSON `null`, or a path that meets a non-object
    on the way is "no value present", and its header is omitted. The value is converted by its
    own JSON type, not by the declared `type`: the server compares the header with the body's
    value, and checking arguments against `inputSchema` is argument validation's job.

    Args:
        tool: the `Tool` (its `header_map` is computed on every call), or a header map from
            `header_map(tool)` computed once and reused (the fast path).
        arguments: the `arguments` object of the call; `None` means no arguments. Not mutated.

    Returns:
        `{"Mcp-Param-" + name: encoded value}` in the header map's order; `{}` when nothing
        applies.

    Raises:
        Error: from `header_map` when `tool` is a `Tool` with an invalid annotation; or kind
            `"policy"`, reason `"header_value_unencodable"`, when a present value cannot be
            encoded (see `encode_header_value`: out-of-range integer, non-integral number,
            array, object, lone surrogate), with the path of that value inside `arguments`.
            A local refusal, not a peer fault: the values are the caller's.
        TypeError: `tool` is neither a `Tool` nor a mapping, or `arguments` is neither a
            mapping nor `None` (caller bugs).

    Total: linear in the summed lengths of the property paths and the encoded values.

    Spec: 2026-07-28 basic/transports/streamable-http "Client Behavior" (extract the value at
    each annotated property's exact property path, omitting the header when no value is
    present; encode; append `Mcp-Param-{Name}: {Value}`) and its table (a `null` value or a
    parameter not in arguments: the client MUST omit the header).
    """
    # `type(x) is dict` first: an ABC isinstance check costs more than the rest of a lookup.
    if type(tool) is dict or (not isinstance(tool, Tool) and isinstance(tool, Mapping)):
        mapping: Mapping[str, tuple[str, ...]] = tool
    elif isinstance(tool, Tool):
        mapping = header_map(tool)
    else:
        raise TypeError(f"tool must be a Tool or a header map, got {type(tool).__name__}")
    if arguments is None:
        return {}
    if type(arguments) is not dict and not isinstance(arguments, Mapping):
        raise TypeError(f"arguments must be a mapping or None, got {type(arguments).__name__}")
    headers: dict[str, str] = {}
    for name, keys in mapping.items():
        node: Any = arguments
        for key in keys:
            if type(node) is dict or isinstance(node, Mapping):
                node = node.get(key)
                if node is None:
                    break
            else:
                node = None
                break
        if node is None:
            continue
        try:
            headers[w.MCP_PARAM_HEADER_PREFIX + name] = encode_header_value(node)
        except Error as exc:
            raise exc.with_prefix(*keys) from None
    return headers
