"""A real PostgreSQL server for the tests: `initdb` + `pg_ctl` in a temporary folder.

Debian's `postgresql` package supplies the binaries (/usr/lib/postgresql/<version>/bin; `.ci/run`
installs it). The server listens on a free loopback port, trusts local logins, and is stopped
and deleted at the end of the session; every module of a test process shares it. As root the
server runs as the `postgres` user (it refuses to run as root), which gets the temporary folder.
Without the binaries the tests skip with the reason, except under CI (`CI=true`), where that is
a failure.

Import the fixtures into a test module: `from tests.pgserver import postgres_server, postgres_url`.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_counter = itertools.count()


def postgres_bin() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, or `None`."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if not found:
        return None
    folder = Path(found[-1]).parent
    return folder if (folder / "pg_ctl").exists() else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: The reaper: a process that outlives the one that started the server only to stop it. It reads
#: its stdin until end of file, which comes when the starter closes the pipe or dies in any way
#: (a killed pytest worker, a bench script stopped at its timeout: no `finally` runs there), then
#: stops the server and deletes its folder. Without it such a death leaked a running server.
_REAPER = """
import shutil, subprocess, sys
sys.stdin.buffer.read()
subprocess.run(sys.argv[1:-1], capture_output=True, timeout=120, check=False)
shutil.rmtree(sys.argv[-1], ignore_errors=True)
"""


def _reaper(stop: list[str], root: Path) -> subprocess.Popen[bytes]:
    """Start the reaper of the server in `root` (`stop` is its stop command line)."""
    return subprocess.Popen(
        [sys.executable, "-c", _REAPER, *stop, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a signal to the test's process group leaves it running
    )


def _run(args: list[str], as_postgres: bool) -> None:
    if as_postgres:
        args = ["runuser", "-u", "postgres", "--", *args]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{args[0:5]} failed ({done.returncode}): {done.stderr[-2000:]}")


class Postgres:
    """A throwaway server's URL, and `stop` / `start` to take it down and back mid-test."""

    def __init__(self, url: str, pg_ctl: list[str], start_args: list[str], as_postgres: bool):
        self.url = url
        self._pg_ctl = pg_ctl
        self._start_args = start_args
        self._as_postgres = as_postgres

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: open connections break. `"fast"` (default) shuts down cleanly, so
        a `start` finds every committed row (with fsync and synchronous_commit off, an
        `"immediate"` stop may lose the last commits)."""
        _run([*self._pg_ctl, "-m", mode, "-w", "stop"], self._as_postgres)

    def start(self) -> None:
        _run([*self._pg_ctl, *self._start_args, "-w", "start"], self._as_postgres)


@contextlib.contextmanager
def controlled_postgres(folder: Path) -> Iterator[Postgres]:
    """Run a throwaway server from the binaries in `folder`; yields a `Postgres` whose `url`
    is its `postgres` database and which the test may stop and start again.

    fsync is off: the data is deleted at the end anyway.
    """
    as_postgres = os.geteuid() == 0
    root = Path(tempfile.mkdtemp(prefix="conduit-pg-"))
    data = root / "data"
    try:
        if as_postgres:
            shutil.chown(root, "postgres", "postgres")
        port = _free_port()
        initdb = [str(folder / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        _run([*initdb, "-E", "UTF8", "--locale=C", "--no-sync"], as_postgres)
        options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c synchronous_commit=off"
        log = root / "server.log"
        pg_ctl = [str(folder / "pg_ctl"), "-D", str(data)]
        server = Postgres(
            f"postgresql://postgres@127.0.0.1:{port}/postgres",
            pg_ctl,
            ["-o", options, "-l", str(log)],
            as_postgres,
        )
        stop = [*pg_ctl, "-m", "immediate", "-w", "stop"]
        reaper = _reaper(["runuser", "-u", "postgres", "--", *stop] if as_postgres else stop, root)
        try:
            server.start()
            yield server
        finally:
            with contextlib.suppress(RuntimeError):  # already stopped by the test
                server.stop("immediate")
            assert reaper.stdin is not None
            reaper.stdin.close()  # its stop finds the server stopped; it deletes the folder
            reaper.wait(timeout=120)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def running_postgres(folder: Path) -> Iterator[str]:
    """Run a throwaway server from the binaries in `folder`; yields its `postgres` database URL.

    Also used by bench/pins.py. fsync is off: the data is deleted at the end anyway.
    """
    with controlled_postgres(folder) as server:
        yield server.url


class _Shared:
    """The one server of this test process, started by the first module that asks for it and
    stopped when the last one's session fixture is finalized (at the end of the session)."""

    def __init__(self) -> None:
        self.users = 0
        self.url = ""
        self.stack = contextlib.ExitStack()

    def acquire(self, folder: Path) -> str:
        if self.users == 0:
            self.url = self.stack.enter_context(running_postgres(folder))
        self.users += 1
        return self.url

    def release(self) -> None:
        self.users -= 1
        if self.users == 0:
            self.stack.close()


_SHARED = _Shared()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server for the session; yields the URL of its `postgres` database.

    Each test module imports this fixture, which makes it a fixture of that module's own to
    pytest (one instance per importing module): they all share one server per test process
    (`_SHARED`), so a worker runs `initdb` once, not once per module. Tests keep apart by
    schema (`postgres_url`)."""
    folder = postgres_bin()
    if folder is None:
        reason = "PostgreSQL binaries not found (apt-get install -y postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must have them (.ci/run installs the package)")
        pytest.skip(reason)
    url = _SHARED.acquire(folder)
    try:
        yield url
    finally:
        _SHARED.release()


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """The URL of a new, empty schema on the session's server (one per test).

    A schema, not a database: CREATE DATABASE copies a template (about a second on a loaded
    machine), CREATE SCHEMA is instant. The URL's `options` put it first on the search path,
    so the store's unqualified tables land there.
    """
    import psycopg

    name = f"conduit_test_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    return f"{postgres_server}?options=-csearch_path%3D{name}"
