"""docs/proxy.md runs as written: its server and client (```python), its shell session
(```shell) and its configs (```json), in a scratch folder with this venv's programs first on
PATH."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    server, _client = _blocks("python")
    (tmp_path / "server.py").write_text(server)
    (tmp_path / "claude_desktop_config.json").write_text(_blocks("json")[0])
    return tmp_path


def test_the_shell_session_wraps_and_unwraps_as_described(scratch: Path) -> None:
    config = scratch / "claude_desktop_config.json"
    original = config.read_bytes()
    (shell,) = _blocks("shell")
    lines = [line for line in shell.splitlines() if line.strip()]
    outputs = []
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", line], capture_output=True, text=True, check=False, timeout=60
        )
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done.stdout)
        if line.startswith("conduit-mcp wrap claude_desktop_config.json --pins"):
            wrapped = json.loads(config.read_text())["mcpServers"]["demo"]
            documented = json.loads(_blocks("json")[1])["mcpServers"]["demo"]
            pins_at = documented["args"].index("--pins") + 1
            assert Path(documented["args"][pins_at]).name == "pins.db"
            documented["args"][pins_at] = str(scratch / "pins.db")  # /home/you: the reader's
            assert wrapped["args"] == documented["args"]
            assert Path(wrapped["command"]).name == "conduit-mcp"
            assert Path(wrapped["command"]).is_absolute()
            after_wrap = config.read_bytes()
        if "# again" in line:
            assert config.read_bytes() == after_wrap
    assert '+      "command":' in outputs[0]  # the dry run printed a diff
    assert config.read_bytes() == original  # unwrap: byte for byte


def test_the_client_example_runs_through_the_proxy(scratch: Path) -> None:
    _server, client = _blocks("python")
    exec(compile(client, str(DOC), "exec"), {"__name__": "docs_proxy_example"})
