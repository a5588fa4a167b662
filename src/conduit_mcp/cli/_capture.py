"""`conduit-mcp capture`: run the MCP handshake with a server and save its tools/list pages
(the file's format and the recording session: `_capture_file`).

Private to the CLI; loaded when the command is named (`cli._app`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

import typer

from .._program import install_command
from ..pins import redacted_location
from ._capture_file import CaptureError, capture
from ._help import PlainHelpCommand, typer_app
from ._shared import fail
from ._text import emit, json_text, visible, warn

app = typer_app()


@app.command(
    "capture",
    cls=PlainHelpCommand,
    context_settings={"allow_interspersed_args": False},
)
def capture_command(
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND",
            help="The stdio server to run, after --: program and arguments.",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="A Streamable HTTP server's MCP endpoint instead."),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=VALUE",
            help="An environment variable for the stdio server (repeatable; the SDK passes "
            "only a safe default set, e.g. PATH and HOME, otherwise).",
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            metavar="'NAME: VALUE'",
            help="An HTTP header for every request to --url (repeatable), e.g. "
            "'Authorization: Bearer ...'. Only its name is recorded in the file.",
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Where to write; - is stdout. Without it: stdout when that is a pipe or a "
            "file; on a terminal, a usage error (give -o FILE, or -o - to print it there).",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(metavar="SECONDS", min=0.1, help="Give up after this long in all."),
    ] = 60.0,
) -> None:
    """Run the MCP handshake with a server and save every tools/list page as it was sent.

    conduit-mcp capture -- npx -y @modelcontextprotocol/server-everything stdio
    conduit-mcp capture --url http://localhost:3000/mcp -o page.json

    The official MCP SDK runs the handshake; the file holds the raw tools/list results, the
    protocol version the server negotiated, the transport, the server's serverInfo and the
    command or URL. inspect, diff and the pins commands read such a file under the version and
    transport it recorded. Needs the mcp package. Exit code 2 when the server cannot be
    started or reached, or answers with an error.
    """
    if (url is None) == (not command):
        raise typer.BadParameter("give either -- COMMAND... or --url URL", param_hint="COMMAND")
    if output is None:
        if _stdout_is_terminal():  # a capture is a file to keep, not pages of JSON to scroll
            raise typer.BadParameter(  # "Invalid value for ..." would blame an unused -o
                "stdout is a terminal: give -o FILE to save the capture (or -o - to print it "
                "here, or pipe it)"
            )
        output = "-"
    try:
        document = _capture(command or [], url, env or [], header or [], timeout)
    except CaptureError as exc:
        fail(f"capture: {exc}")
    try:
        text = json_text(document, indent=2)
    except (RecursionError, ValueError, TypeError):
        fail("capture: the server's listing nests too deeply to be written as JSON")
    if output == "-":
        emit(text)
    else:
        try:
            Path(output).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            fail(f"{output}: cannot write: {exc.strerror or exc}")
    tools = sum(len(page.get("tools") or ()) for page in document["pages"])
    warn(
        f"conduit-mcp: captured {len(document['pages'])} page(s), {tools} tool(s), protocol "
        f"{visible(document['protocol_version'])} over {document['transport']}"
        + ("" if output == "-" else f" -> {visible(output)}")
    )


def _stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def _capture(
    command: list[str], url: str | None, env: list[str], header: list[str], timeout: float
) -> Any:
    """Run the capture under a time bound; every failure becomes a `CaptureError`."""
    try:
        import anyio
        import httpx2
        from mcp import StdioServerParameters
        from mcp.client.stdio import get_default_environment, stdio_client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as exc:
        missing = exc.name or "the MCP Python SDK"
        raise CaptureError(
            f"needs the mcp extra ({missing} is not installed): {install_command('mcp')}"
        ) from None
    if header and url is None:
        raise CaptureError("--header is for --url: a stdio server takes --env")
    headers: dict[str, str] = {}
    for item in header:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise CaptureError(f"--header {visible(item)}: expected 'NAME: VALUE'")
        headers[name.strip()] = value.strip()

    @contextlib.asynccontextmanager
    async def over_http(endpoint: str) -> AsyncIterator[Any]:
        # The SDK's own timeouts (30 s, 300 s to read a stream), with the operator's headers.
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        async with client, streamable_http_client(endpoint, http_client=client) as streams:
            yield streams

    def open_transport() -> Any:
        if url is not None:
            return over_http(url)
        variables = get_default_environment()
        for item in env:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise CaptureError(f"--env {visible(item)}: expected NAME=VALUE")
            variables[name] = value
        params = StdioServerParameters(
            command=command[0],
            args=command[1:],
            env=variables,
            encoding_error_handler="replace",  # one bad line is skipped, as under the guard
        )
        return stdio_client(params)

    server: dict[str, Any] = {"command": command}
    if url is not None:
        server = {"url": redacted_location(url), "headers": sorted(headers)}
    transport = "streamable-http" if url is not None else "stdio"

    async def run() -> Any:
        with anyio.fail_after(timeout):
            return await capture(open_transport, transport=transport, server=server)

    try:
        return anyio.run(run)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the SDK's transport, in task groups: one line, not a trace
        cause = _first_leaf(exc)
        if isinstance(cause, CaptureError):
            raise cause from None
        if isinstance(cause, TimeoutError):
            raise CaptureError(f"no complete answer within {timeout:g} s") from None
        text = str(cause).splitlines()[0] if str(cause) else ""
        message = f"{type(cause).__name__}: {text}" if text else type(cause).__name__
        if url is not None:  # an HTTP error may quote the URL: never its password
            message = message.replace(url, redacted_location(url))
        raise CaptureError(message) from None


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups, or `exc` itself."""
    inner = getattr(exc, "exceptions", None)  # an exception group (3.11+, or its backport)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc
