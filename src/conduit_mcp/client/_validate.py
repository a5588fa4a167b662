"""`validate_structured`: check a result's `structuredContent` against the tool's `outputSchema`.

Not a public module: import `validate_structured`, `OutputValidation` and `OutputIssue` from
`conduit_mcp.client`.

Dialects (spec 2026-07-28 basic "JSON Schema Usage" asks implementations to document them):
JSON Schema draft-07, 2019-09 and 2020-12, chosen by the schema's `$schema`; any other `$schema`
is refused with `unsupported_schema_dialect`. Without `$schema`: 2020-12 on protocol 2025-11-25
and later (the spec's default); draft-07 on earlier revisions, whose spec names no default
(their own schema.json is draft-07, and draft-07 is what servers of that time emitted: a
draft-07 schema read as 2020-12 can be rejected, e.g. array-form `items`). `format` is an
annotation only (never asserted), in every dialect.

The validator is `jsonschema` (with `referencing`, which never fetches: only local `$ref`s and
the bundled meta-schemas resolve). A conforming value takes a fast path of closures compiled
from the schema, which follow jsonschema's keyword rules; jsonschema decides every other case
and words the issues. Compiled validators are cached by a digest of the schema's sorted-key
JSON, never by tool name or object identity.
"""

from __future__ import annotations

import copy as _copy
import hashlib
import json
import reprlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn

import orjson

