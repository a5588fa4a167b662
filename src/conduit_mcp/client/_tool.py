"""`Tool`: a tool advertised by one server, as the client holds it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn

from . import _wire as w
from ._errors import Error, type_error
from ._jsoncopy import copy_json

JSONObject = dict[str, Any]
"""A JSON object as a JSON parser returns it: string keys, JSON values."""


class Hints(NamedTuple):
    """The effective tool-annotation hints a client may act on (server/tools "Tool Annotations").

    Every field is a real `bool`. See `Tool.hints` for how they are derived.
    """

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


#: The spec's defaults (2026-07-28 schema `ToolAnnotations`): the conservative reading that a
#: client uses for any hint it may not trust.
DEFAULT_HINTS = Hints(read_only=False, destructive=True, idempotent=False, open_world=True)

_HINT_KEYS = (w.READ_ONLY_HINT, w.DESTRUCTIVE_HINT, w.IDEMPOTENT_HINT, w.OPEN_WORLD_HINT)


def check_server_id(server_id: object) -> str:
    """Return `server_id` if it is a non-empty string.

    Raises:
        TypeError: `server_id` is not a `str` (a caller bug, not a server fault).
        ValueError: `server_id` is the empty string.
    """
    if not isinstance(server_id, str):
        raise TypeError(f"server_id must be a str, got {type(server_id).__name__}")
    if not server_id:
        raise ValueError("server_id must be a non-empty string")
    return server_id


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _dict_or_none(value: object) -> JSONObject | None:
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tool:
    """A tool advertised by one server in `tools/list`, as the client holds it. Immutable.

    Build one with `Tool.from_wire`. The lifted attributes are read-only views into `raw`
    (not copies): a field whose wire value is not of the schema's JSON type reads as `None`
    (`{}` for `meta`), while `raw` still holds what the server sent.

    Attributes:
        server_id: the operator-assigned id of the server that listed the tool; never the
            server's self-reported `serverInfo.name`.
        raw: the tool definition exactly as the server sent it, including keys this class does
            not lift (`icons`, future fields). This library never mutates it.
        fingerprint: `None`, or the caller's fingerprint of `raw` (see `fingerprint()`).

    Spec: 2026-07-28 `server/tools` "Tool" and schema `Tool`.
    """

    # The constructor is internal: use `from_wire`, which checks the shape.
    server_id: str
    raw: JSONObject
    fingerprint: str | None = None

    @classmethod
    def from_wire(
        cls,
        server_id: str,
        raw: object,
        *,
        fingerprint: str | None = None,
        copy: bool = False,
    ) -> Tool:
        """Take one tool definition off the wire, checking its shape only.

        The object is handed over, not copied: keep no reference you will mutate, or pass
        `copy=True` for a defensive deep copy. Name charset, duplicate names and `x-mcp-header`
        rules are tool intake's job (`intake`), not this function's.

        Args:
            server_id: the operator-assigned id of the listing server (non-empty `str`).
            raw: one element of `tools` from a `tools/list` result, as parsed from JSON.
            fingerprint: an already-computed fingerprint to attach, or `None`.
            copy: deep-copy `raw` first (cost grows with the size of the definition).

        Returns:
            The `Tool`.

        Raises:
            Error: kind `"protocol"`, reason `"invalid_tool"`, when `raw` is not an object
                (path `()`), `name` is missing or not a string (path `("name",)`), or
                `inputSchema` is missing or not an object (path `("inputSchema",)`).
            TypeError, ValueError: `server_id` is not a non-empty `str` (a caller bug).

        Total: every check is O(1) in the size of `raw`; nothing is walked, so depth and size
        cannot make it fail.

        Spec: 2026-07-28 schema `Tool` (`name` and `inputSchema` are required;
        `inputSchema` is an object).

        >>> Tool.from_wire("srv", {"name": "get_weather", "inputSchema": {}}).name
        'get_weather'
        """
        check_server_id(server_id)
        raw = check_tool_shape(raw)
        if copy:
            raw = copy_json(raw)
        return cls(server_id, raw, fingerprint)

    def with_fingerprint(self, fingerprint: str | None) -> Tool:
        """Return the same tool with `fingerprint` set (the `Tool` itself is immutable)."""
        return Tool(self.server_id, self.raw, fingerprint)

    # -- lifted, read-only ------------------------------------------------------------------

    @property
    def name(self) -> str:
        """`name`, exactly as sent (never normalized)."""
        name: str = self.raw[w.NAME]
        return name

    @property
    def title(self) -> str | None:
        """`title` when it is a string, else `None`."""
        return _str_or_none(self.raw.get(w.TITLE))

    @property
    def description(self) -> str | None:
        """`description` when it is a string, else `None`."""
        return _str_or_none(self.raw.get(w.DESCRIPTION))

    @property
    def input_schema(self) -> JSONObject:
        """`inputSchema`, verbatim (never rewritten)."""
        schema: JSONObject = self.raw[w.INPUT_SCHEMA]
        return schema

    @property
    def output_schema(self) -> JSONObject | None:
        """`outputSchema` when it is an object, else `None`."""
        return _dict_or_none(self.raw.get(w.OUTPUT_SCHEMA))

    @property
    def annotations(self) -> JSONObject | None:
        """`annotations` when it is an object, else `None`.

        These are hints: untrusted unless the server is trusted, and they never drive policy on
        their own (use `hints(trusted=...)`).
        """
        return _dict_or_none(self.raw.get(w.ANNOTATIONS))

    @property
    def execution(self) -> JSONObject | None:
        """`execution` (legacy task support: `execution.taskSupport`) when an object, else `None`.

        Spec: 2025-11-25 schema `ToolExecution`; the key is gone from the 2026-07-28 schema.
        """
        return _dict_or_none(self.raw.get(w.EXECUTION))

    @property
    def meta(self) -> JSONObject:
        """The tool's `_meta` when it is an object, else `{}` (a fresh empty dict)."""
        meta = self.raw.get(w.META)
        return meta if isinstance(meta, dict) else {}

    @property
    def display_name(self) -> str:
        """The name to show a person: `title`, then `annotations.title`, then `name`.

        A candidate that is not a non-empty string is skipped.

        Spec: 2026-07-28 schema `Tool.annotations` ("Display name precedence order is:
        `title`, `annotations.title`, then `name`").
        """
        title = self.raw.get(w.TITLE)
        if isinstance(title, str) and title:
            return title
        annotations = self.raw.get(w.ANNOTATIONS)
        if isinstance(annotations, dict):
            title = annotations.get(w.TITLE)
            if isinstance(title, str) and title:
                return title
        return self.name

    def hints(self, trusted: bool) -> Hints:
        """The effective hints a client may act on.

        Args:
            trusted: whether the operator trusts this server's self-description.

        Returns:
            `Hints` of real booleans. Untrusted: the spec's conservative defaults whatever the
            server says (`DEFAULT_HINTS`: read_only False, destructive True, idempotent False,
            open_world True). Trusted: each hint the server sent as a JSON boolean, else its
            default (`"yes"`, `1` and `null` are not booleans).

        Spec: 2026-07-28 schema `ToolAnnotations` ("Clients should never make tool use decisions
        based on `ToolAnnotations` received from untrusted servers"; defaults per field).
        """
        if not trusted:
            return DEFAULT_HINTS
        annotations = self.annotations
        if annotations is None:
            return DEFAULT_HINTS
        values = []
        for key, default in zip(_HINT_KEYS, DEFAULT_HINTS, strict=True):
            value = annotations.get(key)
            values.append(value if type(value) is bool else default)
        return Hints(*values)

    # -- value semantics ---------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tool):
            return NotImplemented
        return (self.server_id, self.fingerprint, self.raw) == (
            other.server_id,
            other.fingerprint,
            other.raw,
        )

    __hash__ = None  # type: ignore[assignment]  # holds a dict

    def __repr__(self) -> str:
        return f"Tool(server_id={self.server_id!r}, name={self.name!r})"


