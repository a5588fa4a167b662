"""Policy `model_text`: hidden characters in what a model reads outside tools, removed (or the
item, answer, request or notification withheld) before the client sees it.

Not a public module. No SDK import. What is read is the table `_reads.READS`; this module
applies it to one message:

- `screen(part, read, policy)`: the pure decision over a result or params object: every
  string of each item (or of the whole) cleaned, a hidden character in an identifier leaving
  the item out (or refusing the whole), `"block"` leaving out what holds one.
- `screen_response` (an answer to the client's request: `prompts/list`, `resources/read`,
  ...), `screen_from_server` (a server's `elicitation/create`, `sampling/createMessage`,
  `notifications/message`): the decision applied to the connection, with its event and the
  `_meta` marker (`RESULT_META_KEY`) saying what was cleaned and what was left out.

The characters are `conduit_mcp.client`'s (`clean_model_text`: terminal escape sequences
whole, C0/C1 controls but TAB/LF/CR, invisible characters; lone surrogates become U+FFFD).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ..client import PathItem, clean_result_text, render_path
from ._base import DROP, PASS, Verdict
from ._jsonrpc import INVALID_RESULT_CODE, REFUSED_CALL_CODE, error_response, result_response
from ._modeltext import MAX_LISTED_PATHS, RESULT_META_KEY
from ._reads import Read

Path = tuple[PathItem, ...]

#: Members of a part never rewritten nor judged: the opaque cursor the client sends back.
_KEPT: Final = frozenset({"nextCursor"})


@dataclass(slots=True)
class Screened:
    """What `screen` made of one part.

    Attributes:
        value: the part as the client may see it (the part itself when nothing changed).
        cleaned: where a string was cleaned, from the part's root, in the part as handed on.
        withheld: the items left out, from the part's root, in the part as the server sent it.
        reasons: the reason each item was left out (`hidden_characters_in_name`,
            `hidden_characters`), in the order of `withheld`.
        flags: what was removed (`control_characters_removed`, `invisible_unicode_removed`,
            `lone_surrogate_replaced`).
        refused: `(reason, path)` when the whole must not be handed on: an identifier of the
            whole holds a hidden character, or (`"block"`) any of its text does.
    """

    value: Any
    cleaned: list[Path] = field(default_factory=list)
    withheld: list[Path] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    refused: tuple[str, Path] | None = None

    @property
    def changed(self) -> bool:
        return bool(self.cleaned or self.withheld or self.refused)


def clean_json(value: Any) -> tuple[Any, list[Path], set[str]]:
    """`value` with hidden characters removed from every string and object key (a key whose
    cleaned form is taken gets U+FFFD appended), the cleaned places, and the flags; `value`
    itself when nothing is hidden (C-speed scans). The rules are those of a tool result's
    `structuredContent` (`conduit_mcp.client.clean_result_text`), which any JSON value is."""
    if value is None or isinstance(value, (bool, int, float)):
        return value, [], set()
    found = clean_result_text({_HOLDER: value})
    if not found.changed:
        return value, [], set()
    return found.value[_HOLDER], [p[1:] for p in found.paths], set(found.flags)


#: The member of a tool result whose every string and key `clean_result_text` cleans.
_HOLDER: Final = "structuredContent"


def _dirty(text: str) -> bool:
    """Whether `text` holds a character `clean_json` would remove (or a lone surrogate)."""
    return bool(clean_json(text)[1])


def hidden_identifier(item: Any, read: Read) -> Path | None:
    """The place of the first identifier of `item` (a member of `read` the client sends back)
    that holds a hidden character, or `None`."""
    for member in read.members:
        if not member.identifier:
            continue
        found = _dirty_at(item, member.path)
        if found is not None:
            return found
    return None


def _dirty_at(value: Any, path: tuple[str, ...]) -> Path | None:
    here: list[tuple[Path, Any]] = [((), value)]
    for step in path:
        following: list[tuple[Path, Any]] = []
        for where, node in here:
            if step == "*":
                if isinstance(node, list):
                    following += [((*where, i), v) for i, v in enumerate(node)]
                elif isinstance(node, dict):
                    following += [((*where, k), v) for k, v in node.items()]
            elif step == "~":
                if isinstance(node, dict):
                    for key in node:
                        if isinstance(key, str) and _dirty(key):
                            return (*where, key)
            elif isinstance(node, dict) and step in node:
                following.append(((*where, step), node[step]))
        here = following
    for where, node in here:
        if isinstance(node, str) and _dirty(node):
            return where
    return None


def screen(part: Any, read: Read, policy: str) -> Screened:
    """Apply `policy` (`"clean"`, `"block"`, `"pass"`) to one part (a result, or params) of a
    message of kind `read`.

    Returns:
        A `Screened`; its `value` is a new object when anything changed, else `part`.
        Members in `read.skip` and `nextCursor` are handed on as they are.
    """
    if policy == "pass" or not isinstance(part, dict):
        return Screened(part)
    items_path = read.items
    container = _get(part, items_path) if items_path is not None else None
    if items_path is None or not isinstance(container, list):
        return _screen_whole(part, read, policy)
    out = Screened(part)
    kept: list[Any] = []
    for index, item in enumerate(container):
        place: Path = (*items_path, index)
        name = hidden_identifier(item, read)
        if name is not None:
            out.withheld.append(place)
            out.reasons.append("hidden_characters_in_name")
            continue
        cleaned, paths, flags = clean_json(item)
        if paths and policy == "block":
            out.withheld.append(place)
            out.reasons.append("hidden_characters")
            continue
        out.cleaned += [(*items_path, len(kept), *p) for p in paths]
        out.flags |= flags
        kept.append(cleaned)
    shell = _put(part, items_path, [])  # the rest of the part, without its items
    rest = _screen_whole(shell, read, policy)
    if rest.refused is not None:  # `block`: text outside the items (the part's `_meta`)
        out.refused = rest.refused
        return out
    out.cleaned += rest.cleaned
    out.flags |= rest.flags
    if out.withheld or out.cleaned:
        out.value = _put(rest.value, items_path, kept)
    return out


def _screen_whole(part: dict[str, Any], read: Read, policy: str) -> Screened:
    """One whole (a part without items): cleaned, or refused."""
    keep = _KEPT.union(read.skip)
    judged = {k: v for k, v in part.items() if k not in keep}
    name = hidden_identifier(judged, read) if read.items is None else None
    if name is not None:
        return Screened(part, refused=("hidden_characters_in_name", name))
    cleaned, paths, flags = clean_json(judged)
    if not paths:
        return Screened(part)
    if policy == "block":
        return Screened(part, refused=("hidden_characters", paths[0]))
    value = {**cleaned, **{k: part[k] for k in keep if k in part}}
    return Screened(value, cleaned=paths, flags=flags)


def _get(part: Any, path: tuple[str, ...]) -> Any:
    node = part
    for step in path:
        if not isinstance(node, dict):
            return None
        node = node.get(step)
    return node


def _put(part: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of `part` (copied along `path` only) with `value` at `path`."""
    if len(path) == 1:
        return {**part, path[0]: value}
    inner = part.get(path[0])
    return {**part, path[0]: _put(inner if isinstance(inner, dict) else {}, path[1:], value)}


