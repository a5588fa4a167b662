"""Instructions per `tools/call` through the proxy (valgrind callgrind), at a git revision and
in this tree: the before/after figure no other job on the machine can move.

For each tree (`git archive REV src`, and this tree's `src`) and each path, the proxy runs under
`valgrind --tool=callgrind` in front of a raw echo server (not counted: valgrind follows no
child): `stdio`, `conduit-mcp proxy -- python bench/guard.py --serve` (as bench/proxy.py's P1),
fed JSON-RPC lines; `listen`, `conduit-mcp proxy --listen ... --upstream` in front of
bench/http_echo.py (as bench/proxy_http.py's H1), one keep-alive connection; `session`,
`conduit-mcp proxy --listen ... -- python bench/guard.py --serve` (bench/peers.py's X2 row: a
2025-11-25 session, a server process for it) driven by bench/peers_client.py's
`StreamableClient`, one keep-alive connection a batch. After a warm-up
(`initialize`, `tools/list`, `--warm` calls) `callgrind_control --dump` starts the counted
segment, `--calls` sequential echo calls follow, a second dump ends it: instructions per call =
the second dump's total / calls (a dump is taken when the proxy next wakes, i.e. on the next
request: both ends land at the same point of a call). The proxy's defaults: the guard's checks,
pins in memory, no tracing, no policy, no call audit, no auth.

Usage:
    python bench/proxy_instructions.py --before 3a1651b            # both paths
    python bench/proxy_instructions.py --before 3a1651b --only listen --calls 500
    python bench/proxy_instructions.py --before d328912 --only session
    python bench/proxy_instructions.py --before 3a1651b --after 488a390   # two revisions
    python bench/proxy_instructions.py --before main --only stdio-bare,stdio-unguarded,stdio
        # the floors: a bare relay; the proxy's own relay and parse with the guard taken out
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import proxy_http as ph
from bench.proxy_http_ab import _tree_at

ROOT = ph.ROOT
SERVER = [sys.executable, str(ROOT / "bench" / "guard.py"), "--serve"]
_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


def _valgrind(out: Path) -> list[str]:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("needs valgrind on PATH (apt-get install valgrind)")
    return [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"]


def _dump(pid: int) -> subprocess.Popen[bytes]:
    """Ask callgrind in `pid` for a dump (taken when the process next runs code)."""
    return subprocess.Popen(
        ["callgrind_control", "--dump", str(pid)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _segment(out: Path, keep: Path | None = None) -> int:
    """The total of the second dump (the counted segment), copied to `keep` when given (for
    `callgrind_annotate`)."""
    parts = sorted(out.parent.glob(out.name + ".*"), key=lambda p: int(p.name.split(".")[-1]))
    if len(parts) < 2:
        raise RuntimeError(f"expected two dumps, found {[p.name for p in parts]}")
    if keep is not None:
        shutil.copyfile(parts[1], keep)
    found = _TOTAL.search(parts[1].read_text(encoding="utf-8", errors="replace"))
    if found is None:
        raise RuntimeError(f"no total in {parts[1].name}")
    return int(found.group(1))


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def stdio(
    src: Path,
    calls: int,
    warm: int,
    keep: Path | None = None,
    bare: bool = False,
    relay: str = "threads",
) -> float:
    """Instructions per call of the stdio proxy on `src` (`bare`: of bench/proxy.py's bare
    relay `relay` instead: `threads`, two threads copying lines, no guard: the floor;
    `unguarded`, the proxy's own relay and parse on `src` with every message passed)."""
    call = {"name": "echo", "arguments": {"message": "hello"}}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        argv = [*_valgrind(out), str(ph.CONDUIT), "proxy", "--server-id", "bench", "--quiet"]
        if bare:
            argv = [*_valgrind(out), sys.executable, str(ROOT / "bench" / "proxy.py")]
            argv += ["--relay", relay]
        env = {**os.environ, "PYTHONPATH": str(src)}
        with subprocess.Popen(
            [*argv, "--", *SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        ) as proxy:
            assert proxy.stdin is not None and proxy.stdout is not None
            rid = 0

            def ask(method: str, params: dict[str, Any]) -> bytes:
                nonlocal rid
                rid += 1
                proxy.stdin.write(  # type: ignore[union-attr]
                    _line({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
                )
                proxy.stdin.flush()  # type: ignore[union-attr]
                return proxy.stdout.readline()  # type: ignore[union-attr]

            init = {"protocolVersion": "2025-11-25", "capabilities": {}}
            ask("initialize", {**init, "clientInfo": {"name": "bench", "version": "0"}})
            proxy.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            ask("tools/list", {})
            for _ in range(warm):
                ask("tools/call", call)
            for counted in (calls, 1):
                dump = _dump(proxy.pid)
                time.sleep(1.0)  # the request reaches callgrind's control file first
                for _ in range(counted):
                    answer = ask("tools/call", call)
                    if b"hello" not in answer:
                        raise RuntimeError(f"unexpected answer {answer[:200]!r}")
                dump.wait(timeout=60)
            proxy.stdin.close()
            proxy.wait(timeout=120)
        return _segment(out, keep) / calls


def listen(src: Path, calls: int, warm: int, keep: Path | None = None) -> float:
    """Instructions per call of the HTTP listener on `src` (stateless 2026-07-28 calls)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        echo_port, proxy_port = ph._free_port(), ph._free_port()
        with ph._started([*ph.ECHO, str(echo_port)], echo_port):
            argv = [*_valgrind(out), str(ph.CONDUIT), "proxy", "--server-id", "bench"]
            argv += ["--quiet", "--listen", f"127.0.0.1:{proxy_port}"]
            argv += ["--upstream", f"http://127.0.0.1:{echo_port}/mcp"]
            env = {**os.environ, "PYTHONPATH": str(src)}
            proxy = subprocess.Popen(
                argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                for _ in range(20):  # valgrind starts the proxy slowly
                    try:
                        ph._wait_port(proxy_port, proxy)
                        break
                    except RuntimeError as error:
                        if proxy.poll() is not None:
                            raise error
                asyncio.run(_listen_calls(proxy.pid, proxy_port, calls, warm))
            finally:
                proxy.terminate()
                proxy.wait(timeout=120)
        return _segment(out, keep) / calls


async def _listen_calls(pid: int, port: int, calls: int, warm: int) -> None:
    await ph._list(port)
    conn = await ph.Connection(port).open()
    await ph._echo_calls(conn, warm)
    for counted in (calls, 1):
        dump = _dump(pid)
        await asyncio.sleep(1.0)
        await ph._echo_calls(conn, counted)
        while dump.poll() is None:
            await asyncio.sleep(0.1)
    conn.close()


def session(src: Path, calls: int, warm: int, keep: Path | None = None) -> float:
    """Instructions per call of the HTTP listener on `src` in a session (X2), sequential."""
    from bench.peers_client import StreamableClient

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        port = ph._free_port()
        argv = [*_valgrind(out), str(ph.CONDUIT), "proxy", "--server-id", "bench", "--quiet"]
        argv += ["--listen", f"127.0.0.1:{port}", "--", *SERVER]
        env = {**os.environ, "PYTHONPATH": str(src)}
        proxy = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            for _ in range(20):  # valgrind starts the proxy slowly
                try:
                    ph._wait_port(port, proxy)
                    break
                except RuntimeError as error:
                    if proxy.poll() is not None:
                        raise error
            client = StreamableClient(port)
            client.open()
            client.calls(warm)
            for counted in (calls, 1):
                dump = _dump(proxy.pid)
                time.sleep(1.0)  # the request reaches callgrind's control file first
                client.calls(counted)
                dump.wait(timeout=60)
        finally:
            proxy.terminate()
            proxy.wait(timeout=120)
        return _segment(out, keep) / calls


def _kept(folder: Path | None, name: str) -> Path | None:
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"callgrind.{name}.out"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier revision (git)")
    parser.add_argument("--after", help="a later revision in place of this tree's src")
    parser.add_argument(
        "--only",
        default="stdio,listen",
        help="paths: stdio,listen,session,stdio-bare,stdio-unguarded",
    )
    parser.add_argument("--calls", type=int, default=300, help="calls counted")
    parser.add_argument("--warm", type=int, default=50, help="calls before counting")
    parser.add_argument(
        "--keep", type=Path, help="keep each counted dump in this folder (callgrind_annotate)"
    )
    args = parser.parse_args(argv)
    paths = {
        "stdio": stdio,
        "listen": listen,
        "session": session,
        "stdio-unguarded": functools.partial(stdio, bare=True, relay="unguarded"),
    }
    only = [p.strip() for p in args.only.split(",") if p.strip()]
    row: dict[str, Any] = {"row": "proxy instructions per tools/call (callgrind)"}
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as later:
        trees = {"before": _tree_at(args.before, Path(scratch)), "after": ROOT / "src"}
        if args.after is not None:
            trees["after"] = _tree_at(args.after, Path(later))
        for path in only:
            if path == "stdio-bare":  # the floor: the same for every tree
                row[path] = round(
                    stdio(ROOT / "src", args.calls, args.warm, _kept(args.keep, path), bare=True)
                )
                continue
            for name, tree in trees.items():
                keep = _kept(args.keep, f"{path}-{name}")
                row[f"{path}_{name}"] = round(paths[path](tree, args.calls, args.warm, keep))
            row[f"{path}_after_over_before"] = round(
                row[f"{path}_after"] / row[f"{path}_before"], 3
            )
    row.update(before=args.before, after=args.after or "this tree")
    row.update(calls=args.calls, warm=args.warm)
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