# jsonschema ships no type information (no stubs are installed): its names are Any here.
from jsonschema import (  # type: ignore[import-untyped]
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from jsonschema.exceptions import SchemaError, ValidationError  # type: ignore[import-untyped]
from jsonschema.validators import extend  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import PointerToNowhere, Unresolvable

from . import _wire as w
from ._dialects import DRAFT_07, DRAFT_2019_09, DRAFT_2020_12, SUPPORTED_DIALECTS
from ._errors import Error, PathItem, json_type_name, render_path
from ._fastcheck import all_unique as _all_unique
from ._fastcheck import fast_checker as _fast_checker
from ._fastcheck import json_equal as _json_equal
from ._result import ToolResult
from ._tool import Tool
from ._versions import at_least, check_version

Outcome = Literal["valid", "invalid", "skipped"]
"""`valid`: structuredContent conforms; `invalid`: it does not (or cannot be checked against this
schema); `skipped`: nothing to validate (see `OutputValidation.skip_reason`)."""

IssueKind = Literal["instance", "schema", "protocol"]
"""`instance`: structuredContent breaks a schema rule; `schema`: the outputSchema itself cannot be
applied (invalid, or an unresolved remote `$ref`); `protocol`: an MCP rule outside the schema
(structuredContent missing, or not an object before 2026-07-28)."""

_BASE_CLASSES: Final[dict[str, Any]] = {
    DRAFT_07: Draft7Validator,
    DRAFT_2019_09: Draft201909Validator,
    DRAFT_2020_12: Draft202012Validator,
}
_DIALECT_NAMES: Final = {DRAFT_07: "draft-07", DRAFT_2019_09: "2019-09", DRAFT_2020_12: "2020-12"}


def _spellings(canonical: str) -> list[str]:
    # http or https, with or without the empty fragment: all name the same meta-schema.
    bare = canonical.rstrip("#").split("://", 1)[1]
    return [
        f"{scheme}://{bare}{fragment}" for scheme in ("http", "https") for fragment in ("", "#")
    ]


_DIALECT_BY_URI: Final = {
    uri: canonical for canonical in SUPPORTED_DIALECTS for uri in _spellings(canonical)
}

#: How many compiled validators are kept (least recently used evicted first).
CACHE_SIZE: Final = 512
#: Largest outputSchema compiled, in bytes of its canonical JSON (a bound on compile cost).
MAX_SCHEMA_BYTES: Final = 1 << 20
#: Most issues reported for one result (the first found, then sorted); see `truncated`.
MAX_ISSUES: Final = 100
_MAX_MESSAGE: Final = 240

# Validation starts at protocol 2025-06-18 (server/tools "Output Schema" appears there).
_OUTPUT_SCHEMA_SINCE: Final = "2025-06-18"
_DEFAULT_2020_12_SINCE: Final = "2025-11-25"
_ANY_JSON_SINCE: Final = "2026-07-28"

_SCHEMA_KEY: Final = "$schema"
_MISSING: Any = object()

_short = reprlib.Repr()
_short.maxlevel = 2
_short.maxstring = 40
_short.maxother = 40
_short.maxlist = 6
_short.maxdict = 4


@dataclass(frozen=True, slots=True)
class OutputIssue:
    """One reason a `structuredContent` did not validate. Immutable and hashable.

    Attributes:
        path: keys and indexes from the root of `structuredContent` to the offending value
            (`()` for the root, and for `schema` issues).
        message: one line for a person; names the place, the rule and the JSON type, never
            echoes the value (key names and schema values may appear).
        keyword: the JSON Schema keyword that failed (`"type"`, `"required"`, `"$ref"`, ...;
            `"false"` for a `false` subschema; `"structuredContent"` when it is missing;
            `"outputSchema"` when the schema could not be applied at all).
        schema_path: keys and indexes into the `outputSchema` that led to the failing keyword
            (through `$ref` as written; for an invalid schema, the place in the schema).
        kind: `"instance"`, `"schema"` or `"protocol"` (see `IssueKind`).
    """

    path: tuple[PathItem, ...]
    message: str
    keyword: str
    schema_path: tuple[PathItem, ...] = ()
    kind: IssueKind = "instance"

    @property
    def json_path(self) -> str:
        """`path` rendered as a string rooted at `structuredContent`, e.g. `$.items[2].id`."""
        return render_path(self.path)

    def __str__(self) -> str:
        return f"{self.json_path}: {self.message}"


@dataclass(frozen=True, slots=True)
class OutputValidation:
    """The outcome of validating one result's `structuredContent`. Immutable and hashable.

    A failed validation is a report, not an `Error`: what to do with an `invalid` result
    (withhold it, show it with a warning) is the caller's policy.

    Attributes:
        outcome: `"valid"`, `"invalid"` or `"skipped"`.
        errors: the issues, sorted by path, then keyword (then schema path, then message); empty
            unless `outcome` is `"invalid"`.
        dialect: the canonical `$schema` URI validation used, or `None` when skipped before a
            schema was looked at.
        skip_reason: why validation was skipped: `"is_error"` (the tool failed: its
            structuredContent, if any, is not bound by the schema), `"no_output_schema"`, or
            `"not_in_protocol_version"` (before 2025-06-18); `None` unless skipped.
        truncated: more than `MAX_ISSUES` issues were found; `errors` holds the first ones.
    """

    outcome: Outcome
    errors: tuple[OutputIssue, ...] = ()
    dialect: str | None = None
    skip_reason: str | None = None
    truncated: bool = False

    @property
    def valid(self) -> bool:
        """`True` only when `outcome` is `"valid"`."""
        return self.outcome == "valid"


@dataclass(frozen=True, slots=True)
class _Compiled:
    schema: Any  # a private deep copy: the caller's dict may change after this
    validator: Any  # a jsonschema validator, or None when the schema is invalid
    schema_issue: OutputIssue | None
    fast: Callable[[Any], bool] | None = None  # see "fast path" below


def _refuse_remote(uri: str) -> Resource[Any]:
    # basic "JSON Schema Usage" / "$ref Resolution": MUST NOT dereference network references.
    raise LookupError(f"remote $ref not resolved (network access is disabled): {uri}")


_REGISTRY: Final[Registry[Any]] = Registry(retrieve=_refuse_remote)  # type: ignore[call-arg]

_cache: OrderedDict[tuple[str, bytes], _Compiled] = OrderedDict()
_cache_lock = threading.Lock()


def clear_validator_cache() -> None:
    """Drop every cached compiled validator (for tests and benchmarks)."""
    with _cache_lock:
        _cache.clear()


def validator_cache_size() -> int:
    """How many compiled validators are cached now (at most `CACHE_SIZE`)."""
    return len(_cache)


def validate_structured(
    result: ToolResult, tool: Tool, *, protocol_version: str
) -> OutputValidation:
    """Validate `result.structured` against `tool`'s `outputSchema`.

    Rules, in order:
    - before protocol 2025-06-18 (no `outputSchema` in the protocol): `skipped`;
    - `result.is_error`: `skipped` (a failed tool reports its error, not its output);
    - the tool has no `outputSchema` (absent or `null`): `skipped`;
    - the schema's dialect is resolved (see the module docstring);
    - `structuredContent` absent: `invalid` (presence is the test: `0`, `false`, `""`, `[]`
      and `null` are present and validated);
    - before 2026-07-28, `structuredContent` that is not an object: `invalid` (a `protocol`
      issue), and the schema is still applied;
    - otherwise the schema's verdict. An outputSchema that is not a valid schema of its
      dialect, or a `$ref` that needs the network, makes the outcome `invalid` with a
      `schema` issue (the spec: such schemas SHOULD be rejected, not treated as permissive).

    Only `structuredContent` is validated, never the rest of the result, and nothing is
    changed: no stripping of unknown keys, no coercion, no defaults (integers beyond 2**53 are
    compared exactly). A `$ref` resolves only inside the schema (`#...`, `$defs`,
    `definitions`, `$id`-scoped) and the JSON Schema meta-schemas; anything else is an issue.

    Compiled validators are cached by (dialect, SHA-256 of the schema's sorted-key JSON), at most
    `CACHE_SIZE`, least recently used evicted; a hit also checks the cached schema equals the
    tool's, so a changed schema never reuses an old validator. Thread-safe.

    Args:
        result: the completed call's result.
        tool: the tool that was called (its `outputSchema` is used).
        protocol_version: the negotiated protocol revision (e.g. `"2026-07-28"`).

    Returns:
        The `OutputValidation`.

    Raises:
        TypeError: `result` is not a `ToolResult`, `tool` is not a `Tool`, `protocol_version`
            is not a `str`, or the outputSchema holds a value JSON cannot represent (caller
            bugs).
        Error: kind `"protocol"`:
            reason `"unknown_protocol_version"` when `protocol_version` is not a known revision;
            reason `"invalid_tool"`, path `("outputSchema",)`, when the tool's `outputSchema`
            is neither an object nor `null`;
            reason `"unsupported_schema_dialect"`, path `("outputSchema", "$schema")`, when
            `$schema` is present and not a string naming draft-07, 2019-09 or 2020-12.
            Kind `"policy"`, reason `"limit_exceeded"`:
            path `("outputSchema",)` when the schema's canonical JSON exceeds
            `MAX_SCHEMA_BYTES` or it is nested too deeply to compile;
            path `("structuredContent",)` when validation ran out of interpreter stack: a
            structuredContent nested a few hundred levels deep against a schema that recurses
            with it (a flat schema takes any depth), or a schema whose `$ref`s loop without
            consuming the value; `details["depth"]` is the value's nesting depth.

    Total: per call, a digest and an equality check O(schema size) plus validation; a cache
    miss adds a compile O(schema size) (meta-schema check, closures). Validation recurses with
    the depth of schema and value; running out of stack becomes `limit_exceeded`, never a
    RecursionError. No wall-clock bound on pathological `pattern`s (Python `re`).

    Performance: a conforming value is checked by closures compiled from the schema (a fast
    path that answers only "valid"); anything else is re-checked by `jsonschema`, which words
    the issues. Both give the same verdict (tested on the corpus and on generated schemas).

    Spec: 2026-07-28 server/tools "Output Schema" ("Servers MUST provide structured results
    that conform to this schema. Clients SHOULD validate structured results against this
    schema."); server/tools "Structured Content" (any JSON value on 2026-07-28; a JSON object
    in 2025-06-18 and 2025-11-25); basic "JSON Schema Usage" ("Schema Dialect", "$ref
    Resolution": MUST NOT automatically dereference network `$ref`s).

    >>> tool = Tool.from_wire("s", {"name": "t", "inputSchema": {"type": "object"},
    ...                            "outputSchema": {"type": "object", "required": ["n"]}})
    >>> validate_structured(ToolResult.from_wire({"content": [], "structuredContent": {}}),
    ...                     tool, protocol_version="2026-07-28").errors[0].keyword
    'required'
    """
    if not isinstance(result, ToolResult):
        raise TypeError(f"result must be a ToolResult, got {type(result).__name__}")
    if not isinstance(tool, Tool):
        raise TypeError(f"tool must be a Tool, got {type(tool).__name__}")
    check_version(protocol_version)
    if not at_least(protocol_version, _OUTPUT_SCHEMA_SINCE):
        return OutputValidation("skipped", skip_reason="not_in_protocol_version")
    if result.is_error:
        return OutputValidation("skipped", skip_reason="is_error")
    schema = tool.raw.get(w.OUTPUT_SCHEMA)
    if schema is None:
        return OutputValidation("skipped", skip_reason="no_output_schema")
    if not isinstance(schema, dict):
        raise Error(
            "protocol",
            "invalid_tool",
            f"$.outputSchema must be an object, got {json_type_name(schema)}",
            path=(w.OUTPUT_SCHEMA,),
            details={"expected": "an object", "got": json_type_name(schema)},
        )
    dialect = _dialect(schema, protocol_version)
    if not result.has_structured:
        missing = OutputIssue(
            (),
            "structuredContent is missing, but the tool declares an outputSchema",
            "structuredContent",
            kind="protocol",
        )
        return OutputValidation("invalid", (missing,), dialect)

    instance = result.structured
    issues: list[OutputIssue] = []
    if not at_least(protocol_version, _ANY_JSON_SINCE) and not isinstance(instance, dict):
        issues.append(
            OutputIssue(
                (),
                f"structuredContent must be an object before protocol {_ANY_JSON_SINCE}, "
                f"got {json_type_name(instance)}",
                "type",
                kind="protocol",
            )
        )
    compiled = _compiled(schema, dialect)
    truncated = False
    if compiled.schema_issue is not None:
        issues.append(compiled.schema_issue)
    elif not _fast_valid(compiled.fast, instance):
        truncated = _run(compiled.validator, instance, issues)
    if not issues:
        return OutputValidation("valid", dialect=dialect)
    issues.sort(key=_issue_key)
    return OutputValidation("invalid", tuple(issues), dialect, truncated=truncated)


def _dialect(schema: dict[str, Any], protocol_version: str) -> str:
    declared = schema.get(_SCHEMA_KEY, _MISSING)
    if declared is _MISSING:
        return DRAFT_2020_12 if at_least(protocol_version, _DEFAULT_2020_12_SINCE) else DRAFT_07
    dialect = _DIALECT_BY_URI.get(declared) if isinstance(declared, str) else None
    if dialect is None:
        got = json_type_name(declared)
        details: dict[str, Any] = {"got": got, "supported": list(SUPPORTED_DIALECTS)}
        if isinstance(declared, str):
            details["value"] = declared[:200]
            message = "$.outputSchema.$schema names a JSON Schema dialect that is not supported"
        else:
            message = f"$.outputSchema.$schema must be a string, got {got}"
        raise Error(
            "protocol",
            "unsupported_schema_dialect",
            message,
            path=(w.OUTPUT_SCHEMA, _SCHEMA_KEY),
            details=details,
        )
    return dialect


def _digest(schema: dict[str, Any]) -> bytes:
    try:
        data = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        # orjson refuses integers beyond 64 bits, nesting beyond 255, lone surrogates and
        # non-str keys; the standard library takes all but the last (a caller bug).
        try:
            data = json.dumps(
                schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ).encode("utf-8", "surrogatepass")
        except RecursionError:
            _too_deep_schema()
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"outputSchema holds a value JSON cannot represent ({type(exc).__name__})"
            ) from None
    if len(data) > MAX_SCHEMA_BYTES:
        raise Error(
            "policy",
            "limit_exceeded",
            f"$.outputSchema is larger than {MAX_SCHEMA_BYTES} bytes of JSON",
            path=(w.OUTPUT_SCHEMA,),
            details={"limit": MAX_SCHEMA_BYTES, "size": len(data)},
        )
    return hashlib.sha256(data).digest()


