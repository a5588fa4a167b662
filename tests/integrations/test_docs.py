"""docs/integrations.md runs as written: every ```python block, each in a fresh namespace.

A block whose framework is not installed here is skipped with its name (each framework comes
with its extra); the two mcp 1.x blocks always are in this environment (mcp 2.x, where
langchain-mcp-adapters cannot be installed): test_mcp1.py runs them in its own mcp 1.x venvs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
#: top-level modules of the frameworks the page shows; only these may be missing.
FRAMEWORKS = {"agents", "agent_framework", "langchain", "langchain_mcp_adapters", "llama_index"}


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_an_example_per_framework() -> None:
    """Accounting: openai-agents, Agent Framework, langchain.mcp, llama-index, mcp 1.x in
    process and through the proxy."""
    assert len(python_blocks()) == 6


# The blocks' `python -c` SDK servers are forked from the worker's warm interpreter
# (tests/conftest.py `forked_children`); the blocks run as written.
@pytest.mark.usefixtures("forked_children")
@pytest.mark.parametrize("index", range(len(python_blocks())))
# Not ours, and raised with or without the guard: agent-framework pings on connect and mcp 2.3.0
# warns that ping is deprecated; langchain.mcp announces its beta on first import.
@pytest.mark.filterwarnings("ignore:ping is removed")
@pytest.mark.filterwarnings("ignore:`langchain.mcp` is in beta")
def test_every_python_block_runs(index: int) -> None:
    """conduit-defined: documentation that runs."""
    block = python_blocks()[index]
    try:
        code = compile(block, f"{DOC}:block{index}", "exec")
        exec(code, {"__name__": f"integrations_doc_{index}"})
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in FRAMEWORKS:
            raise
        pytest.skip(f"{exc.name} is not installed")
