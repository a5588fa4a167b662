"""A bug inside one of the stdio relay's threads ends the proxy (the server stopped, the
error raised to the caller) with nothing unread passed on, instead of leaving a half-dead
relay: conduit-defined (developers' guide "Fail closed").
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import pytest

from conduit_mcp.proxy.stdio import _run as _stdio

#: Says one thing, then never ends on its own (stdin closed or not).
SERVER = (
    "import sys, time\n"
    'sys.stdout.write(\'{"jsonrpc":"2.0","method":"notifications/message",'
    '"params":{"data":"x"}}\\n\'); sys.stdout.flush()\n'
    "time.sleep(120)\n"
)


class _Bug(RuntimeError):
    pass


class _Link:
    def __init__(self, where: str) -> None:
        self.where = where

    def send_notices_to(self, send: Any) -> None:
        pass

    def from_server_now(self, message: dict[str, Any]) -> Any:
        if self.where == "server":
            raise _Bug("server side")
        return ("pass", None)

    def from_client_now(self, message: dict[str, Any]) -> Any:
        if self.where == "client":
            raise _Bug("client side")
        return ("pass", None)


class _Seam:
    def __init__(self, where: str) -> None:
        self.where = where

    def connect(self, write_server: Any) -> _Link:
        return _Link(self.where)


@pytest.mark.parametrize("where", ["server", "client"])
def test_a_bug_in_a_relay_thread_ends_the_proxy_and_stops_the_server(where: str) -> None:
    client_in_r, client_in_w = os.pipe()
    client_out_r, client_out_w = os.pipe()
    os.set_blocking(client_out_r, False)
    if where == "client":
        os.write(client_in_w, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')

    async def main() -> Any:
        with anyio.fail_after(10):  # not the server's 120 s: a TimeoutError is no `_Bug`
            return await _stdio._run_child(
                _Seam(where),  # type: ignore[arg-type]
                (client_in_r, client_out_w),
                [sys.executable, "-c", SERVER],
                None,
                None,
                _stdio._no_signals(),
            )

    try:
        with pytest.raises(BaseException) as raised:
            anyio.run(main)
        error = raised.value
        while not isinstance(error, _Bug) and getattr(error, "exceptions", None):
            (error,) = error.exceptions  # type: ignore[attr-defined]
        assert isinstance(error, _Bug)
        try:
            said = os.read(client_out_r, 65536)
        except BlockingIOError:
            said = b""
        if where == "server":
            assert said == b""  # the line the guard failed on never reached the client
    finally:
        for fd in (client_in_r, client_in_w, client_out_r, client_out_w):
            try:
                os.close(fd)
            except OSError:
                pass


def test_the_guards_notice_follows_the_server_messages_decided_before_it() -> None:
    """A tools/list answer the relay decided and holds to write with the rest of a burst
    reaches the client before a list_changed the guard sends afterwards (a revocation
    applied after the answer was decided): never the notice first, then the stale list."""
    import asyncio
    import json

    from conduit_mcp.proxy.stdio._relay import Outlet, Relay

    read_end, write_end = os.pipe()
    loop = asyncio.new_event_loop()
    try:
        relay = Relay(
            _Link("none"),  # type: ignore[arg-type]
            Outlet(write_end, owned=False),
            Outlet(write_end, owned=False),
            loop,
        )
        answer = b'{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}\n'
        relay._down.add(answer)  # decided, waiting for the burst's end
        notice = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        relay._write_notices([notice])
        got = os.read(read_end, 65536)
        assert got == answer + json.dumps(notice, separators=(",", ":")).encode() + b"\n"
    finally:
        loop.close()
        os.close(read_end)
        os.close(write_end)
