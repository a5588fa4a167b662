"""A fork server for the suite: processes that import the MCP SDK started from one warm
interpreter by `fork` instead of a fresh interpreter each.

Why: `import mcp` (the SDK builds its pydantic models at import) costs 1.5-2 s of CPU on the
shared 2-vCPU VM, and the suite started about 70 `conduit-mcp proxy --listen` processes and a
dozen SDK test servers in `tests/proxy` alone: 2.4 s of CPU each against 1.1 s for a proxy
that does not load the SDK (measured 2026-12-02 with a `sitecustomize` logging every Python
process's CPU at exit: 173 of the 335 s those processes spent). A forked child is the same
program in a process of its own (its pid, its fds 0-2, its environment and working
directory, its signals, its exit code); what it skips is the interpreter's start and the
imports, which `tests/proxy/test_stdio_start.py`, `tests/test_cli_groups.py` and bench row P3
keep testing with real starts. Used by the fixtures that start such processes
(`tests/proxy/conftest.py` `listening_proxy`, `tests/guard/conftest.py` `start_http`), by
tests that run CLI commands for what they do, and by nothing that tests a start, a process's
own streams, or an import.

`spawn(argv, ...)` returns a `Forked` with the part of `subprocess.Popen`'s interface those
fixtures use (`pid`, `args`, `returncode`, `stdout`, `stderr`, `poll`, `wait`, `communicate`,
`send_signal`, `terminate`, `kill`); `run(argv, ...)` is `subprocess.run` with output captured;
`launched(argv)` is a command line for another program to start (tests/forklaunch.py).
`argv` is this venv's `conduit-mcp` console script, `sys.executable SCRIPT.py ...` or
`sys.executable -c CODE ...` (`forkable`); anything else, or `CONDUIT_TEST_FORK=0` in the
environment, starts a real process with `subprocess.Popen`.

The server (one per xdist worker, started on first use, gone when the worker's end of its
stdin closes) is single-threaded: it forks only from its own loop, never while a lock of
another thread could be held. Each spawn is one Unix-socket connection: the request (JSON)
with the child's three fds (SCM_RIGHTS), the pid back, and later the wait status.
"""

from __future__ import annotations

import atexit
import builtins
import io
import json
import os
import runpy
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import types
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
#: The console script of the conduit-mcp under test (this interpreter's venv).
CONDUIT = Path(sys.executable).parent / "conduit-mcp"
#: What the server imports before it forks: the `--listen` proxy's path and the SDK servers'.
PRELOAD = (
    "conduit_mcp.cli",
    "conduit_mcp.cli._proxy",
    "conduit_mcp.proxy",
    "conduit_mcp.proxy.listen._server",
    "mcp",
    "mcp.server.mcpserver",
    "mcp.server.streamable_http",
    "uvicorn",
    "starlette.applications",
)
_MAX_MESSAGE = 1 << 20
LAUNCHER = Path(__file__).resolve().parent / "forklaunch.py"

_lock = threading.Lock()
_server: tuple[subprocess.Popen[bytes], str] | None = None


