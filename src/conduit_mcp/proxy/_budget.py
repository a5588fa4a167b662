"""Per-client budgets of the HTTP listener's stateless (2026-07-28) requests: every such
request of every client shares one guard connection and its table of requests in flight
(`guard._state.MAX_OUTSTANDING`), so one client holding thousands of `subscriptions/listen`
streams or slow requests open could have everyone else's refused. Each client gets a share.

Not a public module.

Who a client is, on a transport with no session: the credential it presents (a keyed hash of
its `Authorization` header, the key random per process, so neither the credential nor a hash
that could be checked against a guess is kept or logged), else the peer address the HTTP
server reports (`scope["client"]`). Clients behind one NAT or one reverse proxy without
credentials share a budget; a client with many credentials, or many addresses, gets one
budget each (the total caps still hold).

Caps: requests in flight per client (listen streams included), listen streams per client, and
listen streams in total, so ordinary requests always keep part of the guard's table; clients
tracked at once. A client leaves the table when it has nothing in flight: the table's size
follows the clients active now, never every client ever seen.

Past a cap the request is answered at once, never sent on: HTTP 429 (RFC 6585 section 4: this
client sent too many) or 503 (RFC 9110 section 15.6.4: the proxy as a whole is at its limit),
both with `Retry-After` (RFC 9110 section 10.2.3), and a JSON-RPC error (-32603, MCP 2026-07-28
schema `InternalError`: the spec defines no overload error) whose `data.reason` names the cap.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from typing import Any, Final

import orjson

logger = logging.getLogger("conduit_mcp.proxy")

#: Defaults (the guard's table holds 4,096 requests per connection).
MAX_IN_FLIGHT_PER_CLIENT: Final = 256
MAX_LISTEN_STREAMS_PER_CLIENT: Final = 32
#: A quarter of the guard's table: ordinary requests keep the rest.
MAX_LISTEN_STREAMS: Final = 1024
MAX_CLIENTS: Final = 4096
#: Seconds a refused client is told to wait (`Retry-After`).
RETRY_AFTER: Final = 1


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was refused.

    Attributes:
        reason: a closed set: `too_many_in_flight_per_client`,
            `too_many_listen_streams_per_client`, `too_many_listen_streams`,
            `too_many_clients` (the Prometheus label and `data.reason`).
        status: the HTTP status (429 for a client's own cap, 503 for the proxy's).
        message: one sentence for the client (no credential, no address).
    """

    reason: str
    status: int
    message: str


