"""Who is asking: sessions (cookie + CSRF token), API tokens, a trusted proxy's header, and the
login rate limit.

Not a public module. Sessions live in this process only (a restart logs everyone out): a
random id in an HttpOnly, SameSite=Strict cookie, and a random CSRF token every write made with
the cookie must send back (`X-CSRF-Token`, or the form field `csrf`). The account behind a
session is read from the store on every request, so a removed account or a changed role takes
effect at once. `Authorization: Bearer TOKEN` (tokens from `console add-user --token`) needs no
CSRF token: a browser never sends it by itself.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

#: The session cookie's name.
COOKIE: Final = "conduit_console"
#: A session ends after this many seconds without a request.
IDLE: Final = 8 * 3600.0
#: At most this many sessions are kept (the oldest idle one goes first).
MAX_SESSIONS: Final = 10_000
#: Failed logins allowed per client address, and per account name, within `WINDOW` seconds.
FAILURES: Final = 5
WINDOW: Final = 300.0


@dataclass
class Session:
    """One logged-in browser: the account's name, its CSRF token, its last request."""

    name: str
    csrf: str
    seen: float
    via_header: bool = False


class Sessions:
    """The sessions of this console process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: OrderedDict[str, Session] = OrderedDict()

    def open(self, name: str, *, via_header: bool = False) -> tuple[str, Session]:
        """A new session for the account `name`: (its id, the session)."""
        sid = secrets.token_urlsafe(32)
        session = Session(name, secrets.token_urlsafe(32), time.monotonic(), via_header)
        with self._lock:
            self._by_id[sid] = session
            while len(self._by_id) > MAX_SESSIONS:
                self._by_id.popitem(last=False)
        return sid, session

    def get(self, sid: str | None) -> Session | None:
        """The live session of cookie value `sid` (its idle clock restarted), or `None`."""
        if not sid:
            return None
        now = time.monotonic()
        with self._lock:
            session = self._by_id.get(sid)
            if session is None:
                return None
            if now - session.seen > IDLE:
                del self._by_id[sid]
                return None
            session.seen = now
            self._by_id.move_to_end(sid)
            return session

    def alive(self, sid: str | None) -> bool:
        """Whether `sid` is a live session (its idle clock left as it is: an open event
        stream is no activity of the person's)."""
        if not sid:
            return False
        with self._lock:
            session = self._by_id.get(sid)
            return session is not None and time.monotonic() - session.seen <= IDLE

    def close(self, sid: str | None) -> None:
        """End a session (logout)."""
        if sid:
            with self._lock:
                self._by_id.pop(sid, None)


def csrf_ok(session: Session, sent: str | None) -> bool:
    """Whether `sent` is the session's CSRF token (compared in constant time)."""
    return bool(sent) and hmac.compare_digest(session.csrf, sent or "")


class LoginLimit:
    """Failed logins counted per client address and per account name over a sliding window;
    past `FAILURES` of either, logins are refused until the window moves on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: OrderedDict[str, list[float]] = OrderedDict()

    def _recent(self, key: str, now: float) -> list[float]:
        times = [t for t in self._failures.get(key, []) if now - t < WINDOW]
        if times:
            self._failures[key] = times
        else:
            self._failures.pop(key, None)
        return times

    def retry_after(self, address: str, name: str) -> float:
        """Seconds until a login from `address` for `name` may be tried; 0 when now."""
        now = time.monotonic()
        with self._lock:
            return self._wait(address, name, now)

    def _wait(self, address: str, name: str, now: float) -> float:
        wait = 0.0
        for key in _keys(address, name):
            times = self._recent(key, now)
            if len(times) >= FAILURES:
                wait = max(wait, WINDOW - (now - times[-FAILURES]))
        return wait

    def attempt(self, address: str, name: str) -> tuple[float, float]:
        """Start one login: (seconds to wait, 0 when it may go on; the attempt's mark).

        An attempt that may go on is counted as failed at once, in the same lock as the
        check, so logins sent together cannot all pass the check before the first password
        check ends; `succeeded(address, name, mark)` takes it back.
        """
        now = time.monotonic()
        with self._lock:
            wait = self._wait(address, name, now)
            if wait == 0:
                self._count(address, name, now)
        return wait, now

    def succeeded(self, address: str, name: str, mark: float) -> None:
        """Take back the attempt `mark` (from `attempt`): the password was right."""
        with self._lock:
            for key in _keys(address, name):
                times = self._failures.get(key)
                if times and mark in times:
                    times.remove(mark)

    def failed(self, address: str, name: str) -> None:
        """Count one failed login."""
        with self._lock:
            self._count(address, name, time.monotonic())

    def _count(self, address: str, name: str, now: float) -> None:
        for key in _keys(address, name):
            self._failures.setdefault(key, []).append(now)
            self._failures.move_to_end(key)
        while len(self._failures) > 100_000:
            self._failures.popitem(last=False)


def _keys(address: str, name: str) -> tuple[str, str]:
    """The limit's two keys of a login: its address and its name (the name's SHA-256: a name
    is whatever the client sent, up to a request body, and is kept for `WINDOW`)."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"addr:{address}", f"name:{digest}"


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is a loopback address."""
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def in_networks(
    address: str | None, networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
) -> bool:
    """Whether the peer `address` is in one of `networks` (trusted reverse proxies)."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)
