"""The stdio proxy as a process: exit code, stderr relayed, signals forwarded, stdout holding
protocol bytes only, lines that are not JSON-RPC answered as JSON-RPC 2.0 section 5.1 says.

conduit-defined behaviour over the MCP stdio transport (2025-11-25 basic/transports "stdio":
the server MAY write logs to stderr; the client MUST NOT treat them as errors; stdout holds
only valid MCP messages).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.guard.conftest import free_port

from .conftest import proxy_argv

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _run(
    command: list[str], stdin: bytes = b"", timeout: float = 30
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*proxy_argv("t"), "--", *command],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def test_exit_code_and_stderr_are_the_servers() -> None:
    done = _run(
        [sys.executable, "-c", "import sys; sys.stderr.write('server says hi\\n'); sys.exit(7)"]
    )
    assert done.returncode == 7
    assert b"server says hi" in done.stderr
    assert done.stdout == b""


def test_a_command_that_cannot_start_exits_127() -> None:
    done = _run(["/nonexistent/server"])
    assert done.returncode == 127
    assert b"cannot start the server" in done.stderr


def test_stdout_holds_protocol_lines_only(tmp_path: Path) -> None:
    """The server prints a non-JSON line and the proxy's own logs are on: stdout still holds
    one JSON-RPC message per line, nothing else."""
    server = tmp_path / "server.py"
    server.write_text(
        "import json, sys\n"
        "print('not json, a stray print', flush=True)\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n"
    )
    lines = [INIT, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    stdin = b"".join(json.dumps(m).encode() + b"\n" for m in lines) + b"{broken\n"
    done = _run([sys.executable, str(server)], stdin)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert {r["id"] for r in replies if "result" in r} == {1, 2}
    errors = [r for r in replies if "error" in r]
    assert errors == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
        }
    ]
    assert b"not a JSON-RPC message" in done.stderr  # the stray server line, logged


def test_sigterm_is_forwarded_and_the_servers_exit_code_returned(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    marker = tmp_path / "got-signal"
    server.write_text(
        "import signal, sys, time, pathlib\n"
        "def bye(signum, frame):\n"
        f"    pathlib.Path({str(marker)!r}).write_text(str(signum))\n"
        "    sys.exit(42)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "print('ready', file=sys.stderr, flush=True)\n"
        "while True: time.sleep(0.1)\n"
    )
    with subprocess.Popen(
        [*proxy_argv("t"), "--", sys.executable, str(server)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        _signalled(process, marker)


def _signalled(process: subprocess.Popen[bytes], marker: Path) -> None:
    try:
        assert process.stderr is not None
        assert process.stderr.readline().strip() == b"ready"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 42
        assert marker.read_text() == str(int(signal.SIGTERM))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_closing_stdin_ends_the_server_then_the_proxy() -> None:
    """The client goes away: the server's stdin is closed, it exits, the proxy exits with its
    code (MCP lifecycle "Shutdown", stdio)."""
    done = _run([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(5)"], timeout=20)
    assert done.returncode == 5


def test_bad_options_are_usage_errors_without_secrets(tmp_path: Path) -> None:
    """A pin store that cannot be opened, a policy value outside its choices, no server: exit 2
    with one line, and a URL's password never echoed."""
    port = free_port()  # nothing listens there
    url = f"postgresql://pins:hunter2@127.0.0.1:{port}/db"
    done = _run_options(["--pins", url, "--", sys.executable, "-c", "pass"])
    assert done.returncode == 2
    assert b"hunter2" not in done.stderr and b"pins:***@" in done.stderr
    missing = tmp_path / "no" / "such" / "folder"
    done = _run_options(["--pins", str(missing / "pins.db"), "--", sys.executable, "-c", "pass"])
    assert done.returncode == 2 and f"(no folder {missing}:".encode() in done.stderr
    assert done.stderr.count(b"\n") == 1 and not missing.exists()
    done = _run_options(["--new", "sometimes", "--", sys.executable, "-c", "pass"])
    assert done.returncode == 2 and b"new must be one of" in done.stderr
    done = _run_options([])
    assert done.returncode == 2


def _run_options(options: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*proxy_argv("t"), *options], capture_output=True, timeout=60, check=False
    )
