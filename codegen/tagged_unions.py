"""Unions the schema tags without a single `const` per arm: data, checked against each schema.

A JSON Schema `discriminator` (patches.py) fits a union whose every arm holds one `const` in a
required member. These unions are tagged too, but not that way, so a pydantic callable
`Discriminator` (`MemberTag` / `PresentTag` in conduit_mcp_wire._base) picks the arm; every
choice also has an `"other"` arm holding the whole union, so a value no tag names is read as the
schema's `anyOf` would. `derive` computes the tags from the pruned schema and refuses (raises
`TaggingError`) when the schema no longer supports them, so a spec bump cannot silently make a
tag lie.

- `MemberTagged`: the arms tell themselves apart by one member's `const` / `enum` values; several
  arms may share a value (they then form one choice, a plain union), and at most one arm may
  leave the member optional (a value without it goes there).
- `PresentTagged`: a member holding a union of open objects that differ only in which required
  string member they hold (a resource's `text` or `blob`): the first such member present names
  the arm, which then accepts whenever any arm does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final


class TaggingError(Exception):
    """The schema no longer supports a recorded tagging."""


@dataclass(frozen=True)
class MemberTagged:
    """A union definition (`$defs` name) tagged by the values of `member` in its arms."""

    union: str
    member: str
    why: str


@dataclass(frozen=True)
class PresentTagged:
    """The union in `owner`'s property `prop`, tagged by which of `members` is present."""

    owner: str
    prop: str
    members: tuple[str, ...]
    why: str


TAGGED: Final[tuple[MemberTagged | PresentTagged, ...]] = (
    MemberTagged(
        union="PrimitiveSchemaDefinition",
        member="type",
        why=(
            "Every arm requires `type` with a const or enum: `number` / `integer` is a"
            " NumberSchema, `boolean` a BooleanSchema; `string` and `array` each have several"
            " open arms (read as a plain union among themselves)."
        ),
    ),
    MemberTagged(
        union="ElicitRequestParams",
        member="mode",
        why=(
            "`mode: url` is the URL form (where it is required); the form arm has `mode: form`"
            " optional, so a request without `mode` is a form request."
        ),
    ),
    PresentTagged(
        owner="EmbeddedResource",
        prop="resource",
        members=("text", "blob"),
        why=(
            "Text and blob contents are open objects with the same members but the required"
            " `text` / `blob` string."
        ),
    ),
)


@dataclass(frozen=True)
class Rewrite:
    """How postprocess.tag_unions writes one tagged union into a module.

    `alias`: the type alias name (MemberTagged), or None for a property (`owner`, `prop`);
    `arms`: every arm of the union, in the schema's order; `choices`: tag -> the arms it reads;
    `discriminator`: the Python expression of the callable.
    """

    alias: str | None
    owner: str | None
    prop: str | None
    arms: tuple[str, ...]
    choices: tuple[tuple[str, tuple[str, ...]], ...]
    discriminator: str


def _ref_name(node: Any) -> str:
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str):
        raise TaggingError(f"an arm that is not a $ref: {node!r}")
    return ref.rsplit("/", 1)[1]


def _arms(union: Any, where: str) -> list[str]:
    if not isinstance(union, dict) or set(union) - {"anyOf", "description"}:
        raise TaggingError(f"{where}: not a plain anyOf")
    return [_ref_name(arm) for arm in union["anyOf"]]


def _values(member: Any, where: str) -> list[str]:
    if not isinstance(member, dict) or member.get("type") != "string":
        raise TaggingError(f"{where}: the tag member is not a string")
    if "const" in member:
        return [member["const"]]
    if isinstance(member.get("enum"), list):
        return list(member["enum"])
    raise TaggingError(f"{where}: the tag member has no const or enum")


def _member_rewrite(item: MemberTagged, defs: dict[str, Any]) -> Rewrite:
    arms = _arms(defs[item.union], item.union)
    by_value: dict[str, list[str]] = {}
    absent: list[str] = []
    for arm in arms:
        schema = defs[arm]
        where = f"{item.union}/{arm}"
        values = _values(schema.get("properties", {}).get(item.member), where)
        for value in values:
            by_value.setdefault(value, []).append(arm)
        if item.member not in schema.get("required", []):
            absent.append(arm)
    if len(absent) > 1:
        raise TaggingError(f"{item.union}: more than one arm leaves {item.member} optional")
    # Values read by the same arms share one choice, named by its first value.
    choices: dict[tuple[str, ...], str] = {}
    tags: dict[str, str] = {}
    for value, value_arms in by_value.items():
        tags[value] = choices.setdefault(tuple(value_arms), value)
    absent_tag = None
    if absent:
        absent_tag = choices.setdefault(tuple(absent), f"no {item.member}")
    ordered = tuple((tag, group) for group, tag in choices.items())
    absent_text = "None" if absent_tag is None else json.dumps(absent_tag)
    discriminator = (
        f"MemberTag({json.dumps(item.member)}, {json.dumps(tags)}, absent={absent_text})"
    )
    return Rewrite(item.union, None, None, tuple(arms), ordered, discriminator)


def _present_rewrite(item: PresentTagged, defs: dict[str, Any]) -> Rewrite:
    owner = defs[item.owner]
    where = f"{item.owner}/{item.prop}"
    arms = _arms(owner.get("properties", {}).get(item.prop), where)
    if len(arms) != len(item.members):
        raise TaggingError(f"{where}: {len(arms)} arms for {len(item.members)} members")
    shared: list[dict[str, Any]] = []
    for arm, member in zip(arms, item.members, strict=True):
        schema = defs[arm]
        properties = dict(schema.get("properties", {}))
        if properties.pop(member, {}).get("type") != "string":
            raise TaggingError(f"{where}/{arm}: {member} is not a string member")
        if member not in schema.get("required", []):
            raise TaggingError(f"{where}/{arm}: {member} is not required")
        if "additionalProperties" in schema or set(properties) & set(item.members):
            raise TaggingError(f"{where}/{arm}: not an open object holding only its own member")
        required = sorted(set(schema.get("required", [])) - {member})
        shared.append({"properties": _undescribed(properties), "required": required})
    if any(entry != shared[0] for entry in shared):
        raise TaggingError(f"{where}: the arms differ beyond {', '.join(item.members)}")
    members = ", ".join(json.dumps(member) for member in item.members)
    choices = tuple((member, (arm,)) for arm, member in zip(arms, item.members, strict=True))
    return Rewrite(None, item.owner, item.prop, tuple(arms), choices, f"PresentTag({members})")


def _undescribed(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _undescribed(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_undescribed(v) for v in node]
    return node


def derive(defs: dict[str, Any]) -> list[Rewrite]:
    """The rewrites of every entry of `TAGGED` present in one version's pruned definitions.

    Raises:
        TaggingError: the schema no longer supports an entry's tags (see the module docstring).
    """
    rewrites = []
    for item in TAGGED:
        if isinstance(item, MemberTagged):
            if item.union in defs:
                rewrites.append(_member_rewrite(item, defs))
        elif item.owner in defs:
            rewrites.append(_present_rewrite(item, defs))
    return rewrites
