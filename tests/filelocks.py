"""An inter-process lock for the test set-up's one-time installs (npm packages under .cache/)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout


@contextlib.contextmanager
def locked(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive lock on `path` while the block runs.

    Raises:
        TimeoutError: another process held the lock for more than `timeout` seconds.
    """
    lock = FileLock(path)
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise TimeoutError(f"timed out waiting for the install lock {path}") from None
    try:
        yield
    finally:
        lock.release()
