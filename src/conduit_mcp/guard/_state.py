"""The guard's bookkeeping, apart from its decisions: tool states, requests in flight, pages.

Not a public module. No SDK import: the state is plain data over parsed JSON-RPC values.

- `Shared`: what every connection of one `Guard` shares (identity, policy, pins, events, and
  the `ToolBook` of what is known about each tool name).
- `Outstanding`: the requests of one connection whose response is still awaited, keyed as
  the SDK keys them; bounded, and full means new requests are refused, never that old ones
  are forgotten.
- `PageCache`: a connection's few most recent `tools/list` pages and their intake.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from ..client import Intake, Tool
from ..client._cache import BoundedCache
from ..pins import PinStore
from ._events import EventSink, GuardEvent
from ._notify import Notices
from ._policy import Policy

Transport = Literal["stdio", "streamable-http"]
TRANSPORTS: Final = ("stdio", "streamable-http")


class StreamWrapper(Protocol):
    """What a seam needs of a `Guard`: its stream-pair wrapper and its server id."""

    @property
    def server_id(self) -> str: ...

    def wrap_streams(
        self, read_stream: Any, write_stream: Any, *, transport: Transport = "stdio"
    ) -> tuple[Any, Any]: ...


ToolStatus = Literal["ok", "rejected", "blocked", "held"]

#: Requests of one connection awaiting their response, at most. Past it a new request is
#: answered locally with an error (reason `too_many_outstanding_requests`), never written.
MAX_OUTSTANDING: Final = 4096
#: `Outstanding.add`: the table is full.
TABLE_FULL: Final = "too_many_outstanding_requests"
#: `Outstanding.add`: a live request has the id (MCP basic "Requests": an id MUST NOT have
#: been used before by the requestor in the same session).
ID_IN_USE: Final = "request_id_in_use"
#: Ids of refused calls remembered only to name the reason when a response to one arrives.
_REFUSED_LABELS: Final = 1024
#: tools/list pages whose intake a connection keeps for re-listings (most recent kept).
PAGE_CACHE_SIZE: Final = 8
#: JSON bytes of all cached pages together, at most: the cache's memory stays a small
#: multiple of an ordinary page, never of the largest pages a server ever sent (a page over
#: the budget is not cached at all).
PAGE_CACHE_BYTES: Final = 2 << 20


@dataclass(slots=True)
class ToolState:
    """What the guard knows about one tool name of its server."""

    status: ToolStatus
    tool: Tool | None  # the accepted definition (None for a rejected or unchecked tool)
    reason: str = ""
    #: whether the input / output schema is checked inline (`_checks.is_linear`), once known.
    input_linear: bool | None = None
    output_linear: bool | None = None
    #: `(tool, protocol version, validator)`: `_checks.arguments_validator` for `tool` at that
    #: version, once asked (the validator `None`: no shortcut); a call's valid arguments are
    #: then one `is_valid`.
    input_check: tuple[Any, str, Any] | None = None


#: Tool names whose last feed change `ToolBook` keeps (the oldest goes first).
FEED_NAMES: Final = 4096


@dataclass(slots=True)
class ToolBook:
    """Per tool name: its state, and the memos that keep re-listings cheap."""

    #: tool name -> what the guard knows (shared by every connection of a guard).
    tools: dict[str, ToolState] = field(default_factory=dict)
    #: tool name -> fingerprint known to be pinned in the guard's private store.
    pinned: dict[str, str | None] = field(default_factory=dict)
    #: tool name -> fingerprint whose outputSchema was reported hidden from the SDK.
    hidden: dict[str, str | None] = field(default_factory=dict)
    #: names whose pin the store's audit log shows revoked (never re-pinned by the guard).
    revoked: set[str] = field(default_factory=set)
    #: tool name -> fingerprint whose cleaned text was reported (`tool_text_cleaned`).
    text_reported: dict[str, str | None] = field(default_factory=dict)
    #: tool name -> fingerprint of the definition last scanned and found holding no hidden
    #: character anywhere (a re-listing skips the scan).
    text_clean: dict[str, str | None] = field(default_factory=dict)
    #: `lookalike_key` -> the first name known under it (listed, or pinned in the store).
    lookalike_index: dict[str, str] = field(default_factory=dict)
    #: names pinned in a caller's store for this server (read once), or None until read.
    store_names: frozenset[str] | None = None
    #: the server's instructions as last sent and judged (`_instructions.InstructionsState`),
    #: or `None` before any.
    instructions: Any = None
    #: with the private store: every name checked against it (so pinned there, or queued),
    #: at most `Policy.max_tools` (past it a name never checked is held, never stored).
    checked: set[str] = field(default_factory=set)
    #: The pin store's change feed (`_checks.apply_pin_change`, from the watcher's thread):
    #: how many changes were delivered, and per tool name the last one as (its count, the
    #: `AuditEntry`), at most `FEED_NAMES` names; `feed_floor` is the count of the newest one
    #: dropped. A listing whose store check overlapped a delivery re-applies it after recording
    #: its verdicts (`_checks.reapply_pin_changes`), so a stale verdict never wins.
    feed_count: int = 0
    feed_last: dict[str, tuple[int, Any]] = field(default_factory=dict)
    feed_floor: int = 0
    #: reentrant: a seam deciding on several threads holds it around each decision
    #: (`Engine.lock`), and a decision takes it again to read the feed.
    feed_lock: threading.RLock = field(default_factory=threading.RLock)

    def forget(self, listed: set[str]) -> None:
        """Drop the memos of names a complete listing no longer has: what the guard keeps
        grows with the server's current tools, not with every name it ever listed."""
        for memo in (self.pinned, self.hidden, self.text_reported, self.text_clean):
            if memo.keys() <= listed:
                continue
            for name in [n for n in memo if n not in listed]:
                del memo[name]


