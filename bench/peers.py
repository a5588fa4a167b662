"""conduit-mcp's proxy against the peer proxies on three paths, side by side in one run (issue 33).

A side row of `make bench` (bench/run.py calls `rows(quick)`; `--no-proxy` leaves it out); also
runs alone. Every path puts the same echo server behind each candidate and drives it with the
same client; candidates of all three paths take turns in rounds (the starting one rotates), so
a drift in the machine's load hits every path and candidate alike.

- **stdio → stdio**: the client speaks JSON-RPC lines on the candidate's stdin/stdout; the
  server is bench/guard.py's raw echo server (`python bench/guard.py --serve`). Floors: the
  server directly, and a bare byte relay in Python (`python bench/proxy.py --relay threads`:
  two blocking threads, no parsing). Peer: FastMCP `create_proxy` (bench/peers_fastmcp.py).
- **HTTP → stdio server**: the client speaks Streamable HTTP (2025-11-25 session: `initialize`,
  then `Mcp-Session-Id`; answers as JSON or as an event stream, both read) or the older
  HTTP+SSE transport (a `GET /sse` stream carries the answers, POSTs get 202) to a proxy that
  runs the same stdio server. Peers: mcp-proxy (Streamable HTTP and SSE), supergateway
  (Streamable HTTP with `--stateful`: its default stateless mode starts a server process per
  request; and SSE), FastMCP.
- **stdio → HTTP server**: the client speaks stdio to a proxy whose upstream is bench/http_echo.py
  (a raw Streamable HTTP echo server, one per candidate, its idle keep-alive raised to 300 s so
  an upstream connection is closed only by the proxy). Floor: the same HTTP client straight to
  the server. Peers: supergateway, mcp-remote (`--transport http-only`), mcp-proxy, FastMCP.
  The server counts the TCP connections that carried a request (`GET /bench/stats`), so the
  row gives the connections each proxy opened to its upstream.

Measures, per candidate: the wall time of each of 2,000 sequential `tools/call` of `echo`
(p50, p90; 10 batches of 200, each on a fresh client connection for HTTP, kept within the
batch; a batch stops after 3 s, so a candidate slower than 15 ms a call makes fewer), and
throughput with 32 calls in flight (calls per second, median of the
rounds): over stdio 32 requests written ahead on the one pipe, a new one written as each answer
arrives (the answers matched by id); over HTTP 32 keep-alive connections in one session, one
call in flight on each (HTTP/1.1, no pipelining; for SSE the answers come on the one stream).
The proxy's CPU per call during the sequential batches (and at 32 in flight): user + system
time of the proxy's process from /proc/PID/stat (clock ticks, 10 ms: over 2,000 calls about
5 µs per call), its children (the server) not counted. The 1-minute load average at the start
and the end of the run, the higher one judging: above 1.5 no target is claimed, as bench/run.py
does (`met: null` where reached, `false` where missed, `met_if_quiet` the verdict, `verdict`
"not judged (load ...)").

Targets (issue 33): stdio p50 <= the bare relay's + 15 µs and throughput >= 95 % of direct;
HTTP front p50 <= the fastest Streamable HTTP peer's and throughput >= every peer's; stdio →
HTTP p50 <= the fastest peer's, with one upstream connection reused (at most one opened per
batch of sequential calls).

The peers are installed at pinned versions under `.cache/bench-peers/` (idempotent; needs the
npm registry and PyPI once): the npm folder from bench/peer-versions/package.json and its
package-lock.json (`npm ci`), and one venv per Python peer from bench/peer-versions/NAME.txt
(every distribution pinned). `--no-peers` (and the smoke test) runs the floors and conduit-mcp
only, installing nothing.

Usage:
    python bench/peers.py                 # every candidate, full counts (~3-5 minutes)
    python bench/peers.py --quick         # a smoke run: few calls, one throughput round
    python bench/peers.py --no-peers      # floors and conduit-mcp only (no install)
    python bench/peers.py --install       # install the peers and exit
    python bench/peers.py --only stdio,http --output /tmp/peers.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers_client import (  # noqa: E402
    IN_FLIGHT,
    BenchError,
    HttpConn,
    SseClient,
    StdioClient,
    StreamableClient,
)

Client = StdioClient | StreamableClient | SseClient
PYTHON = sys.executable
CONDUIT = str(Path(PYTHON).parent / "conduit-mcp")
STDIO_SERVER = [PYTHON, str(ROOT / "bench" / "guard.py"), "--serve"]
BARE_RELAY = [PYTHON, str(ROOT / "bench" / "proxy.py"), "--relay", "threads", "--"]
HTTP_SERVER = [PYTHON, str(ROOT / "bench" / "http_echo.py")]
FASTMCP_SCRIPT = str(ROOT / "bench" / "peers_fastmcp.py")
#: The pinned peers: package.json + package-lock.json (npm) and NAME.txt (a venv each).
VERSIONS = ROOT / "bench" / "peer-versions"
PEERS_DIR = ROOT / ".cache" / "bench-peers"
NPM_DIR = PEERS_DIR / "npm"
PY_PEERS = ("mcp-proxy", "fastmcp")
NPM_PEERS = ("supergateway", "mcp-remote")
#: The upstream's idle keep-alive: long, so only the proxy closes its upstream connection.
UPSTREAM_KEEP_ALIVE_S = 300
#: bench/run.py's: above this 1-minute load average no target is claimed.
LOAD_LIMIT = 1.5
#: The stdio target: p50 at most the bare relay's plus this, throughput this share of direct.
STDIO_SLACK_US = 15.0
STDIO_THROUGHPUT_SHARE = 0.95
PATHS = ("stdio", "http", "stdio-http")
PATH_TITLES = {
    "stdio": "stdio → stdio server",
    "http": "HTTP → stdio server",
    "stdio-http": "stdio → HTTP server",
}


@dataclass(frozen=True)
class Config:
    """Counts of one run: `rounds` x `calls` sequential calls per candidate, then
    `throughput_rounds` rounds of `throughput_calls` calls with `IN_FLIGHT` in flight."""

    rounds: int = 10
    calls: int = 200
    throughput_rounds: int = 3
    throughput_calls: int = 640
    warmup: int = 50
    #: A batch of sequential calls, or a round in flight, stops after this many seconds (a
    #: candidate slower than 15 ms a call makes fewer calls; the figures say how many).
    batch_seconds: float = 3.0


FULL = Config()
QUICK = Config(
    rounds=2, calls=10, throughput_rounds=1, throughput_calls=64, warmup=5, batch_seconds=1.0
)


# -- candidates ---------------------------------------------------------------------------------


@dataclass
class Candidate:
    """One way from the client to the echo server: how to start it and how to talk to it."""

    path: str  # "stdio", "http", "stdio-http"
    name: str
    role: str  # "ours", "peer", "floor", "info"
    transport: str  # the client's: "stdio", "streamable" or "sse"
    argv: list[str] | None  # the command; `PORT` and `URL` stand for its port and upstream
    url_path: str = "/mcp"  # the HTTP path the client uses ("/sse" for SSE)
    env: dict[str, str] = field(default_factory=dict)
    measured: bool = True  # whether the process started is the proxy (its CPU is measured)
    # Filled by a run:
    latencies: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    cpu_in_flight_s: float = 0.0
    in_flight_calls: int = 0
    connections: list[int] = field(default_factory=list)  # new upstream connections per batch
    requests: int = 0  # upstream POSTs during the sequential batches
    throughput_connections: int = 0
    error: str | None = None


def _npm_bin(name: str) -> str:
    return str(NPM_DIR / "node_modules" / ".bin" / name)


def _venv_bin(peer: str, name: str) -> str:
    return str(PEERS_DIR / f"venv-{peer}" / "bin" / name)


#: Placeholders in a candidate's command: the port it listens on, its upstream's URL.
PORT, URL = "{port}", "{url}"


def candidates(with_peers: bool = True) -> list[Candidate]:
    """Every candidate of the three paths (see the module docstring), peers when `with_peers`."""
    server = STDIO_SERVER
    fastmcp = [_venv_bin("fastmcp", "python"), FASTMCP_SCRIPT]
    conduit = [CONDUIT, "proxy", "--server-id", "bench", "--quiet"]
    mcp_proxy = [_venv_bin("mcp-proxy", "mcp-proxy"), "--log-level", "WARNING"]
    mcp_proxy_listen = [*mcp_proxy, "--host", "127.0.0.1", "--port", PORT, "--", *server]
    gateway = [_npm_bin("supergateway"), "--logLevel", "none"]
    gateway_listen = [*gateway, "--stdio", shlex.join(server), "--port", PORT]
    bare = [*BARE_RELAY, *server]
    remote_env = {"MCP_REMOTE_CONFIG_DIR": str(PEERS_DIR / "mcp-remote-config")}
    found = [
        Candidate("stdio", "direct", "floor", "stdio", server, measured=False),
        Candidate("stdio", "bare byte relay (Python, two threads)", "floor", "stdio", bare),
        Candidate("stdio", "conduit-mcp proxy", "ours", "stdio", [*conduit, "--", *server]),
        Candidate("stdio", "FastMCP create_proxy", "peer", "stdio", [*fastmcp, "--", *server]),
        Candidate(
            "http",
            "conduit-mcp proxy --listen",
            "ours",
            "streamable",
            [*conduit, "--listen", f"127.0.0.1:{PORT}", "--", *server],
        ),
        Candidate("http", "mcp-proxy (Streamable HTTP)", "peer", "streamable", mcp_proxy_listen),
        Candidate("http", "mcp-proxy (SSE)", "peer", "sse", mcp_proxy_listen, url_path="/sse"),
        Candidate(
            "http",
            "supergateway (Streamable HTTP, --stateful)",
            "peer",
            "streamable",
            [*gateway_listen, "--outputTransport", "streamableHttp", "--stateful"],
        ),
        Candidate("http", "supergateway (SSE)", "peer", "sse", gateway_listen, url_path="/sse"),
        Candidate(
            "http",
            "FastMCP create_proxy (Streamable HTTP)",
            "peer",
            "streamable",
            [*fastmcp, "--listen", PORT, "--", *server],
        ),
        Candidate("stdio-http", "direct (HTTP client)", "floor", "streamable", None),
        Candidate(
            "stdio-http",
            "conduit-mcp proxy --upstream",
            "ours",
            "stdio",
            [*conduit, "--upstream", URL],
        ),
        Candidate(
            "stdio-http",
            "supergateway --streamableHttp",
            "peer",
            "stdio",
            [*gateway, "--streamableHttp", URL],
        ),
        Candidate(
            "stdio-http",
            "mcp-remote --transport http-only",
            "peer",
            "stdio",
            [_npm_bin("mcp-remote"), URL, "--transport", "http-only"],
            env=remote_env,
        ),
        Candidate(
            "stdio-http",
            "mcp-proxy --transport streamablehttp",
            "peer",
            "stdio",
            [*mcp_proxy, "--transport", "streamablehttp", URL],
        ),
        Candidate(
            "stdio-http", "FastMCP create_proxy", "peer", "stdio", [*fastmcp, "--upstream", URL]
        ),
    ]
    return [c for c in found if with_peers or c.role != "peer"]


# -- install ------------------------------------------------------------------------------------


def _digest(*paths: Path) -> str:
    sha = hashlib.sha256()
    for path in paths:
        sha.update(path.read_bytes())
    return sha.hexdigest()


def _quiet_run(argv: list[str], cwd: Path | None = None) -> None:
    """Run an installer; its output is shown only when it fails."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise subprocess.CalledProcessError(done.returncode, argv)


