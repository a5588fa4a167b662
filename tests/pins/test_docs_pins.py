"""docs/pins-workflow.md runs as written: its python and sh blocks, in order, in one empty
folder (the sh blocks with the `conduit-mcp` of this interpreter's environment on the PATH);
and each python block alone, in an empty folder, as a reader who starts at that section runs
it (the sh block reads the store the python block before it wrote: the text says so)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "pins-workflow.md"


def blocks() -> list[tuple[str, str]]:
    return re.findall(r"```(python|sh)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_every_block_of_docs_pins_runs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = blocks()
    assert [kind for kind, _ in found] == ["python", "sh", "python", "python"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDUIT_MCP_APPROVER", raising=False)  # the doc names its approvers
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for kind, code in found:
        if kind == "python":
            exec(compile(code, str(DOC), "exec"), {"__name__": "docs_pins"})
        else:
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", code],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            assert "tool get_weather  seen 3x" in done.stdout  # the pending row, listed
            assert '"pending": []' in done.stdout  # approved: nothing pending any more


@pytest.mark.parametrize("index", [0, 2, 3])
def test_each_python_block_runs_alone_in_an_empty_folder(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind, code = blocks()[index]
    assert kind == "python"
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOC), "exec"), {"__name__": "docs_pins"})


def test_the_text_says_the_sh_block_reads_the_store_written_before_it() -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "the shell block reads the `pins.db` the Python block before it wrote" in text
    assert "From a shell, in the same folder (after the block above)" in text
