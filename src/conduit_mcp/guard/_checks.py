"""The guard's calls into the rest of conduit-mcp, one small private function each.

Each is the single place a parallel change lands (the coordinator swaps one line):
- `check_arguments`: becomes `conduit_mcp.client.validate_arguments` (issue 13);
- `validate_output`: `validate_structured` (moving to jsonschema-rs in issue 13);
- `pin_page`: `PinStore.check` / `approve` today; `changes` and page-level checks (issue 11).

All of them are synchronous and run in a worker thread (`run_bounded`), so none blocks the
event loop while it works and a slow one is abandoned after its time bound.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

# jsonschema ships no type information: its names are Any here.
from jsonschema import validators as _validators  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from referencing import Registry

from ..client import (
    Error,
    OutputIssue,
    OutputValidation,
    PinStore,
    Tool,
    ToolResult,
    canonical_json,
)
from ..client import validate_structured as _validate_structured
from ..client._errors import PathItem
from ..client._versions import at_least

_T = TypeVar("_T")

#: Worker threads the guard's bounded checks may occupy at once (abandoned ones included).
_WORKERS: Final = 8
#: Most argument issues reported.
_MAX_ISSUES: Final = 20
_DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
_DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"
#: A registry that resolves nothing remote (basic "JSON Schema Usage": MUST NOT dereference
#: network `$ref`s).
_REGISTRY: Final[Registry[Any]] = Registry()


class Timeout(Exception):
    """A bounded check did not finish in time (its worker thread was abandoned)."""


async def run_bounded(fn: Callable[[], _T], seconds: float) -> _T:
    """Run `fn()` in a worker thread; give up waiting after `seconds`.

    Raises:
        Timeout: `fn` did not return in time. The thread is abandoned, not stopped (Python
            cannot stop a thread); it finishes on its own in the background.
        Exception: whatever `fn` raised.

    Caveat: the bound holds only while `fn` lets other threads run. C code that keeps the
    GIL (Python's `re` backtracking) freezes the event loop too; that is why the output check
    needs a linear-time regex engine (issue 13), and the bound is a second line of defence.
    """
    try:
        with anyio.fail_after(seconds):
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True, limiter=_limiter())
    except TimeoutError:
        raise Timeout from None


_limiters: weakref.WeakKeyDictionary[Any, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


def _limiter() -> anyio.CapacityLimiter:
    """The guard's own worker-thread limiter, one per event loop: abandoned checks hold its
    tokens, never those of the application's default thread pool."""
    loop = anyio.lowlevel.current_token()
    try:
        limiter = _limiters.get(loop)
        if limiter is None:
            limiter = _limiters[loop] = anyio.CapacityLimiter(_WORKERS)
    except TypeError:  # a loop token that cannot be weakly referenced
        limiter = anyio.CapacityLimiter(_WORKERS)
    return limiter


def validate_output(result: ToolResult, tool: Tool, *, protocol_version: str) -> OutputValidation:
    """`validate_structured`, with its `Error`s read as an `invalid` verdict.

    An outputSchema the validator cannot use (unsupported dialect, too large or too deep) makes
    the structured content unusable, so it counts as invalid (kind `"schema"`).
    """
    try:
        return _validate_structured(result, tool, protocol_version=protocol_version)
    except Error as exc:
        issue = OutputIssue(exc.path, exc.message, "outputSchema", kind="schema")
        return OutputValidation("invalid", (issue,))


def check_arguments(tool: Tool, arguments: object, *, protocol_version: str) -> OutputValidation:
    """Validate a `tools/call`'s `arguments` against the tool's `inputSchema`.

    Stand-in for `validate_arguments(tool, arguments, *, protocol_version)` (issue 13), with
    the same verdict type: `valid`, or `invalid` with issues whose paths start at the
    `arguments` object. Dialect: the schema's `$schema`, else 2020-12 from 2025-11-25 on and
    draft-07 before (as `validate_structured`). `format` is not asserted. A schema that is
    not a valid schema, or needs a remote `$ref`, is an `invalid` verdict with a `schema`
    issue (the call cannot be checked, so it is not sent).

    Spec: 2026-07-28 server/tools "Tool" (`inputSchema`), "Error Handling" (invalid
    arguments); basic "JSON Schema Usage" ("Schema Dialect", "$ref Resolution").
    """
    schema = tool.raw.get("inputSchema")
    if not isinstance(schema, dict):
        return OutputValidation("skipped", skip_reason="no_input_schema")
    default = _DRAFT_2020_12 if at_least(protocol_version, "2025-11-25") else _DRAFT_07
    try:
        validator = _argument_validator(tool, schema, default)
        if validator.is_valid(arguments):
            return OutputValidation("valid")
        issues: list[OutputIssue] = []
        for error in validator.iter_errors(arguments):
            issues.append(
                OutputIssue(
                    tuple(error.absolute_path),
                    _describe(error),
                    str(error.validator),
                    tuple(error.absolute_schema_path),
                )
            )
            if len(issues) >= _MAX_ISSUES:
                break
    except SchemaError as exc:
        issue = OutputIssue(
            (),
            f"inputSchema is not a valid schema ({exc.validator})",
            "inputSchema",
            tuple(exc.absolute_schema_path),
            kind="schema",
        )
        return OutputValidation("invalid", (issue,))
    except Exception as exc:  # unresolvable $ref, RecursionError, a pattern re cannot compile
        issue = OutputIssue(
            (),
            f"inputSchema cannot be applied ({type(exc).__name__})",
            "inputSchema",
            kind="schema",
        )
        return OutputValidation("invalid", (issue,))
    if not issues:
        return OutputValidation("valid")
    issues.sort(key=lambda i: [str(p) for p in i.path])
    return OutputValidation("invalid", tuple(issues))


_validator_cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
_validator_lock = threading.Lock()
_VALIDATOR_CACHE_SIZE: Final = 1024


def _argument_validator(tool: Tool, schema: dict[str, Any], default: str) -> Any:
    """A compiled validator for the tool's inputSchema, cached by (dialect default, the
    fingerprint of the whole tool definition); an invalid schema raises `SchemaError` each
    time (a failed compile is never cached)."""
    key = (default, tool.fingerprint) if tool.fingerprint else None
    if key is not None:
        with _validator_lock:
            cached = _validator_cache.get(key)
            if cached is not None:
                _validator_cache.move_to_end(key)
                return cached
    cls = _validators.validator_for(schema, default=_validators.validator_for({"$schema": default}))
    cls.check_schema(schema)
    validator = cls(schema, registry=_REGISTRY)
    if key is not None:
        with _validator_lock:
            _validator_cache[key] = validator
            if len(_validator_cache) > _VALIDATOR_CACHE_SIZE:
                _validator_cache.popitem(last=False)
    return validator


def _describe(error: Any) -> str:
    # Name the rule and the place, never the instance value.
    keyword = str(error.validator)
    if keyword == "required":
        missing = [str(x)[:64] for x in error.validator_value if isinstance(x, str)]
        return f"required property missing (one of {missing[:8]})"
    if keyword == "additionalProperties":
        return "additional properties are not allowed"
    if keyword == "type":
        return f"must be of type {error.validator_value!r}"
    if keyword in ("enum", "const"):
        return f"not an allowed value ({keyword})"
    return f"fails {keyword!r}"


#: Keywords whose validation cost is linear in the instance (no regex, no branching, no
#: references, no pairwise comparison). Annotations are free. A schema built only from these
#: is checked inline; anything else goes to a worker thread under the time bound.
_LINEAR_KEYWORDS: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "format",  # an annotation only here: never asserted
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$id",
        "$anchor",
    }
)
_SUBSCHEMA_MAPS: Final = frozenset({"properties"})
_SUBSCHEMAS: Final = frozenset({"additionalProperties", "items"})
_VALUES: Final = frozenset({"enum", "const", "default", "examples"})
_linear_cache: OrderedDict[tuple[str, str], bool] = OrderedDict()


