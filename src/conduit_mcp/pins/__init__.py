"""conduit_mcp.pins: what a client trusted about each tool, and what changed since.

A `PinStore` (sqlite for one host, PostgreSQL for a team) keeps, per server and tool name, the
approved definition, its fingerprint and who approved it, and an append-only audit log;
`diff_tools` and `FieldChange` say what changed between two definitions, field by field, and
which changes are cosmetic; `content_hash` is a declaration's SEP-3140 hash. Builds on
`conduit_mcp.client`.

`__all__` is grouped by concept (tests/test_public_api.py pins it).

Where things live (private modules; one job each). The store is `PinStore` (`_store.py`:
opening, closing), gathered from rooms, one concern each; a room's module holds its part of
the API and every SQL statement on its tables, written once for sqlite and PostgreSQL:

* `_pins.py` — the pins and revocations (`approve`, `revoke`, `pin`, `pins`; the page lookup);
* `_checks.py` — listed tools against their pins (`check`, `check_page`, `check_and_pin`);
* `_pending.py` — the pending queue (`pending`);
* `_audit.py` — the audit log (`audit_log`, `audit_since`, `prune_checks`);
* `_feed.py` — the change feed (`changes_since`, `watch`; the watcher thread: `_watch.py`);
* `_instructions.py` — servers' instructions (`check_instructions`, `approve_instructions`,
  `pending_instructions`);
* `_rejected.py` — rejected definitions (`reject`, `rejections`);
* `_servers.py` — the servers the store knows (`servers`; a guard's listing noted);
* `_accounts.py` — the review console's accounts and API tokens (`add_account`, `login`, ...);
* `_policy.py` — the stored policy (`set_policy`, `policy`, `policy_history`,
  `policies_since`, `watch_policy`), each version a row of its own;
* `_calls.py` — the call audit (`record_calls`, `calls_since`, `prune_calls`);

Beneath them: `_migrations.py` (the schema, migrations numbered in one list), `_dialect.py`
(the dialect table: the only SQL that differs between the two databases), `_database.py`
(the two drivers: connections, transactions, locks), `_rows.py` (values in and out of rows),
`_location.py` (locations and their redacted form), `_async.py` (`AsyncPinStore`). What
changed between two definitions: `_changes.py` (field by field, material or cosmetic),
`_drift.py` (two tool sets compared by fingerprint), `_schemadelta.py` (which way a schema
moved).
"""

from ..client._contenthash import CONTENT_HASH_PREFIX, content_hash
from ._accounts import Account
from ._async import AsyncPinStore
from ._audit import AuditEntry
from ._calls import CallRecord, arguments_digest
from ._changes import DEFAULT_COSMETIC, ChangeOp, FieldChange
from ._checks import PinCheck, PinOutcome, PinStatus
from ._drift import ToolDiff, diff_tools
from ._instructions import InstructionsCheck, PendingInstructions
from ._pending import Pending
from ._pins import Pin, Revocation
from ._policy import StoredPolicy
from ._rejected import RejectedDefinition
from ._schemadelta import SchemaChange, schema_change, schema_changes
from ._servers import ServerSummary
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
    "StoredPolicy",
    "CallRecord",
    "arguments_digest",
    "redacted_location",
    # Instructions: a server's instructions pinned like a tool
    "InstructionsCheck",
    "PendingInstructions",
    # Decisions and the review console: rejections, revocations, servers, accounts
    "RejectedDefinition",
    "Revocation",
    "ServerSummary",
    "Account",
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
