"""The `jcs-sha256:` fingerprint of a tool definition: SHA-256 over its RFC 8785 bytes.

The canonical form itself is `_jcs.py`; the format (prefix + 64 lowercase hex digits) is public.
"""

from __future__ import annotations

import hashlib
from typing import Final

from ._jcs import _canonical_fast, _canonical_slow, canonical_json
from ._tool import Tool

#: Every fingerprint starts with this: the canonicalization (RFC 8785 JCS) and the hash.
FINGERPRINT_PREFIX: Final = "jcs-sha256:"

_sha256: Final = hashlib.sha256


def fingerprint(raw_tool: object) -> str:
    """Fingerprint a tool definition: `"jcs-sha256:"` + hex SHA-256 of its canonical JSON.

    The whole raw definition is hashed: `name`, `title`, `description`, `inputSchema`,
    `outputSchema`, `annotations`, `icons`, `_meta`, `execution` and unknown keys alike, i.e.
    every byte the server sent that could reach a model or a policy. Key order and whitespace
    on the wire do not change it; any other change does. Two definitions get the same
    fingerprint exactly when their `canonical_json` bytes are equal.

    Args:
        raw_tool: one tool definition as parsed from a `tools/list` result (any JSON value
            is accepted), or a `Tool`, whose `raw` is used. Not mutated.

    Returns:
        e.g. `"jcs-sha256:4c1b..."`: the prefix and 64 lowercase hex digits.

    Raises:
        Error: as `canonical_json` (kind `"protocol"`, reason `"invalid_json"`, or kind
            `"policy"`, reason `"limit_exceeded"`, with the path to the value that is not JSON).

    Total: as `canonical_json`.

    Spec: MCP 2026-07-28 server/tools "Data Types > Tool" (the fields hashed) and
    "User Interaction Model" (applications SHOULD make clear which tools are exposed to the
    model: a changed definition is a different tool); canonical form RFC 8785.
    """
    if type(raw_tool) is not dict and isinstance(raw_tool, Tool):
        raw_tool = raw_tool.raw
    if type(raw_tool) is dict:  # canonical_json inlined: this is the hot path
        out = _canonical_fast(raw_tool)
        if out is None:
            out = _canonical_slow(raw_tool)
    else:
        out = canonical_json(raw_tool)
    return fingerprint_of(out)


def fingerprint_of(canonical: bytes) -> str:
    """The fingerprint of a definition whose `canonical_json` bytes are `canonical`.

    For callers that already hold the canonical bytes (intake checks them first): the same
    formula as `fingerprint`, so the two can never disagree.

    Args:
        canonical: the RFC 8785 bytes of one tool definition.

    Returns:
        `"jcs-sha256:"` + 64 lowercase hex digits of SHA-256(`canonical`).
    """
    return FINGERPRINT_PREFIX + _sha256(canonical).hexdigest()