@dataclass(slots=True)
class Shared:
    """What every connection of one guard shares."""

    server_id: str
    trusted: bool
    policy: Policy
    pins: PinStore
    owns_pins: bool
    sink: EventSink
    book: ToolBook = field(default_factory=ToolBook)
    #: each live connection's `notifications/tools/list_changed` notice.
    notices: Notices = field(default_factory=Notices)
    #: a caller's store: the recovery from its outages (a `_recheck.Recheck`, which imports
    #: the store's error test from `_checks`, itself on this module); `None` for the private one.
    recheck: Any = None

    @property
    def changes_list_itself(self) -> bool:
        """Whether the guard may change the tools a client sees without a re-list: a caller's
        store (its change feed: approvals and revocations made elsewhere), or a policy that
        holds tools until `Guard.approve`."""
        return not self.owns_pins or "hold" in (self.policy.new, self.policy.changed)

    def emit(self, kind: str, tool: str | None, reason: str, decision: str, **kw: Any) -> None:
        self.sink.emit(GuardEvent(kind, tool, reason, decision, server_id=self.server_id, **kw))


def coerce_id(request_id: Any) -> Any:
    """A request id as the SDK correlates it: mcp 2.3.0 `coerce_request_id` reads a string
    with `int()` (" 5", "+5", "٥", "0005" and "1_0" are ints there), so the guard does the
    same and no spelling the SDK accepts escapes its table. A digit string past CPython's
    4,300-digit limit stays a string (the SDK's `int()` refuses it too)."""
    if isinstance(request_id, str):
        if request_id[:1].isalpha():  # no int() starts with a letter: spared its exception
            return request_id
        try:
            return int(request_id)
        except ValueError:
            return request_id
    return request_id


class Pending:
    """One request awaiting its response."""

    __slots__ = ("cursor", "extensions", "gating", "method", "name", "own", "state", "tool")

    def __init__(
        self,
        method: str,
        name: str | None = None,
        tool: Tool | None = None,
        cursor: bool = False,
        state: ToolState | None = None,
        gating: bool = False,
    ) -> None:
        self.method = method
        self.name = name
        self.tool = tool
        self.cursor = cursor
        self.state = state  # the tool's state when the call went out (per-tool memos)
        #: the call is still being checked: not written, so no response can be its answer.
        self.gating = gating
        #: extensions the client advertised with the request (their result types are valid).
        self.extensions: tuple[str, ...] = ()
        #: a request of the guard's own (a listing after a store outage): its page number,
        #: from 1; 0 for the client's. Its answer goes to nobody.
        self.own = 0


