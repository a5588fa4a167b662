"""LLM providers' tool-name rules, and a reversible map from MCP tool names to provider names.

MCP allows tool names that model APIs reject (dots, up to 128 characters, and, as a SHOULD only,
anything else), and one model session sees tools from many servers. `ToolNameMap` gives every
(`server_id`, tool name) pair a name the provider accepts and routes a model's tool call back.

Spec: 2026-07-28 server/tools "Tool Names" (names SHOULD be 1-128 characters of A-Z a-z 0-9
`_` `-` `.`; clients that aggregate servers SHOULD disambiguate, e.g. by prefixing a server
identifier, and SHOULD NOT rely on `serverInfo.name` for it).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

from ..client._errors import Error
from ..client._tool import Tool, check_server_id

Provider = Literal["openai", "anthropic", "gemini"]
"""A model API whose tool-name rule this module knows."""

#: Between the server part and the tool part of a prefixed name (`weather__get_forecast`).
SEPARATOR: Final = "__"

_HASH_CHARS: Final = 8  # hex digits in a short suffix: 32 bits, ample for one session's tools
_LONG_HASH_CHARS: Final = 16  # second try, when two short suffixes meet (adversarial input)


@dataclass(frozen=True)
class NameRule:
    """One provider's rule for a tool (function) name.

    A name is accepted when it is 1 to `max_length` characters long, its first character is in
    `first_chars` and every other character is in `chars` (ASCII character-class bodies, as in
    a regex `[...]`). Each rule is the strictest of the provider's current official statements,
    so a name accepted here is accepted wherever that provider documents a rule.

    Attributes:
        provider: `"openai"`, `"anthropic"` or `"gemini"`.
        max_length: the maximum length in characters.
        first_chars: regex class body for the first character.
        chars: regex class body for the other characters.
        source: where the rule is stated.
    """

    provider: str
    max_length: int
    first_chars: str
    chars: str
    source: str
    _full: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _all_allowed: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _bad_run: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _first: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rest = f"[{self.chars}]{{0,{self.max_length - 1}}}"
        object.__setattr__(self, "_full", re.compile(f"[{self.first_chars}]{rest}"))
        object.__setattr__(self, "_all_allowed", re.compile(f"[{self.chars}]*"))
        object.__setattr__(self, "_bad_run", re.compile(f"[^{self.chars}]+"))
        object.__setattr__(self, "_first", re.compile(f"[{self.first_chars}]"))

    @property
    def pattern(self) -> str:
        """The rule as one anchored regular expression, e.g. `^[a-zA-Z0-9_-]{1,64}$`."""
        if self.first_chars == self.chars:
            return f"^[{self.chars}]{{1,{self.max_length}}}$"
        return f"^[{self.first_chars}][{self.chars}]{{0,{self.max_length - 1}}}$"

    def accepts(self, name: object) -> bool:
        """Whether `name` is a `str` this provider accepts as a tool name (never raises)."""
        return isinstance(name, str) and self._full.fullmatch(name) is not None


OPENAI_NAME_RULE: Final = NameRule(
    provider="openai",
    max_length=64,
    first_chars="a-zA-Z0-9_-",
    chars="a-zA-Z0-9_-",
    source=(
        "OpenAI API reference, FunctionDefinition.name (openai 3.57.0 "
        "openai/types/shared/function_definition.py): 'Must be a-z, A-Z, 0-9, or contain "
        "underscores and dashes, with a maximum length of 64.'"
    ),
)
"""OpenAI function name: `^[a-zA-Z0-9_-]{1,64}$` (Chat Completions and Responses)."""

ANTHROPIC_NAME_RULE: Final = NameRule(
    provider="anthropic",
    max_length=64,
    first_chars="a-zA-Z0-9_-",
    chars="a-zA-Z0-9_-",
    source=(
        "Claude docs, agents-and-tools/tool-use 'Specifying client tools': name 'Must match the "
        "regex ^[a-zA-Z0-9_-]{1,64}$'. The Messages API itself has enforced "
        "^[a-zA-Z0-9_-]{1,128}$ since 2025 (its 400 message), but clients such as Claude "
        "Desktop still enforce 64, so 64 is the rule here."
    ),
)
"""Anthropic tool name: `^[a-zA-Z0-9_-]{1,64}$` (documented; the API accepts up to 128)."""

GEMINI_NAME_RULE: Final = NameRule(
    provider="gemini",
    max_length=64,
    first_chars="a-zA-Z_",
    chars="a-zA-Z0-9_.-",
    source=(
        "google-genai 3.6.1 types.FunctionDeclaration.name: 'Must start with a letter or an "
        "underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, "
        "with a maximum length of 128'; Vertex AI v1 FunctionDeclaration.name: the same without "
        "colons, maximum 64. The intersection of the two is the rule here."
    ),
)
"""Gemini function name: `^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$`."""

NAME_RULES: Final[dict[str, NameRule]] = {
    rule.provider: rule for rule in (OPENAI_NAME_RULE, ANTHROPIC_NAME_RULE, GEMINI_NAME_RULE)
}


def name_rule(provider: str) -> NameRule:
    """Return the `NameRule` of `provider`.

    Raises:
        ValueError: `provider` is not `"openai"`, `"anthropic"` or `"gemini"` (a caller bug).
    """
    rule = NAME_RULES.get(provider) if isinstance(provider, str) else None
    if rule is None:
        raise ValueError(f"unknown provider {provider!r}; expected one of {sorted(NAME_RULES)}")
    return rule


def provider_accepts_name(provider: str, name: object) -> bool:
    """Tell whether a provider's API accepts `name` as a tool (function) name.

    Args:
        provider: `"openai"`, `"anthropic"` or `"gemini"`.
        name: the candidate name; anything that is not a `str` is not accepted.

    Returns:
        `True` when `name` matches the provider's rule (`OPENAI_NAME_RULE`,
        `ANTHROPIC_NAME_RULE`, `GEMINI_NAME_RULE`). Every MCP name that follows the spec's
        SHOULD and has no dot, and is at most 64 characters long, is accepted by all three.

    Raises:
        ValueError: `provider` is not one of the three (a caller bug).

    Total: one anchored regex match; names longer than the limit fail fast.

    >>> provider_accepts_name("openai", "admin.tools.list")
    False
    >>> provider_accepts_name("gemini", "admin.tools.list")
    True
    """
    rule = name_rule(provider)
    if not isinstance(name, str) or len(name) > rule.max_length:
        return False
    return rule.accepts(name)


class ToolRef(NamedTuple):
    """Where a provider-facing name routes to: the server and the tool's name on it."""

    server_id: str
    name: str