def mark(part: dict[str, Any], screened: Screened | None) -> dict[str, Any]:
    """The part with `_meta[RESULT_META_KEY]` saying what the guard changed (`text_cleaned`,
    `flags`, `withheld`); a server's own value under that key is removed in any case (a
    server does not speak for the guard). `part` itself when there is nothing to say."""
    meta = part.get("_meta")
    forged = isinstance(meta, dict) and RESULT_META_KEY in meta
    said: dict[str, Any] = {}
    if screened is not None and screened.cleaned:
        said["text_cleaned"] = [render_path(p) for p in dict.fromkeys(screened.cleaned)]
        said["flags"] = sorted(screened.flags)
    if screened is not None and screened.withheld:
        said["withheld"] = [render_path(p) for p in screened.withheld]
    if not said and not forged:
        return part
    new_meta = (
        {k: v for k, v in meta.items() if k != RESULT_META_KEY} if isinstance(meta, dict) else {}
    )
    if said:
        new_meta[RESULT_META_KEY] = said
    new = dict(part)
    if new_meta or "_meta" in part:
        new["_meta"] = new_meta
    return new


def report(conn: Any, method: str, screened: Screened, decision: str, at: Path = ()) -> None:
    """The events of one screened message: `model_text_cleaned` for the strings cleaned,
    `model_text_withheld` for what was left out (each item, or the whole: `decision`).
    `at`: the path of the part in its message (`("params",)` for a request's)."""
    if screened.refused is not None:
        reason, where = screened.refused
        conn.emit(
            "model_text_withheld",
            None,
            reason,
            decision,
            path=(*at, *where),
            message=(
                f"{_what(method, at)}: its text holds invisible or control characters"
                + (" in a name the client sends back" if reason.endswith("_name") else "")
                + f": {decision}"
            ),
            details={"method": method},
        )
        return
    for place, reason in zip(screened.withheld, screened.reasons, strict=True):
        conn.emit(
            "model_text_withheld",
            None,
            reason,
            "removed",
            path=(*at, *place),
            message=(
                f"an item of {_what(method, at)} holds invisible or control characters"
                + (" in a name the client sends back" if reason.endswith("_name") else "")
                + ": left out of what the client sees"
            ),
            details={"method": method},
        )
    if screened.cleaned:
        paths = [render_path((*at, *p)) for p in dict.fromkeys(screened.cleaned)]
        conn.emit(
            "model_text_cleaned",
            None,
            "hidden_characters_removed",
            "cleaned",
            path=(*at, *screened.cleaned[0]),
            message=f"hidden characters removed from {len(paths)} string(s) of {_what(method, at)}",
            details={
                "method": method,
                "paths": paths[:MAX_LISTED_PATHS],
                "count": len(paths),
                "flags": sorted(screened.flags),
            },
        )


