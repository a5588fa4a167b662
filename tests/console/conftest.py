"""tests/console: passwords hashed at a cheap scrypt cost, unless a test needs the real one.

The console checks a login's password with scrypt at the production cost (`SCRYPT_N` = 2**15
in `conduit_mcp.pins._accounts`: about 0.1 s of CPU a check; this folder made 120 of them,
12-19 s of CPU in `make test`). What these tests promise is about sessions, tokens, roles,
limits and pages, not that cost, which tests/pins/test_decisions.py checks in the stored form
(`scrypt$32768$8$1$...`). So each test here makes and checks hashes at N = 2**10, through the
same code (a stored hash carries its N and a check reads it back), except a test marked
`production_scrypt`: one whose promise needs each check to take its real time (logins sent
together must overlap while the limit counts them).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conduit_mcp.pins import _accounts

#: The cost the tests here hash at, unless marked `production_scrypt`.
CHEAP_N = 2**10


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (`--strict-markers` refuses an unknown one)."""
    config.addinivalue_line(
        "markers",
        "production_scrypt: tests/console: hash passwords at the production scrypt cost",
    )


@pytest.fixture(autouse=True)
def cheap_scrypt(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`SCRYPT_N` at `CHEAP_N` for the test (and the accounts its fixtures make), unless it is
    marked `production_scrypt`."""
    if request.node.get_closest_marker("production_scrypt") is None:
        monkeypatch.setattr(_accounts, "SCRYPT_N", CHEAP_N)
    yield
