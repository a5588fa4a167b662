"""`conduit-mcp proxy`: its options, turned into the settings `conduit_mcp.proxy.run` starts
the guard and the chosen transport with.

Private to the CLI; loaded when the command is named (`cli._app`). The MCP SDK and the proxy's
running parts are imported by `run`, so the command's help and option errors need neither.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from .._program import HEADERS_ENV
from ..proxy import GuardSettings, HttpUpstream, run
from ._help import PlainHelpCommand, typer_app

app = typer_app()

ServerIdOption = Annotated[
    str,
    typer.Option(
        "--server-id",
        metavar="ID",
        help="The server's id: keys its pins (the key of its entry in a client config).",
    ),
]


def _policy(
    new: str | None,
    changed: str | None,
    check_arguments: bool | None,
    invalid_output: str | None,
    output_timeout: float | None,
    sdk_output_schema: str | None,
    max_tools: int | None = None,
) -> dict[str, Any]:
    given = {
        "new": new,
        "changed": changed,
        "check_arguments": check_arguments,
        "invalid_output": invalid_output,
        "output_timeout": output_timeout,
        "sdk_output_schema": sdk_output_schema,
        "max_tools": max_tools,
    }
    return {key: value for key, value in given.items() if value is not None}


@app.command("proxy", cls=PlainHelpCommand, context_settings={"allow_interspersed_args": False})
def proxy_command(
    server_id: ServerIdOption,
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND",
            help="The server's command line, after -- (e.g. -- npx -y @scope/server /data).",
            show_default=False,
        ),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(
            "--upstream",
            metavar="URL",
            help="Proxy a Streamable HTTP server instead of a command (e.g. "
            "https://host/mcp). Headers for it (Authorization, ...) come from the environment "
            f"variable {HEADERS_ENV} (a JSON object) and --header.",
        ),
    ] = None,
    listen: Annotated[
        str | None,
        typer.Option(
            "--listen",
            metavar="HOST:PORT",
            help="Serve clients over Streamable HTTP at http://HOST:PORT/mcp instead of "
            "stdio (each session gets its own server process or upstream session).",
        ),
    ] = None,
    max_in_flight_per_client: Annotated[
        int | None,
        typer.Option(
            "--max-in-flight-per-client",
            metavar="N",
            min=1,
            help="With --listen: requests in flight per stateless (2026-07-28) client, listen "
            "streams included; a client is its Authorization credential, else its address "
            "(default: 256).",
        ),
    ] = None,
    max_listen_streams_per_client: Annotated[
        int | None,
        typer.Option(
            "--max-listen-streams-per-client",
            metavar="N",
            min=1,
            help="With --listen: open subscriptions/listen streams per stateless client "
            "(default: 32).",
        ),
    ] = None,
    max_listen_streams: Annotated[
        int | None,
        typer.Option(
            "--max-listen-streams",
            metavar="N",
            min=1,
            help="With --listen: open subscriptions/listen streams of all stateless clients "
            "together (default: 1024, a quarter of the guard's 4096 requests in flight).",
        ),
    ] = None,
    max_in_flight_per_address: Annotated[
        int | None,
        typer.Option(
            "--max-in-flight-per-address",
            metavar="N",
            min=1,
            help="With --listen: requests in flight from one address (the TCP peer), whatever "
            "credentials they carry: the proxy checks none (default: 1024).",
        ),
    ] = None,
    max_listen_streams_per_address: Annotated[
        int | None,
        typer.Option(
            "--max-listen-streams-per-address",
            metavar="N",
            min=1,
            help="With --listen: open subscriptions/listen streams from one address "
            "(default: 128).",
        ),
    ] = None,
    max_sessions: Annotated[
        int | None,
        typer.Option(
            "--max-sessions",
            metavar="N",
            min=1,
            help="With --listen: sessions (2025-11-25 and before) open at once, each with its "
            "own server process or upstream session; past it 503 (default: 1000).",
        ),
    ] = None,
    max_sessions_per_client: Annotated[
        int | None,
        typer.Option(
            "--max-sessions-per-client",
            metavar="N",
            min=1,
            help="With --listen: sessions one client (its Authorization credential, else its "
            "address) has open; past it 429 (default: 32).",
        ),
    ] = None,
    max_sessions_per_address: Annotated[
        int | None,
        typer.Option(
            "--max-sessions-per-address",
            metavar="N",
            min=1,
            help="With --listen: sessions open from one address, whatever credentials opened "
            "them; past it 429 (default: 128).",
        ),
    ] = None,
    max_head_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-head-bytes",
            metavar="BYTES",
            min=1024,
            help="With --listen: a request head (request line and header fields); past it 431 "
            "and the connection closes, nothing more read (default: 65536).",
        ),
    ] = None,
    head_timeout: Annotated[
        float | None,
        typer.Option(
            "--head-timeout",
            metavar="SECONDS",
            min=0.001,
            help="With --listen: time for a whole request head to arrive, from the connection "
            "(or the head's first byte on a kept-alive one); past it 408 (default: 10).",
        ),
    ] = None,
    max_body_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-body-bytes",
            metavar="BYTES",
            min=1,
            help="With --listen: a request body; a larger Content-Length is 413 before the "
            "body is read, a chunked body 413 when it passes it (default: 4194304).",
        ),
    ] = None,
    max_connections_per_address: Annotated[
        int | None,
        typer.Option(
            "--max-connections-per-address",
            metavar="N",
            min=1,
            help="With --listen: connections open at once from one address; past it 429 "
            "(default: 256).",
        ),
    ] = None,
    keep_alive_timeout: Annotated[
        float | None,
        typer.Option(
            "--keep-alive-timeout",
            metavar="SECONDS",
            min=0.001,
            help="With --listen: how long an idle connection is kept between requests "
            "(default: 5).",
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            metavar="'NAME: VALUE'",
            help="A header for every upstream request (repeatable). Visible to other local "
            f"users in the process list: put credentials in {HEADERS_ENV} instead.",
        ),
    ] = None,
    pins: Annotated[
        str | None,
        typer.Option(
            "--pins",
            metavar="LOCATION",
            help="Pin store: a sqlite file (created if missing) or a postgresql:// URL. "
            "Default: pins in memory for this run (new tools pinned on first use).",
        ),
    ] = None,
    new: Annotated[
        str | None,
        typer.Option(
            "--new",
            metavar="pin|allow|hold|block",
            help="A tool never pinned (default: pin; hold with --pins).",
        ),
    ] = None,
    changed: Annotated[
        str | None,
        typer.Option(
            "--changed",
            metavar="block|allow|hold",
            help="A tool that differs from its pin (default: block).",
        ),
    ] = None,
    check_arguments: Annotated[
        bool | None,
        typer.Option(
            "--check-arguments/--no-check-arguments",
            help="Refuse a call whose arguments fail the tool's inputSchema (default: on).",
            show_default=False,
        ),
    ] = None,
    invalid_output: Annotated[
        str | None,
        typer.Option(
            "--invalid-output",
            metavar="withhold|flag|pass",
            help="Structured content that fails the tool's outputSchema: withhold (the client gets "
            "an isError result saying why), flag (logged, passed on) or pass (not checked) "
            "(default: withhold).",
        ),
    ] = None,
    output_timeout: Annotated[
        float | None,
        typer.Option(
            "--output-timeout",
            metavar="SECONDS",
            help="Longest an argument or output check may take; past it the call is refused, or "
            "the output counts as invalid (default: 2).",
        ),
    ] = None,
    sdk_output_schema: Annotated[
        str | None,
        typer.Option(
            "--sdk-output-schema",
            metavar="hide_unsafe|keep",
            help="hide_unsafe: list a tool without its outputSchema when it has pattern, "
            "patternProperties or uniqueItems, which a Python SDK client would re-check "
            "slowly or wrongly (the proxy still checks the output); keep: list it as sent "
            "(default: hide_unsafe).",
        ),
    ] = None,
    max_tools_per_server: Annotated[
        int | None,
        typer.Option(
            "--max-tools-per-server",
            metavar="N",
            min=1,
            help="Without --pins: the most tool names of the server the in-memory pins keep; "
            "past it a tool never seen is held, so a server listing fresh names every time "
            "cannot grow the proxy (default: 10000).",
        ),
    ] = None,
    held_dir: Annotated[
        Path | None,
        typer.Option(
            "--held-dir",
            metavar="DIR",
            help="Where a held tool's definition is written for `conduit-mcp pins approve` "
            "(default: ~/.local/state/conduit-mcp/held).",
        ),
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            metavar="HOST:PORT",
            help="Serve Prometheus metrics at http://HOST:PORT/metrics (a stdio proxy; "
            "--listen serves /metrics on its own port).",
        ),
    ] = None,
    auth: Annotated[
        str | None,
        typer.Option(
            "--auth",
            metavar="jwt|none",
            help="With --listen: jwt checks a bearer JWT on every request (--jwks-url, --issuer, "
            "--audience, or --oidc-issuer) and applies the tool policy per caller; none serves "
            "without authentication (the default on a loopback address, and the only way to "
            "run without it on any other).",
        ),
    ] = None,
    jwks_url: Annotated[
        str | None,
        typer.Option("--jwks-url", metavar="URL", help="With --auth jwt: the issuer's JWKS."),
    ] = None,
    issuer: Annotated[
        str | None,
        typer.Option("--issuer", metavar="ISS", help="With --auth jwt: the tokens' iss."),
    ] = None,
    audience: Annotated[
        str | None,
        typer.Option(
            "--audience", metavar="AUD", help="With --auth jwt: the tokens' aud (this proxy)."
        ),
    ] = None,
    oidc_issuer: Annotated[
        str | None,
        typer.Option(
            "--oidc-issuer",
            metavar="URL",
            help="With --listen: --auth jwt with the JWKS found by OpenID discovery "
            "(URL/.well-known/openid-configuration); URL is also the tokens' iss.",
        ),
    ] = None,
    groups_claim: Annotated[
        str,
        typer.Option(
            "--groups-claim",
            metavar="CLAIM",
            help="With --auth jwt: the claim holding the caller's groups.",
        ),
    ] = "groups",
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            metavar="URL",
            help="With --auth jwt: the MCP endpoint's URL as clients reach it, named by the "
            "protected-resource metadata and the 401 challenge (default: http://HOST:PORT/mcp).",
        ),
    ] = None,
    policy_file: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            metavar="FILE",
            help="With --auth jwt: a tool policy file applied for the proxy's life (default: "
            "the policy the --pins store keeps, followed as `conduit-mcp policy set` changes it).",
        ),
    ] = None,
    audit_calls: Annotated[
        bool,
        typer.Option(
            "--audit-calls",
            help="With --auth jwt: record each tools/call in the pin store's call audit (who, "
            "which tool, when, the verdict and reason, the SHA-256 of the arguments).",
        ),
    ] = False,
    audit_arguments: Annotated[
        bool,
        typer.Option(
            "--audit-arguments",
            help="With --audit-calls: keep the arguments' values too (canonical JSON).",
        ),
    ] = False,
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            metavar="FILE",
            help="Write logs to FILE as JSON lines (default: text on stderr).",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            help="Log warnings and errors only: refused calls (on stderr once a minute per "
            "reason and tool; --log keeps all), and the one line a listing "
            "that holds tools leaves (how many, and the pins pending command: a client's "
            "only clue to an empty tool list).",
        ),
    ] = False,
) -> None:
    """Run an MCP server behind the guard: an MCP server on stdin/stdout to the client, the
    guard in the middle, the real server as a child process (after --) or a Streamable HTTP
    server (--upstream URL); with --listen, clients connect over Streamable HTTP instead.

    stdout carries protocol bytes only; the server's stderr is relayed; SIGINT and SIGTERM are
    sent on to the server; the exit code is the server's (127: it could not be started).
    """
    if bool(command) == bool(upstream):
        raise typer.BadParameter(
            "give the server's command after --, or --upstream URL (one of them)",
            param_hint="COMMAND",
        )
    if not server_id:
        raise typer.BadParameter("a server id must not be empty", param_hint="--server-id")
    if upstream is not None:
        _check_upstream(upstream)
    settings = GuardSettings(
        server_id=server_id,
        pins=pins,
        policy=_policy(
            new,
            changed,
            check_arguments,
            invalid_output,
            output_timeout,
            sdk_output_schema,
            max_tools_per_server,
        ),
        held_dir=held_dir,
    )
    target: list[str] | HttpUpstream = list(command or [])
    if upstream is not None:
        target = HttpUpstream(upstream, _headers(header or []))
    address = _address(listen) if listen is not None else None
    caps = {
        "max_in_flight_per_client": max_in_flight_per_client,
        "max_listen_streams_per_client": max_listen_streams_per_client,
        "max_listen_streams": max_listen_streams,
        "max_in_flight_per_address": max_in_flight_per_address,
        "max_listen_streams_per_address": max_listen_streams_per_address,
        "max_sessions": max_sessions,
        "max_sessions_per_client": max_sessions_per_client,
        "max_sessions_per_address": max_sessions_per_address,
    }
    budget = {name: cap for name, cap in caps.items() if cap is not None}
    bounds: dict[str, float | None] = {
        "max_head_bytes": max_head_bytes,
        "head_timeout": head_timeout,
        "max_body_bytes": max_body_bytes,
        "max_connections_per_address": max_connections_per_address,
        "keep_alive_timeout": keep_alive_timeout,
    }
    limits = {name: bound for name, bound in bounds.items() if bound is not None}
    metrics_address = _address(metrics, "--metrics") if metrics is not None else None
    auth_settings = _auth(auth, jwks_url, issuer, audience, oidc_issuer, groups_claim, address)
    if auth_settings is None and (audit_calls or policy_file is not None):
        raise typer.BadParameter(
            "--audit-calls and --policy apply to callers: they need --auth jwt",
            param_hint="--auth",
        )
    if audit_arguments and not audit_calls:
        raise typer.BadParameter("--audit-arguments needs --audit-calls")
    sys.exit(
        run(
            settings,
            target,
            log=log,
            quiet=quiet,
            listen=address,
            budget=budget,
            limits=limits,
            metrics_address=metrics_address,
            auth=auth_settings,
            public_url=public_url,
            policy_file=policy_file,
            audit_calls=audit_calls,
            audit_arguments=audit_arguments,
        )
    )


#: Addresses `--listen` may serve without `--auth` (this host only).
_LOOPBACK = ("localhost", "::1")


def _loopback(host: str) -> bool:
    return host in _LOOPBACK or host.startswith("127.")


def _auth(
    auth: str | None,
    jwks_url: str | None,
    issuer: str | None,
    audience: str | None,
    oidc_issuer: str | None,
    groups_claim: str,
    address: tuple[str, int] | None,
) -> dict[str, Any] | None:
    """The `--auth jwt` settings (`AuthSettings` fields), or `None` (no authentication).
    Raises `typer.BadParameter` for options that cannot work together, and for `--listen` on
    an address other hosts reach without an explicit `--auth`."""
    given = any(v is not None for v in (jwks_url, issuer, audience, oidc_issuer))
    if auth is None and oidc_issuer is not None:
        auth = "jwt"
    if auth not in (None, "jwt", "none"):
        raise typer.BadParameter(f"expected jwt or none, got {auth!r}", param_hint="--auth")
    if address is None:
        if auth is not None or given:
            raise typer.BadParameter("authentication is for --listen", param_hint="--auth")
        return None
    if auth is None:
        if given:
            raise typer.BadParameter("give --auth jwt with them", param_hint="--jwks-url")
        if not _loopback(address[0]):
            raise typer.BadParameter(
                f"--listen {address[0]} is reachable from other hosts: give --auth jwt "
                "(--jwks-url, --issuer, --audience, or --oidc-issuer) or, to serve it without "
                "authentication, --auth none",
                param_hint="--auth",
            )
        return None
    if auth == "none":
        if given:
            raise typer.BadParameter("--auth none takes no token options", param_hint="--auth")
        return None
    if audience is None or (oidc_issuer is None and (jwks_url is None or issuer is None)):
        raise typer.BadParameter(
            "--auth jwt needs --jwks-url URL --issuer ISS --audience AUD, "
            "or --oidc-issuer URL --audience AUD",
            param_hint="--auth",
        )
    return {
        "issuer": issuer or oidc_issuer,
        "audience": audience,
        "jwks_url": jwks_url,
        "oidc_issuer": oidc_issuer,
        "groups_claim": groups_claim,
    }


def _address(value: str, option: str = "--listen") -> tuple[str, int]:
    host, colon, port = value.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise typer.BadParameter(f"expected HOST:PORT, got {value!r}", param_hint=option)
    return host.strip("[]"), int(port)


def _headers(options: list[str]) -> dict[str, str]:
    """Upstream headers: the JSON object in the environment, then each --header."""
    headers: dict[str, str] = {}
    raw = os.environ.get(HEADERS_ENV)
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise typer.BadParameter(f"{HEADERS_ENV} must be a JSON object of strings")
        headers.update(value)
    for option in options:
        name, colon, value = option.partition(":")
        if not colon or not name.strip():
            raise typer.BadParameter(f"expected 'NAME: VALUE', got {name.strip()!r}: ...")
        headers[name.strip()] = value.strip()
    return headers


def _check_upstream(url: str) -> None:
    """Refuse an `--upstream` that is no http(s) URL before anything starts (it was taken, and
    every request then failed with `UnsupportedProtocol`). Raises `typer.BadParameter`."""
    parsed = urlsplit(url)
    if parsed.scheme.lower() not in ("http", "https") or not parsed.netloc:
        raise typer.BadParameter(
            f"expected a Streamable HTTP server's http:// or https:// URL "
            f"(e.g. https://host/mcp), got {url!r}",
            param_hint="--upstream",
        )