class Outstanding:
    """The requests of one connection awaiting a response, keyed by `coerce_id`.

    An entry leaves when its response arrives (`take`), when the client abandons the request
    (`cancel`, on the `notifications/cancelled` the client writes) or when the request is
    never written (`forget_unsent`). Nothing else removes or replaces one: when the table is
    full, or a live request already has the id, `add` says no and the request is refused, so
    neither a flood of abandoned requests nor a reused id can push out the entry that makes
    a later response checked (a ping's `{}` is never taken for a call's result).
    """

    __slots__ = ("_live", "_refused", "limit")

    def __init__(self, limit: int = MAX_OUTSTANDING) -> None:
        self.limit = limit
        self._live: dict[Any, Pending] = {}
        self._refused: collections.OrderedDict[Any, None] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._live)

    def add(self, request_id: Any, pending: Pending) -> str | None:
        """Remember a request: `None`; else why not, nothing remembered and the live entries
        unchanged: `ID_IN_USE` (a live request has the id, as `coerce_id` reads it) or
        `TABLE_FULL`."""
        key = request_id if type(request_id) is int else coerce_id(request_id)
        live = self._live
        if key in live:
            return ID_IN_USE
        if len(live) >= self.limit:
            return TABLE_FULL
        if self._refused:
            self._refused.pop(key, None)  # the id of a refused request, used again
        live[key] = pending
        return None

    def take(self, request_id: Any) -> Pending | None:
        """The request a response answers, removed (`None`: no live request has that id)."""
        key = request_id if type(request_id) is int else coerce_id(request_id)
        return self._live.pop(key, None)

    def restore(self, request_id: Any, pending: Pending) -> None:
        """Put back what `take` just removed (a response that does not answer it after all)."""
        self._live[coerce_id(request_id)] = pending

    def cancel(self, request_id: Any) -> Pending | None:
        """The client abandoned the request: its response, if one comes, matches nothing."""
        return self._live.pop(coerce_id(request_id), None)

    def forget_unsent(self, request_id: Any, pending: Pending) -> None:
        """A gated call that will not be written (refused or cancelled while gated)."""
        key = coerce_id(request_id)
        if self._live.get(key) is pending:
            del self._live[key]
        self._refused[key] = None
        if len(self._refused) > _REFUSED_LABELS:
            self._refused.popitem(last=False)

    def was_refused(self, request_id: Any) -> bool:
        return coerce_id(request_id) in self._refused


class PageCache:
    """A connection's recent pages, each under (protocol version, length of its JSON bytes):
    the bytes, the page as received (a reference, never a copy), its `Intake`, its tools'
    indexes. A later page with the same key replaces it (a miss, never a wrong hit: `get`
    compares the bytes)."""

    __slots__ = ("_pages",)

    def __init__(self) -> None:
        # Least recently used out first, by count and by the pages' JSON bytes together.
        self._pages: BoundedCache[tuple[str, int], tuple[bytes, Any, Intake, list[int]]] = (
            BoundedCache(
                PAGE_CACHE_SIZE,
                max_weight=PAGE_CACHE_BYTES,
                weigh=lambda key, entry: len(entry[0]),
            )
        )

    def get(self, version: str, data: bytes, page: Any) -> tuple[Intake, list[int]] | None:
        """The cached intake of `page` (whose orjson bytes are `data`), when a page cached at
        `version` has the same bytes, and, when they hold a `null`, is equal to it by Python
        equality too (orjson writes NaN and infinities as `null`; `==` tells them apart).
        Costs one comparison of the bytes (a hash of a page would cost as much as its
        serialization), and a deep `==` only for a page with a `null`."""
        key = (version, len(data))
        hit = self._pages.peek(key, None)
        # `find`, not `in`: CPython 3.11's bytes `in` formats a TypeError first.
        if hit is None or hit[0] != data or (data.find(b"null") != -1 and hit[1] != page):
            return None
        self._pages.get(key)  # now the most recently used
        return hit[2], hit[3]

    def put(
        self, version: str, data: bytes, page: Any, intake: Intake, positions: list[int]
    ) -> None:
        """Keep `page` (its orjson bytes `data`); a page over the byte budget is not kept."""
        self._pages.put((version, len(data)), (data, page, intake, positions))
