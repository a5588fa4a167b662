"""conduit_mcp.policy: the policy file of issue 32, checked and evaluated.

The decisions asserted are worked out by hand from the issue's text (deny beats allow; a
default for what no rule decides; SERVER_ID/TOOL globs), and the glob semantics against the
standard library's `fnmatch.fnmatchcase` applied to each part on its own.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conduit_mcp.policy import Caller, Policy, PolicyError
from tests.property.profiles import bounded

#: The policy file of issue 32, as the issue shows it.
ISSUE_POLICY = """\
default = "deny"                      # or "allow": what no rule decides
[[rule]]
groups = ["ops"]                      # any of these in the token's groups claim
allow = ["files/*", "everything/echo"] # SERVER_ID/TOOL globs
deny = ["*/delete_*"]
[[rule]]
subjects = ["ci-bot"]                 # the token's sub
allow = ["everything/*"]
"""

OPS = Caller("alice", frozenset({"ops"}))
CI = Caller("ci-bot")
NOBODY = Caller("mallory", frozenset({"guests"}))


@pytest.mark.parametrize(
    ("caller", "server", "tool", "allowed", "reason"),
    [
        (OPS, "files", "read_file", True, "allowed_by_rule"),
        (OPS, "files", "delete_file", False, "denied_by_rule"),  # deny beats allow
        (OPS, "everything", "echo", True, "allowed_by_rule"),
        (OPS, "everything", "add", False, "denied_by_default"),
        (OPS, "everything", "delete_all", False, "denied_by_rule"),
        (CI, "everything", "add", True, "allowed_by_rule"),
        (CI, "everything", "delete_all", True, "allowed_by_rule"),  # rule 1 is not CI's
        (CI, "files", "read_file", False, "denied_by_default"),
        (NOBODY, "files", "read_file", False, "denied_by_default"),
        (Caller(None, frozenset({"ops"})), "files", "x", True, "allowed_by_rule"),
        # globs match their own part: server "files/x" is not server "files"
        (OPS, "files/x", "read_file", False, "denied_by_default"),
        # case-sensitive, as tool names and server ids are
        (OPS, "Files", "read_file", False, "denied_by_default"),
        (OPS, "files", "DELETE_FILE", True, "allowed_by_rule"),
    ],
)
def test_the_issues_policy_decides_as_its_text_says(
    caller: Caller, server: str, tool: str, allowed: bool, reason: str
) -> None:
    """Spec-mandated (issue 32's policy and its comments): groups, subjects, globs, deny beats
    allow, default deny."""
    decision = Policy.parse(ISSUE_POLICY, "policy.toml").decide(caller, server, tool)
    assert (decision.allowed, decision.reason) == (allowed, reason)


def test_a_decision_names_its_rule_line_and_glob() -> None:
    """conduit-defined: the reason a caller and the logs read names rule, line and glob."""
    policy = Policy.parse(ISSUE_POLICY, "policy.toml")
    denied = policy.decide(OPS, "files", "delete_file")
    assert denied.explain() == "denied by rule 1 (line 2): */delete_*"
    assert (denied.rule.number, denied.rule.line, denied.glob) == (1, 2, "*/delete_*")
    assert policy.decide(CI, "files", "x").explain() == (
        "not allowed: no rule allows it (default deny)"
    )


def test_default_allow_and_claims_and_everyone() -> None:
    """conduit-defined: `default = "allow"`; a rule on other claims (all named claims must
    match; a list claim matches by any element); `everyone = true`; within a rule every kind
    of selector named must match."""
    text = """\
default = "allow"
[[rule]]
everyone = true
deny = ["admin/*"]
[[rule]]
claims = { department = ["security"], tier = "gold" }
allow = ["admin/read_*"]
deny = ["*/export"]
[[rule]]
groups = ["ops"]
subjects = ["alice"]
deny = ["files/*"]
"""
    policy = Policy.parse(text, "p.toml")
    plain = Caller("bob")
    security = Caller("carol", claims={"department": ["eng", "security"], "tier": "gold"})
    half = Caller("dave", claims={"department": "security", "tier": "silver"})
    assert policy.decide(plain, "files", "x").reason == "allowed_by_default"
    assert policy.decide(plain, "admin", "read_log").reason == "denied_by_rule"
    # deny beats allow across rules: rule 1 denies admin/* for everyone
    assert policy.decide(security, "admin", "read_log").reason == "denied_by_rule"
    assert policy.decide(security, "files", "export").reason == "denied_by_rule"
    assert policy.decide(half, "files", "export").reason == "allowed_by_default"
    assert policy.decide(Caller("alice", frozenset({"ops"})), "files", "x").allowed is False
    assert policy.decide(Caller("alice"), "files", "x").allowed is True  # not in ops
    assert policy.decide(Caller("bob", frozenset({"ops"})), "files", "x").allowed is True


_PART = st.text(alphabet="ab*?/[x", min_size=1, max_size=5)


@bounded(200)
@given(
    server_glob=st.text(alphabet="ab*?[x", min_size=1, max_size=4),
    tool_glob=st.text(alphabet="ab*?/[x", min_size=1, max_size=5),
    server=st.text(alphabet="ab/[x", min_size=1, max_size=4),
    tool=st.text(alphabet="ab/[x\x00", min_size=0, max_size=5),
)
def test_globs_match_as_fnmatch_does_on_each_part(
    server_glob: str, tool_glob: str, server: str, tool: str
) -> None:
    """Oracle: `fnmatch.fnmatchcase` on the server id and the tool name separately (with `[`
    taken literally, as the policy's globs do), the glob split at its first `/`."""
    glob = f"{server_glob}/{tool_glob}"
    policy = Policy.parse(f'[[rule]]\neveryone = true\nallow = ["{glob}"]\n', "p.toml")

    def literal(part: str) -> str:
        return part.replace("[", "[[]")

    expected = fnmatch.fnmatchcase(server, literal(server_glob)) and fnmatch.fnmatchcase(
        tool, literal(tool_glob)
    )
    assert policy.decide(Caller(), server, tool).allowed is expected


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('default = "maybe"\n', 1, 'default must be "allow" or "deny"'),
        ('default = "deny"\nrules = []\n', 2, "unknown key 'rules'"),
        ('default = "deny"\n\n[[rule]]\ngroups = ["a"]\nalow = ["x/y"]\n', 5, "unknown key 'alow'"),
        ('[[rule]]\ngroups = ["a"]\nallow = ["xy"]\n', 3, "'xy' is not SERVER_ID/TOOL"),
        ('[[rule]]\ngroups = ["a"]\nallow = ["/y"]\n', 3, "empty server id or tool part"),
        ('[[rule]]\nallow = ["a/b"]\n', 1, "names no subjects, groups, claims"),
        ('[[rule]]\ngroups = ["a"]\n', 1, "has neither allow nor deny"),
        ('[[rule]]\ngroups = "ops"\nallow = ["a/b"]\n', 2, "groups must be a list"),
        ('[[rule]]\ngroups = []\nallow = ["a/b"]\n', 1, "applies to nobody"),
        ('[[rule]]\neveryone = "yes"\nallow = ["a/b"]\n', 2, "everyone must be true or false"),
        ('[[rule]]\nclaims = { sub = "x" }\nallow = ["a/b"]\n', 2, "use subjects / groups"),
        (
            '[[rule]]\ngroups = ["a"]\nallow = ["a/b"]\n[[rule]]\ngroups = ["b"]\ndeny = [1]\n',
            6,
            "rule 2: deny must be a list",
        ),
        ('default = "deny"\n[[rule]\n', 2, "not TOML"),
        ("default = \n", 1, "not TOML"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_line_and_problem(
    text: str, line: int, problem: str
) -> None:
    """conduit-defined (issue 32: "a bad policy file is one line naming file:line and the
    problem"): the line is the one a person would edit."""
    with pytest.raises(PolicyError) as caught:
        Policy.parse(text, "team/policy.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"team/policy.toml:{line}: "), message
    assert problem in message
    assert caught.value.line == line


def test_files_too_large_unreadable_or_not_utf8(tmp_path: Path) -> None:
    """conduit-defined: the file's own troubles are one line too, never a traceback."""
    missing = tmp_path / "missing.toml"
    with pytest.raises(PolicyError, match=r"missing.toml:1: cannot read"):
        Policy.load(missing)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'default = "deny"\n# caf\xe9\n')
    with pytest.raises(PolicyError, match=r"latin.toml:2: not UTF-8"):
        Policy.load(latin)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (1 << 20) + "\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"big.toml:1: larger than"):
        Policy.load(big)


def test_a_hostile_tool_name_cannot_step_into_another_servers_glob() -> None:
    """Attack: a server lists a tool whose name holds the separator or a slash to be taken for
    another server's tool; a server id holding U+0000 can be named by no glob (denied)."""
    policy = Policy.parse(
        '[[rule]]\neveryone = true\nallow = ["files/read"]\ndeny = ["*/delete_*"]\n', "p.toml"
    )
    caller = Caller()
    assert policy.decide(caller, "evil", "\x00files\x00read").allowed is False
    assert policy.decide(caller, "evil", "/files/read").allowed is False
    assert policy.decide(caller, "files", "read\x00").allowed is False
    assert policy.decide(caller, "files\x00read", "").allowed is False
    assert policy.decide(caller, "x", "delete_\x00y").reason == "denied_by_rule"


def test_views_are_bounded_and_shared_by_equal_callers() -> None:
    """conduit-defined: one view per distinct caller, the table bounded (memory follows the
    callers active now)."""
    from conduit_mcp.policy._decide import MAX_VIEWS

    policy = Policy.parse(ISSUE_POLICY)
    assert policy.view(Caller("a", frozenset({"ops"}))) is policy.view(
        Caller("a", frozenset({"ops"}))
    )
    for n in range(MAX_VIEWS + 10):
        policy.view(Caller(f"user{n}"))
    assert len(policy._views) <= MAX_VIEWS


def test_a_caller_from_a_tokens_claims() -> None:
    """conduit-defined: `sub`, the groups claim (a list or one string; non-strings ignored),
    every claim kept for `claims` rules."""
    caller = Caller.from_claims(
        {"sub": "alice", "roles": ["ops", 7, "dev"], "dept": "eng"}, groups_claim="roles"
    )
    assert (caller.subject, caller.groups) == ("alice", frozenset({"ops", "dev"}))
    assert caller.claims["dept"] == "eng"
    assert Caller.from_claims({"sub": 5, "groups": "ops"}) == Caller(None, frozenset({"ops"}))
