"""The review console as an ASGI application: its pages, its JSON API, who may do what.

Not a public module: `conduit_mcp.console.create_app` builds it. Server-rendered pages
(Jinja2, autoescape on) over one `PinStore`; the page's own script (`static/console.js`, served
from here) only follows the server-sent events and keeps bulk selections. The API under
`/api/` is what scripts and chat-ops bots use, and what the page's script reads. Every
response carries a Content-Security-Policy without inline script and with `img-src 'self'`:
an icon URI a server sent is shown as text and never fetched.
"""

from __future__ import annotations

import asyncio
import csv
import functools
import io
import ipaddress
import json
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any, Final

import anyio.to_thread
import jinja2
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.responses import JSONResponse as _StarletteJSON
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..pins import Account, AuditEntry, Pending, PendingInstructions, PinStore, ServerSummary
from . import _review
from ._auth import COOKIE, LoginLimit, Session, Sessions, csrf_ok, in_networks
from ._events import Broadcast

#: Every response's security headers. No inline script or style; images only from here.
SECURITY_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
#: The largest request body read (a bulk decision of a thousand rows fits).
MAX_BODY: Final = 1024 * 1024
#: Audit rows a page shows (the export has them all).
AUDIT_PAGE: Final = 500
_STATIC: Final = {
    "console.js": "text/javascript",
    "console.css": "text/css",
    "favicon.svg": "image/svg+xml",
}
_ACTIONS: Final = ("approve", "reject", "revoke")
#: Seconds between an event stream's reads of its account (or token) in the store.
RECHECK: Final = 1.0

#: Decisions a form's outcome line names one by one (then "and N more").
_SAID: Final = 5


