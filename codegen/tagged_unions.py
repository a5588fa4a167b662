"""Tagged unions, found from each schema's own shape: no table of names, so a rename keeps its tag.

Every union of definitions in a pruned schema (an `anyOf` whose arms are all `$ref`s to object
definitions: a definition of its own like `ContentBlock`, a member like
`EmbeddedResource.resource`, or a member's `items`) is read for what tells its arms apart:

- `const`: every arm requires one member holding a `const` string, a different one per arm
  (`ContentBlock` and `SamplingMessageContentBlock` by `type`, `InputRequest` by `method`, the
  inline content blocks of 2024-11-05 / 2025-03-26). The generator writes a JSON Schema
  `discriminator` on the union, which datamodel-code-generator turns into
  `Field(discriminator=...)`: pydantic tries only the arm the tag names (2.7x faster, short
  errors).
- `member`: one member present in every arm with `const` / `enum` string values, where several
  arms may share a value (they then form one choice, a plain union among themselves) and at most
  one arm leaves the member optional (a value without it goes there): `PrimitiveSchemaDefinition`
  by `type` (`string` and `array` each have several open arms), `ElicitRequestParams` by `mode`
  (`url` required there; the form arm has `mode` optional). Written by postprocess.tag_unions as
  a callable `Discriminator` (`MemberTag` in conduit_mcp_wire._base).
- `present`: open objects with the same members but for one required string member each (an
  embedded resource's `text` / `blob` contents): the first such member present names the arm
  (`PresentTag`), which then accepts whenever any arm does.

A `member` or `present` choice also has an `"other"` arm holding the whole union, so a value no tag
names is read as the schema's `anyOf` would. A union none of these fits stays a plain union
(`ToolsCallResult`'s arms at 2026-07-28 differ by `resultType`, a plain string in both).

`derive` is given the previous version's unions: a union that was tagged there and continues in
this version (the same name, or the same arms under another name) but can no longer be tagged
stops the generator (`TaggingError`, naming the union's JSON Pointer and the reason), so a spec
change can never silently turn a tagged union into a plain one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal


class TaggingError(Exception):
    """A union tagged in the previous version can no longer be tagged (message: one line)."""


@dataclass(frozen=True)
class Rewrite:
    """How postprocess.tag_unions writes one `member` / `present` union into a module.

    `alias`: the type alias name (a union definition), or None for a member (`owner`, `prop`);
    `arms`: every arm of the union, in the schema's order; `choices`: tag -> the arms it reads;
    `discriminator`: the Python expression of the callable.
    """

    alias: str | None
    owner: str | None
    prop: str | None
    arms: tuple[str, ...]
    choices: tuple[tuple[str, tuple[str, ...]], ...]
    discriminator: str


@dataclass(frozen=True)
class Site:
    """Where a union of definitions sits: `pointer` into the pruned schema (RFC 6901), its
    `name` (`ContentBlock`, `EmbeddedResource.resource`, `CallToolResult.content[]`), and
    `arms` (definition names, in the schema's order)."""

    pointer: str
    name: str
    alias: str | None
    owner: str | None
    prop: str | None
    items: bool
    arms: tuple[str, ...]


@dataclass(frozen=True)
class Tagged:
    """One union and how it is tagged: `kind` `const` (by `member`, a schema `discriminator`),
    `member` or `present` (by `members`, written as `rewrite`)."""

    site: Site
    kind: Literal["const", "member", "present"]
    members: tuple[str, ...]
    rewrite: Rewrite | None

    def describe(self) -> str:
        """`/$defs/ContentBlock: by type (const)`: one line for a module header."""
        return f"{self.site.pointer}: by {', '.join(self.members)} ({self.kind})"


class _NotTagged(Exception):
    """Why one union cannot be tagged (internal: the reason a `TaggingError` gives)."""


def _ref_name(node: Any, prefix: str) -> str | None:
    ref = node.get("$ref") if isinstance(node, dict) else None
    if isinstance(ref, str) and ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
        return ref[len(prefix) :]
    return None


def _union_arms(node: Any, defs: dict[str, Any], prefix: str) -> tuple[str, ...] | None:
    """The arms of a plain `anyOf` of `$ref`s to object definitions, else None."""
    if not isinstance(node, dict) or set(node) - {"anyOf", "description", "discriminator"}:
        return None
    arms = node.get("anyOf")
    if not isinstance(arms, list) or len(arms) < 2:
        return None
    names = tuple(_ref_name(arm, prefix) for arm in arms)
    if any(name is None or not _is_object(defs.get(name)) for name in names):
        return None
    return names  # type: ignore[return-value]


def _is_object(schema: Any) -> bool:
    return isinstance(schema, dict) and (
        schema.get("type") == "object" or isinstance(schema.get("properties"), dict)
    )


def sites(defs: dict[str, Any], key: str) -> list[Site]:
    """Every union of definitions in `defs` (the pruned `$defs` / `definitions`), in file order."""
    prefix = f"#/{key}/"
    found = []
    for name, schema in defs.items():
        arms = _union_arms(schema, defs, prefix)
        if arms is not None:
            found.append(Site(f"/{key}/{name}", name, name, None, None, False, arms))
            continue
        properties = schema.get("properties") if isinstance(schema, dict) else None
        for prop, member in (properties or {}).items():
            where = f"/{key}/{name}/properties/{_escape(prop)}"
            arms = _union_arms(member, defs, prefix)
            if arms is not None:
                found.append(Site(where, f"{name}.{prop}", None, name, prop, False, arms))
                continue
            arms = _union_arms(
                member.get("items") if isinstance(member, dict) else None, defs, prefix
            )
            if arms is not None:
                site = Site(f"{where}/items", f"{name}.{prop}[]", None, name, prop, True, arms)
                found.append(site)
    return found


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _const_member(site: Site, defs: dict[str, Any]) -> str | None:
    """The member every arm requires with its own `const` string, if there is one."""
    first = defs[site.arms[0]]
    for member in first.get("properties", {}):
        values = []
        for arm in site.arms:
            schema = defs[arm]
            held = schema.get("properties", {}).get(member)
            if member not in schema.get("required", []) or not isinstance(held, dict):
                break
            if not isinstance(held.get("const"), str):
                break
            values.append(held["const"])
        else:
            if len(set(values)) == len(values):
                return str(member)
    return None


def _values(member: Any) -> list[str] | None:
    if not isinstance(member, dict) or member.get("type") != "string":
        return None
    if isinstance(member.get("const"), str):
        return [member["const"]]
    enum = member.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return list(enum)
    return None


def _member_rewrite(site: Site, defs: dict[str, Any]) -> tuple[str, Rewrite]:
    """The `member` tagging of a union, or `_NotTagged` with the reason."""
    candidates = []
    for member in defs[site.arms[0]].get("properties", {}):
        if all(_values(defs[arm].get("properties", {}).get(member)) for arm in site.arms):
            optional = sum(member not in defs[arm].get("required", []) for arm in site.arms)
            candidates.append((optional, str(member)))
    if not candidates:
        raise _NotTagged("no member with const or enum string values in every arm")
    optional, member = min(candidates)
    if optional > 1:
        raise _NotTagged(f"more than one arm leaves {member} optional")
    by_value: dict[str, list[str]] = {}
    absent: list[str] = []
    for arm in site.arms:
        schema = defs[arm]
        for value in _values(schema["properties"][member]) or []:
            by_value.setdefault(value, []).append(arm)
        if member not in schema.get("required", []):
            absent.append(arm)
    # Values read by the same arms share one choice, named by its first value.
    choices: dict[tuple[str, ...], str] = {}
    tags: dict[str, str] = {}
    for value, value_arms in by_value.items():
        tags[value] = choices.setdefault(tuple(value_arms), value)
    absent_tag = None
    if absent:
        absent_tag = choices.setdefault(tuple(absent), f"no {member}")
    if len(choices) < 2:
        raise _NotTagged(f"{member} tells no arm from another")
    ordered = tuple((tag, group) for group, tag in choices.items())
    absent_text = "None" if absent_tag is None else json.dumps(absent_tag)
    discriminator = f"MemberTag({json.dumps(member)}, {json.dumps(tags)}, absent={absent_text})"
    rewrite = Rewrite(site.alias, site.owner, site.prop, site.arms, ordered, discriminator)
    return member, rewrite


def _present_rewrite(site: Site, defs: dict[str, Any]) -> tuple[tuple[str, ...], Rewrite]:
    """The `present` tagging of a union, or `_NotTagged` with the reason."""
    required = [set(defs[arm].get("required", [])) for arm in site.arms]
    common = set.intersection(*required)
    members: list[str] = []
    shared: list[dict[str, Any]] = []
    for arm, own in zip(site.arms, required, strict=True):
        schema = defs[arm]
        if len(own - common) != 1:
            raise _NotTagged(f"{arm} does not require exactly one member of its own")
        (member,) = own - common
        properties = dict(schema.get("properties", {}))
        if properties.pop(member, {}).get("type") != "string":
            raise _NotTagged(f"{arm}.{member} is not a string member")
        if "additionalProperties" in schema:
            raise _NotTagged(f"{arm} is not an open object")
        members.append(member)
        shared.append({"properties": properties, "required": sorted(own - {member})})
    for entry in shared:
        if set(entry["properties"]) & set(members):
            raise _NotTagged("an arm holds another arm's own member")
        entry["properties"] = _undescribed(entry["properties"])
    if any(entry != shared[0] for entry in shared):
        raise _NotTagged(f"the arms differ beyond {', '.join(members)}")
    quoted = ", ".join(json.dumps(member) for member in members)
    choices = tuple((member, (arm,)) for arm, member in zip(site.arms, members, strict=True))
    rewrite = Rewrite(
        site.alias, site.owner, site.prop, site.arms, choices, f"PresentTag({quoted})"
    )
    return tuple(members), rewrite


def _undescribed(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _undescribed(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_undescribed(v) for v in node]
    return node


def classify(site: Site, defs: dict[str, Any]) -> Tagged:
    """How one union is tagged (see the module docstring).

    Raises:
        _NotTagged: none of the three fits; the message says why the last one tried does not.
    """
    member = _const_member(site, defs)
    if member is not None:
        return Tagged(site, "const", (member,), None)
    if site.items:
        raise _NotTagged("a union in an array's items is tagged only by a const member")
    reasons = []
    try:
        tag, rewrite = _member_rewrite(site, defs)
        return Tagged(site, "member", (tag,), rewrite)
    except _NotTagged as exc:
        reasons.append(f"by a member: {exc}")
    try:
        members, rewrite = _present_rewrite(site, defs)
        return Tagged(site, "present", members, rewrite)
    except _NotTagged as exc:
        reasons.append(f"by a present member: {exc}")
    raise _NotTagged("; ".join(reasons))


def derive(
    defs: dict[str, Any], key: str, previous: list[Tagged] | tuple[Tagged, ...] = ()
) -> list[Tagged]:
    """Every tagged union of one version's pruned definitions, in file order.

    Args:
        defs: the pruned `$defs` / `definitions`.
        key: `"$defs"` or `"definitions"`.
        previous: the tagged unions of the previous version in the registry (none for the
            first).

    Raises:
        TaggingError: a union tagged in `previous` continues here (by name, or by its arms
            under another name) but can no longer be tagged; the message names its pointer,
            the previous tagging and the reason.
    """
    found: list[Tagged] = []
    untagged: dict[Site, str] = {}
    every = sites(defs, key)
    for site in every:
        try:
            found.append(classify(site, defs))
        except _NotTagged as exc:
            untagged[site] = str(exc)
    for before in previous:
        site = _continuation(before.site, every, defs, key)
        if site is not None and site in untagged:
            raise TaggingError(
                f"{site.pointer}: tagged in the previous version ({before.describe()});"
                f" here its arms cannot be told apart: {untagged[site]}"
            )
        if site is None and _still_a_union(before.site, defs):
            raise TaggingError(
                f"{before.site.pointer}: {before.site.name} was a tagged union in the previous"
                f" version ({before.describe()}); here it is no union of definitions"
            )
    return found


def _continuation(before: Site, every: list[Site], defs: dict[str, Any], key: str) -> Site | None:
    """The union of this version that `before` (a union of the previous one) became: the same
    name; else the same arms under another name; else a union holding all its arms; else the
    union definition its member now refers to."""
    for same in (
        lambda s: s.name == before.name,
        lambda s: set(s.arms) == set(before.arms),
        lambda s: set(s.arms) > set(before.arms),
    ):
        for site in every:
            if same(site):
                return site
    if before.owner is not None:
        held = defs.get(before.owner, {}).get("properties", {}).get(before.prop)
        if isinstance(held, dict) and before.items:
            held = held.get("items")
        target = _ref_name(held, f"#/{key}/")
        for site in every:
            if target is not None and site.alias == target:
                return site
    return None


def _still_a_union(before: Site, defs: dict[str, Any]) -> bool:
    """Whether the place that held `before` still holds a union, in a form not read here."""
    if before.alias is not None:
        node = defs.get(before.alias)
    else:
        node = defs.get(before.owner or "", {}).get("properties", {}).get(before.prop)
        if isinstance(node, dict) and before.items:
            node = node.get("items")
    return isinstance(node, dict) and ("anyOf" in node or "oneOf" in node)
