"""The caller of each `--listen` request: its tool policy applied, its calls audited and counted.

Not a public module. With `--auth jwt` every request reaches the listener with the verified
`Identity` of its token (`_auth.AuthMiddleware`, `scope[IDENTITY_KEY]`); `CallerGate` turns it
into a `conduit_mcp.policy.Caller` and applies `proxy/_access.Access` to that caller's
messages, in a session and stateless alike:

- a `tools/call` of a tool outside the caller's policy is answered at once with the refusal
  (`data.reason` `policy_denied`, the rule or default that decided and the policy version in
  the message), never sent on (`refuse`);
- a `tools/list` answer keeps only the tools the caller's policy allows (`answered`; after the
  guard, which decided what any client may see);
- each `tools/call` answered, refused (by the policy, or by the listener itself: a reused id,
  too many in flight), or sent on and never answered is counted by group
  (`Metrics.caller_call`: the groups the policy names, else `other`; never by subject) and,
  with `--audit-calls`, recorded in the store's call audit (`_callaudit.CallAuditor`:
  subject, groups, tool, verdict, reason, the RFC 8785 SHA-256 digest of the arguments):
  every call the server may have run has its row (`unanswered`, `ended`);
- the subject is in the log line of every refusal (never the token).

A session registers with `Sessions` (`proxy/_access.py`): when a new policy version arrives
from the store (`PolicyFollower`) and changes what its caller would see of its last listing,
its client is sent `notifications/tools/list_changed`.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from ...guard import RESULT_META_KEY
from ...policy import Caller, Policy
from .._access import Access, Sessions
from .._callaudit import CallAuditor
from .._metrics import Metrics

#: The `error.data.source` of the guard's refusals (guard/_jsonrpc.py `SOURCE`).
GUARD_SOURCE: Final = "conduit-mcp.guard"

logger = logging.getLogger("conduit_mcp.proxy")

#: Where `_auth.AuthMiddleware` puts the verified `Identity` in the ASGI scope.
IDENTITY_KEY: Final = "conduit_mcp.identity"
#: The methods whose answers the gate reads.
_WATCHED: Final = frozenset({"tools/list", "tools/call"})
#: Why a call sent on to the server has no answer for its caller (verdict `unanswered`): the
#: client's `notifications/cancelled`; the client hung up (its HTTP connection closed) before
#: the answer; no answer within the proxy's time limit (`_stateless.REQUEST_TIMEOUT`); the
#: session, or the stateless paths' connection to the server, ended with the call in flight.
UNANSWERED_REASONS: Final = frozenset({"cancelled", "caller_gone", "timeout", "session_closed"})


def caller_of(scope: Any) -> Caller | None:
    """The caller of an ASGI request (`None`: no authentication on this listener)."""
    identity = scope.get(IDENTITY_KEY) if isinstance(scope, dict) else None
    if identity is None:
        return None
    return Caller(identity.subject, identity.groups, identity.claims)


def shown_caller(caller: Caller) -> str:
    """A caller as logged: its subject (never a token), or that it has none."""
    return repr(caller.subject[:128]) if caller.subject is not None else "(no subject)"


class CallerGate:
    """The policy per caller, the call audit and the metrics by group (see the module
    docstring).

    Args:
        access: the policy in force, for this server id.
        sessions: the open sessions, told when a new policy changes their view.
        auditor: the call audit writer (`--audit-calls`), or `None`.
        metrics: the listener's metrics, or `None`.
    """

    def __init__(
        self,
        access: Access,
        *,
        sessions: Sessions | None = None,
        auditor: CallAuditor | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.access = access
        self.sessions = sessions if sessions is not None else Sessions(access)
        self.auditor = auditor
        self.metrics = metrics
        self._named: tuple[Policy | None, frozenset[str]] = (None, frozenset())

    @staticmethod
    def watches(message: Any) -> bool:
        """Whether `refuse` / `answered` have anything to do with `message` (a request)."""
        return isinstance(message, dict) and message.get("method") in _WATCHED

    def refuse(self, message: dict[str, Any], caller: Caller) -> dict[str, Any] | None:
        """The answer refusing a `tools/call` outside `caller`'s policy (counted, audited and
        logged here), or `None` when it may go on."""
        answer = self.access.refuse_call(message, caller)
        if answer is None:
            return None
        params = message.get("params")
        tool = params.get("name") if isinstance(params, dict) else None
        logger.warning(
            "call of %r by %s refused by the tool policy: %s",
            tool,
            shown_caller(caller),
            answer["error"]["message"],
        )
        self._count(caller, "refused")
        self.record(message, caller, "refused", "policy_denied")
        return answer

    def refused_here(self, message: dict[str, Any], caller: Caller, reason: str) -> None:
        """A `tools/call` request `message` of `caller` the listener refused itself, never sent
        on (a reused id, `request_id_in_use`; past the session's bound in flight,
        `too_many_in_flight`; on the stateless paths, headers or an envelope the SDK's ladder
        rejects, `header_mismatch` and the others of `_stateless.ladder_reason`, or a server
        that speaks no 2026-07-28, `unsupported_protocol_version`): counted `refused` as a
        policy's refusal is (by group) and audited `refused` with `reason`. Any other
        request is ignored."""
        if message.get("method") != "tools/call":
            return
        self._count(caller, "refused")
        self.record(message, caller, "refused", reason)

    def record(
        self, message: dict[str, Any], caller: Caller, verdict: str, reason: str | None = None
    ) -> None:
        """With `--audit-calls`, queue the row of a `tools/call` request `message` (anything
        else is ignored) decided or ended by the listener: `verdict` and `reason` as
        `CallRecord` reads them (`_callaudit.CallAuditor.record`)."""
        if self.auditor is not None:
            self.auditor.record(
                message,
                subject=caller.subject,
                groups=caller.groups,
                verdict=verdict,
                reason=reason,
            )

    def answered(
        self,
        request: dict[str, Any],
        caller: Caller,
        answer: dict[str, Any],
        session: int | None = None,
        *,
        by_server: bool = False,
        unsent: bool = False,
    ) -> dict[str, Any]:
        """The answer to `request` as `caller` may see it: a `tools/list` result without the
        tools outside its policy (what was listed and shown noted for `session`, a key of
        `sessions`); a `tools/call` answer unchanged, counted and audited (its verdict,
        `_verdict`: `passed`, `refused` or `withheld` with the guard's `error.data.reason`,
        or `error`).

        `by_server`: `answer` is an error response the server wrote (the seam knows:
        `_seam.server_wrote`, or the upstream's own message on the pooled POST path): its
        verdict is `error` whatever its `data.source` names (a server cannot have its failure
        recorded as the guard's refusal). `unsent`: `answer` is the guard's error to a
        request it never wrote to the server (`_seam.never_written`, or the guard's answer
        to the request on the pooled POST path): `refused`; the guard's error otherwise is
        `withheld` (the server got the call and answered it; fail closed: when the seam
        cannot tell, the verdict says less was stopped)."""
        method = request.get("method")
        if method == "tools/list":
            result = answer.get("result")
            filtered, removed = self.access.filter_listing(result, caller)
            if session is not None and isinstance(filtered, dict) and isinstance(result, dict):
                listed = [t.get("name") for t in result.get("tools", []) if isinstance(t, dict)]
                shown = [t.get("name") for t in filtered.get("tools", []) if isinstance(t, dict)]
                self.sessions.listed(
                    session,
                    [n for n in listed if isinstance(n, str)],
                    [n for n in shown if isinstance(n, str)],
                    caller,
                )
            if removed:
                logger.info(
                    "%d tools not listed to %s (the tool policy)",
                    len(removed),
                    shown_caller(caller),
                )
                return {**answer, "result": filtered}
            return answer
        if method == "tools/call":
            verdict, reason = _verdict(answer, by_server, unsent)
            self.ended(request, caller, verdict, reason)
        return answer

    def unanswered(self, request: dict[str, Any], caller: Caller, reason: str) -> None:
        """A `tools/call` `request` of `caller` was sent on to the server and no answer
        reached the caller: counted and audited `unanswered` with `reason` (one of
        `UNANSWERED_REASONS`: `cancelled`, `caller_gone`, `timeout`, `session_closed`); any
        other request is ignored.

        Raises:
            ValueError: `reason` is not one of `UNANSWERED_REASONS`.
        """
        if reason not in UNANSWERED_REASONS:
            raise ValueError(f"not a reason of an unanswered call: {reason!r}")
        self.ended(request, caller, "unanswered", reason)

    def never_sent(self, request: dict[str, Any], caller: Caller, reason: str) -> None:
        """A `tools/call` `request` the policy let `caller` make that was never written to the
        server and will have no answer (its session ended, `reason` `session_closed`, while
        the proxy listed the tools before it): counted (`allowed`) and audited `refused` with
        `reason`, as a call the guard answered unsent (the server never got it); any other
        request is ignored.

        Raises:
            ValueError: `reason` is not one of `UNANSWERED_REASONS`.
        """
        if reason not in UNANSWERED_REASONS:
            raise ValueError(f"not a reason of a call never answered: {reason!r}")
        self.ended(request, caller, "refused", reason)

    def ended(
        self, request: dict[str, Any], caller: Caller, verdict: str, reason: str | None
    ) -> None:
        """The end of a `tools/call` `request` the policy let `caller` make: counted
        (`allowed`) and audited with `verdict` and `reason` as given (`answered` and
        `unanswered` decide them; the stateless paths' ends that have no JSON-RPC answer to
        read, such as an upstream's HTTP 401, give them here). Any other request is
        ignored."""
        if request.get("method") != "tools/call":
            return
        self._count(caller, "allowed")
        self.record(request, caller, verdict, reason)

    def _count(self, caller: Caller, verdict: str) -> None:
        if self.metrics is None:
            return
        self.metrics.caller_call(caller.groups, self._groups_named(), verdict)

    def _groups_named(self) -> frozenset[str]:
        """The groups the policy in force names (the only values of the metrics' `group`
        label besides `other`: bounded by the policy, never by the tokens)."""
        policy = self.access.policy()
        known, named = self._named
        if policy is not known:
            named = frozenset(g for rule in (policy.rules if policy else ()) for g in rule.groups)
            self._named = (policy, named)
        return named


def _withheld_result(result: dict[str, Any]) -> tuple[str, str | None] | None:
    """`("withheld", reason)` for the result the guard put in place of one it withheld
    (invalid structured content: `_meta["conduit-mcp/guard"]["result_withheld"]`, a key the guard
    removes from every result a server sends), else `None`."""
    meta = result.get("_meta")
    said = meta.get(RESULT_META_KEY) if isinstance(meta, dict) else None
    reason = said.get("result_withheld") if isinstance(said, dict) else None
    return ("withheld", reason[:64]) if isinstance(reason, str) else None


def _verdict(
    answer: dict[str, Any], by_server: bool = False, unsent: bool = False
) -> tuple[str, str | None]:
    """A `tools/call` answer's verdict for the audit, by who wrote it (docs/identity.md, the
    call audit): `passed` (a result); `error` (a result with `isError`, or an error the
    server wrote, `by_server`, whatever reason or source it names: a server that names a
    reason is not the proxy refusing, nor one that forges the guard's source); `refused` for
    an error answering a request the proxy never wrote to the server (`unsent`), with its
    `error.data.reason` when it gives one; `withheld` for the guard's error (its source and
    a reason code) to a request it did write: the server answered, and the guard kept that
    answer from the client. Any other error (no reason, another source, not the server's) is
    `error`."""
    error = answer.get("error")
    if error is None:
        result = answer.get("result")
        if isinstance(result, dict) and result.get("isError") is True:
            return _withheld_result(result) or ("error", None)
        return "passed", None
    if by_server:
        return "error", None
    data = error.get("data") if isinstance(error, dict) else None
    reason = data.get("reason") if isinstance(data, dict) else None
    reason = reason[:64] if isinstance(reason, str) else None
    if unsent:
        return "refused", reason
    if reason is not None and isinstance(data, dict) and data.get("source") == GUARD_SOURCE:
        return "withheld", reason
    return "error", None
