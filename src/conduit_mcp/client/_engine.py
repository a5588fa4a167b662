"""JSON Schema validation on jsonschema-rs: compile once, never retrieve, word our own messages.

Not a public module. `validate_structured`, `validate_arguments`, the intake meta-schema check
and strict conformance all validate through here, so one engine decides every verdict.

What this layer adds to the engine:
- No retrieval, ever: the retriever refuses every URI (http, https, file, relative), so a `$ref`
  outside the schema is a `schema` issue (2026-07-28 basic "JSON Schema Usage": implementations
  MUST NOT dereference network references unless explicitly allowed). The bundled meta-schemas
  resolve without retrieval.
- Messages worded here from the error kind, the paths and schema values; never the value.
- Limits: a schema is compiled once (cache keyed by content); the engine recurses natively with
  the depth of schema and value, which would overflow the C stack on a value nested thousands of
  levels deep against a recursive schema. A value's depth is therefore bounded for schemas whose
  `$ref`s can loop (`MAX_NESTING_WORK`); a schema that cannot loop descends at most its own
  depth. The engine's own "Recursion limit reached" and any other failure of it (Rust panics
  included) become our verdicts or `Error`s.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, NoReturn

import orjson

from ._cache import BoundedCache
from ._dialects import DRAFT_07, DRAFT_2019_09, DRAFT_2020_12
from ._errors import Error, PathItem, cycle_error, json_type_name, render_path
from ._jsonrules import MISSING, compact_json, fragment_tokens
from ._verdict import OutputIssue

#: How many compiled schemas are kept (least recently used evicted first).
CACHE_SIZE: Final = 512
#: Largest schema compiled, in bytes of its canonical JSON (a bound on compile cost).
MAX_SCHEMA_BYTES: Final = 1 << 20
#: Most issues reported for one value (the first found, then sorted); see `truncated`.
MAX_ISSUES: Final = 100
#: For a schema whose `$ref`s can loop: the largest (nesting depth of the value) x (nesting
#: depth of the schema) handed to the engine. The engine recurses natively once per schema level
#: per value level; measured on jsonschema-rs 0.61.2, a 4-level recursive schema crashes the
#: interpreter (SIGSEGV, 8 MiB stack) between 5,000 and 10,000 value levels, i.e. ~20,000
#: frames; this bound stays a factor of 2.5 below that.
MAX_NESTING_WORK: Final = 8192
#: The engine describes issues (iter_errors) of values nested at most this deep (measured on
#: jsonschema-rs 0.61.2: 255 levels raise "Recursion limit reached"); `is_valid` has no limit.
DESCRIBABLE_DEPTH: Final = 254
#: Deepest nesting (levels) the engine takes in (measured on jsonschema-rs 0.61.2: a schema
#: nested 256 levels deep raises "Recursion limit reached"): `details["limit"]` when the
#: engine runs out of recursion budget.
ENGINE_DEPTH_LIMIT: Final = 255
_MAX_REFS_ANALYSED: Final = 512
_MAX_MESSAGE: Final = 240
_MAX_NAMES: Final = 5

_DIALECT_NAMES: Final = {DRAFT_07: "draft-07", DRAFT_2019_09: "2019-09", DRAFT_2020_12: "2020-12"}
# Keywords that can make a `$ref` land somewhere a JSON pointer does not say.
_SCOPE_KEYWORDS: Final = frozenset(
    {"$dynamicRef", "$recursiveRef", "$anchor", "$dynamicAnchor", "$recursiveAnchor"}
)


def dialect_name(dialect: str) -> str:
    """The short name of a supported dialect URI (`"2020-12"`, `"draft-07"`, ...)."""
    return _DIALECT_NAMES[dialect]


@dataclass(slots=True)
class Compiled:
    """One compiled schema: the engine's validator, or the issue that stopped it compiling.

    Never changed once built (not `frozen`: a frozen dataclass's `__init__` costs a
    `object.__setattr__` per field on every cache miss).
    """

    validator: Any  # a jsonschema_rs validator, or None when `schema_issue` is set
    schema_issue: OutputIssue | None
    loops: bool  # whether its `$ref`s can loop (then the value's depth is bounded)
    depth: int  # nesting depth of the schema document
    meta_path: tuple[PathItem, ...] = ()  # the failing meta-schema rule, for an invalid schema


class _Refused(Exception):
    """Raised by the retriever: nothing is ever fetched or read."""


def _refuse_every_uri(uri: str) -> Any:
    # basic "JSON Schema Usage": MUST NOT dereference network references; files neither.
    raise _Refused(f"retrieval is disabled ({len(uri)}-character URI)")


_engine: Any = None
_engine_lock = threading.Lock()


def _rs() -> Any:
    # Imported on first use: `import conduit_mcp.client` stays cheap.
    global _engine
    if _engine is None:
        with _engine_lock:
            import jsonschema_rs

            _engine = jsonschema_rs
    return _engine


def _validator_class(dialect: str) -> Any:
    classes = _classes
    if not classes:
        rs = _rs()
        classes.update(
            {
                DRAFT_07: rs.Draft7Validator,
                DRAFT_2019_09: rs.Draft201909Validator,
                DRAFT_2020_12: rs.Draft202012Validator,
            }
        )
    return classes[dialect]


_classes: dict[str, Any] = {}


# -- the cache --------------------------------------------------------------------------------
# Front: by the caller's dict (identity; the dict is held, so its id is not reused). Back: by
# content (the schema's JSON bytes, member order kept: exact), so every schema with equal bytes, in
# any tool, shares one compiled validator.

_by_content: BoundedCache[tuple[str, bool, bytes], Compiled] = BoundedCache(CACHE_SIZE)
#: The first level, read lock-free (`peek`) by `validate_structured`'s warm path: id ->
#: (dict, dialect, Compiled, the validator when no depth bound is needed else None, top-level
#: member count); the dict is held, so its id is not reused while the entry lives.
FRONT: Final[BoundedCache[int, tuple[Any, str, Compiled, Any, int]]] = BoundedCache(CACHE_SIZE)


def clear_cache() -> None:
    """Drop every compiled schema and meta-schema verdict (for tests and benchmarks)."""
    _by_content.clear()
    FRONT.clear()
    _meta_cache.clear()


def cache_size() -> int:
    """How many distinct compiled schemas are cached now (at most `CACHE_SIZE`)."""
    return len(_by_content)


def compiled(schema: dict[str, Any], dialect: str, role: str) -> Compiled:
    """The compiled schema for `schema` read as `dialect`, from the cache or compiled now.

    Two levels: the very dict seen before (by identity, the warm path: `Tool.from_wire` hands
    `raw` over, so it is not changed afterwards; a different top-level member count is still
    noticed), then the content (dialect + the schema's JSON bytes in member order: the cheapest
    exact key, no sort), so every schema with equal bytes, in any tool, shares one compiled
    validator.

    Args:
        schema: a JSON object (not mutated; the engine keeps its own copy).
        dialect: one of `SUPPORTED_DIALECTS`.
        role: the wire name of the schema (`"outputSchema"`, `"inputSchema"`), for messages
            and error paths.

    Raises:
        Error: kind `"policy"`, reason `"limit_exceeded"`, path `(role,)`, when the schema's
            canonical JSON exceeds `MAX_SCHEMA_BYTES` or it is nested too deeply to compile.
            Kind `"protocol"`, reason `"invalid_json"`, path `(role,)`, when the schema
            contains itself (`cycle_error`, the one treatment of cycles).
        TypeError: the schema holds a value JSON cannot represent (a caller bug).
    """
    hit = FRONT.peek(id(schema), None)  # a dict read is atomic under the GIL: no lock
    if hit is not None and hit[0] is schema and hit[1] == dialect and hit[4] == len(schema):
        entry: Compiled = hit[2]
        return entry
    try:
        data = orjson.dumps(schema)
    except TypeError:  # orjson refuses it: the standard library's encoder, or our error
        data = _canonical(schema, role)
    if len(data) > MAX_SCHEMA_BYTES:
        _too_large_schema(role, len(data))
    # orjson writes NaN and infinities as null: only then can two contents share bytes.
    # `find`, not `in`: CPython 3.11's bytes `in` first reads its argument as an integer and
    # formats a TypeError for a bytes one (~1,000 instructions; proxy/_message.py).
    not_json = data.find(b"null") != -1 and _has_non_finite(schema)
    key = (dialect, not_json, data)
    found: Compiled | None = _by_content.peek(key, None)  # a miss takes no lock
    if found is None:
        found = _compile(schema, dialect, role, data, not_json)
        _by_content.put(key, found)
    else:
        _by_content.get(key)  # mark it used
    fast = None if found.loops else found.validator
    FRONT.put(id(schema), (schema, dialect, found, fast, len(schema)))
    return found


def _canonical(schema: dict[str, Any], role: str) -> bytes:
    try:
        # The standard library takes what orjson refuses but non-str keys (a caller bug).
        data = compact_json(schema)
    except RecursionError:
        _too_deep_schema(role)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ValueError) and "Circular reference" in str(exc):
            raise cycle_error((role,)) from None  # the one treatment of cycles
        raise TypeError(
            f"{role} holds a value JSON cannot represent ({type(exc).__name__})"
        ) from None
    if len(data) > MAX_SCHEMA_BYTES:
        _too_large_schema(role, len(data))
    return data


def _too_large_schema(role: str, size: int) -> NoReturn:
    raise Error(
        "policy",
        "limit_exceeded",
        f"$.{role} is larger than {MAX_SCHEMA_BYTES} bytes of JSON",
        path=(role,),
        details={"limit": MAX_SCHEMA_BYTES, "size": size},
    )


def _has_non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) and not math.isfinite(node):
            return True
    return False


def _too_deep_schema(role: str) -> NoReturn:
    raise Error(
        "policy",
        "limit_exceeded",
        f"$.{role} is nested too deeply to compile",
        path=(role,),
        details={"limit": ENGINE_DEPTH_LIMIT},
    ) from None


# Bytes whose absence from the canonical JSON proves no `$ref` can loop (a cheap pre-check).
_REF_MARKERS: Final = (b'"$ref"', b'"$dynamicRef"', b'"$recursiveRef"')


def _compile(
    schema: dict[str, Any], dialect: str, role: str, data: bytes, not_json: bool
) -> Compiled:
    if data.find(b'ef"') != -1 and any(data.find(marker) != -1 for marker in _REF_MARKERS):
        depth, loops = _analyse(schema)
    else:
        depth, loops = 0, False  # the engine descends at most the schema's own depth
    if not_json:
        # The engine would read NaN as null; JSON has neither NaN nor infinities.
        message = f"{role} holds a number JSON cannot represent (NaN or infinity)"
        return Compiled(None, OutputIssue((), message, role, kind="schema"), loops, depth)
    cls = _classes.get(dialect) or _validator_class(dialect)
    try:
        # validate_formats=False: `format` is an annotation in every dialect (no assertion).
        # The engine copies the schema: later changes to the caller's dict do not reach it.
        validator = cls(schema, validate_formats=False, retriever=_refuse_every_uri)
    except BaseException as exc:
        if isinstance(exc, _rs().ValidationError):
            issue = _compile_issue(exc, dialect, role)
            meta = () if issue.keyword == "$ref" else tuple(exc.schema_path)
            return Compiled(None, issue, loops, depth, meta)
        if _out_of_depth(exc):
            _too_deep_schema(role)
        if not isinstance(exc, Exception) and not is_panic(exc):
            raise
        # e.g. a lone surrogate in a string of the schema: not Unicode text.
        issue = OutputIssue(
            (), f"{role} could not be compiled ({type(exc).__name__})", role, kind="schema"
        )
        return Compiled(None, issue, loops, depth)
    return Compiled(validator, None, loops, depth)


def meta_problem(
    schema: dict[str, Any], dialect: str, role: str
) -> tuple[OutputIssue, tuple[PathItem, ...]] | None:
    """The meta-schema check alone (no compile): `None`, or (issue, path in the meta-schema).

    About 10x cheaper than compiling (measured on the bench's 1,000 tools: 8.7 against 94 ms),
    for intake, which checks every tool of a page. Verdicts are cached by (dialect, role, the
    schema's orjson bytes), at most `CACHE_SIZE` x 8, since pages are listed again and again
    and tools share schemas: a schema seen before, in any tool of any page, costs one
    serialization and one lookup. Compiles instead (through `compiled`) when the schema is
    deeper than orjson's 255 levels (the engine's meta check crashes on ~100,000), not plain
    JSON for orjson, or has a `$ref` to resolve. `$schema` is set to the canonical URI of
    `dialect` on a shallow copy, so the engine never looks a meta-schema up by a URI from the
    input.

    Args:
        schema: a JSON object as parsed (intake calls this only for tools whose RFC 8785 form
            exists: no NaN, which orjson would write as `null`).
        dialect: one of `SUPPORTED_DIALECTS`.
        role: the wire name of the schema, for messages and paths.

    Raises:
        Error: as `compiled`, when it compiles.
        TypeError: the schema holds a value JSON cannot represent (a caller bug).
    """
    try:
        data = orjson.dumps(schema)
    except TypeError:
        entry = compiled(schema, dialect, role)
        return None if entry.schema_issue is None else (entry.schema_issue, entry.meta_path)
    key = (dialect, role, data)
    found = _meta_cache.peek(key, MISSING)
    if found is not MISSING:
        verdict: tuple[OutputIssue, tuple[PathItem, ...]] | None = found
        return verdict
    if data.find(b'ef"') != -1 and any(data.find(marker) != -1 for marker in _REF_MARKERS):
        entry = compiled(schema, dialect, role)
        verdict = None if entry.schema_issue is None else (entry.schema_issue, entry.meta_path)
    else:
        verdict = _meta_check(schema, dialect, role)
    _meta_cache.put(key, verdict)
    return verdict


#: The meta-schema verdicts `meta_problem` keeps: (dialect, role, the schema's orjson bytes) ->
#: `None` (valid) or (issue, meta-schema path). Read lock-free (`peek`) by `schema_warnings`'s
#: fast path for a schema seen before.
META_VERDICTS: Final[
    BoundedCache[tuple[str, str, bytes], tuple[OutputIssue, tuple[PathItem, ...]] | None]
] = BoundedCache(CACHE_SIZE * 8)
_meta_cache = META_VERDICTS


def _meta_check(
    schema: dict[str, Any], dialect: str, role: str
) -> tuple[OutputIssue, tuple[PathItem, ...]] | None:
    rs = _rs()
    probe = {**schema, "$schema": dialect}
    try:
        if rs.meta.is_valid(probe):
            return None
        rs.meta.validate(probe)
    except rs.ValidationError as exc:
        return _compile_issue(exc, dialect, role), tuple(exc.schema_path)
    except BaseException as exc:
        if not isinstance(exc, Exception) and not is_panic(exc):
            raise
        message = f"{role} could not be checked against its meta-schema ({type(exc).__name__})"
        return OutputIssue((), message, role, kind="schema"), ()
    return None  # pragma: no cover - is_valid said no, validate found nothing


def _compile_issue(exc: Any, dialect: str, role: str) -> OutputIssue:
    if type(exc.kind).__name__ == "Referencing":
        return OutputIssue((), ref_message(exc.kind.error), "$ref", kind="schema")
    where = tuple(exc.instance_path)
    keyword = next((p for p in reversed(where) if isinstance(p, str)), "$schema")
    message = (
        f"{role} is not a valid {_DIALECT_NAMES[dialect]} schema: "
        f"{render_path(where)} fails the meta-schema's {exc.kind.name} rule"
    )
    return OutputIssue((), clip(message), str(keyword), where, "schema")


def ref_message(error: object) -> str:
    """A `$ref` failure worded from the engine's referencing error (URI kind, never fetched)."""
    text = str(getattr(error, "message", error))
    pointer = _POINTER.match(text)
    if pointer is not None:
        return clip(f"$ref not resolved: nothing at #{pointer.group(1)} in the schema")
    if "etrieval is disabled" in text:
        return "remote $ref not resolved: it names a document outside the schema (never retrieved)"
    if "No base URI" in text:
        return "remote $ref not resolved: a relative reference with no base URI (never retrieved)"
    return "$ref not resolved (nothing outside the schema is ever retrieved)"


_POINTER: Final = re.compile(r"Pointer '(.*)' does not exist", re.DOTALL)


def _analyse(schema: Any) -> tuple[int, bool]:
    """(nesting depth, whether `$ref`s can loop), walked with an explicit stack.

    A loop: a `$ref` inside the subtree its own chain of targets starts from. Keys that only
    look like keywords (a property named `$ref`) count too: a false alarm costs a depth walk.
    """
    deepest = 0
    refs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []  # (where, target pointer)
    unknown = False
    stack: list[tuple[Any, tuple[str, ...]]] = [(schema, ())]
    while stack:
        node, where = stack.pop()
        deepest = max(deepest, len(where) + 1)
        if isinstance(node, dict):
            if not _SCOPE_KEYWORDS.isdisjoint(node) or (where and ("$id" in node or "id" in node)):
                unknown = True
            ref = node.get("$ref")
            if isinstance(ref, str):
                target = _pointer(ref)
                if target is None:
                    unknown = True
                else:
                    refs.append((where, target))
            stack.extend((child, (*where, str(key))) for key, child in node.items())
        elif isinstance(node, list):
            stack.extend((child, (*where, str(i))) for i, child in enumerate(node))
    if unknown or len(refs) > _MAX_REFS_ANALYSED:
        return deepest, bool(refs) or unknown
    return deepest, _has_cycle(refs)


def _pointer(ref: str) -> tuple[str, ...] | None:
    return None if "%" in ref else fragment_tokens(ref)  # percent-escapes: not analysed


def _has_cycle(refs: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> bool:
    # Node: a target. Edge t -> u when a ref to u sits inside t's subtree. Colour DFS, iterative.
    targets = sorted({target for _, target in refs})
    edges = {t: {target for where, target in refs if where[: len(t)] == t} for t in targets}
    state: dict[tuple[str, ...], int] = {}
    for start in targets:
        if start in state:
            continue
        state[start] = 1
        path: list[tuple[tuple[str, ...], Iterator[tuple[str, ...]]]] = [
            (start, iter(edges[start]))
        ]
        while path:
            node, nexts = path[-1]
            step = next(nexts, None)
            if step is None:
                state[node] = 2
                path.pop()
            elif state.get(step) == 1:
                return True
            elif step not in state:
                state[step] = 1
                path.append((step, iter(edges[step])))
    return False


# -- running ----------------------------------------------------------------------------------


def nesting_depth(value: Any, stop_after: int) -> int:
    """Nesting depth of a JSON value (a scalar is 1), stopping once it exceeds `stop_after`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > stop_after:
                return deepest
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def check_depth(entry: Compiled, instance: Any, where: str) -> None:
    """Refuse a value too deep for a schema whose `$ref`s loop (see `MAX_NESTING_WORK`).

    Raises:
        Error: kind `"policy"`, reason `"limit_exceeded"`, path `(where,)`.
    """
    if not entry.loops:
        return
    allowed = max(1, MAX_NESTING_WORK // max(entry.depth, 1))
    if nesting_depth(instance, allowed) > allowed:
        too_deep(where, instance, allowed)


def too_deep(where: str, instance: Any, limit: int) -> NoReturn:
    """Raise the `limit_exceeded` Error for a value too deep to validate (`details["depth"]`)."""
    depth = nesting_depth(instance, sys.maxsize)
    raise Error(
        "policy",
        "limit_exceeded",
        f"$.{where} is nested too deeply ({depth} levels) to validate against this schema",
        path=(where,),
        details={"depth": depth, "limit": limit},
    ) from None


def is_panic(exc: BaseException) -> bool:
    """Whether `exc` is a Rust panic surfaced by pyo3 (a BaseException, not an Exception)."""
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


def _out_of_depth(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, RecursionError) or (
        isinstance(exc, (ValueError,)) and "Recursion limit reached" in text
    )


def collect(entry: Compiled, instance: Any, where: str, issues: list[OutputIssue]) -> bool:
    """Append the issues of `instance` against `entry` to `issues`; return `truncated`.

    Args:
        entry: a compiled schema with a validator.
        instance: the value (not mutated).
        where: the wire name of the value (`"structuredContent"`, `"arguments"`), for errors.
        issues: where the issues go.

    Raises:
        Error: kind `"policy"`, reason `"limit_exceeded"`, path `(where,)`, when the engine ran
            out of its recursion budget (e.g. comparing arrays nested hundreds of levels deep).
    """
    validator = entry.validator
    try:
        if validator.is_valid(instance):
            return False
    except BaseException as exc:
        _engine_failure(exc, where, instance, issues)
        return False
    found = 0
    try:
        for err in validator.iter_errors(instance):
            if found == MAX_ISSUES:
                return True
            issues.append(describe(err))
            found += 1
    except BaseException as exc:
        if not _out_of_depth(exc):
            _engine_failure(exc, where, instance, issues)
            return False
        # The verdict is known (invalid), but the engine describes issues only within
        # `DESCRIBABLE_DEPTH` levels: one issue at the root says so.
        del issues[len(issues) - found :]
        depth = nesting_depth(instance, sys.maxsize)
        message = (
            f"{where} does not conform; at {depth} levels of nesting it is too deep for the "
            f"validator to say where"
        )
        issues.append(OutputIssue((), message, where))
    return False


def _engine_failure(
    exc: BaseException, where: str, instance: Any, issues: list[OutputIssue]
) -> None:
    if _out_of_depth(exc):
        too_deep(where, instance, ENGINE_DEPTH_LIMIT)
    if not isinstance(exc, Exception) and not is_panic(exc):
        raise exc
    # A value the engine cannot take: a lone surrogate, a non-JSON type.
    issues.append(
        OutputIssue(
            (),
            f"{where} is not a JSON value the validator can read ({type(exc).__name__})",
            "type",
            kind="protocol",
        )
    )


def describe(err: Any) -> OutputIssue:
    """Our `OutputIssue` for one engine error: message from the kind and paths, not the value."""
    kind = err.kind
    name = type(kind).__name__
    got = json_type_name(err.instance)
    path = tuple(err.instance_path)
    schema_path = tuple(err.evaluation_path)
    keyword = str(kind.name)
    if name == "Referencing":
        return OutputIssue((), ref_message(kind.error), "$ref", schema_path, "schema")
    if name in ("BacktrackLimitExceeded", "RegexEngineFailure"):
        message = "pattern could not be applied within the regex engine's limits"
        return OutputIssue((), message, keyword, schema_path, "schema")
    if name == "FalseSchema":
        last = schema_path[-1] if schema_path else None
        if last in _FALSE_KEYWORDS and (len(schema_path) < 2 or schema_path[-2] not in _SUBSCHEMAS):
            # `{"additionalProperties": false}` alone compiles to a false schema over the
            # whole object: named after its keyword, as JSON Schema's output does.
            keyword = str(last)
            message = f"no {_FALSE_KEYWORDS[keyword]} allowed here ({keyword} is false), got {got}"
            return OutputIssue(path, message, keyword, schema_path)
        keyword = "false"
    message = _MESSAGES.get(name, _generic)(kind, got, err.instance)
    return OutputIssue(path, clip(message), keyword, schema_path)


_FALSE_KEYWORDS: Final = {
    "additionalProperties": "properties",
    "unevaluatedProperties": "properties",
    "additionalItems": "items",
    "unevaluatedItems": "items",
}
# A keyword right after one of these is a property name or index, not a keyword.
_SUBSCHEMAS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


def _generic(kind: Any, got: str, value: Any) -> str:
    return f"{got} value violates {kind.name}"


def _names(names: list[Any]) -> str:
    shown = ", ".join(json.dumps(str(n)[:40]) for n in names[:_MAX_NAMES])
    more = f" and {len(names) - _MAX_NAMES} more" if len(names) > _MAX_NAMES else ""
    return shown + more


def _size(label: str) -> Any:
    def message(kind: Any, got: str, value: Any) -> str:
        return f"{label} {len(value)} violates {kind.name} {kind.limit}"

    return message


def _bound(kind: Any, got: str, value: Any) -> str:
    return f"{got} value violates {kind.name} {clip(repr(kind.limit), 60)}"


_MESSAGES: Final[dict[str, Any]] = {
    "Type": lambda k, got, v: f"expected {' or '.join(k.types)}, got {got}",
    "Required": lambda k, got, v: f"required property {_names([k.property])} is missing",
    "AdditionalProperties": lambda k, got, v: (
        f"properties not allowed here: {_names(k.unexpected)}"
    ),
    "UnevaluatedProperties": lambda k, got, v: (
        f"properties not evaluated by any subschema: {_names(k.unexpected)}"
    ),
    "UnevaluatedItems": lambda k, got, v: "array has items not evaluated by any subschema",
    "AdditionalItems": lambda k, got, v: f"array has more than the {k.limit} items allowed",
    "Enum": lambda k, got, v: f"{got} value is not one of the allowed values",
    "Constant": lambda k, got, v: f"{got} value is not the value const requires",
    "Pattern": lambda k, got, v: f"string does not match pattern {clip(json.dumps(k.pattern), 80)}",
    "MinLength": _size("string length"),
    "MaxLength": _size("string length"),
    "MinItems": _size("array length"),
    "MaxItems": _size("array length"),
    "MinProperties": _size("number of properties"),
    "MaxProperties": _size("number of properties"),
    "Minimum": _bound,
    "Maximum": _bound,
    "ExclusiveMinimum": _bound,
    "ExclusiveMaximum": _bound,
    "MultipleOf": lambda k, got, v: (
        f"{got} value is not a multiple of {clip(repr(k.multiple_of), 60)}"
    ),
    "FalseSchema": lambda k, got, v: f"no value is allowed here (false schema), got {got}",
    "Not": lambda k, got, v: f"{got} value matches the 'not' subschema",
    "AnyOf": lambda k, got, v: f"{got} value matches none of the anyOf subschemas",
    "OneOfNotValid": lambda k, got, v: f"{got} value matches none of the oneOf subschemas",
    "OneOfMultipleValid": lambda k, got, v: (
        f"{got} value matches more than one of the oneOf subschemas"
    ),
    "Contains": lambda k, got, v: "array has no item (or not the number of items) contains asks",
    "UniqueItems": lambda k, got, v: "array items are not unique",
    "PropertyNames": lambda k, got, v: (
        f"a property name violates propertyNames ({k.error.kind.name})"
    ),
}


def clip(message: str, limit: int = _MAX_MESSAGE) -> str:
    """`message`, cut to `limit` characters with an ellipsis."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def path_key(path: tuple[PathItem, ...]) -> tuple[tuple[int, Any], ...]:
    """Sort key for a path: indexes before keys at the same depth, never compared together."""
    return tuple((1, p) if isinstance(p, str) else (0, p) for p in path)


def issue_key(issue: OutputIssue) -> tuple[Any, ...]:
    """Sort key for issues: path, keyword, schema path, message."""
    return (path_key(issue.path), issue.keyword, path_key(issue.schema_path), issue.message)
