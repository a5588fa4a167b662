"""Schema patches applied before datamodel-code-generator runs: data, not code.

Each patch names the spec versions it applies to, a JSON Pointer into the pruned schema
(RFC 6901; `{defs}` stands for `definitions` or `$defs`), the value it expects to find there
(asserted: a patch whose old value moved fails the generator loudly instead of silently
doing nothing), the value it writes, and why. `MISSING` means "the key must be absent" as an
old value, or "remove the key" as a new one.

Format keywords are not patched here: `--type-mappings string+byte=string string+uri=string`
in `generate.py` keeps `format: byte` / `format: uri` plain strings (dcg's `Base64Str` decodes
real image data and fails on it; `AnyUrl` rewrites URLs, so a round trip changes the bytes).
Unknown keys are kept by `--extra-fields allow` (`ignore` silently strips whole `inputSchema`s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

MISSING: Final[Any] = object()

OLD_VERSIONS: Final = ("2024-11-05", "2025-03-26")
BLOCK_VERSIONS: Final = ("2025-06-18", "2025-11-25", "2026-07-28", "draft")
META_OBJECT_VERSIONS: Final = ("2026-07-28", "draft")


@dataclass(frozen=True)
class Patch:
    """One recorded edit of a pruned schema (see the module docstring)."""

    versions: tuple[str, ...]
    pointer: str
    old: Any
    new: Any
    why: str


PATCHES: Final[tuple[Patch, ...]] = (
    Patch(
        versions=BLOCK_VERSIONS,
        pointer="/{defs}/ContentBlock/discriminator",
        old=MISSING,
        new={"propertyName": "type"},
        why=(
            "Every content block has a `type` const; without a discriminator pydantic tries every"
            " arm of the union (2.7x slower, 40-line errors). Drop if the spec adds one."
        ),
    ),
    Patch(
        versions=OLD_VERSIONS,
        pointer="/{defs}/CallToolResult/properties/content/items/discriminator",
        old=MISSING,
        new={"propertyName": "type"},
        why="Same as ContentBlock: these versions inline the content-block union.",
    ),
    Patch(
        versions=META_OBJECT_VERSIONS,
        pointer="/{defs}/MetaObject/additionalProperties",
        old=MISSING,
        new={},
        why=(
            "`_meta` is an open mapping of namespaced keys; a bare `type: object` makes dcg emit"
            " an empty model class instead of `dict[str, Any]`."
        ),
    ),
    Patch(
        versions=META_OBJECT_VERSIONS,
        pointer="/{defs}/ResultMetaObject/properties/io.modelcontextprotocol~1serverInfo/$ref",
        old="#/$defs/Implementation",
        new=MISSING,
        why=(
            "The serverInfo stamp is self-reported and display-only (the schema's own words:"
            " clients SHOULD NOT change behaviour on it); a malformed stamp must not fail a"
            " whole result, so it is typed as any JSON value."
        ),
    ),
)
