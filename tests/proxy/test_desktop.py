"""Desktop proxies (issue 32, item 6): `wrap --log DIR` gives each wrapped proxy its own event
log, and the wrapped command really writes there; `proxy --metrics HOST:PORT` serves a stdio
proxy's Prometheus metrics (read with prometheus-client's own text parser) while it runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from conduit_mcp.cli import app
from tests.proxy.test_tracing import SERVER, _messages

runner = CliRunner()


def _config(tmp_path: Path) -> Path:
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    config = tmp_path / "claude_desktop_config.json"
    entries = {
        name: {"command": sys.executable, "args": [str(server), str(tmp_path / f"{n}.seen")]}
        for n, name in enumerate(["files", "team/notes"])
    }
    config.write_text(json.dumps({"mcpServers": entries}, indent=2), encoding="utf-8")
    return config


def _converse(argv: list[str]) -> tuple[list[dict[str, Any]], str]:
    """Run a wrapped entry's command line as a desktop client would, with the messages of a
    short session; its answers and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    answers = []
    for message in _messages():
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        if "id" in message:
            answers.append(json.loads(process.stdout.readline()))
    _, stderr = process.communicate(timeout=60)
    return answers, stderr.decode()


def test_wrap_log_gives_each_proxy_its_own_log(tmp_path: Path) -> None:
    """Real parts: the wrapped command lines run as the client would run them; each writes
    its own JSON-lines log (the refused call and the stop line in it), named after its server
    id (an id with a `/` made a safe file name); unwrap gives the original bytes back."""
    config = _config(tmp_path)
    original = config.read_bytes()
    logs = tmp_path / "logs"
    result = runner.invoke(app, ["wrap", str(config), "--log", str(logs)])
    assert result.exit_code == 0, result.stderr
    entries = json.loads(config.read_text())["mcpServers"]
    files_args = entries["files"]["args"]
    assert files_args[files_args.index("--log") + 1] == str(logs / "files.log")
    notes_log = Path(
        entries["team/notes"]["args"][entries["team/notes"]["args"].index("--log") + 1]
    )
    assert notes_log.parent == logs and notes_log.name.startswith("team_notes-")
    for name in ("files", "team/notes"):
        answers, stderr = _converse([entries[name]["command"], *entries[name]["args"]])
        assert answers[3]["error"]["data"]["reason"] == "invalid_arguments"
        assert "stopped (server" in stderr  # the stop line reaches stderr with --log too
    for path, server_id in ((logs / "files.log", "files"), (notes_log, "team/notes")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        refused = [r for r in records if r.get("event", {}).get("kind") == "call_refused"]
        assert [r["event"]["server_id"] for r in refused] == [server_id]
        assert any(r["message"].startswith("stopped (server") for r in records)
    assert runner.invoke(app, ["unwrap", str(config)]).exit_code == 0
    assert config.read_bytes() == original


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_stdio_proxy_serves_metrics(tmp_path: Path) -> None:
    """Real parts: the stdio proxy with --metrics, scraped while the session is open; the
    exposition parsed by prometheus-client's parser: one tools/call counted per call received
    and the refused one among the guard's decisions."""
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    port = _free_port()
    command = [sys.executable, "-c", "from conduit_mcp.cli import main; main()", "proxy"]
    process = subprocess.Popen(
        [
            *command,
            "--server-id",
            "demo",
            "--metrics",
            f"127.0.0.1:{port}",
            "--quiet",
            "--",
            sys.executable,
            str(server),
            str(tmp_path / "seen"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        for message in _messages():
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                process.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
            text = answer.read().decode()
    finally:
        process.communicate(timeout=60)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("conduit_mcp_proxy_calls_total", (("server_id", "demo"),))] == 2
    refused = (
        "conduit_mcp_proxy_guard_events_total",
        (
            ("decision", "refused"),
            ("kind", "call_refused"),
            ("reason", "invalid_arguments"),
            ("server_id", "demo"),
        ),
    )
    assert samples[refused] == 1
