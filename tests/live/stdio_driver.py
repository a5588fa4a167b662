"""A small JSON-RPC 2.0 client for an MCP server run as a child process over stdio.

Test support code for the live-server tests, not part of the library. It speaks the stdio
transport as the spec defines it (2025-11-25 basic/transports "stdio": "Messages are delimited
by newlines, and MUST NOT contain embedded newlines"; the server "MUST NOT write anything to its
stdout that is not a valid MCP message"; it "MAY write UTF-8 strings to its standard error").

Every response is parsed with `json.loads` and kept exactly as received (nothing is rewritten),
so a test can hand the `result` object to `Tool.from_wire` / `ToolResult.from_wire`.

Requests the server sends to the client are answered at once from the reader thread, minimally:
`roots/list` gets an empty root list, any other method gets JSON-RPC error -32601 ("Method not
found"). Notifications from the server are recorded and otherwise ignored. Every wait has a
timeout, so a hung server fails the test instead of hanging it.
"""

from __future__ import annotations

import collections
import json
import subprocess
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

JSONObject = dict[str, Any]

#: Seconds a request waits for its response unless the caller says otherwise.
DEFAULT_TIMEOUT = 30.0

#: `tools/list` pages followed at most (a server that cycles its cursors fails, not loops).
MAX_PAGES = 100

#: JSON-RPC 2.0 "Method not found" (spec: jsonrpc.org/specification "5.1 Error object").
METHOD_NOT_FOUND = -32601

_STDERR_LINES_KEPT = 200


class DriverError(Exception):
    """The server broke the conversation: it exited, timed out, or sent something unusable."""


class ServerExited(DriverError):
    """The server's stdout closed (it exited or crashed) while a response was awaited."""


class ResponseTimeout(DriverError):
    """No response arrived within the timeout."""


class JsonRpcError(DriverError):
    """The server answered a request with a JSON-RPC error response.

    Attributes:
        response: the whole response object, as received.
        error: its `error` member, as received.
    """

    def __init__(self, method: str, response: JSONObject) -> None:
        self.response = response
        self.error: Any = response.get("error")
        super().__init__(f"{method}: JSON-RPC error {self.error!r}")


