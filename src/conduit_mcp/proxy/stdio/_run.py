"""The stdio proxy: the client speaks to our stdin/stdout, the server is our child process.

Not a public module; `run_stdio` is exported from `conduit_mcp.proxy`. A child server is
served by the raw line relay (`_relay`: each line parsed once, passed as read); an HTTP
upstream by `_remote` (each line parsed once, through the guard, to the session client of
`upstream/_session`). A server that exits while its client is still connected (one that
crashes at start, say) leaves one line on the proxy's log with its exit code.

Spec: MCP 2025-11-25 basic/transports "stdio" (the client launches the server as a
subprocess; newline-delimited JSON-RPC on stdin/stdout; the server MAY log to stderr) and
basic/lifecycle "Shutdown" (stdio: close the server's input, wait for it to exit, then SIGTERM,
then SIGKILL).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import anyio
import anyio.abc

from .._message import dump_message
from .._seam import GuardSeam
from .._settings import HttpUpstream
from ._child import SHUTDOWN_GRACE
from ._framing import BlockingLineReader, chunk_size
from ._relay import ChunkReader, Outlet, Relay

# An HTTP upstream's client (`._remote`) is imported when one is named: it reads the SDK's
# header rules, and `import mcp` loads the SDK's client and server whole (most of the proxy's
# start-up time otherwise; bench/proxy_start.py). The relay to a child server needs none of it.

logger = logging.getLogger("conduit_mcp.proxy")

#: The exit code when the server command cannot be started (as a shell's "not found").
EXIT_NOT_STARTED: Final = 127


def exit_code(returncode: int | None) -> int:
    """A child's return code as our exit code: a signal N becomes 128 + N (as a shell does)."""
    if returncode is None:
        return 1
    return 128 - returncode if returncode < 0 else returncode


class _ClientStdio:
    """Our stdin and stdout: the client's side of the stdio transport, with an HTTP upstream
    (the SDK's streams; a child server's relay reads and writes the descriptors on threads of
    its own, `_relay`).

    Reading and writing are asyncio's pipe transports (cancellable at exit, unlike a thread
    blocked in `read`; no thread hop per message). A descriptor asyncio cannot watch (a regular
    file, /dev/null) is read or written in a worker thread instead, and so is an stdout that is
    the same pipe as stderr: asyncio makes its file description non-blocking, which a
    stderr writer sharing it would not expect.
    """

    def __init__(self, stdin_fd: int, stdout_fd: int) -> None:
        self._stdin_fd = stdin_fd
        self._stdout_fd = stdout_fd
        self._reader: asyncio.StreamReader | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = anyio.Lock()

    async def open(self) -> None:
        await self._open_writer()
        mode = os.fstat(self._stdin_fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(self._stdin_fd)):
            return  # a file or /dev/null (no readiness events for epoll): read in a thread
        loop = asyncio.get_running_loop()
        # Reading pauses past twice this: a client faster than the server waits on us.
        reader = asyncio.StreamReader(limit=chunk_size())
        pipe = os.fdopen(self._stdin_fd, "rb", buffering=0, closefd=False)
        try:
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), pipe
            )
            self._transport = transport
            self._reader = reader
        except (ValueError, OSError):
            self._reader = None  # read in a thread

    async def read_chunk(self) -> bytes:
        if self._reader is not None:
            return await self._reader.read(chunk_size())
        return await anyio.to_thread.run_sync(os.read, self._stdin_fd, chunk_size())

    async def _open_writer(self) -> None:
        mode = os.fstat(self._stdout_fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return
        try:
            if os.path.sameopenfile(self._stdout_fd, 2):
                return
        except OSError:
            pass
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(self._stdout_fd, "wb", buffering=0, closefd=False)
        try:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, pipe
            )
        except (ValueError, OSError):
            return
        self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(self, data: bytes) -> None:
        """Write one message's bytes, waiting while the client's pipe is full.

        Raises:
            OSError: the client closed its end (ConnectionResetError, BrokenPipeError).
        """
        if self._writer is not None:
            self._writer.write(data)
            await self._writer.drain()
        else:
            async with self._lock:  # both directions write: lines never interleave
                await anyio.to_thread.run_sync(self.write_all, data)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._stdout_fd, view)
            view = view[written:]


