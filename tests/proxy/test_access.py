"""Per-caller tool access (`proxy/_access.py`): a listing filtered to the caller's policy, a call
outside it refused with the rule that decided, no policy at all denying everything, and the
sessions whose view a new version changes told so (only those). Decisions worked out by hand
from the policy text below."""

from __future__ import annotations

from conduit_mcp.guard import REFUSED_CALL_CODE
from conduit_mcp.policy import Caller, Policy
from conduit_mcp.proxy._access import POLICY_DENIED, Access, Sessions

POLICY = """\
default = "deny"
[[rule]]
groups = ["ops"]
allow = ["files/*"]
deny = ["files/delete_*"]
[[rule]]
subjects = ["ci-bot"]
allow = ["files/read_file"]
"""
OPS = Caller("alice", frozenset({"ops"}))
CI = Caller("ci-bot")
LISTING = {
    "tools": [
        {"name": "read_file", "inputSchema": {"type": "object"}},
        {"name": "write_file", "inputSchema": {"type": "object"}},
        {"name": "delete_file", "inputSchema": {"type": "object"}},
        {"inputSchema": {"type": "object"}},
    ],
    "nextCursor": "abc",
}


def _call(name: object, request_id: int = 9) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name}}


def test_a_listing_shows_each_caller_only_its_tools() -> None:
    """conduit-defined: deny beats allow; an entry without a name is never shown; the rest of
    the result (nextCursor) kept."""
    access = Access.fixed("files", Policy.parse(POLICY, "p.toml", version=3))
    shown, removed = access.filter_listing(LISTING, OPS)
    assert [t["name"] for t in shown["tools"]] == ["read_file", "write_file"]
    assert shown["nextCursor"] == "abc"
    assert removed == ["delete_file", "None"]
    shown, _ = access.filter_listing(LISTING, CI)
    assert [t["name"] for t in shown["tools"]] == ["read_file"]
    shown, _ = access.filter_listing(LISTING, Caller("mallory"))
    assert shown["tools"] == []
    assert LISTING["tools"][2]["name"] == "delete_file"  # the input is not changed
    assert access.filter_listing({"not": "tools"}, OPS) == ({"not": "tools"}, [])


def test_a_call_outside_the_policy_is_refused_with_the_rule() -> None:
    """conduit-defined: the refusal names the rule, line, glob and policy version; a call the
    policy allows, or a message that is no tools/call with a name, is left to the guard."""
    access = Access.fixed("files", Policy.parse(POLICY, "p.toml", version=3))
    refusal = access.refuse_call(_call("delete_file"), OPS)
    assert refusal is not None
    assert refusal["id"] == 9
    assert refusal["error"]["code"] == REFUSED_CALL_CODE
    assert refusal["error"]["data"]["reason"] == POLICY_DENIED
    assert refusal["error"]["message"] == (
        "conduit-mcp refused the call: denied by rule 1 (line 2): files/delete_* "
        "(policy version 3)"
    )
    assert access.refuse_call(_call("read_file"), OPS) is None
    assert access.refuse_call(_call("write_file"), CI) is not None
    assert access.refuse_call(_call(5), CI) is None
    assert access.refuse_call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, CI) is None


def test_without_a_policy_everything_is_denied() -> None:
    """Fail closed: no policy in the store yet, nothing listed or called, the refusal says how
    to set one."""
    access = Access("files", lambda: None)
    assert access.filter_listing(LISTING, OPS)[0]["tools"] == []
    refusal = access.refuse_call(_call("read_file"), OPS)
    assert refusal is not None
    assert "no tool policy is set" in refusal["error"]["message"]
    assert "policy set FILE --store STORE --approver WHO" in refusal["error"]["message"]


def test_a_new_version_notifies_only_the_sessions_whose_view_changed() -> None:
    """conduit-defined: `list_changed` goes to a session whose shown tools differ under the new
    policy, not to one whose view is the same, and not to a closed one."""
    current = [Policy.parse(POLICY, "p.toml", version=1)]
    access = Access("files", lambda: current[0])
    sessions = Sessions(access)
    told: list[str] = []
    names = [t["name"] for t in LISTING["tools"] if "name" in t]
    for who, caller in (("ops", OPS), ("ci", CI), ("gone", Caller("x", frozenset({"ops"})))):
        key = sessions.opened(caller, lambda who=who: told.append(who))
        sessions.listed(key, names, access.visible(caller, names))
        if who == "gone":
            sessions.closed(key)
    # version 2: ops may no longer write; ci-bot unchanged
    current[0] = Policy.parse(
        POLICY.replace('allow = ["files/*"]', 'allow = ["files/read_*"]'), "p.toml", version=2
    )
    assert sessions.changed() == 1
    assert told == ["ops"]
    assert sessions.changed() == 0  # told once: its shown set is now the new one
    assert len(sessions) == 2


def test_caller_metrics_are_labelled_by_group_never_by_subject() -> None:
    """conduit-defined (issue 32: bounded cardinality): a thousand subjects make no new
    series; a group the policy does not name counts as `other`. Read back with
    prometheus-client's own parser."""
    from prometheus_client.parser import text_string_to_metric_families

    from conduit_mcp.proxy._metrics import Metrics

    metrics = Metrics("files")
    named = frozenset({"ops", "dev"})
    for n in range(1000):
        metrics.caller_call(frozenset({"ops", f"personal-{n}"}), named, "allowed")
    metrics.caller_call(frozenset(), named, "refused")
    samples = {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        if family.name == "conduit_mcp_proxy_caller_calls"
        for s in family.samples
        if s.name.endswith("_total")
    }
    assert samples == {
        (("group", "ops"), ("server_id", "files"), ("verdict", "allowed")): 1000,
        (("group", "other"), ("server_id", "files"), ("verdict", "refused")): 1,
    }
