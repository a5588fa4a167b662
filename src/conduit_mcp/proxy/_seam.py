"""The proxy's one coupling to the guard: build a `Guard`, wrap an upstream pair, explain refusals.

Not a public module. Everything the proxy knows of `conduit_mcp.guard` and of the pin store is
here, through their public names only, so the rest of the package never changes when the guard
engine does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
import shlex
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import anyio

from .._program import APPROVER_PLACEHOLDER, program_name
from ..client import Error, fingerprint
from ..guard import Guard, GuardEvent
from ..pins import PinStore, redacted_location
from ._settings import GuardSettings

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

# The SDK's message types are imported where its streams are handled (`wrap`, the taps, the
# explained refusals), not at the top: the stdio relay to a child server (`MessageLink`) never
# meets them, and `import mcp` loads the SDK's client and server whole, most of the proxy's
# start-up time otherwise.

logger = logging.getLogger("conduit_mcp.proxy")

#: `data.source` of the guard's error responses (`conduit_mcp.guard` module docs).
_GUARD_SOURCE: Final = "conduit-mcp.guard"
#: tools/list requests remembered while their response is outstanding.
_MAX_LISTS: Final = 256
#: ids of requests handed to the guard, neither written nor answered yet, remembered at most
#: (`_Link.asked`: a connection's calls being gated; the guard's own table holds 4,096).
_MAX_ASKED: Final = 4096
_LIST: Final = "tools/list"
_CALL: Final = "tools/call"
#: Seconds `before_call` waits for each page of its own listing.
PRELIST_TIMEOUT: Final = 10.0
#: Pages `before_call` follows at most.
_PRELIST_PAGES: Final = 64
#: Seconds `before_call`'s whole listing may take (all its pages): past it the call is refused
#: as a call of a tool never listed, with this cause, and the client's messages flow again.
PRELIST_DEADLINE: Final = 30.0


def _past_deadline() -> str:
    """Why a call's own listing stopped at `PRELIST_DEADLINE` (read when called)."""
    return (
        "the proxy's own listing of the server's tools did not finish within "
        f"{PRELIST_DEADLINE:g} s"
    )


def redacted(location: str) -> str:
    """A pin store location fit to print (a URL's password as `***`)."""
    return redacted_location(location)


