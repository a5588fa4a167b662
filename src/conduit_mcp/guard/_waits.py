"""Decisions taken without an event loop until they must wait.

Not a public module. No SDK import. The engine's decisions are coroutines, and all but a few
never suspend: they only wait for a worker thread (a bounded schema check, the pin store's
page check, a read of the store's pins). Each of those waits is a `Wait`, which the
coroutine awaits like any awaitable but which only yields itself: whoever drives the
coroutine performs it. So a decision can be started anywhere, on a thread with no event loop
included (`start`): it either finishes there, or stops at its first `Wait` and comes back as
a `Later`, the suspended coroutine, which an event loop awaits to finish it (performing that
wait and any after it). One copy of the decision code serves both ways.

A `Later` may run each of its steps (the decision code between two waits) under a lock
(`Later.under`): a seam that decides on several threads serialises its decisions with the
steps of one that waits on the loop, and the waits themselves run without the lock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar

_T = TypeVar("_T")

#: Whether this thread is stepping a decision for `start` or a `Later` (then a `Wait` yields
#: itself to it); a decision awaited in a plain task performs its waits itself.
_driving = threading.local()


class Wait:
    """One point where a decision waits: `run()` (an awaitable for the event loop) gives the
    value the decision continues with, or raises into it.

    Args:
        run: called on the event loop when the decision reaches this point; returns the
            awaitable to wait for (e.g. a worker-thread call under a time bound).
    """

    __slots__ = ("run",)

    def __init__(self, run: Callable[[], Awaitable[Any]]) -> None:
        self.run = run

    def __await__(self) -> Generator[Any, Any, Any]:
        if getattr(_driving, "on", False):
            return (yield self)  # `start` or a `Later` drives the decision: it performs it
        return (yield from _awaited(self.run()))  # awaited in a plain task: performed here


class Later(Generic[_T]):
    """A decision stopped at its first `Wait`: await it on an event loop to finish it.

    Args:
        coro: the suspended decision.
        first: what it yielded (its first `Wait`).
    """

    __slots__ = ("_coro", "_item", "_lock")

    def __init__(self, coro: Coroutine[Any, Any, _T], first: Any) -> None:
        self._coro = coro
        self._item = first
        self._lock: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()

    def under(self, lock: contextlib.AbstractContextManager[Any]) -> Later[_T]:
        """Run each remaining step of the decision holding `lock` (not while it waits).
        Returns this `Later`."""
        self._lock = lock
        return self

    def __await__(self) -> Generator[Any, Any, _T]:
        coro, item, lock = self._coro, self._item, self._lock
        while True:
            value: Any = None
            error: BaseException | None = None
            try:
                if isinstance(item, Wait):
                    value = yield from _awaited(item.run())
                else:  # a future of the loop's own: the loop resolves it
                    value = yield item
            except BaseException as exc:  # cancellation included: the decision cleans up
                error = exc
            with lock:
                driving, _driving.on = getattr(_driving, "on", False), True
                try:
                    item = coro.send(value) if error is None else coro.throw(error)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                finally:
                    _driving.on = driving


def _awaited(awaitable: Awaitable[Any]) -> Generator[Any, Any, Any]:
    return (yield from awaitable.__await__())


def start(coro: Coroutine[Any, Any, _T]) -> _T | Later[_T]:
    """Run a decision until it finishes (its value) or reaches its first `Wait` (a `Later`).

    Raises:
        Exception: whatever the decision raised before its first wait.
    """
    driving, _driving.on = getattr(_driving, "on", False), True
    try:
        first = coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    finally:
        _driving.on = driving
    return Later(coro, first)


async def finish(decided: _T | Later[_T]) -> _T:
    """The value of `start`'s answer, on an event loop."""
    if isinstance(decided, Later):
        return await decided
    return decided
