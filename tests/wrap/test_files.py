"""What `wrap` and `unwrap` do to the file itself, seen as its owner and as another local user
would see it: a config holding tokens stays as private as it was (the backup too), a symlinked
config stays a symlink (dotfiles folders), the owner stays the owner.

Issue 30 item 7 measured on main: the backup of a 0600 config came out 0644 (readable by every
local user, tokens included), and a symlinked config was replaced by a regular file.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proxy.conftest import CONDUIT

from .conftest import CLIENT_CONFIGS, conduit, copy_config

PROXY = "/opt/conduit/bin/conduit-mcp"
#: The Claude Desktop config holds a token in `env` (GITHUB_PERSONAL_ACCESS_TOKEN).
DESKTOP = CLIENT_CONFIGS["Claude Desktop"]
BACKUP = ".conduit-mcp.bak"


@pytest.fixture(autouse=True)
def _usual_umask() -> Iterator[None]:
    """The usual umask 022: a file created plainly is 0644, readable by every local user."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return conduit(*args)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644], ids=["0600", "0640", "0644"])
def test_the_backup_and_the_file_keep_the_mode_of_the_original(tmp_path: Path, mode: int) -> None:
    """Real parts: the CLI under umask 022 on Claude Desktop's config, chmod `mode`. The backup
    (the original bytes, tokens included) has exactly the original's bits, so does the
    rewritten file, and so does the file unwrap writes back."""
    config = copy_config(tmp_path, DESKTOP)
    config.chmod(mode)
    original = config.read_bytes()
    _run("wrap", str(config), "--proxy-command", PROXY)
    backup = config.with_name(config.name + BACKUP)
    assert backup.read_bytes() == original
    assert _mode(backup) == mode
    assert _mode(config) == mode
    _run("unwrap", str(config))
    assert config.read_bytes() == original
    assert _mode(config) == mode


def test_no_temporary_file_is_left_beside_the_config(tmp_path: Path) -> None:
    """conduit-defined: the atomic writes (a temporary file renamed over the target, the
    backup linked into place) leave nothing behind but the config and its backup."""
    config = copy_config(tmp_path, DESKTOP)
    _run("wrap", str(config), "--proxy-command", PROXY)
    assert sorted(p.name for p in config.parent.iterdir()) == [config.name, config.name + BACKUP]
    _run("unwrap", str(config))
    assert [p.name for p in config.parent.iterdir()] == [config.name]


@pytest.mark.parametrize("relative", [True, False], ids=["relative-link", "absolute-link"])
def test_a_symlinked_config_stays_a_symlink(tmp_path: Path, relative: bool) -> None:
    """Real parts: a config kept in a dotfiles folder, linked from where its client reads it
    (two links in a chain). wrap and unwrap through the link rewrite the file it points to,
    atomically beside it, keep its mode, and leave both links as they were."""
    stored = copy_config(tmp_path / "dotfiles", DESKTOP)
    stored.chmod(0o600)
    original = stored.read_bytes()
    home = tmp_path / "home"
    home.mkdir()
    middle = home / "claude.json"
    config = home / "claude_desktop_config.json"
    middle.symlink_to(os.path.relpath(stored, home) if relative else stored)
    config.symlink_to(middle.name if relative else middle)
    links = {link: os.readlink(link) for link in (config, middle)}

    _run("wrap", str(config), "--proxy-command", PROXY)
    assert {link: os.readlink(link) for link in (config, middle)} == links  # still links
    assert b"/opt/conduit/bin/conduit-mcp" in stored.read_bytes()  # the target was rewritten
    assert _mode(stored) == 0o600
    backup = stored.with_name(stored.name + BACKUP)  # beside the file: found from any path
    assert backup.read_bytes() == original
    assert _mode(backup) == 0o600
    assert sorted(p.name for p in stored.parent.iterdir()) == sorted([stored.name, backup.name])

    _run("unwrap", str(config))
    assert {link: os.readlink(link) for link in (config, middle)} == links
    assert stored.read_bytes() == original  # byte for byte, through the link
    assert not backup.exists()


def test_wrapped_through_the_link_unwrapped_through_the_file(tmp_path: Path) -> None:
    """conduit-defined: the backup lies beside the file the link names, so unwrap finds it
    whichever path names the config (the link, or the file itself)."""
    stored = copy_config(tmp_path / "dotfiles", DESKTOP)
    original = stored.read_bytes()
    config = tmp_path / "claude_desktop_config.json"
    config.symlink_to(stored)
    _run("wrap", str(config), "--proxy-command", PROXY)
    _run("unwrap", str(stored))
    assert stored.read_bytes() == original
    assert config.is_symlink()


def test_a_dangling_symlink_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Bad input never crashes the command: a link to nothing is said so, and stays."""
    config = tmp_path / "claude_desktop_config.json"
    config.symlink_to(tmp_path / "gone.json")
    done = subprocess.run(
        [str(CONDUIT), "wrap", str(config)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert config.is_symlink() and not config.exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_wrapping_a_users_config_leaves_it_the_users(tmp_path: Path) -> None:
    """Real parts: an administrator (root) wraps a user's config: the file and its backup
    stay owned by that user and group, with its mode (the user's client can still read it,
    and no other user can)."""
    config = copy_config(tmp_path, DESKTOP)
    config.chmod(0o600)
    os.chown(config, 65534, 65534)  # nobody:nogroup
    _run("wrap", str(config), "--proxy-command", PROXY)
    backup = config.with_name(config.name + BACKUP)
    for path in (config, backup):
        info = os.stat(path)
        assert (info.st_uid, info.st_gid, _mode(path)) == (65534, 65534, 0o600)
    _run("unwrap", str(config))
    info = os.stat(config)
    assert (info.st_uid, info.st_gid, _mode(config)) == (65534, 65534, 0o600)


def test_no_file_beside_a_private_config_is_ever_readable_by_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: another local user watches the config's folder while wrap and unwrap run and
    opens any file that appears. A file's bits change only where one is created (mkstemp),
    chmod'ed, linked or renamed: after each of these calls every file in the folder is
    looked at, and none is ever readable or writable by group or others (the config is 0600,
    the umask 022)."""
    from conduit_mcp.wrap import unwrap_config, wrap_config

    config = copy_config(tmp_path, DESKTOP)
    config.chmod(0o600)
    folder = config.parent
    seen: list[tuple[str, str, int]] = []

    def spy(module: object, name: str) -> None:
        real = getattr(module, name)

        def call(*args: object, **kwargs: object) -> object:
            result = real(*args, **kwargs)
            for path in folder.iterdir():
                seen.append((name, path.name, stat.S_IMODE(os.lstat(path).st_mode)))
            return result

        monkeypatch.setattr(module, name, call)

    import tempfile

    for module, name in [(tempfile, "mkstemp"), (os, "fchmod"), (os, "link"), (os, "replace")]:
        spy(module, name)
    wrap_config(config, proxy=PROXY)
    unwrap_config(config)
    assert {name for name, _, _ in seen} == {"mkstemp", "fchmod", "link", "replace"}
    assert [entry for entry in seen if entry[2] & 0o077] == []