async def run_stdio(
    seam: GuardSeam,
    command: Sequence[str] | None,
    *,
    upstream: HttpUpstream | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    ending: list[str] | None = None,
) -> int:
    """Serve the client on stdio until the server exits (or the client closes our stdin and
    the server then exits); returns the exit code to use.

    Args:
        seam: the guard, ready (`GuardSeam`).
        command: the server's command line (program and arguments), or `None` with
            `upstream`.
        upstream: a Streamable HTTP server to proxy instead of a child process.
        env: the server's environment (default: ours).
        cwd: the server's working directory (default: ours).
        stdin_fd, stdout_fd: the client's side of the transport (default: our 0 and 1).
        ending: given, why the proxy stopped is appended to it (one line for a person).

    Returns:
        The server's exit code (128 + N when signal N ended it), or 127 when it could not be
        started; with `upstream`, 0 when the client closed our stdin.

    SIGINT and SIGTERM received by the proxy are sent on to a child server, which then decides
    how to end.
    """
    if upstream is not None:
        from ._remote import serve_remote

        client = _ClientStdio(stdin_fd, stdout_fd)
        await client.open()
        try:
            code = await serve_remote(seam, client, upstream)
            if ending is not None:
                ending.append("the client closed the connection")
            return code
        finally:
            client.close()
    if not command:
        raise ValueError("a server command or an upstream URL is required")
    if sys.platform == "win32":  # pragma: no cover - no POSIX signals to forward
        return await _run_child(
            seam, (stdin_fd, stdout_fd), command, env, cwd, _no_signals(), ending
        )
    # Signals are caught before the server starts: none can end the proxy without reaching it.
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        return await _run_child(seam, (stdin_fd, stdout_fd), command, env, cwd, signals, ending)


async def _no_signals() -> AsyncIterator[int]:
    await anyio.sleep_forever()
    yield 0  # pragma: no cover - never reached


async def _run_child(
    seam: GuardSeam,
    client: tuple[int, int],
    command: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
    signals: Any,
    ending: list[str] | None = None,
) -> int:
    """The stdio proxy over a child process (see `run_stdio`): the raw line relay, its two
    directions on blocking threads (`_relay`); the loop waits for the child, forwards
    signals and finishes the decisions that must wait. `client`: our stdin and stdout."""
    stdin_fd, stdout_fd = client
    up_read, up_write = os.pipe()  # our end: up_write (the server's stdin)
    down_read, down_write = os.pipe()  # our end: down_read (the server's stdout)
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=up_read,
            stdout=down_write,
            stderr=None,  # inherited: the server's stderr is ours, relayed as written
            env=env,
            cwd=cwd,
        )
    except OSError as exc:
        for fd in (up_read, up_write, down_read, down_write):
            os.close(fd)
        logger.error("cannot start the server %r: %s", command[0], exc.strerror or exc)
        if ending is not None:
            ending.append(f"the server could not be started ({exc.strerror or exc})")
        return EXIT_NOT_STARTED
    # The child holds its ends now: ours closed, so its exit ends our reads.
    os.close(up_read)
    os.close(down_write)
    loop = asyncio.get_running_loop()
    server = Outlet(up_write, owned=True)
    relay = Relay(
        seam.connect(_server_writer(server)),
        Outlet(stdout_fd, owned=False),
        server,
        loop,
        tracing=getattr(seam, "tracing", None),
        on_call=getattr(seam, "on_call", None),
    )
    relay.start()
    client_done = loop.create_future()
    server_done = loop.create_future()
    # The client closed our stdin (not: its line had nowhere to go), and the signals sent on.
    client_ended = threading.Event()
    forwarded: list[int] = []  # the signals sent on to the server

    client_chunks = ChunkReader(stdin_fd).read

    def read_client() -> bytes:
        chunk = client_chunks()
        if not chunk:
            client_ended.set()
        return chunk

    def upward() -> None:
        error: BaseException | None = None
        try:
            relay.client_to_server(BlockingLineReader(read_client, keep_newline=True))
        except BaseException as exc:  # a bug: the proxy ends, the server is stopped
            error = exc
        finally:
            server.close()  # the client closed our stdin: close the server's
            _resolve(loop, client_done, error)

    def downward() -> None:
        error: BaseException | None = None
        try:
            relay.server_to_client(
                BlockingLineReader(ChunkReader(down_read).read, keep_newline=True)
            )
        except BaseException as exc:
            error = exc
        finally:
            _resolve(loop, server_done, error)

    async def shut_down() -> None:
        # The client is gone and the server's stdin closed: wait, then SIGTERM, then SIGKILL.
        await client_done
        with anyio.move_on_after(SHUTDOWN_GRACE):
            await process.wait()
            return
        _signal(process, signal.SIGTERM)
        with anyio.move_on_after(SHUTDOWN_GRACE):
            await process.wait()
            return
        process.kill()

    # Daemon threads: one blocked reading a client that never closes our stdin must not keep
    # the proxy alive once the server is gone.
    threading.Thread(target=upward, name="conduit-mcp client->server", daemon=True).start()
    threading.Thread(target=downward, name="conduit-mcp server->client", daemon=True).start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_forward_signals, process, signals, forwarded)
            tg.start_soon(shut_down)
            # The server's output ended and what it said last is in the client's pipe
            # (each write is complete before the thread reads on).
            await server_done
            await process.wait()
            tg.cancel_scope.cancel()
    finally:
        relay.ended = True
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()
        server.close(wait=False)  # its thread may still be writing (a grandchild's pipe)
        if server_done.done():
            os.close(down_read)  # else its thread still reads it: it ends with the child
    code = exit_code(process.returncode)
    if not client_ended.is_set() and not forwarded:
        crash = _crash(command[0], process.returncode, code)
        if ending is None:
            logger.error("%s", crash)
        else:  # the proxy's one stop line says it (`_launch._stopped`)
            ending.append(crash)
    elif ending is not None:
        ending.append(_why(process.returncode, client_ended.is_set(), forwarded))
    return code


