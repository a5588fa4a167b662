"""What a reviewer reads about one pending tool: the approved and pending definitions side by side.

Not a public module. Built from the store's rows with the library's own functions, never
written again here: the field changes the check stored (`conduit_mcp.pins.FieldChange`), which
way each schema moved (`schema_changes`), look-alike names (`find_lookalikes`,
`lookalike_relation`), and hidden characters (`find_hidden`: invisible and control characters)
shown as visible escapes (`shown`). Every string here came from a server: it reaches the page
only through `shown` (escaped, hidden characters marked) or Jinja2's autoescape.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from markupsafe import Markup, escape

from ..client import find_lookalikes, lookalike_relation, parse_json
from ..client._unicode import find_hidden
from ..pins import Pending, PendingInstructions, schema_changes

#: Characters of one field change's old or new value shown in the change table (the field
#: itself is shown whole beside it).
CHANGE_CHARS: Final = 4000
#: The most work a word diff does: past this product of the two sides' token counts (what
#: differs, after their common beginning and end) the difference is shown as one removal and
#: one addition. `difflib.SequenceMatcher` takes time in that product (and more on repeated
#: words): 28,000 tokens a side took 15 to 48 s of CPU; at this bound about 0.1 s.
MAX_DIFF_WORK: Final = 2_000_000
_TOKENS: Final = re.compile(r"\s+|[^\s]+")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
#: The members a reviewer reads first, in this order; others follow under "other members".
_MEMBERS: Final = ("title", "description", "inputSchema", "outputSchema", "annotations", "icons")
#: The annotation hints of MCP 2026-07-28 server/tools "ToolAnnotations".
HINTS: Final = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def _hidden_positions(text: str) -> list[tuple[int, int]]:
    """(index, code point) of every character a reader would not see as itself."""
    if text.isascii() and text.isprintable():
        return []
    invisible, controls = find_hidden(text)
    found = [(i, p) for i, p in controls if p not in (0x09, 0x0A, 0x0D)] + invisible
    if not text.isascii():
        found += [(m.start(), ord(m.group())) for m in _SURROGATE.finditer(text)]
    return sorted(found)


def shown(text: str) -> tuple[Markup, int]:
    """`text` as HTML: escaped, each hidden character (invisible, bidi, control, lone
    surrogate) written as a visible, flagged `U+XXXX` mark. Returns the HTML and how many
    hidden characters it holds."""
    hidden = _hidden_positions(text)
    if not hidden:
        return Markup(escape(text)), 0
    parts: list[str] = []
    last = 0
    for index, point in hidden:
        parts.append(str(escape(text[last:index])))
        parts.append(f'<span class="hidden-char" title="hidden character">U+{point:04X}</span>')
        last = index + 1
    parts.append(str(escape(text[last:])))
    return Markup("".join(parts)), len(hidden)


def shown_json(value: Any) -> tuple[Markup, int]:
    """A JSON value pretty-printed, through `shown`."""
    return shown(json.dumps(value, indent=2, ensure_ascii=False))


def clipped(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, saying how many more there are."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


@dataclass
class DiffPart:
    """One run of a word diff: `kind` "same", "add" or "del", and its HTML."""

    kind: str
    html: Markup


def word_diff(old: str, new: str) -> tuple[list[DiffPart], int]:
    """The whole of two texts as a word diff (runs of words and of whitespace), each run
    through `shown`. Returns the parts and how many hidden characters the new text adds."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    parts: list[DiffPart] = []
    hidden = 0
    # The common beginning and end in one linear pass; only the middle is diffed, and only
    # while its work stays under `MAX_DIFF_WORK`.
    shorter = min(len(a), len(b))
    head = 0
    while head < shorter and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shorter - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_end, b_end = len(a) - tail, len(b) - tail
    opcodes: list[tuple[str, int, int, int, int]] = []
    if head:
        opcodes.append(("equal", 0, head, 0, head))
    if (a_end - head) * (b_end - head) > MAX_DIFF_WORK:
        opcodes.append(("replace", head, a_end, head, b_end))
    elif a_end > head or b_end > head:
        matcher = difflib.SequenceMatcher(None, a[head:a_end], b[head:b_end], autojunk=False)
        opcodes += [
            (op, i1 + head, i2 + head, j1 + head, j2 + head)
            for op, i1, i2, j1, j2 in matcher.get_opcodes()
        ]
    if tail:
        opcodes.append(("equal", a_end, len(a), b_end, len(b)))
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            html, _ = shown("".join(b[j1:j2]))
            parts.append(DiffPart("same", html))
            continue
        if i2 > i1:
            html, _ = shown("".join(a[i1:i2]))
            parts.append(DiffPart("del", html))
        if j2 > j1:
            html, count = shown("".join(b[j1:j2]))
            hidden += count
            parts.append(DiffPart("add", html))
    return parts, hidden


@dataclass
class Member:
    """One member of the definition, approved beside pending (`name` as HTML, through
    `shown`)."""

    name: Markup
    old: Markup | None
    new: Markup | None
    changed: bool
    verdict: str | None = None  # a schema's narrows / widens / both / unknown / unchanged