def _digest(server_id: str, name: str) -> str:
    # surrogatepass: JSON text may carry lone surrogates, which plain UTF-8 cannot encode.
    data = f"{server_id}\x00{name}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def _sanitize(rule: NameRule, text: str) -> str:
    """Map `text` into the rule's charset: accents stripped, each run of other characters `_`."""
    if rule._all_allowed.fullmatch(text):
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return rule._bad_run.sub("_", stripped)


def _with_suffix(rule: NameRule, base: str, suffix: str) -> str:
    keep = rule.max_length - len(suffix) - 1
    return f"{base[:keep]}_{suffix}"


_ALNUM = re.compile(r"[A-Za-z0-9]")


def _candidate(rule: NameRule, server_id: str, name: str, server_prefix: bool) -> tuple[str, bool]:
    """The name a (server, tool) pair asks for, and whether it is the pair written out verbatim.

    A pure function of its arguments: the prefixed, charset-mapped name, with a hash suffix when
    it would be too long or when the tool part maps to nothing readable, and a leading `_` when
    (Gemini) it would start with a character the rule does not allow first.
    """
    tool_part = _sanitize(rule, name)
    exact = tool_part == name
    if server_prefix:
        server_part = _sanitize(rule, server_id)
        exact = exact and server_part == server_id
        candidate = f"{server_part}{SEPARATOR}{tool_part}"
    else:
        candidate = tool_part
    if not tool_part or (tool_part != name and _ALNUM.search(tool_part) is None):
        # e.g. a name written only in CJK maps to "_": say which tool it was with a hash.
        candidate = _with_suffix(rule, candidate, _digest(server_id, name)[:_HASH_CHARS])
        exact = False
    if not rule._first.match(candidate):
        candidate = f"_{candidate}"
        exact = False
    if len(candidate) > rule.max_length:
        candidate = _with_suffix(rule, candidate, _digest(server_id, name)[:_HASH_CHARS])
        exact = False
    return candidate, exact