def install(log: Callable[[str], None] = print) -> dict[str, str]:
    """Install every peer at its pinned version under `.cache/bench-peers/` (idempotent: a
    stamp holds the digest of the pin files it was installed from). Returns the versions
    installed, by distribution ({"supergateway": "4.0.0", ...}, the SDKs they run on too).

    Raises:
        subprocess.CalledProcessError: npm or pip failed (no registry, a pin gone)."""
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    pins = [VERSIONS / "package.json", VERSIONS / "package-lock.json"]
    stamp = NPM_DIR / ".bench-stamp"
    if not stamp.is_file() or stamp.read_text() != _digest(*pins):
        log("installing the npm peers (npm ci) ...")
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        for pin in pins:
            shutil.copyfile(pin, NPM_DIR / pin.name)
        npm = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
        _quiet_run(npm, cwd=NPM_DIR)
        stamp.write_text(_digest(*pins))
    for peer in PY_PEERS:
        venv = PEERS_DIR / f"venv-{peer}"
        pin = VERSIONS / f"{peer}.txt"
        stamp = venv / ".bench-stamp"
        if stamp.is_file() and stamp.read_text() == _digest(pin):
            continue
        log(f"installing {peer} into {venv.relative_to(ROOT)} ...")
        shutil.rmtree(venv, ignore_errors=True)
        base = getattr(sys, "_base_executable", PYTHON)
        _quiet_run([base, "-m", "venv", str(venv)])
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        pip += ["--disable-pip-version-check", "--no-deps", "-r", str(pin)]
        _quiet_run(pip)
        stamp.write_text(_digest(pin))
    return versions()