def _what(method: str, at: Path) -> str:
    """The message an event names: the answer to a client's request, or the server's own."""
    return f"a server's {method}" if at else f"the {method} answer"


def screen_response(conn: Any, request_id: Any, result: Any, read: Read) -> Verdict:
    """Policy `model_text` on the answer to a client's request of kind `read`: the `Verdict`
    (`_base`) for the response: pass, the response with the cleaned result (marked), or, when
    the whole is refused, a JSON-RPC error -32603 (reason `hidden_characters` or
    `hidden_characters_in_name`)."""
    if not isinstance(result, dict):
        return PASS
    screened = screen(result, read, conn.shared.policy.model_text)
    if screened.refused is not None:
        report(conn, read.method, screened, "answered_error")
        reason, where = screened.refused
        return Verdict(
            "replace",
            error_response(
                request_id,
                INVALID_RESULT_CODE,
                f"conduit-mcp guard withheld the server's {read.method} answer: its text holds "
                "invisible or control characters",
                reason=reason,
                tool=None,
                path=where,
            ),
        )
    report(conn, read.method, screened, "cleaned")
    marked = mark(screened.value, screened)
    if marked is result:
        return PASS
    return Verdict("replace", result_response(request_id, marked))


def screen_from_server(conn: Any, message: dict[str, Any], read: Read) -> Verdict:
    """Policy `model_text` on a server's own request or notification of kind `read`: the
    `Verdict` for it: pass, the message with cleaned params (marked), or drop; a refused
    request is answered to the server with a JSON-RPC error -32602 (when the seam can write
    to it: `EngineBase.send_requests_to`), so it does not wait."""
    params = message.get("params")
    if not isinstance(params, dict):
        return PASS
    screened = screen(params, read, conn.shared.policy.model_text)
    if screened.refused is not None:
        request = "id" in message
        report(conn, read.method, screened, "refused" if request else "dropped", ("params",))
        if request:
            reason, where = screened.refused
            conn.answer_server(
                error_response(
                    message["id"],
                    REFUSED_CALL_CODE,
                    f"conduit-mcp guard refused the {read.method} request: its text holds "
                    "invisible or control characters",
                    reason=reason,
                    tool=None,
                    path=("params", *where),
                )
            )
        return DROP
    report(conn, read.method, screened, "cleaned", ("params",))
    marked = mark(screened.value, screened)
    if marked is params:
        return PASS
    return Verdict("replace", {**message, "params": marked})
