"""Which member of which message a model reads, per spec version: the one table of policy
`model_text` (everything a server says outside tool definitions and tool results).

Not a public module. No SDK import. `READS` holds one `Read` per message kind: the method,
which part of the message (a response's `result`, a request's or notification's `params`),
the definition that types it in the official schema, the versions that have it, whether it
is a list of items judged one by one (prompts, resources, templates, completion values) or one
whole, and its members a model (or the person beside it) reads, each with the versions that
have it and whether the client sends it back exactly (an identifier: a prompt's or an
argument's name, a resource's `uri`, a template's `uriTemplate`, an elicitation form's
property names, a URL elicitation's `url` and `elicitationId`).

What the guard does with it (`_servertext`): every string of an item or a whole is cleaned,
not only the members named here (a client shows the model `_meta`, annotations, icons too);
a hidden character in an identifier leaves the item out (or refuses the whole) whatever the
policy, since a cleaned identifier would name something the server never sent. The members
named here are what the table promises and what the tests put hidden text into, version by
version; `tests/guard/test_reads.py` checks each against the vendored `schema/*/schema.json`
(present from `since` to `until`, absent before). The guard applies a row whatever the
negotiated version: a member a version does not define still reaches the client and its
model when a server sends it.

Tool definitions (`tools/list`, policy `tool_text`) and tool results (`tools/call`,
`tasks/result`, policy `result_text`) have their own policies and are not rows here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

#: The first revision this library knows (`conduit_mcp_wire.VERSIONS[0]`).
FIRST: Final = "2024-11-05"

#: A step of a member's path: a key, `"*"` (each element of an array, or each value of an
#: object used as a map) or `"~"` (each key of such an object).
Step = str


@dataclass(frozen=True, slots=True)
class Member:
    """A member of an item (or of a whole) that a model reads.

    Attributes:
        path: from the item (or the whole): keys, `"*"`, `"~"`; `()` is the item itself (a
            completion value is a string).
        since, until: the first and the last revision that define it (`until=None`: still).
        identifier: the client sends it back exactly (in `prompts/get`, `resources/read`,
            `completion/complete`, an elicitation's answer): never rewritten.
    """

    path: tuple[Step, ...]
    since: str = FIRST
    until: str | None = None
    identifier: bool = False


@dataclass(frozen=True, slots=True)
class Read:
    """One kind of message, and what a model reads of it.

    Attributes:
        method: the JSON-RPC method (of the request a response answers, or of the server's
            request or notification).
        part: `"result"` (a response's result) or `"params"` (a server request's or
            notification's params).
        kind: `"response"`, `"request"` (the server asks the client) or `"notification"`.
        definition: the schema definition of the message (`"ListPromptsResult"`,
            `"ElicitRequest"`: its `params`).
        since, until: the revisions that have it.
        items: the path to the list whose entries are judged one by one, or `None`: the part
            is one whole.
        members: what a model reads of each item (or of the whole).
        skip: members of the part another policy judges (a sampling request's `tools`:
            `tool_text`), or the guard decides apart (`instructions`: pinned first).
    """

    method: str
    part: Literal["result", "params"]
    kind: Literal["response", "request", "notification"]
    definition: str
    members: tuple[Member, ...]
    items: tuple[Step, ...] | None = None
    since: str = FIRST
    until: str | None = None
    skip: tuple[str, ...] = ()


_TITLE: Final = "2025-06-18"  # `title` beside `name` (BaseMetadata), 2025-06-18 on

READS: Final[tuple[Read, ...]] = (
    Read(
        "initialize",
        "result",
        "response",
        "InitializeResult",
        (Member(("instructions",)),),
        until="2025-11-25",  # 2026-07-28 has no initialize: server/discover
        skip=("instructions",),
    ),
    Read(
        "server/discover",
        "result",
        "response",
        "DiscoverResult",
        (Member(("instructions",), since="2026-07-28"),),
        since="2026-07-28",
        skip=("instructions",),
    ),
    Read(
        "prompts/list",
        "result",
        "response",
        "ListPromptsResult",
        (
            Member(("name",), identifier=True),
            Member(("title",), since=_TITLE),
            Member(("description",)),
            Member(("arguments", "*", "name"), identifier=True),
            Member(("arguments", "*", "title"), since=_TITLE),
            Member(("arguments", "*", "description")),
        ),
        items=("prompts",),
    ),
    Read(
        "prompts/get",
        "result",
        "response",
        "GetPromptResult",
        (
            Member(("description",)),
            Member(("messages", "*", "content", "text")),
            Member(("messages", "*", "content", "resource", "text")),
        ),
    ),
    Read(
        "resources/list",
        "result",
        "response",
        "ListResourcesResult",
        (
            Member(("uri",), identifier=True),
            Member(("name",)),
            Member(("title",), since=_TITLE),
            Member(("description",)),
        ),
        items=("resources",),
    ),
    Read(
        "resources/templates/list",
        "result",
        "response",
        "ListResourceTemplatesResult",
        (
            Member(("uriTemplate",), identifier=True),
            Member(("name",)),
            Member(("title",), since=_TITLE),
            Member(("description",)),
        ),
        items=("resourceTemplates",),
    ),
    Read(
        "resources/read",
        "result",
        "response",
        "ReadResourceResult",
        (Member(("contents", "*", "text")),),
    ),
    Read(
        "completion/complete",
        "result",
        "response",
        "CompleteResult",
        (Member(()),),
        items=("completion", "values"),
    ),
    Read(
        "elicitation/create",
        "params",
        "request",
        "ElicitRequest",
        (
            Member(("message",), since="2025-06-18"),
            Member(("requestedSchema", "properties", "~"), since="2025-06-18", identifier=True),
            Member(("requestedSchema", "properties", "*", "title"), since="2025-06-18"),
            Member(("requestedSchema", "properties", "*", "description"), since="2025-06-18"),
            Member(("url",), since="2025-11-25", identifier=True),
            Member(("elicitationId",), since="2025-11-25", until="2025-11-25", identifier=True),
        ),
        since="2025-06-18",
    ),
    Read(
        "sampling/createMessage",
        "params",
        "request",
        "CreateMessageRequest",
        (Member(("systemPrompt",)), Member(("messages", "*", "content", "text"))),
        skip=("tools",),
    ),
    Read(
        "notifications/message",
        "params",
        "notification",
        "LoggingMessageNotification",
        (Member(("data",)), Member(("logger",))),
    ),
)

#: Method -> its row, for the answers to the client's requests.
RESPONSES: Final = {r.method: r for r in READS if r.kind == "response"}
#: Method -> its row, for what the server sends of its own (requests, notifications).
FROM_SERVER: Final = {r.method: r for r in READS if r.kind != "response"}