def versions() -> dict[str, str]:
    """The installed peers' versions, and those of the SDKs under them."""
    found: dict[str, str] = {}
    modules = NPM_DIR / "node_modules"
    for name in (*NPM_PEERS, "@modelcontextprotocol/sdk"):
        manifest = modules / name / "package.json"
        if manifest.is_file():
            found[f"npm:{name}"] = json.loads(manifest.read_text())["version"]
    for peer in PY_PEERS:
        pin = VERSIONS / f"{peer}.txt"
        for line in pin.read_text().splitlines():
            name, _, version = line.partition("==")
            if name.strip().lower() in (peer, "mcp"):
                found[f"pypi:{name.strip()} ({peer} venv)"] = version.strip()
    return found


# -- processes ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchError(f"exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise BenchError(f"nothing listens on {port} after {seconds:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a process we started and everything it started (its own process group): its
    stdin closed, then SIGTERM, SIGKILL after 5 s; its pipes closed."""
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # a server the proxy left behind, if any
    if process.stdout is not None:
        process.stdout.close()


def _start(
    argv: list[str], log_to: Path, env: dict[str, str] | None = None, stdio: bool = False
) -> subprocess.Popen[bytes]:
    log_to.parent.mkdir(parents=True, exist_ok=True)
    with open(log_to, "ab") as err:
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, all its threads (/proc/PID/stat 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def upstream_stats(port: int) -> tuple[int, int]:
    """(connections, requests) bench/http_echo.py on `port` has counted so far."""
    conn = HttpConn(port)
    try:
        status, _, body = conn.request("GET", "/bench/stats", {})
    finally:
        conn.close()
    if status != 200:
        raise BenchError(f"upstream stats: HTTP {status}")
    stats = json.loads(body)
    return int(stats["connections"]), int(stats["requests"])


@dataclass
class Running:
    """A started candidate: its client, the proxy's pid, the upstream's port (stdio → HTTP)."""

    candidate: Candidate
    client: Client
    pid: int | None
    upstream_port: int | None


@contextlib.contextmanager
def started(candidate: Candidate, logs: Path) -> Iterator[Running]:
    """Start `candidate` (its upstream first, on the stdio → HTTP path) and open its session."""
    with contextlib.ExitStack() as stack:
        upstream_port = None
        url = ""
        slug = "".join(ch if ch.isalnum() else "-" for ch in candidate.name).strip("-")
        if candidate.path == "stdio-http":
            upstream_port = _free_port()
            echo = _start(
                [*HTTP_SERVER, str(upstream_port), str(UPSTREAM_KEEP_ALIVE_S)],
                logs / f"{candidate.path}-{slug}-upstream.log",
            )
            stack.callback(_stop, echo)
            _wait_port(upstream_port, echo)
            url = f"http://127.0.0.1:{upstream_port}/mcp"
        port = _free_port()
        process = None
        if candidate.argv is not None:
            stdio = candidate.transport == "stdio"
            process = _start(
                [a.replace(PORT, str(port)).replace(URL, url) for a in candidate.argv],
                logs / f"{candidate.path}-{slug}.log",
                candidate.env,
                stdio=stdio,
            )
            stack.callback(_stop, process)
            if not stdio:
                _wait_port(port, process)
        client: Client
        if candidate.transport == "stdio":
            assert process is not None
            client = StdioClient(process)
        elif candidate.transport == "sse":
            client = SseClient(port, candidate.url_path)
        else:
            target = port if process is not None else upstream_port
            assert target is not None
            client = StreamableClient(target, candidate.url_path)
        client.open()
        pid = process.pid if process is not None and candidate.measured else None
        yield Running(candidate, client, pid, upstream_port)


# -- the run ------------------------------------------------------------------------------------


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _batch(run: Running, config: Config) -> None:
    """One timed batch of sequential calls: latencies, the proxy's CPU, upstream connections."""
    c = run.candidate
    before = upstream_stats(run.upstream_port) if run.upstream_port else None
    cpu = cpu_seconds(run.pid) if run.pid else 0.0
    run.client.calls(config.calls, c.latencies, config.batch_seconds)
    if run.pid:
        c.cpu_s += cpu_seconds(run.pid) - cpu
    if before is not None and run.upstream_port:
        after = upstream_stats(run.upstream_port)
        c.connections.append(after[0] - before[0])
        c.requests += after[1] - before[1]


