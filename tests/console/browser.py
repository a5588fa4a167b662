"""The real parts of the console's browser tests: Debian's Chromium driven by Selenium
(`/usr/bin/chromium`, `/usr/bin/chromedriver`; Selenium Manager never asked, nothing
downloaded), the real `conduit-mcp console` command in a subprocess, and a loopback server that
counts every request a page makes for an icon."""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CLI = Path(sys.executable).parent / "conduit-mcp"
#: The headless flags that work on this machine (GUIDE.md).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


def require_browser() -> None:
    """Skip without Chromium (fail under CI=true: .ci/run installs it)."""
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return
    reason = "Chromium not found (apt-get install -y chromium chromium-driver)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must have it (.ci/run installs the packages)")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium under Selenium, with a fresh profile; its console log kept."""
    require_browser()
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never reach the network
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="conduit-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def console_process(store: str) -> Iterator[str]:
    """`conduit-mcp console --pins STORE` on a free loopback port; yields its base URL once it
    accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [str(CLI), "console", "--pins", store, "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert "reviewing" in first, first
        waited = threading.Event()
        for _ in range(400):  # up to 20 s on a loaded machine
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if process.poll() is not None:
                raise AssertionError(process.stderr.read())
            waited.wait(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


class IconServer:
    """A loopback HTTP server counting the requests it gets (an icon fetched, a link
    followed): a review page must make none."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("content-type", "image/png")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