#: How the line ends when the server exited on its own while its client was still connected:
#: the proxy's stop line is then an error (`_launch._stopped`; `wrap/_doctor.py` reads it).
SERVER_EXITED: Final = " while its client was connected"


def _crash(program: str, returncode: int | None, code: int) -> str:
    """The server exited on its own while its client was still connected (a crash at start, a
    fatal error; not after a signal the proxy forwarded): the words for the proxy's line, with
    its exit code (the client sees its pipe close and, in a desktop client, shows this line in
    its MCP log). Only the program is named: its arguments may hold a credential."""
    if returncode is not None and returncode < 0:
        try:
            how = f"was ended by {signal.Signals(-returncode).name} (exit code {code})"
        except ValueError:
            how = f"was ended by signal {-returncode} (exit code {code})"
    else:
        how = f"exited with code {code}"
    return f"the server {program!r} {how}{SERVER_EXITED}"


def _why(returncode: int | None, client_left: bool, forwarded: list[int]) -> str:
    """Why a stdio proxy over a child stopped, for the line it leaves on stderr."""
    if returncode is not None and returncode < 0:
        server = f"the server was ended by {signal.Signals(-returncode).name}"
    else:
        server = f"the server exited with code {returncode}"
    if forwarded:
        name = signal.Signals(forwarded[-1]).name
        return f"{name} received and sent on to the server; {server}"
    if client_left:
        return f"the client closed the connection; {server}"
    return server


def _resolve(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[None], error: BaseException | None
) -> None:
    """From a relay thread: `future` is done, or failed with `error` (nothing when the loop
    is gone already)."""

    def done() -> None:
        if future.done():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    try:
        loop.call_soon_threadsafe(done)
    except RuntimeError:  # the loop is closed: the proxy ended without us
        pass


def _server_writer(server: Outlet) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """Writes a message of the proxy's own (a listing before an unlisted call) to the
    server, from the loop (in a worker thread: the server's pipe may be full)."""

    async def write(message: dict[str, Any]) -> None:
        await anyio.to_thread.run_sync(server.write, dump_message(message))

    return write


async def _forward_signals(process: Any, signals: Any, forwarded: list[int]) -> None:
    async for signum in signals:
        logger.info("forwarding signal %s to the server", signal.Signals(signum).name)
        forwarded.append(signum)
        _signal(process, signal.Signals(signum))


def _signal(process: Any, signum: signal.Signals) -> None:
    if process.returncode is None:
        try:
            process.send_signal(signum)
        except ProcessLookupError:
            pass
