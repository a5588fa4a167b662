"""Policy decisions and their spread through a store (issue 32): side rows of `make bench`.

Rows:
- I1: one decision for 100 rules (`PolicyView.decide`, the caller's view made: what a session
  pays per tool listed or called), for a caller to whom 15 rules apply and one to whom all 100
  apply; target <= 20 µs.
- I1b: the same through `Policy.decide(caller, ...)` with a new, equal `Caller` object per call
  (the view found by the caller's signature); target <= 20 µs.
- I1c: a caller's first view (its rules found and compiled), reported, no target.
- I3: a bearer token's first check (`Authenticator.verify`: header, key by `kid`, the RS256
  or ES256 signature, claims), the keys held; I3b: the same token again (remembered: its
  times re-checked), what a caller's every later request pays; reported, no target.
- I2: a `set_policy` committed through one connection of a sqlite store to the moment a
  `PolicyFollower` on another connection applied it; target <= 1 s (the PostgreSQL fleet's
  own figure: tests/proxy/test_fleet_policy.py and docs/identity.md).

Usage: `python -m bench.policy [--quick]` (prints one JSON line per row); `make bench` runs it
among the side rows (bench/run.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from conduit_mcp.pins import PinStore
from conduit_mcp.policy import Caller, Policy, PolicyFollower


def hundred_rules(everyone_group: str | None = None) -> str:
    """A policy of 100 rules: 50 on groups, 30 on subjects, 10 on a claim, 10 for everyone;
    with `everyone_group`, every rule names that group instead (a caller in it gets all 100)."""
    lines = ['default = "deny"']
    for n in range(100):
        lines.append("[[rule]]")
        if everyone_group:
            lines.append(f"groups = {json.dumps([f'team{n}', everyone_group])}")
        elif n < 50:
            lines.append(f'groups = ["team{n}"]')
        elif n < 80:
            lines.append(f'subjects = ["user{n}"]')
        elif n < 90:
            lines.append(f'claims = {{ department = ["dept{n}"] }}')
        else:
            lines.append("everyone = true")
        lines.append(f'allow = ["server{n % 7}/read_*", "server{n % 5}/tool{n}", "files{n}/*"]')
        lines.append(f'deny = ["*/delete_{n}*"]')
    return "\n".join(lines) + "\n"


TOOLS = [(f"server{n % 7}", name) for n in range(40) for name in (f"read_{n}", f"delete_{n}x")]
TOOLS += [(f"files{n}", "anything") for n in range(20)] + [("other", "tool")] * 20


def _per_call(function: Any, calls: int, rounds: int) -> dict[str, float]:
    """Median and min of µs per call over `rounds` batches of `calls`."""
    figures = []
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            function(calls)
            figures.append((time.perf_counter_ns() - start) / calls / 1000)
        finally:
            gc.enable()
    return {"median_us": round(statistics.median(figures), 2), "min_us": round(min(figures), 2)}


def decision_rows(quick: bool) -> list[dict[str, Any]]:
    calls, rounds = (2_000, 3) if quick else (50_000, 9)
    some = Policy.parse(hundred_rules(), "bench.toml")
    every = Policy.parse(hundred_rules("everyone"), "bench.toml")
    member = Caller("user60", frozenset({"team3", "team7", "team11"}), {"department": "dept85"})
    everyone = Caller("user60", frozenset({"everyone"}), {"department": "dept85"})
    rows = []
    for label, policy, caller in (
        ("some apply", some, member),
        ("all 100 apply", every, everyone),
    ):
        view = policy.view(caller)
        keys = TOOLS * (calls // len(TOOLS) + 1)

        def decide(n: int, view: Any = view, keys: list[Any] = keys) -> None:
            for server, tool in keys[:n]:
                view.decide(server, tool)

        def decide_caller(
            n: int, policy: Any = policy, caller: Caller = caller, keys: list[Any] = keys
        ) -> None:
            for server, tool in keys[:n]:
                policy.decide(Caller(caller.subject, caller.groups, caller.claims), server, tool)

        figures = _per_call(decide, calls, rounds)
        rows.append(
            {
                "id": "I1",
                "row": f"policy decision, 100 rules, {label} (view made)",
                "rules_applying": len(view.rules),
                "target": "<= 20 us",
                "met": figures["median_us"] <= 20,
                **figures,
            }
        )
        figures = _per_call(decide_caller, calls, rounds)
        rows.append(
            {
                "id": "I1b",
                "row": f"policy decision, 100 rules, {label} (Policy.decide, new Caller)",
                "target": "<= 20 us",
                "met": figures["median_us"] <= 20,
                **figures,
            }
        )

        def first_view(n: int, policy: Any = policy, caller: Caller = caller) -> None:
            for i in range(n):
                policy.view(Caller(f"new{i}-{time.perf_counter_ns()}", caller.groups))

        figures = _per_call(first_view, max(calls // 100, 20), rounds)
        rows.append({"id": "I1c", "row": f"a caller's first view, 100 rules, {label}", **figures})
    return rows


def spread_row(quick: bool) -> dict[str, Any]:
    versions = 5 if quick else 30
    text = hundred_rules()
    with tempfile.TemporaryDirectory() as folder:
        location = os.path.join(folder, "pins.db")
        latencies: list[float] = []
        applied = threading.Event()
        with PinStore(location) as proxy, PinStore(location) as admin:
            admin.set_policy(text, approver="bench")
            follower = PolicyFollower(proxy, on_change=lambda p: applied.set(), interval=0.05)
            try:
                for n in range(versions):
                    applied.clear()
                    start = time.perf_counter()
                    admin.set_policy(text + f"# version {n}\n", approver="bench")
                    if not applied.wait(10):
                        raise RuntimeError("a policy version did not arrive within 10 s")
                    latencies.append((time.perf_counter() - start) * 1000)
                    time.sleep(0.02)
            finally:
                follower.close()
    return {
        "id": "I2",
        "row": f"policy set -> applied by a follower (sqlite file, {versions} versions)",
        "target": "<= 1000 ms",
        "median_ms": round(statistics.median(latencies), 1),
        "max_ms": round(max(latencies), 1),
        "met": max(latencies) <= 1000,
    }


def token_rows(quick: bool) -> list[dict[str, Any]]:
    """I3: `Authenticator.verify` with the keys held, RS256 (2048-bit) and ES256."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    from conduit_mcp.proxy.listen._auth import Authenticator, AuthSettings

    calls, rounds = (200, 3) if quick else (3_000, 7)
    found = []
    now = time.time()
    for alg, private in (
        ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        ("ES256", ec.generate_private_key(ec.SECP256R1())),
    ):
        jwk = json.loads(jwt.algorithms.get_default_algorithms()[alg].to_jwk(private.public_key()))
        jwk["kid"] = "k1"
        auth = Authenticator(
            AuthSettings(issuer="https://issuer", audience="mcp", jwks_url="http://unused"),
            fetch=lambda url, jwk=jwk: {"keys": [jwk]},
        )
        auth._keys = {"k1": jwk}
        claims = {
            "iss": "https://issuer",
            "aud": "mcp",
            "sub": "a",
            "groups": ["ops"],
            "exp": now + 3600,
        }
        token = jwt.encode(claims, private, algorithm=alg, headers={"kid": "k1"})

        def first(n: int, auth: Any = auth, token: str = token) -> None:
            for _ in range(n):
                auth._verified.clear()  # as a token never seen
                auth.verify(token)

        def again(n: int, auth: Any = auth, token: str = token) -> None:
            for _ in range(n):
                auth.verify(token)

        figures = _per_call(first, calls, rounds)
        found.append({"id": "I3", "row": f"a bearer token's first check, {alg}", **figures})
        figures = _per_call(again, calls, rounds)
        found.append({"id": "I3b", "row": f"a bearer token checked again, {alg}", **figures})
    return found


def rows(quick: bool = False) -> list[dict[str, Any]]:
    """The rows of this script, for `make bench` (bench/run.py)."""
    found = decision_rows(quick)
    found += token_rows(quick)
    found.append(spread_row(quick))
    for row in found:
        row["load_average_1m"] = round(os.getloadavg()[0], 2)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args()
    for row in rows(args.quick):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
