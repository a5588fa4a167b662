"""Schema patches applied before datamodel-code-generator runs: data, not code.

Each patch names the range of pinned spec versions it applies to (`since` .. `until`, both
inclusive, in schema/PINNED.json's order; `until=None` means every later pin, so a new version
inherits the patch and the generator says at once whether it still fits), a JSON Pointer into
the pruned schema (RFC 6901; `{defs}` stands for `definitions` or `$defs`), the value it expects
to find there (checked: a patch whose old value moved stops the generator with `PatchMismatch`
instead of silently doing nothing), the value it writes, why, and when it can be dropped.
`MISSING` means "the key must be absent" as an old value, or "remove the key" as a new one. How
to drop a patch: schema/README.md.

Format keywords are not patched here: `--type-mappings string+byte=string string+uri=string`
in `generate.py` keeps `format: byte` / `format: uri` plain strings (dcg's `Base64Str` decodes
real image data and fails on it; `AnyUrl` rewrites URLs, so a round trip changes the bytes).
Unknown keys are kept by `--extra-fields allow` (`ignore` silently strips whole `inputSchema`s).
Tagged unions are not patched here either: codegen/tagged_unions.py finds them from each
schema's shape (so a renamed union keeps its tag).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

MISSING: Final[Any] = object()


@dataclass(frozen=True)
class Patch:
    """One recorded edit of a pruned schema (see the module docstring).

    `since` / `until`: the first and last pinned version it applies to (inclusive; `until=None`:
    every later pin, "draft" included); `pointer`: RFC 6901 pointer, `{defs}` for the
    definitions key; `old` / `new`: the value expected and the value written (`MISSING` = absent /
    remove); `why`: the reason; `drop_when`: the condition under which the patch can go (then set
    `until` to the last version that still needs it, or delete the patch).
    """

    since: str
    pointer: str
    old: Any
    new: Any
    why: str
    drop_when: str
    until: str | None = None

    def applies_to(self, version: str, order: tuple[str, ...]) -> bool:
        """Whether `version` lies in `since` .. `until` of `order` (the registry, oldest first).

        Raises:
            ValueError: `since`, `until` or `version` is not in `order` (a pin was dropped under
                the patch: move its bound, see schema/README.md).
        """
        for bound in (self.since, self.until, version):
            if bound is not None and bound not in order:
                raise ValueError(f"patch {self.pointer}: version {bound!r} is not pinned")
        last = len(order) - 1 if self.until is None else order.index(self.until)
        return order.index(self.since) <= order.index(version) <= last


PATCHES: Final[tuple[Patch, ...]] = (
    Patch(
        since="2026-07-28",
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
        since="2026-07-28",
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
