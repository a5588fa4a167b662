"""A listing that holds tools leaves ONE line on the proxy's stderr (what a desktop client's MCP
log shows): how many tools are held and the `pins pending` command that lists them, naming the
program as it runs (`conduit-mcp` on PATH, else its absolute path). Not one line per tool, not
again for an identical re-listing, and kept under --quiet: it is the operator's only clue to an
empty tool list. The real proxy, over stdio, as `wrap --pins` launches it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.forkserver import spawn

from .conftest import CONDUIT, proxy_argv
from .test_list_changed import Lines

SERVER = """
import json, sys
TOOLS = [
    {"name": n, "description": "Tool " + n + ".", "inputSchema": {"type": "object"}}
    for n in ("alpha", "beta", "gamma")
]
for raw in sys.stdin.buffer:
    m = json.loads(raw)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
             "serverInfo": {"name": "s", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": TOOLS}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


CLIENT = b"".join(
    [
        _line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        ),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        _line({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ]
)


def _run(tmp_path: Path, *options: str, path: str) -> tuple[list[dict[str, Any]], str]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    done = subprocess.run(
        [*proxy_argv("demo", *options), "--", sys.executable, str(script)],
        input=CLIENT,
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": path},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode()


def _path(on_path: bool) -> str:
    bin_dir = Path(sys.executable).parent
    rest = [p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != bin_dir]
    return os.pathsep.join([str(bin_dir), *rest] if on_path else rest)


@pytest.mark.parametrize(
    ("quiet", "on_path"),
    [
        (False, True),
        (True, False),
        # The other two pairs only combine the same two choices again: make test-slow.
        pytest.param(True, True, marks=pytest.mark.slow),
        pytest.param(False, False, marks=pytest.mark.slow),
    ],
)
def test_one_line_names_the_held_tools_and_the_review_command(
    tmp_path: Path, quiet: bool, on_path: bool
) -> None:
    """The line is there with and without --quiet, and names `conduit-mcp` when it is on PATH,
    else its absolute path. `make test` runs each choice once (quiet off with the program on
    PATH, quiet on without it); `make test-slow` the two remaining pairs."""
    store = tmp_path / "pins.db"
    options = ["--pins", str(store), "--held-dir", str(tmp_path / "held")]
    replies, stderr = _run(tmp_path, *options, *(["--quiet"] if quiet else []), path=_path(on_path))
    listings = [r["result"]["tools"] for r in replies if r.get("id") in (2, 3)]
    assert listings == [[], []]  # every tool held: the client sees none
    program = "conduit-mcp" if on_path else str(CONDUIT.resolve())
    review = shlex.join([program, "pins", "pending", "--store", str(store.resolve())])
    notices = [line for line in stderr.splitlines() if "held for approval" in line]
    assert notices == [
        "conduit-mcp proxy: WARNING 3 tools held for approval (not listed to the client): "
        f"review them with: {review} --server-id demo"
    ], stderr
    # The printed command works as pasted into a shell with that PATH.
    pending = subprocess.run(
        shlex.split(notices[0].split("review them with: ", 1)[1]),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PATH": _path(on_path)},
    )
    assert [line.split()[0] for line in pending.stdout.splitlines() if line[:1] != " "] == [
        "new",
        "new",
        "new",
    ]


def test_the_http_upstream_proxy_leaves_the_same_line(
    tmp_path: Path, sdk_http_server: tuple[str, Path]
) -> None:
    """`--upstream URL` decides through the SDK stream seam: the same one line.

    The client waits for the answer to `initialize` before it sends anything else, as the
    spec asks (2025-11-25 basic/lifecycle "Initialization": the client SHOULD NOT send
    requests other than pings before the server has responded to the initialize request).
    Over HTTP that answer carries the `Mcp-Session-Id` every later request needs; lines
    written before it came back raced it, and under load reached the server without one
    (400 "Missing session ID": nothing listed, nothing held)."""
    url, _ = sdk_http_server
    store = tmp_path / "pins.db"
    proxy = spawn(  # forked from a warm interpreter (tests/forkserver.py)
        [*proxy_argv("demo", "--pins", str(store), "--held-dir", str(tmp_path)), "--upstream", url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PATH": _path(True)},
        text=True,
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    lines = Lines(proxy.stdout)
    try:
        initialize, *rest = CLIENT.decode().splitlines(keepends=True)
        proxy.stdin.write(initialize)
        proxy.stdin.flush()
        replies = [lines.next(timeout=30.0)]
        proxy.stdin.write("".join(rest))
        proxy.stdin.flush()
        replies += [lines.next(timeout=30.0) for _ in range(2)]  # the two listings
        assert replies[0]["id"] == 1 and sorted(r["id"] for r in replies[1:]) == [2, 3]
        assert [sorted(r) for r in replies] == [["id", "jsonrpc", "result"]] * 3, replies
        proxy.stdin.close()
        proxy.wait(timeout=30)
        assert proxy.stderr is not None
        stderr = proxy.stderr.read()
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()
        lines.thread.join(timeout=10)
        for stream in (proxy.stdout, proxy.stderr):
            if stream is not None:
                stream.close()
    notices = [line for line in stderr.splitlines() if "held for approval" in line]
    pending = subprocess.run(
        [str(CONDUIT), "pins", "pending", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    held = [line for line in pending.stdout.splitlines() if line.startswith("new ")]
    assert len(held) >= 2, (stderr, pending.stdout)
    assert notices == [
        f"conduit-mcp proxy: WARNING {len(held)} tools held for approval (not listed to the "
        f"client): review them with: conduit-mcp pins pending --store {store.resolve()} "
        "--server-id demo"
    ], stderr
