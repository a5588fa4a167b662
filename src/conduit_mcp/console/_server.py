"""The console's process: its application built over a store, and served (uvicorn).

Not a public module: `create_app` and `serve` are exported from `conduit_mcp.console`.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from typing import Any

from ._auth import is_loopback

logger = logging.getLogger("conduit_mcp.console")


def create_app(
    store: str,
    *,
    trust_header: str | None = None,
    trusted_proxies: Sequence[str] = (),
    secure_cookies: bool = False,
) -> Any:
    """The review console as an ASGI application (Starlette) over the pin store at `store`.

    The store is opened (never created) when the application starts, with its change feed;
    closed when it stops.

    Args:
        store: a pin store location (a sqlite path or a `postgresql://` URL); it must exist.
        trust_header: a request header naming the account (e.g. `X-Forwarded-User`) set by an
            authenticating reverse proxy; honoured only from `trusted_proxies`, and only for
            accounts the store holds (their role decides).
        trusted_proxies: addresses or networks (`10.0.0.5`, `10.0.0.0/24`) of those proxies.
        secure_cookies: mark the session cookie `Secure` (behind TLS).

    Returns:
        A `starlette.applications.Starlette` application.

    Raises:
        ImportError: the `console` extra (Starlette, Jinja2) is not installed.
        ValueError: a trusted proxy that is not an address or network.

    Spec: none (conduit-defined; docs/console.md lists the pages and the API).
    """
    for proxy in trusted_proxies:
        ipaddress.ip_network(proxy, strict=False)
    try:
        from ._app import create
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        from .._program import install_command

        raise ImportError(
            f"the review console needs its extra: {install_command('console')}"
        ) from exc
    return create(
        store,
        trust_header=trust_header,
        trusted_proxies=tuple(trusted_proxies),
        secure_cookies=secure_cookies,
    )


def serve(
    store: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8377,
    trust_header: str | None = None,
    trusted_proxies: Sequence[str] = (),
    tls_cert: str | None = None,
    tls_key: str | None = None,
) -> None:
    """Serve the review console until interrupted (uvicorn).

    Args:
        store: the pin store location (must exist).
        host, port: where to listen; loopback by default. A non-loopback address is logged
            as a warning unless `trust_header` or TLS (`tls_cert`, `tls_key`) is set: the
            page and its login would travel in clear text.
        trust_header, trusted_proxies: as `create_app`.
        tls_cert, tls_key: PEM files: serve HTTPS (the cookie is then `Secure`).

    Raises:
        ImportError: the `console` extra is not installed.
        OSError: the address cannot be bound.
    """
    import uvicorn

    tls = tls_cert is not None and tls_key is not None
    if not is_loopback(host) and not trust_header and not tls:
        logger.warning(
            "the console listens on %s without TLS or --trust-header: logins and decisions "
            "travel in clear text; put it behind TLS or a reverse proxy",
            host,
        )
    app = create_app(
        store,
        trust_header=trust_header,
        trusted_proxies=trusted_proxies,
        secure_cookies=tls,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        timeout_graceful_shutdown=2,
        proxy_headers=False,
        server_header=False,
    )
    uvicorn.Server(config).run()
