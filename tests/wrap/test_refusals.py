"""`wrap` refuses what would leave a config whose servers cannot start, and `unwrap` says when
there is nothing to undo.

Issue 30 item 7 measured on main: `wrap` succeeded without the proxy extra (every wrapped server
then failed at the client's next start, where only the client's log shows why); `wrap --pins`
into a folder that does not exist was accepted, and failed the same way; `unwrap` of a file
never wrapped printed nothing at all.

Each premise is checked against the real proxy first: without the module, or with that store,
`conduit-mcp proxy` itself cannot start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conduit_mcp._program import install_command
from tests.proxy.conftest import CONDUIT

from .conftest import CLIENT_CONFIGS, conduit, copy_config

DESKTOP = CLIENT_CONFIGS["Claude Desktop"]

#: Runs the command line after `--` as the console script does, with the named modules
#: unimportable (as if the proxy extra were not installed).
WITHOUT = (
    "import sys\n"
    "cut = sys.argv.index('--')\n"
    "for name in sys.argv[1:cut]:\n"
    "    sys.modules[name] = None\n"
    "sys.argv = ['conduit-mcp', *sys.argv[cut + 1:]]\n"
    "from conduit_mcp.cli import main\n"
    "main()\n"
)


def _without(modules: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, *modules, "--", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    return line


@pytest.mark.parametrize("module", ["mcp", "anyio"])
def test_wrap_without_the_proxy_extra_is_refused(tmp_path: Path, module: str) -> None:
    """Real parts: the proxy without `module` (a dependency of the proxy extra) cannot start
    (exit 2, the install line); so wrap (and doctor) refuse with that line, exit 2, and the
    config is untouched, no backup written."""
    premise = _without([module], "proxy", "--server-id", "x", "--", sys.executable, "-c", "")
    assert install_command("proxy") in _one_line(premise)
    config = copy_config(tmp_path, DESKTOP)
    original = config.read_bytes()
    for command in ("wrap", "doctor"):
        line = _one_line(_without([module], command, str(config)))
        assert install_command("proxy") in line and module in line
        assert config.read_bytes() == original
    assert list(config.parent.iterdir()) == [config]


def test_wrap_for_another_installation_of_the_proxy_is_not_refused(tmp_path: Path) -> None:
    """conduit-defined: `--proxy-command` names a conduit-mcp elsewhere (a shared venv, another
    machine): this installation's extras say nothing about it."""
    config = copy_config(tmp_path, DESKTOP)
    done = _without(["mcp"], "wrap", str(config), "--proxy-command", "/opt/conduit/bin/conduit-mcp")
    assert done.returncode == 0, done.stderr
    assert "/opt/conduit/bin/conduit-mcp" in config.read_text()


@pytest.mark.parametrize("where", ["missing/pins.db", "missing/deeper/pins.db", "a-folder"])
def test_pins_where_no_store_can_be_created_is_refused(tmp_path: Path, where: str) -> None:
    """Real parts: the proxy cannot open a sqlite store in a folder that does not exist (or
    one named by a folder): it exits at start. wrap refuses such a --pins: one line naming
    it, exit 2, the config untouched."""
    (tmp_path / "a-folder").mkdir()
    store = tmp_path / where
    premise = subprocess.run(
        [str(CONDUIT), "proxy", "--server-id", "x", "--pins", str(store), "--", "true"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert premise.returncode != 0
    config = copy_config(tmp_path, DESKTOP)
    original = config.read_bytes()
    done = subprocess.run(
        [str(CONDUIT), "wrap", str(config), "--pins", str(store)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert str(store) in _one_line(done)
    assert config.read_bytes() == original
    assert not config.with_name(config.name + ".conduit-mcp.bak").exists()


def test_pins_in_a_folder_that_exists_is_recorded_absolute(tmp_path: Path) -> None:
    """conduit-defined: the check refuses only what cannot work: a new store in an existing
    folder is accepted, recorded as an absolute path (the client starts servers elsewhere)."""
    config = copy_config(tmp_path, DESKTOP)
    subprocess.run(
        [str(CONDUIT), "wrap", config.name, "--pins", "pins.db"],
        cwd=config.parent,
        check=True,
        capture_output=True,
    )
    entry = json.loads(config.read_text())["mcpServers"]["filesystem"]
    assert entry["args"][3:5] == ["--pins", str(config.parent / "pins.db")]


def test_unwrap_of_a_config_never_wrapped_says_so(tmp_path: Path) -> None:
    """Newcomer trial: unwrap of a file no wrap touched printed nothing, exit 0: did it work?
    Now one line says there is nothing to undo; the file is untouched."""
    config = copy_config(tmp_path, DESKTOP)
    original = config.read_bytes()
    done = conduit("unwrap", str(config))
    assert (
        done.stdout == f"nothing to unwrap: no entry of {config} runs through conduit-mcp proxy\n"
    )
    assert config.read_bytes() == original
    conduit("wrap", str(config), "--proxy-command", "/opt/conduit/bin/conduit-mcp")
    conduit("unwrap", str(config))
    assert conduit("unwrap", str(config)).stdout.startswith("nothing to unwrap: ")


def test_wrap_of_a_config_without_servers_says_so(tmp_path: Path) -> None:
    """conduit-defined: a server table with no entry: nothing to wrap, said, nothing written."""
    config = tmp_path / "claude_desktop_config.json"
    config.write_text('{"mcpServers": {}}\n')
    done = conduit("wrap", str(config))
    assert done.stdout == f"nothing to wrap: {config} has no server entries\n"
    assert config.read_text() == '{"mcpServers": {}}\n'