class JSONResponse(_StarletteJSON):
    """JSON with every non-ASCII character and `<`, `>`, `&` written as `\\uXXXX`: a hidden
    character a server sent is visible in any viewer, and no string reads as markup."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=True, separators=(",", ":"))
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        return text.encode("ascii")


class SecurityHeaders:
    """ASGI middleware: `SECURITY_HEADERS` on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class Problem(Exception):
    """A request refused: HTTP status and one line for the person or the script."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Console:
    """The console's state: the store, the sessions, the login limit, the event streams."""

    def __init__(
        self,
        location: str,
        *,
        trust_header: str | None,
        trusted_proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...],
        secure_cookies: bool,
    ) -> None:
        self.location = location
        self.trust_header = trust_header.lower() if trust_header else None
        self.trusted_proxies = trusted_proxies
        self.secure_cookies = secure_cookies
        self.sessions = Sessions()
        self.limit = LoginLimit()
        self.broadcast = Broadcast()
        self.store: PinStore | None = None
        self.watcher: Any = None
        loader = jinja2.PackageLoader("conduit_mcp.console", "templates")
        self.templates = jinja2.Environment(loader=loader, autoescape=True)
        self.templates.filters["utc"] = _utc
        self.templates.filters["action"] = _action_label
        self.templates.filters["short"] = _short_fingerprint
        self.templates.filters["kind"] = _audit_kind
        self.templates.filters["shown"] = lambda text: _review.shown(
            _review.clipped(str(text), 300)
        )[0]

    def open(self) -> None:
        self.store = PinStore(self.location, create=False)
        try:
            self.watcher = self.store.watch(self.broadcast.publish, every_entry=True)
        except ValueError:  # ":memory:": nobody else writes it
            self.watcher = None

    def close(self) -> None:
        self.broadcast.close()
        if self.watcher is not None:
            self.watcher.close()
        if self.store is not None:
            self.store.close()

    @property
    def pins(self) -> PinStore:
        assert self.store is not None
        return self.store

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)` in a worker thread (the store is synchronous)."""
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

    # -- who is asking ---------------------------------------------------------------------

    async def identify(self, request: Request) -> tuple[Account, Session | None, str | None]:
        """The account behind `request`: (account, its session or `None` for a token, a new
        session id to set as the cookie or `None`).

        Raises:
            Problem: 401 when nobody is logged in (or the account is gone).
        """
        auth = request.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            account = await self.call(self.pins.token_account, auth[7:].strip())
            if account is None:
                raise Problem(401, "that API token is not valid")
            return account, None, None
        sid = request.cookies.get(COOKIE)
        session = self.sessions.get(sid)
        peer = request.client.host if request.client else None
        if self.trust_header and in_networks(peer, self.trusted_proxies):
            named = request.headers.get(self.trust_header)
            if named:
                account = await self.call(self.pins.account, named)
                if account is None:
                    raise Problem(403, "the account your proxy names is not in the store")
                if session is not None and session.name == account.name:
                    return account, session, None
                new_sid, session = self.sessions.open(account.name, via_header=True)
                return account, session, new_sid
        if session is None:
            raise Problem(401, "log in first")
        account = await self.call(self.pins.account, session.name)
        if account is None:
            self.sessions.close(sid)
            raise Problem(401, "your account was removed")
        return account, session, None

    def set_cookie(self, response: Response, sid: str) -> None:
        response.set_cookie(
            COOKIE,
            sid,
            httponly=True,
            samesite="strict",
            secure=self.secure_cookies,
            path="/",
        )

    # -- the store's facts, for pages and the API ----------------------------------------

    def queue(self, server_id: str | None, status: str | None) -> list[Pending]:
        rows = list(self.pins.pending(brief=True))
        if server_id:
            rows = [p for p in rows if p.server_id == server_id]
        if status:
            rows = [p for p in rows if _review.status_of(p) == status]
        return rows

    def pending_count(self) -> int:
        """Everything that waits for a person: held tools and held instructions."""
        return len(self.pins.pending(brief=True)) + len(self.pins.pending_instructions())

    def decide_instructions(
        self, account: Account, server_id: str, fingerprint: str, action: str
    ) -> str:
        """Approve a server's pending instructions by fingerprint, as `account`; the one-line
        outcome. The store keeps no rejection or revocation of instructions: only `approve`.

        Raises:
            Problem: 403 for a viewer; 400 for another action or a bad server id; 404 when no
                instructions of that server are pending; 409 when the fingerprint is not the
                pending text's.
        """
        if account.role != "approver":
            raise Problem(403, "a viewer cannot decide: ask an approver")
        if action != "approve":
            raise Problem(
                400, "instructions can only be approved (the store keeps no rejection for them)"
            )
        if not fingerprint.startswith("jcs-sha256:"):
            fingerprint = "jcs-sha256:" + fingerprint
        pins = self.pins
        try:
            if not pins.pending_instructions(server_id):
                raise Problem(
                    404,
                    f"nothing is pending for the instructions of {server_id!r} now: "
                    "nothing was approved",
                )
            done = pins.approve_instructions(
                server_id, approver=account.name, fingerprint=fingerprint
            )
        except (TypeError, ValueError) as exc:
            raise Problem(400, str(exc)) from None
        if done is None:
            raise Problem(
                409,
                f"{fingerprint} is not what is pending for the instructions of {server_id!r} "
                "now: nothing was approved; review them again",
            )
        return f"approved the instructions of {server_id}"

    def decide(
        self,
        account: Account,
        server_id: str,
        tool: str,
        fingerprint: str,
        action: str,
        reason: str | None,
    ) -> str:
        """One decision by `account` (the approver of record); its one-line outcome.

        Raises:
            Problem: 403 for a viewer; 400 for a bad action, fingerprint or missing reason;
                404 when nothing is pending for the tool (nothing pinned, for a revoke); 409
                when the fingerprint is not what is pending (or pinned, for a revoke).
        """
        if account.role != "approver":
            raise Problem(403, "a viewer cannot decide: ask an approver")
        if action not in _ACTIONS:
            raise Problem(400, "action must be approve, reject or revoke")
        if not fingerprint.startswith("jcs-sha256:"):
            fingerprint = "jcs-sha256:" + fingerprint
        reason = (reason or "").strip() or None
        pins = self.pins
        try:
            if action == "approve":
                done = pins.approve_pending(
                    server_id, tool, fingerprint=fingerprint, approver=account.name
                )
            elif action == "reject":
                if reason is None:
                    raise Problem(400, "a rejection needs a reason")
                done = pins.reject(
                    server_id, tool, fingerprint=fingerprint, approver=account.name, reason=reason
                )
            else:
                done = pins.revoke(
                    server_id, tool, approver=account.name, reason=reason, fingerprint=fingerprint
                )
        except (TypeError, ValueError) as exc:
            raise Problem(400, str(exc)) from None
        verb = {"approve": "approved", "reject": "rejected", "revoke": "revoked"}[action]
        if not done:
            what = "pinned" if action == "revoke" else "pending"
            try:
                there = (
                    pins.pin(server_id, tool) is not None
                    if action == "revoke"
                    else bool(pins.pending(server_id, tool, brief=True))
                )
            except (TypeError, ValueError) as exc:
                raise Problem(400, str(exc)) from None
            if not there:
                raise Problem(
                    404,
                    f"nothing is {what} for the tool {tool!r} of {server_id!r} now: "
                    f"nothing was {verb}",
                )
            raise Problem(
                409,
                f"{fingerprint} is not what is {what} for this tool now: nothing was "
                f"{verb}; review it again",
            )
        return f"{verb} {tool} ({server_id})"


def create(
    location: str,
    *,
    trust_header: str | None = None,
    trusted_proxies: tuple[str, ...] = (),
    secure_cookies: bool = False,
) -> Starlette:
    """The console's ASGI app over the store at `location` (opened when the app starts)."""
    networks = tuple(ipaddress.ip_network(p, strict=False) for p in trusted_proxies)
    console = Console(
        location,
        trust_header=trust_header,
        trusted_proxies=networks,
        secure_cookies=secure_cookies,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(console.open)
        try:
            yield
        finally:
            console.close()

    routes = [
        Route("/", _page(console, _queue_page)),
        Route("/review", _page(console, _review_page)),
        Route("/audit", _page(console, _audit_page)),
        Route("/servers", _page(console, _servers_page)),
        Route("/login", _login_page(console), methods=["GET", "POST"]),
        Route("/logout", _logout(console), methods=["POST"]),
        Route("/decide", _decide_form(console), methods=["POST"]),
        Route("/static/{name}", _static),
        Route("/favicon.ico", _favicon),
        Route("/api/login", _api_login(console), methods=["POST"]),
        Route("/api/logout", _logout(console), methods=["POST"]),
        Route("/api/pending", _api(console, _api_pending)),
        Route("/api/servers", _api(console, _api_servers)),
        Route("/api/audit", _api(console, _api_audit)),
        Route("/api/decisions", _api_decisions(console), methods=["POST"]),
        Route("/api/events", _api_events(console)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.console = console
    app.add_middleware(SecurityHeaders)
    return app


# -- pages ------------------------------------------------------------------------------------

Handler = Callable[[Request], Any]


def _page(console: Console, build: Callable[..., Any]) -> Handler:
    """A page for a logged-in account: `build(console, request, account)` returns (template,
    values); without a login, the login page."""

    async def endpoint(request: Request) -> Response:
        try:
            account, session, new_sid = await console.identify(request)
        except Problem as problem:
            if problem.status == 401:
                target = urllib.parse.quote(request.url.path + "?" + request.url.query, safe="")
                return RedirectResponse(f"/login?next={target}", status_code=303)
            return _error_page(console, problem)
        try:
            template, values = await console.call(build, console, request, account)
        except Problem as problem:
            return _error_page(console, problem, account, session)
        count = values.get("pending_total")
        if count is None:
            count = await console.call(console.pending_count)
        fragment = request.headers.get("x-console-fragment") == "1"
        html = console.templates.get_template(template).render(
            account=account,
            csrf=session.csrf if session else "",
            pending_count=count,
            fragment=fragment,
            done=request.query_params.get("done"),
            **{k: v for k, v in values.items() if k != "pending_total"},
        )
        response = HTMLResponse(html, headers={"x-pending-count": str(count)})
        if new_sid:
            console.set_cookie(response, new_sid)
        return response

    return endpoint


def _error_page(
    console: Console,
    problem: Problem,
    account: Account | None = None,
    session: Session | None = None,
) -> Response:
    html = console.templates.get_template("error.html").render(
        account=account,
        csrf=session.csrf if session else "",
        pending_count=None,
        fragment=False,
        message=problem.message,
        status=problem.status,
    )
    return HTMLResponse(html, status_code=problem.status)


def _queue_page(console: Console, request: Request, account: Account) -> tuple[str, Any]:
    server_id = request.query_params.get("server_id") or None
    status = request.query_params.get("status") or None
    everything = list(console.pins.pending(brief=True))
    told_all = list(console.pins.pending_instructions())
    told = told_all
    rows = everything
    if server_id:
        rows = [p for p in rows if p.server_id == server_id]
        told = [i for i in told if i.server_id == server_id]
    if status:
        rows = [p for p in rows if _review.status_of(p) == status]
        told = [i for i in told if i.status == status]
    servers = [s.server_id for s in _summaries(console)]
    approver = account.role == "approver"
    rows_html = Markup("").join(_queue_row(p, approver) for p in rows)
    rows_html += Markup("").join(_instructions_row(i, approver) for i in told)
    return "queue.html", {
        "rows": rows_html,
        "row_count": len(rows) + len(told),
        "servers": servers,
        "server_id": server_id or "",
        "status": status or "",
        "statuses": ["new", "changed", "cosmetic", "revoked"],
        "pending_total": len(everything) + len(told_all),
    }


def _queue_row(p: Pending, approver: bool) -> Markup:
    """One row of the queue table (built here, not in the template: a thousand rows through
    Jinja's per-value machinery cost most of the page). Every value is escaped; server text
    goes through `shown` (hidden characters marked)."""
    quote = urllib.parse.quote
    status = escape(_review.status_of(p))
    link = f"/review?server_id={quote(p.server_id, safe='')}&tool={quote(p.name, safe='')}"
    value = json.dumps([p.server_id, p.name, p.fingerprint])
    pick = (
        f'<td><input type="checkbox" name="item" value="{escape(value)}" class="pick"'
        ' aria-label="select"></td>'
        if approver
        else ""
    )
    server = _review.shown(_review.clipped(p.server_id, 300))[0]
    name = _review.shown(_review.clipped(p.name, 300))[0]
    return Markup(
        f'<tr>{pick}<td><span class="badge {status}">{status}</span></td><td>{server}</td>'
        f'<td>tool</td><td class="free"><a class="tool" href="{escape(link)}">{name}</a></td>'
        f"<td><code>{escape(_short_fingerprint(p.fingerprint))}</code></td>"
        f"<td>{_utc(p.first_seen)}</td><td>{_utc(p.last_seen)}</td><td>{p.seen}×</td></tr>\n"
    )


def _instructions_row(i: PendingInstructions, approver: bool) -> Markup:
    """One queue row for a server's held instructions. Never part of a bulk decision (no
    checkbox): a person opens them and reads the text before approving."""
    status = escape(i.status)
    link = "/review?" + urllib.parse.urlencode({"server_id": i.server_id, "kind": "instructions"})
    pick = '<td title="open to approve: instructions are not decided in bulk"></td>'
    server = _review.shown(_review.clipped(i.server_id, 300))[0]
    return Markup(
        f'<tr class="instructions">{pick if approver else ""}<td><span class="badge {status}">'
        f"{status}</span></td><td>{server}</td><td>instructions</td>"
        f'<td><a class="tool" href="{escape(link)}">instructions</a></td>'
        f"<td><code>{escape(_short_fingerprint(i.fingerprint))}</code></td>"
        f"<td>{_utc(i.first_seen)}</td><td>{_utc(i.last_seen)}</td><td>{i.seen}×</td></tr>\n"
    )


def _review_page(console: Console, request: Request, account: Account) -> tuple[str, Any]:
    server_id = request.query_params.get("server_id", "")
    tool = request.query_params.get("tool", "")
    pins = console.pins
    if request.query_params.get("kind") == "instructions":
        try:
            told = pins.pending_instructions(server_id) if server_id else ()
        except (TypeError, ValueError):
            told = ()
        if not told:
            raise Problem(404, "no instructions of that server are pending now (decided?)")
        link = "/review?" + urllib.parse.urlencode({"server_id": server_id, "kind": "instructions"})
        return "review_instructions.html", {
            "review": _review.build_instructions(told[0]),
            "self_link": link,
        }
    try:
        found = pins.pending(server_id, tool) if server_id else ()
    except (TypeError, ValueError):
        found = ()
    if not found:
        raise Problem(404, "nothing is pending for that tool now (decided, or listed again)")
    entry = found[0]
    pin = pins.pin(server_id, tool)
    known = [p.name for p in pins.pins(server_id)]
    known += [p.name for p in pins.pending(server_id, brief=True)]
    review = _review.build(entry, pin.definition if pin else None, known)
    link = "/review?" + urllib.parse.urlencode({"server_id": server_id, "tool": tool})
    return "review.html", {"review": review, "pin": pin, "self_link": link}


def _audit_filters(request: Request) -> dict[str, Any]:
    """The audit filters of a query string (server_id, tool, person, action, since, until).

    Raises:
        Problem: 400 for an action or a time that does not read.
    """
    q = request.query_params
    out: dict[str, Any] = {}
    if q.get("server_id"):
        out["server_id"] = q["server_id"]
    if q.get("tool"):
        out["name"] = q["tool"]
    if q.get("person"):
        out["approver"] = q["person"]
    if q.get("action"):
        out["action"] = q["action"]
    for key in ("since", "until"):
        if q.get(key):
            out[key] = _parse_time(q[key], key)
    return out


def _audit_page(console: Console, request: Request, account: Account) -> tuple[str, Any]:
    filters = _audit_filters(request)
    try:
        entries = console.pins.audit_log(limit=AUDIT_PAGE, **filters)
    except (TypeError, ValueError) as exc:
        raise Problem(400, str(exc)) from None
    query = {k: v for k, v in request.query_params.items() if v}
    return "audit.html", {
        "entries": list(reversed(entries)),
        "query": query,
        "actions": ["approve", "reject", "revoke", "check", "account"],
        "csv": "/api/audit?" + urllib.parse.urlencode({**query, "format": "csv"}),
        "jsonl": "/api/audit?" + urllib.parse.urlencode({**query, "format": "jsonl"}),
        "limit": AUDIT_PAGE,
    }


def _summaries(console: Console) -> list[ServerSummary]:
    """`PinStore.servers()`, and a server known only by its held instructions (no tool)."""
    servers = list(console.pins.servers())
    known = {s.server_id for s in servers}
    for i in console.pins.pending_instructions():
        if i.server_id not in known:
            servers.append(ServerSummary(i.server_id, None, 0, 0, 0, 0))
            known.add(i.server_id)
    return sorted(servers, key=lambda s: s.server_id)


def _held_instructions(console: Console) -> dict[str, str]:
    """Server id -> the status of its held instructions (`new` or `changed`)."""
    return {i.server_id: i.status for i in console.pins.pending_instructions()}


def _servers_page(console: Console, request: Request, account: Account) -> tuple[str, Any]:
    servers = _summaries(console)
    held = _held_instructions(console)
    return "servers.html", {
        "servers": [
            {
                "summary": s,
                "instructions": held.get(s.server_id),
                "review": "/review?"
                + urllib.parse.urlencode({"server_id": s.server_id, "kind": "instructions"}),
                "link": "/?" + urllib.parse.urlencode({"server_id": s.server_id}),
                "audit": "/audit?" + urllib.parse.urlencode({"server_id": s.server_id}),
            }
            for s in servers
        ]
    }


def _login_page(console: Console) -> Handler:
    async def endpoint(request: Request) -> Response:
        target = request.query_params.get("next", "/")
        if not target.startswith("/") or target.startswith("//"):
            target = "/"
        message = None
        status = 200
        if request.method == "POST" and _cross_site(request):
            message, status = "a login must come from the console's own page", 403
        elif request.method == "POST":
            form = await _form(request)
            name, password = form.get("name", ""), form.get("password", "")
            outcome = await _login(console, request, name, password)
            if isinstance(outcome, str):
                response = RedirectResponse(target, status_code=303)
                console.set_cookie(response, outcome)
                return response
            message, status = outcome.message, outcome.status
        html = console.templates.get_template("login.html").render(
            account=None, pending_count=None, fragment=False, message=message, target=target
        )
        return HTMLResponse(html, status_code=status)

    return endpoint


async def _login(console: Console, request: Request, name: str, password: str) -> str | Problem:
    """A new session id, or the problem (rate limited: 429; wrong: 401)."""
    peer = request.client.host if request.client else "?"
    wait, mark = console.limit.attempt(peer, name)
    if wait > 0:
        return Problem(429, f"too many failed logins: try again in {int(wait) + 1} s")
    account = await console.call(console.pins.login, name, password)
    if account is None:
        return Problem(401, "wrong name or password")
    console.limit.succeeded(peer, name, mark)
    sid, _ = console.sessions.open(account.name)
    return sid


def _logout(console: Console) -> Handler:
    async def endpoint(request: Request) -> Response:
        sid = request.cookies.get(COOKIE)
        session = console.sessions.get(sid)
        form = await _form(request) if _is_form(request) else {}
        sent = request.headers.get("x-csrf-token") or form.get("csrf")
        if session is not None and not csrf_ok(session, sent):
            return JSONResponse({"error": "the CSRF token is missing or wrong"}, 403)
        console.sessions.close(sid)
        if request.url.path.startswith("/api/"):
            response: Response = JSONResponse({"ok": True})
        else:
            response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    return endpoint


def _decide_form(console: Console) -> Handler:
    """The page's forms: one decision (review page) or a bulk of selected rows (queue)."""

    async def endpoint(request: Request) -> Response:
        try:
            account, session, _ = await console.identify(request)
        except Problem as problem:
            return _error_page(console, problem)
        form = await _form(request, multi=True)
        if session is None or not csrf_ok(session, _first(form, "csrf")):
            return _error_page(console, Problem(403, "the form is stale: reload the page"))
        action = _first(form, "action")
        reason = _first(form, "reason")
        items = form.get("item") or []
        if not items and _first(form, "kind") == "instructions":
            try:
                line = await console.call(
                    console.decide_instructions,
                    account,
                    _first(form, "server_id"),
                    _first(form, "fingerprint"),
                    action,
                )
            except Problem as problem:
                return _error_page(console, problem, account, session)
            return RedirectResponse("/?" + urllib.parse.urlencode({"done": line}), 303)
        if not items and _first(form, "server_id"):
            items = [
                json.dumps(
                    [_first(form, "server_id"), _first(form, "tool"), _first(form, "fingerprint")]
                )
            ]
        if not items:
            return _error_page(console, Problem(400, "select at least one tool"), account, session)
        done: list[str] = []
        failed: list[str] = []
        for item in items:
            try:
                server_id, tool, value = json.loads(item)
                line = await console.call(
                    console.decide, account, str(server_id), str(tool), str(value), action, reason
                )
                done.append(line)
            except Problem as problem:
                if problem.status in (400, 403) and len(items) == 1:
                    return _error_page(console, problem, account, session)
                failed.append(problem.message)
            except (ValueError, TypeError):
                failed.append("a selected row could not be read")
        said = "; ".join(done[:_SAID]) or "nothing done"
        if len(done) > _SAID:
            said += f" and {len(done) - _SAID} more"
        if failed:
            said += f"; {len(failed)} not: {failed[0]}"
        back = _first(form, "back") or "/"
        if not back.startswith("/") or back.startswith("//"):
            back = "/"
        if back.startswith("/review"):
            back = "/"
        sep = "&" if "?" in back else "?"
        return RedirectResponse(
            back + sep + urllib.parse.urlencode({"done": said}), status_code=303
        )

    return endpoint


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in _STATIC:
        return PlainTextResponse("not found", 404)
    body = resources.files("conduit_mcp.console").joinpath("static").joinpath(name).read_bytes()
    return Response(body, media_type=_STATIC[name])


async def _favicon(request: Request) -> Response:
    """The icon at the address a browser asks for by default (the pages link it too)."""
    body = resources.files("conduit_mcp.console").joinpath("static").joinpath("favicon.svg")
    return Response(body.read_bytes(), media_type="image/svg+xml")


# -- the API ------------------------------------------------------------------------------------


def _api(console: Console, build: Callable[..., Any]) -> Handler:
    """A read of the API: JSON (or the audit export) for any logged-in account."""

    async def endpoint(request: Request) -> Response:
        try:
            account, _, _ = await console.identify(request)
            result: Response = await console.call(build, console, request, account)
            return result
        except Problem as problem:
            return JSONResponse({"error": problem.message}, problem.status)

    return endpoint


def _entry_json(p: Pending, pins: dict[str, Any]) -> dict[str, Any]:
    pin = pins.get(p.name)
    return {
        "kind": "tool",
        "server_id": p.server_id,
        "tool": p.name,
        "status": _review.status_of(p),
        "fingerprint": p.fingerprint,
        "definition": _review.definition_of(p.definition),
        "approved_fingerprint": pin.fingerprint if pin else None,
        "approved_definition": _review.definition_of(pin.definition) if pin else None,
        "changes": [c.to_json() for c in p.changes],
        "first_seen": p.first_seen,
        "last_seen": p.last_seen,
        "seen": p.seen,
        "revoked": (
            None
            if p.revoked_at is None
            else {"at": p.revoked_at, "by": p.revoked_by, "reason": p.revoked_reason}
        ),
    }


def _api_pending(console: Console, request: Request, account: Account) -> Response:
    server_id = request.query_params.get("server_id") or None
    tool = request.query_params.get("tool") or None
    pins = console.pins
    try:
        rows = pins.pending(server_id, tool if server_id else None)
    except (TypeError, ValueError) as exc:
        raise Problem(400, str(exc)) from None
    by_server: dict[str, dict[str, Any]] = {}
    for server in {p.server_id for p in rows}:
        by_server[server] = {pin.name: pin for pin in pins.pins(server)}
    body = [_entry_json(p, by_server.get(p.server_id, {})) for p in rows]
    if not (server_id and tool):  # `tool` applies with `server_id` only, as for the tools
        try:
            told = pins.pending_instructions(server_id)
        except (TypeError, ValueError) as exc:
            raise Problem(400, str(exc)) from None
        body += [_instructions_json(i) for i in told]
    return JSONResponse({"pending": body})


def _instructions_json(i: PendingInstructions) -> dict[str, Any]:
    return {
        "kind": "instructions",
        "server_id": i.server_id,
        "status": i.status,
        "fingerprint": i.fingerprint,
        "instructions": i.instructions,
        "approved_fingerprint": i.pinned,
        "approved_instructions": i.approved,
        "first_seen": i.first_seen,
        "last_seen": i.last_seen,
        "seen": i.seen,
        "protocol_version": i.protocol_version,
    }


def _api_servers(console: Console, request: Request, account: Account) -> Response:
    held = _held_instructions(console)
    return JSONResponse(
        {
            "servers": [
                {
                    "server_id": s.server_id,
                    "last_listed": s.last_listed,
                    "ok": s.ok,
                    "held": s.held,
                    "blocked": s.blocked,
                    "rejected": s.rejected,
                    "instructions": held.get(s.server_id),
                }
                for s in _summaries(console)
            ]
        }
    )


#: The audit export's columns, in order.
AUDIT_COLUMNS: Final = (
    "id",
    "at",
    "time_utc",
    "server_id",
    "tool",
    "action",
    "outcome",
    "fingerprint",
    "previous_fingerprint",
    "approver",
    "reason",
    "protocol_version",
    "kind",
    "account",
)


def _audit_kind(e: AuditEntry) -> str:
    """What an audit entry is about: `"account"` (a console account: `name` is the account),
    `"instructions"` (a server's instructions approved, held, or out of the queue) or `"tool"`.
    The one rule of the page, the exports and `pins audit`: the tool column holds tools only;
    an account's name is in the account column."""
    if e.action == "account":
        return "account"
    # approved, or held (action "check"); out of the queue: "instructions_approved"
    if e.outcome in ("instructions", "instructions_approved"):
        return "instructions"
    return "tool"


def _audit_json(e: AuditEntry) -> dict[str, Any]:
    kind = _audit_kind(e)
    return {
        "id": e.id,
        "at": e.at,
        "time_utc": _utc(e.at),
        "server_id": e.server_id,
        "tool": e.name if kind == "tool" else None,
        "kind": kind,
        "account": e.name if kind == "account" else None,
        "action": e.action,
        "outcome": e.outcome,
        "fingerprint": e.fingerprint,
        "previous_fingerprint": e.previous_fingerprint,
        "approver": e.approver,
        "reason": e.reason,
        "protocol_version": e.protocol_version,
    }


def _api_audit(console: Console, request: Request, account: Account) -> Response:
    filters = _audit_filters(request)
    try:
        entries = console.pins.audit_log(**filters)
    except (TypeError, ValueError) as exc:
        raise Problem(400, str(exc)) from None
    kind = request.query_params.get("format", "json")
    rows = [_audit_json(e) for e in entries]
    if kind == "jsonl":
        text = "".join(json.dumps(row, ensure_ascii=True) + "\n" for row in rows)
        headers = {"content-disposition": 'attachment; filename="audit.jsonl"'}
        return Response(text, media_type="application/x-ndjson", headers=headers)
    if kind == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(AUDIT_COLUMNS)
        for row in rows:
            writer.writerow([_csv_cell(row[c]) for c in AUDIT_COLUMNS])
        headers = {"content-disposition": 'attachment; filename="audit.csv"'}
        return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)
    if kind != "json":
        raise Problem(400, "format must be json, jsonl or csv")
    return JSONResponse({"audit": rows})


def _csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with = + - @ gets a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


def _api_login(console: Console) -> Handler:
    async def endpoint(request: Request) -> Response:
        if _cross_site(request) or not _is_json(request):
            error = {"error": "send JSON (content-type: application/json), not a cross-site form"}
            return JSONResponse(error, 415)
        try:
            body = json.loads(await _body(request))
            name, password = body["name"], body["password"]
            if not isinstance(name, str) or not isinstance(password, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'send {"name": ..., "password": ...}'}, 400)
        except Problem as problem:
            return JSONResponse({"error": problem.message}, problem.status)
        outcome = await _login(console, request, name, password)
        if isinstance(outcome, Problem):
            return JSONResponse({"error": outcome.message}, outcome.status)
        session = console.sessions.get(outcome)
        assert session is not None
        account = await console.call(console.pins.account, name)
        response = JSONResponse(
            {"csrf": session.csrf, "name": name, "role": account.role if account else None}
        )
        console.set_cookie(response, outcome)
        return response

    return endpoint


def _api_decisions(console: Console) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            account, session, _ = await console.identify(request)
            if session is not None and not csrf_ok(session, request.headers.get("x-csrf-token")):
                raise Problem(403, "send the X-CSRF-Token header that /api/login returned")
            try:
                body = json.loads(await _body(request))
                items = body if isinstance(body, list) else [body]
                decisions = [
                    (
                        str(item.get("kind", "tool")),
                        str(item["server_id"]),
                        None if item.get("kind") == "instructions" else str(item["tool"]),
                        str(item["fingerprint"]),
                        str(item["action"]),
                        item.get("reason"),
                    )
                    for item in items
                ]
            except (ValueError, KeyError, TypeError, AttributeError):
                raise Problem(
                    400,
                    'send {"server_id", "tool", "fingerprint", "action", "reason"} (or, for '
                    'instructions, {"server_id", "kind": "instructions", "fingerprint", '
                    '"action": "approve"})',
                ) from None
            results = []
            status = 200
            for kind, server_id, tool, value, action, reason in decisions:
                if kind not in ("tool", "instructions"):
                    raise Problem(400, 'kind must be "tool" or "instructions"')
                if reason is not None and not isinstance(reason, str):
                    raise Problem(400, "reason must be text")
                said: dict[str, Any] = (
                    {"kind": kind, "server_id": server_id} if tool is None else {"tool": tool}
                )
                try:
                    if tool is None:
                        line = await console.call(
                            console.decide_instructions, account, server_id, value, action
                        )
                    else:
                        line = await console.call(
                            console.decide, account, server_id, tool, value, action, reason
                        )
                    results.append({**said, "ok": True, "said": line})
                except Problem as problem:
                    if len(decisions) == 1:
                        raise
                    status = 207
                    results.append({**said, "ok": False, "error": problem.message})
            if len(decisions) == 1:
                return JSONResponse(results[0])
            return JSONResponse({"results": results}, status)
        except Problem as problem:
            return JSONResponse({"error": problem.message}, problem.status)

    return endpoint


def _api_events(console: Console) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            account, session, new_sid = await console.identify(request)
        except Problem as problem:
            return JSONResponse({"error": problem.message}, problem.status)
        subscribed = console.broadcast.subscribe()
        if subscribed is None:
            return JSONResponse({"error": "too many open event streams"}, 503)
        key, queue = subscribed
        sid = new_sid or request.cookies.get(COOKIE)
        token = None if session is not None else request.headers["authorization"][7:].strip()

        checked = [time.monotonic()]

        async def still_allowed() -> bool:
            """Whether whoever opened the stream may still read: their session not ended
            (logout, idle: before every event), their account not removed, their token not
            revoked (read from the store at most once every `RECHECK` seconds)."""
            if session is not None and not console.sessions.alive(sid):
                return False
            now = time.monotonic()
            if now - checked[0] < RECHECK:
                return True
            checked[0] = now
            if session is not None:
                found = await console.call(console.pins.account, account.name)
            else:
                found = await console.call(console.pins.token_account, token)
            return found is not None and found.name == account.name

        async def stream() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                while True:
                    try:
                        data = await asyncio.wait_for(queue.get(), 15.0)
                    except asyncio.TimeoutError:
                        data = ": keep-alive"
                    if data is None or not await still_allowed():
                        return
                    if data.startswith(":"):
                        yield data + "\n\n"
                    else:
                        yield f"event: audit\ndata: {data}\n\n"
            finally:
                console.broadcast.unsubscribe(key)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    return endpoint


# -- helpers ------------------------------------------------------------------------------------


async def _body(request: Request) -> bytes:
    """The request body, at most `MAX_BODY` bytes.

    Raises:
        Problem: 413 past the bound.
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise Problem(413, "the request is too large")
        chunks.append(chunk)
    return b"".join(chunks)


def _is_json(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json"


def _cross_site(request: Request) -> bool:
    """Whether the browser says the request comes from another site (`Sec-Fetch-Site`, sent by
    every current browser): a login there would log the person in as someone else's account
    (login CSRF). A script sends no such header."""
    return request.headers.get("sec-fetch-site", "").lower() == "cross-site"


def _is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded")


async def _form(request: Request, *, multi: bool = False) -> Any:
    """An urlencoded form (the page's forms): name -> value (`multi`: name -> values)."""
    try:
        body = await _body(request)
    except Problem:
        return {}
    fields = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    if multi:
        return fields
    return {k: v[0] for k, v in fields.items()}


def _first(form: dict[str, list[str]], key: str) -> str:
    values = form.get(key) or [""]
    return values[0]


@functools.lru_cache(maxsize=4096)
def _utc_second(second: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(second))


def _utc(seconds: Any) -> str:
    """Seconds since the epoch as a UTC date and time (to the second); `never` for `None`."""
    if seconds is None:
        return "never"
    try:
        return _utc_second(int(float(seconds)))
    except (OverflowError, OSError, ValueError, TypeError):
        return repr(seconds)


#: How the audit page names an entry for a person (action, outcome) -> words.
_LABELS: Final = {
    ("check", "new"): "held: new",
    ("check", "changed"): "held: changed",
    ("check", "cosmetic"): "held: cosmetic",
    ("check", "approved"): "left the queue: approved again",
    ("check", "rejected"): "left the queue: rejected",
    ("approve", None): "approved",
    ("reject", None): "rejected",
    ("revoke", None): "revoked",
    ("account", "added"): "account added",
    ("account", "removed"): "account removed",
    ("account", "token"): "API token issued",
    ("approve", "instructions"): "instructions approved",
    ("check", "instructions"): "instructions held",
    ("check", "instructions_approved"): "instructions left the queue: approved again",
}


def _action_label(entry: AuditEntry) -> str:
    if (entry.action, entry.outcome) == ("check", "cosmetic") and entry.approver is not None:
        return "accepted: cosmetic"  # a policy's `accept_cosmetic`, not a change that waits
    found = _LABELS.get((entry.action, entry.outcome))
    if found is not None:
        return found
    return entry.action if entry.outcome is None else f"{entry.action} {entry.outcome}"


def _short_fingerprint(value: str | None) -> str:
    return "-" if not value else value.removeprefix("jcs-sha256:")[:16]


def _parse_time(text: str, key: str) -> float:
    """A `since` / `until` filter: seconds since the epoch, or a UTC date (`2026-07-01`) or
    date and time (`2026-07-01T12:00`, `2026-07-01 12:00:00`).

    Raises:
        Problem: 400 for anything else.
    """
    import datetime

    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise Problem(400, f"{key}: a date (YYYY-MM-DD) or date and time in UTC") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.timestamp()