class GuardSeam:
    """One guard for the proxy's life, and the glue around it.

    Args:
        settings: a `GuardSettings`.
        on_event: called with each `GuardEvent` (the guard also logs each one to the stdlib
            logger `conduit_mcp.guard`).
        on_exchange: called with `(method, seconds)` when the server answers a request the
            guard let through (the upstream round trip).

    Raises:
        TypeError, ValueError: as `Guard` for a bad server id or policy value.
        FileNotFoundError, sqlite3.Error, psycopg.Error: the pin store cannot be opened.
    """

    def __init__(
        self,
        settings: GuardSettings,
        on_event: Callable[[GuardEvent], object] | None = None,
        on_exchange: Callable[[str, float], object] | None = None,
    ) -> None:
        self.settings = settings
        self._on_exchange = on_exchange
        self._store = PinStore(settings.pins) if settings.pins is not None else None
        try:
            self.guard = Guard(
                settings.server_id, pins=self._store, on_event=on_event, **settings.policy
            )
        except BaseException:
            if self._store is not None:
                self._store.close()
            raise
        #: tool name -> the raw definition last listed by the server (before the guard), for
        #: the tools the guard knows and the page being read (`_note_result` prunes the rest).
        self._raw: dict[str, Any] = {}
        #: the held tools the last held-tools line named (`report_held`): a re-listing that
        #: holds the same ones logs nothing again.
        self._held_logged: frozenset[str] = frozenset()
        self._version: str | None = None
        self._transport = "stdio"
        #: tools whose call `_prelist` could not list in time, by name: why (oldest out)
        self._prelist_failed: OrderedDict[str, str] = OrderedDict()

    def close(self) -> None:
        """Close the guard and the pin store it opened. Idempotent."""
        self.guard.close()
        if self._store is not None:
            self._store.close()

    def wrap(
        self, read: Any, write: Any, *, transport: Literal["stdio", "streamable-http"]
    ) -> tuple[Any, Any]:
        """The guarded pair over an upstream pair of `SessionMessage` streams.

        Args:
            read: receive stream of `SessionMessage | Exception` from the server.
            write: send stream of `SessionMessage` to the server.
            transport: `"stdio"` or `"streamable-http"` (the upstream's).

        Returns:
            `(read, write)` with the guard's decisions applied; the read side also feeds
            `explain` with the raw listings the server sent, and hands on each error response
            the server wrote (passed on by the guard, perhaps cleaned) as a `ServerError`
            item (`server_wrote`), whatever its `data.source` says, and each error the guard
            wrote to a request it never wrote to the server as an `Unsent` item
            (`never_written`); the guard's error to a request it did write (a result it
            withheld) is neither.
        """
        self._transport = transport
        # Per connection: request ids are the connection's own (two sessions may both use 1).
        link = _Link()
        guarded_read, guarded_write = self.guard.wrap_streams(
            _Tap(read, self, link), _Watch(write, self, link), transport=transport
        )
        return _Told(guarded_read, self, link), _Asking(guarded_write, link)

    @property
    def protocol_version(self) -> str | None:
        """The version the server's `initialize` response chose (`None` before it)."""
        return self._version

    def raw_tool(self, name: str) -> Any:
        """The definition the server last listed under `name`, as sent (or `None`)."""
        return self._raw.get(name)

    def tool_names(self) -> list[str]:
        """The names of the tools the server last listed (any thread)."""
        return list(self._raw)

    async def before_call(self, message: Any, guarded_write: Any) -> None:
        """Before a `tools/call` naming a tool the guard has never seen: the proxy lists the
        tools itself (every page), through the guard, answered to nobody, so the call is gated
        against the server's listing instead of refused as unknown. A client may call without
        listing in this connection: it cached an earlier listing (2026-07-28 results carry a
        time to live), or another session of the listener listed. Waits at most
        `PRELIST_TIMEOUT` seconds per page and `PRELIST_DEADLINE` seconds in all; a server
        that does not answer in time leaves the call to be refused, the refusal saying why.

        Args:
            message: the client's message (anything but a tools/call returns at once).
            guarded_write: the guarded send stream the call will go through (the write side
                `wrap` returned: the listing's answers are its connection's, kept from its
                client, never another connection's).
        """
        request_type = _jsonrpc().JSONRPCRequest
        if not isinstance(message, request_type) or message.method != "tools/call":
            return

        async def send(request: dict[str, Any]) -> None:
            from mcp.shared.message import SessionMessage

            await guarded_write.send(SessionMessage(request_type.model_validate(request)))

        await self._prelist(message.params, send, guarded_write.link)

    async def _prelist(
        self, params: Any, send: Callable[[dict[str, Any]], Awaitable[None]], link: _Link
    ) -> None:
        """`before_call`'s listing for a tools/call with `params`; `send` writes one request
        through the guard to the server of the connection `link`."""
        if not self._must_prelist(params):
            return
        name = params["name"]
        self._prelist_failed.pop(name, None)
        cause = await self._list_pages(name, params.get("_meta"), send, link)
        if cause is not None and self.guard.tool_status(name) is None:
            self._prelist_failed[name] = cause  # `_hint` says why the call was refused
            if len(self._prelist_failed) > _MAX_LISTS:
                self._prelist_failed.popitem(last=False)

    async def _list_pages(
        self,
        name: str,
        meta: Any,
        send: Callable[[dict[str, Any]], Awaitable[None]],
        link: _Link,
    ) -> str | None:
        """The pages of `_prelist`, until `name` is listed or no page follows: `None`, or why
        the listing stopped short (a page not answered in time, or `PRELIST_DEADLINE`)."""
        deadline = anyio.current_time() + PRELIST_DEADLINE
        cursor: Any = None
        for _ in range(_PRELIST_PAGES):
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                return _past_deadline()
            # Unguessable: a client's request with the id of a listing of its connection
            # would be refused by the guard (the id in use), and that refusal, or the
            # listing's answer, taken for the other's.
            request_id = f"conduit-mcp-list-{secrets.token_hex(16)}"
            list_params: dict[str, Any] = {}
            if isinstance(meta, dict):  # 2026-07-28: each request carries its envelope
                list_params["_meta"] = {
                    k: v for k, v in meta.items() if k.startswith("io.modelcontextprotocol/")
                }
            if cursor is not None:
                list_params["cursor"] = cursor
            waiter = _Prelist()
            link.prelists[request_id] = waiter
            # No `params` at all when empty: `"params": null` is not a valid request.
            request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": _LIST}
            if list_params:
                request["params"] = list_params
            try:
                await send(request)
                with anyio.move_on_after(min(PRELIST_TIMEOUT, remaining)) as waited:
                    await waiter.done.wait()
            finally:
                if link.prelists.pop(request_id, None) is not None and not waiter.done.is_set():
                    link.abandoned[request_id] = None  # its answer may still come
                    if len(link.abandoned) > _MAX_LISTS:
                        link.abandoned.popitem(last=False)
            if waited.cancelled_caught:
                if PRELIST_TIMEOUT < remaining:
                    return (
                        "the server did not answer the proxy's own tools/list within "
                        f"{PRELIST_TIMEOUT:g} s"
                    )
                return _past_deadline()
            result = waiter.result
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if not isinstance(cursor, str) or self.guard.tool_status(name) is not None:
                return None
        return None

    def _must_prelist(self, params: Any) -> bool:
        """Whether a tools/call with `params` names a tool the guard never saw (a string
        name): `_prelist` lists the tools first."""
        name = params.get("name") if isinstance(params, dict) else None
        return isinstance(name, str) and self.guard.tool_status(name) is None

    def explain(self, item: SessionMessage) -> SessionMessage:
        """A guard refusal made actionable: the message of a `tool_held` refusal gains the exact
        `conduit-mcp pins approve` command line, that of a `tool_blocked` one (a changed or
        revoked tool, with a pin store) the commands to review and approve what the store's
        pending queue holds (without a store: how to get one); anything else is returned
        as is."""
        rpc = _jsonrpc()
        message = item.message
        if not isinstance(message, rpc.JSONRPCError):
            return item
        if server_wrote(item):
            return item  # the server's error, whatever source it names: not explained
        hint = self._hint(message.error.data)
        if hint is None:
            return item
        error = rpc.ErrorData(
            code=message.error.code,
            message=f"{message.error.message}; {hint}",
            data=message.error.data,
        )
        from mcp.shared.message import SessionMessage

        explained = SessionMessage(rpc.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
        # `never_written` reads the item's class: an explained refusal stays one.
        return _unsent(explained) if never_written(item) else explained

    def _explained(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """`explain` for a plain JSON-RPC message: the new error response, or `None`."""
        error = message.get("error")
        if not isinstance(error, dict):
            return None
        hint = self._hint(error.get("data"))
        if hint is None:
            return None
        return {**message, "error": {**error, "message": f"{error.get('message')}; {hint}"}}

    def _hint(self, data: Any) -> str | None:
        """What to run about a guard refusal with error `data` (`None`: nothing to add)."""
        if not isinstance(data, dict) or data.get("source") != _GUARD_SOURCE:
            return None
        reason, tool = data.get("reason"), data.get("tool")
        if not isinstance(tool, str):
            return None
        if reason == "unknown_tool" and tool in self._prelist_failed:
            return f"{self._prelist_failed.pop(tool)}: the call was not sent"
        if reason == "tool_held":
            return self.approve_hint(tool)
        if reason == "tool_blocked" and self.settings.pins not in (None, ":memory:"):
            return self.review_hint(tool)
        if reason == "tool_blocked":
            return (
                "the proxy keeps its pins in memory: to review and approve this tool, run it "
                f"with --pins FILE ({_program()} pins pending --store FILE then lists it)"
            )
        return None

    def report_held(self, names: list[str]) -> None:
        """After the guard decided on a listing of `names`: ONE warning on the proxy's log
        when it holds some (how many, and the `pins pending` line that lists them), none when
        it holds the same ones as the listing last reported. A desktop client shows its MCP
        server's stderr in its log: the line is the operator's clue to an empty tool list."""
        status = self.guard.tool_status
        held = frozenset(name for name in names if status(name) == "held")
        if held == self._held_logged:
            return
        self._held_logged = held
        if not held:
            return
        count = f"{len(held)} tool{'s' if len(held) != 1 else ''}"
        if self.settings.pins in (None, ":memory:"):
            where = "restart the proxy with --pins FILE to review and approve them"
        else:
            command = [program_name(), "pins", "pending", "--store"]
            command += [_store_for_hint(self.settings.pins), "--server-id", self.settings.server_id]
            where = f"review them with: {shlex.join(command)}"
        logger.warning("%s held for approval (not listed to the client): %s", count, where)

    def review_hint(self, tool: str) -> str:
        """What a person runs to review and approve a blocked `tool` from the pending queue.

        The approve line carries `--fingerprint` of the definition this proxy was refused for:
        a server that lists another definition later gets nothing approved by it. Without a
        definition seen here, `pins pending` prints the line (with its fingerprint)."""
        assert self.settings.pins is not None
        store = ["--store", _store_for_hint(self.settings.pins)]
        server = ["--server-id", self.settings.server_id]
        pending = shlex.join([program_name(), "pins", "pending", *store, *server])
        # A revoked tool is queued again only when it is next listed: until then the queue
        # is empty for it and `pins approve --tool` says "nothing pending".
        review = (
            f"review it with: {pending} (a revoked tool is queued there once the tools are "
            "listed again)"
        )
        definition = self._raw.get(tool)
        if definition is None:
            return f"{review}; it prints the command that approves the definition shown"
        approve = shlex.join(
            [
                *(program_name(), "pins", "approve", *store, *server),
                *("--tool", tool, "--fingerprint", _fingerprint_or_none(definition) or "-"),
                *("--approver", APPROVER_PLACEHOLDER),
            ]
        )
        return f"{review}; approve it with: {approve}"

    def approve_hint(self, tool: str) -> str:
        """What a person runs to approve the held `tool` (one sentence, no credentials).

        The approver is `WHO`, for the person who reviews to fill in (as in `review_hint` and
        `conduit-mcp pins pending`): the user the proxy runs as is rarely that person, and a
        name in the proxy's own environment would be recorded for whoever pastes the line.
        """
        if self.settings.pins is None:
            return (
                "the proxy keeps its pins in memory: restart it with --pins FILE (and approve "
                f"with {_program()} pins approve) or with --new pin"
            )
        definition = self._raw.get(tool)
        if definition is None:
            return f"list the tools again, then approve it with {_program()} pins approve"
        page = self._write_page(tool, definition)
        command = [
            program_name(),
            "pins",
            "approve",
            str(page),
            "--store",
            _store_for_hint(self.settings.pins),
            "--server-id",
            self.settings.server_id,
            "--tool",
            tool,
            "--transport",
            self._transport,
            "--fingerprint",
            _fingerprint_or_none(definition) or "-",
            "--approver",
            APPROVER_PLACEHOLDER,
        ]
        if self._version is not None:
            command[-4:-4] = ["--protocol-version", self._version]
        return f"approve it with: {shlex.join(command)} (then list the tools again)"

    def _write_page(self, tool: str, definition: Any) -> Path:
        base = self.settings.held_dir or Path.home() / ".local" / "state" / "conduit-mcp" / "held"
        base.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(
            f"{self.settings.server_id}\0{tool}".encode("utf-8", "surrogatepass")
        ).hexdigest()[:16]
        path = base / f"{digest}.json"
        # ASCII escapes: a hidden character in the held definition is visible to the person
        # who reviews the file (\u200b, \udb40\udc41), never silently invisible.
        path.write_text(json.dumps({"tools": [definition]}, ensure_ascii=True), "utf-8")
        return path

    # -- taps ------------------------------------------------------------------------------

    def _outbound(self, item: Any, link: _Link) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, _jsonrpc().JSONRPCRequest):
            self._note_request(message.method, message.id, link)

    def _note_request(self, method: Any, request_id: Any, link: _Link) -> None:
        if method == _LIST:
            link.lists[request_id] = None
            if len(link.lists) > _MAX_LISTS:
                link.lists.popitem(last=False)

    def _inbound(self, item: Any, link: _Link) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, _jsonrpc().JSONRPCResponse):
            self._note_result(message.id, message.result, link)

    def _note_result(self, request_id: Any, result: dict[str, Any], link: _Link) -> None:
        version = result.get("protocolVersion")
        if isinstance(version, str) and "serverInfo" in result:
            self._version = version
        if request_id in link.lists:
            del link.lists[request_id]
            tools = result.get("tools")
            if isinstance(tools, list):
                link.listed = (
                    request_id,
                    [
                        t["name"]
                        for t in tools
                        if isinstance(t, dict) and isinstance(t.get("name"), str)
                    ],
                )
                # Names the guard no longer knows (missing from a complete listing) go: the
                # table holds the guard's tools and one page, never every name ever listed.
                status = self.guard.tool_status
                for gone in [name for name in self._raw if status(name) is None]:
                    del self._raw[gone]
                for tool in tools:
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                        self._raw[tool["name"]] = tool

    def connect(
        self,
        write_server: Callable[[dict[str, Any]], Awaitable[None]],
        *,
        transport: Literal["stdio", "streamable-http"] = "stdio",
    ) -> MessageLink:
        """One connection over plain JSON-RPC messages (the stdio relay parses each line once
        and writes the bytes it read when the guard lets a message pass; the HTTP listener
        POSTs each stateless request itself).

        Args:
            write_server: writes a message of the proxy's own (a listing before an unlisted
                call) to the server.
            transport: the upstream's, as `wrap`.

        Returns:
            A `MessageLink` (its `from_client` / `from_server` decide each message).
        """
        self._transport = transport
        return MessageLink(self, self.guard.engine(transport=transport), write_server)


