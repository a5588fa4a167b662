"""`conduit-mcp doctor`: each wrapped server of a client config started as its client starts it,
listed through the proxy, and what came of it.

Not a public module; `doctor_config` and `ServerCheck` are exported from `conduit_mcp.wrap`.

Each wrapped entry's own command line runs (the proxy, which starts the server or reaches its
upstream) with the entry's `env` over this process's environment and in its `cwd`, two options
added before `--`: `--log FILE` (a temporary file: the proxy's decisions come back as JSON
lines, one per tool) and no `--quiet` (which keeps those lines out). Over the proxy's stdin and
stdout, as a client: `initialize` (MCP 2025-11-25, the newest version with the handshake every
server speaks), `notifications/initialized`, `tools/list` page after page. Then stdin closes
(the proxy then ends its server, as when a client quits) and the process group is ended if it
has not ended within `GRACE` seconds. The listing is the client's own: with a pin store, new
tools are queued for review there, as the client's first listing queues them.

This room imports neither the proxy nor an SDK: the proxy is a program here, run as the client
runs it, and the few JSON-RPC messages are written and read as lines (MCP 2025-11-25
basic/transports, "stdio").
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from ._config import config_entries, is_wrapped, read_config

#: The protocol version `doctor` offers (the proxy and the server may answer with an older one).
PROTOCOL_VERSION: Final = "2025-11-25"
#: Seconds a server has, by default, to answer `initialize` and every page of `tools/list`.
DEFAULT_TIMEOUT: Final = 30.0
#: Seconds the proxy has to exit after its stdin closes before its process group is ended
#: (the proxy itself gives its server 2 s, then 2 s more after SIGTERM).
GRACE: Final = 10.0
#: A `tools/list` listing of more pages than this is cut (a server paging forever).
MAX_PAGES: Final = 1000
#: The longest line read from the proxy (bytes); a longer one fails the check.
MAX_LINE: Final = 64 * 1024 * 1024
#: The longest `why` kept (characters).
MAX_WHY: Final = 300

_MARKERS: Final = ("--", "--upstream")


@dataclass(frozen=True, slots=True)
class ServerCheck:
    """What `doctor_config` found for one server entry.

    Attributes:
        name: the entry's key (the proxy's `--server-id` when wrapped).
        state: `"ok"` (the tools listed, none held back), `"held"` (the proxy holds or blocks
            some: not listed to the client until approved), `"cannot_start"` (no listing:
            `why` says what happened) or `"not_wrapped"` (the client starts it without the
            proxy; nothing was run).
        listed: how many tools the client was listed.
        held: tools held for approval (new ones, with a pin store or `--new hold`), sorted.
        blocked: tools blocked (changed since approved, or revoked), sorted.
        rejected: how many tools intake removed from the listing as malformed.
        why: for `"cannot_start"` one line: the proxy's error, the server's last stderr line,
            or what did not answer in time; the exit code when it exited. Server text,
            unescaped: show it with the CLI's escaping.
        store: the entry's `--pins` location (`None`: pins in memory), as written.
        server_id: the entry's `--server-id`.
    """

    name: str
    state: str
    listed: int = 0
    held: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    rejected: int = 0
    why: str = ""
    store: str | None = None
    server_id: str | None = None


def doctor_config(path: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[ServerCheck]:
    """Start each wrapped server entry of the config at `path` as its client would, list its
    tools through the proxy, and say what came of it.

    Args:
        path: a client config (the formats of `wrap_config`).
        timeout: seconds each server has for `initialize`, and again for each page of
            `tools/list`.

    Returns:
        An iterator of one `ServerCheck` per entry, in the config's order, each yielded once
        its server was checked (entries run one after another). The config is read before
        this returns; each server is started when its check is asked for.

    Raises:
        OSError: the config cannot be read.
        ConfigSyntaxError: the config is not one its client reads.
        ValueError: the config holds no server table.

    Spec: MCP 2025-11-25 basic/lifecycle (initialize, then notifications/initialized) and
    server/tools (tools/list, nextCursor), over basic/transports "stdio".
    """
    entries = config_entries(path, read_config(path))
    return (_check(name, entry, timeout) for name, entry in entries)


def _check(name: str, entry: Any, timeout: float) -> ServerCheck:
    if not is_wrapped(entry):
        return ServerCheck(name, "not_wrapped")
    args = [str(a) for a in entry["args"]]
    options = args[: _options_end(args)]
    store, server_id = _option(options, "--pins"), _option(options, "--server-id")
    with tempfile.TemporaryDirectory(prefix="conduit-mcp-doctor-") as scratch:
        log = Path(scratch) / "proxy.jsonl"
        argv = [str(entry["command"]), *_with_log(args, log)]
        env = {**os.environ, **_strings(entry.get("env"))}
        cwd = entry.get("cwd") if isinstance(entry.get("cwd"), str) else None
        why = None
        try:
            with _Proxy(argv, env, cwd, Path(scratch) / "stderr") as proxy:
                try:
                    listed = proxy.list_tools(timeout)
                except _Failed as failure:
                    why = proxy.explain(failure, log)
        except OSError as exc:  # the program cannot be run at all
            why = f"{argv[0]}: {exc.strerror or exc}"
        if why is not None:
            return ServerCheck(
                name, "cannot_start", why=_line(why), store=store, server_id=server_id
            )
        decided, rejected = _decisions(log)
    held = tuple(sorted(decided.get("held", ())))
    blocked = tuple(sorted(decided.get("blocked", ())))
    return ServerCheck(
        name,
        "held" if held or blocked else "ok",
        listed,
        held,
        blocked,
        rejected,
        store=store,
        server_id=server_id,
    )


def _options_end(args: list[str]) -> int:
    """Where the proxy's options end in a wrapped entry's args: at `--` or `--upstream`."""
    return min((args.index(m) for m in _MARKERS if m in args), default=len(args))


def _option(options: list[str], flag: str) -> str | None:
    """The value of the last `flag VALUE` (or `flag=VALUE`) among `options`."""
    value = None
    for at, word in enumerate(options):
        if word == flag and at + 1 < len(options):
            value = options[at + 1]
        elif word.startswith(flag + "="):
            value = word[len(flag) + 1 :]
    return value


def _with_log(args: list[str], log: Path) -> list[str]:
    """The entry's args with `--log LOG` as the last option (so it is the one the proxy takes)
    and without `--quiet` (under which the proxy logs no per-tool decision)."""
    end = _options_end(args)
    options = [word for word in args[:end] if word != "--quiet"]
    return [*options, "--log", str(log), *args[end:]]


def _strings(env: Any) -> dict[str, str]:
    if not isinstance(env, dict):
        return {}
    return {str(k): str(v) for k, v in env.items() if isinstance(v, (str, int, float))}


def _line(text: str) -> str:
    """One line of at most `MAX_WHY` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_WHY else flat[: MAX_WHY - 1] + "…"