class Forked:
    """A child of the fork server, seen as `subprocess.Popen` shows a child.

    Attributes:
        args: the argv it runs; `pid`: its process id; `returncode`: None while it runs, then
            its exit code, or -N when signal N ended it (as `Popen.returncode`).
        stdin: a writable binary pipe, stdout, stderr: readable ones, when `subprocess.PIPE`
            was asked, else None.
    """

    def __init__(
        self,
        connection: socket.socket,
        args: list[str],
        pid: int,
        streams: list[Any],
    ) -> None:
        self._connection = connection
        #: `communicate`'s threads still reading when it timed out (joined at `__exit__`).
        self._readers: list[threading.Thread] = []
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self.stdin, self.stdout, self.stderr = streams

    def _read_status(self, timeout: float | None) -> bool:
        ready, _, _ = select.select([self._connection], [], [], timeout)
        if not ready:
            return False
        data = self._connection.recv(64)
        self._connection.close()
        # No status means the fork server itself went away: report the child as killed.
        self.returncode = int(data) if data else -signal.SIGKILL
        return True

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *_: object) -> None:
        """As `Popen`'s: close the pipes, then wait for the child (after a timed-out
        `communicate`: wait, then let its readers reach the pipes' end first)."""
        if self._readers:
            self.wait()
            for reader in self._readers:
                reader.join(60)
        for stream in (self.stdout, self.stderr, self.stdin):
            if stream is not None:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass
        self.wait()

    def poll(self) -> int | None:
        """The exit code if the child has ended, else None (never blocks)."""
        if self.returncode is None:
            self._read_status(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the child's end; its exit code.

        Raises:
            subprocess.TimeoutExpired: still running after `timeout` seconds.
        """
        if self.returncode is None and not self._read_status(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Write `input` (bytes, or str in text mode) to the child's stdin pipe and close it,
        read its stdout and stderr pipes to their end, then wait for it (as
        `Popen.communicate`); (stdout, stderr), None for a stream not piped.

        Raises:
            subprocess.TimeoutExpired: the child still runs after `timeout` seconds.
        """
        read: dict[str, Any] = {}
        readers = [
            threading.Thread(target=lambda n=name, s=stream: read.__setitem__(n, s.read()))
            for name, stream in (("out", self.stdout), ("err", self.stderr))
            if stream is not None
        ]
        if self.stdin is not None:
            readers.append(threading.Thread(target=_feed, args=(self.stdin, input)))
        for reader in readers:
            reader.start()
        self._readers = readers
        self.wait(timeout)
        for reader in readers:
            reader.join()
        self._readers = []
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return read.get("out"), read.get("err")

    def send_signal(self, signum: int) -> None:
        """Send `signum` to the child unless it has already ended (as `Popen.send_signal`)."""
        if self.poll() is None:
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _feed(stdin: IO[Any], data: Any) -> None:
    try:
        if data:
            stdin.write(data)
        stdin.close()
    except BrokenPipeError:  # the child stopped reading: as Popen.communicate, not an error
        pass


def run(
    argv: list[str],
    *,
    input: Any = None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    text: bool = False,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(argv, capture_output=True, ...)` with the child forked (see `spawn`).

    Args:
        argv, env, cwd, text: as `spawn`'s.
        input: written to the child's stdin, then closed (None: stdin is `/dev/null`).
        timeout: seconds; past it the child is killed (as `subprocess.run`).

    Returns:
        the `CompletedProcess` (args, returncode, stdout, stderr).

    Raises:
        subprocess.TimeoutExpired: the child ran past `timeout` (it is killed first).
    """
    process = spawn(
        argv,
        stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        text=text,
    )
    with process:
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert process.returncode is not None
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def launched(argv: list[str]) -> list[str]:
    """`argv` as a command line another program can start (the proxy under test, its server;
    a TypeScript client, the proxy) whose process is forked by this worker's fork server:
    `python -S tests/forklaunch.py ADDRESS ARGV...` (see that module), or `argv` unchanged when
    the fork server would not run it (or forking is off)."""
    if not forkable(argv):
        return list(argv)
    return [sys.executable, "-S", str(LAUNCHER), _address(), *argv]


def forkable(argv: list[str]) -> bool:
    """Whether the fork server runs `argv` (else `spawn`, `run` and `launched` start it as it
    is): this venv's `conduit-mcp ...`, `sys.executable SCRIPT.py ...` or `sys.executable -c
    CODE ...`, while `CONDUIT_TEST_FORK` is not `0`."""
    if os.environ.get("CONDUIT_TEST_FORK", "1") == "0":
        return False
    if argv[:1] == [str(CONDUIT)]:
        return True
    if argv[:1] != [sys.executable] or len(argv) < 2:
        return False
    return argv[1].endswith(".py") or (argv[1] == "-c" and len(argv) > 2)


def _end(target: Any, inherited: int, mode: int) -> tuple[int, IO[bytes] | None]:
    """The child's fd for a Popen-style `target` (None: a copy of ours, `inherited`) and, for
    PIPE, our end of the pipe."""
    if target is None:
        return os.dup(inherited), None
    if target == subprocess.DEVNULL:
        return os.open(os.devnull, mode), None
    if target == subprocess.PIPE:
        read, write = os.pipe()
        if mode == os.O_WRONLY:
            return write, open(read, "rb")
        return read, open(write, "wb")
    if isinstance(target, int):
        return os.dup(target), None
    return os.dup(target.fileno()), None


def spawn(
    argv: list[str],
    *,
    stdin: Any = subprocess.DEVNULL,
    stdout: Any = None,
    stderr: Any = None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    text: bool = False,
) -> Forked | subprocess.Popen[Any]:
    """Start `argv` as a forked child of the warm server (see the module's docstring).

    Args:
        argv: the `conduit-mcp` console script, `sys.executable SCRIPT.py` or `sys.executable -c
            CODE`, with arguments.
        stdin, stdout, stderr: as `subprocess.Popen`'s: None (inherit), `DEVNULL`, `PIPE`,
            a file object or an fd (stdin `DEVNULL` by default: an xdist worker's own stdin is
            its channel to pytest).
        env: the child's whole environment (default: this process's, as Popen's).
        cwd: the child's working directory (default: this process's).
        text: the pipes in text mode, UTF-8 (as Popen's `text=True`; stdin written through).

    Returns:
        a `Forked`, or a `subprocess.Popen` when `argv` is of neither form or forking is off.
    """
    if not forkable(argv):
        return subprocess.Popen(
            argv, stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=cwd, text=text
        )
    ends = [
        _end(stdin, 0, os.O_RDONLY),
        _end(stdout, 1, os.O_WRONLY),
        _end(stderr, 2, os.O_WRONLY),
    ]
    request = {
        "argv": argv,
        "env": dict(os.environ if env is None else env),
        "cwd": str(cwd or os.getcwd()),
    }
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(_address())
        data = json.dumps(request).encode()
        socket.send_fds(connection, [len(data).to_bytes(4, "big") + data], [e[0] for e in ends])
        reply = b""
        while not reply.endswith(b"\n"):
            byte = connection.recv(1)  # a byte at a time: the exit status may follow at once
            if not byte:
                raise RuntimeError("the fork server closed the connection before the fork")
            reply += byte
    except BaseException:
        connection.close()
        for _, ours in ends:
            if ours is not None:
                ours.close()
        raise
    finally:
        for fd, _ in ends:
            os.close(fd)
    streams: list[Any] = [ours for _, ours in ends]
    if text:
        streams = [
            None if stream is None else io.TextIOWrapper(stream, "utf-8", write_through=index == 0)
            for index, stream in enumerate(streams)
        ]
    return Forked(connection, argv, int(reply), streams)


def _address() -> str:
    """The socket of this process's fork server; started on first use."""
    global _server
    with _lock:
        if _server is None or _server[0].poll() is not None:
            folder = tempfile.mkdtemp(prefix="conduit-fork-")
            address = os.path.join(folder, "s")
            process = subprocess.Popen(
                [sys.executable, __file__, address],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,
            )
            assert process.stdout is not None
            if process.stdout.readline() != b"ready\n":
                raise RuntimeError("the fork server did not start")
            atexit.register(_stop, process, folder)
            _server = (process, address)
        return _server[1]


def _stop(process: subprocess.Popen[bytes], folder: str) -> None:
    if process.stdin is not None:
        process.stdin.close()  # its loop ends on EOF
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(folder, ignore_errors=True)  # the socket's folder


# The server side: everything below runs in the fork server's process and in its children.


def _serve(address: str) -> None:
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:  # a venv without it (the SDK matrix's): its children import it
            pass
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    children: dict[int, socket.socket] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    parent = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([listener, wake_read, parent], [], [])
        if parent in ready and not os.read(parent, 4096):
            break  # the worker is gone
        if wake_read in ready:
            os.read(wake_read, 4096)
        _reap(children)
        if listener in ready:
            connection, _ = listener.accept()
            pid = _fork_one(
                connection, [listener, wake_read, wake_write, parent, *children.values()]
            )
            if pid is not None:
                children[pid] = connection
    for connection in children.values():
        connection.close()


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = children.pop(pid, None)
        if connection is not None:
            try:
                connection.sendall(str(os.waitstatus_to_exitcode(status)).encode())
            except OSError:
                pass
            connection.close()


def _fork_one(connection: socket.socket, inherited: list[Any]) -> int | None:
    header, fds, _, _ = socket.recv_fds(connection, 4, 3)
    if len(header) != 4 or len(fds) != 3:
        connection.close()
        return None
    size = int.from_bytes(header, "big")
    data = b""
    while len(data) < size <= _MAX_MESSAGE:
        chunk = connection.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    request = json.loads(data)
    pid = os.fork()
    if pid == 0:
        _child(request, fds, [connection, *inherited])  # never returns
    for fd in fds:
        os.close(fd)
    connection.sendall(f"{pid}\n".encode())
    return pid


def _child(request: dict[str, Any], fds: list[int], inherited: list[Any]) -> None:
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for item in inherited:
            item.close() if isinstance(item, socket.socket) else os.close(item)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        sys.stdin = open(0, closefd=False, encoding="utf-8")
        raw = open(1, "wb", buffering=0 if unbuffered else -1, closefd=False)
        sys.stdout = io.TextIOWrapper(raw, encoding="utf-8", write_through=unbuffered)
        sys.stderr = open(2, "w", closefd=False, encoding="utf-8", errors="backslashreplace")
        code = _run(request["argv"])
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter's exit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _run(argv: list[str]) -> int:
    if argv[0] == str(CONDUIT):
        from conduit_mcp.cli import main

        sys.argv = list(argv)
        sys.path[:2] = [str(CONDUIT.parent)]  # as the console script's own start
        main()
        return 0
    if argv[1] == "-c":
        # As `python -c CODE ARGS`: argv[0] "-c", the working directory first on the path,
        # the code run as the module `__main__`.
        sys.argv = ["-c", *argv[3:]]
        sys.path[:2] = [""]
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        exec(compile(argv[2], "<string>", "exec"), main.__dict__)
        return 0
    script = argv[1]
    sys.argv = argv[1:]
    sys.path[:2] = [os.path.dirname(os.path.abspath(script))]  # as `python SCRIPT`
    runpy.run_path(script, run_name="__main__")
    return 0


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _serve(sys.argv[1])
