"""Schema patches applied before datamodel-code-generator runs: data, not code.

Each patch names the spec versions it applies to, a JSON Pointer into the pruned schema
(RFC 6901; `{defs}` stands for `definitions` or `$defs`), the value it expects to find there
(checked: a patch whose old value moved stops the generator with `PatchMismatch` instead of
silently doing nothing), the value it writes, why, and when it can be dropped. `MISSING` means
"the key must be absent" as an old value, or "remove the key" as a new one. How to drop a patch:
schema/README.md.

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
    """One recorded edit of a pruned schema (see the module docstring).

    `versions`: the spec versions it applies to; `pointer`: RFC 6901 pointer, `{defs}` for the
    definitions key; `old` / `new`: the value expected and the value written (`MISSING` = absent /
    remove); `why`: the reason; `drop_when`: the condition under which the patch can go (a new
    version that meets it is pinned without the patch in its `versions`).
    """

    versions: tuple[str, ...]
    pointer: str
    old: Any
    new: Any
    why: str
    drop_when: str


PATCHES: Final[tuple[Patch, ...]] = (
    Patch(
        versions=BLOCK_VERSIONS,
        pointer="/{defs}/ContentBlock/discriminator",
        old=MISSING,
        new={"propertyName": "type"},
        why=(
            "Every content block has a `type` const; without a discriminator pydantic tries every"
            " arm of the union (2.7x slower, 40-line errors)."
        ),
        drop_when=(
            "the spec's ContentBlock carries a discriminator itself (the generator then stops with"
            " PatchMismatch: found a value where the patch expects none)."
        ),
    ),
    Patch(
        versions=OLD_VERSIONS,
        pointer="/{defs}/CallToolResult/properties/content/items/discriminator",
        old=MISSING,
        new={"propertyName": "type"},
        why="Same as ContentBlock: these versions inline the content-block union.",
        drop_when=(
            "never for these two frozen revisions; the patch goes when they leave"
            " schema/PINNED.json."
        ),
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
        drop_when=(
            "MetaObject declares `additionalProperties` itself, or datamodel-code-generator maps"
            " a bare `type: object` to `dict[str, Any]` (check: drop it, regenerate, MetaObject"
            " fields stay `dict[str, Any]`)."
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
        drop_when=(
            "the schema itself types the serverInfo stamp as an open value, or the stamp becomes"
            " normative (then it should be validated and the patch removed on purpose)."
        ),
    ),
)
