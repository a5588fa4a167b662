"""A user's script against the generated models, type-checked as a user's editor would.

tests/codegen/user/user_script.py must pass mypy --strict and pyright (strict) with no finding
and run; tests/codegen/user/user_misuse.py must be flagged by each checker on exactly the lines
marked `# misuse` (a checker that accepts everything would pass the first test alone).

The two checkers are whole-tool runs (about 19 s of CPU together, cold caches): `slow`, so
`make test-slow` (CI runs it after `make test`) runs them; `make test` keeps the script's run
(`test_the_user_script_runs`) and `make lint`'s mypy --strict over generated/ itself
(CONTRIBUTING.md "The test budget").
"""

from __future__ import annotations

import functools
import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

USER = Path(__file__).resolve().parent / "user"
SCRIPT = USER / "user_script.py"
MISUSE = USER / "user_misuse.py"
BIN = Path(sys.executable).parent

# One worker runs the module (make test: --dist loadgroup): each checker runs once over both
# files (`functools.cache`), and each worker holding one of its tests ran it again (~4 s of CPU).
pytestmark = pytest.mark.xdist_group("user-script")


@functools.cache
def mypy_errors() -> dict[str, set[int]]:
    """File name -> lines mypy --strict reports an error on, over both files."""
    done = subprocess.run(
        [
            str(BIN / "mypy"),
            "--strict",
            "--cache-dir=/dev/null",  # nothing written into the tree
            "--no-error-summary",
            str(SCRIPT),
            str(MISUSE),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=USER,
    )
    found: dict[str, set[int]] = {SCRIPT.name: set(), MISUSE.name: set()}
    for line in done.stdout.splitlines():
        path, lineno, kind, *_ = line.split(":", 3)
        if kind.strip() == "error":
            found[Path(path).name].add(int(lineno))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return found


@functools.cache
def pyright_errors() -> dict[str, set[int]]:
    """File name -> lines pyright reports an error on (both files say `# pyright: strict`)."""
    done = subprocess.run(
        [str(BIN / "pyright"), "--outputjson", "--pythonpath", sys.executable, str(USER)],
        capture_output=True,
        text=True,
        check=False,
        cwd=USER,
    )
    report = json.loads(done.stdout)
    found: dict[str, set[int]] = {SCRIPT.name: set(), MISUSE.name: set()}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            found[Path(diagnostic["file"]).name].add(diagnostic["range"]["start"]["line"] + 1)
    return found


def marked_lines() -> set[int]:
    lines = MISUSE.read_text(encoding="utf-8").splitlines()
    return {
        n for n, line in enumerate(lines, 1) if line.rstrip().split("#")[-1].startswith(" misuse:")
    }


@pytest.mark.slow
@pytest.mark.parametrize("checker", [mypy_errors, pyright_errors], ids=["mypy", "pyright"])
def test_the_user_script_type_checks_clean(checker: object) -> None:
    """Tool with a dict inputSchema, isinstance narrowing, `.text`, Literal roles: no finding."""
    assert callable(checker)
    assert checker()[SCRIPT.name] == set()


@pytest.mark.slow
@pytest.mark.parametrize("checker", [mypy_errors, pyright_errors], ids=["mypy", "pyright"])
def test_each_misuse_is_flagged(checker: object) -> None:
    """`.text` on an un-narrowed block, a string inputSchema, a number for a name."""
    assert callable(checker)
    assert len(marked_lines()) >= 3
    assert checker()[MISUSE.name] == marked_lines()


def test_the_user_script_runs() -> None:
    """Its assertions are the documented behaviour at run time."""
    runpy.run_path(str(SCRIPT), run_name="__main__")
