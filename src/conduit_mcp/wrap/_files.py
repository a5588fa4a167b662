"""A config file written safely: replaced atomically through a symlink, keeping its permission
bits and owner, and its backup created with the same bits.

Not a public module. A client config often holds tokens (`env`, `headers`) and is often 0600, and
often a symlink into a dotfiles folder: a write must neither widen who can read it (not even for
a moment: the bytes go into a file created 0600 and opened to the original's bits only after),
nor turn the link into a regular file (the link's target is replaced, beside itself, and the link
stays), nor leave a half-written file (a temporary file renamed over the target).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

_TEMP_SUFFIX = ".conduit-mcp.tmp"


def target_of(path: Path) -> Path:
    """The file `path` names: itself, or the end of its chain of symlinks (absolute)."""
    return Path(os.path.realpath(path))


def replace(path: Path, data: bytes) -> None:
    """Replace the contents of the file `path` names with `data`, atomically: a temporary file
    beside the target (a symlink's target, not the link) renamed over it. The new file has the
    old one's permission bits, and its owner and group where this process may set them.

    Raises:
        OSError: the target cannot be read or its folder written.
    """
    target = target_of(path)
    like = os.stat(target)
    tmp = _write_temp(target, data, like)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def create(path: Path, data: bytes, like: os.stat_result) -> bool:
    """Create the file `path` holding `data`, with `like`'s permission bits (and owner where
    allowed), atomically and only if nothing is there yet (a backup is never overwritten).

    Returns:
        Whether the file was created (`False`: something was at `path` already).

    Raises:
        OSError: the folder cannot be written.
    """
    tmp = _write_temp(path, data, like)
    try:
        try:
            os.link(tmp, path)  # fails when `path` exists: never a second writer's backup lost
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links
            if os.path.lexists(path):
                return False
            os.replace(tmp, path)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _write_temp(beside: Path, data: bytes, like: os.stat_result) -> str:
    """A new temporary file in `beside`'s folder holding `data`, synced, with `like`'s bits."""
    fd, tmp = tempfile.mkstemp(
        dir=beside.parent, prefix=f".{beside.name}.", suffix=_TEMP_SUFFIX
    )  # created 0600: the bytes are never readable by more than the owner before the chmod
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if hasattr(os, "fchown") and (like.st_uid, like.st_gid) != (
                os.geteuid(),
                os.getegid(),
            ):
                with contextlib.suppress(OSError):  # only root (or a member of the group) may
                    os.fchown(out.fileno(), like.st_uid, like.st_gid)
            if hasattr(os, "fchmod"):
                os.fchmod(out.fileno(), like.st_mode & 0o7777)
            else:  # Windows before Python 3.13: the read-only bit is all there is
                os.chmod(tmp, like.st_mode & 0o7777)
            os.fsync(out.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp
