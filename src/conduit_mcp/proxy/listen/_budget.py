"""Per-client budgets of the HTTP listener's stateless (2026-07-28) requests: every such
request of every client shares one guard connection and its table of requests in flight
(`guard._state.MAX_OUTSTANDING`), so one client holding thousands of `subscriptions/listen`
streams or slow requests open could have everyone else's refused. Each client gets a share.

Not a public module.

Who a client is, on a transport with no session: the credential it presents (a keyed hash of
its `Authorization` header, the key random per process, so neither the credential nor a hash
that could be checked against a guess is kept or logged), else the peer address the HTTP
server reports (`scope["client"]`, the TCP peer: the listener trusts no `X-Forwarded-For`).
Every address also has a budget of its own, larger, that all its credentials share: the proxy
checks no credential, so one client could otherwise present a new made-up one per request and
take the whole table. A request without a credential counts against its address's budget
too (an address cannot add the share of its credential-less client to that of its made-up
credentials). An IPv6 address is its /64 network (one host, one subscriber, commonly holds a
whole /64 and could take a fresh address per request, RFC 7421), an IPv4-mapped one its IPv4
address. Clients behind one NAT or one reverse proxy share their address's budget; a client
with many IPv4 addresses gets one each (the total caps still hold).

Caps: requests in flight per client (listen streams included), listen streams per client, and
listen streams in total, so ordinary requests always keep part of the guard's table; clients
tracked at once. A client leaves the table when it has nothing in flight: the table's size
follows the clients active now, never every client ever seen.

Sessions (2025-11-25 and before: each has its own upstream, a server process or an upstream
session) are counted the same way: open sessions per client, per address, and in all. A
session belongs to the client that opened it: its credential's keyed hash, or none (the
listener answers a request with another credential, or none, as if the session did not
exist).

Past a cap the request is answered at once, never sent on: HTTP 429 (RFC 6585 section 4: this
client sent too many) or 503 (RFC 9110 section 15.6.4: the proxy as a whole is at its limit),
both with `Retry-After` (RFC 9110 section 10.2.3), and a JSON-RPC error (-32603, MCP 2026-07-28
schema `InternalError`: the spec defines no overload error) whose `data.reason` names the cap.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import secrets
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import orjson

logger = logging.getLogger("conduit_mcp.proxy")

#: Defaults (the guard's table holds 4,096 requests per connection).
MAX_IN_FLIGHT_PER_CLIENT: Final = 256
MAX_LISTEN_STREAMS_PER_CLIENT: Final = 32
#: An address's share, whatever credentials its requests carry: a quarter of the table.
MAX_IN_FLIGHT_PER_ADDRESS: Final = 1024
MAX_LISTEN_STREAMS_PER_ADDRESS: Final = 128
#: A quarter of the guard's table: ordinary requests keep the rest.
MAX_LISTEN_STREAMS: Final = 1024
MAX_CLIENTS: Final = 4096
#: Sessions open at once: in all, per client (its credential, else its address), per address.
MAX_SESSIONS: Final = 1000
MAX_SESSIONS_PER_CLIENT: Final = 32
MAX_SESSIONS_PER_ADDRESS: Final = 128
#: Seconds a refused client is told to wait (`Retry-After`).
RETRY_AFTER: Final = 1


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was refused.

    Attributes:
        reason: a closed set: `too_many_in_flight_per_client`,
            `too_many_listen_streams_per_client`, `too_many_in_flight_per_address`,
            `too_many_listen_streams_per_address`, `too_many_listen_streams`,
            `too_many_clients`, `too_many_sessions_per_client`,
            `too_many_sessions_per_address`, `too_many_sessions` (the Prometheus label and
            `data.reason`).
        status: the HTTP status (429 for a client's own cap, 503 for the proxy's).
        message: one sentence for the client (no credential, no address).
    """

    reason: str
    status: int
    message: str


class Who(NamedTuple):
    """Who sent a request (`ClientBudget.client`).

    Attributes:
        credential: `"credential:<hash>"` (a keyed BLAKE2b of the `Authorization` header, 16
            bytes in hex), or with `--auth jwt` `"subject:<hash>"` (of the verified subject),
            `None` without one.
        address: `"peer:<address>"` (no port; an IPv6 address as its /64,
            `"peer:2001:db8::/64"`), or `"peer:unknown"`.
    """

    credential: str | None
    address: str

    @property
    def key(self) -> str:
        """The client's own budget: its credential, else its address."""
        return self.credential or self.address


