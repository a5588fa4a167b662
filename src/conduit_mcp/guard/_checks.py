"""The guard's calls into the rest of conduit-mcp, one small private function each.

Each is the one place the guard calls that part of the library:
- `check_arguments`: `conduit_mcp.client.validate_arguments` (jsonschema-rs, linear-time patterns);
- `validate_output`: `validate_structured` (the same engine);
- `pin_page`: `PinStore.check_and_pin` (one lookup per page; one transaction for the writes).

All of them are synchronous and run in a worker thread (`run_bounded`), so none blocks the
event loop while it works and a slow one is abandoned after its time bound. The engine awaits
them as `_waits.Wait`s (`bounded`, `page_check`, `in_thread`): its decisions then run anywhere
until one must wait (`_waits.start`).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..client import (
    Error,
    OutputIssue,
    OutputValidation,
    PathItem,
    Tool,
    ToolResult,
    canonical_json,
)
from ..client import arguments_validator as arguments_validator
from ..client import fingerprint as _fingerprint
from ..client import validate_arguments as _validate_arguments
from ..client import validate_structured as _validate_structured
from ..client._cache import BoundedCache
from ..pins import PinStore
from ._state import FEED_NAMES
from ._waits import Wait

_T = TypeVar("_T")

#: Worker threads the guard's bounded checks may occupy at once (abandoned ones included).
_WORKERS: Final = 8


class Timeout(Exception):
    """A bounded check did not finish in time (its worker thread was abandoned)."""


class StoreUnavailable(Exception):
    """The pin store could not answer a page's check (a database error, or no answer within
    `PAGE_TIMEOUT`); the original exception is the `__cause__`."""


#: Seconds a page's pin check may take (one store round trip, plus pinning) before the page
#: counts as unchecked and its tools are withheld.
PAGE_TIMEOUT: float = 10.0


def is_store_error(exc: BaseException) -> bool:
    """Whether `exc` comes from the pin store's database (sqlite3 or psycopg) or its I/O,
    rather than from a bug: the store's documented errors (`PinStore` "Raises")."""
    import sqlite3

    if isinstance(exc, (sqlite3.Error, OSError)):
        return True
    return any(
        cls.__module__.split(".")[0] == "psycopg" for cls in type(exc).__mro__
    )  # psycopg is optional: matched by module, never imported here


async def run_bounded(fn: Callable[[], _T], seconds: float) -> _T:
    """Run `fn()` in a worker thread; give up waiting after `seconds`.

    Raises:
        Timeout: `fn` did not return in time. The thread is abandoned, not stopped (Python
            cannot stop a thread); it finishes on its own in the background.
        Exception: whatever `fn` raised.

    Caveat: the bound holds only while `fn` lets other threads run. C code that keeps the
    GIL (Python's `re` backtracking) freezes the event loop too; that is why the output check
    needs a linear-time regex engine (jsonschema-rs), and the bound is a second line of defence.
    """
    return await _run(fn, seconds)


async def run_page_check(fn: Callable[[], _T]) -> _T:
    """`run_bounded` for a page's pin check, bounded by `PAGE_TIMEOUT` (read when called).

    Raises:
        Timeout, Exception: as `run_bounded`.
    """
    return await _run(fn, PAGE_TIMEOUT)


def bounded(fn: Callable[[], _T], seconds: float) -> Wait:
    """`run_bounded(fn, seconds)` as the engine awaits it (a `Wait`; the same value or
    exceptions)."""
    return Wait(lambda: run_bounded(fn, seconds))


def page_check(fn: Callable[[], _T]) -> Wait:
    """`run_page_check(fn)` as the engine awaits it (a `Wait`)."""
    return Wait(lambda: run_page_check(fn))


def in_thread(fn: Callable[[], _T]) -> Wait:
    """`fn()` in a worker thread, unbounded (the default limiter), as the engine awaits it."""
    return Wait(lambda: anyio.to_thread.run_sync(fn))


async def _run(fn: Callable[[], _T], seconds: float) -> _T:
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
    """`validate_arguments`, with its `Error`s read as an `invalid` verdict.

    An inputSchema the validator cannot use (unsupported dialect, too large or too deep) means
    the call cannot be checked, so it is not sent (an `invalid` verdict with a `schema` issue).

    Spec: 2026-07-28 server/tools "Tool" (`inputSchema`), "Error Handling" (invalid arguments).
    """
    try:
        return _validate_arguments(tool, arguments, protocol_version=protocol_version)
    except Error as exc:
        issue = OutputIssue(exc.path, exc.message, "inputSchema", kind="schema")
        return OutputValidation("invalid", (issue,))


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
_LINEAR_CACHE_SIZE: Final = 1024
#: (key, fingerprint) -> the answer; hits are read lock-free (`peek`).
_linear_cache: BoundedCache[tuple[str, str], bool] = BoundedCache(_LINEAR_CACHE_SIZE)


