"""The pin store a command works on: opened for a `with` block, every failure one line.

Private to the CLI; shared by the groups that read or write a store (pins, policy).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
import typer

from ..pins import PinStore, redacted_location
from ._shared import NO_STORE, fail


@contextlib.contextmanager
def open_store(location: str, *, create: bool = False) -> Iterator[PinStore]:
    """Open the store at `location` for the `with` block, or exit 2 with one line (the URL's
    password is never echoed); a failure while the block reads or writes it (a malformed row,
    a lost connection) is one line and exit 2 too, never a traceback.

    Args:
        location: a sqlite file path or a `postgresql://` URL.
        create: make a store that does not exist yet (`PinStore(..., create=True)`); without
            it a mistyped location, or a file that is not a pin store, is a usage error naming
            `--store`, and nothing is created or written.

    Yields:
        The open `PinStore`, closed when the block ends.

    Raises:
        SystemExit: 2, after one line on stderr (`fail`).
    """
    # The store's own errors never hold the password (PinStore re-words the driver's); the
    # location is still replaced by its redacted form wherever a message repeats it.
    where = redacted_location(location)
    try:
        pins = PinStore(location, create=create)
    except FileNotFoundError:
        fail(f"--store {where}: {NO_STORE}")
    except Exception as exc:  # sqlite3.Error, psycopg.Error, ImportError, ValueError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fail(f"{where}: cannot open the pin store: {reason.replace(location, where)}")
    try:
        with pins:
            yield pins
    except (
        typer.Exit,
        typer.Abort,
        click.exceptions.Exit,
        click.exceptions.ClickException,
        click.exceptions.Abort,
    ):
        raise
    except Exception as exc:  # a malformed row (ValueError), sqlite3.Error, psycopg.Error
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fail(f"{where}: cannot use the pin store: {reason.replace(location, where)}")
