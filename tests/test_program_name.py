"""The program the printed command lines name: `conduit-mcp` when the shell finds this very
installation's console script on PATH, else the script's absolute path (shell-quoted), so a line
a wrapped proxy prints still runs in an operator's shell. Refusal hints and `pins pending`."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conduit_mcp._program import program_name
from conduit_mcp.client import Tool
from conduit_mcp.guard._checks import pin_page
from conduit_mcp.pins import PinStore
from conduit_mcp.proxy._seam import GuardSeam
from conduit_mcp.proxy._settings import GuardSettings

VENV_BIN = Path(sys.executable).parent
SCRIPT = VENV_BIN / "conduit-mcp"
pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason="no console script installed")


def _without_venv(path: str) -> str:
    return os.pathsep.join(p for p in path.split(os.pathsep) if Path(p) != VENV_BIN)


def test_on_path_the_bare_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{_without_venv(os.environ['PATH'])}")
    assert shutil.which("conduit-mcp") is not None
    assert program_name() == "conduit-mcp"


def test_off_path_the_absolute_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _without_venv(os.environ["PATH"]))
    assert shutil.which("conduit-mcp") is None
    assert program_name() == str(SCRIPT.absolute())


def test_another_install_on_path_is_not_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A `conduit-mcp` on PATH that is not this installation's: the absolute path is printed."""
    other = tmp_path / "other bin"
    other.mkdir()
    (other / "conduit-mcp").write_text("#!/bin/sh\nexit 0\n")
    (other / "conduit-mcp").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{_without_venv(os.environ['PATH'])}")
    assert program_name() == str(SCRIPT.absolute())


def test_the_path_is_shell_quoted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spaced = tmp_path / "my venv" / "bin"
    spaced.mkdir(parents=True)
    (spaced / "conduit-mcp").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(spaced / "conduit-mcp"), "proxy"])
    monkeypatch.setenv("PATH", _without_venv(os.environ["PATH"]))
    guard = GuardSeam(GuardSettings("w", pins=str(tmp_path / "pins.db"), held_dir=tmp_path))
    hint = guard.review_hint("echo")
    assert f"review it with: {shlex.quote(str(spaced / 'conduit-mcp'))} pins pending" in hint
    assert shlex.split(hint.split("review it with: ", 1)[1].split(" (", 1)[0])[0] == str(
        spaced / "conduit-mcp"
    )


@pytest.mark.parametrize("on_path", [True, False])
def test_refusal_hint_names_the_program(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, on_path: bool
) -> None:
    path = _without_venv(os.environ["PATH"])
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{path}" if on_path else path)
    guard = GuardSeam(GuardSettings("w", pins=str(tmp_path / "pins.db"), held_dir=tmp_path))
    expected = "conduit-mcp" if on_path else str(SCRIPT.absolute())
    assert guard.review_hint("echo").startswith(f"review it with: {expected} pins pending ")
    guard._raw["echo"] = {"name": "echo", "inputSchema": {"type": "object"}}  # listed once
    assert f"approve it with: {expected} pins approve --store" in guard.review_hint("echo")
    memory = GuardSeam(GuardSettings("w", pins=None, held_dir=tmp_path))
    assert f"approve with {expected} pins approve)" in memory.approve_hint("echo")


def _pending(store: Path, path: str) -> Any:
    env = {**os.environ, "PATH": path}
    return subprocess.run(
        [str(SCRIPT), "pins", "pending", "--store", str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )


@pytest.mark.parametrize("on_path", [True, False])
def test_pins_pending_names_the_program(tmp_path: Path, on_path: bool) -> None:
    """The real console script, run by its absolute path as `wrap` writes it."""
    store = tmp_path / "pins.db"
    raw = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}
    with PinStore(str(store)) as pins:
        tools = [Tool.from_wire("w", raw)]
        pin_page(pins, "w", tools, pin_new=False, pin_changed=False, accept_cosmetic=False)
    path = _without_venv(os.environ["PATH"])
    out = _pending(store, f"{VENV_BIN}{os.pathsep}{path}" if on_path else path).stdout
    expected = "conduit-mcp" if on_path else shlex.quote(str(SCRIPT))
    assert f"approve: {expected} pins approve --store" in out, out