def _too_deep_schema() -> NoReturn:
    raise Error(
        "policy",
        "limit_exceeded",
        "$.outputSchema is nested too deeply to compile",
        path=(w.OUTPUT_SCHEMA,),
        details={"limit": "interpreter recursion limit"},
    ) from None


def _compiled(schema: dict[str, Any], dialect: str) -> _Compiled:
    key = (dialect, _digest(schema))
    with _cache_lock:
        entry = _cache.get(key)
        if entry is not None:
            _cache.move_to_end(key)
    # Equality as well as the digest: the digest serialiser writes NaN and infinities as null.
    try:
        if entry is not None and entry.schema == schema:
            return entry
    except RecursionError:
        _too_deep_schema()
    entry = _compile(schema, dialect)
    with _cache_lock:
        _cache[key] = entry
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return entry


def _compile(schema: dict[str, Any], dialect: str) -> _Compiled:
    cls = _validator_class(dialect)
    try:
        private = _copy.deepcopy(schema)
    except RecursionError:
        _too_deep_schema()
    try:
        cls.check_schema(private)
    except RecursionError:
        _too_deep_schema()
    except SchemaError as exc:
        return _Compiled(private, None, _invalid_schema_issue(exc, dialect))
    except BaseException as exc:  # jsonschema is not hardened against every hostile schema
        if _stack_ran_out(exc):
            _too_deep_schema()
        if not isinstance(exc, Exception) and not _is_panic(exc):
            raise
        issue = OutputIssue(
            (),
            f"outputSchema could not be checked ({type(exc).__name__})",
            "outputSchema",
            kind="schema",
        )
        return _Compiled(private, None, issue)
    # No format_checker: `format` stays an annotation.
    validator = cls(private, registry=_REGISTRY)
    return _Compiled(private, validator, None, _fast_checker(private, dialect, validator))