def _throughput(run: Running, config: Config) -> None:
    """One round with `IN_FLIGHT` calls in flight: calls per second, the proxy's CPU."""
    c = run.candidate
    before = upstream_stats(run.upstream_port) if run.upstream_port else None
    cpu = cpu_seconds(run.pid) if run.pid else 0.0
    done, seconds = run.client.in_flight(config.throughput_calls, IN_FLIGHT, config.batch_seconds)
    c.throughput.append(done / seconds)
    c.in_flight_calls += done
    if run.pid:
        c.cpu_in_flight_s += cpu_seconds(run.pid) - cpu
    if before is not None and run.upstream_port:
        c.throughput_connections += upstream_stats(run.upstream_port)[0] - before[0]


def measure(
    chosen: list[Candidate],
    config: Config,
    log: Callable[[str], None] = print,
    logs: Path = PEERS_DIR / "logs",
) -> list[Candidate]:
    """Start every candidate, then run the rounds (see the module docstring); a candidate that
    fails (any exception: a peer may misbehave in any way) is recorded with its error and left
    out of the later rounds. Each process's stderr goes to a file in `logs`."""
    with contextlib.ExitStack() as stack:
        running: list[Running] = []
        for candidate in chosen:
            log(f"starting {PATH_TITLES[candidate.path]}: {candidate.name} ...")
            try:
                run = stack.enter_context(started(candidate, logs))
                run.client.calls(config.warmup, None, config.batch_seconds)
                running.append(run)
            except Exception as exc:  # recorded in the row: see the docstring
                candidate.error = f"start: {exc}"
                log(f"  failed: {candidate.error}")

        def turns(index: int) -> list[Running]:
            live = [r for r in running if r.candidate.error is None]
            shift = index % max(len(live), 1)
            return live[shift:] + live[:shift]

        for index in range(config.rounds):
            log(f"sequential round {index + 1}/{config.rounds} (load {os.getloadavg()[0]:.2f})")
            for run in turns(index):
                try:
                    _batch(run, config)
                except Exception as exc:  # recorded in the row: see the docstring
                    run.candidate.error = f"sequential calls: {exc}"
                    log(f"  {run.candidate.name} failed: {run.candidate.error}")
        for index in range(config.throughput_rounds):
            log(f"{IN_FLIGHT} in flight, round {index + 1}/{config.throughput_rounds}")
            for run in turns(index):
                try:
                    run.client.in_flight(4 * IN_FLIGHT, IN_FLIGHT, config.batch_seconds)  # warm
                    _throughput(run, config)
                except Exception as exc:  # recorded in the row: see the docstring
                    run.candidate.error = f"{IN_FLIGHT} in flight: {exc}"
                    log(f"  {run.candidate.name} failed: {run.candidate.error}")
    return chosen


