"""Prometheus metrics of the HTTP listener (`/metrics`), with prometheus-client.

Not a public module. Names follow Prometheus conventions (`_total` counters, base units:
seconds). Every label takes a bounded set of values (guard event kinds, reasons and decisions
are closed sets; methods are counted only for MCP's own request methods), so memory does not
grow with traffic. Never a header, argument or result value in a label.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

#: Request methods timed by name; anything else is timed as "other".
_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "server/discover",
    }
)


class Metrics:
    """The proxy's metrics in their own registry (one per listener).

    Args:
        server_id: the value of the `server_id` label on every series.
    """

    content_type: Final = CONTENT_TYPE_LATEST

    def __init__(self, server_id: str) -> None:
        self.registry = CollectorRegistry()
        self.server_id = server_id
        self.calls = Counter(
            "conduit_mcp_proxy_calls",
            "tools/call requests received from clients.",
            ["server_id"],
            registry=self.registry,
        )
        self.events = Counter(
            "conduit_mcp_proxy_guard_events",
            "Guard decisions: kind (tool_new, tool_changed, call_refused, output_invalid, ...), "
            "reason and decision (pinned, held, blocked, removed, refused, withheld, ...).",
            ["server_id", "kind", "reason", "decision"],
            registry=self.registry,
        )
        self.upstream = Histogram(
            "conduit_mcp_proxy_upstream_seconds",
            "Time from a request leaving the proxy for the server to its response.",
            ["server_id", "method"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )
        #: per call, the labelled series looked up once (`labels` costs a lock and a hash).
        self._calls = self.calls.labels(server_id)
        self._timers: dict[str, Any] = {}
        self.sessions = Gauge(
            "conduit_mcp_proxy_sessions",
            "Client sessions open.",
            ["server_id"],
            registry=self.registry,
        )

        self.refusals = Counter(
            "conduit_mcp_proxy_budget_refused",
            "Requests and connections refused past a client budget or an HTTP bound: reason "
            "(too_many_in_flight_per_client, too_many_listen_streams_per_client, "
            "too_many_in_flight_per_address, too_many_listen_streams_per_address, "
            "too_many_listen_streams, too_many_clients, too_many_sessions_per_client, "
            "too_many_sessions_per_address, too_many_sessions, head_too_large, head_timeout, "
            "body_too_large, too_many_connections_per_address; with --auth jwt: auth_missing, "
            "auth_invalid_request, auth_invalid_token).",
            ["server_id", "reason"],
            registry=self.registry,
        )

    def on_event(self, event: Any) -> None:
        """Count one `GuardEvent` (the guard's `on_event` callback)."""
        self.events.labels(self.server_id, event.kind, event.reason, event.decision).inc()

    def call(self) -> None:
        """Count one tools/call request received."""
        self._calls.inc()

    def refused(self, refusal: Any) -> None:
        """Count one request refused past a client budget (`listen/_budget.Refusal`) or one
        connection past an HTTP bound (`listen/_limits.Bound`); its reason is one of a closed
        set."""
        self.refusals.labels(self.server_id, refusal.reason).inc()

    def exchange(self, method: str, seconds: float) -> None:
        """Time one upstream request/response (`method` outside MCP's set counts as other)."""
        name = method if method in _METHODS else "other"
        child = self._timers.get(name)
        if child is None:  # a bounded set: MCP's methods and "other"
            child = self._timers[name] = self.upstream.labels(self.server_id, name)
        child.observe(seconds)

    def session_opened(self) -> None:
        self.sessions.labels(self.server_id).inc()

    def session_closed(self) -> None:
        self.sessions.labels(self.server_id).dec()

    def render(self) -> bytes:
        """The exposition text of every series."""
        return bytes(generate_latest(self.registry))

    def caller_call(self, groups: Iterable[str], named: Container[str], verdict: str) -> None:
        """Count one tools/call of an authenticated caller by group, never by subject (issue
        32: bounded cardinality): once under each of its groups the policy names (`named`),
        or under `"other"` when it has none of those; `verdict` is `"allowed"` or
        `"refused"` (by the policy, or by the listener itself: a reused id, too many in
        flight)."""
        series = self._by_group
        if series is None:
            series = self._by_group = Counter(
                "conduit_mcp_proxy_caller_calls",
                "tools/call requests of authenticated callers by group (the groups the policy "
                "names, else other) and verdict (allowed; refused by the policy, or by the "
                "session: a reused id, too many in flight).",
                ["server_id", "group", "verdict"],
                registry=self.registry,
            )
        counted = False
        for group in groups:
            if group in named:
                series.labels(self.server_id, group, verdict).inc()
                counted = True
        if not counted:
            series.labels(self.server_id, "other", verdict).inc()

    _by_group: Counter | None = None
