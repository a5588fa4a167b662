"""Start a proxy: its logs, the guard's seam, metrics (the HTTP listener's, or a stdio proxy's
own `/metrics` port), traces, then the stdio relay or the HTTP listener; the exit code and the
line that says why it stopped.

Not a public module; `run` is exported from `conduit_mcp.proxy` (the `conduit-mcp proxy`
command calls it with the settings its options give). The MCP SDK and the running parts are
imported here, on the first call, so the package imports without the proxy extra.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from .._program import PROXY_MODULES, install_command, missing_modules
from ._settings import GuardSettings, HttpUpstream

EXIT_USAGE = 2

logger = logging.getLogger("conduit_mcp.proxy")


def run(
    settings: GuardSettings,
    target: list[str] | HttpUpstream,
    *,
    log: Path | None = None,
    quiet: bool = False,
    listen: tuple[str, int] | None = None,
    budget: dict[str, int] | None = None,
    limits: dict[str, float] | None = None,
    metrics_address: tuple[str, int] | None = None,
    auth: dict[str, Any] | None = None,
    public_url: str | None = None,
    policy_file: Path | None = None,
    audit_calls: bool = False,
    audit_arguments: bool = False,
) -> int:
    """Run a proxy, as `conduit-mcp proxy` runs it: the guard, then the stdio proxy until the
    server exits or the client goes (or, with `listen`, the HTTP listener until SIGINT or
    SIGTERM).

    Args:
        settings: the server id, pin store, policy and held-tool folder the guard runs with.
        target: the server's command line (a child process), or an `HttpUpstream`.
        log: a file for the logs as JSON lines; `None` writes text to stderr.
        quiet: log warnings and errors only.
        listen: `(host, port)` to serve clients over Streamable HTTP at `/mcp` instead of
            stdio.
        budget: caps for the listener's clients (stateless requests and sessions), by
            `ClientBudget` field name (those not given keep their defaults).
        limits: the listener's HTTP bounds by `HttpLimits` field name (`max_head_bytes`,
            `head_timeout`, `max_body_bytes`, `max_connections_per_address`,
            `keep_alive_timeout`; those not given keep their defaults).
        metrics_address: `(host, port)` to serve `/metrics` (Prometheus text) on its own HTTP
            port, for a stdio proxy (the listener serves `/metrics` itself).
        auth: with `listen`, `--auth jwt`: the `listen._auth.AuthSettings` fields (issuer,
            audience, jwks_url or oidc_issuer, groups_claim, ...): every request's bearer
            token checked, the tool policy applied per caller (`policy_file`, else the policy
            the pin store keeps, followed through its change feed).
        public_url: the MCP endpoint's URL as clients reach it (the protected-resource
            metadata's `resource`); default `http://HOST:PORT/mcp`.
        policy_file: with `auth`, a policy file applied for the proxy's life instead of the
            store's.
        audit_calls: with `auth`, each tools/call recorded in the pin store's call audit.
        audit_arguments: with `audit_calls`, the arguments' canonical JSON kept too (else
            only their digest).

    Traces are exported when the standard `OTEL_*` variables configure an exporter (the
    `otel` extra; `_tracing.py`). When the proxy stops, one line on stderr says why (the
    server exited with its code, the client closed the connection, a signal, the server
    could not be started), under `--quiet` and `--log` too.

    Returns:
        The exit code: with a child server on stdio, the server's (128 + N when signal N ended
        it, 127 when it could not be started); otherwise 0.

    Raises:
        SystemExit: 2, after one line on stderr, when the proxy extra is missing, a setting
            is refused, the pin store cannot be opened or the listener cannot bind.

    Spec: MCP 2025-11-25 basic/transports "stdio" and "Streamable HTTP" (the proxy is a server
    to its client and a client to its server on each).
    """
    from ._logs import configure

    configure(log, logging.WARNING if quiet else logging.INFO)
    missing = missing_modules(PROXY_MODULES)
    if missing:
        _fail(
            f"the proxy needs the proxy extra (missing: {', '.join(missing)}):"
            f" {install_command('proxy')}"
        )
    try:
        import anyio

        from ._seam import GuardSeam
        from .stdio._run import run_stdio
    except ImportError as exc:
        _fail(f"the proxy needs the proxy extra: {install_command('proxy')} ({exc})")
    metrics = None
    if listen is not None or metrics_address is not None:
        try:
            from ._metrics import Metrics
        except ImportError as exc:  # prometheus-client
            _fail(f"the proxy needs the proxy extra: {install_command('proxy')} ({exc})")
        metrics = Metrics(settings.server_id)
    tracing = _tracing(settings.server_id)
    on_event = _both(metrics.on_event if metrics else None, tracing.on_event if tracing else None)
    try:
        seam = GuardSeam(
            settings,
            on_event=on_event,
            on_exchange=metrics.exchange if metrics else None,
        )
        seam.tracing = tracing  # type: ignore[attr-defined]
        seam.on_call = metrics.call if metrics else None  # type: ignore[attr-defined]
    except (TypeError, ValueError) as exc:
        _fail(str(exc))
    except Exception as exc:  # the pin store: FileNotFoundError, sqlite3.Error, psycopg.Error
        from ._seam import redacted

        where = redacted(settings.pins or "")
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        reason = reason.replace(settings.pins or "", where)
        folder = _missing_folder(settings.pins or "")
        if folder is not None:  # sqlite says only "unable to open database file"
            reason += f" (no folder {folder}: a sqlite store's folder must exist)"
        _fail(f"--pins {where}: cannot open the pin store: {reason}")
    if listen is not None:
        from .listen._auth import AuthConfigError
        from .listen._budget import ClientBudget
        from .listen._limits import HttpLimits
        from .listen._server import serve

        closing: list[Any] = [seam]
        try:
            caps = ClientBudget(**(budget or {}))
            bounds = HttpLimits(**(limits or {}))  # type: ignore[arg-type]
            authenticator, gate = _identity(
                settings, auth, policy_file, audit_calls, audit_arguments, metrics, closing
            )
        except Exception as exc:  # a setting refused, the extra missing, the store unreadable
            _close(closing)
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        try:
            code = anyio.run(
                lambda: serve(
                    seam,
                    target,
                    *listen,
                    metrics=metrics,
                    budget=caps,
                    limits=bounds,
                    auth=authenticator,
                    public_url=public_url,
                    gate=gate,
                ),
                backend_options=_loop_options(),
            )
            _stopped(settings.server_id, "asked to stop (SIGINT or SIGTERM)", code)
            return code
        except AuthConfigError as exc:
            _fail(f"--auth jwt: {exc}")
        except OSError as exc:
            _fail(f"--listen {listen[0]}:{listen[1]}: {exc.strerror or exc}")
        finally:
            _close(closing)
            if tracing is not None:
                tracing.shutdown()
    if metrics is not None and metrics_address is not None:
        _serve_metrics(metrics, metrics_address)
    wire = _claim_stdout()
    ending: list[str] = []
    try:
        if isinstance(target, HttpUpstream):
            code = anyio.run(
                lambda: run_stdio(seam, None, upstream=target, stdout_fd=wire, ending=ending)
            )
        else:
            code = anyio.run(lambda: run_stdio(seam, target, stdout_fd=wire, ending=ending))
    finally:
        seam.close()
        if tracing is not None:
            tracing.shutdown()
    _stopped(settings.server_id, "; ".join(ending) or "the server's output ended", code)
    return code


def _identity(
    settings: GuardSettings,
    auth: dict[str, Any] | None,
    policy_file: Path | None,
    audit_calls: bool,
    audit_arguments: bool,
    metrics: Any,
    closing: list[Any],
) -> tuple[Any, Any]:
    """`--auth jwt`'s parts: the `Authenticator` and the `CallerGate` (the tool policy per
    caller, from `policy_file` or followed from the pin store; the call audit), or `(None,
    None)` without `auth`. What is opened is appended to `closing`.

    Raises:
        ValueError: the options cannot work together (one line saying why), a bad policy file.
        ImportError: PyJWT (the `auth` extra) is missing.
    """
    if auth is None:
        if audit_calls:
            raise ValueError("--audit-calls records who called: it needs --auth jwt")
        return None, None
    from ..pins import PinStore
    from ..policy import Policy, PolicyError, PolicyFollower
    from ._access import Access, Sessions
    from .listen._auth import Authenticator, AuthSettings
    from .listen._callers import CallerGate

    authenticator = Authenticator(AuthSettings(**auth))
    stored = settings.pins is not None and settings.pins != ":memory:"
    sessions: list[Sessions] = []
    if policy_file is not None:
        try:
            access = Access.fixed(settings.server_id, Policy.load(policy_file))
        except PolicyError as exc:
            raise ValueError(str(exc)) from None
    elif stored:
        assert settings.pins is not None
        store = PinStore(settings.pins)
        closing.append(store)
        follower = PolicyFollower(store, on_change=lambda policy: sessions[0].changed(policy))
        closing.insert(0, follower)
        access = Access(settings.server_id, lambda: follower.current)
        if follower.current is None:
            logger.warning(
                "no tool policy in the pin store yet: every tool is denied to every caller "
                "until one is set (conduit-mcp policy set FILE --store STORE --approver WHO)"
            )
    else:
        raise ValueError(
            "--auth jwt applies a tool policy per caller: give --pins STORE (the policy "
            "`conduit-mcp policy set` keeps there) or --policy FILE"
        )
    sessions.append(Sessions(access))
    auditor = None
    if audit_calls:
        if not stored:
            raise ValueError("--audit-calls writes to the pin store: give --pins STORE")
        from ._callaudit import CallAuditor

        assert settings.pins is not None
        audit_store = PinStore(settings.pins)
        closing.append(audit_store)
        auditor = CallAuditor(audit_store, settings.server_id, keep_arguments=audit_arguments)
        closing.insert(0, auditor)
    gate = CallerGate(access, sessions=sessions[0], auditor=auditor, metrics=metrics)
    return authenticator, gate


def _close(things: list[Any]) -> None:
    """Close each of `things` in order (the policy follower and the auditor before the
    stores they use; the guard's seam)."""
    for thing in things:
        try:
            thing.close()
        except Exception:  # closing at exit: said, never raised
            logging.getLogger("conduit_mcp.proxy").exception("closing %r failed", thing)


def _stopped(server_id: str, why: str, code: int) -> None:
    """The one line a proxy leaves on stderr when it stops (a desktop client shows it in its
    MCP log): which server, why, the exit code. A warning (an error when the server exited
    under a connected client), so `--quiet` keeps it; with
    `--log FILE` it goes to the file and to stderr."""
    from .stdio._run import SERVER_EXITED

    log = logging.getLogger("conduit_mcp.proxy")
    level = logging.ERROR if SERVER_EXITED in why else logging.WARNING  # it crashed under us
    log.log(level, "stopped (server %r): %s; exit code %d", server_id, why, code)
    if any(isinstance(handler, logging.FileHandler) for handler in log.handlers):
        line = f"conduit-mcp proxy: stopped (server {server_id!r}): {why}; exit code {code}"
        print(line, file=sys.stderr, flush=True)


def _tracing(server_id: str) -> Any:
    """The proxy's `Tracing` when the `OTEL_*` variables configure one, else `None`."""
    from ._tracing import Tracing, configured

    if not configured():
        return None
    try:
        return Tracing(server_id)
    except ImportError as exc:
        _fail(str(exc))


def _both(first: Any, second: Any) -> Any:
    """One `on_event` callback calling each given one."""
    if first is None or second is None:
        return first or second

    def both(event: Any) -> None:
        first(event)
        second(event)

    return both


def _serve_metrics(metrics: Any, address: tuple[str, int]) -> None:
    """`/metrics` of a stdio proxy on its own port (prometheus-client's server, a daemon
    thread). Exits 2 with one line when the address cannot be bound."""
    from prometheus_client import start_http_server

    host, port = address
    try:
        start_http_server(port, addr=host, registry=metrics.registry)
    except OSError as exc:
        _fail(f"--metrics {host}:{port}: {exc.strerror or exc}")


def _claim_stdout() -> int:
    """Keep fd 1 for protocol bytes only: the wire moves to a private descriptor and fd 1 then
    points at stderr, so a stray print from any library lands in the log, not in the stream."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    return wire


def _loop_options() -> dict[str, bool]:
    """uvloop for the HTTP listener when it is installed (the event loop's own work is a large
    part of an HTTP round trip through the proxy), else asyncio's loop."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


def _missing_folder(location: str) -> str | None:
    """The folder of a sqlite pin store path `location` when it does not exist, else `None`
    (a `postgresql://` URL, or a folder that exists)."""
    if not location or "://" in location:
        return None
    folder = Path(location).expanduser().parent
    return None if folder.is_dir() else str(folder)


def _fail(message: str) -> Any:
    print(f"conduit-mcp: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)