def _figures(c: Candidate) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "role": c.role, "transport": c.transport}
    if c.error is not None:
        out["error"] = c.error
    if c.latencies:
        out["calls"] = len(c.latencies)
        out["p50_us"] = round(statistics.median(c.latencies), 1)
        out["p90_us"] = round(_quantile(c.latencies, 0.9), 1)
        if c.measured and c.argv is not None:
            # /proc counts CPU in clock ticks (10 ms): a --quick run may see none: None, not 0.0.
            cpu = c.cpu_s / len(c.latencies) * 1e6
            out["proxy_cpu_us_per_call"] = round(cpu, 1) if cpu > 0 else None
    if c.throughput:
        out["calls_per_s_in_flight"] = round(statistics.median(c.throughput))
        out["calls_per_s_rounds"] = [round(x) for x in c.throughput]
        if c.in_flight_calls and c.measured and c.argv is not None:
            cpu = c.cpu_in_flight_s / c.in_flight_calls * 1e6
            out["proxy_cpu_us_per_call_in_flight"] = round(cpu, 1) if cpu > 0 else None
    if c.connections:
        out["upstream_connections"] = sum(c.connections)
        out["upstream_requests"] = c.requests
        out["upstream_connections_max_per_batch"] = max(c.connections)
        out["upstream_connections_in_flight_rounds"] = c.throughput_connections
    return out


