"""`tools/list` pages: intake, pins, policy outcomes, what the SDK sees of each tool.

Not a public module. No SDK import.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

import orjson

from ..client import (
    Error,
    Intake,
    Tool,
    intake,
)
from ..client._cache import MISSING
from ..pins import FieldChange
from . import _checks
from ._base import (
    _LIST,
    DROP,
    PASS,
    EngineBase,
    Verdict,
    _bind,
    _cause,
    _replace,
)
from ._events import GuardEvent, logger
from ._jsonrpc import (
    INVALID_RESULT_CODE,
    error_response,
    result_response,
)
from ._modeltext import screen_lookalikes, screen_page_text
from ._policy import OUTCOMES
from ._sdkcheck import sdk_refusals
from ._sdkschema import unsafe_output_schema
from ._state import (
    Pending,
    ToolState,
)


class Listing(EngineBase):
    """The decisions on each `tools/list` page of one connection."""

    def _withhold_page(self, request_id: Any, result: Any, exc: BaseException) -> Verdict:
        """Fail closed on a tools/list page the guard could not finish checking (the pin store
        failed or did not answer in time, or a bug): the SDK receives the page without any
        of its tools, and every tool it names is blocked (calls refused with the cause's
        reason) until a listing the guard can check, which restores them with no action."""
        store = isinstance(exc, _checks.StoreUnavailable)
        reason = "pin_store_unavailable" if store else "guard_internal_error"
        if not store:
            logger.exception("guard failed on a tools/list page; its tools are withheld")
        names: list[str] = []
        try:
            tools = result.get("tools") if isinstance(result, dict) else None
            for raw in tools if isinstance(tools, list) else ():
                name = raw.get("name") if isinstance(raw, dict) else None
                if isinstance(name, str):
                    self.shared.book.tools[name] = ToolState("blocked", None, reason)
                    names.append(name)
        except Exception:  # never into the SDK's receive loop
            logger.exception("guard failed to block the tools of an unchecked page")
        self.listing = None  # an unchecked page says nothing about which tools are gone
        self.notice.saw(names)  # the client listed them (withheld): it is told when they return
        recheck = self.shared.recheck
        if store and recheck is not None:
            recheck.outage(self)  # listed again by the guard itself once the store answers
        origin = exc.__cause__ if store and exc.__cause__ is not None else exc
        details = _cause(origin)
        if not details["cause"]:  # e.g. a timeout, which has no text of its own
            details["cause"] = _cause(exc)["cause"]
        if store:
            details["store"] = repr(self.shared.pins)[:200]
        self.emit(
            "unchecked",
            None,
            reason,
            "withheld",
            path=("tools",),
            message=(
                f"tools/list page not checked ({details['error']}): its {len(names)} tool(s) "
                "withheld from the SDK and their calls refused until a listing the guard "
                "can check"
            ),
            details={**details, "tools": len(names)},
        )
        if isinstance(result, dict):
            return _replace(result_response(request_id, {**result, "tools": []}))
        return _replace(
            error_response(
                request_id,
                INVALID_RESULT_CODE,
                "conduit-mcp guard could not check the server's tools/list result",
                reason=reason,
                tool=None,
                path=(),
            )
        )

    # -- the guard's own listing, after a pin store outage (`_recheck`) ---------------------

    def relist_soon(self) -> bool:
        """List the server's tools on this connection, by the guard itself, answered to nobody
        (called from any thread, once the pin store answers again after an outage): the
        listing restores the tools the store now checks, and each client that saw them
        withheld is told (`notifications/tools/list_changed`). `False` when the seam gave no
        way to write to the server (`send_requests_to`)."""
        requests = self._requests
        if requests is None:
            return False
        spawn, send = requests
        try:
            spawn(lambda: self._relist(send, None, 1))
        except RuntimeError:  # the connection's loop is closed: nobody is listening
            return False
        return True

    async def _relist(
        self, send: Callable[[dict[str, Any]], Awaitable[None]], cursor: Any, page: int
    ) -> None:
        """Write page `page` of the guard's own listing (`cursor`: the server's, from the
        page before); on the connection's event loop."""
        with self.shared.book.feed_lock:
            if page == 1 and (self.listing is not None or self.known_version() is None):
                return  # a listing is under way (it checks the store), or nothing can be read
            request_id = f"conduit-mcp-guard-list-{next(_OWN_IDS)}"
            pending = Pending(_LIST, cursor=cursor is not None)
            pending.own = page
            if self.outstanding.add(request_id, pending) is not None:
                return  # the connection is full: its client's next listing restores the tools
            if cursor is None:
                self.listing = set()
            params: dict[str, Any] = {}
            envelope = self._envelope
            if envelope is not None:  # 2026-07-28: each request carries its envelope
                params["_meta"] = {k: v for k, v in envelope.items() if k.startswith(_ENVELOPE)}
            if cursor is not None:
                params["cursor"] = cursor
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": _LIST}
        if params:
            request["params"] = params
        try:
            await send(request)
        except Exception:
            with self.shared.book.feed_lock:
                self.outstanding.cancel(request_id)
                if cursor is None and self.listing == set():
                    self.listing = None
            raise

    def _own_answer(
        self, request_id: Any, message: dict[str, Any], pending: Pending
    ) -> Verdict | Coroutine[Any, Any, Verdict]:
        """The server's answer to a page of the guard's own listing: checked like a client's
        page, then dropped (nobody asked); the next page is asked for, and the clients that saw
        a tool withheld are told once it is back."""
        result = message.get("result")
        if "error" in message or not isinstance(result, dict):
            if not pending.cursor:
                self.listing = None
            return DROP
        tools = result.get("tools")
        book = self.shared.book.tools
        withheld = [
            name
            for name in _names(tools)
            if (state := book.get(name)) is not None and state.reason == "pin_store_unavailable"
        ]
        return self._own_page_later(request_id, result, pending, withheld)

    async def _own_page_later(
        self, request_id: Any, result: dict[str, Any], pending: Pending, withheld: list[str]
    ) -> Verdict:
        try:
            await self._on_list(request_id, result, pending)
        except Exception as exc:  # withheld again (the store failed again: probed again)
            self._withhold_page(request_id, result, exc)
            return DROP
        shared = self.shared
        tools = shared.book.tools
        restored = [n for n in withheld if (s := tools.get(n)) is not None and s.status == "ok"]
        for name in restored:
            shared.notices.changed(name)  # each client that listed it withheld is told
        cursor = result.get("nextCursor")
        requests = self._requests
        more = isinstance(cursor, str) and pending.own < _OWN_PAGES and requests is not None
        if more and requests is not None:
            spawn, send = requests
            spawn(_bind(self._relist, send, cursor, pending.own + 1))
        self.emit(
            "tools_rechecked",
            None,
            "pin_store_available",
            "rechecked",
            path=("tools",),
            message=(
                f"the pin store answers again: the guard listed the tools itself (page "
                f"{pending.own}), {len(restored)} withheld tool(s) restored"
            ),
            details={
                "page": pending.own,
                "tools": len(_names(result.get("tools"))),
                "restored": restored[:32],
                "restored_count": len(restored),
            },
        )
        return DROP

    async def _on_list(self, request_id: Any, result: Any, pending: Pending) -> Verdict:
        shared = self.shared
        book = shared.book
        version = self.known_version()
        if version is None:
            self.emit(
                "list_unreadable",
                None,
                "unknown_protocol_version",
                "passed",
                message="tools/list not checked: protocol version unknown",
                details={"version": str(self.version)[:64]},
            )
            return PASS
        try:
            page, positions = self._intake(result, version)
        except Error as exc:  # not a tools/list result: the SDK's model would raise on it
            self.emit(
                "list_unreadable",
                None,
                exc.reason,
                "answered_error",
                path=exc.path,
                message=exc.message,
            )
            return _replace(
                error_response(
                    request_id,
                    INVALID_RESULT_CODE,
                    f"conduit-mcp guard: the server's tools/list result is invalid: {exc.message}",
                    reason=exc.reason,
                    tool=None,
                    path=exc.path,
                )
            )
        raw_tools: list[Any] = result["tools"]
        removed: set[int] = set()
        rejected_names: set[str] = set()
        started = self.listing is not None  # this page belongs to a listing begun without a cursor
        listing = self.listing if self.listing is not None else set()
        rejections: list[tuple[int, GuardEvent]] = []
        hidden: set[int] = set()  # indexes of tools listed without their outputSchema
        for rejection in page.rejected:
            removed.add(rejection.index)
            rejections.append(
                (
                    rejection.index,
                    self._event(
                        "tool_rejected",
                        rejection.name,
                        rejection.reason,
                        "removed",
                        path=rejection.path,
                        message=rejection.message,
                    ),
                )
            )
            if rejection.name is not None:
                rejected_names.add(rejection.name)

        # Accepted tools, with their index in the page (intake keeps server order).
        accepted: list[tuple[int, Tool]] = []
        for index, tool in zip(positions, page.tools, strict=True):
            if tool.name in listing:  # named on an earlier page of this listing
                removed.add(index)
                rejections.append(
                    (
                        index,
                        self._event(
                            "tool_rejected",
                            tool.name,
                            "duplicate_tool_name",
                            "removed",
                            path=("tools", index, "name"),
                            message=(
                                "an earlier page of this listing has the same name; "
                                "the first wins"
                            ),
                        ),
                    )
                )
                continue
            accepted.append((index, tool))

        # Tools the SDK's own model would refuse (they would sink the whole page there).
        refusals = sdk_refusals([tool for _, tool in accepted], version)
        if refusals:
            kept: list[tuple[int, Tool]] = []
            for local, (index, tool) in enumerate(accepted):
                if local in refusals:
                    removed.add(index)
                    rejected_names.add(tool.name)
                    rejections.append(
                        (
                            index,
                            self._event(
                                "tool_rejected",
                                tool.name,
                                "sdk_rejects_tool",
                                "removed",
                                path=("tools", index, *refusals[local]),
                                message=(
                                    "the MCP SDK's model for this protocol version refuses "
                                    "this tool"
                                ),
                            ),
                        )
                    )
                else:
                    kept.append((index, tool))
            accepted = kept

        # What the model reads: hidden characters cleaned (or the tool removed).
        accepted, rewritten = screen_page_text(
            self, page, accepted, removed, rejected_names, rejections
        )

        # Rejections in page order, whichever check found them.
        rejections.sort(key=lambda pair: pair[0])
        for _, event in rejections:
            shared.sink.emit(event)

        policy = shared.policy
        # A new name that looks like a known one is a change of that tool, never a new one.
        accepted = await screen_lookalikes(self, accepted, listing, removed, hidden)
        # The private store keeps at most `max_tools` names: past it new names are held.
        accepted, limited = self._within_limit(accepted, listing, removed)
        since = _checks.feed_mark(book)
        verdicts = await self._pin_verdicts([t for _, t in accepted])
        names: list[str] = []
        for (index, tool), verdict in zip(accepted, verdicts, strict=True):
            name = tool.name
            names.append(name)
            listing.add(name)
            previous = book.tools.get(name)
            status = verdict.status
            if status == "revoked":  # new="pin", but someone revoked this tool's pin
                self.emit(
                    "tool_new",
                    name,
                    "pin_revoked",
                    "blocked",
                    path=("tools", index),
                    message="the tool's pin was revoked in the store: not pinned again (blocked)",
                )
                removed.add(index)
                _set_state(book.tools, name, "blocked", tool, "revoked")
                continue
            if status == "rejected":  # a person rejected this definition in the store
                self.emit(
                    "tool_changed" if verdict.changes else "tool_new",
                    name,
                    "tool_rejected",
                    "blocked",
                    path=("tools", index),
                    message="a person rejected this definition in the pin store (blocked)",
                )
                removed.add(index)
                _set_state(book.tools, name, "blocked", tool, "rejected")
                continue
            if status == "new":
                outcome = OUTCOMES[("new", policy.new)]
                self.emit(
                    "tool_new",
                    name,
                    "new_tool",
                    outcome.decision,
                    path=("tools", index),
                    message=f"a tool never pinned for this server ({_said(outcome)})",
                    details=_awaiting(outcome, tool),
                )
            elif status == "changed":
                outcome = OUTCOMES[("changed", policy.changed)]
                old_raw = previous.tool.raw if previous and previous.tool else None
                changes = _excerpts(verdict.changes) or (
                    _checks.top_level_changes(old_raw, tool.raw) if old_raw is not None else ()
                )
                self.emit(
                    "tool_changed",
                    name,
                    "tool_definition_changed",
                    outcome.decision,
                    path=("tools", index),
                    changes=changes,
                    message=f"the definition differs from its pin ({_said(outcome)})",
                    details=_awaiting(outcome, tool),
                )
            else:
                outcome = _APPROVED_OUTCOME
                if status == "cosmetic":  # not material, and accepted beside the pin
                    self.emit(
                        "tool_changed",
                        name,
                        "cosmetic_change",
                        "pinned",
                        path=("tools", index),
                        changes=_excerpts(verdict.changes),
                        message=(
                            "the definition differs from its pin only cosmetically (accepted "
                            "beside the pin; the approved definition stays)"
                        ),
                    )
            _set_state(book.tools, name, outcome.status, tool, outcome.reason)
            if not outcome.listed:
                removed.add(index)
                continue
            if tool.raw.get("outputSchema") is not None:  # nothing to hide without one
                self._hide_output_schema(index, tool, hidden)

        # Approvals and revocations the feed delivered while the store was read win over
        # the verdicts read before them.
        _checks.reapply_pin_changes(book, since, names)
        tools = book.tools
        for (index, _), name in zip(accepted, names, strict=True):
            state = tools.get(name)  # a tool the feed blocked meanwhile is not listed either
            if state is not None and state.status != "ok":
                removed.add(index)

        for name in rejected_names:
            if name not in listing:
                book.tools[name] = ToolState("rejected", None, "rejected")
                listing.add(name)

        self.notice.saw([tool.name for _, tool in accepted])  # whose changes this client sees
        self.notice.saw(limited)
        if page.next_cursor is None:
            self._finish_listing(listing, complete=started)

        icons = self._unsafe_icons(page, raw_tools, removed)
        if not removed and not hidden and not icons and not rewritten:
            return PASS
        kept_raw = [
            _sdk_copy(rewritten.get(index, raw), index in hidden, icons.get(index))
            for index, raw in enumerate(raw_tools)
            if index not in removed
        ]
        return _replace(result_response(request_id, {**result, "tools": kept_raw}))

    def _within_limit(
        self, accepted: list[tuple[int, Tool]], listing: set[str], removed: set[int]
    ) -> tuple[list[tuple[int, Tool]], list[str]]:
        """Policy `max_tools`, with the guard's private store: the tools that go on to the pin
        check, and the names held instead. A name the store has been asked about before goes
        on; a new one goes on while fewer than `max_tools` names were; past that it is held
        (event `tool_new`, reason `too_many_tools`; released by `Guard.approve`) and the
        store never sees it, so what the guard keeps for a server is bounded, whatever it
        lists (a caller's store is the operator's to bound)."""
        shared = self.shared
        if not shared.owns_pins:
            return accepted, []
        book = shared.book
        checked = book.checked
        limit = shared.policy.max_tools
        kept: list[tuple[int, Tool]] = []
        held: list[str] = []
        for index, tool in accepted:
            name = tool.name
            if name in checked:
                kept.append((index, tool))
                continue
            if len(checked) < limit:
                checked.add(name)
                kept.append((index, tool))
                continue
            held.append(name)
            listing.add(name)
            removed.add(index)
            _set_state(book.tools, name, "held", tool, "limit")
            self.emit(
                "tool_new",
                name,
                "too_many_tools",
                "held",
                path=("tools", index),
                message=(
                    f"a tool never pinned for this server, past the {limit:,} tool names the "
                    "guard's private store keeps for it (max_tools): held, not listed to the "
                    "model and not callable until Guard.approve"
                ),
                details={
                    "limit": limit,
                    "awaiting_approval": True,
                    "fingerprint": tool.fingerprint,
                },
            )
        return kept, held

    def _unsafe_icons(
        self, page: Intake, raw_tools: list[Any], removed: set[int]
    ) -> dict[int, set[int]]:
        """Tool index -> indexes of its icons whose `src` intake found unsafe
        (`icon_unsafe_uri`): left out of what the SDK sees, one event per icon of a listed
        tool. Spec 2026-07-28 basic/index "Icons": clients MUST reject unsafe icon URIs."""
        drops: dict[int, set[int]] = {}
        for warning in page.warnings:
            if warning.code != "icon_unsafe_uri" or len(warning.path) < 4:
                continue
            index, icon = warning.path[1], warning.path[3]
            if not isinstance(index, int) or not isinstance(icon, int) or index in removed:
                continue
            drops.setdefault(index, set()).add(icon)
            raw = raw_tools[index] if index < len(raw_tools) else None
            name = raw.get("name") if isinstance(raw, dict) else None
            self.emit(
                "icon_removed",
                name if isinstance(name, str) else None,
                "icon_unsafe_uri",
                "hidden",
                path=warning.path,
                message="an icon whose src is not an https/http URL or a data:image URI: "
                "left out of what the SDK sees",
                details=dict(warning.details),
            )
        return drops

    def _hide_output_schema(self, index: int, tool: Tool, hidden: set[int]) -> None:
        """Policy `sdk_output_schema`: mark a listed tool whose outputSchema the SDK's own
        output check must not see: every one under `invalid_output` "flag"/"pass" (the SDK
        would raise on the result the guard lets through), else one it cannot run safely;
        one event per tool definition."""
        policy = self.shared.policy
        if not self._structured:
            self._hide_pre_output_schema(index, tool, hidden)
            return
        if policy.sdk_output_schema != "hide_unsafe":
            return
        if policy.invalid_output != "withhold":
            if tool.raw.get("outputSchema") is None:
                return
            hidden.add(index)
            if not self._first_hide(tool):
                return
            self.emit(
                "output_schema_hidden",
                tool.name,
                "sdk_output_recheck",
                "hidden",
                path=("tools", index, "outputSchema"),
                message=(
                    f"outputSchema left out of the SDK's listing: under invalid_output="
                    f"{policy.invalid_output!r} the SDK's own output check would raise on a "
                    "result the guard lets through"
                ),
                details={"invalid_output": policy.invalid_output},
            )
            return
        unsafe = unsafe_output_schema(tool)
        if unsafe is None:
            return
        hidden.add(index)
        if not self._first_hide(tool):
            return  # already reported for this definition
        self.emit(
            "output_schema_hidden",
            tool.name,
            "sdk_unsafe_output_schema",
            "hidden",
            path=("tools", index, "outputSchema", *unsafe.path),
            message=(
                f"outputSchema left out of the SDK's listing: its `{unsafe.keyword}` is unsafe "
                "for the SDK's own output check (Python jsonschema); the guard validates this "
                "tool's output itself"
            ),
            details={"keyword": unsafe.keyword},
        )

    def _first_hide(self, tool: Tool) -> bool:
        """Whether this definition's outputSchema is hidden for the first time (one event)."""
        hidden = self.shared.book.hidden
        if hidden.get(tool.name, MISSING) == tool.fingerprint:
            return False
        hidden[tool.name] = tool.fingerprint
        return True

    def _hide_pre_output_schema(self, index: int, tool: Tool, hidden: set[int]) -> None:
        """Before 2025-06-18 a tool has no outputSchema (spec 2025-03-26 schema `Tool`), and
        the guard checks no output there; mcp 2.3.0 still validates structuredContent against
        any outputSchema it was listed (`ClientSession._validate_tool_result`, on every
        version), where a hostile schema hangs or raises. So the SDK never sees one, whatever
        the policy; one event per tool definition."""
        if tool.raw.get("outputSchema") is None:
            return
        hidden.add(index)
        if not self._first_hide(tool):
            return
        self.emit(
            "output_schema_hidden",
            tool.name,
            "output_schema_not_in_version",
            "hidden",
            path=("tools", index, "outputSchema"),
            message=(
                f"outputSchema left out of the SDK's listing: protocol version {self.version} "
                "has no outputSchema (it begins at 2025-06-18), so neither the guard nor the "
                "SDK validates this tool's output"
            ),
            details={"version": str(self.version)[:64]},
        )

    def _intake(self, result: Any, version: str) -> tuple[Intake, list[int]]:
        """`intake` of a page, and each accepted tool's index in it; a page that is exactly the
        JSON of one seen lately on this connection reuses that page's intake.

        Clients list the same tools again and again, and intake's per-tool fingerprint (RFC
        8785 bytes + SHA-256) is most of a page's cost. A hit has the cached page's orjson
        bytes (which tell `1`, `1.0` and `true` apart) and, when they hold a `null`, Python
        equality with the cached page as well (orjson writes NaN and infinities as `null`;
        `==` tells them from `null`): a hit is the same JSON value, so intake's answer is the
        same (`PageCache.get`).

        Raises:
            Error: as `intake` (never cached).
        """
        try:
            data: bytes | None = orjson.dumps(result)
        except (TypeError, orjson.JSONEncodeError):  # beyond orjson (huge ints, deep nesting)
            data = None
        if data is not None:
            hit = self._pages.get(version, data, result)
            if hit is not None:
                return hit
        shared = self.shared
        page = intake(
            shared.server_id,
            result,
            transport=self.transport,
            protocol_version=version,
            trusted=shared.trusted,
        )
        by_identity = {id(raw): index for index, raw in enumerate(result["tools"])}
        positions = [by_identity[id(tool.raw)] for tool in page.tools]
        if data is not None:
            # A reference to the server's page: the guard never mutates it, and its accepted
            # tools are kept anyway (the tool states hold their raw definitions).
            self._pages.put(version, data, result, page, positions)
        return page, positions

    async def _pin_verdicts(self, tools: list[Tool]) -> list[_checks.PinVerdict]:
        """The pin verdict of each tool: from the store, in one worker-thread hop.

        With the guard's private store nobody else writes the pins, so a tool the guard
        already holds as `ok` under the same fingerprint is `approved` without asking it.
        """
        shared = self.shared
        book = shared.book
        verdicts: list[_checks.PinVerdict | None] = [None] * len(tools)
        ask: list[int] = []
        owns, pinned = shared.owns_pins, book.pinned
        for i, tool in enumerate(tools):
            if owns and pinned.get(tool.name) == tool.fingerprint:
                verdicts[i] = _APPROVED
            else:
                ask.append(i)
        if ask:
            policy = shared.policy
            check = _bind(
                _checks.pin_page,
                shared.pins,
                shared.server_id,
                [tools[i] for i in ask],
                pin_new=policy.new == "pin",
                pin_changed=policy.changed == "allow",
                accept_cosmetic=policy.cosmetic == "accept",
                protocol_version=self.known_version(),
                revoked=frozenset(book.revoked),
                # The private store: pending rows nobody reads would keep every held or blocked
                # definition (and its changes) once more; a held tool's row says what waits.
                queue=not shared.owns_pins or "hold" in (policy.new, policy.changed),
            )
            try:
                answers = await _checks.page_check(check)
            except _checks.Timeout as exc:
                raise _checks.StoreUnavailable(
                    f"the pin store did not answer within {_checks.PAGE_TIMEOUT} s"
                ) from exc
            except Exception as exc:
                if _checks.is_store_error(exc):
                    raise _checks.StoreUnavailable(str(exc)) from exc
                raise
            for i, answer in zip(ask, answers, strict=True):
                verdicts[i] = answer
                if answer.status == "revoked":
                    book.revoked.add(tools[i].name)
                if answer.status == "approved" or answer.pinned:
                    book.pinned[tools[i].name] = tools[i].fingerprint
        return [v if v is not None else _APPROVED for v in verdicts]

    def _finish_listing(self, listing: set[str], *, complete: bool) -> None:
        self.listing = None
        if not complete:
            return
        book = self.shared.book
        book.forget(listing)
        tools = book.tools
        if tools.keys() <= listing:
            return  # nothing listed before is missing now
        for name in [n for n in tools if n not in listing]:
            state = tools.pop(name)
            if state.status != "rejected":
                self.emit(
                    "tool_removed",
                    name,
                    "tool_not_listed",
                    "removed",
                    message="listed before, missing from this complete listing",
                )


