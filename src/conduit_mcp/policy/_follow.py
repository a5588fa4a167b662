"""A fleet's policy followed from its pin store: the latest good version, swapped in on change.

Not a public module: `PolicyFollower` is exported by `conduit_mcp.policy`. Every proxy of a
fleet reads the same store, so each applies the version `conduit-mcp policy set` wrote, within
a second of its commit (the store's change feed). A stored version this follower cannot
parse (written by a newer conduit-mcp, or into the table by hand) is logged once and skipped:
the running policy stays.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..pins import PinStore, StoredPolicy
from ._decide import Policy
from ._file import PolicyError

logger = logging.getLogger("conduit_mcp.policy")
logger.addHandler(logging.NullHandler())


def from_stored(stored: StoredPolicy) -> Policy:
    """The `Policy` of a stored version (its `version` set).

    Raises:
        PolicyError: the stored text is not a policy this conduit-mcp reads.
    """
    source = f"policy version {stored.version}"
    return Policy.parse(stored.text, source, version=stored.version)


class PolicyFollower:
    """The current policy of a pin store, followed through its change feed.

    Args:
        store: an open `PinStore` (sqlite file or PostgreSQL; not `":memory:"`).
        on_change: called with each new `Policy` applied (from the watcher's thread), e.g. to
            tell open sessions that their tool list changed.
        interval: seconds between sqlite wake-up reads (`PinStore.watch_policy`).

    Attributes:
        current: the `Policy` in force, or `None` while the store holds no readable policy.

    Raises:
        ValueError: a `":memory:"` store (nobody else can set its policy).
        sqlite3.Error, psycopg.Error: the store cannot be read.
    """

    def __init__(
        self,
        store: PinStore,
        *,
        on_change: Callable[[Policy], object] | None = None,
        interval: float = 0.05,
    ) -> None:
        self._lock = threading.Lock()
        self._on_change = on_change
        self.current: Policy | None = None
        latest = store.policy()
        if latest is not None:
            self._apply(latest, notify=False)
        version = latest.version if latest is not None else 0
        self._watcher: Any = store.watch_policy(self._arrived, version=version, interval=interval)

    def _arrived(self, stored: StoredPolicy) -> None:
        self._apply(stored, notify=True)

    def _apply(self, stored: StoredPolicy, *, notify: bool) -> None:
        try:
            policy = from_stored(stored)
        except PolicyError as exc:
            logger.error(
                "policy version %d not applied (the running one stays): %s", stored.version, exc
            )
            return
        with self._lock:
            if self.current is not None and (self.current.version or 0) >= stored.version:
                return
            self.current = policy
        logger.info("policy version %d applied (%s)", stored.version, stored.digest)
        if notify and self._on_change is not None:
            self._on_change(policy)

    @property
    def version(self) -> int | None:
        """The version in force, or `None`."""
        current = self.current
        return None if current is None else current.version

    def close(self) -> None:
        """Stop following (the current policy stays readable). Idempotent."""
        self._watcher.close()