_classes: dict[str, Any] = {}


def _validator_class(dialect: str) -> Any:
    # The dialect's class with the payload-free keywords below (built once per dialect).
    cls = _classes.get(dialect)
    if cls is None:
        cls = _classes[dialect] = extend(_BASE_CLASSES[dialect], _KEYWORDS)
    return cls


def _invalid_schema_issue(exc: SchemaError, dialect: str) -> OutputIssue:
    where = tuple(exc.absolute_path)
    keyword = next((p for p in reversed(where) if isinstance(p, str)), _SCHEMA_KEY)
    message = (
        f"outputSchema is not a valid {_DIALECT_NAMES[dialect]} schema: "
        f"{render_path(where)} fails the meta-schema's {exc.validator!s} rule"
    )
    return OutputIssue((), _clip(message), str(keyword), where, "schema")


def _fast_valid(fast: Callable[[Any], bool] | None, instance: Any) -> bool:
    # Only a clean True is trusted; anything else (False, an exception) asks jsonschema.
    if fast is None:
        return False
    try:
        return fast(instance) is True
    except BaseException as exc:
        if _stack_ran_out(exc):
            # jsonschema takes more stack per level than the closures: it would run out too.
            _too_deep_instance(instance)
        if not isinstance(exc, Exception) and not _is_panic(exc):
            raise
        return False


