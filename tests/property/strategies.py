"""Hypothesis strategies shared by the property tests.

Three sources of input, as the issue asks:

* arbitrary JSON values (`json_values`): nested objects and arrays, unicode (with lone
  surrogates outside `wire=True`), huge integers, floats incl. `-0.0` (NaN and infinities
  outside `wire=True`), empty keys and the wire names this library looks at;
* mutations of real inputs (`mutated`): the spec examples and the captured corpus, with one to
  three random edits (a value replaced, a key deleted or added, an element inserted);
* schema-valid instances (`schema_instances`): generated from the official schema definitions
  of every spec version with a small generator of our own (the schema closures of `Tool` and
  `CallToolResult` use only `type`, `properties`, `required`, `items`, `anyOf`, `$ref`,
  `additionalProperties`, `const`, `enum`, `format`, `minimum`, `maximum`; hypothesis-jsonschema
  0.23.1 fails on object schemas with hypothesis 6.170, `'many' object has no attribute
  'more'`).
"""

from __future__ import annotations

import base64
import copy
import functools
import json
from pathlib import Path
from typing import Any

from conduit_mcp_wire import VERSIONS
from hypothesis import strategies as st

from tests.corpus import all_tools, cases, results, tool_lists

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "schema"

# VERSIONS: every spec version with a vendored schema, oldest first (conduit_mcp_wire's registry,
# which the generator takes from schema/PINNED.json).

# Keys this library reads somewhere: a random object holds them often enough to matter.
WIRE_KEYS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
    "icons",
    "_meta",
    "content",
    "structuredContent",
    "isError",
    "resultType",
    "inputRequests",
    "requestState",
    "method",
    "tools",
    "nextCursor",
    "type",
    "text",
    "data",
    "mimeType",
    "uri",
    "resource",
    "blob",
    "properties",
    "required",
    "items",
    "anyOf",
    "allOf",
    "oneOf",
    "$ref",
    "$defs",
    "$schema",
    "enum",
    "const",
    "default",
    "x-mcp-header",
    "readOnlyHint",
    "destructiveHint",
    "jsonrpc",
    "result",
    "error",
    "",
)

WIRE_STRINGS = (
    "",
    "object",
    "string",
    "integer",
    "number",
    "boolean",
    "array",
    "null",
    "text",
    "image",
    "audio",
    "resource",
    "resource_link",
    "complete",
    "input_required",
    "X-Region",
    "image/png",
    "iVBORw0KGgo=",
    "data:image/png;base64,iVBORw0KGgo=",
    "=?base64?SGk=?=",
    "#/$defs/a",
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-07/schema#",
    "2.0",
    " lead",
    "a\u200bb",
    "\u202eevil",
    "\U000e0041",
    "é",
    "工具",
    "tool name",
    "😀",
)

INTERESTING_INTS = (
    0,
    1,
    -1,
    2**31,
    2**53 - 1,
    2**53,
    -(2**53) + 1,
    -(2**53),
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    10**30,
    -(10**30),
    10**400,
)

_ALL_CATEGORIES = ["L", "M", "N", "P", "S", "Z", "C"]  # "C" includes Cs: lone surrogates


def _characters(wire: bool) -> st.SearchStrategy[str]:
    if wire:
        return st.characters(exclude_categories=["Cs"])
    return st.characters(categories=_ALL_CATEGORIES)


def texts(*, wire: bool, max_size: int = 12) -> st.SearchStrategy[str]:
    """Short strings: random unicode (lone surrogates unless `wire`) or wire-significant ones."""
    return st.one_of(
        st.sampled_from(WIRE_STRINGS),
        st.text(_characters(wire), max_size=max_size),
    )


def keys(*, wire: bool) -> st.SearchStrategy[str]:
    """Object keys: the wire names this library reads, the empty key, or random text."""
    return st.one_of(st.sampled_from(WIRE_KEYS), st.text(_characters(wire), max_size=8))


def numbers(*, wire: bool) -> st.SearchStrategy[int | float]:
    """Integers of any size and floats incl. `-0.0` (NaN and infinities unless `wire`)."""
    return st.one_of(
        st.sampled_from(INTERESTING_INTS),
        st.integers(),
        st.floats(allow_nan=not wire, allow_infinity=not wire),
        st.just(-0.0),
    )


