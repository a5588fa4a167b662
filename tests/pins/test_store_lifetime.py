"""A closed PostgreSQL store opens no connection again.

The race this stands for (seen as a `ResourceWarning: psycopg.Connection ... deleted while still
open` failing an unrelated test, 2026-12-02): a call that passed `PinStore`'s closed check, its
connection broken (a database that went away), takes the database's lock just after `close`
released it; reopening then leaves a connection nothing closes. The interleaving is made here
in one thread, in the order the race gives it.
"""

from __future__ import annotations

import gc
import warnings

import pytest

from conduit_mcp.pins import PinStore
from tests.pgserver import postgres_server, postgres_url  # noqa: F401 (fixtures)


def test_a_call_after_close_does_not_reopen_a_broken_connection(
    postgres_url: str,  # noqa: F811 (fixture)
) -> None:
    store = PinStore(postgres_url)
    database = store._open()  # the call passed the closed check ...
    database._conn.close()  # ... its connection broke ...
    store.close()  # ... and close ran before it took the lock
    with pytest.raises(ValueError, match="closed"):
        database.fetch("SELECT 1", ())
    assert database._conn.closed
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        del database, store
        gc.collect()
