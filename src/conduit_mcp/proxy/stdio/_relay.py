"""The stdio-to-stdio relay: newline-delimited JSON-RPC read as bytes from each side, each line
parsed once, decided by the guard, and written on as read when the guard lets it pass.

Not a public module. No SDK stream pair, no task or memory stream between the two pipes, and
no event-loop wake-up on the common path: one blocking thread per direction reads a line,
asks the guard (`MessageLink.from_client_now` / `from_server_now`, under the engine's lock)
and writes, so messages keep their order and a round trip costs the proxy two thread
wake-ups, as a bare relay does. A decision that must wait (the proxy's own listing before a
call naming a tool the guard never saw, a pin or schema check in a worker thread) is finished
on the event loop while its thread waits for it, so the order of each direction is kept
exactly. A line goes out as soon as its thread would otherwise wait for input; the lines of a
pipelined burst (already read) go out in one write (`_Batch`). Lines that are no message are
answered (client) or dropped (server) as the SDK-based transport does.

Spec: MCP 2025-11-25 basic/transports "stdio" (newline-delimited JSON-RPC on stdin/stdout,
UTF-8, no embedded newlines); JSON-RPC 2.0 section 5.1 (the error for an unreadable request).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import select
import threading
from collections.abc import Awaitable
from typing import Any

from .._message import dump_message, invalid_line_answer, read_message
from .._seam import Decision, MessageLink
from ._framing import BlockingLineReader, chunk_size

logger = logging.getLogger("conduit_mcp.proxy")


class Gone(Exception):
    """The other side of a pipe is closed: nothing more can be written to it."""


class Outlet:
    """One side's input pipe (a file descriptor), written by whole lines from any thread:
    one line at a time (a lock), each written completely before the next (so the guard's own
    notifications fall between lines, never inside one). Blocking: a full pipe makes the
    writer wait, so a side that reads slowly slows the other down, never our memory.

    Args:
        fd: the descriptor (a pipe, a file, a terminal; one set non-blocking by someone else
            is waited on with `select`).
        owned: close `fd` on `close` (the server's stdin; never our own stdout).
    """

    def __init__(self, fd: int, *, owned: bool) -> None:
        self._fd = fd
        self._owned = owned
        self._lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes | bytearray) -> None:
        """Write one line (newline included).

        Raises:
            Gone: the reader closed its end (or `close` was called).
        """
        # acquire / release rather than `with`: a `with` on a C lock looks up and binds its
        # `__enter__` and `__exit__` on every write (the relay writes twice a round trip).
        lock = self._lock
        lock.acquire()
        try:
            if self.closed:
                raise Gone
            try:
                try:  # the common case: the pipe takes the whole line at once
                    written = os.write(self._fd, data)
                except BlockingIOError:  # a descriptor someone made non-blocking: it is full
                    written = 0
                if written != len(data):
                    _write_all(self._fd, memoryview(data)[written:])
            except OSError as exc:  # BrokenPipe, ConnectionReset, a closed descriptor
                self.closed = True
                raise Gone from exc
        finally:
            lock.release()

    def close(self, *, wait: bool = True) -> None:
        """No more writes; an owned descriptor is closed once a write in progress ends.
        Idempotent. With `wait=False` a write in progress (a full pipe nobody reads) is not
        waited for: it is the last one, and the descriptor stays open."""
        if not self._lock.acquire(blocking=wait):
            self.closed = True
            return
        try:
            self.closed = True
            if self._owned:
                self._owned = False
                try:
                    os.close(self._fd)
                except OSError:
                    pass
        finally:
            self._lock.release()


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:  # a descriptor someone made non-blocking: wait for room
            select.select([], [fd], [])
            continue
        view = view[written:]


def read_chunk(fd: int) -> bytes:
    """The next chunk of `fd` (blocking; `b""` at the end or when `fd` fails)."""
    while True:
        try:
            return os.read(fd, chunk_size())
        except BlockingIOError:  # a descriptor someone made non-blocking: wait for data
            select.select([fd], [], [])
        except OSError:
            return b""


class ChunkReader:
    """`read_chunk` for one thread's descriptor, read into a buffer of `chunk_size()` bytes
    kept for it; each chunk handed out as `bytes` of what came.

    Why: `os.read(fd, n)` allocates `n` bytes per read and shrinks them to what came. 256 KiB
    is past glibc's mmap threshold (128 KiB; raised only when a block that large is freed,
    which a shrunk one never is), so every read of a small message cost an mmap, an mremap
    and a munmap, and page faults on the fresh memory: about half the stdio proxy's CPU per
    round trip (docs/performance.md, 2026-12-02).

    Args:
        fd: a blocking descriptor (one made non-blocking by someone else is waited on with
            `select`).
    """

    __slots__ = ("_buffer", "_fd", "_view")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray(chunk_size())
        self._view = memoryview(self._buffer)

    def read(self) -> bytes:
        """The next chunk (blocking; `b""` at the end or when the descriptor fails). Hand
        the reader this bound method (a call of the instance goes through `__call__`'s
        lookup each time)."""
        if _readv is None:  # no readv (not POSIX)
            return read_chunk(self._fd)
        while True:
            try:
                size = _readv(self._fd, [self._buffer])
            except BlockingIOError:
                select.select([self._fd], [], [])
            except OSError:
                return b""
            else:
                return self._view[:size].tobytes()

    __call__ = read


_readv = getattr(os, "readv", None)


class Relay:
    """Both directions of one stdio connection through the guard, each on a thread of its own.

    Args:
        link: the guard's decisions (`GuardSeam.connect`).
        to_client: the client's input (our stdout).
        to_server: the server's stdin.
        loop: the event loop that finishes the decisions that must wait.
        tracing: the proxy's `Tracing` (`_tracing.py`), or `None` (off: no cost but a test).
        on_call: called once per `tools/call` request from the client (metrics), or `None`.
    """

    def __init__(
        self,
        link: MessageLink,
        to_client: Outlet,
        to_server: Outlet,
        loop: asyncio.AbstractEventLoop,
        *,
        tracing: Any = None,
        on_call: Any = None,
    ) -> None:
        self._link = link
        self._tracing = tracing
        self._on_call = on_call
        self._to_client = to_client
        self._to_server = to_server
        self._loop = loop
        self.ended = False  # the proxy is ending: a late decision is not acted on
        #: the server's messages decided and not yet written to the client (`server_to_client`)
        self._down = _SharedBatch(to_client, quiet=True)

    def start(self) -> None:
        """Deliver the guard's own notifications to the client (call on the relay's loop)."""
        self._link.send_notices_to(self._notify)

    def _notify(self, messages: list[dict[str, Any]]) -> None:
        # On the loop: written from a thread (the client's pipe may be full), between lines.
        threading.Thread(
            target=self._write_notices, args=(messages,), name="conduit-mcp notices", daemon=True
        ).start()

    def _write_notices(self, messages: list[dict[str, Any]]) -> None:
        # The server's messages decided before the change the notices announce go first: a
        # tools/list answer decided before a revocation never reaches the client after the
        # list_changed that says it is stale.
        lines = [line for line in map(_dump, messages) if line is not None]
        down = self._down
        with down.lock:
            for line in lines:
                down.add(line)
            down.flush()

    def _decided(self, decided: Decision | Awaitable[Decision]) -> Decision | None:
        """The decision; one that must wait is finished on the loop while this thread waits
        (`None`: the loop is gone, the proxy is ending)."""
        if isinstance(decided, tuple):
            return decided
        try:
            future = asyncio.run_coroutine_threadsafe(_awaited(decided), self._loop)
            return future.result()
        except (RuntimeError, concurrent.futures.CancelledError):  # the loop ended or closed
            return None

    def client_to_server(self, lines: BlockingLineReader) -> None:
        """Client -> guard -> server, in order, until the client's input ends or the server's
        stdin closes. A line that is no message is answered with a JSON-RPC error and not sent;
        a line past `MAX_LINE` is dropped (logged). Blocking: run it on a thread."""
        link = self._link
        server, answers = _Batch(self._to_server), _Batch(self._to_client, quiet=True)
        try:
            while True:
                # About to wait for input: what is due goes now (a line alone went at once).
                if (server.queued or answers.queued) and not lines.holds_line():
                    server.flush()
                    answers.flush()
                line = lines.next_kept("client input")
                if line is None or self.ended:
                    break
                parsed = read_message(line)
                if parsed is None:
                    logger.warning("client sent a line that is not a JSON-RPC message: answered")
                    _answer(answers, server, dump_message(invalid_line_answer(line)), lines)
                    continue
                del line  # a large message is held once, as `data`
                message, data = parsed
                if self._on_call is not None and message.get("method") == "tools/call":
                    self._on_call()
                span = token = None
                if self._tracing is not None:
                    span = self._tracing.request(message)
                    if span is not None:
                        token = self._tracing.enter(span)
                try:
                    now = link.from_client_now(message)
                    if isinstance(now, tuple):  # decided (`_decided` not called: the common case)
                        decided: Decision | None = now
                    else:  # it waits: what came before goes first
                        server.flush()
                        answers.flush()
                        decided = self._decided(now)
                    del now
                    if decided is None:
                        return
                    action, other = decided
                    if action == "answer":
                        if span is not None:
                            self._tracing.answered(message.get("id"), "refused", _reason(other))
                        if (answer := _dump(other)) is not None:
                            _answer(answers, server, answer, lines)
                        continue
                    if action == "drop":
                        continue
                    if action == "replace":
                        replaced = _dump(other)
                        if replaced is None:
                            continue
                        data = replaced
                    if span is not None:  # the server continues the trace (`_meta`)
                        sent = other if action == "replace" else message
                        data = _dump(self._tracing.with_meta(sent, span)) or data
                    server.add(data, now=not lines.holds_line())
                finally:
                    if token is not None:
                        self._tracing.leave(token)
                    del message, data, parsed
            server.flush()
        except Gone:
            logger.info("the server's stdin is closed: client messages are no longer sent")
        finally:
            answers.flush()

    def server_to_client(self, lines: BlockingLineReader) -> None:
        """Server -> guard -> client, in order, until the server's output ends. A line that is
        no message, or past `MAX_LINE`, is dropped (logged): the client never sees bytes the
        guard has not read. After the client went away, the server's output is still read
        (and discarded) so the server never blocks on a full pipe. Blocking: run it on a
        thread."""
        link = self._link
        client = self._down
        while True:
            # About to wait for the server: what is due goes now (a line alone went at once;
            # `queued` read without the lock: a notice queued meanwhile is flushed by its writer).
            if client.queued and not lines.holds_line():
                client.flush()
            line = lines.next_kept("server stdout")
            if line is None:
                break
            parsed = read_message(line)
            del line
            if parsed is None:
                logger.warning("server stdout: a line that is not a JSON-RPC message: dropped")
                continue
            message, data = parsed
            del parsed
            tracing = self._tracing
            span = token = None
            if tracing is not None and "method" not in message:  # an answer to a request
                span = tracing.span_of(message.get("id"))
                if span is not None:
                    token = tracing.enter(span)
            try:
                now = link.from_server_now(message)
            finally:
                if token is not None:
                    tracing.leave(token)
            answered = message.get("id")
            failed = "error" in message
            del message
            if isinstance(now, tuple):  # decided (`_decided` not called: the common case)
                decided: Decision | None = now
            else:  # it waits: what came before goes first
                client.flush()
                decided = self._decided(now)
            del now
            if decided is None:
                continue  # the proxy is ending: nothing unread reaches the client
            action, other = decided
            if span is not None:
                verdict = "error" if failed else "passed" if action == "pass" else "withheld"
                tracing.answered(answered, verdict)
            if action == "drop":
                continue
            if action != "pass":
                if (replaced := _dump(other)) is not None:
                    client.add(replaced, now=not lines.holds_line())
                continue
            client.add(data, now=not lines.holds_line())
            del data
        client.flush()


class _Batch:
    """One thread's lines for one outlet, written together once its reader holds no whole
    line (a burst of pipelined messages costs one write, and the two threads hand the GIL
    over once for it, not once per message; a message alone is written at once), or once
    they reach `chunk_size()` bytes.

    Args:
        outlet: where the lines go.
        quiet: the client's side: when it is gone, lines are dropped (logged once) instead of
            raising `Gone`, and the server's output is still read.
    """

    __slots__ = ("_limit", "_outlet", "_quiet", "_size", "queued")

    def __init__(self, outlet: Outlet, *, quiet: bool = False) -> None:
        self._outlet = outlet
        self._quiet = quiet
        #: the lines not yet written, in order
        self.queued: list[bytes | bytearray] = []
        self._size = 0
        self._limit = chunk_size()

    def add(self, data: bytes | bytearray, *, now: bool = False) -> None:
        """Queue one line; with `now` (its reader holds no line after it), write it with
        what is queued at once; past `chunk_size()` bytes queued, write them all.

        Raises:
            Gone: as `flush`.
        """
        queued = self.queued
        if now and not queued:  # a line alone (a sequential round trip): written as it is
            outlet = self._outlet  # `_write`, inline
            if self._quiet and outlet.closed:
                return
            try:
                outlet.write(data)
            except Gone:
                if not self._quiet:
                    raise
                logger.info("client stdout closed")
            return
        queued.append(data)
        self._size += len(data)
        if now or self._size >= self._limit:
            self.flush()

    def flush(self) -> None:
        """Write the queued lines, in order, in one write.

        Raises:
            Gone: the server's stdin is closed (never for a `quiet` batch).
        """
        queued = self.queued
        if not queued:
            return
        data = queued[0] if len(queued) == 1 else b"".join(queued)
        queued.clear()
        self._size = 0
        self._write(data)

    def _write(self, data: bytes | bytearray) -> None:
        outlet = self._outlet
        if self._quiet and outlet.closed:
            return
        try:
            outlet.write(data)
        except Gone:
            if not self._quiet:
                raise
            logger.info("client stdout closed")


class _SharedBatch(_Batch):
    """A `_Batch` that another thread writes through too (the guard's notices join the
    server's messages in order): `add` and `flush` hold `lock` (reentrant)."""

    __slots__ = ("lock",)

    def __init__(self, outlet: Outlet, *, quiet: bool = False) -> None:
        super().__init__(outlet, quiet=quiet)
        #: held around `add` and `flush`; a writer of several lines holds it around them all
        self.lock = threading.RLock()

    def add(self, data: bytes | bytearray, *, now: bool = False) -> None:
        """As `_Batch.add`, under `lock`."""
        lock = self.lock
        lock.acquire()
        try:
            _Batch.add(self, data, now=now)
        finally:
            lock.release()

    def flush(self) -> None:
        """As `_Batch.flush`, under `lock`."""
        lock = self.lock
        lock.acquire()
        try:
            _Batch.flush(self)
        finally:
            lock.release()


def _answer(answers: _Batch, server: _Batch, answer: bytes, lines: BlockingLineReader) -> None:
    """Queue the proxy's own answer to the client; when its reader holds no line after it,
    write what is due, the server's lines first, as `client_to_server` does before it waits
    (the answer queued first: a closed server's stdin still leaves it to the final flush).

    Raises:
        Gone: the server's stdin is closed.
    """
    answers.add(answer)
    if not lines.holds_line():
        server.flush()
        answers.flush()


def _reason(answer: Any) -> str | None:
    """The guard's reason code in its error answer (`error.data.reason`), if any."""
    error = answer.get("error") if isinstance(answer, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    reason = data.get("reason") if isinstance(data, dict) else None
    return reason if isinstance(reason, str) else None


async def _awaited(decided: Awaitable[Decision]) -> Decision:
    return await decided


def _dump(message: dict[str, Any] | None) -> bytes | None:
    """A message the guard wrote, as a line (`None`, logged: JSON cannot hold it)."""
    try:
        return dump_message(message)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        logger.exception("a message the guard wrote could not be written as JSON: dropped")
        return None
