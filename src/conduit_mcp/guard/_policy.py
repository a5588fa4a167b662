"""Guard policies: keyword arguments of `Guard`, checked once.

Not a public module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

NewPolicy = Literal["pin", "allow", "hold", "block"]
ChangedPolicy = Literal["block", "allow", "hold"]
CosmeticPolicy = Literal["accept", "changed"]
InvalidOutputPolicy = Literal["withhold", "flag", "pass"]
SdkOutputSchemaPolicy = Literal["hide_unsafe", "keep"]
ToolTextPolicy = Literal["clean", "block"]
ResultTextPolicy = Literal["clean", "pass"]
ModelTextPolicy = Literal["clean", "block", "pass"]

_CHOICES: Final[dict[str, frozenset[str]]] = {
    "new": frozenset({"pin", "allow", "hold", "block"}),
    "changed": frozenset({"block", "allow", "hold"}),
    "cosmetic": frozenset({"accept", "changed"}),
    "invalid_output": frozenset({"withhold", "flag", "pass"}),
    "sdk_output_schema": frozenset({"hide_unsafe", "keep"}),
    "tool_text": frozenset({"clean", "block"}),
    "result_text": frozenset({"clean", "pass"}),
    "model_text": frozenset({"clean", "block", "pass"}),
}


@dataclass(frozen=True, slots=True)
class Policy:
    """What the guard does at each decision point. Immutable.

    Attributes:
        new: a tool never pinned for this server: `"pin"` (pin it, approver
            `"conduit-mcp guard"`, and pass it — trust on first use; the default with the
            guard's private store), `"allow"` (pass it without pinning: it is new again next
            session), `"hold"` (leave it out of the page the model sees and refuse calls until
            `Guard.approve`; the default when the caller passes `pins=`, so a shared store is
            never written without a person's name) or `"block"` (remove it from the page;
            calls are refused). Under
            `"pin"` a tool whose pin was revoked in the store (its last audit row for the name
            is a `"revoke"`) is not pinned again: it is blocked (reason `pin_revoked`).
        changed: a pinned tool whose definition differs from its pin: `"block"` (default:
            remove it from the page; calls are refused), `"allow"` (pin the new definition and
            pass it — this overwrites the store's pin, a team's included) or `"hold"` (leave it
            out of the page the model sees, refuse calls until `Guard.approve`).
        cosmetic: a pinned tool whose definition differs from its pin in cosmetic fields only
            (`title`, `icons`, `annotations.title`): `"accept"` (pass it and record the
            variant beside the pin, approver `"conduit-mcp guard"`; the approved definition and
            its approver stay; the default with the guard's private store) or `"changed"`
            (treat it as a material change: `changed` decides, and the tool waits in the
            store's pending queue; the default when the caller passes `pins=`).
        check_arguments: refuse a `tools/call` whose arguments fail the tool's `inputSchema`
            (default `True`).
        invalid_output: `structuredContent` that fails the tool's `outputSchema`:
            `"withhold"` (default: the SDK receives an `isError: true` result saying why),
            `"flag"` (an event; the result passes unchanged) or `"pass"` (not validated).
            Under `"flag"` and `"pass"` (with `sdk_output_schema="hide_unsafe"`) every tool is
            listed to the SDK without its `outputSchema` (event `output_schema_hidden`, reason
            `sdk_output_recheck`): mcp 2.3.0's `ClientSession` and fastmcp 4.1.6's `Client`
            check `structuredContent` again and raise on the result the guard let through.
        output_timeout: seconds a structured-output or argument check may take (default 2.0);
            past it the check counts as failed with its own reason.
        sdk_output_schema: what the SDK's listing carries of an outputSchema that its own
            output check (Python's `jsonschema`, run again after the guard's) cannot run
            safely — one with `pattern` or `patternProperties` (Python's `re` backtracks
            while holding the GIL, or cannot compile an ECMA pattern such as `\\p{L}`) or
            `uniqueItems: true` (pairwise comparison of unsortable items), anywhere, `$defs`
            included: `"hide_unsafe"` (default: the SDK sees the tool without
            `outputSchema`, so it neither hangs nor raises; the guard validated the output
            with a linear-time engine; event `output_schema_hidden`) or `"keep"` (the SDK
            sees the listing as sent and runs its own check: a hostile value can hang
            `call_tool`, an ECMA-only pattern makes it raise). The cost of hiding: the SDK's
            `Tool.output_schema` is `None` for those tools, and FastMCP's `.data` is the plain
            `structuredContent` instead of a typed object. With `invalid_output="pass"`
            nothing checks those tools' output. `"keep"` also keeps every outputSchema under
            `invalid_output="flag"`/`"pass"`: the SDK then raises on output the guard passed.
            Before protocol version 2025-06-18 (which has no outputSchema, spec 2025-03-26
            schema `Tool`) every tool is listed without it whatever this says (event
            `output_schema_hidden`, reason `output_schema_not_in_version`): mcp 2.3.0 checks
            structuredContent on every version, and the guard checks no output there.
        tool_text: hidden characters (invisible Unicode: zero-width, bidi controls, tag
            characters, ...; C0/C1 controls and DEL; terminal escape sequences, removed whole)
            in a string of a tool the model reads (`name`, `title`, `description`,
            `annotations.title`, and the prose, property names and `enum`/`const`/`default`/
            `examples` strings of its schemas): `"clean"` (default: the SDK sees the tool with
            those strings cleaned; event `tool_text_cleaned`, reason
            `hidden_characters_removed`, the JSON paths in `details["paths"]`; once per
            definition) or `"block"` (the tool is removed from the page and its calls refused:
            `tool_rejected`, reason `hidden_characters`). A tool `name` or property name that
            holds one is rejected under both (reason `hidden_characters_in_name`): a call must
            name the server's tool and parameters exactly. Pins keep the definition as the
            server sent it, hidden characters included, so a change of hidden text is a change.
        result_text: hidden characters in a `tools/call` result's text (text blocks,
            embedded resource text, every string and key of `structuredContent`): `"clean"`
            (default: removed after the output check; event `result_text_cleaned` with the
            paths, and the result's `_meta["conduit-mcp/guard"]` says what was cleaned, see
            `RESULT_META_KEY`) or `"pass"` (handed on as sent).
        max_tools: with the guard's private store, the most tool names of this server it
            checks against its pins (and so keeps a pin of) for the guard's life (default
            10,000): past it a tool whose name the store has never seen is held (not listed,
            calls refused until `Guard.approve`; event `tool_new`, reason `too_many_tools`),
            so a server that lists fresh names on every listing cannot grow the guard without
            bound. A caller's `PinStore` is the operator's and is not bounded here. Also
            bounds the look-alike index's listed names.
        model_text: hidden characters in the rest of what a model (or the person beside it)
            reads from a server, outside tool definitions and tool results: the `initialize`
            (or `server/discover`) result's `instructions`, prompts and resources as listed,
            a prompt's messages, a resource's contents, completion values, a server's
            elicitation and sampling requests and its log messages (the one table:
            `conduit_mcp.guard._reads.READS`). `"clean"` (default: removed; event
            `model_text_cleaned`, and the message's `_meta["conduit-mcp/guard"]` says where),
            `"block"` (an item holding one is left out of its list, an answer holding one is
            answered with an error, a request is refused to the server, a notification
            dropped, `instructions` withheld) or `"pass"` (handed on as sent). Whatever the
            policy, an item whose identifier (a prompt's or argument's name, a resource's
            `uri`, a template's `uriTemplate`: what the client sends back) holds one is left
            out (reason `hidden_characters_in_name`).
    """

    new: NewPolicy = "pin"  # `Guard` makes it "hold" when the caller passes `pins=`
    changed: ChangedPolicy = "block"
    check_arguments: bool = True
    invalid_output: InvalidOutputPolicy = "withhold"
    output_timeout: float = 2.0
    sdk_output_schema: SdkOutputSchemaPolicy = "hide_unsafe"
    tool_text: ToolTextPolicy = "clean"
    result_text: ResultTextPolicy = "clean"

    # Last: positional construction keeps its meaning. `Guard` makes it "changed" with `pins=`.
    cosmetic: CosmeticPolicy = "accept"
    max_tools: int = 10_000
    model_text: ModelTextPolicy = "clean"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a listed tool's pin status, under the policy for it, makes of the tool.

    Attributes:
        status: the tool's state afterwards: `"ok"` (callable), `"held"` (calls refused until
            `Guard.approve`) or `"blocked"` (calls refused).
        decision: the event's `decision` (`"pinned"`, `"allowed"`, `"held"`, `"blocked"`).
        listed: whether the SDK (and so the model) sees the tool in the listing.
        reason: why a tool that is not ok is held or blocked (`"new"`, `"changed"`).
    """

    status: Literal["ok", "held", "blocked"]
    decision: str
    listed: bool
    reason: str = ""


#: The one table of policy outcomes: (pin status, policy value) -> `Outcome`. The pin status
#: is the store's verdict on the listed definition: `"new"` (never pinned; the `new` policy
#: decides), `"changed"` (differs from its pin; the `changed` policy decides) or `"approved"`
#: (equal to its pin, or a cosmetic variant accepted beside it; no policy applies: key "").
OUTCOMES: Final[dict[tuple[str, str], Outcome]] = {
    ("approved", ""): Outcome("ok", "pinned", True),
    ("new", "pin"): Outcome("ok", "pinned", True),
    ("new", "allow"): Outcome("ok", "allowed", True),
    ("new", "hold"): Outcome("held", "held", False, "new"),
    ("new", "block"): Outcome("blocked", "blocked", False, "new"),
    ("changed", "allow"): Outcome("ok", "pinned", True),
    ("changed", "hold"): Outcome("held", "held", False, "changed"),
    ("changed", "block"): Outcome("blocked", "blocked", False, "changed"),
}


POLICY_KEYWORDS: Final = frozenset(Policy.__dataclass_fields__)


def make_policy(options: dict[str, Any]) -> Policy:
    """Build a `Policy` from `Guard`'s keyword arguments.

    Raises:
        TypeError: an unknown keyword, or a value of the wrong type.
        ValueError: a value outside its choices, or a timeout that is not a positive finite
            number of seconds.
    """
    unknown = sorted(set(options) - POLICY_KEYWORDS)
    if unknown:
        raise TypeError(
            f"unknown guard policy keyword(s): {', '.join(unknown)} "
            f"(known: {', '.join(sorted(POLICY_KEYWORDS))})"
        )
    for key, choices in _CHOICES.items():
        if key in options:
            value = options[key]
            if not isinstance(value, str):
                raise TypeError(f"{key} must be a str, got {type(value).__name__}")
            if value not in choices:
                raise ValueError(f"{key} must be one of {sorted(choices)}, got {value!r}")
    if "check_arguments" in options and not isinstance(options["check_arguments"], bool):
        raise TypeError("check_arguments must be a bool")
    if "output_timeout" in options:
        timeout = options["output_timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError("output_timeout must be a number of seconds")
        if not math.isfinite(timeout) or timeout <= 0:
            raise ValueError("output_timeout must be a positive finite number of seconds")
        options = {**options, "output_timeout": float(timeout)}
    if "max_tools" in options:
        limit = options["max_tools"]
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError("max_tools must be an int")
        if limit < 1:
            raise ValueError("max_tools must be at least 1")
    return Policy(**options)
