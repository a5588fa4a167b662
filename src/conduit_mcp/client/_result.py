"""`ToolResult`: the outcome of a `tools/call` that the server completed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _wire as w
from ._errors import type_error
from ._jsoncopy import copy_json
from ._jsonrules import MISSING
from ._provenance import FLAG_WITHHELD, Provenance, clean_text
from ._tool import check_server_id

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class ToolResult:
    """The outcome of a `tools/call` the server completed (a `CallToolResult`). Immutable.

    A tool that failed reports it in-band: that is a `ToolResult` with `is_error=True`, never an
    `Error` (spec 2026-07-28 server/tools "Error Handling").

    Attributes:
        content: the content blocks as sent (a missing `content` reads as `[]`). Blocks are not
            checked here; shaping (`shape_for_llm`) copes with unknown or malformed ones.
        structured: `structuredContent`, or `None` when absent.
        has_structured: whether the `structuredContent` key was present (`0`, `false`, `""`,
            `[]` and `null` are present).
        is_error: `True` only when the server sent `isError: true`.
        meta: the result's `_meta` when it is an object, else `{}`.
        extra: every other wire key except `resultType`, as sent (keys never converted).
        provenance: `None` for a result off the wire; set on results shaped for a model.
        raw: the result object as received (for a shaped result: the original wire object).

    Spec: 2026-07-28 schema `CallToolResult`.
    """

    content: list[Any]
    structured: Any
    has_structured: bool
    is_error: bool
    meta: JSONObject
    extra: JSONObject
    raw: JSONObject
    provenance: Provenance | None

    def __init__(
        self,
        *,
        content: list[Any],
        structured: Any,
        has_structured: bool,
        is_error: bool,
        meta: JSONObject,
        extra: JSONObject,
        raw: JSONObject,
        provenance: Provenance | None = None,
    ) -> None:
        # Internal: use `from_wire` (or `shape_for_llm` / `withheld`). Written out, not the
        # dataclass's: one local setter for eight fields is ~10% faster (bench row 3).
        setter = object.__setattr__
        setter(self, "content", content)
        setter(self, "structured", structured)
        setter(self, "has_structured", has_structured)
        setter(self, "is_error", is_error)
        setter(self, "meta", meta)
        setter(self, "extra", extra)
        setter(self, "raw", raw)
        setter(self, "provenance", provenance)

    @classmethod
    def from_wire(cls, raw: object, *, copy: bool = False) -> ToolResult:
        """Take a `CallToolResult` off the wire, checking its shape only.

        The object is handed over, not copied (pass `copy=True` for a defensive deep copy).
        `resultType` is not looked at here: `parse_call_result` dispatches on it.

        Args:
            raw: the `result` member of a `tools/call` response, as parsed from JSON.
            copy: deep-copy `raw` first.

        Returns:
            The `ToolResult`.

        Raises:
            Error: kind `"protocol"`, reason `"invalid_tool_result"`, when `raw` is not an object
                (path `()`), `content` is present and not an array (path `("content",)`), or
                `isError` is present and neither a boolean nor `null` (path `("isError",)`;
                `null` reads as false).

        Total: O(number of top-level keys); content blocks are not walked.

        Spec: 2026-07-28 schema `CallToolResult` (`isError`: "If not set, this is assumed to be
        false").

        >>> ToolResult.from_wire({"content": [], "isError": True}).is_error
        True
        """
        if not isinstance(raw, dict):
            raise type_error("invalid_tool_result", (), "an object", raw)
        if copy:
            raw = copy_json(raw)
        content = raw.get(w.CONTENT, MISSING)
        if content is MISSING:
            content = []
        elif type(content) is not list and not isinstance(content, list):
            raise type_error("invalid_tool_result", (w.CONTENT,), "an array", content)
        is_error = raw.get(w.IS_ERROR)
        if is_error is not None and type(is_error) is not bool:
            raise type_error("invalid_tool_result", (w.IS_ERROR,), "a boolean or null", is_error)
        meta = raw.get(w.META)
        lifted = w.RESULT_LIFTED_KEYS
        return cls(
            content=content,
            structured=raw.get(w.STRUCTURED_CONTENT),
            has_structured=w.STRUCTURED_CONTENT in raw,
            is_error=is_error is True,
            meta=meta if isinstance(meta, dict) else {},
            extra={k: v for k, v in raw.items() if k not in lifted},
            raw=raw,
        )

    @classmethod
    def withheld(cls, server_id: str, reason: str) -> ToolResult:
        """The synthetic result a client returns when a post-call hook failed.

        Args:
            server_id: the operator-assigned id of the server whose result was withheld.
            reason: one line for the model saying why (no payload); invisible characters are
                removed from it. `""` gives a text without a reason.

        Returns:
            A new `ToolResult` with `is_error=True`, one text block
            `[result withheld by the client: <reason>]`, no `structuredContent`, `raw` a
            synthetic `{"content": [...], "isError": true}` object, and provenance flag
            `withheld`. `is_error` is true so the model treats it as a failed call, which it is
            from the model's side (2026-07-28 server/tools "Error Handling").

        Raises:
            TypeError: `server_id` or `reason` is not a `str` (caller bugs).
            ValueError: `server_id` is empty.
        """
        check_server_id(server_id)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        flags: set[str] = {FLAG_WITHHELD}
        reason = clean_text(reason, flags)
        text = "[result withheld by the client]"
        if reason:
            text = f"[result withheld by the client: {reason}]"
        return cls(
            content=[{w.BLOCK_TYPE: w.TYPE_TEXT, w.BLOCK_TEXT: text}],
            structured=None,
            has_structured=False,
            is_error=True,
            meta={},
            extra={},
            raw={"content": [{w.BLOCK_TYPE: w.TYPE_TEXT, w.BLOCK_TEXT: text}], "isError": True},
            provenance=Provenance(server_id, False, tuple(flags)),
        )

    def replace(self, **changes: Any) -> ToolResult:
        """Return a new `ToolResult` with the named attributes replaced (this one is immutable)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return ToolResult(**fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # holds dicts

    def __repr__(self) -> str:
        return (
            f"ToolResult(is_error={self.is_error!r}, content=<{len(self.content)} blocks>, "
            f"has_structured={self.has_structured!r}, provenance={self.provenance!r})"
        )
