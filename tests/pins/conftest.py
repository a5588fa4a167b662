"""The `pins approve` and `pins revoke` commands require an approver: these tests name one in
the environment (`CONDUIT_MCP_APPROVER`) unless they pass `--approver` or test its absence."""

from __future__ import annotations

import pytest

TEST_APPROVER = "conduit-mcp tests"


@pytest.fixture(autouse=True)
def _approver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDUIT_MCP_APPROVER", TEST_APPROVER)