def _is_panic(exc: BaseException) -> bool:
    # jsonschema's type checker and `referencing` keep their maps in `rpds` (Rust, pyo3). A
    # RecursionError raised inside one surfaces as pyo3's PanicException, a BaseException.
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


def _stack_ran_out(exc: BaseException) -> bool:
    return isinstance(exc, RecursionError) or (_is_panic(exc) and "RecursionError" in str(exc))


def _too_deep_instance(instance: Any) -> NoReturn:
    depth = _depth(instance)
    raise Error(
        "policy",
        "limit_exceeded",
        f"$.structuredContent could not be validated within the interpreter stack (nesting "
        f"depth {depth}; a recursive outputSchema may also loop without consuming input)",
        path=(w.STRUCTURED_CONTENT,),
        details={"depth": depth, "limit": "interpreter recursion limit"},
    ) from None


def _run(validator: Any, instance: Any, issues: list[OutputIssue]) -> bool:
    """Append the validator's issues to `issues`; return whether they were truncated."""
    found = 0
    try:
        for err in validator.iter_errors(instance):
            if found == MAX_ISSUES:
                return True
            issues.append(_instance_issue(err))
            found += 1
    except RecursionError:
        _too_deep_instance(instance)
    except Unresolvable as exc:
        # jsonschema wraps referencing's exception; the cause says local pointer or remote URI.
        cause = exc.__cause__ if isinstance(exc.__cause__, Unresolvable) else exc
        ref = str(getattr(cause, "ref", "") or "")
        if isinstance(cause, PointerToNowhere):
            message = f"$ref not resolved: nothing at #{ref} in the outputSchema"
        else:
            message = f"remote $ref not resolved: {ref}"
        issues.append(OutputIssue((), _clip(message), "$ref", kind="schema"))
    except BaseException as exc:  # e.g. a `pattern` Python's `re` cannot compile
        if _stack_ran_out(exc):
            _too_deep_instance(instance)
        if not isinstance(exc, Exception) and not _is_panic(exc):
            raise
        issues.append(
            OutputIssue(
                (),
                f"outputSchema could not be applied ({type(exc).__name__})",
                "outputSchema",
                kind="schema",
            )
        )
    return False


def _depth(value: Any) -> int:
    # Explicit stack: the value may be nested far beyond the recursion limit.
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


# -- keyword functions ------------------------------------------------------------------------
# jsonschema builds each message eagerly with repr() of the offending value: a cost that grows
# with the payload, and a RecursionError for a deeply nested one. The keywords below fail on
# containers or long strings, so they are re-implemented with the same rule and a message that
# names the JSON type instead. Agreement with plain jsonschema is tested on the corpus.


