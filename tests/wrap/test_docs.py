"""docs/wrap.md runs as written: its server (```python) and config (```json) in a scratch
folder with this venv's programs first on PATH, its shell session line by line, the wrapped
entry it shows, the doctor line it shows, and the refusal it quotes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "wrap.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _text_block(starting: str) -> str:
    (block,) = [b for b in _blocks("text") if b.strip().startswith(starting)]
    return block.strip()


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (server,) = _blocks("python")
    (tmp_path / "server.py").write_text(server)
    (tmp_path / "claude_desktop_config.json").write_text(_blocks("json")[0])
    return tmp_path


def _shell(line: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line], capture_output=True, text=True, check=False, timeout=300
    )


def test_the_shell_session_wraps_checks_and_unwraps_as_described(scratch: Path) -> None:
    """Real parts: the documented server and config, the commands as written. The wrapped
    entry is the one shown (the reader's /home/you being the scratch folder); doctor prints
    the line shown (the new tool held: --pins holds new tools); unwrap gives the bytes back."""
    config = scratch / "claude_desktop_config.json"
    original = config.read_bytes()
    (shell,) = _blocks("shell")
    outputs = []
    for line in (line for line in shell.splitlines() if line.strip()):
        done = _shell(line)
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
        if line.startswith("conduit-mcp doctor"):
            shown = _text_block("held ").replace("/home/you", str(scratch))
            assert done.stdout.strip() == shown
    assert '+      "command":' in outputs[0]  # the dry run printed a diff
    assert config.read_bytes() == original  # unwrap: byte for byte


def test_the_quoted_refusal_is_what_wrap_prints(scratch: Path) -> None:
    """Real parts: the documented config with a comma after its last argument list, as the
    refusal quoted in the docs describes; wrap prints that line and exits 2."""
    config = scratch / "claude_desktop_config.json"
    config.write_text(config.read_text().replace('["server.py"]', '["server.py"],', 1))
    done = _shell("conduit-mcp wrap claude_desktop_config.json")
    assert done.returncode == 2
    assert done.stderr.strip() == _text_block("conduit-mcp: ")
