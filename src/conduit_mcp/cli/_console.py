"""`conduit-mcp console`: the review console (a web page over a pin store), and its accounts.

Private to the CLI; loaded when the group is named (`cli._app`). The page itself is
`conduit_mcp.console`; accounts are kept in the store (`PinStore.add_account`).
"""

from __future__ import annotations

import getpass
import socket
import sys
from typing import Annotated

import typer

from .._program import install_command
from ..pins import PinStore, redacted_location
from ._help import typer_app
from ._shared import NO_STORE, fail
from ._text import emit, visible

app = typer_app(
    name="console",
    help="The review console: a web page where people approve or reject held tools.",
    invoke_without_command=True,
)


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise typer.BadParameter("HOST:PORT, e.g. 127.0.0.1:8377", param_hint="--listen")
    return host.strip("[]") or "127.0.0.1", int(port)


def _who() -> str:
    """Who runs an account command (recorded in the audit log)."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment
        user = "?"
    return f"{user}@{socket.gethostname()} (conduit-mcp console)"


def _open(store: str, *, create: bool = False, option: str = "--store") -> PinStore:
    """The store at `store`, or exit 2 with one line naming `option`, the option the person
    typed it after. `create`: a store that does not exist is created (and a line on stderr
    says so, so a mistyped location shows)."""
    where = redacted_location(store)
    try:
        return PinStore(store, create=False)
    except FileNotFoundError:
        if create:
            try:
                created = PinStore(store, create=True)
            except Exception as exc:  # sqlite3.Error, psycopg.Error, OSError
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                fail(f"{where}: cannot create the pin store: {reason.replace(store, where)}")
            print(f"created the pin store {where}", file=sys.stderr)
            return created
        fail(f"{option} {where}: {NO_STORE}")
    except Exception as exc:  # sqlite3.Error, psycopg.Error, ImportError, ValueError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fail(f"{where}: cannot open the pin store: {reason.replace(store, where)}")


@app.callback()
def console_command(
    ctx: typer.Context,
    pins: Annotated[
        str | None,
        typer.Option(
            "--pins",
            metavar="LOCATION",
            help="The pin store to review (a sqlite path or a postgresql:// URL; it must exist).",
        ),
    ] = None,
    listen: Annotated[
        str,
        typer.Option("--listen", metavar="HOST:PORT", help="Where to serve the page."),
    ] = "127.0.0.1:8377",
    trust_header: Annotated[
        str | None,
        typer.Option(
            "--trust-header",
            metavar="HEADER",
            help="A header naming the logged-in account, set by an authenticating reverse "
            "proxy (accepted only from --trusted-proxy addresses; the account must exist).",
        ),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--trusted-proxy",
            metavar="ADDRESS",
            help="The reverse proxy's address or network (repeatable).",
        ),
    ] = None,
    tls_cert: Annotated[
        str | None, typer.Option("--tls-cert", metavar="PEM", help="Serve HTTPS: certificate.")
    ] = None,
    tls_key: Annotated[
        str | None, typer.Option("--tls-key", metavar="PEM", help="Serve HTTPS: private key.")
    ] = None,
) -> None:
    """Serve the review console for the pin store --pins: the queue of held and changed tools,
    each reviewed side by side and approved (exactly the definition shown), rejected or
    revoked with a reason; the audit log with filters and CSV / JSON-lines export; the servers
    the store knows; all live. Loopback by default. Log in with an account made by
    `console add-user`. docs/console.md."""
    if ctx.invoked_subcommand is not None:
        return
    if pins is None:
        raise typer.BadParameter("name the pin store to review", param_hint="--pins")
    if trust_header and not trusted_proxy:
        raise typer.BadParameter(
            "--trust-header needs --trusted-proxy (the proxy's address)",
            param_hint="--trust-header",
        )
    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("give --tls-cert and --tls-key together", param_hint="--tls-cert")
    host, port = _listen(listen)
    # A missing or mistyped store is one line, before anything listens.
    _open(pins, option="--pins").close()
    try:
        from ..console import serve
    except ImportError:
        fail(f"the review console needs its extra: {install_command('console')}")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        fail(f"the review console needs its extra: {install_command('console')}")
    print(
        f"conduit-mcp console: reviewing {redacted_location(pins)} at "
        f"http{'s' if tls_cert else ''}://{host}:{port}/",
        file=sys.stderr,
        flush=True,
    )
    try:
        serve(
            pins,
            host=host,
            port=port,
            trust_header=trust_header,
            trusted_proxies=trusted_proxy or (),
            tls_cert=tls_cert,
            tls_key=tls_key,
        )
    except ValueError as exc:
        fail(str(exc))


StoreOption = Annotated[
    str,
    typer.Option("--store", metavar="LOCATION", help="The pin store (it must exist)."),
]


@app.command("add-user")
def add_user_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The login name.")],
    store: StoreOption,
    role: Annotated[
        str,
        typer.Option(
            "--role", metavar="approver|viewer", help="An approver decides; a viewer reads."
        ),
    ],
    password_stdin: Annotated[
        bool,
        typer.Option("--password-stdin", help="Read the password from stdin (one line)."),
    ] = False,
    token: Annotated[
        bool,
        typer.Option("--token", help="Also print an API token (Authorization: Bearer TOKEN)."),
    ] = False,
) -> None:
    """Add a console account, or change its role and password (recorded in the audit log).
    Without --password-stdin the account logs in only through --trust-header or a token.
    A store that does not exist is created (stderr says so): the first account is often the
    first thing a new store holds."""
    if role not in ("approver", "viewer"):
        raise typer.BadParameter("approver or viewer", param_hint="--role")
    password = None
    if password_stdin:
        line = sys.stdin.readline()
        password = line.rstrip("\r\n")
    pins = _open(store, create=True)
    try:
        with pins:
            try:
                account = pins.add_account(name, role=role, password=password, by=_who())  # type: ignore[arg-type]
                issued = pins.add_token(name, by=_who()) if token else None
            except (TypeError, ValueError) as exc:
                fail(str(exc))
    except typer.Exit:
        raise
    except Exception as exc:  # the database failed
        fail(f"{redacted_location(store)}: {str(exc).splitlines()[0] if str(exc) else exc}")
    emit(f"account {visible(account.name)} ({account.role})")
    if issued is not None:
        emit(issued)


@app.command("remove-user")
def remove_user_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The login name.")],
    store: StoreOption,
) -> None:
    """Remove a console account and its API tokens (its open sessions end at their next
    request). Exit code 1 when there was no such account."""
    with _open(store) as pins:
        try:
            removed = pins.remove_account(name, by=_who())
        except (TypeError, ValueError) as exc:
            fail(str(exc))
    if not removed:
        emit(f"no account {visible(name)}")
        raise typer.Exit(1)
    emit(f"removed {visible(name)}")