def standalone_name(provider: str, server_id: str, name: str) -> str:
    """The provider-facing name of one tool when no `ToolNameMap` is used.

    The tool's own name mapped into the provider's charset (no server prefix, no collision
    handling): unchanged when the provider already accepts it.

    Raises:
        ValueError: unknown `provider` (a caller bug).
    """
    rule = name_rule(provider)
    if len(name) <= rule.max_length and rule.accepts(name):
        return name
    return _candidate(rule, server_id, name, False)[0]


class ToolNameMap:
    """A reversible map between MCP tools and the names one provider's model sees.

    Each (`server_id`, tool name) pair gets one name the provider accepts (see `NameRule`):

    - `{server}__{tool}` with the server's operator-assigned id as prefix (or the bare tool name
      with `server_prefix=False`); characters outside the provider's charset are mapped (accents
      stripped, each run of other characters becomes `_`: `a.b` -> `a_b` for OpenAI);
    - a name longer than the provider's limit is cut and given a short hash suffix
      (`_` + 8 hex digits of SHA-256 over the server id and the original name);
    - when two pairs map to the same name, the one whose name is its pair written out verbatim
      keeps it and every other one gets the hash suffix (a longer hash, then a counter, should
      hashes meet).

    Reversible means the map routes back (`resolve`): a hashed name is not a string inverse.

    Determinism: `from_tools` is order-independent (the same set of tools gives the same names in
    any order); `add` assigns first come, first served, and a name once given never changes, so
    a conversation's earlier tool calls stay routable after `tools/list` changes. Not
    thread-safe.

    Spec: 2026-07-28 server/tools "Tool Names" (clients aggregating servers SHOULD disambiguate,
    e.g. by prefixing a server identifier; `serverInfo.name` SHOULD NOT be relied on, hence the
    operator-assigned `server_id`).
    """

    __slots__ = ("_forward", "_reverse", "_rule", "_server_prefix")

    def __init__(self, provider: str, *, server_prefix: bool = True) -> None:
        """Create an empty map for `provider`.

        Args:
            provider: `"openai"`, `"anthropic"` or `"gemini"`.
            server_prefix: prefix each name with its server id (recommended whenever tools of
                more than one server reach one model).

        Raises:
            ValueError: unknown `provider` (a caller bug).
        """
        self._rule = name_rule(provider)
        self._server_prefix = bool(server_prefix)
        self._forward: dict[tuple[str, str], str] = {}
        self._reverse: dict[str, ToolRef] = {}

    @classmethod
    def from_tools(
        cls, provider: str, tools: Iterable[Tool], *, server_prefix: bool = True
    ) -> ToolNameMap:
        """Build a map for `tools`, independent of their order.

        Args:
            provider: `"openai"`, `"anthropic"` or `"gemini"`.
            tools: the tools one model will see; a (server, name) pair listed twice is one entry.
            server_prefix: as for the constructor.

        Returns:
            The map; the same set of pairs gives the same names whatever the order.

        Raises:
            ValueError: unknown `provider` (a caller bug).
            TypeError: an element of `tools` is not a `Tool` (a caller bug).

        Total: O(n log n) in the number of tools; nothing in the tools is walked.
        """
        self = cls(provider, server_prefix=server_prefix)
        rule = self._rule
        wanted: dict[tuple[str, str], tuple[str, bool]] = {}
        for tool in tools:
            if not isinstance(tool, Tool):
                raise TypeError(f"expected a Tool, got {type(tool).__name__}")
            key = (tool.server_id, tool.name)
            if key not in wanted:
                wanted[key] = _candidate(rule, key[0], key[1], self._server_prefix)
        groups: dict[str, list[tuple[str, str]]] = {}
        for key, (candidate, _exact) in wanted.items():
            groups.setdefault(candidate, []).append(key)
        losers: list[tuple[str, str]] = []
        for candidate, keys in groups.items():
            exact = [key for key in keys if wanted[key][1]]
            winner = keys[0] if len(keys) == 1 else exact[0] if len(exact) == 1 else None
            if winner is not None:
                self._put(winner, candidate)
            losers.extend(key for key in keys if key != winner)
        # Winners first, then losers in a fixed order: the result does not depend on input order.
        for key in sorted(losers):
            self._put(key, self._free_name(key, wanted[key][0]))
        return self

    @property
    def provider(self) -> str:
        """The provider whose rule every name in this map follows."""
        return self._rule.provider

    @property
    def server_prefix(self) -> bool:
        """Whether names carry the server id as a prefix."""
        return self._server_prefix

    def add(self, tool: Tool) -> str:
        """Give `tool` a provider name, or return the one it already has.

        Args:
            tool: the tool; its `server_id` and `name` are the key.

        Returns:
            The provider-facing name (accepted by `provider_accepts_name(self.provider, ...)`).

        Raises:
            TypeError: `tool` is not a `Tool` (a caller bug).

        Total: O(length of the name); collisions cost one hash.
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"expected a Tool, got {type(tool).__name__}")
        return self.add_name(tool.server_id, tool.name)

    def add_name(self, server_id: str, name: str) -> str:
        """`add` for a (server id, tool name) pair not wrapped in a `Tool`.

        Raises:
            TypeError, ValueError: `server_id` is not a non-empty `str`, or `name` is not a
                `str` (caller bugs).
        """
        check_server_id(server_id)
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        key = (server_id, name)
        mapped = self._forward.get(key)
        if mapped is None:
            candidate = _candidate(self._rule, server_id, name, self._server_prefix)[0]
            mapped = (
                candidate if candidate not in self._reverse else self._free_name(key, candidate)
            )
            self._put(key, mapped)
        return mapped

    def name_for(self, server_id: str, name: str) -> str | None:
        """The provider name already given to (`server_id`, `name`), or `None`."""
        return self._forward.get((server_id, name))

    def get(self, mapped_name: object) -> ToolRef | None:
        """Route a provider name back: the `ToolRef`, or `None` when this map never gave it."""
        if not isinstance(mapped_name, str):
            return None
        return self._reverse.get(mapped_name)

    def resolve(self, mapped_name: object) -> ToolRef:
        """Route a model's tool call back to (`server_id`, original tool name).

        Args:
            mapped_name: the function/tool name in the model's tool call, exactly as returned.

        Returns:
            `ToolRef(server_id, name)`, the name exactly as the server listed it.

        Raises:
            Error: kind `"policy"`, reason `"unmapped_tool_name"`, path `()`, when this map
                never gave out `mapped_name` (a model inventing or misspelling a tool) or it is
                not a string.
        """
        ref = self.get(mapped_name)
        if ref is None:
            got = "string" if isinstance(mapped_name, str) else type(mapped_name).__name__
            raise Error(
                "policy",
                "unmapped_tool_name",
                f"the model called a tool name that was not offered to it ({got})",
                details={"provider": self._rule.provider},
            )
        return ref

    def items(self) -> Iterator[tuple[str, ToolRef]]:
        """(provider name, `ToolRef`) pairs, in the order the names were given."""
        return iter(self._reverse.items())

    def __contains__(self, mapped_name: object) -> bool:
        return isinstance(mapped_name, str) and mapped_name in self._reverse

    def __iter__(self) -> Iterator[str]:
        return iter(self._reverse)

    def __len__(self) -> int:
        return len(self._reverse)

    def __repr__(self) -> str:
        return f"ToolNameMap(provider={self.provider!r}, names={len(self)})"

    # -- internals ----------------------------------------------------------------------------

    def _put(self, key: tuple[str, str], mapped: str) -> None:
        self._forward[key] = mapped
        self._reverse[mapped] = ToolRef(*key)

    def _free_name(self, key: tuple[str, str], candidate: str) -> str:
        """A free name for `key` derived from its taken `candidate` (deterministic)."""
        digest = _digest(*key)
        for suffix in (digest[:_HASH_CHARS], digest[:_LONG_HASH_CHARS]):
            mapped = _with_suffix(self._rule, candidate, suffix)
            if mapped not in self._reverse:
                return mapped
        count = 2
        while True:  # only reachable by deliberately colliding names; ends within len(self) + 1
            mapped = _with_suffix(self._rule, candidate, f"{digest[:_HASH_CHARS]}{count}")
            if mapped not in self._reverse:
                return mapped
            count += 1