@dataclass
class ChangeRow:
    """One field change (RFC 6901 pointer), as the check stored it."""

    path: Markup
    op: str
    material: bool
    old: Markup
    new: Markup


@dataclass
class Review:
    """Everything the review page of one pending tool shows."""

    entry: Pending
    status: str
    name: Markup
    server: Markup
    approved: dict[str, Any] | None
    pending: dict[str, Any] | None
    description: list[DiffPart] = field(default_factory=list)
    description_whole: Markup | None = None
    members: list[Member] = field(default_factory=list)
    changes: list[ChangeRow] = field(default_factory=list)
    hints: list[tuple[str, str, str, bool]] = field(default_factory=list)
    icons: list[tuple[str, Markup]] = field(default_factory=list)
    lookalikes: list[tuple[Markup, str]] = field(default_factory=list)
    hidden: int = 0
    hidden_in_name: int = 0


def definition_of(text: str | None) -> dict[str, Any] | None:
    """A stored definition as a JSON object, or `None` (none kept, or not an object)."""
    if text is None:
        return None
    try:
        value = parse_json(text)
    except Exception:
        return None
    return value if isinstance(value, dict) else None


def status_of(entry: Pending) -> str:
    """What the queue calls an entry: `revoked` for a tool new again after a revocation."""
    return "revoked" if entry.revoked_at is not None and entry.status == "new" else entry.status


def build(entry: Pending, approved_text: str | None, known: list[str]) -> Review:
    """The review of `entry` against the approved definition `approved_text` (or `None`);
    `known`: the server's other tool names (pinned or pending), for look-alike warnings."""
    approved = definition_of(approved_text) if entry.status != "new" else None
    pending = definition_of(entry.definition)
    name, name_hidden = shown(entry.name)
    server, _ = shown(entry.server_id)
    review = Review(entry, status_of(entry), name, server, approved, pending)
    review.hidden_in_name = name_hidden
    new_desc = pending.get("description") if pending else None
    old_desc = approved.get("description") if approved else None
    if isinstance(new_desc, str) and isinstance(old_desc, str) and approved is not None:
        review.description, review.hidden = word_diff(old_desc, new_desc)
    elif isinstance(new_desc, str):
        review.description_whole, review.hidden = shown(new_desc)
    verdicts = schema_changes(approved, pending) if approved and pending else {}
    members = [m for m in _MEMBERS if m != "description"]
    others = sorted((set(pending or {}) | set(approved or {})) - set(_MEMBERS) - {"name"}, key=str)
    for member in [*members, *others]:
        old = approved.get(member) if approved else None
        new = pending.get(member) if pending else None
        if old is None and new is None:
            continue
        old_html = shown_json(old)[0] if old is not None else None
        new_html, count = shown_json(new) if new is not None else (None, 0)
        label, in_label = shown(clipped(str(member), 300))  # a member's name is the server's too
        review.hidden += count + in_label
        review.members.append(Member(label, old_html, new_html, old != new, verdicts.get(member)))
    for change in entry.changes:
        path, _ = shown(change.path or "(whole definition)")
        old = _value_text(change.old) if change.op != "add" else ""
        new = _value_text(change.new) if change.op != "remove" else ""
        review.changes.append(
            ChangeRow(path, change.op, change.material, shown(old)[0], shown(new)[0])
        )
    old_hints = approved.get("annotations") if approved else None
    new_hints = pending.get("annotations") if pending else None
    for hint in HINTS:
        before = _hint(old_hints, hint) if approved is not None else ""
        after = _hint(new_hints, hint)
        review.hints.append((hint, before, after, approved is not None and before != after))
    icons = pending.get("icons") if pending else None
    if isinstance(icons, list):
        for icon in icons[:50]:
            src = icon.get("src") if isinstance(icon, dict) else icon
            text = src if isinstance(src, str) else json.dumps(src)
            scheme = text.split(":", 1)[0].lower() if ":" in text else ""
            review.icons.append((scheme, shown(clipped(text, 500))[0]))
    others_known = [k for k in known if k != entry.name]
    for looks, like in find_lookalikes([entry.name], others_known).items():
        del looks
        review.lookalikes.append((shown(like)[0], lookalike_relation(entry.name, like)))
    return review


def _hint(annotations: Any, hint: str) -> str:
    if not isinstance(annotations, dict) or hint not in annotations:
        return "(not set)"
    return json.dumps(annotations[hint])


def _value_text(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "(a value too deep to show)"
    return clipped(text, CHANGE_CHARS)


@dataclass
class InstructionsReview:
    """Everything the review page of a server's pending instructions shows: the pending text
    beside the approved one, as a word diff (a changed text) or whole (a new one)."""

    entry: PendingInstructions
    server: Markup
    diff: list[DiffPart] = field(default_factory=list)
    whole: Markup | None = None
    hidden: int = 0


def build_instructions(entry: PendingInstructions) -> InstructionsReview:
    """The review of a server's pending instructions against the approved text (if any): the
    same word diff and hidden-character marks as a tool's description."""
    review = InstructionsReview(entry, shown(entry.server_id)[0])
    if entry.approved is not None:
        review.diff, review.hidden = word_diff(entry.approved, entry.instructions)
    else:
        review.whole, review.hidden = shown(entry.instructions)
    return review