def _decisions(log: Path) -> tuple[dict[str, set[str]], int]:
    """The tools of each pin decision the proxy logged (`held`, `blocked`, `pinned`, ...; a
    tool under its last one), and how many tools intake removed (`tool_rejected`)."""
    last: dict[str, str] = {}
    rejected = 0
    with contextlib.suppress(OSError), log.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                event = json.loads(line).get("event")
            except (ValueError, AttributeError):
                continue
            if not isinstance(event, dict):
                continue
            if event.get("kind") == "tool_rejected":
                rejected += 1
            elif event.get("kind") in ("tool_new", "tool_changed") and isinstance(
                event.get("tool"), str
            ):
                last[event["tool"]] = str(event.get("decision"))
    found: dict[str, set[str]] = {}
    for tool, decision in last.items():
        found.setdefault(decision, set()).add(tool)
    return found, rejected


class _Failed(Exception):
    """The check stopped: `what` did not get an answer (`None`: the proxy had exited)."""

    def __init__(self, what: str, detail: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.detail = detail


class _Proxy:
    """The wrapped entry's process, spoken to as its client would over stdin and stdout."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str | None, err: Path) -> None:
        self._err_path = err
        self._err: IO[bytes] = err.open("wb")
        posix = os.name == "posix"
        try:
            self.process = subprocess.Popen(  # the config's own command line
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._err,
                env=env,
                cwd=cwd,
                start_new_session=posix,  # the proxy and its server end together (killpg)
            )
        except BaseException:
            self._err.close()
            raise
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0

    def __enter__(self) -> _Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                line = stdout.readline(MAX_LINE + 1)
                if not line:
                    break
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def list_tools(self, timeout: float) -> int:
        """`initialize`, `notifications/initialized`, then every page of `tools/list`.

        Returns:
            How many tools were listed.

        Raises:
            _Failed: no answer in time, the process exited, or an error answer.
        """
        self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "conduit-mcp doctor", "version": "1"},
            },
            timeout,
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        count, cursor = 0, None
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            page = self._request("tools/list", params, timeout)
            tools = page.get("tools")
            count += len(tools) if isinstance(tools, list) else 0
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
        return count

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            stdin.flush()
        except (OSError, ValueError):  # the proxy has exited: the next read says so
            pass

    def _request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise _Failed(method, f"no answer to {method} in {timeout:g} s") from None
            if line is None:
                raise _Failed(method)
            if len(line) > MAX_LINE:
                raise _Failed(method, f"an answer to {method} longer than {MAX_LINE} bytes")
            try:
                message = json.loads(line)
            except ValueError:
                raise _Failed(method, "the proxy wrote a line that is not JSON") from None
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:  # the server asks something: no
                self._answer(message)
            elif message.get("id") == request_id:
                if isinstance(message.get("result"), dict):
                    return dict(message["result"])
                error = message.get("error")
                text = error.get("message") if isinstance(error, dict) else None
                raise _Failed(method, f"{method} answered with an error: {text}")

    def _answer(self, request: dict[str, Any]) -> None:
        if request.get("method") == "ping":
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
            return
        error = {"code": -32601, "message": "conduit-mcp doctor answers no requests"}
        self._send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def explain(self, failure: _Failed, log: Path) -> str:
        """One line for a check that stopped: what did not answer, the proxy's last error (or
        the server's last stderr line), and the exit code when the proxy exited."""
        code = None
        if not failure.detail:  # the proxy exited: its code, once it has
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(GRACE)
        said = _last_error(log)
        if not said or _SERVER_EXITED in said:  # the server's own last words say more
            said = _last_line(self._err_path) or said
        parts = [failure.detail or f"exited before answering {failure.what}"]
        if code is not None:
            parts[0] = f"exited with code {code} before answering {failure.what}"
        if said:
            parts.append(said)
        return ": ".join(parts)

    def close(self) -> None:
        """Close stdin (the client quits), then end the process group if it lingers."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(GRACE)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(GRACE)
            except subprocess.TimeoutExpired:
                self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))
                self.process.wait()
        if os.name == "posix":  # what the server left behind in the group (a grandchild)
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self._reader.join(GRACE)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._err.close()

    def _signal(self, number: int) -> None:
        with contextlib.suppress(OSError):
            if os.name == "posix":
                os.killpg(self.process.pid, number)
            else:
                self.process.send_signal(number)


#: What the proxy's error record says when the server exited under it (`proxy/stdio/_run.py`
#: `SERVER_EXITED`): the exit code is in doctor's line already, the server's stderr says why.
_SERVER_EXITED: Final = " while its client was connected"

#: The line the proxy leaves on stderr when it stops (`proxy/_launch.py` `_stopped`): doctor
#: says the exit code itself and quotes the server's own last line instead.
_PROXY_STOPPED: Final = "conduit-mcp proxy: stopped "


def _last_error(log: Path) -> str:
    """The message of the last error (or critical) record the proxy logged."""
    message = ""
    with contextlib.suppress(OSError), log.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("level") in ("error", "critical"):
                message = str(record.get("message", ""))
    return message


def _last_line(path: Path) -> str:
    """The last line that is not blank of a file (among its last 64 KiB), other than the
    proxy's own stop line."""
    try:
        with path.open("rb") as stream:
            stream.seek(0, os.SEEK_END)
            size = stream.tell()
            stream.seek(max(0, size - 65536))
            tail = stream.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [
        line.strip()
        for line in tail.splitlines()
        if line.strip() and not line.startswith(_PROXY_STOPPED)
    ]
    return lines[-1] if lines else ""
