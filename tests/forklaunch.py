"""`python -S tests/forklaunch.py ADDRESS ARGV...`: a stand-in for the process `ARGV` would be,
for a program that starts its own children (the proxy under test starts its MCP server; the
TypeScript SDK's client starts the proxy).

It hands its own stdin, stdout and stderr to the fork server at `ADDRESS` (tests/forkserver.py),
which forks `ARGV` from its warm interpreter; it then holds none of the three (so the end of the
child's output, or of its input, is the child's alone), passes SIGTERM, SIGINT and SIGHUP on to
the child, and ends as the child ends: the same exit code, or killed by the same signal. What
the parent sees is then the program's own streams, exit and signals, for about 20 ms of CPU
instead of an interpreter's start and imports (`import mcp` alone is 1.5-2 s on the shared VM).

Standard library only (`-S`: no site-packages). `tests/forkserver.py` `launched` builds the
command line; a command the fork server does not run (see its `forkable`) is left as it is.
"""

import json
import os
import signal
import socket
import sys


def main() -> None:
    address, argv = sys.argv[1], sys.argv[2:]
    pid = 0  # the child's, once the fork server has said it
    early: list[int] = []  # signals that came before: the child may run (and say "ready") first

    def relay(number: int, _frame: object) -> None:
        if not pid:
            early.append(number)
            return
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    # Before the fork: a signal in between would end this launcher alone, the child running on.
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, relay)
    request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(address)
    data = json.dumps(request).encode()
    socket.send_fds(connection, [len(data).to_bytes(4, "big") + data], [0, 1, 2])
    reply = b""
    while not reply.endswith(b"\n"):
        byte = connection.recv(1)
        if not byte:
            sys.exit(1)  # the fork server went away before the fork
        reply += byte
    pid = int(reply)
    for number in early:  # a signal from here on is relayed by `relay` itself
        relay(number, None)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    status = b""
    while True:
        chunk = connection.recv(64)
        if not chunk:
            break
        status += chunk
    code = int(status) if status else -signal.SIGKILL  # no status: the server itself is gone
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
