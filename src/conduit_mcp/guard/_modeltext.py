"""What the model sees of a guarded server: hidden characters and look-alike names.

Not a public module (`RESULT_META_KEY` is exported from `conduit_mcp.guard`). Three steps, each
called once from the engine (`_listing.Listing._on_list`, `_engine.Engine.inbound`):

- `screen_page_text`, per `tools/list` page after intake: hidden characters in a tool's text
  are removed from the SDK's copy (`tool_text="clean"`) or the tool is rejected
  (`tool_text="block"`); a hidden character in a name the model sends back (the tool's name,
  a property name) rejects the tool whatever the policy. Pins keep what the server sent.
- `screen_lookalikes`, per page before the pin check: a tool whose name is new to this server
  but looks like a pinned or listed name (`conduit_mcp.client.lookalike_key`) is a change of
  that tool under policy `changed`, never a trust-on-first-use pin.
- `clean_call_result`, per `tools/call` response the guard hands on: hidden characters in the
  result's text are removed (`result_text="clean"`), and the result says so in `_meta`.

The decisions are the pure functions of `conduit_mcp.client` (`clean_tool_text`,
`clean_result_text`, `find_lookalikes`); this module applies them to the connection's page,
state and events.
"""

from __future__ import annotations

from typing import Any, Final

from ..client import (
    Tool,
    clean_result_text,
    clean_tool_text,
    lookalike_key,
    lookalike_relation,
    render_path,
)
from ..client._cache import MISSING
from . import _checks
from ._base import Verdict, _bind
from ._checks import GUARD_APPROVER, top_level_changes
from ._events import GuardEvent
from ._jsonrpc import RESULT_META_KEY as _RESULT_META_KEY
from ._jsonrpc import result_response
from ._state import ToolState

#: The `_meta` key of a `tools/call` result under which the guard says what it changed:
#: `{"text_cleaned": [JSON paths], "flags": [...]}` (flags: `control_characters_removed`,
#: `invisible_unicode_removed`, `lone_surrogate_replaced`), or, for a result it withheld,
#: `{"result_withheld": reason}`. Present only when the guard changed the result; a server's
#: own value under this key is removed (a server does not speak for the guard). Read it from
#: the SDK's `CallToolResult.meta`. (Defined in `_jsonrpc`, beside the withheld result.)
RESULT_META_KEY: Final = _RESULT_META_KEY

#: Paths listed in an event's `details` (the count is exact; the list is cut).
MAX_LISTED_PATHS: Final = 32

_HIDDEN_CODES: Final = frozenset({"invisible_unicode", "control_characters"})


