"""What changed between two versions of the MCP schema, and what a person still decides about it.

`diff(old, new)` compares two official schemas structurally: definitions added, removed and
renamed (a removed and an added definition of the same shape: the likely predecessor), new and
dropped arms of unions, enum values added and dropped, members added, removed (and likely
renamed), retyped, and members that became required. `checklist(changes)` turns that into the
lines `make bump` ends with, each saying where the decision is made:

- a new content block type (an arm of the union `CallToolResult.content` holds) reaches
  `shape_for_llm` as "[content block omitted: unsupported type ...]" until llm/_shape.py handles
  it or lists it as omitted on purpose (tests/llm/test_block_types.py fails until then);
- a new answer to tools/call (an arm of `CallToolResultResponse.result`) is read by
  client/_dispatch.py;
- a member removed from, renamed on, or newly required by `Tool` or `CallToolResult` (what the
  client reads off the wire) is marked `!!` and listed first, with the modules that read it
  (SEP-3279 would replace `outputSchema` by `outputVariants`, `content` + `structuredContent`
  by `outputs`).

Everything here is read from the two schemas alone; nothing is guessed from names except the
rename pairing, which is by shape and says "likely".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "conduit_mcp"

#: The definitions the client reads off the wire itself: a change to their members is loud.
WIRE_CORE = ("Tool", "CallToolResult")

#: How alike two definitions must be (Jaccard over their shape features) to pair as a rename.
RENAME_SIMILARITY = 0.6


@dataclass(frozen=True)
class Change:
    """One structural change. `kind`: what changed; `pointer`: where, in the new schema (the old
    one for what was removed); `subject`: the definition (and member); `detail`: the rest."""

    kind: str
    pointer: str
    subject: str
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _defs(schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    key = "$defs" if "$defs" in schema else "definitions"
    defs = schema.get(key)
    return key, defs if isinstance(defs, dict) else {}


def _esc(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _ref(node: Any) -> str | None:
    ref = node.get("$ref") if isinstance(node, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _features(node: Any, renames: dict[str, str], prefix: str = "") -> set[str]:
    """The shape of a schema node as a set of strings (descriptions and titles left out; a
    `$ref` to a renamed definition read as its new name)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "title", "$comment", "examples"):
                continue
            if key == "$ref" and isinstance(value, str):
                name = value.rsplit("/", 1)[-1]
                found.add(f"{prefix}$ref={renames.get(name, name)}")
            elif key in ("required", "enum") and isinstance(value, list):
                found.update(f"{prefix}{key}={json.dumps(v)}" for v in value)
            elif isinstance(value, (dict, list)):
                found.add(f"{prefix}{key}")
                found |= _features(value, renames, f"{prefix}{key}/")
            else:
                found.add(f"{prefix}{key}={json.dumps(value)}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found |= _features(value, renames, f"{prefix}{index}/")
    return found


def _similarity(a: set[str], b: set[str]) -> float:
    """Jaccard similarity; 0 when a `const` at the same place differs (a wire tag such as a
    `method` or a block `type` is what a message is, so a different one is another message)."""
    consts_a = dict(f.split("const=", 1) for f in a if "const=" in f)
    consts_b = dict(f.split("const=", 1) for f in b if "const=" in f)
    if any(consts_b.get(path, value) != value for path, value in consts_a.items()):
        return 0.0
    return len(a & b) / len(a | b) if a | b else 1.0


def renames(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[str, float]]:
    """Removed definition -> (the added one of the most alike shape, similarity), for the pairs
    that are each other's best match and at least `RENAME_SIMILARITY` alike."""
    _, old_defs = _defs(old)
    _, new_defs = _defs(new)
    removed = [n for n in old_defs if n not in new_defs]
    added = [n for n in new_defs if n not in old_defs]
    if not removed or not added:
        return {}
    scores: dict[tuple[str, str], float] = {}
    for r in removed:
        for a in added:
            mapping = {r: a}
            scores[(r, a)] = _similarity(
                _features(old_defs[r], mapping), _features(new_defs[a], mapping)
            )
    paired: dict[str, tuple[str, float]] = {}
    for r in removed:
        best = max(added, key=lambda a: scores[(r, a)])
        back = max(removed, key=lambda x: scores[(x, best)])
        if back == r and scores[(r, best)] >= RENAME_SIMILARITY:
            paired[r] = (best, scores[(r, best)])
    return paired


def _union_arms(node: Any) -> list[str] | None:
    if not isinstance(node, dict):
        return None
    arms = node.get("anyOf") or node.get("oneOf")
    if not isinstance(arms, list):
        return None
    names = [_ref(arm) for arm in arms]
    return [n for n in names if n is not None] or None


def _unions(defs: dict[str, Any], key: str) -> dict[str, tuple[str, list[str]]]:
    """name (`ContentBlock`, `EmbeddedResource.resource`, `CallToolResult.content[]`) ->
    (pointer, arms) of every union that has `$ref` arms."""
    found: dict[str, tuple[str, list[str]]] = {}
    for name, schema in defs.items():
        arms = _union_arms(schema)
        if arms:
            found[name] = (f"/{key}/{_esc(name)}", arms)
        properties = schema.get("properties") if isinstance(schema, dict) else None
        for prop, member in (properties or {}).items() if isinstance(properties, dict) else ():
            where = f"/{key}/{_esc(name)}/properties/{_esc(prop)}"
            arms = _union_arms(member)
            if arms:
                found[f"{name}.{prop}"] = (where, arms)
            items = member.get("items") if isinstance(member, dict) else None
            arms = _union_arms(items)
            if arms:
                found[f"{name}.{prop}[]"] = (f"{where}/items", arms)
    return found


def _enums(node: Any, parts: list[str]) -> dict[str, list[Any]]:
    """Relative pointer -> enum values of every `enum` inside one definition."""
    found: dict[str, list[Any]] = {}
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            found["".join("/" + _esc(p) for p in parts)] = node["enum"]
        for key, value in node.items():
            if key != "enum":
                found.update(_enums(value, [*parts, key]))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.update(_enums(value, [*parts, str(index)]))
    return found


def _type_of(member: Any) -> str:
    if not isinstance(member, dict):
        return "?"
    if "$ref" in member:
        return str(_ref(member))
    kind = member.get("type")
    if kind == "array":
        return f"array of {_type_of(member.get('items'))}"
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind is None and (member.get("anyOf") or member.get("oneOf")):
        return "union"
    return str(kind) if kind is not None else "any"


def content_union(defs: dict[str, Any]) -> str | None:
    """The union name `CallToolResult.content` holds (`ContentBlock`, or the inline
    `CallToolResult.content[]`)."""
    content = defs.get("CallToolResult", {}).get("properties", {}).get("content")
    items = content.get("items") if isinstance(content, dict) else None
    if _ref(items):
        return _ref(items)
    return "CallToolResult.content[]" if _union_arms(items) else None


def _const(defs: dict[str, Any], name: str, member: str) -> str | None:
    held = defs.get(name, {}).get("properties", {}).get(member)
    value = held.get("const") if isinstance(held, dict) else None
    return value if isinstance(value, str) else None


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every structural change from schema `old` to schema `new` (see the module docstring)."""
    old_key, old_defs = _defs(old)
    key, new_defs = _defs(new)
    paired = renames(old, new)
    renamed_to = {r: a for r, (a, _) in paired.items()}
    changes: list[Change] = []
    for name, (target, score) in paired.items():
        changes.append(
            Change(
                "renamed",
                f"/{key}/{_esc(target)}",
                target,
                f"{score:.0%} alike in shape",
                {"old": name},
            )
        )
    for name in old_defs:
        if name not in new_defs and name not in renamed_to:
            changes.append(Change("removed", f"/{old_key}/{_esc(name)}", name))
    for name in new_defs:
        if name not in old_defs and name not in renamed_to.values():
            changes.append(Change("added", f"/{key}/{_esc(name)}", name))

    # Unions: arms compared by name, a renamed arm by its new name.
    old_unions = _unions(old_defs, old_key)
    new_unions = _unions(new_defs, key)
    content = content_union(new_defs)
    old_content = content_union(old_defs)
    for name, (where, arms) in new_unions.items():
        before_name = next((r for r, a in renamed_to.items() if name.split(".")[0] == a), None)
        if before_name is not None:
            before_name = before_name + name[len(name.split(".")[0]) :]
        if name == content and old_content:
            before_name = old_content  # the content blocks, whatever the union is called
        before = old_unions.get(name) or old_unions.get(before_name or "")
        if before is None:
            continue
        old_arms = [renamed_to.get(a, a) for a in before[1]]
        for index, arm in enumerate(arms):
            if arm not in old_arms:
                kind = "union_arm"
                if name == content:
                    kind = "content_block"
                elif name == "CallToolResultResponse.result":
                    kind = "result_type"
                tag = _const(new_defs, arm, "type")
                changes.append(
                    Change(kind, f"{where}/anyOf/{index}", name, arm, {"arm": arm, "type": tag})
                )
        for arm in old_arms:
            if arm not in arms:
                kind = "union_arm_removed"
                if name == content:
                    kind = "content_block_removed"
                elif name == "CallToolResultResponse.result":
                    kind = "result_type_removed"
                changes.append(Change(kind, where, name, arm, {"arm": arm}))

    # Members, required members, enums of the definitions both have (a renamed one by its pair).
    for old_name, old_schema in old_defs.items():
        name = renamed_to.get(old_name, old_name)
        schema = new_defs.get(name)
        if not isinstance(schema, dict) or not isinstance(old_schema, dict):
            continue
        base = f"/{key}/{_esc(name)}"
        old_props = old_schema.get("properties") or {}
        props = schema.get("properties") or {}
        old_required = set(old_schema.get("required") or [])
        required = set(schema.get("required") or [])
        gone = [m for m in old_props if m not in props]
        new_members = [m for m in props if m not in old_props]
        member_renames: dict[str, str] = {}
        for m in gone:
            alike = [
                n
                for n in new_members
                if n not in member_renames.values()
                and _features(old_props[m], renamed_to) == _features(props[n], renamed_to)
            ]
            if len(alike) == 1:
                member_renames[m] = alike[0]
        for m in gone:
            if m in member_renames:
                n = member_renames[m]
                changes.append(
                    Change(
                        "member_renamed",
                        f"{base}/properties/{_esc(n)}",
                        f"{name}.{n}",
                        f"likely the former {m} (same schema)",
                        {"definition": name, "member": n, "old": m},
                    )
                )
            else:
                changes.append(
                    Change(
                        "member_removed",
                        f"/{old_key}/{_esc(old_name)}/properties/{_esc(m)}",
                        f"{name}.{m}",
                        "",
                        {"definition": name, "member": m},
                    )
                )
        for m in new_members:
            if m in member_renames.values():
                continue
            changes.append(
                Change(
                    "member_added",
                    f"{base}/properties/{_esc(m)}",
                    f"{name}.{m}",
                    ("required" if m in required else "optional") + f", {_type_of(props[m])}",
                    {"definition": name, "member": m, "required": m in required},
                )
            )
        for m in props:
            if m in old_props and _type_of(old_props[m]) != _type_of(props[m]):
                old_type = _type_of(old_props[m])
                old_type = renamed_to.get(old_type, old_type)
                if old_type != _type_of(props[m]):
                    changes.append(
                        Change(
                            "member_retyped",
                            f"{base}/properties/{_esc(m)}",
                            f"{name}.{m}",
                            f"{old_type} -> {_type_of(props[m])}",
                            {"definition": name, "member": m},
                        )
                    )
        for m in sorted(required - old_required):
            if m in old_props or m in member_renames.values():
                changes.append(
                    Change(
                        "now_required",
                        f"{base}/required",
                        f"{name}.{m}",
                        "",
                        {"definition": name, "member": m},
                    )
                )
        for m in sorted(old_required - required):
            if m in props:
                changes.append(
                    Change("now_optional", f"{base}/required", f"{name}.{m}", "", {"member": m})
                )
        old_enums = _enums(old_schema, [])
        for where, values in _enums(schema, []).items():
            before = old_enums.get(where)
            if before is None:
                continue
            for value in values:
                if value not in before:
                    changes.append(
                        Change("enum_added", f"{base}{where}/enum", name, json.dumps(value))
                    )
            for value in before:
                if value not in values:
                    changes.append(
                        Change("enum_removed", f"{base}{where}/enum", name, json.dumps(value))
                    )
    return changes


def readers(wire_name: str) -> list[str]:
    """The modules of src/conduit_mcp that spell `wire_name` as a string (who reads it)."""
    pattern = re.compile(r"[\"']" + re.escape(wire_name) + r"[\"']")
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if pattern.search(path.read_text(encoding="utf-8")):
            found.append(str(path.relative_to(ROOT)))
    return found


def _where_read(member: str) -> str:
    files = readers(member)
    if not files:
        return "no module of src/ spells it"
    shown = ", ".join(f.removeprefix("src/conduit_mcp/") for f in files[:6])
    more = f" and {len(files) - 6} more" if len(files) > 6 else ""
    return f"read in src/conduit_mcp/ {shown}{more}"


def checklist(
    changes: list[Change],
    version: str,
    previous: str,
    modelled: set[str],
    tagged: dict[str, str] | None = None,
) -> list[str]:
    """The lines of the checklist `make bump` prints, loud ones (`!!`) first.

    Args:
        changes: `diff(previous schema, version's schema)`.
        version: the new version; previous: the one it was compared with.
        modelled: the definitions the new version's generated module has (the pruned set).
        tagged: union pointer -> how codegen/tagged_unions.py tags it in the new version.

    Returns:
        One line per item; `!!` marks a change to what the client reads off the wire, `[decide]`
        a decision the new version needs before it is used, `[check]` something to look at,
        `[info]` a change that needs nothing.
    """
    tagged = tagged or {}
    module = "v" + version.replace("-", "_") if version != "draft" else "draft"
    loud: list[str] = []
    decide: list[str] = []
    check: list[str] = []
    info: list[str] = []
    for c in changes:
        at = f"({c.pointer})"
        if c.kind == "content_block":
            tag = c.extra.get("type")
            decide.append(
                f"[decide] new content block type {json.dumps(tag)} ({c.detail}, in {c.subject})"
                f" {at}: shape_for_llm shows it as '[content block omitted: unsupported type"
                f" {json.dumps(tag)}]' until src/conduit_mcp/llm/_shape.py shapes it or lists it in"
                " OMITTED_BLOCK_TYPES (tests/llm/test_block_types.py fails until then)"
            )
        elif c.kind == "content_block_removed":
            loud.append(
                f"!! content block type {c.detail} left {c.subject} {at}: shape_for_llm still"
                " shapes it (src/conduit_mcp/llm/_shape.py); decide whether it stays for older"
                " versions only"
            )
        elif c.kind == "result_type":
            decide.append(
                f"[decide] new answer to tools/call: {c.detail} {at}: read by"
                " src/conduit_mcp/client/_dispatch.py (parse_call_result); ToolsCallResult reads"
                " it by the schema's anyOf (codegen/templates/answers.py.jinja)"
            )
        elif c.kind == "result_type_removed":
            loud.append(
                f"!! {c.detail} no longer answers tools/call {at}:"
                " src/conduit_mcp/client/_dispatch.py must not expect it at this version"
            )
        elif c.kind in ("union_arm", "union_arm_removed"):
            verb = "new arm" if c.kind == "union_arm" else "arm dropped:"
            how = tagged.get(c.pointer.split("/anyOf/")[0])
            tag_text = f"; tagged {how}" if how else ""
            line = f"[check] {verb} {c.detail} in union {c.subject} {at}{tag_text}"
            (check if c.subject.split(".")[0] in modelled else info).append(line)
        elif c.kind == "renamed":
            old = c.extra["old"]
            how = tagged.get(c.pointer)
            tag_text = f"; its tag kept: {how}" if how else ""
            line = (
                f"[decide] renamed definition {old} -> {c.subject} (likely: {c.detail}) {at}:"
                " the class is"
                f" conduit_mcp_wire.{module}.{c.subject}; code or docs naming {old} at this"
                f" version follow the new name{tag_text}"
            )
            if old in WIRE_CORE:
                loud.append("!! " + line)
            elif c.subject in modelled:
                decide.append(line)
            else:
                info.append(line.replace("[decide]", "[info]") + " (outside the models)")
        elif c.kind == "removed":
            line = f"definition {c.subject} removed {at}"
            if c.subject in WIRE_CORE:
                loud.append(f"!! {line}: codegen/generate.py ROOTS and the client read it")
            else:
                info.append(f"[info] {line}")
        elif c.kind == "added":
            where = "in the models" if c.subject in modelled else "outside the models"
            info.append(f"[info] new definition {c.subject} {at} ({where})")
        elif c.kind in ("member_removed", "member_renamed", "member_retyped", "now_required"):
            definition = c.extra.get("definition", "")
            member = c.extra.get("old") or c.extra.get("member", "")
            text = {
                "member_removed": f"member {c.subject} removed",
                "member_renamed": f"member {c.subject} is new, {c.detail}",
                "member_retyped": f"member {c.subject} retyped: {c.detail}",
                "now_required": f"member {c.subject} is now required",
            }[c.kind]
            if definition in WIRE_CORE:
                loud.append(f"!! {text} {at}: {_where_read(member)}")
            elif definition in modelled:
                check.append(f"[check] {text} {at}")
            else:
                info.append(f"[info] {text} {at} (outside the models)")
        elif c.kind == "member_added":
            definition = c.extra["definition"]
            if definition in WIRE_CORE:
                kind = "required" if c.extra["required"] else "optional"
                line = (
                    f"[check] new {kind} member {c.subject} ({c.detail.split(', ', 1)[1]}) {at}:"
                    f" typed in conduit_mcp_wire.{module}; intake keeps it as the server sent it;"
                    " whether a change of it is material for a pin:"
                    " src/conduit_mcp/pins/_changes.py"
                )
                (loud if c.extra["required"] else check).append(
                    ("!! " + line[len("[check] ") :]) if c.extra["required"] else line
                )
            elif definition in modelled:
                info.append(f"[info] new member {c.subject} ({c.detail}) {at}")
        elif c.kind in ("enum_added", "enum_removed"):
            verb = "new" if c.kind == "enum_added" else "dropped"
            where = "in the models" if c.subject in modelled else "outside the models"
            line = f"[check] {verb} {c.subject} value {c.detail} {at} ({where})"
            (check if c.subject in modelled else info).append(
                line if c.subject in modelled else line.replace("[check]", "[info]")
            )
        elif c.kind == "now_optional":
            info.append(f"[info] member {c.subject} is no longer required {at}")
    gate = (
        f"[check] rules: {version} behaves like {previous} in every `SINCE` rule"
        " (src/conduit_mcp/client/_versions.py); add a rule there for what its changelog says"
        f" starts at {version}"
    )
    return [*loud, *decide, *check, gate, *info]