#: What the relay does with a message: send it as read, send `message` instead, send nothing,
#: or send `message` back to the sender (the answer to a request that is not written).
Action = Literal["pass", "replace", "drop", "answer"]
#: `(action, message)`: see `MessageLink`.
Decision = tuple[Action, dict[str, Any] | None]
_PASS: Final[tuple[Action, None]] = ("pass", None)
_DROP: Final[tuple[Action, None]] = ("drop", None)


class MessageLink:
    """One connection's guard over plain JSON-RPC messages (`dict`s, as parsed from the wire),
    with the seam's work around it, as `GuardSeam.wrap` does for stream pairs: the raw
    listings and the protocol version (for `explain`), upstream timing (`on_exchange`), the
    listing before an unlisted call (`before_call`) and its answers kept from the client
    (`swallow`), refusals made actionable (`explain`). Build it with `GuardSeam.connect`.

    Each method returns `(action, message)`: `("pass", None)` (send the message as read),
    `("replace", new)`, `("drop", None)`, or `("answer", response)` (from `from_client`
    only: the request is not written, `response` goes back to the client). Never raises
    (except cancellation, and what `write_server` raises during a listing of its own).
    """

    def __init__(
        self,
        seam: GuardSeam,
        engine: Any,
        write_server: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        self._seam = seam
        self._engine = engine
        self._write_server = write_server
        self._link = _Link()
        #: held around each decision step (the engine's lock, which the pin store's change
        #: feed takes too): the relay decides on two threads and, for what must wait, on
        #: the event loop.
        self.lock = engine.lock
        self._tool_status = seam.guard.tool_status

    def send_notices_to(self, send: Callable[[list[dict[str, Any]]], None]) -> None:
        """Hand the guard's own notifications for this connection (`notifications/tools/
        list_changed` after an approval or a revocation) to `send`, on the running loop; and
        let the guard write its own requests to the server (its listing once the pin store
        answers after an outage) with `write_server`."""
        self._engine.send_notices_to(send)
        self._engine.send_requests_to(self._write_server)

    async def from_client(self, message: dict[str, Any]) -> Decision:
        """Decide on one message the client wrote."""
        decided = self.from_client_now(message)
        return decided if isinstance(decided, tuple) else await decided

    async def from_server(self, message: dict[str, Any]) -> Decision:
        """Decide on one message the server sent."""
        decided = self.from_server_now(message)
        return decided if isinstance(decided, tuple) else await decided

    def from_client_now(self, message: dict[str, Any]) -> Decision | Awaitable[Decision]:
        """`from_client` on any thread, no event loop needed: the decision, or, when it must
        wait (the listing of its own before a call naming a tool the guard never saw, a
        check the engine runs in a worker thread), an awaitable for the event loop that
        finishes it (its steps under `lock`: nothing was decided twice). Holds `lock` while
        it decides."""
        if message.get("method") == _CALL and "id" in message:
            params = message.get("params")  # `GuardSeam._must_prelist`, inline
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str) and self._tool_status(name) is None:
                return self._prelisted(message)
        return self._client_decide(message)

    def from_server_now(self, message: dict[str, Any]) -> Decision | Awaitable[Decision]:
        """`from_server` on any thread, as `from_client_now` (it waits for a listing whose
        pins the store checks, an output check run in a worker thread)."""
        seam = self._seam
        link = self._link
        # acquire / release rather than `with`: a `with` on a C lock looks up and binds its
        # `__enter__` and `__exit__` each time (twice a round trip, here and `_client_decide`).
        lock = self.lock
        lock.acquire()
        try:
            if "id" in message and "method" not in message:
                result = message.get("result")
                # `_note_result` reads an initialize result or a listing the client asked for.
                if isinstance(result, dict) and ("protocolVersion" in result or link.lists):
                    seam._note_result(message["id"], result, link)
                if seam._on_exchange is not None and link.timing:
                    sent = link.timing.pop(message["id"], None)
                    if sent is not None:
                        seam._on_exchange(sent[0], time.perf_counter() - sent[1])
            try:
                decided = self._engine.inbound_now(message)
            except Exception:  # fail closed: nothing the guard has not read reaches the client
                logger.exception("guard failed on a server message; dropped")
                return _DROP
            if hasattr(decided, "__await__"):  # the engine's `Later`: it must wait
                return self._server_finish(decided, message)
            return self._server_decision(decided, message)
        finally:
            lock.release()

    def _client_decide(self, message: dict[str, Any]) -> Decision | Awaitable[Decision]:
        lock = self.lock
        lock.acquire()  # as `from_server_now`
        try:
            try:
                decided = self._engine.outbound_now(message)
            except Exception:  # as `wrap_streams`: the engine refuses a call it fails on itself
                logger.exception("guard failed on an outgoing message")
                decided = None
            if hasattr(decided, "__await__"):  # the engine's `Later`: it must wait
                return self._client_finish(decided, message)
            return self._client_decision(decided, message)
        finally:
            lock.release()

    async def _prelisted(self, message: dict[str, Any]) -> Decision:
        await self._seam._prelist(message.get("params"), self._send_own, self._link)
        decided = self._client_decide(message)
        return decided if isinstance(decided, tuple) else await decided

    async def _client_finish(self, later: Awaitable[Any], message: dict[str, Any]) -> Decision:
        try:
            verdict = await later
        except Exception:
            logger.exception("guard failed on an outgoing message")
            verdict = None
        with self.lock:
            return self._client_decision(verdict, message)

    async def _server_finish(self, later: Awaitable[Any], message: dict[str, Any]) -> Decision:
        try:
            verdict = await later
        except Exception:
            logger.exception("guard failed on a server message; dropped")
            return _DROP
        with self.lock:
            return self._server_decision(verdict, message)

    def _client_decision(self, verdict: Any, message: dict[str, Any]) -> Decision:
        action: Action = "pass" if verdict is None else verdict.action
        if action == "drop":
            return _DROP
        if action == "answer":
            answer = verdict.message
            return "answer", self._seam._explained(answer) or answer
        if action == "pass":
            # `_note_sent` keeps a listing's id, and every request's time for `on_exchange`.
            if self._seam._on_exchange is not None or message.get("method") == _LIST:
                self._note_sent(message)
            return _PASS
        sent = verdict.message
        self._note_sent(sent)
        return (action, sent)

    def _server_decision(self, verdict: Any, message: dict[str, Any]) -> Decision:
        if verdict.action == "drop":
            return _DROP
        seam = self._seam
        seen = message if verdict.action == "pass" else verdict.message
        listed = self._link.listed
        if listed is not None and "method" not in message and message.get("id") == listed[0]:
            self._link.listed = None
            seam.report_held(listed[1])
        link = self._link
        if (link.prelists or link.abandoned) and "method" not in seen and "id" in seen:
            if link.swallowed(seen["id"], seen.get("result")):
                return _DROP  # the answer to the proxy's own listing
        # Never `_explained`: the guard refuses calls on the client's side (`_client_decision`);
        # an error from the server naming the guard as its source is the server's own words,
        # and gets no approve or review line of the proxy's (nor a held page written).
        return _PASS if verdict.action == "pass" else ("replace", seen)

    async def _send_own(self, request: dict[str, Any]) -> None:
        """A request of the proxy's own, through the guard, to the server."""
        with self.lock:
            decided = self._engine.outbound_now(request)
        if isinstance(decided, Awaitable):
            verdict = await decided
        else:
            verdict = decided
        if verdict.action != "pass":  # refused (too many requests in flight): nobody waits
            self._link.swallowed(request["id"], None)
            return
        with self.lock:
            self._note_sent(request)
        await self._write_server(request)

    def _note_sent(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None or "id" not in message:
            return
        seam = self._seam
        seam._note_request(method, message["id"], self._link)
        if seam._on_exchange is not None:
            timing = self._link.timing
            timing[message["id"]] = (method, time.perf_counter())
            if len(timing) > _MAX_LISTS * 16:  # answers that never came: oldest out
                timing.pop(next(iter(timing)))


class _Prelist:
    """One page of `_prelist` awaited: made on the event loop, answered from any thread (the
    stdio relay decides server messages on a thread of its own)."""

    __slots__ = ("_loop", "_thread", "done", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self._thread = threading.get_ident()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # trio: every answer comes on the loop's own thread
            self._loop = None

    def set(self) -> None:
        """The answer is in `result`: wake the waiter (thread-safe)."""
        if self._loop is None or threading.get_ident() == self._thread:
            self.done.set()
            return
        try:
            self._loop.call_soon_threadsafe(self.done.set)
        except RuntimeError:  # the loop is closed: the proxy ended, nobody waits
            pass


class _Link:
    """What the taps of one connection share: its tools/list requests in flight (to find the
    raw pages), its requests' send times (for `on_exchange`), who wrote each error response
    (`_Told`), and the proxy's own listings (`before_call`) whose answers its client never
    sees. Per connection: JSON-RPC ids are each session's own (another session's request
    may have the id of this one's listing)."""

    __slots__ = ("abandoned", "asked", "errors", "listed", "lists", "prelists", "timing")

    def __init__(self) -> None:
        self.lists: OrderedDict[Any, None] = OrderedDict()
        #: the id and tool names of the listing read last, until the guard decided on it
        #: (`MessageLink` then reports what it holds).
        self.listed: tuple[Any, list[str]] | None = None
        self.timing: dict[Any, tuple[str, float]] = {}
        #: ids (`answer_key`) of the client's requests handed to the guard and not written
        #: to the server (yet): an error answering one is the guard's own (`_Asking` adds,
        #: `_Watch` removes when the request is written, `_Told` when it is answered).
        self.asked: dict[Any, None] = {}
        #: the id of the newest error response the server sent (`_Tap`, before the guard),
        #: until the guard hands it on (`_Told`), a response that is no error comes with its
        #: id, a request with its id is written (an error sent before cannot answer it), or
        #: the server sends another error: at most one entry.
        self.errors: dict[Any, None] = {}
        #: the proxy's own tools/list requests in flight (`before_call`), by id.
        self.prelists: dict[str, _Prelist] = {}
        #: ids of the proxy's own listings given up on (timed out): a late answer is still
        #: the proxy's, dropped, never the client's (the oldest forgotten past `_MAX_LISTS`).
        self.abandoned: OrderedDict[str, None] = OrderedDict()

    def swallowed(self, request_id: Any, result: Any) -> bool:
        """Whether an answer with `request_id` (its `result`, `None` for an error) answers
        one of the proxy's own listings (then it is not for the client): its waiter woken, or
        a late one dropped."""
        waiter = self.prelists.get(str(request_id))
        if waiter is None:
            # A late answer to a listing given up on: the proxy's own, dropped.
            return self.abandoned.pop(str(request_id), False) is None
        waiter.result = result
        waiter.set()
        return True

    def server_error(self, request_id: Any) -> None:
        """An error response from the server, before the guard reads it (`_Tap`). Only the
        newest is kept: the guard reads the server's messages one at a time and decides on an
        error without reading ahead, so an error it hands on is the last one the tap saw (an
        error it dropped is replaced by the next); the ids are the server's to choose, so one
        kept bounds the memory to one message's, whatever the session's history."""
        errors = self.errors
        if errors:
            errors.clear()
        errors[answer_key(request_id)] = None


_Wrapped = TypeVar("_Wrapped", bound="_Wrapper")


class _Wrapper:
    """A stream of the SDK's, wrapped: what the wrapper does not define (`aclose`, the
    async context, any other attribute) is the inner stream's. Subclasses set `_inner`."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self: _Wrapped) -> _Wrapped:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Tap(_Wrapper):
    """The upstream read stream, watched (never changed) before the guard reads it."""

    def __init__(self, inner: Any, seam: GuardSeam, link: _Link) -> None:
        self._inner = inner
        self._seam = seam
        self._link = link
        self._timing = link.timing
        self._answers = _answer_types()
        self._error = self._answers[1]

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._seam._inbound(item, self._link)
        on_exchange = self._seam._on_exchange
        message = getattr(item, "message", None)
        if not isinstance(message, self._answers):
            return item
        if type(message) is self._error:
            self._link.server_error(message.id)
        elif self._link.errors:  # a response that is no error: none before it answers it
            self._link.errors.pop(answer_key(message.id), None)
        if on_exchange is not None:
            sent = self._timing.pop(message.id, None)
            if sent is not None:
                on_exchange(sent[0], time.perf_counter() - sent[1])
        return item


class _Told(_Wrapper):
    """The guarded read stream, watched after the guard decided: an answer to one of the
    proxy's own listings (`GuardSeam.before_call`) is kept (`_Link.swallowed`: never handed
    on); a listing's response reports the tools it held (`GuardSeam.report_held`); an error
    response the server wrote is handed on as a `ServerError` item (`server_wrote`).

    Who wrote an error: the guard, when it answers a request the guard never wrote to the
    server (`_Link.asked`: refused, or past the guard's limits; handed on as an `Unsent` item,
    `never_written`); the server, when the server
    sent an error with that id (`_Link.errors`), passed on as sent or cleaned; else the guard
    (its own error in place of a result it withheld). The guard drops any server answer to a
    request it has not written, and decides on an error response without waiting, so the
    error it hands on is the one the tap saw last with that id: neither a response the
    server sent ahead of a request's id, nor a client reusing an id, nor another connection
    (its own `_Link`) moves a guard refusal to the server or the other way round."""

    def __init__(self, inner: Any, seam: GuardSeam, link: _Link) -> None:
        self._inner = inner
        self._seam = seam
        self._link = link
        self._answers = _answer_types()

    async def receive(self) -> Any:
        while True:
            # Told first: an answer to the proxy's own listing is read as any (who wrote an
            # error, the tools a listing held), then kept from the client.
            item = self._told(await self._inner.receive())
            if not self._swallowed(item):
                return item

    def _swallowed(self, item: Any) -> bool:
        """Whether `item` answers one of the proxy's own listings (`before_call`)."""
        link = self._link
        if not (link.prelists or link.abandoned):
            return False
        message = getattr(item, "message", None)
        if not isinstance(message, self._answers):
            return False
        if type(message) is self._answers[0]:
            result = message.result
        elif _in_use(message):  # the guard refused a client's request reusing a listing's id
            return False
        else:
            result = None
        return link.swallowed(message.id, result)

    def _told(self, item: Any) -> Any:
        message: Any = getattr(item, "message", None)
        if type(message) is self._answers[1]:
            link = self._link
            key = answer_key(message.id)
            if key in link.asked:  # never written to the server: the guard's own answer
                del link.asked[key]
                link.errors.pop(key, None)
                item = _unsent(item)
            elif key in link.errors:
                del link.errors[key]
                item = _server_error(item)
        listed = self._link.listed
        if listed is not None:
            message = getattr(item, "message", None)
            if isinstance(message, self._answers) and message.id == listed[0]:
                self._link.listed = None
                self._seam.report_held(listed[1])
        return item


class _Watch(_Wrapper):
    """The upstream write stream, watched (never changed) after the guard let a message by."""

    def __init__(self, inner: Any, seam: GuardSeam, link: _Link) -> None:
        self._inner = inner
        self._seam = seam
        self._link = link
        self._timing = link.timing
        self._request = _jsonrpc().JSONRPCRequest

    async def send(self, item: Any, /) -> None:
        self._seam._outbound(item, self._link)
        message = getattr(item, "message", None)
        link = self._link
        if (link.asked or link.errors) and isinstance(message, self._request):
            key = message.id  # written: its answer can only come from the server
            if type(key) is not int:
                key = answer_key(key)
            link.asked.pop(key, None)
            if link.errors:
                link.errors.pop(key, None)
        if self._seam._on_exchange is not None and isinstance(message, self._request):
            self._timing[message.id] = (message.method, time.perf_counter())
            if len(self._timing) > _MAX_LISTS * 16:  # answers that never came: oldest out
                self._timing.pop(next(iter(self._timing)))
        await self._inner.send(item)


class _Asking(_Wrapper):
    """The guarded write stream, watched before the guard decides: each request's id is noted
    (`_Link.asked`) until `_Watch` sees it written to the server, so an error answering it
    meanwhile is known to be the guard's own (`_Told`). `link`: its connection's `_Link`."""

    def __init__(self, inner: Any, link: _Link) -> None:
        self._inner = inner
        self._link = self.link = link
        self._request = _jsonrpc().JSONRPCRequest

    def send(self, item: Any, /) -> Awaitable[None]:
        """Note `item`'s id when it is a request; the inner stream's send, to await (no
        coroutine of its own: one frame less a message)."""
        message = getattr(item, "message", None)
        if isinstance(message, self._request):
            asked = self._link.asked
            key = message.id
            asked[key if type(key) is int else answer_key(key)] = None
            if len(asked) > _MAX_ASKED:  # requests the guard neither wrote nor answered
                del asked[next(iter(asked))]
        return self._inner.send(item)  # type: ignore[no-any-return]


#: The item classes that say who wrote an error (`ServerError`, `Unsent`), made on first use
#: (`_marked`: the SDK is imported only where its streams are handled), by name.
_marks: dict[str, Any] = {}


def _marked(item: Any, name: str, doc: str) -> Any:
    """`item` as an instance of the `SessionMessage` subclass `name` (made once, with `doc`):
    the same message and metadata, its type saying who wrote it."""
    kind = _marks.get(name)
    if kind is None:
        from mcp.shared.message import SessionMessage

        kind = _marks[name] = type(name, (SessionMessage,), {"__doc__": doc})
    return kind(item.message, item.metadata)


def _server_error(item: Any) -> Any:
    """`item` (an error response the server wrote) as a `ServerError` (`server_wrote`)."""
    return _marked(item, "ServerError", "An error response the server wrote (`_Told`).")


def _unsent(item: Any) -> Any:
    """`item` (the guard's error answering a request it never wrote to the server) as an
    `Unsent` (`never_written`)."""
    return _marked(item, "Unsent", "The guard's error to a request never written (`_Told`).")


def never_written(item: Any) -> bool:
    """Whether `item`, from the read side of `GuardSeam.wrap`, is the guard's error answering
    a request the guard never wrote to the server (its refusal: the server never saw the
    request), known from the connection's own record of the requests handed to the guard and
    not written (`_Link.asked`, `_Told`).

    Args:
        item: a stream item (a `SessionMessage`, an exception, anything).

    Returns:
        `True` for such a refusal; `False` for anything else: a result, a notification, an
        error the server wrote (`server_wrote`), and the guard's error in place of an answer
        the server sent (a result it withheld), or whenever the record cannot say (a request
        past `_MAX_ASKED` noted): an audit then says the server got the call, never that the
        proxy stopped a call it did not stop.
    """
    return type(item) is _marks.get("Unsent")


def lists_first(seam: GuardSeam, params: Any) -> bool:
    """Whether a `tools/call` with `params` names a tool the guard has never seen, so that the
    proxy lists the tools itself before the guard decides on it (`GuardSeam.before_call`,
    and the pooled POST path's `from_client`): a wait of up to `PRELIST_DEADLINE` seconds
    with the call not written to the server, which its caller may leave meanwhile.

    Args:
        seam: the guard.
        params: the call's `params`, as the client wrote them.

    Returns:
        `True` when a listing comes first; `False` otherwise (the guard decides at once).
    """
    return seam._must_prelist(params)


def not_written(guarded_write: Any, request_id: Any) -> bool:
    """Whether the request `request_id`, handed to `guarded_write` (the write side
    `GuardSeam.wrap` returned), has not been written to the server, and the guard's answer
    to it has not been read either: the connection's record of the requests handed to the
    guard (`_Link.asked`, `_Asking`), cleared when one is written (`_Watch`) or answered
    unsent (`_Told`). For a request whose session ends now: the server never got it.

    Args:
        guarded_write: the guarded write stream of the request's connection.
        request_id: the request's id, as the client wrote it.

    Returns:
        `True` when the record says so; `False` otherwise, and whenever it cannot say (a
        request past `_MAX_ASKED` noted, another stream): an audit then says the server may
        have got the call, never that the proxy stopped one it did not stop.
    """
    link = getattr(guarded_write, "link", None)
    if not isinstance(link, _Link):
        return False
    key = request_id if type(request_id) is int else answer_key(request_id)
    return key in link.asked


def server_wrote(item: Any) -> bool:
    """Whether `item`, from the read side of `GuardSeam.wrap`, is an error response the
    server wrote (passed on by the guard as sent, or cleaned), whatever its
    `error.data.source` names: never the guard's refusal (`_Told`).

    Args:
        item: a stream item (a `SessionMessage`, an exception, anything).

    Returns:
        `True` for a server's error response; `False` for anything else (a result, a
        notification, the guard's own error).
    """
    return type(item) is _marks.get("ServerError")


def _answer_types() -> tuple[Any, ...]:
    """The SDK's response and error classes, for `isinstance`."""
    rpc = _jsonrpc()
    return rpc.JSONRPCResponse, rpc.JSONRPCError


#: `mcp.types.jsonrpc` once `_jsonrpc` imported it.
_rpc: Any = None


def _jsonrpc() -> Any:
    """`mcp.types.jsonrpc`, imported on first use (the stdio relay to a child never loads the
    SDK), then kept: an import statement in a method runs on every call."""
    global _rpc
    if _rpc is None:
        from mcp.types import jsonrpc

        _rpc = jsonrpc
    return _rpc


def _in_use(error: Any) -> bool:
    """Whether an error response is the guard's refusal of a request reusing the id of one in
    flight (`request_id_in_use`): the refused request is the client's, never the proxy's own
    listing (which came first, with its id)."""
    data = error.error.data
    return isinstance(data, dict) and data.get("reason") == "request_id_in_use"


def answer_key(request_id: Any) -> Any:
    """A JSON-RPC id as a response is matched to its request: a string `int()` reads is that
    integer (mcp 2.3.0 `coerce_request_id`, and the guard's table of requests, which matches
    `" 5"` to `5`), anything else itself."""
    if isinstance(request_id, str) and not request_id[:1].isalpha():
        try:
            return int(request_id)
        except ValueError:
            return request_id
    return request_id


def _program() -> str:
    """`program_name()` quoted for a shell line."""
    return shlex.quote(program_name())


def _store_for_hint(location: str) -> str:
    """The store as a person types it elsewhere: a sqlite path made absolute (the proxy runs
    in whatever folder its client chose), anything else redacted."""
    if location != ":memory:" and "://" not in location and "=" not in location:
        return str(Path(location).expanduser().resolve())
    return redacted_location(location)


def _fingerprint_or_none(definition: Any) -> str | None:
    """The fingerprint of a definition the proxy saw, or `None` when it has none (not JSON
    the canonical form can write): an approve line then names no definition to approve."""
    try:
        return fingerprint(definition)
    except (Error, ValueError, TypeError, RecursionError):
        return None