def screen_page_text(
    conn: Any,
    page: Any,
    accepted: list[tuple[int, Tool]],
    removed: set[int],
    rejected_names: set[str],
    rejections: list[tuple[int, GuardEvent]],
) -> tuple[list[tuple[int, Tool]], dict[int, dict[str, Any]]]:
    """Apply policy `tool_text` to the accepted tools of one page.

    Args:
        conn: the connection's engine (its shared state, `_event`).
        page: the page's `Intake` (its `invisible_unicode` / `control_characters` warnings say
            which tools hold hidden text, with exact paths).
        accepted: `(index in the page, Tool)` of the tools still on the page.
        removed, rejected_names, rejections: the page's bookkeeping, added to.

    Returns:
        `(accepted, cleaned)`: the tools still on the page, and index -> the definition the SDK
        sees in place of the server's (only for tools whose text was cleaned).
    """
    shared = conn.shared
    policy = shared.policy.tool_text
    clean = shared.book.text_clean
    kept: list[tuple[int, Tool]] = []
    cleaned: dict[int, dict[str, Any]] = {}
    # The tools intake warned about (one pass over the page's warnings, not one per tool).
    warned = {x.path[1] for x in page.warnings if x.code in _HIDDEN_CODES and len(x.path) > 1}
    for index, tool in accepted:
        warnings = (
            [x for x in page.warnings_for(index) if x.code in _HIDDEN_CODES]
            if index in warned
            else []
        )
        if not warnings and clean.get(tool.name, MISSING) == tool.fingerprint:
            kept.append((index, tool))  # this definition was scanned and holds nothing hidden
            continue
        # Intake warns about the strings of the model view; a client shows the model more
        # (a whole inputSchema with its `$comment`s, `_meta`): every string is cleaned.
        found = clean_tool_text(tool.raw)
        if not warnings and not found.changed and not found.identifiers:
            clean[tool.name] = tool.fingerprint
            kept.append((index, tool))
            continue
        where_found = [("tools", index, *p) for p in (*found.identifiers, *found.paths)]
        paths = list(
            dict.fromkeys(
                [render_path(x.path) for x in warnings] + list(map(render_path, where_found))
            )
        )
        details = {
            "paths": paths[:MAX_LISTED_PATHS],
            "count": len(paths),
            "codes": sorted({x.code for x in warnings}) or list(found.flags),
        }
        if found.identifiers or policy == "block":
            reason = "hidden_characters_in_name" if found.identifiers else "hidden_characters"
            where = (found.identifiers or found.paths or (warnings[0].path[2:],))[0]
            why = (
                "the tool's name, a property name or another key holds invisible or control "
                "characters (a call must name them exactly)"
                if found.identifiers
                else "the tool's text holds invisible or control characters (tool_text='block')"
            )
            removed.add(index)
            rejected_names.add(tool.name)
            rejections.append(
                (
                    index,
                    conn._event(
                        "tool_rejected",
                        tool.name,
                        reason,
                        "removed",
                        path=("tools", index, *where),
                        message=why,
                        details=details,
                    ),
                )
            )
            continue
        kept.append((index, tool))
        cleaned[index] = found.value
        reported = shared.book.text_reported
        if reported.get(tool.name, MISSING) == tool.fingerprint:
            continue  # already reported for this definition
        reported[tool.name] = tool.fingerprint
        rejections.append(
            (
                index,
                conn._event(
                    "tool_text_cleaned",
                    tool.name,
                    "hidden_characters_removed",
                    "cleaned",
                    path=("tools", index),
                    message=(
                        f"hidden characters removed from {len(found.paths)} string(s) before "
                        "the SDK sees the tool (the pin keeps the definition as sent)"
                    ),
                    details={**details, "flags": list(found.flags)},
                ),
            )
        )
    return kept, cleaned