def is_linear(tool: Tool, key: str) -> bool:
    """Whether the tool's `key` schema (`"inputSchema"` / `"outputSchema"`) uses only keywords
    whose validation is linear in the instance, so it may run inline on the event loop.

    Cached by (key, the tool's fingerprint). Walks the schema with an explicit stack.
    """
    fingerprint = tool.fingerprint
    if fingerprint is not None:
        hit = _linear_cache.get((key, fingerprint))
        if hit is not None:
            return hit
    answer = _walk_linear(tool.raw.get(key))
    if fingerprint is not None:
        with _validator_lock:
            _linear_cache[(key, fingerprint)] = answer
            if len(_linear_cache) > _VALIDATOR_CACHE_SIZE:
                _linear_cache.popitem(last=False)
    return answer


def _walk_linear(schema: object) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for keyword, value in node.items():
            if keyword not in _LINEAR_KEYWORDS:
                return False
            if keyword in _SUBSCHEMA_MAPS:
                if not isinstance(value, dict):
                    return False
                stack.extend(value.values())
            elif keyword in _SUBSCHEMAS:
                if isinstance(value, list):
                    stack.extend(value)
                else:
                    stack.append(value)
    return True


@dataclass(frozen=True, slots=True)
class PinVerdict:
    """What the pin store says about one tool of a page."""

    status: str  # "approved" | "new" | "changed" (| "cosmetic" once issue 11 lands)
    pinned: bool  # the guard pinned it now (new + "pin", changed + "allow")
    changes: tuple[Any, ...] = ()