class ClientBudget:
    """The caps and the table of clients with requests in flight (see the module docstring).
    Used from one event loop (no lock: each method runs without awaiting).

    Args:
        max_in_flight_per_client: requests in flight per client, listen streams included.
        max_listen_streams_per_client: open `subscriptions/listen` streams per client.
        max_listen_streams: open listen streams of every client together.
        max_clients: clients (and addresses) with something in flight at once.
        max_in_flight_per_address: requests in flight from one address, whatever credentials
            they carry.
        max_listen_streams_per_address: open listen streams from one address.
        max_sessions: sessions open at once, every client's together.
        max_sessions_per_client: sessions one client (its credential, else its address) has
            open.
        max_sessions_per_address: sessions open from one address, whatever credentials
            opened them.
        on_refused: called with the `Refusal` of each refused request (a metric).

    Raises:
        ValueError: a cap below 1.
    """

    __slots__ = (
        "_addresses",
        "_clients",
        "_key",
        "_session_addresses",
        "_session_clients",
        "listening",
        "max_clients",
        "max_in_flight_per_address",
        "max_in_flight_per_client",
        "max_listen_streams",
        "max_listen_streams_per_address",
        "max_listen_streams_per_client",
        "max_sessions",
        "max_sessions_per_address",
        "max_sessions_per_client",
        "on_refused",
        "sessions",
    )

    def __init__(
        self,
        *,
        max_in_flight_per_client: int = MAX_IN_FLIGHT_PER_CLIENT,
        max_listen_streams_per_client: int = MAX_LISTEN_STREAMS_PER_CLIENT,
        max_listen_streams: int = MAX_LISTEN_STREAMS,
        max_clients: int = MAX_CLIENTS,
        max_in_flight_per_address: int = MAX_IN_FLIGHT_PER_ADDRESS,
        max_listen_streams_per_address: int = MAX_LISTEN_STREAMS_PER_ADDRESS,
        max_sessions: int = MAX_SESSIONS,
        max_sessions_per_client: int = MAX_SESSIONS_PER_CLIENT,
        max_sessions_per_address: int = MAX_SESSIONS_PER_ADDRESS,
        on_refused: Any = None,
    ) -> None:
        caps = (
            max_in_flight_per_client,
            max_listen_streams_per_client,
            max_listen_streams,
            max_clients,
            max_in_flight_per_address,
            max_listen_streams_per_address,
            max_sessions,
            max_sessions_per_client,
            max_sessions_per_address,
        )
        if any(cap < 1 for cap in caps):
            raise ValueError("a client budget's caps must be at least 1")
        self.max_in_flight_per_client = max_in_flight_per_client
        self.max_listen_streams_per_client = max_listen_streams_per_client
        self.max_listen_streams = max_listen_streams
        self.max_clients = max_clients
        self.max_in_flight_per_address = max_in_flight_per_address
        self.max_listen_streams_per_address = max_listen_streams_per_address
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self.max_sessions_per_address = max_sessions_per_address
        self.on_refused = on_refused
        #: client (`Who.key`) -> [requests in flight, listen streams open]; only clients with
        #: something in flight.
        self._clients: dict[str, list[int]] = {}
        #: the same per address, for every request (with a credential or without).
        self._addresses: dict[str, list[int]] = {}
        self.listening = 0
        #: open sessions per client (`Who.key`) and per address; only those with one open.
        self._session_clients: dict[str, int] = {}
        self._session_addresses: dict[str, int] = {}
        self.sessions = 0
        self._key = secrets.token_bytes(32)

    def __len__(self) -> int:
        """Clients with something in flight now."""
        return len(self._clients)

    def client(self, authorization: str | None, peer: Any, subject: str | None = None) -> Who:
        """Who sent a request: its credential (a keyed BLAKE2b of `authorization`) when it
        carries one, and its address (`peer`: the ASGI `scope["client"]`, `(host, port)`; the
        port is left out: a client's connections share a budget), `"peer:unknown"` without
        one; an IPv6 address is its /64 network. `subject`: with `--auth jwt`, the verified
        caller (`"subject:<keyed hash>"`), which then stands for the credential: each token
        of one subject is the same client."""
        if isinstance(peer, list | tuple) and peer:
            address = f"peer:{_network(peer[0])}"
        else:
            address = "peer:unknown"
        if subject is not None:
            digest = hashlib.blake2b(
                subject.encode("utf-8", "surrogatepass"), digest_size=16, key=self._key
            )
            return Who("subject:" + digest.hexdigest(), address)
        if authorization:
            digest = hashlib.blake2b(
                authorization.encode("utf-8", "surrogatepass"), digest_size=16, key=self._key
            )
            return Who("credential:" + digest.hexdigest(), address)
        return Who(None, address)

    def admit(self, who: Who, listen: bool) -> Refusal | None:
        """Count one request of `who` in flight (`listen`: a `subscriptions/listen` stream),
        or say why not (nothing counted; logged). Every admitted request must be `release`d
        once."""
        clients = self._clients
        usage = clients.get(who.key)
        by_address = self._addresses.get(who.address)
        refusal: Refusal | None = None
        if usage is None and len(clients) >= self.max_clients:
            refusal = Refusal(
                "too_many_clients",
                503,
                f"the proxy serves {self.max_clients} clients at once; try again later",
            )
        elif usage is not None and usage[0] >= self.max_in_flight_per_client:
            refusal = Refusal(
                "too_many_in_flight_per_client",
                429,
                f"this client has {self.max_in_flight_per_client} requests in flight",
            )
        elif listen and usage is not None and usage[1] >= self.max_listen_streams_per_client:
            refusal = Refusal(
                "too_many_listen_streams_per_client",
                429,
                f"this client has {self.max_listen_streams_per_client} "
                "subscriptions/listen streams open",
            )
        elif by_address is not None and by_address[0] >= self.max_in_flight_per_address:
            refusal = Refusal(
                "too_many_in_flight_per_address",
                429,
                f"this address has {self.max_in_flight_per_address} requests in flight",
            )
        elif (
            listen
            and by_address is not None
            and by_address[1] >= self.max_listen_streams_per_address
        ):
            refusal = Refusal(
                "too_many_listen_streams_per_address",
                429,
                f"this address has {self.max_listen_streams_per_address} "
                "subscriptions/listen streams open",
            )
        elif listen and self.listening >= self.max_listen_streams:
            refusal = Refusal(
                "too_many_listen_streams",
                503,
                f"the proxy has {self.max_listen_streams} subscriptions/listen streams open",
            )
        if refusal is not None:
            self.refused(who, refusal)
            return refusal
        _count(clients, who.key, listen)
        _count(self._addresses, who.address, listen)
        if listen:
            self.listening += 1
        return None

    def release(self, who: Who, listen: bool) -> None:
        """One admitted request of `who` ended; a client (an address) leaves the table when
        it has nothing left in flight."""
        if _uncount(self._clients, who.key, listen) and listen:
            self.listening -= 1
        _uncount(self._addresses, who.address, listen)

    def session_refusal(self, who: Who) -> Refusal | None:
        """Why `who` may not open one more session now (`None`: it may), without counting
        it or logging."""
        if self._session_clients.get(who.key, 0) >= self.max_sessions_per_client:
            return Refusal(
                "too_many_sessions_per_client",
                429,
                f"this client has {self.max_sessions_per_client} sessions open",
            )
        if self._session_addresses.get(who.address, 0) >= self.max_sessions_per_address:
            return Refusal(
                "too_many_sessions_per_address",
                429,
                f"this address has {self.max_sessions_per_address} sessions open",
            )
        if self.sessions >= self.max_sessions:
            return Refusal(
                "too_many_sessions",
                503,
                f"the proxy has {self.max_sessions} sessions open; try again later",
            )
        return None

    def open_session(self, who: Who) -> Refusal | None:
        """Count one session of `who` open, or say why not (nothing counted; logged). Every
        counted session must be `close_session`d once."""
        refusal = self.session_refusal(who)
        if refusal is not None:
            self.refused(who, refusal, "session")
            return refusal
        clients, addresses = self._session_clients, self._session_addresses
        clients[who.key] = clients.get(who.key, 0) + 1
        addresses[who.address] = addresses.get(who.address, 0) + 1
        self.sessions += 1
        return None

    def close_session(self, who: Who) -> None:
        """One counted session of `who` closed."""
        for table, key in (
            (self._session_clients, who.key),
            (self._session_addresses, who.address),
        ):
            count = table.get(key, 0) - 1
            if count > 0:
                table[key] = count
            else:
                table.pop(key, None)
        self.sessions = max(self.sessions - 1, 0)

    def refused(self, who: Who, refusal: Refusal, what: str = "stateless request") -> None:
        """Log `refusal` of `what` from `who` (without the credential) and count it."""
        logger.warning(
            "%s refused (%s): %s (client %s)", what, refusal.reason, refusal.message, shown(who)
        )
        if self.on_refused is not None:
            self.on_refused(refusal)


def _network(host: Any) -> str:
    """A peer's host as budgeted: an IPv6 address as its /64 network, an IPv4-mapped one as
    its IPv4 address, anything else (IPv4, a Unix socket's name) as given. Asked per request:
    the last `NETWORKS_KEPT` hosts' answers are remembered (parsing an address is ~10 µs)."""
    text = str(host)
    network = _networks.get(text)
    if network is None:
        network = _parsed_network(text)
        if len(_networks) >= NETWORKS_KEPT:
            del _networks[next(iter(_networks))]  # the oldest: memory stays bounded
        _networks[text] = network
    return network


#: Hosts whose `_network` is remembered (a flood of new addresses only pushes older ones out).
NETWORKS_KEPT: Final = 4096
_networks: dict[str, str] = {}


def _parsed_network(host: str) -> str:
    try:
        address = ipaddress.ip_address(host.partition("%")[0])  # no zone index
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _count(table: dict[str, list[int]], key: str, listen: bool) -> None:
    usage = table.get(key)
    if usage is None:
        usage = table[key] = [0, 0]
    usage[0] += 1
    if listen:
        usage[1] += 1


def _uncount(table: dict[str, list[int]], key: str, listen: bool) -> bool:
    """Take one request off `key`'s count; False when `key` had none (nothing taken)."""
    usage = table.get(key)
    if usage is None:
        return False
    usage[0] -= 1
    if listen:
        usage[1] -= 1
    if usage[0] <= 0:
        del table[key]
    return True


def shown(who: Who) -> str:
    """A client as logged: a credential's keyed hash cut to 8 hex digits (enough to tell
    clients apart in one log, useless to check a guess offline: the key never leaves the
    process) and the address, or the address alone."""
    address = who.address.partition(":")[2]
    if who.credential:
        return f"credential #{who.credential.partition(':')[2][:8]} from {address}"
    return f"peer {address}"


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
