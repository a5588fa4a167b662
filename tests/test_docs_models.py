"""docs/models.md runs as written: every ```python block, in order, each in a fresh namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "models.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_code_to_run() -> None:
    """Accounting: the page's examples are found (a changed fence would skip them all)."""
    assert len(python_blocks()) >= 6


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_every_python_block_runs(index: int) -> None:
    """conduit-defined: documentation that runs."""
    block = python_blocks()[index]
    exec(compile(block, f"{DOC}:block{index}", "exec"), {})
