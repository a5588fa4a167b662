"""Fixtures for the agent-framework seams: the hostile server over stdio (its `rugpull`
scenario changes `echo`'s description and inputSchema on the second listing; `add` takes two
integers), and the markers that select one framework's tests.

Each framework's tests import it with `pytest.importorskip`: they run where its extra is
installed (the `openai-agents`, `agent-framework`, `langchain`, `llamaindex` extras) and
are skipped, with the reason, elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.guard.conftest import Hostile, hostile_http  # noqa: F401 - the fixture, shared

MARKERS = {
    "openai_agents": "openai-agents MCP servers under the guard (openai-agents extra)",
    "agent_framework": "Agent Framework MCP tools under the guard (agent-framework extra)",
    "langchain": "langchain.mcp.MCPAdapter under the guard (langchain extra)",
    "llamaindex": "llama-index McpToolSpec under the guard (llamaindex extra)",
    "mcp1": "an mcp 1.x client (langchain-mcp-adapters) in its own venv, through the proxy",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def hostile(tmp_path: Path) -> Callable[[str], Hostile]:
    """`hostile("rugpull")`: a scenario of tests/guard/hostile_server.py and its message log."""

    def make(scenario: str) -> Hostile:
        return Hostile(scenario, tmp_path / f"{scenario}.jsonl")

    return make
