"""`--listen` on an address already taken: one line naming the address and exit 2 (a newcomer
met uvicorn's traceback, after a "listening on" line logged before the bind had failed)."""

from __future__ import annotations

import socket
import subprocess
import sys

from .conftest import CONDUIT


def test_a_taken_address_is_one_line_and_exit_2() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        listen = ["--listen", f"127.0.0.1:{port}"]
        done = subprocess.run(
            [str(CONDUIT), "proxy", "--server-id", "s", *listen, "--", sys.executable, "-c", "1"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert f"conduit-mcp: --listen 127.0.0.1:{port}: " in done.stderr
    assert "address already in use" in done.stderr
    assert "Traceback" not in done.stderr
    assert "listening on" not in done.stderr  # never bound, never announced
