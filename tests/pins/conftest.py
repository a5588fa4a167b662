"""Fixtures of the pins tests.

- The `pins approve` and `pins revoke` commands require an approver: these tests name one in
  the environment (`CONDUIT_MCP_APPROVER`) unless they pass `--approver` or test its absence.
- `location`: a store on each database a fleet may share, a sqlite file and PostgreSQL (one
  server per xdist worker, `tests/pgserver.py`; a new schema a test, its tables made);
  a module that also tests the in-memory store defines its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conduit_mcp.pins import PinStore

TEST_APPROVER = "conduit-mcp tests"


@pytest.fixture(autouse=True)
def _approver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDUIT_MCP_APPROVER", TEST_APPROVER)


@pytest.fixture(params=["file", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A pin store's location: a sqlite file under `tmp_path`, or a PostgreSQL URL whose
    schema is made (`PinStore` opened and closed once)."""
    if request.param == "file":
        return str(tmp_path / "pins.db")
    url: str = request.getfixturevalue("postgres_url")
    PinStore(url).close()
    return url
