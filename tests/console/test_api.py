"""The console's JSON API and its rules of who may do what (issue 29 items 1 and 2), in process
(Starlette's test client over the real app and a sqlite store a guard filled), and a running
guard that follows a console decision through the store's change feed, without a re-list.

Provenance: conduit-defined (docs/console.md is the contract); the attacks are the ones a
browser or a script can make: no login, a cookie without the CSRF token, a viewer deciding, a
stale fingerprint, a forged proxy header from an untrusted address, password guessing.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from conduit_mcp.client import Tool
from conduit_mcp.console import create_app
from conduit_mcp.pins import PinStore
from tests.pins.test_pins import independent_fingerprint

from .seed import MAIL, PASSWORD, RUG_PULL, WEATHER, fleet, held


@pytest.fixture
def store(tmp_path: Path) -> str:
    location = str(tmp_path / "pins.db")
    fleet(location, "http://127.0.0.1:9")
    return location


@pytest.fixture
def client(store: str) -> Iterator[TestClient]:
    with TestClient(create_app(store), base_url="http://127.0.0.1") as test_client:
        yield test_client


def login(client: TestClient, name: str = "alice") -> str:
    answer = client.post("/api/login", json={"name": name, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["csrf"])


def decision(action: str, raw: dict[str, Any], server: str, reason: str | None = None) -> Any:
    body = {
        "server_id": server,
        "tool": raw["name"],
        "fingerprint": independent_fingerprint(raw),
        "action": action,
    }
    if reason is not None:
        body["reason"] = reason
    return body


def test_nothing_without_a_login(client: TestClient) -> None:
    for path in ("/api/pending", "/api/audit", "/api/servers", "/api/events"):
        assert client.get(path).status_code == 401
    assert client.get("/", follow_redirects=False).headers["location"].startswith("/login")
    answer = client.post("/api/decisions", json=decision("approve", RUG_PULL, "weather"))
    assert answer.status_code == 401


def test_pending_lists_each_entry_with_both_definitions_and_changes(client: TestClient) -> None:
    login(client)
    entries = {e["tool"]: e for e in client.get("/api/pending").json()["pending"]}
    weather = entries["get_weather"]
    assert weather["status"] == "changed"
    assert weather["fingerprint"] == independent_fingerprint(RUG_PULL)
    assert weather["definition"] == RUG_PULL and weather["approved_definition"] == WEATHER
    assert weather["approved_fingerprint"] == independent_fingerprint(WEATHER)
    assert "/description" in [c["path"] for c in weather["changes"]]
    assert entries["send_mail"]["status"] == "new"
    only = client.get("/api/pending", params={"server_id": "mail"}).json()["pending"]
    assert [e["tool"] for e in only] == ["send_mail"]
    raw = client.get("/api/pending", params={"server_id": "weather"}).content
    assert b"\\u200b" in raw and "\u200b".encode() not in raw  # hidden characters escaped
    assert b"<" not in raw


def test_writes_need_the_csrf_token_and_a_viewer_cannot_decide(client: TestClient) -> None:
    csrf = login(client, "victor")
    body = decision("approve", RUG_PULL, "weather")
    assert client.post("/api/decisions", json=body).status_code == 403  # no CSRF header
    answer = client.post("/api/decisions", json=body, headers={"x-csrf-token": csrf})
    assert answer.status_code == 403 and "viewer" in answer.json()["error"]
    csrf = login(client, "alice")
    assert (
        client.post("/api/decisions", json=body, headers={"x-csrf-token": "x"}).status_code == 403
    )
    answer = client.post("/api/decisions", json=body, headers={"x-csrf-token": csrf})
    assert answer.status_code == 200 and answer.json()["ok"] is True


def test_a_stale_fingerprint_is_409_and_approves_nothing(client: TestClient, store: str) -> None:
    """Issue 29 "Decisions": a definition that changed since the page loaded approves nothing
    and says so."""
    csrf = login(client)
    with PinStore(store) as pins:
        held(pins, "weather", [{**RUG_PULL, "description": "swapped after the review"}])
    answer = client.post(
        "/api/decisions",
        json=decision("approve", RUG_PULL, "weather"),
        headers={"x-csrf-token": csrf},
    )
    assert answer.status_code == 409 and "nothing was approved" in answer.json()["error"]
    with PinStore(store) as pins:
        pin = pins.pin("weather", "get_weather")
        assert pin is not None and pin.fingerprint == independent_fingerprint(WEATHER)


def test_reject_needs_a_reason_and_bulk_decides_each_row_by_its_fingerprint(
    client: TestClient, store: str
) -> None:
    csrf = login(client)
    headers = {"x-csrf-token": csrf}
    answer = client.post("/api/decisions", json=decision("reject", MAIL, "mail"), headers=headers)
    assert answer.status_code == 400 and "reason" in answer.json()["error"]
    bulk = [
        decision("reject", MAIL, "mail", "mails anyone"),
        decision("approve", {**RUG_PULL, "description": "not pending"}, "weather"),
    ]
    answer = client.post("/api/decisions", json=bulk, headers=headers)
    assert answer.status_code == 207
    assert [r["ok"] for r in answer.json()["results"]] == [True, False]
    with PinStore(store) as pins:
        assert [p.name for p in pins.pending("mail")] == []
        assert [e.approver for e in pins.audit_log(action="reject")] == ["alice"]


def test_the_approver_of_record_is_the_logged_in_account(client: TestClient, store: str) -> None:
    csrf = login(client)
    body = {**decision("approve", RUG_PULL, "weather"), "approver": "mallory"}
    assert client.post("/api/decisions", json=body, headers={"x-csrf-token": csrf}).is_success
    with PinStore(store) as pins:
        pin = pins.pin("weather", "get_weather")
        assert pin is not None and pin.approver == "alice"


def test_an_api_token_works_without_a_cookie_and_is_stored_hashed(
    client: TestClient, store: str
) -> None:
    with PinStore(store) as pins:
        token = pins.add_token("alice", by="tests")
    bot = TestClient(client.app, base_url="http://127.0.0.1")
    headers = {"authorization": f"Bearer {token}"}
    assert bot.get("/api/pending", headers=headers).status_code == 200
    answer = bot.post(
        "/api/decisions", json=decision("approve", RUG_PULL, "weather"), headers=headers
    )
    assert answer.status_code == 200
    assert (
        bot.get("/api/pending", headers={"authorization": "Bearer cmcp_wrong"}).status_code == 401
    )


def test_logins_are_rate_limited_and_logout_ends_the_session(client: TestClient) -> None:
    for _ in range(5):
        answer = client.post("/api/login", json={"name": "alice", "password": "guess guess!"})
        assert answer.status_code == 401
    answer = client.post("/api/login", json={"name": "alice", "password": PASSWORD})
    assert answer.status_code == 429  # even the right password, until the window moves
    other = TestClient(client.app, base_url="http://127.0.0.1")  # the same address
    answer = other.post("/api/login", json={"name": "victor", "password": PASSWORD})
    assert answer.status_code == 429 and "try again in" in answer.json()["error"]


def test_cookies_are_httponly_samesite_and_every_response_has_the_csp(client: TestClient) -> None:
    answer = client.post("/api/login", json={"name": "alice", "password": PASSWORD})
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    csp = client.get("/api/pending").headers["content-security-policy"]
    assert "script-src 'self'" in csp and "img-src 'self'" in csp and "unsafe-inline" not in csp
    csrf = answer.json()["csrf"]
    assert client.post("/api/logout", headers={"x-csrf-token": csrf}).status_code == 200
    assert client.get("/api/pending").status_code == 401


def test_a_trusted_proxys_header_only_from_its_address(store: str) -> None:
    app = create_app(store, trust_header="X-Forwarded-User", trusted_proxies=["10.0.0.0/8"])
    with TestClient(app, base_url="http://127.0.0.1", client=("10.1.2.3", 4000)) as proxied:
        assert proxied.get("/api/pending", headers={"x-forwarded-user": "alice"}).is_success
        answer = proxied.get("/api/pending", headers={"x-forwarded-user": "nobody"})
        assert answer.status_code == 403
    with TestClient(app, base_url="http://127.0.0.1", client=("192.0.2.9", 4000)) as direct:
        assert direct.get("/api/pending", headers={"x-forwarded-user": "alice"}).status_code == 401


def test_the_audit_exports_as_csv_and_json_lines_with_filters(
    client: TestClient, store: str
) -> None:
    csrf = login(client)
    headers = {"x-csrf-token": csrf}
    client.post("/api/decisions", json=decision("approve", RUG_PULL, "weather"), headers=headers)
    client.post("/api/decisions", json=decision("reject", MAIL, "mail", "=cmd|x"), headers=headers)
    lines = client.get("/api/audit", params={"format": "jsonl", "person": "alice"}).text
    rows = [json.loads(line) for line in lines.splitlines()]
    assert [(r["action"], r["tool"]) for r in rows] == [
        ("approve", "get_weather"),  # the store's first approval (seed.fleet), by alice too
        ("approve", "get_weather"),
        ("reject", "send_mail"),
    ]
    text = client.get("/api/audit", params={"format": "csv", "action": "reject"}).text
    table = list(csv.DictReader(io.StringIO(text)))
    assert [(r["tool"], r["approver"], r["reason"]) for r in table] == [
        ("send_mail", "alice", "'=cmd|x")  # a spreadsheet formula made text
    ]
    assert client.get("/api/audit", params={"since": "not a date"}).status_code == 400


def test_the_servers_view(client: TestClient) -> None:
    login(client)
    servers = {s["server_id"]: s for s in client.get("/api/servers").json()["servers"]}
    assert (servers["weather"]["ok"], servers["weather"]["blocked"]) == (0, 1)
    assert servers["mail"]["held"] == 1


@pytest.mark.anyio
async def test_a_running_guard_follows_a_console_decision_without_a_re_list(
    tmp_path: Path,
) -> None:
    """Real parts: a guard with the store's change feed (as a running proxy has) holds a
    changed tool; the console approves it and the guard lets the next call through; the
    console rejects another and the guard refuses it with reason tool_rejected."""
    from mcp.shared.exceptions import MCPError

    from conduit_mcp.guard import Guard
    from tests.guard.scripted import scripted_session
    from tests.guard.test_pin_feed import listing, until

    location = str(tmp_path / "pins.db")
    other = {"name": "other", "inputSchema": {"type": "object"}}
    with PinStore(location) as store:
        store.approve("s", Tool.from_wire("s", WEATHER), approver="alice")
        store.add_account("alice", role="approver", password=PASSWORD)
        guard = Guard("s", pins=store)
        try:
            async with scripted_session(guard, listing(RUG_PULL, other)) as (session, script):
                await session.list_tools()
                assert guard.tool_status("get_weather") == "blocked"
                assert guard.tool_status("other") == "held"
                with TestClient(create_app(location), base_url="http://127.0.0.1") as console:
                    csrf = login(console)
                    headers = {"x-csrf-token": csrf}
                    body = decision("approve", RUG_PULL, "s")
                    assert console.post("/api/decisions", json=body, headers=headers).is_success
                    body = decision("reject", other, "s", "not ours")
                    assert console.post("/api/decisions", json=body, headers=headers).is_success
                assert await until(lambda: guard.tool_status("get_weather") == "ok")
                await session.call_tool("get_weather", {"city": "Paris"})
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("other", {})
        finally:
            guard.close()
    assert refused.value.error.data["reason"] == "tool_rejected"
    assert script.calls() == [("get_weather", {"city": "Paris"})]
