"""`guard_openai_agents_server` on its own: what it accepts and refuses (no openai-agents
needed; the seam itself is tested in test_openai_agents.py)."""

from __future__ import annotations

from typing import Any

import pytest

from conduit_mcp.guard import Guard
from conduit_mcp.guard._frameworks import guard_openai_agents_server


def test_a_non_server_or_a_second_guard_is_refused() -> None:
    """The helper only takes an object with openai-agents' `create_streams()`, once."""

    class Server:
        def create_streams(self) -> Any:
            raise AssertionError("never entered here")

    with pytest.raises(TypeError, match="create_streams"):
        guard_openai_agents_server(Guard("x"), object())
    server = Server()
    assert guard_openai_agents_server(Guard("x"), server) is server
    with pytest.raises(ValueError, match="already guarded"):
        guard_openai_agents_server(Guard("y"), server)