class ClientBudget:
    """The caps and the table of clients with requests in flight (see the module docstring).
    Used from one event loop (no lock: each method runs without awaiting).

    Args:
        max_in_flight_per_client: requests in flight per client, listen streams included.
        max_listen_streams_per_client: open `subscriptions/listen` streams per client.
        max_listen_streams: open listen streams of every client together.
        max_clients: clients with something in flight at once.
        on_refused: called with the `Refusal` of each refused request (a metric).

    Raises:
        ValueError: a cap below 1.
    """

    __slots__ = (
        "_clients",
        "_key",
        "listening",
        "max_clients",
        "max_in_flight_per_client",
        "max_listen_streams",
        "max_listen_streams_per_client",
        "on_refused",
    )

    def __init__(
        self,
        *,
        max_in_flight_per_client: int = MAX_IN_FLIGHT_PER_CLIENT,
        max_listen_streams_per_client: int = MAX_LISTEN_STREAMS_PER_CLIENT,
        max_listen_streams: int = MAX_LISTEN_STREAMS,
        max_clients: int = MAX_CLIENTS,
        on_refused: Any = None,
    ) -> None:
        caps = (
            max_in_flight_per_client,
            max_listen_streams_per_client,
            max_listen_streams,
            max_clients,
        )
        if any(cap < 1 for cap in caps):
            raise ValueError("a client budget's caps must be at least 1")
        self.max_in_flight_per_client = max_in_flight_per_client
        self.max_listen_streams_per_client = max_listen_streams_per_client
        self.max_listen_streams = max_listen_streams
        self.max_clients = max_clients
        self.on_refused = on_refused
        #: client -> [requests in flight, listen streams open]; only clients with one.
        self._clients: dict[str, list[int]] = {}
        self.listening = 0
        self._key = secrets.token_bytes(32)

    def __len__(self) -> int:
        """Clients with something in flight now."""
        return len(self._clients)

    def client(self, authorization: str | None, peer: Any) -> str:
        """Who sent a request: `"credential:<hash>"` (a keyed BLAKE2b of `authorization`, 16
        bytes, in hex) when it carries one, else `"peer:<address>"` (`peer`: the ASGI
        `scope["client"]`, `(host, port)`; the port is left out: a client's connections share
        a budget), else `"peer:unknown"`."""
        if authorization:
            digest = hashlib.blake2b(
                authorization.encode("utf-8", "surrogatepass"), digest_size=16, key=self._key
            )
            return "credential:" + digest.hexdigest()
        if isinstance(peer, list | tuple) and peer:
            return f"peer:{peer[0]}"
        return "peer:unknown"

    def admit(self, client: str, listen: bool) -> Refusal | None:
        """Count one request of `client` in flight (`listen`: a `subscriptions/listen`
        stream), or say why not (nothing counted; logged). Every admitted request must be
        `release`d once."""
        usage = self._clients.get(client)
        refusal: Refusal | None = None
        if usage is None:
            if len(self._clients) >= self.max_clients:
                refusal = Refusal(
                    "too_many_clients",
                    503,
                    f"the proxy serves {self.max_clients} clients at once; try again later",
                )
            else:
                usage = [0, 0]
        if usage is not None:
            if usage[0] >= self.max_in_flight_per_client:
                refusal = Refusal(
                    "too_many_in_flight_per_client",
                    429,
                    f"this client has {self.max_in_flight_per_client} requests in flight",
                )
            elif listen and usage[1] >= self.max_listen_streams_per_client:
                refusal = Refusal(
                    "too_many_listen_streams_per_client",
                    429,
                    f"this client has {self.max_listen_streams_per_client} "
                    "subscriptions/listen streams open",
                )
            elif listen and self.listening >= self.max_listen_streams:
                refusal = Refusal(
                    "too_many_listen_streams",
                    503,
                    f"the proxy has {self.max_listen_streams} subscriptions/listen streams " "open",
                )
        if refusal is not None:
            logger.warning(
                "stateless request refused (%s): %s (client %s)",
                refusal.reason,
                refusal.message,
                _shown(client),
            )
            if self.on_refused is not None:
                self.on_refused(refusal)
            return refusal
        assert usage is not None
        if not usage[0]:
            self._clients[client] = usage
        usage[0] += 1
        if listen:
            usage[1] += 1
            self.listening += 1
        return None

    def release(self, client: str, listen: bool) -> None:
        """One admitted request of `client` ended; the client leaves the table when it has
        nothing left in flight."""
        usage = self._clients.get(client)
        if usage is None:
            return
        usage[0] -= 1
        if listen:
            usage[1] -= 1
            self.listening -= 1
        if usage[0] <= 0:
            del self._clients[client]


def _shown(client: str) -> str:
    """A client as logged: a credential's keyed hash cut to 8 hex digits (enough to tell
    clients apart in one log, useless to check a guess offline: the key never leaves the
    process), a peer address as it is."""
    kind, _, value = client.partition(":")
    return f"credential #{value[:8]}" if kind == "credential" else f"peer {value}"


def refusal_body(request_id: Any, refusal: Refusal) -> dict[str, Any]:
    """The JSON-RPC error answering a refused request (`request_id`: the client's id)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32603,
            "message": f"conduit-mcp proxy: too busy: {refusal.message}",
            "data": {"reason": refusal.reason, "retryAfter": RETRY_AFTER},
        },
    }


async def write_refusal(send: Any, request_id: Any, refusal: Refusal) -> None:
    """Answer a refused request on the ASGI `send`: `refusal.status`, `Retry-After`, the
    JSON-RPC error of `refusal_body`."""
    body = refusal_body(request_id, refusal)
    try:
        data = orjson.dumps(body)
    except orjson.JSONEncodeError:  # an id orjson cannot write (an integer past 64 bits)
        data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refusal.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"retry-after", str(RETRY_AFTER).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
