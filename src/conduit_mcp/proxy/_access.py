"""Per-caller tool access: the tool policy in force applied to what one caller lists and calls.

Not a public module. What the listener asks once a request's caller is known (an `Identity`
from `listen/_auth.py`, turned into a `conduit_mcp.policy.Caller`): `filter_listing` removes
from a `tools/list` result the tools the caller's policy does not allow (after the guard: the
guard decides what any client may see, the policy what this caller may); `refuse_call` answers
a `tools/call` of such a tool with a JSON-RPC error whose `data.reason` is `policy_denied` and
whose message says which rule (or the default) decided; `Sessions` tells each open session
whose view a new policy version changed (`notifications/tools/list_changed`).

Fail closed: while no policy can be read (none set in the store yet), every tool is denied and
the refusal says how to set one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Final

from .._program import program_name
from ..guard import REFUSED_CALL_CODE
from ..policy import Caller, Policy, PolicyView

#: `data.reason` of a call the policy refuses.
POLICY_DENIED: Final = "policy_denied"
#: `data.source` of the proxy's policy refusals.
SOURCE: Final = "conduit-mcp policy"


class Access:
    """The policy a proxy applies per caller.

    Args:
        server_id: the operator-assigned server id (the `SERVER_ID` of the globs).
        policy: returns the policy in force, or `None` while there is none (a
            `PolicyFollower`'s `current`, or a fixed `Policy`).
    """

    def __init__(self, server_id: str, policy: Callable[[], Policy | None]) -> None:
        self.server_id = server_id
        self._policy = policy

    @classmethod
    def fixed(cls, server_id: str, policy: Policy) -> Access:
        """An `Access` applying one policy for the proxy's life."""
        return cls(server_id, lambda: policy)

    def policy(self) -> Policy | None:
        """The policy in force now, or `None` while there is none."""
        return self._policy()

    @property
    def version(self) -> int | None:
        """The version of the policy in force (`None`: none, or not from a store)."""
        policy = self._policy()
        return None if policy is None else policy.version

    def view(self, caller: Caller) -> PolicyView | None:
        """The caller's view of the policy in force (`None`: no policy: everything denied)."""
        policy = self._policy()
        return None if policy is None else policy.view(caller)

    def allows(self, caller: Caller, tool: str) -> bool:
        """Whether `caller` may list and call `tool` of this server now."""
        view = self.view(caller)
        return view is not None and view.decide(self.server_id, tool).allowed

    def visible(self, caller: Caller, names: Iterable[str]) -> frozenset[str]:
        """The names among `names` the caller may see."""
        view = self.view(caller)
        if view is None:
            return frozenset()
        return frozenset(n for n in names if view.decide(self.server_id, n).allowed)

    def filter_listing(self, result: Any, caller: Caller) -> tuple[Any, list[str]]:
        """A `tools/list` result with only the tools `caller` may see, and the names removed.

        A result that is not an object with a `tools` array is returned unchanged (the guard
        already withheld what it could not read). An entry without a string `name` is removed
        (no glob can allow it).
        """
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return result, []
        view = self.view(caller)
        kept, removed = [], []
        for tool in result["tools"]:
            name = tool.get("name") if isinstance(tool, dict) else None
            if (
                isinstance(name, str)
                and view is not None
                and view.decide(self.server_id, name).allowed
            ):
                kept.append(tool)
            else:
                removed.append(name if isinstance(name, str) else repr(name))
        if not removed:
            return result, []
        return {**result, "tools": kept}, removed

    def refuse_call(self, message: Any, caller: Caller) -> dict[str, Any] | None:
        """The error answering a `tools/call` the caller may not make, or `None` (it may; or
        the message is no `tools/call` with a string name: the guard answers those)."""
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return None
        policy = self._policy()
        if policy is None:
            why = (
                "no tool policy is set for this fleet; set one with: "
                f"{program_name()} policy set FILE --store STORE --approver WHO"
            )
        else:
            decision = policy.view(caller).decide(self.server_id, name)
            if decision.allowed:
                return None
            why = decision.explain()
            if policy.version is not None:
                why += f" (policy version {policy.version})"
        data = {"source": SOURCE, "reason": POLICY_DENIED, "tool": name, "path": "$.name"}
        return {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {
                "code": REFUSED_CALL_CODE,
                "message": f"conduit-mcp refused the call: {why}",
                "data": data,
            },
        }


class Sessions:
    """The open sessions and what each last saw listed, to tell those whose view a new policy
    version changes (`changed`). Thread-safe; memory follows the sessions open now.

    Args:
        access: the policy per caller.
    """

    def __init__(self, access: Access) -> None:
        self._access = access
        self._lock = threading.Lock()
        self._open: dict[int, tuple[Caller, frozenset[str], frozenset[str], Callable[[], Any]]] = {}
        #: where a stream's tool names are read afresh at each change (a stateless listen
        #: stream lists nothing itself: the names the guard knows now)
        self._names: dict[int, Callable[[], Iterable[str]]] = {}
        self._next = 0

    def opened(
        self,
        caller: Caller,
        notify: Callable[[], Any],
        names: Callable[[], Iterable[str]] | None = None,
    ) -> int:
        """Register a session of `caller`; `notify` is called (from the follower's thread)
        when its view changes; `names`: read at each change for the tool names to compare
        (else those `listed` gave). Returns the session's key for `listed` and `closed`."""
        with self._lock:
            self._next += 1
            self._open[self._next] = (caller, frozenset(), frozenset(), notify)
            if names is not None:
                self._names[self._next] = names
            return self._next

    def listed(
        self,
        key: int,
        names: Iterable[str],
        shown: Iterable[str],
        caller: Caller | None = None,
    ) -> None:
        """What the guard let through to a listing of this session (`names`: one page) and
        what of it the caller was shown (`shown`), added to what it listed before; `caller`:
        who listed (its token's groups may have changed since the session opened), else the
        caller it was opened by."""
        with self._lock:
            found = self._open.get(key)
            if found is not None:
                who = caller if caller is not None else found[0]
                # a union: a listing may come in pages, each answered on its own
                self._open[key] = (who, found[1] | set(names), found[2] | set(shown), found[3])

    def closed(self, key: int) -> None:
        """Forget a session (idempotent)."""
        with self._lock:
            self._open.pop(key, None)
            self._names.pop(key, None)

    def changed(self, policy: Any = None) -> int:
        """A new policy is in force: notify each session whose shown set differs from what it
        would see now (a `PolicyFollower`'s `on_change`). Returns how many were notified."""
        del policy
        with self._lock:
            sessions = list(self._open.items())
            fresh = dict(self._names)
        notified = 0
        for key, (caller, names, shown, notify) in sessions:
            if key in fresh:
                names = frozenset(fresh[key]())
            now = self._access.visible(caller, names)
            if now != shown:
                with self._lock:
                    if key in self._open:  # what it would see now replaces what it saw
                        self._open[key] = (caller, names, now, notify)
                notify()
                notified += 1
        return notified

    def __len__(self) -> int:
        return len(self._open)