async def screen_lookalikes(
    conn: Any,
    accepted: list[tuple[int, Tool]],
    listing: set[str],
    removed: set[int],
    hidden: set[int],
) -> list[tuple[int, Tool]]:
    """Treat a tool whose new name looks like a known one as a change of that tool.

    Known names: those the guard holds or has seen listed on this server and, with a caller's
    pin store, the store's pins of this server (read once per guard, in a worker thread, when a
    page first has a name new to the guard). Each known name's `lookalike_key` is kept in an
    index on the guard, so a listing costs one key per name new to the guard, never a pass
    over the names of earlier listings. A look-alike gets a `tool_changed` event (reason
    `lookalike_name`, `details`: `lookalike_of`, `relation`) and follows policy `changed`:
    `"block"` removes it and refuses its calls, `"hold"` holds it, `"allow"` pins it
    (approver `"conduit-mcp guard"`); a held look-alike is not listed to the model. It is not
    a known name itself until approved, so it is screened again on every listing.

    Args:
        conn: the connection's engine.
        accepted: `(index in the page, Tool)` of the tools still on the page.
        listing, removed, hidden: the page's bookkeeping, added to.

    Returns:
        The tools that go on to the pin check (look-alikes taken out).

    Raises:
        _checks.StoreUnavailable: the pin store cannot be read, or cannot pin a look-alike
            under `changed="allow"`, within `PAGE_TIMEOUT` (the caller fails closed).
    """
    shared = conn.shared
    book = shared.book
    tools = book.tools

    store_names: frozenset[str] = book.store_names or frozenset()
    # The names not known yet: neither held (a look-alike held is not known) nor pinned.
    fresh: list[tuple[int, Tool]] = []
    known_pins = book.pinned
    for index, tool in accepted:
        name = tool.name
        state = tools.get(name)
        if state is not None:
            if state.reason == "lookalike":
                fresh.append((index, tool))
        elif name not in known_pins and name not in store_names:
            fresh.append((index, tool))
    if not fresh:
        return accepted
    index_of = book.lookalike_index
    if book.store_names is None:
        store_names = frozenset()
        if not shared.owns_pins:  # the guard's private store holds only what `pinned` says
            try:
                # Bounded as the page's pin check: a store that stopped answering withholds
                # the page, never holds the listing (and all that follows it) for ever.
                pinned = await _checks.page_check(_bind(shared.pins.pinned, shared.server_id))
            except _checks.Timeout as exc:
                raise _checks.StoreUnavailable(
                    f"the pin store did not answer within {_checks.PAGE_TIMEOUT} s"
                ) from exc
            except Exception as exc:
                if _checks.is_store_error(exc):
                    raise _checks.StoreUnavailable(str(exc)) from exc
                raise
            store_names = frozenset(pinned)
            for name in sorted(store_names):
                index_of.setdefault(lookalike_key(name), name)
        book.store_names = store_names
        fresh = [(index, tool) for index, tool in fresh if tool.name not in store_names]
    matches: dict[str, str] = {}
    keys: dict[str, str] = {}
    # With a baseline (names known before this page), two new names of one page that look
    # alike are a pair a person never saw: the second is a change of the first. A server's
    # first listing has no baseline: its names are all new together.
    baseline = bool(index_of)
    # Listed names join the index up to `max_tools` of them (beside the store's pins): a
    # server listing fresh names on every listing does not grow it without bound.
    cap = shared.policy.max_tools + len(store_names)
    for _, tool in fresh:
        key = keys[tool.name] = lookalike_key(tool.name)
        old = index_of.get(key)
        if old is not None and old != tool.name:
            matches[tool.name] = old
        elif baseline and len(index_of) < cap:
            index_of.setdefault(key, tool.name)
    for name, key in keys.items():  # the others are listed names from now on
        if name not in matches and len(index_of) < cap:
            index_of.setdefault(key, name)
    if not matches:
        return accepted
    policy = shared.policy.changed
    kept: list[tuple[int, Tool]] = []
    for index, tool in accepted:
        name = tool.name
        old = matches.get(name)
        if old is None:
            kept.append((index, tool))
            continue
        old_state = tools.get(old)
        previous = old_state.tool.raw if old_state is not None and old_state.tool else None
        changes = ("name", *top_level_changes(previous, tool.raw)) if previous else ("name",)
        decision = {"block": "blocked", "allow": "pinned", "hold": "held"}[policy]
        relation = lookalike_relation(name, old)
        conn.emit(
            "tool_changed",
            name,
            "lookalike_name",
            decision,
            path=("tools", index, "name"),
            changes=tuple(dict.fromkeys(changes)),
            message=(
                f"a new name that looks like the tool {old!r} ({relation}): treated as a "
                f"change of that tool ({decision}), not as a new tool"
            ),
            details={"lookalike_of": old, "relation": relation},
        )
        listing.add(name)
        if policy == "block":
            removed.add(index)
            tools[name] = ToolState("blocked", tool, "lookalike")
            continue
        if policy == "hold":  # held is hidden: not listed to the model until approved
            removed.add(index)
            tools[name] = ToolState("held", tool, "lookalike")
            continue
        try:
            # Bounded as the read above: a store that stopped answering withholds the page.
            await _checks.page_check(
                _bind(_approve, shared.pins, shared.server_id, tool, conn.known_version())
            )
        except _checks.Timeout as exc:
            raise _checks.StoreUnavailable(
                f"the pin store did not answer within {_checks.PAGE_TIMEOUT} s"
            ) from exc
        except Exception as exc:
            if _checks.is_store_error(exc):
                raise _checks.StoreUnavailable(str(exc)) from exc
            raise
        book.pinned[name] = tool.fingerprint
        tools[name] = ToolState("ok", tool, "")
        conn._hide_output_schema(index, tool, hidden)
    return kept


def _approve(store: Any, server_id: str, tool: Tool, version: str | None) -> None:
    store.approve_all(server_id, [tool], approver=GUARD_APPROVER, protocol_version=version)