def scalars(*, wire: bool) -> st.SearchStrategy[Any]:
    """JSON scalars."""
    return st.one_of(st.none(), st.booleans(), numbers(wire=wire), texts(wire=wire))


def json_values(*, wire: bool = True, max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Arbitrary JSON values (`wire=False`: also what a lax parser returns: NaN, surrogates)."""
    return st.recursive(
        scalars(wire=wire),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(keys(wire=wire), children, max_size=5),
        ),
        max_leaves=max_leaves,
    )


def json_objects(*, wire: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """Arbitrary JSON objects."""
    return st.dictionaries(keys(wire=wire), json_values(wire=wire, max_leaves=10), max_size=6)


# -- real inputs ----------------------------------------------------------------------------


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def spec_example_instances(definition: str) -> tuple[Any, ...]:
    """Every vendored spec example of `definition`, from the examples folder of every registered
    version (a file whose bytes an earlier one has is taken once: `draft` often copies the
    latest), so a spec bump's examples join without an edit here."""
    found = []
    seen: set[bytes] = set()
    for version in VERSIONS:
        folder = SCHEMA_DIR / version / "examples" / definition
        for path in sorted(folder.glob("*.json")):
            data = path.read_bytes()
            if data not in seen:
                seen.add(data)
                found.append(json.loads(data))
    return tuple(found)


@functools.cache
def real_tools() -> tuple[Any, ...]:
    """Captured tool definitions, spec-example tools and the handed tool cases (each under
    4 kB of JSON, which is 99% of them: every example copies, walks and mutates one)."""
    tools = [tool for _, _, tool in all_tools()]
    tools.extend(spec_example_instances("Tool"))
    tools.extend(case["input"] for _, case in cases() if case["kind"] == "tool")
    return _small(tools, 4_000)


def _small(values: list[Any], limit: int) -> tuple[Any, ...]:
    return tuple(v for v in values if len(json.dumps(v)) < limit)


@functools.cache
def real_results() -> tuple[Any, ...]:
    """Captured tools/call results, spec-example results and the handed result cases."""
    found = [capture.data for capture in results()]
    found.extend(spec_example_instances("CallToolResult"))
    found.extend(case["input"] for _, case in cases() if case["kind"] == "result")
    return _small(found, 4_000)


@functools.cache
def real_pages() -> tuple[Any, ...]:
    """Captured tools/list results under 10 kB (a page is copied and walked per example)."""
    return _small([c.data for c in tool_lists()], 10_000)


# Small real documents as JSON text, to be corrupted byte by byte.
@functools.cache
def _seed_texts() -> tuple[bytes, ...]:
    return tuple(
        text
        for text in (
            json.dumps(v, ensure_ascii=False).encode() for v in real_tools() + real_results()
        )
        if len(text) < 3000
    )


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    """A real JSON text with one to four byte-level edits (delete, insert, replace, repeat)."""
    data = bytearray(draw(st.sampled_from(_seed_texts())))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(("delete", "insert", "replace", "repeat")))
        if edit == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif edit == "insert":
            data[at:at] = draw(st.sampled_from((b"[", b"]", b"{", b"}", b",", b'"', b"\\", b"-")))
        elif edit == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 16))]
    return bytes(data)


# -- mutations --------------------------------------------------------------------------------