def pin_page(
    store: PinStore,
    server_id: str,
    tools: Sequence[Tool],
    *,
    pin_new: bool,
    pin_changed: bool,
    protocol_version: str | None = None,
) -> list[PinVerdict]:
    """Check every tool of a page against its pin; pin the new (and changed) ones as told.

    One call per page, run in one worker thread. A store with `check_page` (issue 11) is asked
    once for the whole page and gives field-level `changes`; otherwise `check` per tool (and
    `changes` when the store has it). The tools to pin are approved in one transaction
    (`approve_all`). A `"cosmetic"` status (issue 11) is re-pinned.
    """
    check_page = getattr(store, "check_page", None)
    answers: list[tuple[str, tuple[Any, ...]]] = []
    if callable(check_page):
        for check in check_page(server_id, tools, protocol_version=protocol_version):
            answers.append((str(check.status), tuple(check.changes)))
    else:
        changes_of = getattr(store, "changes", None)
        for tool in tools:
            status: str = store.check(server_id, tool)  # issue 11 adds "cosmetic"
            changes: tuple[Any, ...] = ()
            if status in ("changed", "cosmetic") and callable(changes_of):
                try:
                    changes = tuple(changes_of(server_id, tool))
                except Exception:
                    changes = ()
            answers.append((status, changes))
    verdicts: list[PinVerdict] = []
    to_pin: list[Tool] = []
    for tool, (status, changes) in zip(tools, answers, strict=True):
        pinned = (
            (status == "new" and pin_new)
            or (status == "changed" and pin_changed)
            or status == "cosmetic"
        )
        if pinned:
            to_pin.append(tool)
        verdicts.append(PinVerdict(status, pinned, changes))
    if to_pin:
        store.approve_all(server_id, to_pin)
    return verdicts


def top_level_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[PathItem, ...]:
    """The top-level keys of a tool definition whose values differ (sorted)."""
    keys = set(old) | set(new)
    return tuple(
        sorted(k for k in keys if k not in old or k not in new or not _same(old[k], new[k]))
    )


def _same(a: Any, b: Any) -> bool:
    # JSON equality (Python's == conflates True and 1): compare canonical bytes.
    try:
        return canonical_json(a) == canonical_json(b)
    except Error:
        return False
