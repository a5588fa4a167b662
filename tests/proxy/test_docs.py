"""docs/proxy.md runs as written: its server and client (```python), in a scratch folder with
this venv's programs first on PATH. (Its config rewriting moved to docs/wrap.md:
tests/wrap/test_docs.py.)"""

from __future__ import annotations

import os
import re
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
    return tmp_path


def test_the_client_example_runs_through_the_proxy(scratch: Path) -> None:
    _server, client = _blocks("python")
    exec(compile(client, str(DOC), "exec"), {"__name__": "docs_proxy_example"})
