"""An upstream that refuses a request's credentials (HTTP 401 / 403): its answer carried back to
the client that sent the request as the upstream wrote it, so the client can start its own
authorization; and the upstream's protected-resource metadata served through the listener.

Not a public module. Used by the session client (`_session`), the stateless POSTs (`_direct`)
and the HTTP listener (`listen/`), which hands each request's ASGI `send` to `RefusalSlot`.

Spec: MCP 2025-11-25 basic/authorization ("Authorization Server Discovery": a server answers
401 with `WWW-Authenticate` naming its `resource_metadata`; clients MUST read it from there;
403 `insufficient_scope` names the scope needed); RFC 6750 section 3 (the challenge's `realm`,
`scope`, `error`, `error_description` parameters); RFC 9728 sections 3 and 5.1 (the metadata at
`/.well-known/oauth-protected-resource` with the resource's path after it, and the
`resource_metadata` parameter). The challenge is passed byte for byte: every parameter intact.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

import orjson
from mcp.shared.message import ClientMessageMetadata

from .._settings import HttpUpstream
from ._pool import H1Pool, UpstreamUnreachable, shown_url

logger = logging.getLogger("conduit_mcp.proxy")

#: The statuses passed back to an HTTP client as the upstream sent them.
REFUSALS: Final = frozenset({401, 403})
#: The largest refusal body passed back (bytes); a longer one is replaced by a JSON-RPC error.
MAX_REFUSAL_BODY: Final = 64 * 1024
#: The longest challenge quoted in an error message or a log line (characters).
_QUOTED: Final = 1024
#: RFC 9728 section 3: the well-known path of a protected resource's metadata.
WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
#: The largest metadata document served through (bytes).
MAX_METADATA: Final = 64 * 1024
#: The ASGI scope key under which the listener leaves a request's `RefusalSlot`.
SCOPE_KEY: Final = "conduit_mcp.refusal"


@dataclass(frozen=True, slots=True)
class Refused:
    """An upstream's 401 or 403: what the HTTP client behind the listener gets as is.

    Attributes:
        status: 401 or 403.
        url: the upstream, as `shown_url` writes it.
        challenge: the `WWW-Authenticate` value as sent (`None` without one).
        content_type: the body's `content-type` (`None` without one).
        body: the body (at most `MAX_REFUSAL_BODY` bytes, else empty).
    """

    status: int
    url: str
    challenge: str | None
    content_type: str | None
    body: bytes

    def error(self, request_id: Any, method: str) -> dict[str, Any]:
        """The JSON-RPC error answering `request_id` (a stdio client, or a listener client
        whose response was already under way): the URL, the status and the challenge."""
        data: dict[str, Any] = {"url": self.url, "status": self.status}
        if self.challenge is not None:
            data["www-authenticate"] = self.challenge
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32603, "message": self.describe(method), "data": data},
        }

    def describe(self, method: str) -> str:
        """One sentence: who refused what, the challenge, and what to do."""
        what = "Unauthorized" if self.status == 401 else "Forbidden"
        challenge = (
            f"; WWW-Authenticate: {_quoted(self.challenge)}"
            if self.challenge is not None
            else " (no WWW-Authenticate challenge)"
        )
        return (
            f"conduit-mcp proxy: the upstream server {self.url} refused {method}: "
            f"HTTP {self.status} {what}{challenge}; give the proxy a credential it accepts "
            "(CONDUIT_MCP_UPSTREAM_HEADERS or --header 'Authorization: Bearer ...'), or "
            "connect through --listen so the client runs the authorization itself"
        )


def _quoted(text: str) -> str:
    """`text` fit for one line: control characters as `?`, at most `_QUOTED` characters."""
    cleaned = "".join(c if c.isprintable() else "?" for c in text[:_QUOTED])
    return cleaned + ("..." if len(text) > _QUOTED else "")


async def refused_from(status: int, url: str, headers: dict[str, str], body: Any) -> Refused:
    """A `Refused` from an upstream response (`body`: its `read_all` coroutine function)."""
    data = await body(MAX_REFUSAL_BODY)
    return Refused(
        status=status,
        url=shown_url(url),
        challenge=headers.get("www-authenticate"),
        content_type=headers.get("content-type"),
        body=bytes(data) if data is not None else b"",
    )


@dataclass
class UpstreamMetadata(ClientMessageMetadata):
    """A message's metadata on its way to an HTTP upstream: the SDK's (per-message headers),
    and where a refusal of its credentials goes back to (the listener's `RefusalSlot`)."""

    refusal: RefusalSlot | None = None


class RefusalSlot:
    """The ASGI `send` of one listener request served by an upstream session: it passes what
    the SDK's transport writes, holding the response head until the first body, so that an
    upstream refusal (`refuse`) made before then replaces the whole response with the
    upstream's status, `WWW-Authenticate` and body (what the transport writes after is
    dropped). After the first body a refusal stays a JSON-RPC error in the stream. The cost:
    an event stream's head leaves with its first event (the answer, or the transport's
    keep-alive comment after 15 s), not before; only requests to an HTTP upstream have one."""

    __slots__ = ("_head", "_refused", "_replaced", "_send", "_started")

    def __init__(self, send: Any) -> None:
        self._send = send
        self._head: Any = None
        self._refused: Refused | None = None
        self._replaced = False
        self._started = False

    def refuse(self, refused: Refused) -> None:
        """The upstream refused this request's credentials (before its answer is written)."""
        if not self._started:
            self._refused = refused

    @property
    def replaced(self) -> bool:
        """Whether the upstream's refusal was written instead of the transport's response."""
        return self._replaced

    async def __call__(self, message: Any) -> None:
        if self._replaced:
            return
        if message["type"] == "http.response.start" and not self._started:
            self._head = message
            return
        if message["type"] == "http.response.body" and not self._started:
            refused = self._refused
            if refused is not None:
                self._replaced = True
                await write_refused(self._send, refused)
                return
            self._started = True
            head, self._head = self._head, None
            if head is not None:
                await self._send(head)
        await self._send(message)


async def write_refused(send: Any, refused: Refused, request_id: Any = None) -> None:
    """The upstream's refusal as the HTTP response (status, challenge, its body; a JSON-RPC
    error naming it when the upstream sent no body or one too long)."""
    body, kind = refused.body, refused.content_type
    if not body:
        body = orjson.dumps(refused.error(request_id, "the request"))
        kind = "application/json"
    headers = [(b"content-length", str(len(body)).encode())]
    if kind is not None:
        headers.append((b"content-type", kind.encode("latin-1", "replace")))
    if refused.challenge is not None:
        headers.append((b"www-authenticate", refused.challenge.encode("latin-1", "replace")))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def metadata_path(upstream: HttpUpstream, path: str) -> str | None:
    """The upstream path serving what the listener's client asked at `path` (RFC 9728
    section 3.1), or `None` when `path` is no metadata path of the listener's: the listener's
    own resource (`/.well-known/oauth-protected-resource/mcp`) is the upstream's resource
    (`/.well-known/oauth-protected-resource` + the upstream URL's path); the root document is
    the upstream's root document."""
    from urllib.parse import urlsplit

    if path == WELL_KNOWN:
        return WELL_KNOWN
    if path.rstrip("/") == WELL_KNOWN + "/mcp":
        return WELL_KNOWN + urlsplit(upstream.url).path.rstrip("/")
    return None


async def serve_metadata(upstream: HttpUpstream, scope: Any, send: Any) -> bool:
    """Answer a GET of the listener's protected-resource metadata with the upstream's, as the
    upstream sent it (status, `content-type`, body; at most `MAX_METADATA` bytes). Returns
    `False` when `scope`'s path is no such path (the caller answers it)."""
    target = metadata_path(upstream, scope.get("path", ""))
    if target is None:
        return False
    if scope.get("method") not in ("GET", "HEAD"):
        await _plain(send, 405, b'{"error": "method not allowed"}', [(b"allow", b"GET")])
        return True
    pool = H1Pool(upstream.url, {})
    try:
        async with pool.request("GET", b"", {"accept": "application/json"}, path=target) as got:
            data = await got.read_all(MAX_METADATA)
            status, kind = got.status, got.headers.get("content-type", "application/json")
            if data is not None:
                got.done()
    except UpstreamUnreachable as exc:
        where = shown_url(upstream.url)
        logger.warning("upstream %s unreachable for its resource metadata: %s", where, exc)
        await _plain(send, 502, b'{"error": "the upstream server could not be reached"}')
        return True
    finally:
        await pool.aclose()
    if data is None:
        await _plain(send, 502, b'{"error": "the upstream metadata is too large"}')
        return True
    body = b"" if scope.get("method") == "HEAD" else bytes(data)
    head = [(b"content-type", kind.encode("latin-1", "replace"))]
    await _plain(send, status, body, head, length=len(data))
    return True


async def _plain(
    send: Any,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    length: int | None = None,
) -> None:
    head = headers if headers is not None else [(b"content-type", b"application/json")]
    head = [*head, (b"content-length", str(len(body) if length is None else length).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})