def is_linear(tool: Tool, key: str) -> bool:
    """Whether the tool's `key` schema (`"inputSchema"` / `"outputSchema"`) uses only keywords
    whose validation is linear in the instance, with a small factor (at most `INLINE_WEIGHT`
    schema objects, `required` names and `enum` members), so it may run inline on the event
    loop.

    Cached by (key, the tool's fingerprint). Walks the schema with an explicit stack.
    """
    fingerprint = tool.fingerprint
    if fingerprint is not None:
        hit: bool | None = _linear_cache.peek((key, fingerprint), None)
        if hit is not None:
            return hit
    answer = _walk_linear(tool.raw.get(key))
    if fingerprint is not None:
        _linear_cache.put((key, fingerprint), answer)
    return answer


#: Most schema objects, `required` names and `enum` members a schema may weigh to be checked
#: inline. Each counts once per instance value it applies to, and jsonschema-rs's
#: `iter_errors` builds every issue of an `items` array before the first is read: `required`
#: with 1,500 names over 1,500 empty objects took it minutes (0.84 s at 300 x 300; measured
#: 0.61.2 on this machine), where a light schema over the same items is microseconds.
INLINE_WEIGHT: Final = 256


def _walk_linear(schema: object) -> bool:
    stack = [schema]
    weight = 0
    while stack:
        node = stack.pop()
        weight += 1
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for keyword, value in node.items():
            if keyword not in _LINEAR_KEYWORDS:
                return False
            if keyword in ("required", "enum") and isinstance(value, list):
                weight += len(value)
            if weight > INLINE_WEIGHT:
                return False  # linear, but with a factor too large for the event loop
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

    # "approved" | "new" | "changed" | "cosmetic" | "revoked" (new, pin revoked) | "rejected"
    status: str
    pinned: bool  # the guard pinned it now (new + "pin", changed + "allow", cosmetic)
    changes: tuple[Any, ...] = ()  # FieldChange: RFC 6901 path, op, old, new, material


#: The approver recorded in the audit log for the guard's own approvals.
GUARD_APPROVER: Final = "conduit-mcp guard"


def pin_page(
    store: PinStore,
    server_id: str,
    tools: Sequence[Tool],
    *,
    pin_new: bool,
    pin_changed: bool,
    accept_cosmetic: bool = True,
    protocol_version: str | None = None,
    revoked: frozenset[str] = frozenset(),
    queue: bool = True,
) -> list[PinVerdict]:
    """Check every tool of a page against its pin and write the automatic pins the policy
    allows, in ONE store transaction (`PinStore.check_and_pin`, approver
    `"conduit-mcp guard"`), run in one worker thread.

    The writes are conditional: a tool revoked (or approved by a person) between the check and
    the write is never pinned over, and a cosmetic change (only title, icons or
    annotations.title) is recorded beside the person's approval, never in its place — and only
    with `accept_cosmetic` (policy `cosmetic="accept"`); otherwise it counts as `"changed"`.
    Held tools go to the store's pending queue.

    Under `pin_new`, a new tool whose last pin was revoked (the store keeps a record of each
    revocation until the next approval) comes back as `"revoked"`, unpinned; so does one whose
    automatic pin was not written (fail closed). `revoked` (what the caller already knows) is
    accepted for the caller's convenience; the store's record decides. `queue=False` (the
    guard's private store, unless a policy holds tools) writes no pending rows.
    """
    outcome = store.check_and_pin(
        server_id,
        tools,
        approver=GUARD_APPROVER,
        pin_new=pin_new,
        accept_cosmetic=accept_cosmetic,
        pin_changed=pin_changed,
        protocol_version=protocol_version,
        queue=queue,
    )
    verdicts: list[PinVerdict] = []
    for check in outcome.checks:
        status, name = str(check.status), check.name
        if name in outcome.rejected:  # a person rejected this definition: blocked
            verdicts.append(PinVerdict("rejected", False, tuple(check.changes)))
            continue
        pinned = name in outcome.pinned
        if status == "new" and pin_new and not pinned:
            verdicts.append(PinVerdict("revoked", False))
            continue
        if status == "cosmetic" and not pinned:
            status = "changed"  # not accepted by the policy, or not written: a change
        verdicts.append(PinVerdict(status, pinned, tuple(check.changes)))
    return verdicts


def watch_pins(guard: Any) -> Any:
    """Start the change feed of the guard's (caller's) store: approvals and revocations made by
    any process or host reach this guard within a second, without a re-list
    (`PinStore.watch`). Returns the `PinWatcher`, or `None` for a private `":memory:"` store
    (nobody else writes it) or one whose watcher cannot connect (logged; the guard then learns
    of changes at its next listing, as before)."""
    ref = weakref.ref(guard)

    def deliver(entry: Any) -> None:
        current = ref()
        if current is not None:
            apply_pin_change(current, entry)

    try:
        return guard.pins.watch(deliver)
    except ValueError:
        return None
    except Exception:
        logging.getLogger("conduit_mcp.guard").warning(
            "the pin store's change feed could not start", exc_info=True
        )
        return None


def apply_pin_change(guard: Any, entry: Any) -> None:
    """What an approval or revocation committed elsewhere means for the guard's tool states
    (called from the watcher's thread; each change is one attribute assignment):

    - a revocation blocks the tool (reason `"revoked"`): its next call is refused;
    - a rejection of the definition the guard holds blocks it (reason `"rejected"`);
    - an approval of exactly the definition the guard holds or blocks lets its next call
      through; an approval of another definition than the one the guard allows blocks it
      (reason `"changed"`) until the next listing is checked.

    The change is also remembered (`ToolBook.feed_last`) for a listing whose store check it
    overlapped: `reapply_pin_changes` applies it again once that listing's verdicts are in.
    """
    if entry.server_id != guard.server_id or getattr(entry, "outcome", None) == "instructions":
        return  # another server's, or its instructions approved (no tool changes)
    book = guard._shared.book
    with book.feed_lock:
        book.feed_count += 1
        last = book.feed_last
        last.pop(entry.name, None)
        last[entry.name] = (book.feed_count, entry)
        if len(last) > FEED_NAMES:
            oldest = next(iter(last))
            book.feed_floor = last.pop(oldest)[0]
        state = book.tools.get(entry.name)
        was_listed = state is not None and state.status == "ok"
        _apply(book, entry)
        state = book.tools.get(entry.name)
        if was_listed != (state is not None and state.status == "ok"):
            guard._shared.notices.changed(entry.name)  # shown or hidden now: tell the clients


def feed_mark(book: Any) -> int:
    """The feed's count now: pass it to `reapply_pin_changes` after a store check begun now."""
    with book.feed_lock:
        return int(book.feed_count)


def reapply_pin_changes(book: Any, since: int, names: Sequence[str]) -> None:
    """After a listing recorded the verdicts of a store check begun at feed count `since`:
    apply again the last change delivered since then for each of `names`, so a revocation or
    approval that committed after the check read the store is not overwritten by the check's
    stale verdict. When changes since then were dropped (more than `FEED_NAMES` names
    changed meanwhile), each of `names` the guard allows is blocked (reason `"changed"`)
    until the next listing is checked: fail closed."""
    with book.feed_lock:
        if book.feed_floor > since:
            for name in names:
                state = book.tools.get(name)
                if state is not None and state.status == "ok":
                    state.reason = "changed"
                    state.status = "blocked"
        for name in names:
            item = book.feed_last.get(name)
            if item is not None and item[0] > since:
                _apply(book, item[1])


def _apply(book: Any, entry: Any) -> None:
    name = entry.name
    state = book.tools.get(name)
    if entry.action == "revoke":
        book.pinned.pop(name, None)
        book.revoked.add(name)
        if state is not None and state.status == "ok":
            state.reason = "revoked"
            state.status = "blocked"
        return
    if entry.action == "reject":  # the definition the guard holds was rejected: blocked
        if state is not None and state.tool is not None and state.status in ("held", "blocked"):
            if (state.tool.fingerprint or _fingerprint(state.tool.raw)) == entry.fingerprint:
                state.reason = "rejected"
                state.status = "blocked"
        return
    if entry.action != "approve" or state is None or state.tool is None:
        return
    if state.reason == "unchecked" or state.status == "rejected":
        return
    listed = state.tool.fingerprint or _fingerprint(state.tool.raw)
    if listed == entry.fingerprint:
        book.revoked.discard(name)
        if state.status in ("held", "blocked"):
            state.reason = ""
            state.status = "ok"
    elif state.status == "ok":
        book.pinned.pop(name, None)
        state.reason = "changed"
        state.status = "blocked"


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