def _kw_type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[Any]:
    wanted = types if isinstance(types, list) else [types]
    if not any(validator.is_type(instance, each) for each in wanted):
        names = " or ".join(str(each) for each in wanted)
        yield ValidationError(f"expected {names}, got {json_type_name(instance)}")


def _kw_enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not any(_json_equal(each, instance) for each in enums):
        yield ValidationError(
            f"{json_type_name(instance)} value is not one of the allowed values "
            f"{_short.repr(enums)}"
        )


def _kw_bound(json_type: str, label: str, keyword: str, below: bool) -> Any:
    def check(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, json_type):
            size = len(instance)
            if size < bound if below else size > bound:
                yield ValidationError(f"{label} {size} violates {keyword} {bound!r}")

    return check


def _kw_unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    # jsonschema's uniq is quadratic on arrays of objects (25 KB took 10 s); ours is linear.
    if unique and validator.is_type(instance, "array") and not _all_unique(instance):
        yield ValidationError("array items are not unique")


def _matches(validator: Any, instance: Any, subschema: Any) -> bool:
    # descend (not a fresh validator) keeps the `$id` scope for `$ref`s in the subschema.
    return next(iter(validator.descend(instance, subschema)), None) is None


def _kw_any_of(validator: Any, subschemas: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not any(_matches(validator, instance, each) for each in subschemas):
        yield ValidationError(
            f"{json_type_name(instance)} value matches none of the anyOf subschemas"
        )


def _kw_one_of(validator: Any, subschemas: Any, instance: Any, schema: Any) -> Iterator[Any]:
    matched = 0
    for each in subschemas:
        if _matches(validator, instance, each):
            matched += 1
            if matched == 2:
                break
    if matched != 1:
        which = "none" if matched == 0 else "more than one"
        yield ValidationError(
            f"{json_type_name(instance)} value matches {which} of the oneOf subschemas"
        )


def _kw_not(validator: Any, subschema: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if _matches(validator, instance, subschema):
        yield ValidationError(f"{json_type_name(instance)} value matches the 'not' subschema")


_KEYWORDS: Final[dict[str, Any]] = {
    "type": _kw_type,
    "enum": _kw_enum,
    "anyOf": _kw_any_of,
    "oneOf": _kw_one_of,
    "not": _kw_not,
    "uniqueItems": _kw_unique_items,
    "minLength": _kw_bound("string", "string length", "minLength", below=True),
    "maxLength": _kw_bound("string", "string length", "maxLength", below=False),
    "minItems": _kw_bound("array", "array length", "minItems", below=True),
    "maxItems": _kw_bound("array", "array length", "maxItems", below=False),
    "minProperties": _kw_bound("object", "number of properties", "minProperties", below=True),
    "maxProperties": _kw_bound("object", "number of properties", "maxProperties", below=False),
}

# Messages that name only schema values or property names (kept as jsonschema words them).
_OWN_MESSAGE: Final = frozenset(
    {
        *_KEYWORDS,
        "required",
        "dependentRequired",
        "dependencies",
        "additionalProperties",
        "unevaluatedProperties",
        "const",
    }
)


def _instance_issue(err: Any) -> OutputIssue:
    keyword = err.validator if isinstance(err.validator, str) else "false"
    message = str(err.message) if keyword in _OWN_MESSAGE else _describe(err, keyword)
    return OutputIssue(
        tuple(err.absolute_path),
        _clip(message),
        keyword,
        tuple(err.absolute_schema_path),
    )


def _describe(err: Any, keyword: str) -> str:
    # jsonschema's message embeds the offending value; this one names its JSON type instead.
    got = json_type_name(err.instance)
    if keyword == "false":
        return f"no value is allowed here (false schema), got {got}"
    if keyword == "pattern":
        return f"string does not match pattern {_short.repr(err.validator_value)}"
    if keyword == "uniqueItems":
        return "array items are not unique"
    return f"{got} value violates {keyword} {_short.repr(err.validator_value)}"


def _clip(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def _path_key(path: tuple[PathItem, ...]) -> tuple[tuple[int, Any], ...]:
    # Indexes before keys at the same depth; ints and strs never compared with each other.
    return tuple((1, p) if isinstance(p, str) else (0, p) for p in path)


def _issue_key(issue: OutputIssue) -> tuple[Any, ...]:
    return (
        _path_key(issue.path),
        issue.keyword,
        _path_key(issue.schema_path),
        issue.message,
    )