class StdioDriver:
    """One MCP server child process and a JSON-RPC 2.0 conversation with it.

    Use as a context manager (or call `close()`): the child is always killed on exit.
    Requests are meant to be sent one at a time from one thread.

    Attributes:
        notifications: every notification the server sent, as received, in order.
        server_requests: every request the server sent to the client, as received, in order.
        invalid_lines: stdout lines that were not a JSON-RPC message (a stdio transport
            violation; tests assert this stays empty).
        initialize_result: the `initialize` result once `initialize()` succeeded, else `None`.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """Start the child process and its reader threads.

        Args:
            argv: the command line of the server.
            env: the child's whole environment (nothing is inherited).
            cwd: the child's working directory.
            timeout: default seconds to wait for each response.

        Raises:
            OSError: the command cannot be started.
        """
        self.timeout = timeout
        self.notifications: list[JSONObject] = []
        self.server_requests: list[JSONObject] = []
        self.invalid_lines: list[str] = []
        self.initialize_result: JSONObject | None = None
        self._responses: dict[object, JSONObject] = {}
        self._eof = False
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._next_id = 0
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES_KEPT)
        self._proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            bufsize=0,
        )
        self._threads = [
            threading.Thread(target=self._read_stdout, name="mcp-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name="mcp-stderr", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> StdioDriver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Kill the child (if still running), reap it and close every pipe. Idempotent."""
        proc = self._proc
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a zombie we cannot reap
            pass
        for thread in self._threads:
            thread.join(timeout=5)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    @property
    def returncode(self) -> int | None:
        """The child's exit status, or `None` while it runs."""
        return self._proc.poll()

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (for failure messages)."""
        return "".join(self._stderr)

    # -- requests ----------------------------------------------------------------------------

    def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        """Send a request and wait for its response.

        Args:
            method: the JSON-RPC method.
            params: the params object, or `None` to send none.
            timeout: seconds to wait (default: the driver's timeout).

        Returns:
            The whole response object (`result` or `error` member), exactly as received.

        Raises:
            ResponseTimeout: no response within `timeout` seconds.
            ServerExited: the server's stdout closed first.
        """
        with self._cond:
            self._next_id += 1
            request_id = self._next_id
        message: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        wait = self.timeout if timeout is None else timeout
        with self._cond:
            self._cond.wait_for(lambda: request_id in self._responses or self._eof, wait)
            if request_id in self._responses:
                return self._responses.pop(request_id)
            if self._eof:
                raise ServerExited(
                    f"server exited (status {self._proc.poll()}) before answering {method}; "
                    f"stderr:\n{self.stderr_tail()}"
                )
        raise ResponseTimeout(
            f"no response to {method} (id {request_id}) within {wait} s; "
            f"stderr:\n{self.stderr_tail()}"
        )

    def result(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        """Send a request and return its `result` object, exactly as received.

        Raises:
            JsonRpcError: the server answered with a JSON-RPC error.
            DriverError: the response has neither `error` nor an object `result`, or see
                `request`.
        """
        response = self.request(method, params, timeout=timeout)
        if "error" in response:
            raise JsonRpcError(method, response)
        result = response.get("result")
        if not isinstance(result, dict):
            raise DriverError(f"{method}: response has no object result: {response!r}")
        return result

    def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification (no response is expected)."""
        message: JSONObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    # -- MCP ---------------------------------------------------------------------------------

    def initialize(
        self,
        capabilities: JSONObject,
        *,
        protocol_version: str = "2025-11-25",
        client_info: JSONObject | None = None,
    ) -> JSONObject:
        """Run the initialization phase: `initialize`, then `notifications/initialized`.

        Spec: 2025-11-25 basic/lifecycle "Initialization" (the client MUST send `initialize`
        first, and after a successful response MUST send `notifications/initialized`).

        Returns:
            The `initialize` result, exactly as received.

        Raises:
            JsonRpcError, DriverError: as `result`.
        """
        params: JSONObject = {
            "protocolVersion": protocol_version,
            "capabilities": capabilities,
            "clientInfo": client_info or {"name": "conduit-mcp-live-test", "version": "0.1.0"},
        }
        result = self.result("initialize", params)
        self.initialize_result = result
        self.notify("notifications/initialized")
        return result

    def list_tools_pages(self) -> list[JSONObject]:
        """Every `tools/list` result page, following `nextCursor`, each exactly as received.

        Spec: 2025-11-25 server/utilities/pagination (the client sends `nextCursor` back as
        `cursor` until a page has none).

        Raises:
            DriverError: more than `MAX_PAGES` pages, or see `result`.
        """
        pages: list[JSONObject] = []
        params: JSONObject | None = None
        for _ in range(MAX_PAGES):
            page = self.result("tools/list", params)
            pages.append(page)
            cursor = page.get("nextCursor")
            if cursor is None:
                return pages
            params = {"cursor": cursor}
        raise DriverError(f"tools/list did not end within {MAX_PAGES} pages")

    def call_tool(
        self, name: str, arguments: object, *, timeout: float | None = None
    ) -> JSONObject:
        """Send `tools/call` and return the whole response (result or error), as received."""
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    # -- plumbing ----------------------------------------------------------------------------

    def _send(self, message: JSONObject) -> None:
        # ensure_ascii=False keeps the line UTF-8; json.dumps never emits a raw newline.
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            with self._write_lock:
                stdin.write(line.encode("utf-8"))
                stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise ServerExited(
                f"cannot write {message.get('method')!r}: {exc}; stderr:\n{self.stderr_tail()}"
            ) from exc

    def _answer(self, message: JSONObject) -> None:
        # Minimal client: roots/list -> no roots; anything else -> Method not found.
        reply: JSONObject = {"jsonrpc": "2.0", "id": message["id"]}
        if message["method"] == "roots/list":
            reply["result"] = {"roots": []}
        else:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "Method not found"}
        try:
            self._send(reply)
        except ServerExited:
            pass  # the server is gone; the waiting request reports it

    def _dispatch(self, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.invalid_lines.append(line)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.invalid_lines.append(line)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self.server_requests.append(message)
                self._answer(message)
            else:
                self.notifications.append(message)
        elif isinstance(message.get("id"), (int, str)) and (
            "result" in message or "error" in message
        ):
            with self._cond:
                self._responses[message["id"]] = message
                self._cond.notify_all()
        else:
            self.invalid_lines.append(line)

    def _read_stdout(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            for raw in stdout:
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError:
                    self.invalid_lines.append(raw.decode("utf-8", errors="replace"))
                    continue
                if line.strip():
                    self._dispatch(line)
        except (OSError, ValueError):
            pass  # pipe closed under us by close()
        finally:
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    def _read_stderr(self) -> None:
        stderr = self._proc.stderr
        assert stderr is not None
        try:
            for raw in stderr:
                self._stderr.append(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            pass
