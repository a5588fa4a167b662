"""conduit_mcp.policy: which tools each caller may see and call, from a TOML policy file.

A policy names, per subject, group or claim of a caller's token, the SERVER_ID/TOOL globs
that may be listed and called (`allow`) and those that may not (`deny`); deny beats allow,
and `default` decides the rest. `Policy.parse` / `Policy.load` check a file and report a
problem as one line, `FILE:LINE: PROBLEM` (`PolicyError`); `Policy.view(caller)` gives a
caller's view and `PolicyView.decide(server_id, tool)` a `Decision` with its reason. A
fleet keeps its policy in the pin store (`PinStore.set_policy`, `conduit-mcp policy set`).

```toml
default = "deny"
[[rule]]
groups = ["ops"]
allow = ["files/*", "everything/echo"]
deny = ["*/delete_*"]
[[rule]]
subjects = ["ci-bot"]
allow = ["everything/*"]
```

`_file.py`: reading and checking a file; `_globs.py`: SERVER_ID/TOOL globs compiled;
`_decide.py`: `Policy`, views and decisions; `_follow.py`: the policy a pin store keeps,
followed.
"""

from __future__ import annotations

from ._decide import DECISION_REASONS, Caller, Decision, Policy, PolicyView
from ._file import MAX_POLICY_BYTES, PolicyError, PolicyRule
from ._follow import PolicyFollower, from_stored

# Grouped by concept, not sorted: the groups are the map of the API.
__all__ = [  # noqa: RUF022
    # Policies: a checked file, its rules, its errors
    "Policy",
    "PolicyRule",
    "PolicyError",
    "MAX_POLICY_BYTES",
    # Decisions: a caller, its view, what it may do
    "Caller",
    "PolicyView",
    "Decision",
    "DECISION_REASONS",
    # A fleet: the policy kept in a pin store, followed through its change feed
    "PolicyFollower",
    "from_stored",
]