def _ok(c: Candidate | None) -> bool:
    return c is not None and c.error is None and bool(c.latencies) and bool(c.throughput)


def judge(path: str, found: list[Candidate]) -> dict[str, Any]:
    """The targets of `path` (module docstring) over its candidates: each target's verdict
    (True / False / None when a figure it needs is missing) and the figures it compared."""
    ours = next((c for c in found if c.role == "ours"), None)
    peers = [c for c in found if c.role == "peer" and _ok(c)]
    p50 = {c.name: statistics.median(c.latencies) for c in found if c.latencies}
    rate = {c.name: statistics.median(c.throughput) for c in found if c.throughput}
    targets: dict[str, Any] = {}
    if ours is None or not _ok(ours):
        return {"ours_failed": ours.error if ours else "missing", "met": False}
    if path == "stdio":
        bare = next((c for c in found if c.name.startswith("bare")), None)
        direct = next((c for c in found if c.name == "direct"), None)
        if bare is not None and _ok(bare):
            limit = p50[bare.name] + STDIO_SLACK_US
            targets["p50 <= bare relay + 15 µs"] = {
                "ours_us": round(p50[ours.name], 1),
                "limit_us": round(limit, 1),
                "met": p50[ours.name] <= limit,
            }
        if direct is not None and _ok(direct):
            share = rate[ours.name] / rate[direct.name]
            targets["throughput >= 95 % of direct"] = {
                "share": round(share, 3),
                "met": share >= STDIO_THROUGHPUT_SHARE,
            }
    elif path == "http":
        same = [c for c in peers if c.transport == ours.transport]
        if same:
            best = min(same, key=lambda c: p50[c.name])
            targets["p50 <= fastest Streamable HTTP peer"] = {
                "ours_us": round(p50[ours.name], 1),
                "peer": best.name,
                "peer_us": round(p50[best.name], 1),
                "met": p50[ours.name] <= p50[best.name],
            }
        if peers:
            best = max(peers, key=lambda c: rate[c.name])
            targets["throughput at 32 in flight >= every peer"] = {
                "ours_calls_per_s": round(rate[ours.name]),
                "peer": best.name,
                "peer_calls_per_s": round(rate[best.name]),
                "met": rate[ours.name] >= rate[best.name],
            }
    else:
        if peers:
            best = min(peers, key=lambda c: p50[c.name])
            targets["p50 <= fastest peer"] = {
                "ours_us": round(p50[ours.name], 1),
                "peer": best.name,
                "peer_us": round(p50[best.name], 1),
                "met": p50[ours.name] <= p50[best.name],
            }
        if ours.connections:
            targets["one upstream connection reused"] = {
                "connections": sum(ours.connections),
                "requests": ours.requests,
                "max_new_per_batch": max(ours.connections),
                "met": max(ours.connections) <= 1,
            }
    # Met: both targets of the path reached; not met: any missed; else a figure is missing.
    verdicts = [t["met"] for t in targets.values()]
    met = False if False in verdicts else (True if len(verdicts) == 2 else None)
    return {"targets": targets, "met": met}


def _verdict(met: bool | None, loaded: bool, load: float) -> str:
    if met is None:
        return "not judged (a figure is missing)"
    if loaded:
        return (
            f"not judged (load {load:.2f} > {LOAD_LIMIT}; {'met' if met else 'not met'} if quiet)"
        )
    return "met" if met else "not met"


def report(
    found: list[Candidate], load: tuple[float, float], config: Config, command: str
) -> list[dict[str, Any]]:
    """One row per path: the candidates' figures, the targets, `met` (`None` when a reached
    target was measured above the load limit), `met_if_quiet`, `verdict`, the load."""
    peak = max(load)
    loaded = peak > LOAD_LIMIT
    rows = []
    for path in PATHS:
        on_path = [c for c in found if c.path == path]
        if not on_path:
            continue
        judged = judge(path, on_path)
        met = judged["met"]
        rows.append(
            {
                "id": f"X{PATHS.index(path) + 1}-peers-{path}",
                "row": f"X{PATHS.index(path) + 1} {PATH_TITLES[path]}: conduit-mcp and its peers"
                " (echo tools/call)",
                "candidates": [_figures(c) for c in on_path],
                **{k: v for k, v in judged.items() if k != "met"},
                "met": None if (met and loaded) else met,
                "met_if_quiet": met,
                "verdict": _verdict(met, loaded, peak),
                "load_average_1m_start_end": [round(x, 2) for x in load],
                "load_average_1m": round(peak, 2),
                "sequential_calls": config.rounds * config.calls,
                "in_flight": IN_FLIGHT,
                "command": command,
            }
        )
    return rows


