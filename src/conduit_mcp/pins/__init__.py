"""conduit_mcp.pins: what a client trusted about each tool, and what changed since.

A `PinStore` (sqlite for one host, PostgreSQL for a team) keeps, per server and tool name, the
approved definition, its fingerprint and who approved it, and an append-only audit log;
`diff_tools` and `FieldChange` say what changed between two definitions, field by field, and
which changes are cosmetic; `content_hash` is a declaration's SEP-3140 hash. Builds on
`conduit_mcp.client`.

`__all__` is grouped by concept (tests/test_public_api.py pins it).
"""

from ..client._contenthash import CONTENT_HASH_PREFIX, content_hash
from ._async import AsyncPinStore
from ._audit import AuditEntry
from ._changes import DEFAULT_COSMETIC, ChangeOp, FieldChange
from ._checks import PinCheck, PinOutcome, PinStatus
from ._drift import ToolDiff, diff_tools
from ._pending import Pending
from ._pins import Pin
from ._schemadelta import SchemaChange, schema_change, schema_changes
from ._store import PinStore, redacted_location
from ._watch import PinWatcher

# Grouped by concept, not sorted: the groups are the map of the API.
__all__ = [  # noqa: RUF022
    # The store: pins per server and tool, the audit log, and the location's redacted form
    "PinStore",
    "AsyncPinStore",
    "PinWatcher",
    "Pin",
    "PinCheck",
    "PinOutcome",
    "PinStatus",
    "Pending",
    "AuditEntry",
    "redacted_location",
    # Changes: what changed between two definitions of a tool, field by field
    "ToolDiff",
    "diff_tools",
    "ChangeOp",
    "FieldChange",
    "DEFAULT_COSMETIC",
    "SchemaChange",
    "schema_change",
    "schema_changes",
    # Content hashes: a declaration's SEP-3140 hash
    "content_hash",
    "CONTENT_HASH_PREFIX",
]
