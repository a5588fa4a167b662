"""One shape-checked tool of a `tools/list` page: its fingerprint, warnings and refusal, memoized.

Not a public module: `intake` (`_intake.py`) assembles a page from these outcomes.

One serialization per tool, and none more for a tool seen before: the tool's exact orjson
bytes (member order kept; `1`, `1.0` and `true` told apart) are the memo key, the hidden-text
prefilter and the `x-mcp-header` prefilter; only a tool not seen before is written in RFC 8785
form too (its fingerprint, and the content hash when it sends one) and walked. The meta-schema
verdicts are cached by schema bytes across tools and pages (`_engine.meta_problem`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from . import _wire as w
from ._cache import BoundedCache
from ._contenthash import CONTENT_HASH_KEY, content_hash
from ._errors import Error, PathItem
from ._fingerprint import fingerprint_of
from ._headers import find_invalid_x_mcp_header
from ._icons import icon_warnings
from ._jcs import _canonical_fast, _canonical_slow, canonical_json
from ._jsonrules import MISSING
from ._model_view import iter_model_text, maybe_hidden_json
from ._names import check_tool_name
from ._unicode import find_hidden
from ._validate import schema_warnings
from ._warnings import IntakeWarning

#: At most this many invisible or control characters are listed per string (the count is always
#: exact).
MAX_LISTED_INVISIBLE: Final = 16

#: The bounds of each memo (one per protocol version and header rule): tools, and bytes of their
#: JSON held as keys (a tool larger than this alone is never memoized). Entries leave oldest
#: first (a hit does not renew them: a lookup takes no lock). An entry costs about 5 KB of
#: resident memory for a small tool (key, outcome, bookkeeping; measured with
#: tests/limits/guard_memory.py), so 2,048 tools hold ~10 MB at most: a 1,000-tool page fits,
#: and a server that renames every tool on every listing fills it once, never more.
MEMO_TOOLS: Final = 2048
MEMO_BYTES: Final = 4 << 20

_HEADER_KEY: Final = b'"x-mcp-header"'
# orjson refuses what it cannot write exactly as the parsed JSON it came from would be (str,
# int, dict subclasses; dataclasses; datetimes): such a tool is not memoized.
_EXACT: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


@dataclass(slots=True)
class ToolOutcome:
    """What intake concludes about one shape-checked tool, apart from its name's uniqueness.

    Never changed once built (shared by every page the tool is in; not `frozen`, whose
    `__init__` costs an `object.__setattr__` per field on every tool not seen before).

    Attributes:
        fingerprint: the tool's fingerprint, or `None` when `refusal` says it is not JSON.
        warnings: reported whatever becomes of the tool (paths relative to the tool).
        refusal: the error that excludes the tool (`invalid_json`, `x_mcp_header_*`; path
            relative to the tool), or `None`.
        accepted_warnings: reported only when the tool is accepted (`content_hash_mismatch`).
    """

    fingerprint: str | None
    warnings: tuple[IntakeWarning, ...]
    refusal: Error | None
    accepted_warnings: tuple[IntakeWarning, ...]


_memos: dict[tuple[str, bool], BoundedCache[bytes, ToolOutcome]] = {}


def _weigh(key: bytes, _: object) -> int:
    return len(key)


def memo_for(protocol_version: str, check_headers: bool) -> BoundedCache[bytes, ToolOutcome]:
    """The memo of tool outcomes at one protocol version and header rule (made on first use)."""
    memo = _memos.get((protocol_version, check_headers))
    if memo is None:
        memo = BoundedCache(MEMO_TOOLS, max_weight=MEMO_BYTES, weigh=_weigh)
        memo = _memos.setdefault((protocol_version, check_headers), memo)
    return memo


def clear_memo() -> None:
    """Forget every tool seen (for tests and benchmarks: the next intake is a first sight)."""
    for memo in list(_memos.values()):
        memo.clear()


def take_tool(
    raw: dict[str, Any],
    protocol_version: str,
    check_headers: bool,
    pure: bool,
    memo: BoundedCache[bytes, ToolOutcome],
) -> ToolOutcome:
    """The outcome of one tool that passed `check_tool_shape`.

    Args:
        raw: the tool as sent (not mutated, not copied).
        protocol_version: a known revision (checked by the caller).
        check_headers: whether the `x-mcp-header` rules apply (Streamable HTTP, a revision
            that has them).
        pure: every value in `raw` came from `parse_json` (JSON types only, no NaN), so the
            key bytes stand for exactly this value. Otherwise `==` against the value the key
            bytes parse to decides (orjson writes NaN as `null` and a tuple as an array; `==`
            tells them apart) before a memo entry is used or kept.
        memo: `memo_for(protocol_version, check_headers)` (looked up once per page).

    Returns:
        The `ToolOutcome`, from the memo when the same tool was taken before.
    """
    try:
        data: bytes | None = orjson.dumps(raw, option=_EXACT)
    except TypeError:  # orjson.JSONEncodeError: beyond orjson (huge integers, cycles, ...)
        data = None
    if data is None:
        return _check(raw, data, protocol_version, check_headers)
    exact: bool | None = True if pure else None  # whether `raw` is the value `data` parses to
    hit = memo.peek(data, MISSING)
    if hit is not MISSING:
        if exact is None:
            exact = orjson.loads(data) == raw
        if exact:
            outcome: ToolOutcome = hit
            return outcome
    outcome = _check(raw, data, protocol_version, check_headers)
    # Only the outcome of the very value the key stands for is kept, so no hand-built look-alike
    # (NaN written as `null`, a tuple as an array) can answer for a tool read from JSON.
    if exact is None:
        exact = orjson.loads(data) == raw
    if exact:
        memo.put(data, outcome)
    return outcome


def _check(
    raw: dict[str, Any], data: bytes | None, protocol_version: str, check_headers: bool
) -> ToolOutcome:
    # The canonical bytes first: they refuse what is not JSON (a hand-built cycle among them)
    # before any other walk of the tool could meet it.
    try:
        # `canonical_json` inlined, as `fingerprint` does: the orjson fast path, else the
        # reference.
        if type(raw) is dict:
            canonical = _canonical_fast(raw)
            if canonical is None:
                canonical = _canonical_slow(raw)
        else:
            canonical = canonical_json(raw)
    except Error as exc:
        return ToolOutcome(None, (), exc, ())
    found = _warnings(raw, data)
    # Meta-schema check: a warning, never a rejection (verdicts cached by schema bytes).
    found.extend(schema_warnings(raw, protocol_version))
    refusal: Error | None = None
    # The JSON text holds every key literally, so a tool without the annotation's name
    # anywhere skips the schema walk.
    if check_headers and _HEADER_KEY in (canonical if data is None else data):
        refusal = find_invalid_x_mcp_header(raw[w.INPUT_SCHEMA])
        if refusal is not None:
            refusal = refusal.with_prefix(w.INPUT_SCHEMA)
    accepted_warnings: tuple[IntakeWarning, ...] = ()
    if refusal is None and CONTENT_HASH_KEY in raw:
        accepted_warnings = tuple(_content_hash_warnings(raw))
    return ToolOutcome(fingerprint_of(canonical), tuple(found), refusal, accepted_warnings)


def _warnings(raw: Mapping[str, Any], data: bytes | None) -> list[IntakeWarning]:
    """The warnings about one shape-checked tool, paths relative to it (usually none)."""
    found: list[IntakeWarning] = list(check_tool_name(raw[w.NAME]))
    schema_type = raw[w.INPUT_SCHEMA].get("type")
    if type(schema_type) is not str or schema_type != "object":
        found.append(
            IntakeWarning(
                "input_schema_root_type",
                (w.INPUT_SCHEMA,),
                'inputSchema root lacks "type": "object"; kept verbatim',
                {"got": describe_type(schema_type)},
            )
        )
    icons = raw.get(w.ICONS)
    if type(icons) is list and icons:
        found.extend(icon_warnings(icons, (w.ICONS,)))
    if data is not None and not maybe_hidden_json(data):
        return found  # the common case: the tool's JSON text proves no string hides anything
    # One definition of what a model reads (`_model_view`): every string of it is scanned.
    for item in iter_model_text(raw, plain=False):  # printable ASCII hides nothing: skipped
        invisible, controls = find_hidden(item.text)
        if not invisible and not controls:
            continue
        path = item.path
        if invisible:
            found.append(_hidden_warning("invisible_unicode", path, invisible, item.is_key))
        if controls:
            found.append(_hidden_warning("control_characters", path, controls, item.is_key))
    return found


def _content_hash_warnings(raw: dict[str, Any]) -> list[IntakeWarning]:
    """`content_hash_mismatch` when a sent `contentHash` is not the declaration's SEP-3140 hash.

    Runs after the fingerprint, so `raw` is known to be JSON and `content_hash` cannot raise.
    """
    sent = raw[CONTENT_HASH_KEY]
    expected = content_hash(raw)
    if type(sent) is str and sent == expected:
        return []
    return [
        IntakeWarning(
            "content_hash_mismatch",
            (CONTENT_HASH_KEY,),
            "contentHash is not the SEP-3140 hash of this declaration",
            {"expected": expected, "got": sent[:80] if type(sent) is str else describe_type(sent)},
        )
    ]


_HIDDEN_MESSAGES: Final = {
    "invisible_unicode": "invisible character(s) a person cannot see",
    "control_characters": "control character(s) or terminal escape(s) that hide or rewrite text",
}


def _hidden_warning(
    code: str, path: tuple[PathItem, ...], hits: list[tuple[int, int]], is_key: bool
) -> IntakeWarning:
    where = " in a property name" if is_key else ""
    return IntakeWarning(
        code,
        path,
        f"{len(hits)} {_HIDDEN_MESSAGES[code]}{where}",
        {
            "count": len(hits),
            "code_points": [f"U+{cp:04X}" for _, cp in hits[:MAX_LISTED_INVISIBLE]],
            "indexes": [i for i, _ in hits[:MAX_LISTED_INVISIBLE]],
        },
    )


def describe_type(value: object) -> Any:
    """A short, JSON-able description of a value for `details["got"]`."""
    if value is None:
        return "missing"
    if isinstance(value, str):
        return value[:64]
    if isinstance(value, list):
        return [v[:64] if isinstance(v, str) else type(v).__name__ for v in value[:8]]
    return type(value).__name__