def clean_call_result(
    conn: Any, request_id: Any, result: Any, verdict: Verdict, tool: str | None
) -> Verdict:
    """Apply policy `result_text` to what the guard hands the SDK for one `tools/call`.

    Args:
        conn: the connection's engine.
        request_id: the call's JSON-RPC id.
        result: the server's `result` (as received).
        verdict: the `Verdict` the call-result checks gave (pass: `result` goes on; replace:
            the guard's own message goes on, e.g. a withheld result or an error).
        tool: the called tool's name (for the event).

    Returns:
        `verdict` itself when nothing changes; else a replacing verdict whose result is
        cleaned, its `_meta[RESULT_META_KEY]` listing the cleaned paths and flags (a server's
        own value under that key is removed in any case).
    """
    if verdict.action == "pass":
        handed = result
    elif verdict.action == "replace" and isinstance(verdict.message, dict):
        handed = verdict.message.get("result")
    else:
        return verdict
    if type(handed) is not dict:
        return verdict
    # The server's claim, read from what it sent: the guard's own result in its place (one it
    # withheld) keeps the guard's key.
    sent_meta = result.get("_meta") if type(result) is dict else None
    forged = type(sent_meta) is dict and RESULT_META_KEY in sent_meta
    found = None
    if conn.shared.policy.result_text != "pass":
        found = clean_result_text(handed)
        if not found.changed:
            found = None
    if found is None and not forged:
        return verdict
    new = dict(found.value) if found is not None else dict(handed)
    meta = new.get("_meta")  # the cleaned one, when the result's `_meta` held hidden text
    new_meta = {k: v for k, v in meta.items() if k != RESULT_META_KEY} if type(meta) is dict else {}
    own = meta.get(RESULT_META_KEY) if type(meta) is dict and not forged else None
    if type(own) is dict:  # the guard's own (a withheld result's reason): kept
        new_meta[RESULT_META_KEY] = dict(own)
    if found is not None:
        paths = [render_path(p) for p in dict.fromkeys(found.paths)]
        said = new_meta.get(RESULT_META_KEY, {})
        new_meta[RESULT_META_KEY] = {**said, "text_cleaned": paths, "flags": list(found.flags)}
        conn.emit(
            "result_text_cleaned",
            tool,
            "hidden_characters_removed",
            "cleaned",
            path=found.paths[0],
            message=f"hidden characters removed from {len(paths)} string(s) of the result",
            details={
                "paths": paths[:MAX_LISTED_PATHS],
                "count": len(paths),
                "flags": list(found.flags),
                "request_id": str(request_id)[:64],
            },
        )
    if new_meta or "_meta" in handed:
        new["_meta"] = new_meta
    return Verdict("replace", result_response(request_id, new))


def clean_call_error(conn: Any, message: dict[str, Any], tool: str | None) -> Verdict:
    """Apply policy `result_text` to a JSON-RPC error answering a `tools/call`: its `message`
    and every string of its `data` reach the caller (and, through frameworks that turn an
    `MCPError` into the tool's answer, the model).

    Returns:
        A pass verdict when nothing is hidden (or the policy is `"pass"`); else a replacing
        one with the strings cleaned (event `result_text_cleaned`).
    """
    error = message.get("error")
    if conn.shared.policy.result_text == "pass" or type(error) is not dict:
        return Verdict("pass")
    found = clean_result_text({"_meta": error})  # every string of the error, as `_meta`
    if not found.changed:
        return Verdict("pass")
    paths = [render_path(p[1:]) for p in dict.fromkeys(found.paths)]
    conn.emit(
        "result_text_cleaned",
        tool,
        "hidden_characters_removed",
        "cleaned",
        path=found.paths[0][1:],
        message=f"hidden characters removed from {len(paths)} string(s) of the error",
        details={
            "paths": paths[:MAX_LISTED_PATHS],
            "count": len(paths),
            "flags": list(found.flags),
        },
    )
    return Verdict("replace", {**message, "error": found.value["_meta"]})


def clean_read_result(conn: Any, request_id: Any, result: Any, method: str) -> Verdict:
    """Apply policy `result_text` to the answer of a `tasks/result`, `prompts/get` or
    `resources/read`: every string is cleaned as a tool result's is (a task's result is a
    `CallToolResult`; the others are read whole, as `_meta`).

    Returns:
        A pass verdict when nothing is hidden (or the policy is `"pass"`); else a replacing one
        (event `result_text_cleaned`, `details["method"]`).
    """
    if conn.shared.policy.result_text == "pass" or type(result) is not dict:
        return Verdict("pass")
    whole = method == "tasks/result"
    found = clean_result_text(result if whole else {"_meta": result})
    if not found.changed:
        return Verdict("pass")
    paths = [render_path(p if whole else p[1:]) for p in dict.fromkeys(found.paths)]
    conn.emit(
        "result_text_cleaned",
        None,
        "hidden_characters_removed",
        "cleaned",
        message=f"hidden characters removed from {len(paths)} string(s) of a {method} answer",
        details={
            "paths": paths[:MAX_LISTED_PATHS],
            "count": len(paths),
            "flags": list(found.flags),
            "method": method,
        },
    )
    value = found.value if whole else found.value["_meta"]
    return Verdict("replace", result_response(request_id, value))