_APPROVED: Final = _checks.PinVerdict("approved", False)
#: Ids of the guard's own listings (`conduit-mcp-guard-list-N`), unique in the process.
_OWN_IDS: Final = itertools.count(1)
#: Pages the guard's own listing follows at most (as the proxy's own listing).
_OWN_PAGES: Final = 64
#: `_meta` keys of the 2026-07-28 request envelope a request of the guard's own repeats.
_ENVELOPE: Final = "io.modelcontextprotocol/"


def _names(tools: Any) -> list[str]:
    """The string names of a page's tools (anything else skipped)."""
    if not isinstance(tools, list):
        return []
    return [
        raw["name"] for raw in tools if isinstance(raw, dict) and isinstance(raw.get("name"), str)
    ]


_APPROVED_OUTCOME: Final = OUTCOMES[("approved", "")]


EXCERPT_CHARS: Final = 200


def _excerpts(changes: tuple[Any, ...]) -> tuple[Any, ...]:
    """The pin store's field changes with each `old` / `new` value cut to an excerpt: an
    event keeps the path and what a person needs to see, never two whole definitions (a
    20 MB description rewritten ten times must not stay in memory twenty times)."""
    return tuple(
        (
            dataclasses.replace(change, old=_excerpt(change.old), new=_excerpt(change.new))
            if isinstance(change, FieldChange)
            else change
        )
        for change in changes
    )


