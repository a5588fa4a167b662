"""`AsyncPinStore`: a `PinStore`'s calls in a worker thread, for event loops.

Not a public module: import from `conduit_mcp.pins`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..client._tool import Tool
from ._audit import AuditEntry
from ._changes import FieldChange
from ._checks import PinCheck, PinOutcome, PinStatus
from ._pending import Pending
from ._store import PinStore


class AsyncPinStore:
    """The async form of a `PinStore`, for event loops (a guard on anyio/asyncio).

    Each method runs the same method of the wrapped `PinStore` in a worker thread
    (`asyncio.to_thread`), so a slow database never blocks the loop; the `PinStore`'s lock
    serializes the calls. Under anyio with the trio backend, call the sync methods through
    `anyio.to_thread.run_sync` instead.

    Args:
        store: the `PinStore` to use (not closed by this wrapper unless `aclose` is called).
    """

    def __init__(self, store: PinStore) -> None:
        if not isinstance(store, PinStore):
            raise TypeError(f"store must be a PinStore, got {type(store).__name__}")
        self.store = store

    async def check_page(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        protocol_version: str | None = None,
        audit: bool = True,
    ) -> tuple[PinCheck, ...]:
        """`PinStore.check_page` in a worker thread."""
        page = list(tools)
        return await asyncio.to_thread(
            self.store.check_page,
            server_id,
            page,
            protocol_version=protocol_version,
            audit=audit,
        )

    async def check(
        self, server_id: str, tool: Tool, *, protocol_version: str | None = None
    ) -> PinStatus:
        """`PinStore.check` in a worker thread."""
        return await asyncio.to_thread(
            self.store.check, server_id, tool, protocol_version=protocol_version
        )

    async def approve(
        self,
        server_id: str,
        tool: Tool,
        *,
        approver: str | None = None,
        protocol_version: str | None = None,
    ) -> str:
        """`PinStore.approve` in a worker thread."""
        return await asyncio.to_thread(
            self.store.approve,
            server_id,
            tool,
            approver=approver,
            protocol_version=protocol_version,
        )

    async def approve_all(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        approver: str | None = None,
        protocol_version: str | None = None,
    ) -> None:
        """`PinStore.approve_all` in a worker thread."""
        page = list(tools)
        await asyncio.to_thread(
            self.store.approve_all,
            server_id,
            page,
            approver=approver,
            protocol_version=protocol_version,
        )

    async def changes(self, server_id: str, tool: Tool) -> tuple[FieldChange, ...]:
        """`PinStore.changes` in a worker thread."""
        return await asyncio.to_thread(self.store.changes, server_id, tool)

    async def revoke(self, server_id: str, name: str, *, approver: str | None = None) -> bool:
        """`PinStore.revoke` in a worker thread."""
        return await asyncio.to_thread(self.store.revoke, server_id, name, approver=approver)

    async def check_and_pin(
        self,
        server_id: str,
        tools: Iterable[Tool],
        *,
        approver: str,
        pin_new: bool = False,
        accept_cosmetic: bool = False,
        pin_changed: bool = False,
        protocol_version: str | None = None,
        queue: bool = True,
    ) -> PinOutcome:
        """`PinStore.check_and_pin` in a worker thread."""
        page = list(tools)
        return await asyncio.to_thread(
            self.store.check_and_pin,
            server_id,
            page,
            approver=approver,
            pin_new=pin_new,
            accept_cosmetic=accept_cosmetic,
            pin_changed=pin_changed,
            protocol_version=protocol_version,
            queue=queue,
        )

    async def pending(
        self, server_id: str | None = None, name: str | None = None
    ) -> tuple[Pending, ...]:
        """`PinStore.pending` in a worker thread."""
        return await asyncio.to_thread(self.store.pending, server_id, name)

    async def audit_since(self, cursor: int = 0, *, limit: int = 1000) -> tuple[AuditEntry, ...]:
        """`PinStore.audit_since` in a worker thread."""
        return await asyncio.to_thread(self.store.audit_since, cursor, limit=limit)

    async def changes_since(
        self, cursor: int = 0, *, limit: int = 1000
    ) -> tuple[tuple[AuditEntry, ...], int]:
        """`PinStore.changes_since` in a worker thread."""
        return await asyncio.to_thread(self.store.changes_since, cursor, limit=limit)

    async def aclose(self) -> None:
        """Close the wrapped store."""
        await asyncio.to_thread(self.store.close)