def _slots(root: Any) -> list[tuple[Any, Any]]:
    """(container, key or index) for every value inside `root`, walked without recursion."""
    found: list[tuple[Any, Any]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                found.append((node, key))
                stack.append(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                found.append((node, index))
                stack.append(value)
    return found


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[Any], *, wire: bool = True) -> Any:
    """A deep copy of a drawn value with one to three random edits."""
    value = copy.deepcopy(draw(base))
    replacement = json_values(wire=wire, max_leaves=6)
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(value)
        if not slots or draw(st.integers(0, 40)) == 0:
            value = draw(replacement)
            continue
        container, key = slots[draw(st.integers(0, len(slots) - 1))]
        action = draw(st.sampled_from(("replace", "delete", "add", "retype")))
        if action == "replace":
            container[key] = draw(replacement)
        elif action == "retype":
            container[key] = draw(scalars(wire=wire))
        elif action == "delete":
            del container[key]
        elif isinstance(container, dict):
            container[draw(keys(wire=wire))] = draw(replacement)
        else:
            container.insert(key, draw(replacement))
    return value


def real_or_mutated(pool: tuple[Any, ...], *, wire: bool = True) -> st.SearchStrategy[Any]:
    """A real input as is (a third of the time) or mutated."""
    base = st.sampled_from(pool)
    return st.one_of(base.map(copy.deepcopy), mutated(base, wire=wire), mutated(base, wire=wire))


# -- schema-valid instances -----------------------------------------------------------------

_URIS = (
    "https://example.com/a",
    "file:///tmp/x.txt",
    "data:image/png;base64,iVBORw0KGgo=",
    "urn:example:1",
    "mailto:a@example.com",
)


@functools.cache
def schema_definitions(version: str) -> dict[str, Any]:
    """The `$defs` (or `definitions`) of one version's official schema."""
    schema = _load(SCHEMA_DIR / version / "schema.json")
    defs: dict[str, Any] = schema.get("$defs") or schema["definitions"]
    return defs


def versioned_instances(definition: str) -> st.SearchStrategy[tuple[str, Any]]:
    """(version, instance valid against `definition` of that version's official schema)."""
    return st.sampled_from(VERSIONS).flatmap(
        lambda version: schema_instances(version, definition).map(lambda raw: (version, raw))
    )


@functools.cache
def schema_instances(version: str, definition: str) -> st.SearchStrategy[Any]:
    """Instances valid against `definition` of `version`'s official schema.

    Raises:
        NotImplementedError: the definition uses a keyword this generator does not know (so a
            new schema cannot silently generate invalid instances).
    """
    defs = schema_definitions(version)
    return _from_schema(defs[definition], defs)


_ANNOTATIONS = frozenset({"description", "title", "$comment", "default", "examples"})
_KNOWN = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "items",
    "anyOf",
    "$ref",
    "additionalProperties",
    "const",
    "enum",
    "format",
    "minimum",
    "maximum",
}


def _from_schema(schema: Any, defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    if schema is True or (isinstance(schema, dict) and not set(schema) - _ANNOTATIONS):
        return json_values(max_leaves=6)
    unknown = set(schema) - _KNOWN
    if unknown:
        raise NotImplementedError(f"schema keywords {sorted(unknown)}")
    if "$ref" in schema:
        if set(schema) - _ANNOTATIONS - {"$ref"}:
            raise NotImplementedError("$ref with sibling keywords")
        target = defs[schema["$ref"].rsplit("/", 1)[-1]]
        return st.deferred(lambda: _from_schema(target, defs))
    if "anyOf" in schema:
        return st.one_of([_from_schema(branch, defs) for branch in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_from_schema({**schema, "type": one}, defs) for one in kind])
    if kind == "object":
        return _object(schema, defs)
    if kind == "array":
        return st.lists(_from_schema(schema.get("items", True), defs), max_size=3)
    if kind == "string":
        return _string(schema.get("format"))
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.one_of(
            st.integers(low, high),
            st.floats(low, high, allow_nan=False, allow_infinity=False),
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    raise NotImplementedError(f"schema type {kind!r}")


def _string(form: str | None) -> st.SearchStrategy[str]:
    if form == "uri":
        return st.sampled_from(_URIS)
    if form == "byte":
        return st.binary(max_size=12).map(lambda raw: base64.b64encode(raw).decode("ascii"))
    if form == "uri-template":
        return st.just("file:///{path}")
    return texts(wire=True)


def _object(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    fixed = st.fixed_dictionaries(
        {k: _from_schema(properties.get(k, True), defs) for k in required},
        optional={k: _from_schema(v, defs) for k, v in properties.items() if k not in required},
    )
    extra_schema = schema.get("additionalProperties", True)
    if extra_schema is False:
        return fixed
    free_keys = keys(wire=True).filter(lambda key: key not in properties and key not in required)
    extras = st.dictionaries(free_keys, _from_schema(extra_schema, defs), max_size=3)
    return st.tuples(extras, fixed).map(lambda pair: {**pair[0], **pair[1]})
