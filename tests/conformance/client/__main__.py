"""Entry point: `python -m tests.conformance.client [args...] <server-url>`.

The suite's runner appends the server URL as the last argument and sets `MCP_CONFORMANCE_SCENARIO`
(the scenario name), `MCP_CONFORMANCE_PROTOCOL_VERSION` (the version to speak; the runner always
sets it, default `2025-11-25`) and, for some scenarios, `MCP_CONFORMANCE_CONTEXT` (a JSON object).
Exit status: 0 when the scenario ran to the end, 1 when the client met a failure (printed on
stderr), 2 on a usage error.
"""

from __future__ import annotations

import json
import os
import sys

from conduit_mcp.client import Error

from .http_session import McpHttpSession, SessionError
from .scenarios import SCENARIOS, ScenarioFailure

DEFAULT_PROTOCOL_VERSION = "2025-11-25"  # the runner's own default


def _log(line: str) -> None:
    print(f"conformance-client: {line}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    """Run the scenario named in the environment against the URL in `argv[-1]`."""
    if len(argv) < 2:
        _log("usage: python -m tests.conformance.client <server-url>")
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or DEFAULT_PROTOCOL_VERSION
    handler = SCENARIOS.get(scenario)
    if handler is None:
        _log(f"no handler for scenario {scenario!r} (known: {', '.join(sorted(SCENARIOS))})")
        return 2
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError as exc:
        _log(f"MCP_CONFORMANCE_CONTEXT is not JSON: {exc}")
        return 2
    try:
        session = McpHttpSession(url, version, log=_log)
    except ValueError as exc:
        _log(str(exc))
        return 2
    try:
        with session:
            session.connect()
            handler(session, context if isinstance(context, dict) else {})
    except (Error, SessionError, ScenarioFailure) as exc:
        _log(f"{scenario} failed: {type(exc).__name__}: {exc}")
        return 1
    _log(f"{scenario} completed at protocol version {session.protocol_version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