def check_tool_shape(raw: object) -> dict[str, Any]:
    """Return `raw` if it has the shape of a tool definition (the checks of `Tool.from_wire`).

    Raises:
        Error: kind `"protocol"`, reason `"invalid_tool"`, as `Tool.from_wire` documents.
    """
    if not isinstance(raw, dict):
        raise type_error("invalid_tool", (), "an object", raw)
    if not isinstance(raw.get(w.NAME), str):
        _reject_field(raw, w.NAME, "a string")
    if not isinstance(raw.get(w.INPUT_SCHEMA), dict):
        _reject_field(raw, w.INPUT_SCHEMA, "an object")
    return raw


def _reject_field(raw: Mapping[str, Any], key: str, expected: str) -> NoReturn:
    if key not in raw:
        raise Error(
            "protocol",
            "invalid_tool",
            f"{key} is required ({expected})",
            path=(key,),
            details={"expected": expected, "got": "missing"},
        )
    raise type_error("invalid_tool", (key,), expected, raw[key])


_new_object = object.__new__
_set_server_id = Tool.__dict__["server_id"].__set__
_set_raw = Tool.__dict__["raw"].__set__
_set_fingerprint = Tool.__dict__["fingerprint"].__set__


def build_tool(server_id: str, raw: JSONObject, fingerprint: str | None) -> Tool:
    """`Tool(server_id, raw, fingerprint)` without the frozen dataclass's `__init__`.

    For intake, which builds one per listed tool on every listing: the slots are set through
    their descriptors (what `object.__setattr__` does after looking each one up by name). No
    checks: the caller passes a shape-checked `raw` and a checked `server_id`.
    """
    tool = _new_object(Tool)
    _set_server_id(tool, server_id)
    _set_raw(tool, raw)
    _set_fingerprint(tool, fingerprint)
    return tool
