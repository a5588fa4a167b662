"""The examples in docstrings run (issue 15, item 8): every module of both packages.

The equivalent of `pytest --doctest-modules` on src/ and generated/, as one test per module, so
the run needs no second pytest configuration and never imports `tests/` modules as doctests.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import conduit_mcp_wire
import pytest

import conduit_mcp


def _modules(package: ModuleType) -> list[str]:
    names = [package.__name__]
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        names.append(info.name)
    return sorted(names)


MODULES = _modules(conduit_mcp) + _modules(conduit_mcp_wire)


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_of_a_module_run(name: str) -> None:
    """conduit-defined: documentation that runs (a failing example fails here, with its text)."""
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0


def test_the_docstring_examples_are_found() -> None:
    """The walk reaches every module that holds an example (counted with grep when written)."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    with_examples = {
        name
        for name in MODULES
        if any(t.examples for t in finder.find(importlib.import_module(name), name))
    }
    assert with_examples >= {
        "conduit_mcp.client._dispatch",
        "conduit_mcp.client._headers",
        "conduit_mcp.client._jcs",
        "conduit_mcp.llm._provider_names",
        "conduit_mcp.client._result",
        "conduit_mcp.client._tool",
        "conduit_mcp.client._validate",
        "conduit_mcp_wire",
    }
