"""README.md and docs/*.md: every Python block runs as written, and every `conduit-mcp` command
line in a shell block names a command and options that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from conduit_mcp.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Pages whose blocks need a scene of their own (a server script in the working directory, the
#: venv's `conduit-mcp` on PATH): their own test runs them, in that scene.
OWN_TEST = {
    "proxy.md": "tests/proxy/test_docs.py",
    "pins-workflow.md": "tests/pins/test_docs_pins.py",
    "integrations.md": "tests/integrations/test_docs.py",
    "wrap.md": "tests/wrap/test_docs.py",
    "identity.md": "tests/test_docs_identity.py",
}


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


PYTHON_BLOCKS = [
    pytest.param(path, index, block, id=f"{path.relative_to(ROOT)}-{index}")
    for path in DOCS
    if path.name not in OWN_TEST
    for index, block in enumerate(_blocks(path, "python"))
]


def test_the_readme_and_the_docs_have_python_blocks() -> None:
    """conduit-defined: the collection below is not empty by accident (a renamed folder)."""
    assert {p.values[0].name for p in PYTHON_BLOCKS} >= {"README.md", "guard.md", "pins.md"}


@pytest.mark.usefixtures("forked_children")
@pytest.mark.parametrize(("path", "index", "block"), PYTHON_BLOCKS)
def test_every_python_block_runs(path: Path, index: int, block: str) -> None:
    """conduit-defined: documentation that runs; each block in a fresh namespace."""
    exec(compile(block, f"{path}:block{index}", "exec"), {"__name__": "__docs__"})


def _command_lines() -> list[tuple[str, list[str]]]:
    found = []
    for path in DOCS:
        for language in ("sh", "bash", "shell"):
            for block in _blocks(path, language):
                for line in block.splitlines():
                    for part in re.split(r"&&|\|\||\||;", line.split(" # ")[0]):
                        words = shlex.split(part, comments=True)
                        if words[:1] == ["conduit-mcp"]:
                            found.append((f"{path.name}: {part.strip()}", words[1:]))
    return found


COMMAND_LINES = _command_lines()


def test_the_docs_show_the_cli() -> None:
    """conduit-defined: the shell blocks are collected (cli.md and pins.md have some)."""
    assert len(COMMAND_LINES) >= 10


@pytest.mark.parametrize(("where", "words"), COMMAND_LINES, ids=[w for w, _ in COMMAND_LINES])
def test_every_documented_command_line_names_real_commands_and_options(
    where: str, words: list[str]
) -> None:
    """conduit-defined: a command or option renamed in the CLI fails here until the docs say
    the new name (the command line itself is not run: it needs a server or a store)."""
    command: object = typer.main.get_command(app)
    while words and hasattr(command, "commands") and words[0] in command.commands:
        command = command.commands[words.pop(0)]
    # A group that runs by itself (`conduit-mcp console --pins ...`) is a command too.
    runs = getattr(command, "invoke_without_command", False)
    assert not hasattr(command, "commands") or runs, f"{where}: no such command"
    options = {
        opt
        for param in command.params  # type: ignore[attr-defined]
        for opt in (*param.opts, *param.secondary_opts)
    } | {"-h", "--help"}
    used = []
    for word in words:
        if word == "--":
            break  # what follows is the server's command line
        if word.startswith("-") and word != "-":
            used.append(word.split("=", 1)[0])
    assert [opt for opt in used if opt not in options] == [], where