def _excerpt(value: Any) -> Any:
    """`value` when its JSON is short; else the first `EXCERPT_CHARS` characters of its JSON
    text (a string, for containers too) followed by "…"."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if len(value) <= EXCERPT_CHARS else value[:EXCERPT_CHARS] + "…"
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return f"<{type(value).__name__}>"
    return value if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def _said(outcome: Any) -> str:
    """The decision in an event's message; a held tool says how it is released."""
    if outcome.status == "held":
        return (
            "held: not listed to the model and not callable until approved with "
            "Guard.approve or conduit-mcp pins approve on its store"
        )
    return str(outcome.decision)


def _awaiting(outcome: Any, tool: Tool) -> dict[str, Any]:
    """An event's details for a tool that waits for approval: which definition waits."""
    if outcome.status != "held":
        return {}
    return {"awaiting_approval": True, "fingerprint": tool.fingerprint}


def _sdk_copy(raw: Any, hide_output: bool, drop_icons: set[int] | None) -> Any:
    """The tool definition the SDK sees: `raw` itself, or a shallow copy without
    `outputSchema` and/or without the icons at `drop_icons` (the server's dict is left as
    is)."""
    if not hide_output and not drop_icons:
        return raw
    copy = {key: value for key, value in raw.items() if not (hide_output and key == "outputSchema")}
    if drop_icons:
        icons = raw.get("icons")
        if isinstance(icons, list):
            copy["icons"] = [icon for i, icon in enumerate(icons) if i not in drop_icons]
    return copy


def _set_state(
    tools: dict[str, ToolState], name: str, status: str, tool: Tool, reason: str
) -> None:
    """Record a listed tool's state; an unchanged one (same status, same definition) keeps its
    state object, so its per-tool memos and the validators compiled for its schema objects
    stay warm across listings."""
    old = tools.get(name)
    if (
        old is not None
        and old.status == status
        and old.reason == reason
        and old.tool is not None
        and tool.fingerprint is not None
        and old.tool.fingerprint == tool.fingerprint
    ):
        return
    tools[name] = ToolState(status, tool, reason)  # type: ignore[arg-type]