def run(
    config: Config = FULL,
    *,
    with_peers: bool = True,
    only: tuple[str, ...] = PATHS,
    log: Callable[[str], None] = print,
    logs: Path = PEERS_DIR / "logs",
) -> dict[str, Any]:
    """Install the peers (unless `with_peers` is false), measure, judge.

    Args:
        config: the counts (`FULL`, `QUICK`).
        with_peers: install and measure the peers; false: the floors and conduit-mcp only.
        only: the paths to measure (`PATHS`).
        log: where progress lines go.
        logs: the folder for the candidates' stderr.

    Returns:
        {"rows": [one per path, see `report`], "versions": {distribution: version},
        "peers_error": why the peers are missing, or None}."""
    peers_error = None
    found_versions: dict[str, str] = {}
    if with_peers:
        try:
            found_versions = install(log)
        except (subprocess.CalledProcessError, OSError) as exc:
            peers_error = f"peers not installed: {exc}"
            log(peers_error)
            with_peers = False
    chosen = [c for c in candidates(with_peers) if c.path in only]
    start_load = os.getloadavg()[0]
    log(f"load average {start_load:.2f} (1 min) at the start")
    measure(chosen, config, log, logs)
    end_load = os.getloadavg()[0]
    command = "python bench/peers.py" + (" --quick" if config == QUICK else "")
    if not with_peers:
        command += " --no-peers"
    rows = report(chosen, (start_load, end_load), config, command)
    for row in rows:
        row["versions"] = found_versions
        if peers_error is not None:
            row["peers_error"] = peers_error
    return {"rows": rows, "versions": found_versions, "peers_error": peers_error}


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """The rows of this script for `make bench` (bench/run.py): X1-X3, one per path."""
    found: list[dict[str, Any]] = run(QUICK if quick else FULL)["rows"]
    return found


def table(rows_: list[dict[str, Any]]) -> str:
    """The rows as a markdown table (one line per candidate)."""
    lines = [
        "| path | candidate | role | p50 µs | p90 µs | calls/s at 32 | proxy CPU µs/call"
        " | upstream conns / requests |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for row in rows_:
        title = row["row"].split(":")[0]
        for c in row["candidates"]:
            conns = (
                f"{c['upstream_connections']} / {c['upstream_requests']}"
                if "upstream_connections" in c
                else "-"
            )
            lines.append(
                f"| {title} | {c['name']} | {c['role']} | {c.get('p50_us', '-')} | "
                f"{c.get('p90_us', '-')} | {c.get('calls_per_s_in_flight', '-')} | "
                f"{c.get('proxy_cpu_us_per_call') or '-'} | {conns} |"
                + (f" error: {c['error']}" if "error" in c else "")
            )
    lines.append("")
    for row in rows_:
        lines.append(f"- {row['row']}: {row['verdict']}")
        for name, target in row.get("targets", {}).items():
            lines.append(f"  - {name}: {json.dumps(target, ensure_ascii=False)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls (smoke)")
    parser.add_argument("--no-peers", action="store_true", help="floors and conduit-mcp only")
    parser.add_argument("--install", action="store_true", help="install the peers and exit")
    parser.add_argument("--only", default=",".join(PATHS), help="paths: stdio,http,stdio-http")
    parser.add_argument("--output", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    if args.install:
        print(json.dumps(install(), indent=2))
        return 0
    only = tuple(p.strip() for p in args.only.split(",") if p.strip())
    if not set(only) <= set(PATHS):
        parser.error(f"--only: paths are {', '.join(PATHS)}")
    result = run(QUICK if args.quick else FULL, with_peers=not args.no_peers, only=only)
    for row in result["rows"]:
        print(json.dumps(row, ensure_ascii=False))
    print(table(result["rows"]))
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
